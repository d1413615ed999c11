"""The threshold search behind every sparse map of :mod:`entmax_lib.entmax`.

α-entmax is ``p_i = [(α−1) z_i − τ]_+^{1/(α−1)}`` with the unique τ for which Σ p = 1.
This module finds that threshold along the last axis of an array, one row at a time, and
writes p. Writing β = α − 1 and θ for the threshold rescaled so that

    p_i = [1 + β(z_i − max z − θ)]_+^{1/β}        (→ exp(z_i − max z − θ) as β → 0),

the mass F(θ) = Σ_i p_i is non-increasing in θ, with its root in the bracket
θ ∈ [0, (1 − d^{−β})/β] for rows of length d. Each step evaluates F and two more sums in
one pass over the row (:func:`threshold_sums`) and moves θ by a safeguarded Newton–Halley
step on G = (F^β − 1)/β (:func:`newton_halley_steps`), or, for α = 2 and α = 1.5, by the
exact threshold of the current support (:func:`exact_support_step`: Michelot's step for
sparsemax, the quadratic of Peters et al. 2019 for 1.5-entmax). A step that would leave the
bracket halves it instead, so the search never does worse than bisection. Rows need 2–5
passes where bisection needs 25 (float32); for other α a row within √eps of F = 1 takes its
last Halley step without a pass to confirm it, and p is normalised by its own sum.

The documented surface, used by :mod:`entmax_lib.entmax`, :mod:`entmax_lib.pallas_kernel`
and the book's chapter on speed:

* :func:`entmax_forward` — p for a whole array (the maps' forward pass);
* :func:`find_threshold` — θ and the search's state for a whole array;
* :func:`search_step`, :func:`initial_state`, :class:`SearchState` — one step for a block
  of rows, given a function that returns the three sums (the XLA loop and the fused kernel
  share it);
* :func:`threshold_sums`, :func:`newton_halley_steps`, :func:`exact_support_step`,
  :func:`entmax_from_threshold`, :func:`integer_exponent`, :func:`tsallis_base`,
  :func:`floor_beta`, :func:`has_exact_step`, :data:`BETA_FLOOR`.

Nothing here validates its input or defines a derivative: the public maps in
:mod:`entmax_lib.entmax` do both.

References:
  Peters, Niculae & Martins (2019), Sparse Sequence-to-Sequence Models,
  https://aclanthology.org/P19-1146/ ;
  Michelot (1986), A finite algorithm for finding the projection of a point onto the
  canonical simplex of R^n, https://doi.org/10.1007/BF00938486 ;
  Press et al., Numerical Recipes, §9.4 (``rtsafe``: Newton safeguarded by bisection).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp

__all__ = [
    "BETA_FLOOR",
    "floor_beta",
    "has_exact_step",
    "tsallis_base",
    "FULL_STEPS",
    "SHORT_ROW",
    "SearchState",
    "entmax_forward",
    "entmax_from_threshold",
    "exact_support_step",
    "find_threshold",
    "initial_state",
    "integer_exponent",
    "newton_halley_steps",
    "search_step",
    "threshold_sums",
]


# The smallest β used in place of β = 0 inside the formulas below. It is a power of two, so
# β·y and log1p(β·y) = β·y (exact at this size) and the division by β are all exact: at α = 1
# the same code computes exp(y) bit for bit, without a per-entry branch. 1/β still fits float32.
BETA_FLOOR = 2.0**-100


def floor_beta(beta):
    """β as the formulas use it: a Python float unchanged, a traced β raised to :data:`BETA_FLOOR`."""
    return beta if isinstance(beta, float) else jnp.maximum(beta, BETA_FLOOR)


def has_exact_step(beta):
    """Whether :func:`exact_support_step` applies: a Python-float β of 1 or 1/2 (α = 2, 1.5)."""
    return isinstance(beta, float) and beta in (0.5, 1.0)


def tsallis_base(y, theta, shift, beta):
    """u = 1 + β(y − θ − shift) for y = z − max z (1/β an integer), or x = u − 1 (otherwise).

    With a long support and βθ near 1, u is a small difference of numbers near 1: written
    as 1 + β(y − θ) its absolute error is that of θ (≈ 6e-8 in float32), the same for every
    entry, and a sum of u over |S| entries is off by |S| times that. For integer 1/β (α = 2,
    1.5, 4/3, …: β ≥ 1/8) u is formed instead as β y + c with one c = (1 − βθ) − β shift per
    row, exact in its first subtraction when βθ ≥ 1/2 (Sterbenz) and accurate otherwise, so
    u is as accurate as the scores. For other α (log and exp per entry) x = β(y − θ − shift)
    keeps log1p exact in the small-β limit; there the error of θ is removed instead by
    normalising p by the mass F computed with the same rounding (see :func:`search_step`).

    Returns ``(u, None)`` for a Python-float β with integer 1/β, else ``(None, x)``.
    """
    if integer_exponent(beta) is not None:
        return beta * y + ((1.0 - beta * theta) - beta * shift), None
    return None, floor_beta(beta) * ((y - theta) - shift)


def entmax_from_threshold(y, theta, polish, beta):
    """p = [1 + β(y − θ − polish)]_+^{1/β} for y = z − max z (see :func:`tsallis_base`)."""
    if isinstance(beta, float) and beta == 0.0:
        return jnp.exp((y - theta) - polish)
    u, x = tsallis_base(y, theta, polish, beta)
    if u is not None:
        return jax.lax.integer_pow(jnp.maximum(u, 0.0), integer_exponent(beta))
    return jnp.exp(jnp.log1p(jnp.maximum(x, -1.0)) / floor_beta(beta))


def _row_stats(z):
    """Row max (0 where it is not finite) and the all -inf row flag, in one cheap pass over z.

    Rows holding NaN or +inf are not detected here (a separate isnan pass would cost as much
    as half a softmax on CPU): their mass F is NaN or +inf at the first evaluation, which
    stops them and makes their p NaN. Returns arrays of shape z.shape[:-1] + (1,).
    """
    row_max = jnp.max(z, axis=-1, keepdims=True)
    return jnp.where(jnp.isfinite(row_max), row_max, 0.0), row_max == -jnp.inf


def integer_exponent(beta):
    """1/β when β is a Python float and 1/β a small integer (α = 2, 1.5, 4/3, …), else None."""
    if isinstance(beta, float) and beta > 0 and float(1.0 / beta).is_integer() and 1.0 / beta <= 8:
        return int(round(1.0 / beta))
    return None


def threshold_sums(z, row_max, theta, beta, axis=-1):
    """The three sums over a row that drive the threshold iteration, in one pass over z.

    With u_i = [1 + β(z_i − max z − θ)]_+ (so p_i = u_i^{1/β}):

        F = Σ u^{1/β} (the mass, F(θ*) = 1),   D = Σ u^{1/β−1} = −dF/dθ,   E = Σ u^{1/β−2}

    (d²F/dθ² = (1 − β) E; at α = 1.5, E = |S|, the size of the support). At β = 0, u = 1 and
    u^{1/β} = exp(z − max z − θ). Written with clamps rather than branches so that XLA fuses each
    sum into one loop. For a traced α the three sums are one reduction over a broadcast with
    a new axis of three ((…, 3, d) for rows along the last axis), which on CPU measured faster
    than three reductions of a shared log u.
    Cost per entry and sum: a few multiplies for an integer 1/β ≤ 8, else a log1p and an exp.
    The rows lie along ``axis`` (the last by default; :func:`find_threshold` lays short rows
    along the first), and row_max, θ and β have size 1 there.
    """
    exponent = integer_exponent(beta)
    u, x = tsallis_base(z - row_max, theta, 0.0, beta)
    if exponent is not None:
        # Three separate reductions of one u: on CPU this fuses best (XLA materialises u once
        # and reduces it three times, ~2× faster than the stacked form used for traced α).
        u = jnp.maximum(u, 0.0)
        power = lambda k: jax.lax.integer_pow(u, k) if k >= 1 else jnp.sign(u)  # u^0 on the support
        total = lambda a: jnp.sum(a, axis=axis, keepdims=True)
        return total(power(exponent)), total(power(exponent - 1)), total(power(max(exponent - 2, 0)))
    # The three sums are Σ u^{1/β − r}, r = 0, 1, 2, reduced together over a new axis of 3
    # placed just before the rows' axis.
    axis = axis % z.ndim
    stacked = lambda a: jnp.expand_dims(a, axis)
    if isinstance(beta, float):
        inv = 1.0 / max(beta, BETA_FLOOR)  # a fixed α = 1 (not reached from the public API)
    else:
        inv = stacked(1.0 / floor_beta(beta))
    log_u = stacked(jnp.log1p(jnp.maximum(x, -1.0)))  # −inf off the support
    r = jnp.arange(3, dtype=z.dtype).reshape((3,) + (1,) * (z.ndim - axis))
    # u^{1/β−r} = exp(log u / β − r log u); the clamp keeps −inf − (−inf) out of the exponent.
    sums = jnp.sum(jnp.exp(inv * log_u - r * jnp.maximum(log_u, -80.0)), axis=axis + 1)
    return tuple(jax.lax.slice_in_dim(sums, k, k + 1, axis=axis) for k in range(3))


def newton_halley_steps(F, D, E, beta):
    """Newton and Halley increments of θ for G(θ) = (F^β − 1)/β (= log F at β = 0).

    G is F made nearly linear: exactly linear at β = 0 (G = logsumexp(z) − θ, so one Newton
    step is exact for softmax) and on a one-entry support; convex for α ≤ 2 (F^β is the ℓ_{1/β} norm of
    u, 1/β ≥ 1), so Newton from the left never overshoots. With a = (1 − F^{−β})/β:
    G' = −F^{β−1} D, G'' = (1 − β) F^{β−2} (F E − D²), and

        Newton: Δ = a F / D,      Halley: Δ / (1 − (1 − β) a (F E − D²) / (2 D²)).
    """
    log_f = jnp.log(F)
    b = floor_beta(beta)
    a = log_f if isinstance(beta, float) and beta == 0.0 else -jnp.expm1(-b * log_f) / b
    newton = a * F / D
    denom = 1.0 - (1.0 - beta) * a * (F * E - D * D) / (2.0 * D * D)
    usable = denom > 0.25  # far from the root Halley's correction can blow up: keep Newton
    halley = jnp.where(usable, newton / jnp.where(usable, denom, 1.0), newton)
    return newton, halley


def exact_support_step(F, D, E, beta):
    """θ increment that solves Σ_{i∈S} u_i(θ + Δ)^{1/β} = 1 on the current support S (α = 2, 1.5).

    u_i shifts by t = βΔ. α = 2 (1/β = 1): Σ_S (u_i − t) = 1, t = (F − 1)/|S| with |S| = D —
    the threshold of Michelot's algorithm. α = 1.5 (1/β = 2): Σ_S (u_i − t)² = 1 with
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
# (at most 1/TAIL_FRACTION of the rows) for the remaining steps: the cost of a step is the
# same for a converged row as for a running one. After 3 steps (rows of N(0, σ²) scores,
# σ from 0.3 to 10, d = 16 to 512) 0.2–22 % of the learned-α rows and 17–47 % of the α = 1.5
# rows still run: counting passes, 3 full steps and a quarter of the rows gathered beat 4 full
# steps and a sixteenth.
FULL_STEPS = 3
TAIL_FRACTION = 4

