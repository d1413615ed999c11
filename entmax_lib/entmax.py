"""Sparse probability maps: softmax, sparsemax, 1.5-entmax and α-entmax, with their derivatives.

All maps solve, along one axis of ``x``,

    entmax_α(z) = argmax_{p ∈ Δ}  pᵀz + H_α(p),
    H_α(p) = 1/(α(α−1)) Σ_j (p_j − p_j^α)   (α ≠ 1),   H_1(p) = −Σ_j p_j log p_j,

whose solution is ``p_i = [(α−1) z_i − τ]_+^{1/(α−1)}`` for the unique τ with Σ p = 1.
α = 1 is softmax, α = 2 is sparsemax (Martins & Astudillo, 2016), α = 1.5 is the
1.5-entmax of Peters, Niculae & Martins (2019); α → ∞ tends to argmax. The threshold τ is
found by :mod:`entmax_lib.threshold`; this module validates the input, defines the public
maps and, next to each map, its derivative rule (``jax.custom_jvp``), never the unrolled
iterations:

* with respect to z, for s_i = p_i^{2−α} on the support and 0 elsewhere,
  ``∂p/∂z = diag(s) − s sᵀ / Σ_j s_j`` (Peters et al., 2019) — shared by every map;
* with respect to α, Proposition 1 of Correia, Niculae & Martins (2019), evaluated in a
  rearranged form that is exact at α = 1 and free of cancellation near it
  (:func:`_alpha_tangent`, next to :func:`entmax_bisect`).

Conventions shared by every public map here:

* Any ``axis``; leading axes are batch axes. Input dtypes float16, bfloat16, float32
  and float64; computation runs in at least float32 and the result has the input dtype.
* ``-inf`` entries (attention masks) get exactly zero probability and zero gradient.
  A slice that is entirely ``-inf`` returns all zeros with zero gradients (softmax
  would return NaN there).
* A slice containing NaN (or +inf) returns NaN in that slice only.
* Non-float input raises ``TypeError``; a bad or empty ``axis`` raises ``ValueError``.

References:
  Martins & Astudillo (2016), From Softmax to Sparsemax, https://arxiv.org/abs/1602.02068 ;
  Peters, Niculae & Martins (2019), Sparse Sequence-to-Sequence Models,
  https://aclanthology.org/P19-1146/ ;
  Correia, Niculae & Martins (2019), Adaptively Sparse Transformers,
  https://arxiv.org/abs/1909.00015 .
"""

from __future__ import annotations

import functools
import math
import operator

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_derivatives import SymbolicZero

from entmax_lib import pallas_kernel, threshold
from entmax_lib._checks import ALPHA_LIMIT, prepare_alpha, prepare_scores

__all__ = ["ALPHA_LIMIT", "sparsemax", "entmax15", "entmax_bisect", "softmax"]

# The step counter of the search is a 32-bit integer.
_MAX_N_ITER = 2**31 - 1


# ----------------------------------------------------------------------------------------
# Input checks shared by all maps
# ----------------------------------------------------------------------------------------


def _finish(p, dtype, axis):
    return jnp.moveaxis(p, -1, axis).astype(dtype)


def _default_n_iter(compute_dtype):
    # A cap: each halving gains one bit of τ, so even the bisection fallback alone reaches
    # float32 resolution in 25 steps and float64 in 54; Newton–Halley stops far earlier.
    return 54 if compute_dtype == jnp.float64 else 25


def _check_n_iter(n_iter, compute_dtype, name="n_iter"):
    if n_iter is None:
        return _default_n_iter(compute_dtype)
    if isinstance(n_iter, (bool, np.bool_)):
        raise TypeError(f"{name} must be an integer, got {n_iter!r}.")
    try:
        n_iter = operator.index(n_iter)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {n_iter!r}.") from None
    if not 1 <= n_iter <= _MAX_N_ITER:
        raise ValueError(
            f"{name} must be between 1 and 2**31 - 1, got {n_iter} "
            "(rows stop as soon as they converge; 25 steps suffice in float32, 54 in float64)."
        )
    return n_iter


# ----------------------------------------------------------------------------------------
# The derivative with respect to z, shared by every map
# ----------------------------------------------------------------------------------------


def _neg_log(p):
    """ℓ = −log p, finite everywhere: ≈ 87 (float32) where p = 0, so that p·f(ℓ) is 0 there.

    Clamps rather than selects: on CPU, XLA fuses max/log/exp chains far better than
    ``jnp.where``, and the backward pass is made of these.
    """
    return -jnp.log(jnp.maximum(p, jnp.finfo(p.dtype).tiny))


