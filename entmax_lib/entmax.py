"""Sparse probability maps: sparsemax, 1.5-entmax and α-entmax, with closed-form derivatives.

All maps solve, along one axis of ``x``,

    entmax_α(z) = argmax_{p ∈ Δ}  pᵀz + H_α(p),
    H_α(p) = 1/(α(α−1)) Σ_j (p_j − p_j^α)   (α ≠ 1),   H_1(p) = −Σ_j p_j log p_j,

whose solution is ``p_i = [(α−1) z_i − τ]_+^{1/(α−1)}`` for the unique τ with Σ p = 1.
α = 1 is softmax, α = 2 is sparsemax (Martins & Astudillo, 2016), α = 1.5 is the
1.5-entmax of Peters, Niculae & Martins (2019); α → ∞ tends to argmax.

Derivatives are closed-form rules (``jax.custom_jvp``), never the unrolled iterations:

* with respect to z, for s_i = p_i^{2−α} on the support and 0 elsewhere,
  ``∂p/∂z = diag(s) − s sᵀ / Σ_j s_j`` (Peters et al., 2019);
* with respect to α, Proposition 1 of Correia, Niculae & Martins (2019), "Adaptively
  Sparse Transformers", evaluated in a rearranged form that is exact at α = 1 and free
  of cancellation near it (see :func:`_alpha_tangent`).

Conventions shared by every public map here:

* Any ``axis``; leading axes are batch axes. Input dtypes float16, bfloat16, float32
  and float64; computation runs in at least float32 and the result has the input dtype.
* ``-inf`` entries (attention masks) get exactly zero probability and zero gradient.
  A slice that is entirely ``-inf`` returns all zeros with zero gradients (softmax
  would return NaN there).
* A slice containing NaN (or +inf) returns NaN in that slice only.
* Non-float input raises ``TypeError``; a bad or empty ``axis`` raises ``ValueError``.
"""

from __future__ import annotations

import functools
import math
import operator
import os
import re
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.custom_derivatives import SymbolicZero

__all__ = ["sparsemax", "entmax15", "entmax_bisect", "tsallis_entmax", "softmax"]


# ----------------------------------------------------------------------------------------
# Input handling shared by all maps
# ----------------------------------------------------------------------------------------


def _prepare(x, axis):
    """Validate ``x`` and ``axis``; return (x in compute dtype, moved to last axis), dtype, axis."""
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise TypeError(
            f"x must be a floating-point array, got dtype {x.dtype}; "
            "cast it first, e.g. x.astype(jnp.float32)."
        )
    if x.ndim == 0:
        raise ValueError("x must have at least one dimension (the axis to normalise over).")
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"axis must be an integer, got {axis!r}.") from None
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis={axis} is out of range for x with {x.ndim} dimensions.")
    axis %= x.ndim
    if x.shape[axis] == 0:
        raise ValueError(f"axis={axis} of x is empty (shape {x.shape}); there is nothing to normalise.")
    compute = jnp.promote_types(x.dtype, jnp.float32)
    return jnp.moveaxis(x.astype(compute), axis, -1), x.dtype, axis


def _finish(p, dtype, axis):
    return jnp.moveaxis(p, -1, axis).astype(dtype)


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


# ----------------------------------------------------------------------------------------
# Derivative rules
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


# ----------------------------------------------------------------------------------------
# Forward algorithms (last axis, compute dtype, no validation)
# ----------------------------------------------------------------------------------------


# The smallest β used in place of β = 0 inside the formulas below. It is a power of two, so
# β·y and log1p(β·y) = β·y (exact at this size) and the division by β are all exact: at α = 1
# the same code computes exp(y) bit for bit, without a per-entry branch. 1/β still fits float32.
_BETA_FLOOR = 2.0**-100


def _tsallis_base(y, theta, shift, beta):
    """u = 1 + β(y − θ − shift) for y = z − max z (1/β an integer), or x = u − 1 (otherwise).

    With a long support and βθ near 1, u is a small difference of numbers near 1: written
    as 1 + β(y − θ) its absolute error is that of θ (≈ 6e-8 in float32), the same for every
    entry, and a sum of u over |S| entries is off by |S| times that. For integer 1/β (α = 2,
    1.5, 4/3, …: β ≥ 1/8) u is formed instead as β y + c with one c = (1 − βθ) − β shift per
    row, exact in its first subtraction when βθ ≥ 1/2 (Sterbenz) and accurate otherwise, so
    u is as accurate as the scores. For other α (log and exp per entry) x = β(y − θ − shift)
    keeps log1p exact in the small-β limit; there the error of θ is removed instead by
    normalising p by the mass F computed with the same rounding (see :func:`_threshold_step`).

    Returns ``(u, None)`` for a Python-float β with integer 1/β, else ``(None, x)``.
    """
    if _integer_exponent(beta) is not None:
        return beta * y + ((1.0 - beta * theta) - beta * shift), None
    b = beta if isinstance(beta, float) else jnp.maximum(beta, _BETA_FLOOR)
    return None, b * ((y - theta) - shift)