# On a CPU, rows shorter than this are searched laid out one per column (see
# :func:`find_threshold`). At Chapter 5's attention shapes (16–20 keys) the learned-α forward
# and backward then took 5.9 times softmax's time instead of 6.5, and at 8 keys 7.0 instead of
# 9.8 (interleaved in one process); from 32 entries, which fill whole vector registers, the
# row-by-row pass is the faster.
SHORT_ROW = 32


class SearchState(NamedTuple):
    """Per-row state of the threshold search; every field has shape (rows, 1), or (1, rows) where
    :func:`find_threshold` lays short rows out one per column."""

    theta: jax.Array  # the current θ (the final one once ``done``)
    polish: jax.Array  # the last increment, computed at θ but applied only when writing p
    best: jax.Array  # the evaluated θ with F closest to 1 (the fallback)
    best_polish: jax.Array
    best_mass: jax.Array  # F at ``best``
    lo: jax.Array  # the bracket: F(lo) ≥ 1 > F(hi)
    hi: jax.Array
    done: jax.Array  # bool
    step_before_last: jax.Array
    last_step: jax.Array


def search_step(sums, beta, rows, eps, exact):
    """One safeguarded Newton–Halley step for every row (see :func:`find_threshold`).

    ``sums(θ)`` returns F, D, E of :func:`threshold_sums` at θ; ``rows`` is a :class:`SearchState`.
    For an integer 1/β (α = 2, 1.5, 4/3, …) a row stops when F = 1 to within rounding; the
    increment it would have taken next (the exact support step from the left, else Halley's)
    is kept as its ``polish``, applied when p is written: p = [1 + β(z − max z − θ) −
    β·polish]_+^{1/β} is then accurate to rounding without dividing by F (which, with θ ≈ 1 in
    float32 and a long support, would magnify the error of θ by the support size). For other
    α (a learned α among them) a row with |F − 1| ≤ √eps takes its Halley step into θ and stops
    without evaluating F there: from that close Halley's error is of order |F − 1|³ (Newton's,
    where Halley's correction is unusable, |F − 1|²), below rounding, and p is then divided by
    its own sum when written. This saves the pass that would only confirm convergence.
    Shared by the XLA loop and the Pallas kernel.
    """
    F, D, E = sums(rows.theta)
    theta, lo, hi = rows.theta, rows.lo, rows.hi
    above = F >= 1.0
    lo = jnp.where(above, theta, lo)
    hi = jnp.where(above, hi, theta)
    inside = lambda c: (c > lo) & (c < hi)
    newton, halley = newton_halley_steps(F, D, E, beta)
    halley_ok = (beta <= 1.0) & inside(theta + halley)
    halving = 2 * jnp.abs(newton) <= jnp.abs(rows.step_before_last)
    newton_ok = inside(theta + newton) & ((beta <= 1.0) | halving)
    new = jnp.where(halley_ok, theta + halley, jnp.where(newton_ok, theta + newton, 0.5 * (lo + hi)))
    # The polish may be below the resolution of θ, so it is checked against the closed bracket.
    within = lambda c: (c >= lo) & (c <= hi)
    polish = jnp.where(within(theta + halley), halley, jnp.where(within(theta + newton), newton, 0.0))
    if exact:
        exact_step = exact_support_step(F, D, E, beta)
        exact_ok = above & inside(theta + exact_step)
        new = jnp.where(exact_ok, theta + exact_step, new)
        polish = jnp.where(above & within(theta + exact_step), exact_step, polish)
    # F = 1 up to rounding, including what one unit in the last place of θ changes.
    converged = jnp.abs(F - 1.0) <= 4 * eps + 2 * eps * D * jnp.abs(theta)
    converged = converged | (new == theta)  # nothing left to gain at the resolution of θ
    final = theta
    if integer_exponent(beta) is None:
        # Without the accurate u of tsallis_base a polish below the resolution of θ would be
        # lost when p is written, so the last step is taken into θ instead (and p normalised by
        # its own sum): within √eps of F = 1 it leaves an error below rounding, and the row
        # stops without the pass that would only confirm it.
        last = (beta <= 1.0) & within(theta + halley) & (jnp.abs(F - 1.0) <= math.sqrt(eps))
        final = jnp.where(last, theta + halley, theta)
        converged = converged | last
        polish = jnp.zeros_like(polish)
    polish = jnp.where(jnp.isfinite(F), polish, jnp.nan)  # NaN/+inf in the row: its p is NaN

    better = jnp.abs(F - 1.0) < jnp.abs(rows.best_mass - 1.0)
    stop = rows.done | converged | ~jnp.isfinite(F)
    return SearchState(
        theta=jnp.where(rows.done, theta, jnp.where(stop, final, new)),  # a stopped row keeps its θ
        polish=jnp.where(rows.done, rows.polish, polish),
        best=jnp.where(better, theta, rows.best),
        best_polish=jnp.where(better, polish, rows.best_polish),
        best_mass=jnp.where(better, F, rows.best_mass),
        lo=lo,
        hi=hi,
        done=stop,
        step_before_last=rows.last_step,
        last_step=jnp.where(stop, 0.0, new - theta),
    )