def _support_weights(p, alpha):
    """s_i = p_i^{2−α} on the support (p_i > 0), 0 elsewhere, with finite derivatives at p = 0.

    Written as s = p · p^{−β} = p · exp(βℓ) (β = α − 1, ℓ of :func:`_neg_log`), which is 0
    off the support without a select.
    """
    if isinstance(alpha, float):
        if alpha == 2.0:
            return jnp.sign(p)
        if alpha == 1.5:  # the inner where keeps the second derivative of sqrt finite at p = 0
            return jnp.where(p > 0, jnp.sqrt(jnp.where(p > 0, p, 1.0)), 0.0)
        if alpha == 1.0:
            return p
    # The cap keeps p^{−β} finite where p = 0 for α > 2 (there s = 0 · cap = 0).
    cap = 0.9 * math.log(jnp.finfo(p.dtype).max)
    return p * jnp.exp(jnp.minimum((alpha - 1.0) * _neg_log(p), cap))


def _z_tangent(p, alpha, dz):
    """JVP of entmax_α with respect to z: (diag(s) − s sᵀ/Σs) dz."""
    s = _support_weights(p, alpha)
    total = jnp.sum(s, axis=-1, keepdims=True)
    total = jnp.where(total > 0, total, 1.0)
    sdz = s * dz
    return sdz - s * jnp.sum(sdz, axis=-1, keepdims=True) / total


def _fixed_alpha_map(forward, alpha):
    """``forward`` (last axis) as a ``custom_jvp`` whose rule is :func:`_z_tangent` at ``alpha``."""
    f = jax.custom_jvp(forward)

    @f.defjvp
    def _jvp(primals, tangents):
        (z,), (dz,) = primals, tangents
        p = f(z)
        return p, _z_tangent(p, alpha, dz)

    return f


def _forward(z, beta, n_iter):
    """p along the last axis: the fused GPU kernel where it is switched on and applies, else XLA."""
    fused = pallas_kernel.maybe_entmax_forward(z, beta, n_iter)
    return fused if fused is not None else threshold.entmax_forward(z, beta, n_iter)


# ----------------------------------------------------------------------------------------
# softmax (α = 1)
# ----------------------------------------------------------------------------------------


def _shift_and_mask(z):
    """Subtract the row max; report rows that are entirely -inf and rows holding NaN/+inf.

    Returns the shifted scores (a fully masked row is replaced by zeros so that no
    NaN is ever formed), the fully-masked indicator and the invalid-row indicator.
    """
    all_masked = jnp.all(z == -jnp.inf, axis=-1, keepdims=True)
    invalid = jnp.any(jnp.isnan(z) | (z == jnp.inf), axis=-1, keepdims=True)
    z = jnp.where(all_masked | invalid, jnp.zeros_like(z), z)
    z = z - jnp.max(z, axis=-1, keepdims=True)
    return z, all_masked, invalid


def _apply_row_rules(p, all_masked, invalid):
    p = jnp.where(all_masked, jnp.zeros_like(p), p)
    return jnp.where(invalid, jnp.full_like(p, jnp.nan), p)


def _softmax_last(z):
    z, all_masked, invalid = _shift_and_mask(z)
    e = jnp.exp(z)
    return _apply_row_rules(e / jnp.sum(e, axis=-1, keepdims=True), all_masked, invalid)


_softmax_masked_last = _fixed_alpha_map(_softmax_last, 1.0)  # s = p: the softmax Jacobian


def softmax(x, axis=-1):
    """Softmax (α = 1) with the same mask and dtype conventions as the sparse maps.

        softmax(z)_i = exp(z_i) / Σ_j exp(z_j).

    Identical to ``jax.nn.softmax`` except that a slice which is entirely ``-inf``
    returns zeros (not NaN), with zero gradient.

    Args:
      x: floating-point array of scores.
      axis: the axis to normalise over.

    Returns:
      An array of the shape and dtype of ``x``, non-negative, summing to one along ``axis``.

    Example:
      >>> import jax.numpy as jnp
      >>> from entmax_lib import softmax
      >>> softmax(jnp.array([[0.0, 0.0], [-jnp.inf, -jnp.inf]], jnp.float32)).tolist()
      [[0.5, 0.5], [0.0, 0.0]]
    """
    z, dtype, axis = prepare_scores(x, axis)
    return _finish(_softmax_masked_last(z), dtype, axis)