def _entmax_output(y, theta, polish, beta):
    """p = [1 + β(y − θ − polish)]_+^{1/β} for y = z − max z (see :func:`_tsallis_base`)."""
    if isinstance(beta, float) and beta == 0.0:
        return jnp.exp((y - theta) - polish)
    u, x = _tsallis_base(y, theta, polish, beta)
    if u is not None:
        return jax.lax.integer_pow(jnp.maximum(u, 0.0), _integer_exponent(beta))
    b = beta if isinstance(beta, float) else jnp.maximum(beta, _BETA_FLOOR)
    return jnp.exp(jnp.log1p(jnp.maximum(x, -1.0)) / b)


def _row_stats(z):
    """Row max (0 where it is not finite) and the all -inf row flag, in one cheap pass over z.

    Rows holding NaN or +inf are not detected here (a separate isnan pass would cost as much
    as half a softmax on CPU): their mass F is NaN or +inf at the first evaluation, which
    stops them and makes their p NaN. Returns arrays of shape z.shape[:-1] + (1,).
    """
    row_max = jnp.max(z, axis=-1, keepdims=True)
    return jnp.where(jnp.isfinite(row_max), row_max, 0.0), row_max == -jnp.inf


def _integer_exponent(beta):
    """q = 1/β when β is a Python float with q a small integer (α = 2, 1.5, 4/3, …), else None."""
    if isinstance(beta, float) and beta > 0 and float(1.0 / beta).is_integer() and 1.0 / beta <= 8:
        return int(round(1.0 / beta))
    return None


def _threshold_sums(z, row_max, theta, beta):
    """The three sums over a row that drive the threshold iteration, in one pass over z.

    With u_i = [1 + β(z_i − max z − θ)]_+ and q = 1/β (so p_i = u_i^q):

        F = Σ u^q (the mass, F(θ*) = 1),   D = Σ u^{q−1} = −dF/dθ,   E = Σ u^{q−2}

    (d²F/dθ² = (1 − β) E; at α = 1.5, E = |S|, the size of the support). At β = 0, u = 1 and
    u^q = exp(z − max z − θ). Written with clamps rather than branches so that XLA fuses each
    sum into one loop. For a traced α the three sums are one reduction over a (…, 3, d)
    broadcast, which on CPU measured faster than three reductions of a shared log u.
    Cost per entry and sum: a few multiplies for integer q ≤ 8, else a log1p and an exp.
    """
    q_int = _integer_exponent(beta)
    u, x = _tsallis_base(z - row_max, theta, 0.0, beta)
    if q_int is not None:
        # Three separate reductions of one u: on CPU this fuses best (XLA materialises u once
        # and reduces it three times, ~2× faster than the stacked form used for traced α).
        u = jnp.maximum(u, 0.0)
        power = lambda k: jax.lax.integer_pow(u, k) if k >= 1 else jnp.sign(u)  # u^0 on the support
        total = lambda a: jnp.sum(a, axis=-1, keepdims=True)
        return total(power(q_int)), total(power(q_int - 1)), total(power(max(q_int - 2, 0)))
    if isinstance(beta, float):
        b = max(beta, _BETA_FLOOR)  # a fixed α = 1 (not reached from the public API)
        inv = 1.0 / b
    else:
        b = jnp.maximum(beta, _BETA_FLOOR)
        inv = (1.0 / b)[..., None, :]
    log_u = jnp.log1p(jnp.maximum(x, -1.0))[..., None, :]  # −inf off the support
    r = jnp.arange(3, dtype=z.dtype)[:, None]  # the three sums are Σ u^{q − r}, r = 0, 1, 2
    # u^{q−r} = exp(q log u − r log u); the clamp keeps −inf − (−inf) out of the exponent.
    sums = jnp.sum(jnp.exp(inv * log_u - r * jnp.maximum(log_u, -80.0)), axis=-1)
    return sums[..., 0:1], sums[..., 1:2], sums[..., 2:3]