def initial_state(beta, d, skip, dtype, exact):
    """Per-row starting state of :func:`search_step` for rows of length d.

    The bracket is θ ∈ [0, (1 − d^{−β})/β] (log d at β = 0), widened by a little rounding at
    both ends: uniform rows sit exactly on its upper end, and rows whose support is one
    entry on its lower end (θ = 0, reached by one exact Newton step). Rows flagged in ``skip`` (all -inf)
    start stopped. θ starts at a fixed fraction of the bracket, chosen by counting the steps
    rows of N(0, σ²) scores need, σ from 0.3 to 10, d = 512: a quarter with the exact support
    steps (α = 2, 1.5: most rows then take 3 evaluations), a third otherwise (2–4).
    """
    log_d = math.log(d)
    if isinstance(beta, float):
        hi = jnp.full(skip.shape, log_d if beta == 0.0 else -math.expm1(-beta * log_d) / beta, dtype)
    else:
        b = floor_beta(beta)
        hi = jnp.broadcast_to(-jnp.expm1(-b * log_d) / b, skip.shape).astype(dtype)
    eps = float(jnp.finfo(dtype).eps)
    hi = hi * (1.0 + 8 * eps) + 8 * eps
    # F(0) ≥ 1 (the largest entry alone has mass 1), so 0 belongs in the bracket; its lower end
    # sits just below it so that a step landing on θ = 0 (the root of a one-entry support, where
    # G = −θ and Newton is exact) is inside and not replaced by a halving.
    lo = -8 * eps * hi
    zero = jnp.zeros_like(hi)
    never = jnp.full_like(hi, jnp.inf)
    start = (0.25 if exact else 0.35) * hi
    return SearchState(start, zero, zero, zero, never, lo, hi, skip, never, never)