# ----------------------------------------------------------------------------------------
# sparsemax (α = 2) and 1.5-entmax: exact thresholds, the z-rule only
# ----------------------------------------------------------------------------------------


def _sparsemax_forward(z):
    """Exact sparsemax without a sort: the α = 2 threshold search, whose steps from the left
    are Michelot's (the threshold of the current support, τ = (Σ_S z − 1)/|S|)."""
    return _forward(z, 1.0, _default_n_iter(z.dtype))


_sparsemax_last = _fixed_alpha_map(_sparsemax_forward, 2.0)  # s = the support indicator


def sparsemax(x, axis=-1):
    """Sparsemax (Martins & Astudillo, 2016): the Euclidean projection onto the simplex.

        sparsemax(z) = argmin_{p ∈ Δ} ‖p − z‖²  =  [z − τ]_+ ,

    with τ exact but found without sorting: the threshold search of
    :mod:`entmax_lib.threshold` at α = 2, whose steps from the left are Michelot's
    τ = (Σ_{i∈S} z_i − 1)/|S| on the current support S; it stops when the next evaluation
    confirms S (typically after 3–5 passes over the slice, O(d) each). The result equals the
    sort-based algorithm's — for z sorted decreasingly with cumulative sums c_k,
    k* = max{k : 1 + k z_(k) > c_k}, τ = (c_{k*} − 1)/k* — to rounding. This is α-entmax
    at α = 2. The Jacobian is ``diag(s) − s sᵀ/|S|`` with s the support indicator.

    Args:
      x: floating-point array of scores (float16, bfloat16, float32 or float64).
      axis: the axis to normalise over.

    Returns:
      Array of the shape and dtype of ``x``: non-negative, sums to one along ``axis``,
      with exact zeros outside the support. ``-inf`` entries get 0; an all ``-inf``
      slice returns zeros; a slice with NaN returns NaN.

    Raises:
      TypeError: ``x`` is not a floating-point array, or ``axis`` is not an integer.
      ValueError: ``axis`` is out of range or the axis is empty.

    Example:
      >>> import jax.numpy as jnp
      >>> from entmax_lib import sparsemax
      >>> sparsemax(jnp.array([-2.0, 0.0, 0.5], jnp.float32)).tolist()
      [0.0, 0.25, 0.75]

    Reference:
      Martins & Astudillo (2016), https://arxiv.org/abs/1602.02068 .
    """
    z, dtype, axis = prepare_scores(x, axis)
    return _finish(_sparsemax_last(z), dtype, axis)


def _entmax15_forward(z):
    """Exact 1.5-entmax without a sort: the α = 1.5 threshold search, whose steps from the left
    solve the quadratic of Peters et al. (2019, Algorithm 2) on the current support."""
    return _forward(z, 0.5, _default_n_iter(z.dtype))


_entmax15_last = _fixed_alpha_map(_entmax15_forward, 1.5)  # s = sqrt(p)


def entmax15(x, axis=-1):
    """1.5-entmax (Peters, Niculae & Martins, 2019), exact, without a sort.

        entmax15(z) = [z/2 − τ]_+² ,   Σ p = 1.

    τ is exact but found without sorting: the threshold search of
    :mod:`entmax_lib.threshold` at α = 1.5, whose steps from the left solve
    Σ_{i∈S} (z_i/2 − τ)² = 1 on the current support S (the quadratic of Peters et al.'s
    Algorithm 2, which tries it on every prefix of the sorted row instead); typically
    3–5 passes over the slice, O(d) each. The Jacobian is ``diag(s) − s sᵀ/Σs`` with
    s = sqrt(p).

    Args:
      x: floating-point array of scores (float16, bfloat16, float32 or float64).
      axis: the axis to normalise over.

    Returns:
      Array of the shape and dtype of ``x``; same mask/NaN conventions as :func:`sparsemax`.

    Raises:
      TypeError: ``x`` is not a floating-point array, or ``axis`` is not an integer.
      ValueError: ``axis`` is out of range or the axis is empty.

    Example:
      >>> import jax.numpy as jnp
      >>> from entmax_lib import entmax15
      >>> [round(v, 4) for v in entmax15(jnp.array([-2.0, 0.0, 0.5], jnp.float32)).tolist()]
      [0.0, 0.326, 0.674]

    Reference:
      Peters, Niculae & Martins (2019), https://aclanthology.org/P19-1146/ .
    """
    z, dtype, axis = prepare_scores(x, axis)
    return _finish(_entmax15_last(z), dtype, axis)