def _newton_halley_steps(F, D, E, beta):
    """Newton and Halley increments of θ for G(θ) = (F^β − 1)/β (= log F at β = 0).

    G is F made nearly linear: exactly linear at β = 0 (G = logsumexp(z) − θ, so one Newton
    step is exact for softmax) and on a one-entry support; convex for α ≤ 2 (an ℓ_q norm of
    u, q ≥ 1), so Newton from the left never overshoots. With a = (1 − F^{−β})/β:
    G' = −F^{β−1} D, G'' = (1 − β) F^{β−2} (F E − D²), and

        Newton: Δ = a F / D,      Halley: Δ / (1 − (1 − β) a (F E − D²) / (2 D²)).
    """
    log_f = jnp.log(F)
    b = beta if isinstance(beta, float) else jnp.maximum(beta, _BETA_FLOOR)
    a = log_f if isinstance(beta, float) and beta == 0.0 else -jnp.expm1(-b * log_f) / b
    newton = a * F / D
    denom = 1.0 - (1.0 - beta) * a * (F * E - D * D) / (2.0 * D * D)
    usable = denom > 0.25  # far from the root Halley's correction can blow up: keep Newton
    halley = jnp.where(usable, newton / jnp.where(usable, denom, 1.0), newton)
    return newton, halley


def _exact_support_step(F, D, E, beta):
    """θ increment that solves Σ_{i∈S} u_i(θ + Δ)^q = 1 on the current support S (α = 2, 1.5).

    u_i shifts by t = βΔ. α = 2 (q = 1): Σ_S (u_i − t) = 1, t = (F − 1)/|S| with |S| = D —
    the threshold of Michelot's algorithm. α = 1.5 (q = 2): Σ_S (u_i − t)² = 1 with
    |S| = E, the smaller root t = (F − 1)/(D + sqrt(D² − |S|(F − 1))) (written without
    cancellation): the formula of the sort-based 1.5-entmax of Peters et al. (2019), on S.
    The result is the exact threshold iff S is the true support; from the left (F ≥ 1) no
    entry can enter S, so it suffices that none leaves it, which the next evaluation sees
    as F = 1. Returns Δ (NaN when the quadratic has no real root: S is then too large).
    """
    if beta == 1.0:
        return (F - 1.0) / D
    disc = D * D - E * (F - 1.0)
    t = (F - 1.0) / (D + jnp.sqrt(jnp.maximum(disc, 0.0)))
    return jnp.where(disc >= 0, t / beta, jnp.nan)


# Steps taken on every row before the rows still running are gathered into a smaller batch
# (at most 1/_TAIL_FRACTION of the rows) for the remaining steps: the cost of a step is the
# same for a converged row as for a running one, and most rows converge within 4 steps.
_FULL_STEPS = 4
_TAIL_FRACTION = 16


class _Rows(NamedTuple):
    """Per-row state of the threshold search; every field has shape (rows, 1)."""

    theta: jax.Array  # the current θ (the final one once ``done``)
    polish: jax.Array  # the last increment, computed at θ but applied only when writing p
    mass: jax.Array  # F at θ: p is divided by it where no polish is applied (non-integer 1/β)
    best: jax.Array  # the evaluated θ with F closest to 1 (the fallback)
    best_polish: jax.Array
    best_mass: jax.Array  # F at ``best``
    lo: jax.Array  # the bracket: F(lo) ≥ 1 > F(hi)
    hi: jax.Array
    done: jax.Array  # bool
    step_before_last: jax.Array
    last_step: jax.Array