def _iterate(z, row_max, beta, rows, first_step, max_steps, eps, exact, axis):
    """Steps until every row has stopped or the step count reaches ``max_steps``."""

    sums = lambda theta: threshold_sums(z, row_max, theta, beta, axis)

    def body(carry):
        i, rows = carry
        return i + 1, search_step(sums, beta, rows, eps, exact)

    def running(carry):
        i, rows = carry
        return (i < max_steps) & ~jnp.all(rows.done)

    return jax.lax.while_loop(running, body, (first_step, rows))


def _full_steps(z, row_max, beta, rows, n_steps, eps, exact, axis):
    """``n_steps`` steps on every row, written out rather than looped, and the number of them
    that some row still needed (a stopped row keeps its state through the others).

    Written out, XLA compiles the steps as one program: on a CPU the learned-α forward and
    backward at Chapter 5's attention shapes then took about a tenth less time than with a loop
    that could stop early, which, with thousands of rows, it seldom does before the third step.
    """
    sums = lambda theta: threshold_sums(z, row_max, theta, beta, axis)
    steps = jnp.zeros((), jnp.int32)
    for _ in range(n_steps):
        steps = steps + jnp.any(~rows.done).astype(jnp.int32)
        rows = search_step(sums, beta, rows, eps, exact)
    return steps, rows


