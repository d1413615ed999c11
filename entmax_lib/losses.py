"""Fenchel–Young losses of the entmax maps: the training losses whose predictions are sparse.

Every map of :mod:`entmax_lib.entmax` is p* = argmax_{p ∈ Δ} ⟨z, p⟩ − Ω_α(p) for the Tsallis
regulariser (the negative of the Tsallis entropy H_α)

    Ω_α(p) = Σ_i (p_i^α − p_i) / (α(α−1))   (α > 1),     Ω_1(p) = Σ_i p_i log p_i ,

which on the simplex is (Σ_i p_i^α − 1)/(α(α−1)), and its Fenchel–Young loss
(Blondel, Martins & Niculae, 2020) is

    L_α(z, y) = Ω*_α(z) − ⟨z, y⟩ + Ω_α(y),    Ω*_α(z) = ⟨z, p*⟩ − Ω_α(p*),

that is L = ⟨p* − y, z⟩ + Ω_α(y) − Ω_α(p*). It is convex in z, non-negative, zero exactly
when p* = y. α = 2 gives the sparsemax loss of Martins & Astudillo (2016); Peters, Niculae &
Martins (2019) train with α = 1.5. α = 1 gives softmax cross-entropy for a class label (Ω(e_k)
= 0); for a probability target y it gives KL(y ‖ softmax(z)) = cross-entropy − H(y), which is
zero at softmax(z) = y (cross-entropy is not) and has the same gradient. Unlike the log-loss
of a sparse map, it stays finite when the right class gets probability zero.

Derivatives (``jax.custom_jvp`` rules, computed from p*, never through the threshold search):

* with respect to z: ∇_z L = p* − y (Danskin: Ω*'s gradient is p*). Second derivatives go
  through the map's own Jacobian, so ``jax.hessian`` works.
* with respect to α (:func:`entmax_bisect_loss` with an array α): Ω*_α(z) is a maximum over
  p of a function of (p, α), so by the envelope theorem its α-derivative is the partial one at
  the maximiser, −∂_α Ω_α(p*); hence ∂L/∂α = ∂_α Ω_α(y) − ∂_α Ω_α(p*), both at fixed p. With
  β = α − 1, ℓ_i = −log p_i and v_i = −β ℓ_i, write Ω_α(p) = (1/α) Σ_i p_i (e^{v_i} − 1)/β;
  then

      ∂_α Ω_α(p) = ( Σ_i p_i ℓ_i² ψ(v_i) − Ω_α(p) ) / α,   ψ(v) = (v eᵛ − eᵛ + 1)/v²,

  where ψ(v) = Σ_m (m+1) vᵐ/(m+2)! is summed as a series near v = 0: no division by β, and at
  α = 1 it is (½ Σ p ℓ² − Σ p log p) — the derivative at softmax.

Conventions, those of the maps: any ``axis``; float16/bfloat16/float32/float64 scores computed
in at least float32, the loss returned in the scores' dtype; ``-inf`` scores are masked out
(probability 0, zero gradient), a target with mass on a masked entry has loss +inf, and a row
that is entirely ``-inf`` has loss 0 and zero gradient (a padding row). Targets are constants:
no gradient flows to ``labels``.

References:
  Blondel, Martins & Niculae (2020), Learning with Fenchel-Young Losses, JMLR 21(35),
  https://jmlr.org/papers/v21/19-021.html ;
  Peters, Niculae & Martins (2019), Sparse Sequence-to-Sequence Models, ACL,
  https://aclanthology.org/P19-1146/ ;
  Martins & Astudillo (2016), From Softmax to Sparsemax, https://arxiv.org/abs/1602.02068 .
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_derivatives import SymbolicZero

from entmax_lib._checks import prepare_alpha, prepare_scores
from entmax_lib.entmax import entmax15, entmax_bisect, sparsemax

__all__ = ["entmax15_loss", "entmax_bisect_loss", "sparsemax_loss"]

_REDUCTIONS = ("none", "mean", "sum")


# ----------------------------------------------------------------------------------------
# Argument checks (all run before any computation)
# ----------------------------------------------------------------------------------------


def _check_reduction(reduction):
    if not isinstance(reduction, str) or reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of {_REDUCTIONS}, got {reduction!r}.")


def _concrete(x):
    """``x`` as a NumPy array, or None when it is traced (inside ``jit``) and cannot be checked."""
    try:
        return np.asarray(x)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        return None


def _prepare_labels(labels, z_shape, axis, compute):
    """Integer class indices or probability targets → (targets with the class axis last, bad rows).

    Concrete labels are checked as given, before JAX converts them: without x64 it would wrap an
    int64 index such as 2**32 + 1 to 1. ``bad`` marks rows whose (traced) integer label is out of
    range: their loss becomes NaN.
    """
    y_np = _concrete(labels)
    dtype = jnp.asarray(labels).dtype if y_np is None else y_np.dtype
    n_classes = z_shape[axis]
    batch_shape = z_shape[:axis] + z_shape[axis + 1 :]
    is_integer = jnp.issubdtype(dtype, jnp.integer) and dtype != np.bool_
    if not (is_integer or jnp.issubdtype(dtype, jnp.floating)):
        raise TypeError(
            f"labels must be integer class indices or floating-point probabilities, got dtype {dtype}."
        )
    shape = np.shape(labels) if y_np is None else y_np.shape
    if is_integer:
        if shape != batch_shape:
            raise ValueError(
                f"integer labels must have the shape of scores without axis {axis}, {batch_shape}; "
                f"got {shape}."
            )
        if y_np is not None and y_np.size and (y_np.min() < 0 or y_np.max() >= n_classes):
            raise ValueError(
                f"labels must be class indices in [0, {n_classes}), got values from "
                f"{y_np.min()} to {y_np.max()}."
            )
        y = jnp.asarray(labels)
        return jax.nn.one_hot(y, n_classes, dtype=compute), (y < 0) | (y >= n_classes)
    if shape != tuple(z_shape):
        raise ValueError(f"probability labels must have the shape of scores {tuple(z_shape)}; got {shape}.")
    if y_np is not None:
        _check_distributions(np.moveaxis(y_np.astype(np.float64), axis, -1), dtype)
    y = jnp.asarray(labels)
    return jnp.moveaxis(y.astype(compute), axis, -1), jnp.zeros(batch_shape, bool)


def _check_distributions(y, dtype):
    # Tolerance: what rounding a distribution to ``dtype`` can do to its sum (label smoothing
    # in bfloat16 is off by a few eps), but never below 1e-4.
    tol = max(1e-4, y.shape[-1] * float(jnp.finfo(dtype).eps))
    if not np.all(np.isfinite(y)) or np.any(y < 0):
        raise ValueError("labels given as probabilities must be finite and non-negative.")
    error = np.abs(y.sum(-1) - 1.0).max(initial=0.0)
    if error > tol:
        raise ValueError(
            f"labels given as probabilities must sum to 1 along the class axis; "
            f"the worst row is off by {error:.3g}."
        )


# ----------------------------------------------------------------------------------------
# The regulariser Ω_α and its α-derivative, along the last axis
# ----------------------------------------------------------------------------------------


def _neg_log(p):
    """ℓ = −log p, finite where p = 0 (≈ 87 in float32), so that p·f(ℓ) is 0 there."""
    return -jnp.log(jnp.maximum(p, jnp.finfo(p.dtype).tiny))


def _omega(p, alpha):
    """Ω_α(p) = Σ (p^α − p)/(α(α−1)), Σ p log p at α = 1; a Python float or a (..., 1) array α."""
    if isinstance(alpha, float):
        # Exact shortcuts where α − 1 is not small (no cancellation); one formula otherwise.
        if alpha == 2.0:
            return jnp.sum(p * p - p, axis=-1) / 2.0
        if alpha == 1.5:
            return jnp.sum(p * jnp.sqrt(p) - p, axis=-1) / 0.75
    # p^α − p = p (e^{−βℓ} − 1): expm1 and a division by β only where β > 0 keep it exact as
    # α → 1, where (p^α − p)/(α − 1) cancels catastrophically (30 % off at α = 1 + 1e-7 in float32).
    beta = alpha - 1.0
    ell = _neg_log(p)
    beta_safe = jnp.where(beta > 0, beta, 1.0)
    e = jnp.where(beta > 0, jnp.expm1(-beta * ell) / beta_safe, -ell)
    return jnp.sum(p * e, axis=-1) / (alpha if isinstance(alpha, float) else alpha[..., 0])


def _psi(v):
    """ψ(v) = (v eᵛ − eᵛ + 1)/v² for v ≤ 0: a series near 0 (float64-accurate), else closed form."""
    near = v > -0.5
    u = jnp.maximum(v, -0.5)
    series = jnp.zeros_like(v)
    for m in range(15, -1, -1):  # Horner on Σ (m+1) vᵐ/(m+2)!
        series = series * u + (m + 1) / math.factorial(m + 2)
    far = jnp.where(near, -1.0, v)
    closed = (far * jnp.exp(far) - jnp.expm1(far)) / far**2
    return jnp.where(near, series, closed)


def _omega_alpha_derivative(p, alpha):
    """∂Ω_α(p)/∂α at fixed p, for an array α of shape (..., 1): (Σ p ℓ² ψ(−βℓ) − Ω)/α."""
    ell = _neg_log(p)
    curvature = jnp.sum(p * ell * ell * _psi(-(alpha - 1.0) * ell), axis=-1)
    return (curvature - _omega(p, alpha)) / alpha[..., 0]


# ----------------------------------------------------------------------------------------
# The loss and its derivative rule
# ----------------------------------------------------------------------------------------


def _map(z, alpha, spec):
    """p* along the last axis, for spec = (kind, fixed α or None, n_iter)."""
    kind, fixed, n_iter = spec
    if kind == "sparsemax":
        p = sparsemax(z)
    elif kind == "entmax15":
        p = entmax15(z)
    else:
        p = entmax_bisect(z, alpha if fixed is None else fixed, axis=-1, n_iter=n_iter)
    # The maps sum to 1 up to an ulp; renormalising makes a one-hot p* exactly one-hot, so that
    # past the margin the loss and its gradient are exactly 0.
    total = jnp.sum(p, axis=-1, keepdims=True)
    return p / jnp.where(total > 0, total, 1.0)


def _fy_value(z, y, p, alpha):
    """⟨p − y, z⟩ + Ω(y) − Ω(p) per row, with the masking rules of the module docstring."""
    masked = z == -jnp.inf
    all_masked = jnp.all(masked, axis=-1)
    # Σp = Σy = 1, so shifting z by its maximum changes nothing but the rounding. Entries with
    # p = y (masked ones, and those a float range below the maximum, whose shift overflows to
    # −inf) are left out of the sum rather than multiplied by −inf.
    diff = p - y
    skip = masked | (diff == 0)
    shifted = jnp.where(skip, 0.0, z - jnp.max(z, axis=-1, keepdims=True))
    loss = jnp.sum(jnp.where(skip, 0.0, diff) * shifted, axis=-1) + _omega(y, alpha) - _omega(p, alpha)
    loss = jnp.maximum(loss, 0.0)  # L ≥ 0; only rounding could take it below
    leak = jnp.any(masked & (y > 0), axis=-1)  # the target needs a class the scores exclude
    loss = jnp.where(leak, jnp.inf, loss)
    return jnp.where(all_masked, 0.0, loss)


@functools.partial(jax.custom_jvp, nondiff_argnums=(3,))
def _fy_loss_last(z, y, alpha, spec):
    fixed = spec[1]
    return _fy_value(z, y, _map(z, alpha, spec), alpha if fixed is None else fixed)


def _fy_loss_jvp(spec, primals, tangents):
    (z, y, alpha), (dz, _, dalpha) = primals, tangents  # labels are constants
    fixed = spec[1]
    # p from the map itself (its closed-form Jacobian, not the search, if this is differentiated).
    p = _map(z, alpha, spec)
    loss = _fy_value(z, y, p, alpha if fixed is None else fixed)
    dloss = jnp.zeros_like(loss)
    if not isinstance(dz, SymbolicZero):
        grad = jnp.where(z == -jnp.inf, 0.0, p - y)  # masked entries: zero gradient
        dloss = dloss + jnp.sum(grad * dz, axis=-1)
    if fixed is None and not isinstance(dalpha, SymbolicZero):
        # Envelope theorem: only Ω's explicit dependence on α, at y and at p*.
        d_omega = _omega_alpha_derivative(y, alpha) - _omega_alpha_derivative(p, alpha)
        dloss = dloss + d_omega * dalpha[..., 0]
    dloss = jnp.where(jnp.all(z == -jnp.inf, axis=-1) | jnp.isinf(loss), 0.0, dloss)
    return loss, dloss


_fy_loss_last.defjvp(_fy_loss_jvp, symbolic_zeros=True)


def _loss(scores, labels, alpha, axis, reduction, kind, n_iter=None):
    """Validate every argument, then compute and reduce the loss."""
    _check_reduction(reduction)
    z, dtype, axis = prepare_scores(scores, axis, "scores")
    z_shape = jnp.shape(scores)
    alpha = prepare_alpha(alpha, z_shape, axis, z.dtype, "alpha", "scores")
    y, bad = _prepare_labels(labels, z_shape, axis, z.dtype)
    if reduction == "mean" and math.prod(bad.shape) == 0:
        raise ValueError(
            f"reduction='mean' over an empty batch (scores with shape {tuple(z_shape)}) is undefined; "
            f"use reduction='sum' or 'none'."
        )
    y = jax.lax.stop_gradient(y)
    if isinstance(alpha, float):
        loss = _fy_loss_last(z, y, jnp.asarray(alpha, z.dtype), (kind, alpha, n_iter))
    else:
        loss = _fy_loss_last(z, y, alpha, (kind, None, n_iter))
    loss = jnp.where(bad, jnp.nan, loss)
    if reduction == "mean":
        loss = jnp.mean(loss)
    elif reduction == "sum":
        loss = jnp.sum(loss)
    return loss.astype(dtype)


# ----------------------------------------------------------------------------------------
# Public losses
# ----------------------------------------------------------------------------------------


def sparsemax_loss(scores, labels, axis=-1, reduction="none"):
    """The sparsemax loss: the Fenchel–Young loss of sparsemax (α = 2).

        L(z, y) = ⟨p* − y, z⟩ + ½‖y‖² − ½‖p*‖²,   p* = sparsemax(z),   ∇_z L = p* − y.

    Zero exactly when z_y − z_j ≥ 1 for every j ≠ y (the right class wins by a margin of 1);
    equal to ``optax.losses.multiclass_sparsemax_loss`` for integer labels.

    Args:
      scores: floating-point array of scores (logits), classes along ``axis``.
      labels: integer class indices with the shape of ``scores`` without ``axis``, or
        probability targets of the shape of ``scores`` (non-negative, summing to 1 along
        ``axis``; label smoothing is such a target). Treated as constants. Concrete labels
        are checked; inside ``jit``, a label out of range gives a NaN loss for its row.
      axis: the class axis.
      reduction: "none" (one loss per row), "mean" or "sum" over the rows.

    Returns:
      The loss in the dtype of ``scores``: shape ``scores.shape`` without ``axis``, or a scalar.

    Raises:
      TypeError: non-float ``scores``, ``labels`` neither integer nor float, non-integer ``axis``.
      ValueError: bad ``axis`` or ``reduction``; ``labels`` of the wrong shape, out of range,
        or (concrete probabilities) negative or not summing to 1; ``reduction="mean"`` over
        an empty batch.

    Example:
      >>> import jax.numpy as jnp
      >>> from entmax_lib import sparsemax_loss
      >>> scores = jnp.array([[-2.0, 0.0, 0.5], [3.0, 0.0, 1.0]], jnp.float32)
      >>> sparsemax_loss(scores, jnp.array([2, 0])).tolist()  # the second row wins by ≥ 1
      [0.0625, 0.0]

    References:
      Martins & Astudillo (2016), https://arxiv.org/abs/1602.02068 ;
      Blondel, Martins & Niculae (2020), JMLR 21(35), https://jmlr.org/papers/v21/19-021.html .
    """
    return _loss(scores, labels, 2.0, axis, reduction, "sparsemax")


def entmax15_loss(scores, labels, axis=-1, reduction="none"):
    """The 1.5-entmax loss: the Fenchel–Young loss of 1.5-entmax.

        L(z, y) = ⟨p* − y, z⟩ + Ω(y) − Ω(p*),   Ω(p) = Σ (p^{3/2} − p)/0.75,
        p* = entmax15(z),   ∇_z L = p* − y.

    Zero exactly when z_y − z_j ≥ 2 for every j ≠ y (the margin 1/(α−1) at α = 1.5).

    Args:
      scores: floating-point array of scores (logits), classes along ``axis``.
      labels: integer class indices (shape of ``scores`` without ``axis``) or probability
        targets (shape of ``scores``), as in :func:`sparsemax_loss`. Treated as constants.
      axis: the class axis.
      reduction: "none", "mean" or "sum".

    Returns:
      The loss in the dtype of ``scores``: shape ``scores.shape`` without ``axis``, or a scalar.

    Raises:
      TypeError, ValueError: as :func:`sparsemax_loss`.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from entmax_lib import entmax15_loss
      >>> scores = jnp.array([-2.0, 0.0, 0.5], jnp.float32)
      >>> round(float(entmax15_loss(scores, jnp.array(2))), 4)
      0.1844
      >>> [round(g, 4) for g in jax.grad(entmax15_loss)(scores, jnp.array(2)).tolist()]
      [0.0, 0.326, -0.326]

    References:
      Peters, Niculae & Martins (2019), https://aclanthology.org/P19-1146/ ;
      Blondel, Martins & Niculae (2020), JMLR 21(35), https://jmlr.org/papers/v21/19-021.html .
    """
    return _loss(scores, labels, 1.5, axis, reduction, "entmax15")


def entmax_bisect_loss(scores, labels, alpha=1.5, axis=-1, reduction="none", n_iter=None):
    """The α-entmax loss for any α ≥ 1, differentiable in the scores and in α.

        L_α(z, y) = Ω*_α(z) − ⟨z, y⟩ + Ω_α(y) = ⟨p* − y, z⟩ + Ω_α(y) − Ω_α(p*),
        Ω_α(p) = Σ (p_i^α − p_i)/(α(α−1))  (Σ p_i log p_i at α = 1),   p* = entmax_α(z).

    α = 2 is the sparsemax loss. α = 1 is softmax cross-entropy for integer labels; for a
    probability target y it is KL(y ‖ softmax(z)), cross-entropy minus the entropy H(y) of the
    target (the same gradient, and zero at the target). ∇_z L = p* − y, and, by the
    envelope theorem, ∂L/∂α = ∂_α Ω_α(y) − ∂_α Ω_α(p*) at fixed y and p* (see the module
    docstring for the formula, exact at α = 1). For α > 1 the loss is zero exactly when
    z_y − z_j ≥ 1/(α−1) for every j ≠ y.

    Args:
      scores: floating-point array of scores (logits), classes along ``axis``.
      labels: integer class indices (shape of ``scores`` without ``axis``) or probability
        targets (shape of ``scores``), as in :func:`sparsemax_loss`. Treated as constants.
      alpha: a Python number ≥ 1, or an array that broadcasts to the shape of ``scores``
        with size 1 along ``axis`` (one α per row, or shared), as in
        :func:`entmax_lib.entmax_bisect`.
        Concrete values must be finite and ≥ 1; a traced α below 1 is clamped to 1.
      axis: the class axis.
      reduction: "none", "mean" or "sum".
      n_iter: the cap on the threshold search's steps, as in :func:`entmax_lib.entmax_bisect`.

    Returns:
      The loss in the dtype of ``scores``: shape ``scores.shape`` without ``axis``, or a scalar.

    Raises:
      TypeError, ValueError: as :func:`sparsemax_loss`; also α < 1, non-finite or of the
        wrong shape, and a bad ``n_iter``.

    Example:
      >>> import jax, jax.numpy as jnp
      >>> from entmax_lib import entmax_bisect_loss
      >>> scores = jnp.array([-2.0, 0.0, 0.5], jnp.float32)
      >>> round(float(entmax_bisect_loss(scores, jnp.array(2), alpha=1.0)), 4)  # cross-entropy
      0.5239
      >>> smoothed = jnp.array([0.05, 0.05, 0.9])  # KL(y ‖ softmax), not cross-entropy
      >>> round(float(entmax_bisect_loss(scores, smoothed, alpha=1.0)), 4)
      0.2795
      >>> dloss_dalpha = jax.grad(entmax_bisect_loss, argnums=2)(scores, jnp.array(2), 1.5)
      >>> round(float(dloss_dalpha), 4)
      -0.3571

    References:
      Blondel, Martins & Niculae (2020), JMLR 21(35), https://jmlr.org/papers/v21/19-021.html ;
      Peters, Niculae & Martins (2019), https://aclanthology.org/P19-1146/ .
    """
    return _loss(scores, labels, alpha, axis, reduction, "bisect", n_iter)