def _threshold_step(sums, beta, rows, eps, exact):
    """One safeguarded Newton–Halley step for every row (see :func:`_entmax_threshold`).

    ``sums(θ)`` returns F, D, E of :func:`_threshold_sums` at θ; ``rows`` is a :class:`_Rows`.
    A row stops when F = 1 to within rounding; the increment it would have taken next (the
    exact support step from the left, else Halley's) is kept as its ``polish``, applied
    when p is written: p = [1 + β(z − max z − θ) − β·polish]_+^{1/β} is then accurate to
    rounding without dividing by F (which, with θ ≈ 1 in float32 and a long support, would
    magnify the error of θ by the support size). Shared by the XLA loop and the Pallas kernel.
    """
    F, D, E = sums(rows.theta)
    theta, lo, hi = rows.theta, rows.lo, rows.hi
    above = F >= 1.0
    lo = jnp.where(above, theta, lo)
    hi = jnp.where(above, hi, theta)
    inside = lambda c: (c > lo) & (c < hi)
    newton, halley = _newton_halley_steps(F, D, E, beta)
    halley_ok = (beta <= 1.0) & inside(theta + halley)
    halving = 2 * jnp.abs(newton) <= jnp.abs(rows.step_before_last)
    newton_ok = inside(theta + newton) & ((beta <= 1.0) | halving)
    new = jnp.where(halley_ok, theta + halley, jnp.where(newton_ok, theta + newton, 0.5 * (lo + hi)))
    # The polish may be below the resolution of θ, so it is checked against the closed bracket.
    within = lambda c: (c >= lo) & (c <= hi)
    polish = jnp.where(within(theta + halley), halley, jnp.where(within(theta + newton), newton, 0.0))
    if exact:
        exact_step = _exact_support_step(F, D, E, beta)
        exact_ok = above & inside(theta + exact_step)
        new = jnp.where(exact_ok, theta + exact_step, new)
        polish = jnp.where(above & within(theta + exact_step), exact_step, polish)
    if _integer_exponent(beta) is None:
        # Without the accurate u of _tsallis_base a polish below the resolution of θ would be
        # lost when p is written; p is normalised by F instead (F and p share their rounding).
        polish = jnp.zeros_like(polish)
    polish = jnp.where(jnp.isfinite(F), polish, jnp.nan)  # NaN/+inf in the row: its p is NaN

    better = jnp.abs(F - 1.0) < jnp.abs(rows.best_mass - 1.0)
    # F = 1 up to rounding, including what one unit in the last place of θ changes.
    converged = jnp.abs(F - 1.0) <= 4 * eps + 2 * eps * D * jnp.abs(theta)
    converged = converged | (new == theta)  # nothing left to gain at the resolution of θ
    stop = rows.done | converged | ~jnp.isfinite(F)
    return _Rows(
        theta=jnp.where(stop, theta, new),
        polish=jnp.where(rows.done, rows.polish, polish),
        mass=jnp.where(rows.done, rows.mass, F),
        best=jnp.where(better, theta, rows.best),
        best_polish=jnp.where(better, polish, rows.best_polish),
        best_mass=jnp.where(better, F, rows.best_mass),
        lo=lo,
        hi=hi,
        done=stop,
        step_before_last=rows.last_step,
        last_step=jnp.where(stop, 0.0, new - theta),
    )


def _initial_rows(beta, d, skip, dtype, exact):
    """Per-row starting state of :func:`_threshold_step` for rows of length d.

    The bracket is θ ∈ [0, (1 − d^{−β})/β] (log d at β = 0), widened by a little rounding
    because uniform rows sit exactly on its upper end. Rows flagged in ``skip`` (all -inf)
    start stopped. θ starts at a fixed fraction of the bracket, chosen by counting the steps
    rows of N(0, σ²) scores need, σ from 0.3 to 10, d = 512: a quarter with the exact support
    steps (α = 2, 1.5: most rows then take 3 evaluations), a third otherwise (3–4).
    """
    log_d = math.log(d)
    if isinstance(beta, float):
        hi = jnp.full(skip.shape, log_d if beta == 0.0 else -math.expm1(-beta * log_d) / beta, dtype)
    else:
        b = jnp.maximum(beta, _BETA_FLOOR)
        hi = jnp.broadcast_to(-jnp.expm1(-b * log_d) / b, skip.shape).astype(dtype)
    eps = float(jnp.finfo(dtype).eps)
    hi = hi * (1.0 + 8 * eps) + 8 * eps
    lo = jnp.zeros_like(hi)
    never = jnp.full_like(hi, jnp.inf)
    start = (0.25 if exact else 0.35) * hi
    one = jnp.ones_like(hi)
    return _Rows(start, lo, one, lo, lo, never, lo, hi, skip, never, never)


def _iterate_threshold(z, row_max, beta, rows, first_step, max_steps, eps, exact):
    """Steps until every row has stopped or the step count reaches ``max_steps``."""

    sums = lambda theta: _threshold_sums(z, row_max, theta, beta)

    def body(carry):
        i, rows = carry
        return i + 1, _threshold_step(sums, beta, rows, eps, exact)

    def running(carry):
        i, rows = carry
        return (i < max_steps) & ~jnp.all(rows.done)

    return jax.lax.while_loop(running, body, (first_step, rows))