def find_threshold(z, beta, n_iter):
    """The rescaled threshold θ of α-entmax along the last axis, by safeguarded Newton–Halley.

    f(θ) = Σ_i [1 + β(z_i − max z − θ)]_+^{1/β} − 1 is non-increasing in θ with its root in
    [0, (1 − d^{−β})/β] (the bisection bracket). Starting inside the bracket, each
    step evaluates F, D, E at θ (one pass), stops the row if F = 1 to within rounding, shrinks
    the bracket with the sign of F − 1, and moves to the first of these that stays inside:
    Halley's point (α ≤ 2), Newton's point (for α > 2 only while the steps at least halve,
    as in Numerical Recipes' rtsafe), the bracket midpoint. For a fixed α of 2 or 1.5 a step
    from the left goes instead to the exact threshold of the current support
    (:func:`exact_support_step`); once that support is right, the next evaluation finds
    F = 1 and the threshold is exact.

    For other α a row within √eps of F = 1 takes its last Halley step and stops there
    (:func:`search_step`). After ``FULL_STEPS`` steps the rows still running continue in a
    gathered batch of at most 1/``TAIL_FRACTION`` of the rows, and any left after that on the
    full batch. A row still running after ``n_iter`` steps falls back to its evaluated point
    with F closest to 1 (the bisection fallback alone gains one bit per step). On a CPU, rows
    shorter than ``SHORT_ROW`` (attention over a few dozen keys) are searched laid out one per
    column, so that a pass reduces across whole vector registers of rows.

    Returns θ, its final increment ``polish`` (see :func:`search_step`; NaN for a row
    holding NaN or +inf, or with a NaN α), whether each row converged, the row max (0 where
    not finite) and the number of steps taken by the slowest row.
    """
    row_max, all_masked = _row_stats(z)
    batch, d = z.shape[:-1], z.shape[-1]
    n_rows = math.prod(batch)
    # On a CPU short rows are laid along the first axis (one column per row), so that each
    # pass runs across rows in full vector registers instead of over a few entries each. (On a
    # GPU, where a pass is bound by memory traffic, the copy would cost more than it saves.)
    axis = 0 if d < SHORT_ROW and jax.default_backend() == "cpu" else 1
    lay = lambda a: jnp.moveaxis(a, 1, axis)
    flat = lambda a: lay(a.reshape(n_rows, a.shape[-1]))
    beta_rows = beta if isinstance(beta, float) else flat(jnp.broadcast_to(beta, batch + (1,)))
    eps = float(jnp.finfo(z.dtype).eps)
    exact = has_exact_step(beta)
    z_rows, max_rows = flat(z), flat(row_max)
    rows = initial_state(beta_rows, d, flat(all_masked), z.dtype, exact)
    steps, rows = _full_steps(z_rows, max_rows, beta_rows, rows, min(n_iter, FULL_STEPS), eps, exact, axis)

    tail = n_rows // TAIL_FRACTION
    if tail >= 1 and n_iter > FULL_STEPS:
        running = ~rows.done.reshape(n_rows)
        (index,) = jnp.nonzero(running, size=tail, fill_value=0)
        taken = jnp.arange(tail) < jnp.sum(running)
        gather = lambda a: jnp.take(a, index, axis=1 - axis)
        sub = jax.tree.map(gather, rows)
        sub = sub._replace(done=sub.done | ~lay(taken[:, None]))
        sub_beta = beta_rows if isinstance(beta_rows, float) else gather(beta_rows)
        tail_steps, sub = _iterate(
            gather(z_rows), gather(max_rows), sub_beta, sub, steps, n_iter, eps, exact, axis
        )
        target = jnp.where(taken, index, n_rows)  # out of range: dropped
        at = (lambda a: a.at[:, target]) if axis == 0 else (lambda a: a.at[target])
        rows = jax.tree.map(lambda a, s: at(a).set(s, mode="drop"), rows, sub)
    else:
        tail_steps = steps
    # Whatever is still running (none, usually: then this loop takes no step) goes on in full.
    last_steps, rows = _iterate(z_rows, max_rows, beta_rows, rows, steps, n_iter, eps, exact, axis)
    steps = jnp.maximum(tail_steps, last_steps)

    unflat = lambda a: a.reshape(batch + (1,))
    theta = unflat(jnp.where(rows.done, rows.theta, rows.best))
    polish = unflat(jnp.where(rows.done, rows.polish, rows.best_polish))
    return theta, polish, unflat(rows.done), row_max, steps