# ----------------------------------------------------------------------------------------
# α-entmax for any α ≥ 1: a fixed α (z-rule) or an array α (z- and α-rules)
# ----------------------------------------------------------------------------------------


def _psi_series(u):
    """ψ(u) = (eᵘ − 1 − u)/u² = Σ_k u^k/(k+2)! for 0 ≤ u ≤ 1/2 (nine terms: float64 accuracy)."""
    series = jnp.zeros_like(u)
    for k in range(8, -1, -1):  # Horner
        series = series * u + 1.0 / math.factorial(k + 2)
    return series


def _alpha_tangent(p, alpha):
    """∂p/∂α (Correia et al. 2019, Proposition 1), for any α ≥ 1 including α = 1.

    Proposition 1 reads, with p̃ = s/Σs, h_i = −p_i log p_i and β = α − 1,

        g_i = (p_i − p̃_i)/β² + (h_i − p̃_i Σ_j h_j)/β              (α > 1),
        g_i = (h_i log p_i − p_i Σ_j h_j log p_j)/2                   (α = 1).

    Both O(1/β) terms of the first line cancel as α → 1. Writing ℓ_i = −log p_i,
    u_i = βℓ_i (so p_i^{−β} = e^{u_i}) and φ_i = (e^{u_i} − 1 − u_i)/β² = ℓ_i² ψ(u_i),
    the same quantity is, exactly,

        g_i = [ Φ (p_i + β h_i) − p_i φ_i (1 + β H) ] / Σ_j s_j,
        Φ = Σ_j p_j φ_j,   H = Σ_j h_j,

    which has no division by β and equals the α = 1 line at β = 0 (φ = ℓ²/2).
    Off the support g_i = 0 (every term carries a factor p_i), and Σ_i g_i = 0.
    """
    beta = alpha - 1.0
    ell = _neg_log(p)
    u = beta * ell
    s = _support_weights(p, alpha)  # the same expression as in _z_tangent: XLA computes it once
    h = p * ell
    # p φ = p ℓ² ψ(u) for u < 1/2, else (s − p − βh)/β² (= p (eᵘ − 1 − u)/β², no cancellation).
    beta_safe = jnp.where(beta > 0, beta, 1.0)  # per row; β = 0 always takes the series
    p_phi = jnp.where(
        u < 0.5,
        h * ell * _psi_series(jnp.minimum(u, 0.5)),
        (s - p - beta * h) / beta_safe**2,
    )
    big_phi = jnp.sum(p_phi, axis=-1, keepdims=True)
    big_h = jnp.sum(h, axis=-1, keepdims=True)
    total = jnp.sum(s, axis=-1, keepdims=True)
    total = jnp.where(total > 0, total, 1.0)
    return (big_phi * (p + beta * h) - p_phi * (1.0 + beta * big_h)) / total


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def _entmax_fixed_last(z, alpha, n_iter):
    return _forward(z, alpha - 1.0, n_iter)


@_entmax_fixed_last.defjvp
def _entmax_fixed_jvp(alpha, n_iter, primals, tangents):
    (z,), (dz,) = primals, tangents
    p = _entmax_fixed_last(z, alpha, n_iter)
    return p, _z_tangent(p, alpha, dz)


@functools.partial(jax.custom_jvp, nondiff_argnums=(2,))
def _entmax_learned_last(z, alpha, n_iter):
    return _forward(z, alpha - 1.0, n_iter)


def _entmax_learned_jvp(n_iter, primals, tangents):
    (z, alpha), (dz, dalpha) = primals, tangents
    p = _entmax_learned_last(z, alpha, n_iter)
    dp = jnp.zeros_like(p)
    if not isinstance(dz, SymbolicZero):
        dp = dp + _z_tangent(p, alpha, dz)
    if not isinstance(dalpha, SymbolicZero):
        dp = dp + _alpha_tangent(p, alpha) * dalpha
    return p, dp


_entmax_learned_last.defjvp(_entmax_learned_jvp, symbolic_zeros=True)


def _entmax(x, alpha, axis, n_iter):
    """α-entmax with its arguments checked (the body of :func:`entmax_bisect`)."""
    z, dtype, axis_ = prepare_scores(x, axis)
    n_iter = _check_n_iter(n_iter, z.dtype)

    a = prepare_alpha(alpha, jnp.shape(x), axis_, z.dtype)
    if isinstance(a, float):
        if a == 1.0:
            return _finish(_softmax_masked_last(z), dtype, axis_)
        return _finish(_entmax_fixed_last(z, a, n_iter), dtype, axis_)
    return _finish(_entmax_learned_last(z, a, n_iter), dtype, axis_)