def _entmax_threshold(z, beta, n_iter):
    """The rescaled threshold θ of α-entmax along the last axis, by safeguarded Newton–Halley.

    f(θ) = Σ_i [1 + β(z_i − max z − θ)]_+^{1/β} − 1 is non-increasing in θ with its root in
    [0, (1 − d^{−β})/β] (the bisection bracket). Starting inside the bracket, each
    step evaluates F, D, E at θ (one pass), stops the row if F = 1 to within rounding, shrinks
    the bracket with the sign of F − 1, and moves to the first of these that stays inside:
    Halley's point (α ≤ 2), Newton's point (for α > 2 only while the steps at least halve,
    as in Numerical Recipes' rtsafe), the bracket midpoint. For a fixed α of 2 or 1.5 a step
    from the left goes instead to the exact threshold of the current support
    (:func:`_exact_support_step`); once that support is right, the next evaluation finds
    F = 1 and the threshold is exact.

    After ``_FULL_STEPS`` steps the rows still running (usually a few per cent) continue in a
    gathered batch of at most 1/``_TAIL_FRACTION`` of the rows, and any left after that on the
    full batch. A row still running after ``n_iter`` steps falls back to its evaluated point
    with F closest to 1 (the bisection fallback alone gains one bit per step).

    Returns θ, its final increment ``polish`` (see :func:`_threshold_step`; NaN for a row
    holding NaN or +inf, or with a NaN α), the mass F at θ, whether each row converged, the
    row max (0 where not finite) and the number of steps taken by the slowest row.
    """
    row_max, all_masked = _row_stats(z)
    batch, d = z.shape[:-1], z.shape[-1]
    n_rows = math.prod(batch)
    if isinstance(beta, float):
        beta_rows = beta
    else:
        beta_rows = jnp.broadcast_to(beta, batch + (1,)).reshape(n_rows, 1)
    eps = float(jnp.finfo(z.dtype).eps)
    exact = isinstance(beta, float) and beta in (0.5, 1.0)
    flat = lambda a: a.reshape(n_rows, a.shape[-1])
    z_rows, max_rows = flat(z), flat(row_max)
    rows = _initial_rows(beta_rows, d, flat(all_masked), z.dtype, exact)
    first = min(n_iter, _FULL_STEPS)
    steps, rows = _iterate_threshold(z_rows, max_rows, beta_rows, rows, 0, first, eps, exact)

    tail = n_rows // _TAIL_FRACTION
    if tail >= 1 and n_iter > _FULL_STEPS:
        running = ~rows.done[:, 0]
        (index,) = jnp.nonzero(running, size=tail, fill_value=0)
        taken = jnp.arange(tail) < jnp.sum(running)
        gather = lambda a: a[index]
        sub = jax.tree.map(gather, rows)
        sub = sub._replace(done=sub.done | ~taken[:, None])
        sub_beta = beta_rows if isinstance(beta_rows, float) else gather(beta_rows)
        tail_steps, sub = _iterate_threshold(
            gather(z_rows), gather(max_rows), sub_beta, sub, steps, n_iter, eps, exact
        )
        target = jnp.where(taken, index, n_rows)  # out of range: dropped
        rows = jax.tree.map(lambda a, s: a.at[target].set(s, mode="drop"), rows, sub)
    else:
        tail_steps = steps
    # Whatever is still running (none, usually: then this loop takes no step) goes on in full.
    last_steps, rows = _iterate_threshold(z_rows, max_rows, beta_rows, rows, steps, n_iter, eps, exact)
    steps = jnp.maximum(tail_steps, last_steps)

    unflat = lambda a: a.reshape(batch + (1,))
    theta = unflat(jnp.where(rows.done, rows.theta, rows.best))
    polish = unflat(jnp.where(rows.done, rows.polish, rows.best_polish))
    mass = unflat(jnp.where(rows.done, rows.mass, rows.best_mass))
    return theta, polish, mass, unflat(rows.done), row_max, steps


def _bisect_forward(z, beta, n_iter):
    """α-entmax along the last axis: the threshold by safeguarded Newton–Halley, then p.

    With τ = βθ − 1 + β·max(z), the closed form becomes p_i = [1 + β(z_i − max z − θ)]_+^{1/β},
    which tends to exp(z_i − max z − θ) as β → 0: one formula for all α ≥ 1. θ comes from
    :func:`_entmax_threshold` (≤ ``n_iter`` steps inside the bisection bracket
    θ ∈ [0, (1 − d^{−β})/β]), with a last increment applied as p is written, so that Σ p = 1
    to rounding without a normalising pass. Cost: the row max, a few passes over z
    (see :func:`_threshold_sums`) and one to write p.
    On a GPU the same iteration runs in one fused Pallas kernel when it applies
    (:mod:`entmax_lib.pallas_kernel`: one read of z, one write of p).
    """
    # The fused kernel is opt-in until it has been measured and checked on a real GPU
    # (so far it is tested only in Pallas interpret mode on CPU): ENTMAX_LIB_PALLAS=1.
    if jax.default_backend() == "gpu" and os.environ.get("ENTMAX_LIB_PALLAS") == "1":
        from entmax_lib import pallas_kernel  # imported here: CPU users never load Pallas

        fused = pallas_kernel.maybe_entmax_forward(z, beta, n_iter)
        if fused is not None:
            return fused
    theta, polish, mass, converged, row_max, _ = _entmax_threshold(z, beta, n_iter)
    # No masking pass: an all -inf row gets p = 0, and a NaN polish (a row holding NaN or
    # +inf, or a NaN α) makes its whole row NaN.
    p = _entmax_output(z - row_max, theta, polish, beta)
    if _integer_exponent(beta) is not None:
        # Rows stopped by n_iter before converging are normalised (a pass paid only if any is).
        return jax.lax.cond(
            jnp.all(converged),
            lambda p: p,
            lambda p: jnp.where(converged, p, p / jnp.sum(p, axis=-1, keepdims=True)),
            p,
        )
    return p * (1.0 / mass)