def entmax_forward(z, beta, n_iter):
    """α-entmax along the last axis: the threshold by safeguarded Newton–Halley, then p.

    With τ = βθ − 1 + β·max(z), the closed form becomes p_i = [1 + β(z_i − max z − θ)]_+^{1/β},
    which tends to exp(z_i − max z − θ) as β → 0: one formula for all α ≥ 1. θ comes from
    :func:`find_threshold` (≤ ``n_iter`` steps inside the bisection bracket
    θ ∈ [0, (1 − d^{−β})/β]). For an integer 1/β a last increment is applied as p is written,
    so that Σ p = 1 to rounding without a normalising pass; for other α p is divided by its
    own sum as it is written. Cost: the row max, a few passes over z
    (see :func:`threshold_sums`) and one to write p.
    (:mod:`entmax_lib.pallas_kernel` runs the same iteration in one fused GPU kernel.)

    Args:
      z: float32 or float64 scores, normalised along the last axis (no validation here).
      beta: α − 1 ≥ 0, a Python float or an array of shape ``z.shape[:-1] + (1,)``.
      n_iter: the most search steps per row.

    Returns:
      p with the shape and dtype of ``z``.

    Example:
      >>> import jax.numpy as jnp
      >>> from entmax_lib import threshold
      >>> z = jnp.array([[0.0, 1.0, 1.5]], jnp.float32)
      >>> threshold.entmax_forward(z, 1.0, 25).tolist()  # β = 1: sparsemax
      [[0.0, 0.25, 0.75]]
    """
    theta, polish, converged, row_max, _ = find_threshold(z, beta, n_iter)
    # No masking pass: an all -inf row gets p = 0, and a NaN polish (a row holding NaN or
    # +inf, or a NaN α) makes its whole row NaN.
    p = entmax_from_threshold(z - row_max, theta, polish, beta)
    if integer_exponent(beta) is not None:
        # Rows stopped by n_iter before converging are normalised (a pass paid only if any is).
        return jax.lax.cond(
            jnp.all(converged),
            lambda p: p,
            lambda p: jnp.where(converged, p, p / jnp.sum(p, axis=-1, keepdims=True)),
            p,
        )
    # p and its sum share their rounding: dividing removes the error of θ common to all entries.
    # An all -inf row has sum 0: it keeps p = 0.
    total = jnp.sum(p, axis=-1, keepdims=True)
    return p / jnp.where(total > 0, total, 1.0)