def entmax_bisect(x, alpha=1.5, axis=-1, n_iter=None):
    """α-entmax for any α ≥ 1, differentiable in ``x`` and in ``alpha``.

        entmax_α(z) = argmax_{p ∈ Δ} pᵀz + H_α(p),   p_i = [(α−1) z_i − τ]_+^{1/(α−1)}.

    The name is that of the reference PyTorch package, whose version bisects on τ. Here τ
    is found by the safeguarded Newton–Halley search of :mod:`entmax_lib.threshold` inside
    the same bracket [max(x) − 1, max(x) − d^{1−α}] (x = (α−1) z, d = size of ``axis``):
    typically 2–4 passes over each slice instead of 25 halvings, and at α = 2 and 1.5
    (Python numbers) exact, as in the sort-based algorithms. ``alpha=1`` returns softmax,
    also for an α traced inside ``jit``.

    Derivatives are closed-form rules (``jax.custom_jvp``; works with ``grad``,
    ``jacfwd``, ``jacrev``, ``vmap``, ``jit``): ∂p/∂z = diag(s) − s sᵀ/Σs with
    s = p^{2−α} on the support, and ∂p/∂α from Proposition 1 of Correia et al. (2019),
    including its α = 1 limit. When ``alpha`` is broadcast against ``x`` its cotangent
    is summed back to ``alpha``'s shape.

    Precision: the threshold is found on the scale of u_i = p_i^{α−1}, so an entry is
    resolved only while p_i^{α−1} is above the resolution of the compute dtype. In float32
    (float16, bfloat16 and float32 inputs) that is about 1.2e-7: entries below
    (1.2e-7)^{1/(α−1)} may come out as 0 (with zero gradient) or off by that much — 1e-7 at
    α = 2, 3e-4 at α = 3, 5e-3 at α = 4, 2e-2 at α = 5. This holds for any float32 method.
    For α ≤ 2 (the range of the Adaptively Sparse Transformer) float32 results are accurate
    to about 1e-6; for larger α and small entries that matter, use float64 input.

    Args:
      x: floating-point array of scores (float16, bfloat16, float32 or float64).
      alpha: a Python number (fixed α; integer exponents 1/(α−1) compile to multiplies)
        or an array of any float or integer dtype, broadcastable against ``x`` with size 1
        along ``axis`` (one α per head, per row, ...). Concrete values must be finite, ≥ 1
        and at most :data:`ALPHA_LIMIT` = 1e6 (``ValueError`` otherwise). A *traced* α cannot
        be checked: values below 1 are clamped to 1 (softmax, zero α-gradient), values above
        1e6 to 1e6, and NaN or +inf give NaN; keep it in a
        bounded range, e.g. α = 1 + sigmoid(a) as the Adaptively Sparse Transformer does.
      axis: the axis to normalise over.
      n_iter: the most search steps per slice (a Halley/Newton step, or a halving of the
        bracket where those would leave it); default 25 for float32 computation and 54 for
        float64, enough for halvings alone to reach full precision. Rows stop as soon as
        they converge, so a larger cap costs nothing.

    Returns:
      Array of the shape and dtype of ``x``: non-negative, sums to one along ``axis``.
      ``-inf`` entries get exactly 0; an all ``-inf`` slice returns zeros with zero
      gradients; a slice containing NaN or +inf returns NaN.

    Raises:
      TypeError: non-float ``x``; non-numeric ``alpha``; non-integer ``axis`` or ``n_iter``.
      ValueError: bad ``axis``, empty axis, α < 1, α > 1e6 or non-finite, α of the wrong shape,
        ``n_iter`` outside [1, 2**31 − 1].

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from entmax_lib import entmax_bisect
      >>> x = jnp.array([[-1.0, 0.0, 0.5], [1.0, 2.0, 3.5]], jnp.float32)
      >>> [round(v, 4) for v in entmax_bisect(x, alpha=1.33)[0].tolist()]
      [0.046, 0.3276, 0.6264]
      >>> dp_dalpha = jax.grad(lambda a: entmax_bisect(x, a)[0, 0])(jnp.float32(1.33))
      >>> round(float(dp_dalpha), 4)
      -0.2562

    References:
      Peters, Niculae & Martins (2019), https://aclanthology.org/P19-1146/ ;
      Correia, Niculae & Martins (2019), Proposition 1, https://arxiv.org/abs/1909.00015 .
    """
    return _entmax(x, alpha, axis, n_iter)