def _sparsemax_forward(z):
    """Exact sparsemax without a sort: the α = 2 threshold search, whose steps from the left
    are Michelot's (the threshold of the current support, τ = (Σ_S z − 1)/|S|)."""
    return _bisect_forward(z, 1.0, _default_n_iter(z.dtype))


def _entmax15_forward(z):
    """Exact 1.5-entmax without a sort: the α = 1.5 threshold search, whose steps from the left
    solve the quadratic of Peters et al. (2019, Algorithm 2) on the current support."""
    return _bisect_forward(z, 0.5, _default_n_iter(z.dtype))


# ----------------------------------------------------------------------------------------
# custom_jvp wrappers (last axis, compute dtype)
# ----------------------------------------------------------------------------------------


def _fixed_alpha_map(forward, alpha):
    f = jax.custom_jvp(forward)

    @f.defjvp
    def _jvp(primals, tangents):
        (z,), (dz,) = primals, tangents
        p = f(z)
        return p, _z_tangent(p, alpha, dz)

    return f


_sparsemax_last = _fixed_alpha_map(_sparsemax_forward, 2.0)
_entmax15_last = _fixed_alpha_map(_entmax15_forward, 1.5)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def _entmax_fixed_last(z, alpha, n_iter):
    return _bisect_forward(z, alpha - 1.0, n_iter)


@_entmax_fixed_last.defjvp
def _entmax_fixed_jvp(alpha, n_iter, primals, tangents):
    (z,), (dz,) = primals, tangents
    p = _entmax_fixed_last(z, alpha, n_iter)
    return p, _z_tangent(p, alpha, dz)


@functools.partial(jax.custom_jvp, nondiff_argnums=(2,))
def _entmax_learned_last(z, alpha, n_iter):
    return _bisect_forward(z, alpha - 1.0, n_iter)


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


def _softmax_last(z):
    z, all_masked, invalid = _shift_and_mask(z)
    e = jnp.exp(z)
    return _apply_row_rules(e / jnp.sum(e, axis=-1, keepdims=True), all_masked, invalid)


_softmax_masked_last = _fixed_alpha_map(_softmax_last, 1.0)


# ----------------------------------------------------------------------------------------
# Public API
# ----------------------------------------------------------------------------------------


def softmax(x, axis=-1):
    """Softmax (α = 1) with the same mask and dtype conventions as the sparse maps.

    Identical to ``jax.nn.softmax`` except that a slice which is entirely ``-inf``
    returns zeros (not NaN), with zero gradient.

    Args:
      x: floating-point array of scores.
      axis: the axis to normalise over.

    Returns:
      An array of the shape and dtype of ``x``, non-negative, summing to one along ``axis``.
    """
    z, dtype, axis = _prepare(x, axis)
    return _finish(_softmax_masked_last(z), dtype, axis)


def sparsemax(x, axis=-1):
    """Sparsemax (Martins & Astudillo, 2016): the Euclidean projection onto the simplex.

        sparsemax(z) = argmin_{p ∈ Δ} ‖p − z‖²  =  [z − τ]_+ ,

    with τ exact but found without sorting: the threshold search of :func:`entmax_bisect`
    at α = 2, whose steps from the left are Michelot's τ = (Σ_{i∈S} z_i − 1)/|S| on the
    current support S; it stops when the next evaluation confirms S (typically after 3–5
    passes over the slice, O(d) each). The result equals the sort-based algorithm's —
    for z sorted decreasingly with cumulative sums c_k, k* = max{k : 1 + k z_(k) > c_k},
    τ = (c_{k*} − 1)/k* — to rounding. This is α-entmax at α = 2.

    The Jacobian is ``diag(s) − s sᵀ/|S|`` with s the support indicator.

    Args:
      x: floating-point array of scores (float16, bfloat16, float32 or float64).
      axis: the axis to normalise over.

    Returns:
      Array of the shape and dtype of ``x``: non-negative, sums to one along ``axis``,
      with exact zeros outside the support. ``-inf`` entries get 0; an all ``-inf``
      slice returns zeros; a slice with NaN returns NaN.

    Raises:
      TypeError: ``x`` is not a floating-point array.
      ValueError: ``axis`` is out of range or the axis is empty.
    """
    z, dtype, axis = _prepare(x, axis)
    return _finish(_sparsemax_last(z), dtype, axis)


def entmax15(x, axis=-1):
    """1.5-entmax (Peters, Niculae & Martins, 2019), exact, without a sort.

        entmax15(z) = [z/2 − τ]_+² ,   Σ p = 1.

    τ is exact but found without sorting: the threshold search of :func:`entmax_bisect` at
    α = 1.5, whose steps from the left solve Σ_{i∈S} (z_i/2 − τ)² = 1 on the current
    support S (the quadratic of Peters et al.'s Algorithm 2, which tries it on every prefix
    of the sorted row instead); typically 3–5 passes over the slice, O(d) each.

    The Jacobian is ``diag(s) − s sᵀ/Σs`` with s = sqrt(p).

    Args:
      x: floating-point array of scores (float16, bfloat16, float32 or float64).
      axis: the axis to normalise over.

    Returns:
      Array of the shape and dtype of ``x``; same mask/NaN conventions as :func:`sparsemax`.

    Raises:
      TypeError: ``x`` is not a floating-point array.
      ValueError: ``axis`` is out of range or the axis is empty.
    """
    z, dtype, axis = _prepare(x, axis)
    return _finish(_entmax15_last(z), dtype, axis)


def _default_n_iter(compute_dtype):
    # A cap: each halving gains one bit of τ, so even the bisection fallback alone reaches
    # float32 resolution in 25 steps and float64 in 54; Newton–Halley stops far earlier.
    return 54 if compute_dtype == jnp.float64 else 25


def _check_alpha_value(alpha_np):
    if not np.all(np.isfinite(alpha_np)):
        raise ValueError(f"alpha must be finite, got {alpha_np!r}.")
    if np.any(alpha_np < 1):
        raise ValueError(
            f"alpha must be >= 1 (α = 1 is softmax, α = 2 sparsemax), got min {alpha_np.min()!r}."
        )


def _broadcast_alpha(alpha, x_shape, axis, compute):
    """Return α with shape x.shape[:-1] + (1,) in moved-axis layout (x's axis moved last)."""
    alpha = jnp.asarray(alpha)
    if not jnp.issubdtype(alpha.dtype, jnp.floating) and not jnp.issubdtype(alpha.dtype, jnp.integer):
        raise TypeError(f"alpha must be a real number or array, got dtype {alpha.dtype}.")
    ndim = len(x_shape)
    if alpha.ndim > ndim:
        raise ValueError(f"alpha has shape {alpha.shape}, more dimensions than x {tuple(x_shape)}.")
    padded = (1,) * (ndim - alpha.ndim) + tuple(alpha.shape)
    if padded[axis] != 1:
        raise ValueError(
            f"alpha with shape {alpha.shape} must have size 1 along axis {axis} of x "
            f"(shape {tuple(x_shape)}): one α per slice, not per entry."
        )
    try:
        np.broadcast_shapes(padded, tuple(x_shape))
    except ValueError:
        raise ValueError(
            f"alpha with shape {alpha.shape} does not broadcast against x with shape {tuple(x_shape)}."
        ) from None
    alpha = alpha.reshape(padded).astype(compute)
    alpha = jnp.moveaxis(alpha, axis, -1)
    moved = tuple(np.delete(np.array(x_shape), axis)) + (1,)
    return jnp.broadcast_to(alpha, moved)


def entmax_bisect(x, alpha=1.5, axis=-1, n_iter=None):
    """α-entmax for any α ≥ 1 (Peters et al. 2019; Correia et al. 2019), by a safeguarded root search.

        entmax_α(z) = argmax_{p ∈ Δ} pᵀz + H_α(p),   p_i = [(α−1) z_i − τ]_+^{1/(α−1)}.

    τ is found inside the bisection bracket [max(x) − 1, max(x) − d^{1−α}] (x = (α−1) z,
    d = size of ``axis``) by Halley/Newton steps that are kept inside the bracket (else it
    is halved), typically 3–5 passes over each slice instead of 25 halvings; at α = 2 and
    1.5 (Python numbers) the threshold of the current support is solved in closed form, as
    in the sort-based algorithms, which makes the result exact. The last increment of the
    threshold is applied as p is written (for non-integer 1/(α−1), p is divided by its
    mass instead), so no pass is spent normalising.
    Internally the threshold is rescaled (θ = (τ + 1)/(α − 1) up to the max shift) so
    that the same formula reduces to ``exp`` at α = 1: ``alpha=1`` returns softmax, also
    for an α traced inside ``jit``. On a GPU, with ``ENTMAX_LIB_PALLAS=1`` set, rows of at
    most 4096 entries go through one fused Pallas kernel (``entmax_lib.pallas_kernel``).

    Differentiable with respect to ``x`` and ``alpha`` through closed-form rules
    (``jax.custom_jvp``; works with ``grad``, ``jacfwd``, ``jacrev``, ``vmap``, ``jit``):
    ∂p/∂z = diag(s) − s sᵀ/Σs with s = p^{2−α} on the support, and ∂p/∂α from
    Proposition 1 of Correia et al. (2019), including its α = 1 limit. When ``alpha``
    is broadcast against ``x`` its cotangent is summed back to ``alpha``'s shape.

    Args:
      x: floating-point array of scores (float16, bfloat16, float32 or float64).
      alpha: a Python number (fixed α; integer exponents 1/(α−1) compile to multiplies)
        or an array broadcastable against ``x`` with size 1 along ``axis`` (one α per
        head, per row, ...). Concrete values must be finite and ≥ 1 (``ValueError``
        otherwise). A *traced* α cannot be checked: values below 1 are clamped to 1
        (softmax, zero α-gradient) and NaN gives NaN; keep it ≥ 1, e.g. with
        α = 1 + sigmoid(a) as the Adaptively Sparse Transformer does.
      axis: the axis to normalise over.
      n_iter: the most steps of the root search per slice (a Halley/Newton step, or a
        halving of the bracket where those would leave it); default 25 for float32
        computation (float16/bfloat16/float32 inputs) and 54 for float64, enough for
        halvings alone to reach full precision.

    Returns:
      Array of the shape and dtype of ``x``: non-negative, sums to one along ``axis``.
      ``-inf`` entries get exactly 0; an all ``-inf`` slice returns zeros with zero
      gradients; a slice containing NaN or +inf returns NaN.

    Raises:
      TypeError: non-float ``x`` or non-numeric ``alpha``.
      ValueError: bad ``axis``, empty axis, α < 1 or non-finite, α of the wrong shape,
        ``n_iter`` < 1.
    """
    z, dtype, axis_ = _prepare(x, axis)
    if n_iter is None:
        n_iter = _default_n_iter(z.dtype)
    try:
        n_iter = operator.index(n_iter)
    except TypeError:
        raise TypeError(f"n_iter must be an integer, got {n_iter!r}.") from None
    if n_iter < 1:
        raise ValueError(f"n_iter must be >= 1, got {n_iter}.")

    if isinstance(alpha, (int, float, np.integer, np.floating)) and not isinstance(alpha, bool):
        alpha = float(alpha)
        _check_alpha_value(np.asarray(alpha))
        if alpha == 1.0:
            return _finish(_softmax_masked_last(z), dtype, axis_)
        return _finish(_entmax_fixed_last(z, alpha, n_iter), dtype, axis_)

    try:
        alpha_np = np.asarray(alpha)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        alpha_np = None  # traced: checked by the caller (see Args)
    except (TypeError, ValueError):
        raise TypeError(f"alpha must be a real number or an array of them, got {alpha!r}.") from None
    if alpha_np is not None:
        numeric = np.issubdtype(alpha_np.dtype, np.floating) or np.issubdtype(alpha_np.dtype, np.integer)
        if not numeric or alpha_np.dtype == np.bool_:
            raise TypeError(f"alpha must be a real number or an array of them, got {alpha!r}.")
        _check_alpha_value(alpha_np.astype(np.float64))
    x_shape = jnp.shape(x)
    a = _broadcast_alpha(alpha, x_shape, axis_, z.dtype)
    # Not jnp.maximum: at a tie it splits the derivative in half, and α = 1 is a tie.
    a = jnp.where(a < 1.0, jnp.ones_like(a), a)
    return _finish(_entmax_learned_last(z, a, n_iter), dtype, axis_)


def tsallis_entmax(scores, q, axis=-1, num_iters=25):
    """Tsallis entmax with entropic index q: the same map as :func:`entmax_bisect`.

    ``tsallis_entmax(scores, q)`` = entmax_q(scores); q = 1 is softmax, q = 2 sparsemax.
    The spelling of the "sparse self-attention" toy, so that its snippet runs as-is with
    ``entmax_lib`` in place of its library. See :func:`entmax_bisect` for the math,
    derivatives and input rules.

    Args:
      scores: floating-point array of scores.
      q: entropic index, a Python number or an array with size 1 along ``axis``.
      axis: the axis to normalise over.
      num_iters: the most steps of the threshold search (``n_iter`` of :func:`entmax_bisect`).
    """
    try:
        return entmax_bisect(scores, alpha=q, axis=axis, n_iter=num_iters)
    except (TypeError, ValueError) as err:
        # Name this function's arguments, not entmax_bisect's, in the message.
        message = str(err)
        for old, new in ((r"\balpha\b", "q"), (r"\bn_iter\b", "num_iters"), (r"\bx\b", "scores")):
            message = re.sub(old, new, message)
        raise type(err)(message) from None
