"""Tests of the threshold search (:mod:`entmax_lib.threshold`): accuracy, exactness, step counts.

The maps' forward is a safeguarded Newton–Halley search on the threshold, with exact support
thresholds at α = 1.5 and 2. References are the float64 NumPy bisection (200 halvings) and the
sort-based sparsemax and 1.5-entmax of ``references.py``.

Rows of many kinds and α share one compilation by carrying one α per row.
"""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from references import np_entmax, np_entmax15_sort, np_sparsemax_sort, well_separated

from entmax_lib import entmax15, entmax_bisect, sparsemax, threshold

ALPHAS = [1.0, 1.01, 1.2, 1.5, 1.7, 2.0]

learned = jax.jit(entmax_bisect, static_argnames=("axis", "n_iter"))
fixed = jax.jit(entmax_bisect, static_argnames=("alpha", "axis", "n_iter"))


def row_kinds(rng, d):
    """Rows that stress the iteration: spread, peaked, flat, tied, masked."""
    rows = {
        "randn": rng.standard_normal(d),
        "wide": 3.0 * rng.standard_normal(d),
        "narrow": 0.1 * rng.standard_normal(d),
        "peaked": np.r_[12.0, rng.standard_normal(d - 1)],
        "flat": np.full(d, 0.7),
        "ties": np.round(rng.standard_normal(d)),
        "masked": np.where(rng.random(d) < 0.6, -np.inf, rng.standard_normal(d)),
        "one_left": np.r_[1.5, np.full(d - 1, -np.inf)],
    }
    rows["masked"][0] = 0.25  # keep one finite entry
    return rows


def float32_rows(d, alphas, seed=0):
    """Every row kind at every α: scores (float32) and α, one row each."""
    rng = np.random.default_rng(seed)
    kinds = row_kinds(rng, d)
    z = np.stack([row for _ in alphas for row in kinds.values()]).astype(np.float32)
    alpha = np.repeat(np.asarray(alphas, np.float32), len(kinds))[:, None]
    return z, alpha


def separated_rows(rng, n_rows, d, alpha):
    """Rows drawn one at a time by ``well_separated`` (margin 0.05 from a support change)."""
    return np.concatenate([well_separated(rng, (1, d), alpha) for _ in range(n_rows)])


# ----------------------------------------------------------------------------------------
# Accuracy in float32 against a float64 reference
# ----------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("d", [1, 7, 512, 4096])
def test_float32_error_below_1e6_learned_alpha(d):
    z, alpha = float32_rows(d, ALPHAS)
    p = learned(jnp.asarray(z), jnp.asarray(alpha))
    want = np_entmax(z.astype(np.float64), alpha.astype(np.float64))
    assert p.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(p, np.float64), want, rtol=0, atol=1e-6)


@pytest.mark.parametrize("alpha", [1.01, 1.2, 1.5, 2.0])  # log1p/exp path, u^5, u^2 (+ exact), u (+ exact)
def test_float32_error_below_1e6_fixed_alpha(alpha):
    z, _ = float32_rows(100, [alpha], seed=round(100 * alpha))
    p = fixed(jnp.asarray(z), alpha=alpha)
    want = np_entmax(z.astype(np.float64), alpha)
    np.testing.assert_allclose(np.asarray(p, np.float64), want, rtol=0, atol=1e-6)


@pytest.mark.slow
def test_float32_alpha_3_on_well_conditioned_rows():
    """α = 3: p = u^{1/2} is infinitely steep at the threshold, so float32 rounding of u near 0
    costs up to sqrt(eps) ≈ 3e-4 in p — for any float32 method. Rows that keep a margin from
    every support change are conditioned like the others and meet the same 1e-6.
    """
    z = separated_rows(np.random.default_rng(3), 16, 12, 3.0).astype(np.float32)
    want = np_entmax(z.astype(np.float64), 3.0)
    for p in (fixed(jnp.asarray(z), alpha=3.0), learned(jnp.asarray(z), jnp.full((16, 1), 3.0))):
        np.testing.assert_allclose(np.asarray(p, np.float64), want, rtol=0, atol=1e-6)


def test_float64_reaches_float64_precision():
    z, alpha = float32_rows(64, ALPHAS, seed=5)
    z = z.astype(np.float64) + 1e-3 * np.random.default_rng(6).standard_normal(z.shape)
    p = learned(jnp.asarray(z), jnp.asarray(alpha, np.float64))
    np.testing.assert_allclose(p, np_entmax(z, alpha.astype(np.float64)), rtol=0, atol=1e-13)


# ----------------------------------------------------------------------------------------
# Exact thresholds at α = 1.5 and α = 2
# ----------------------------------------------------------------------------------------


def test_sparsemax_and_entmax15_equal_the_sort_based_algorithms():
    """No sort, yet exact: the threshold of the detected support is solved in closed form."""
    z = np.random.default_rng(7).standard_normal((16, 50))
    p_sparse, p_15 = jax.jit(lambda z: (sparsemax(z), entmax15(z)))(z)
    np.testing.assert_allclose(p_sparse, np_sparsemax_sort(z), rtol=0, atol=5e-15)
    np.testing.assert_allclose(p_15, np_entmax15_sort(z), rtol=0, atol=5e-15)


@pytest.mark.slow
def test_sparsemax_and_entmax15_do_not_sort():
    """A sort is ~200× a softmax on CPU; the maps must not contain one (nor a top-k)."""
    sorting = re.compile(r"\b(sort|top_k)\[")  # the primitives, not a gather's indices_are_sorted
    assert sorting.search(str(jax.make_jaxpr(jnp.sort)(jnp.ones((4, 8)))))
    for f in (sparsemax, entmax15, lambda z: entmax_bisect(z, 1.5)):
        jaxpr = str(jax.make_jaxpr(jax.grad(lambda z: jnp.sum(f(z) ** 2)))(jnp.ones((4, 8), jnp.float32)))
        assert sorting.search(jaxpr) is None


@pytest.mark.slow
@pytest.mark.parametrize("d", [64, 2048])
def test_float32_near_uniform_long_rows_keep_sum_and_entries(d):
    """The hard case of a threshold near 1 with a long support: θ's rounding (6e-8) is shared by
    every entry, so a naive u = 1 + β(z − θ) makes Σ p drift by |S| · 6e-8 and dividing by the
    mass magnifies it in the largest entries. Both errors must stay below 1e-6."""
    rng = np.random.default_rng(d)
    z = np.concatenate([s * rng.standard_normal((8, d)) for s in (0.001, 0.03, 0.3)]).astype(np.float32)
    z64 = z.astype(np.float64)
    maps = {
        "sparsemax": (sparsemax, np_sparsemax_sort(z64)),
        "entmax15": (entmax15, np_entmax15_sort(z64)),
        "learned 1.9": (lambda z: entmax_bisect(z, jnp.float32(1.9)), np_entmax(z64, 1.9)),
        "learned 2": (lambda z: entmax_bisect(z, jnp.float32(2.0)), np_entmax(z64, 2.0)),
    }
    got = jax.jit(lambda z: {name: f(z) for name, (f, _) in maps.items()})(jnp.asarray(z))
    for name, (_, want) in maps.items():
        p = np.asarray(got[name], np.float64)
        np.testing.assert_allclose(p, want, rtol=0, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(p.sum(-1), 1.0, rtol=0, atol=1e-6, err_msg=name)


def test_exact_support_step_solves_the_support_in_one_step():
    """From any θ left of the root with the right support, one exact step lands on τ*."""
    z = np.random.default_rng(8).standard_normal((16, 30))
    # θ* from the largest entry of the sort-based answer: p_max = (1 − βθ*)^{1/β}.
    p_max = {
        1.5: np_entmax15_sort(z).max(-1, keepdims=True),
        2.0: np_sparsemax_sort(z).max(-1, keepdims=True),
    }

    @jax.jit
    def landed_and_exact(z, p_max):
        out = []
        for alpha in (1.5, 2.0):
            beta = alpha - 1.0
            row_max = jnp.max(z, axis=-1, keepdims=True)
            theta_star = (1.0 - p_max[alpha] ** beta) / beta  # step from slightly left of it
            F, D, E = threshold.threshold_sums(z, row_max, theta_star - 1e-9, beta)
            out.append((theta_star - 1e-9 + threshold.exact_support_step(F, D, E, beta), theta_star))
        return out

    for landed, exact in landed_and_exact(jnp.asarray(z), p_max):
        np.testing.assert_allclose(landed, exact, rtol=0, atol=1e-14)


# ----------------------------------------------------------------------------------------
# Step counts: the point of Newton–Halley
# ----------------------------------------------------------------------------------------


def steps_taken(z, beta, n_iter=25):
    return int(jax.jit(lambda z: threshold.find_threshold(z, beta, n_iter)[-1])(z))


def test_far_fewer_steps_than_bisection():
    """25 halvings reach float32 resolution; Newton–Halley needs a handful on typical rows."""
    rng = np.random.default_rng(9)
    z = jnp.asarray(rng.standard_normal((128, 256)), jnp.float32)
    alpha = jnp.asarray(1.0 + rng.uniform(0.01, 1.0, (128, 1)), jnp.float32)
    assert steps_taken(z, alpha - 1.0) <= 7  # learned α: Halley
    assert steps_taken(z, 0.5) <= 6  # α = 1.5: Halley and exact support steps


def test_softmax_rows_take_one_newton_step_then_stop():
    """At β = 0, G(θ) = logsumexp(z) − θ is linear: the first step is exact, the second confirms."""
    z = jnp.asarray(np.random.default_rng(10).standard_normal((64, 300)), jnp.float32)
    assert steps_taken(z, jnp.zeros((64, 1), jnp.float32)) <= 2


def test_step_cap_and_a_valid_distribution_with_one_step():
    z = jnp.asarray(np.random.default_rng(11).standard_normal((32, 64)), jnp.float32)
    alpha = jnp.full((32, 1), 1.3, jnp.float32)
    assert steps_taken(z, alpha - 1.0, n_iter=1) == 1
    p = learned(z, alpha, n_iter=1)
    assert np.all(np.asarray(p) >= 0)
    np.testing.assert_allclose(np.sum(p, -1), 1.0, atol=1e-5)
    # One step is not converged: the cap is real (25 steps are, to float32).
    want = np_entmax(np.asarray(z, np.float64), 1.3)
    assert np.abs(np.asarray(p, np.float64) - want).max() > 1e-4
    assert np.abs(np.asarray(learned(z, alpha), np.float64) - want).max() < 1e-6


@pytest.mark.parametrize("d", [16, 512])  # rows laid out one per column (d < SHORT_ROW), and not
def test_slow_rows_finish_in_the_gathered_tail_and_in_full(d):
    """Rows still running after the full-batch steps continue in a smaller gathered batch, and
    when there are more of them than it holds, in the full batch: both must give the answer.
    """
    rng = np.random.default_rng(12)
    easy = rng.standard_normal((8, d))
    slow = 0.1 * rng.standard_normal((56, d))  # narrow rows take Michelot many steps at α = 2
    z = np.concatenate([easy, slow]).astype(np.float32)  # 56 running rows > 64/TAIL_FRACTION gathered
    rows = jax.jit(lambda z: threshold.find_threshold(z, 1.0, threshold.FULL_STEPS)[2])(jnp.asarray(z))
    assert int(jnp.sum(~rows)) > 64 // threshold.TAIL_FRACTION
    p = fixed(jnp.asarray(z), alpha=2.0)
    np.testing.assert_allclose(np.asarray(p, np.float64), np_entmax(z.astype(np.float64), 2.0), atol=1e-6)


@pytest.mark.parametrize("d", [16, 64])
def test_gathered_tail_under_vmap(d):
    """jnp.nonzero and the gather/scatter of running rows must batch correctly under vmap."""
    rng = np.random.default_rng(16)
    z = np.concatenate([rng.standard_normal((3, 40, d)), 0.1 * rng.standard_normal((3, 4, d))], axis=1)
    z = z.astype(np.float32)
    alpha = np.repeat(np.array([2.0, 1.5, 1.2], np.float32), 44).reshape(3, 44, 1)
    p = jax.jit(jax.vmap(lambda z, a: entmax_bisect(z, a)))(z, alpha)
    want = np.stack([np_entmax(z[i].astype(np.float64), alpha[i].astype(np.float64)) for i in range(3)])
    np.testing.assert_allclose(np.asarray(p, np.float64), want, rtol=0, atol=1e-6)


def test_alpha_above_2_converges_by_safeguarded_newton():
    z = separated_rows(np.random.default_rng(13), 16, 12, 4.0)
    p = fixed(jnp.asarray(z), alpha=4.0)
    np.testing.assert_allclose(p, np_entmax(z, 4.0), rtol=0, atol=1e-12)


@pytest.mark.parametrize("alpha", [3.0, 4.0, 5.0])
def test_float32_error_at_large_alpha_stays_within_the_documented_resolution(alpha):
    """entmax_bisect's docstring: in float32, entries are resolved down to (1.2e-7)^{1/(α−1)}."""
    rng = np.random.default_rng(round(alpha))
    z = rng.standard_normal((500, 32)) * rng.uniform(0.3, 3.0, (500, 1))
    p32 = np.asarray(fixed(jnp.asarray(z, jnp.float32), alpha=alpha), np.float64)
    assert np.abs(p32 - np_entmax(z, alpha)).max() < (1.2e-7) ** (1.0 / (alpha - 1.0))


# ----------------------------------------------------------------------------------------
# Short rows with one α per head: the attention of Chapter 5's Transformer
# ----------------------------------------------------------------------------------------

HEAD_ALPHAS = np.array([1.001, 1.05, 1.2, 1.5, 1.7, 1.9, 1.99, 3.0])


def attention_scores(rng, d, scale):
    """(2, 8, 20, d) float64 scores, one α per head (axis 1): padded keys, ties, a uniform row,
    rows whose support is one entry (θ = 0, on the bracket's lower end) and nearly so."""
    z = scale * rng.standard_normal((2, 8, 20, d))
    z[0, :, :, d - 3 :] = -np.inf  # padded keys
    z[1, :, 0] = np.round(z[1, :, 0])  # ties
    z[1, :, 1] = 0.3  # uniform
    z[1, :, 2, 1:] = z[1, :, 2, :1] - 50.0  # one-entry support at every α
    z[1, :, 3, 1:] = z[1, :, 3, :1] - rng.uniform(0.5, 2.0, (8, d - 1))  # a few entries at most
    return z


def per_head_tolerance(alpha, dtype):
    """1e-6 in float32 (the documented resolution (1.2e-7)^{1/(α−1)} above α = 2), 1e-13 in float64."""
    if dtype == np.float64:
        return 1e-13
    return np.maximum(1e-6, 1.2e-7 ** (1.0 / (alpha - 1.0)))


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("d", [16, 32, 40])
def test_short_rows_with_one_alpha_per_head_match_the_float64_reference(d, dtype):
    """The training shapes: every head's rows against the float64 bisection, in float32 and float64.

    The learned-α rows stop one pass early (their last Halley step taken without a pass to
    confirm it): wrong there, the float64 rows would miss 1e-13.
    """
    rng = np.random.default_rng(d)
    alpha = HEAD_ALPHAS[:, None, None]
    for scale in (0.5, 3.0):
        z = attention_scores(rng, d, scale)
        p = np.asarray(learned(jnp.asarray(z, dtype), jnp.asarray(alpha, dtype)), np.float64)
        want = np_entmax(z, alpha)
        error = np.abs(p - want).max(axis=(0, 2, 3))  # per head
        assert np.all(error <= per_head_tolerance(HEAD_ALPHAS, dtype)), (scale, error)
        np.testing.assert_allclose(p.sum(-1), 1.0, rtol=0, atol=10 * np.finfo(dtype).eps * d)


def test_roots_next_to_the_lower_end_stop_within_three_passes():
    """Rows whose support is the max and one entry of tiny weight (u ≈ 0.01–0.1) have their
    root just above θ = 0. Newton's step from the right lands at or just below 0; the bracket's
    lower end sits below 0 so that the step is taken (an open bracket starting at 0 refused it
    and halved instead: 7 passes here). One-entry supports get exactly p = (1, 0, …)."""
    rng = np.random.default_rng(17)
    alpha = rng.uniform(1.05, 2.0, (64, 1)).astype(np.float32)
    z = (-3.0 - rng.random((64, 24))) / (alpha - 1.0)  # off the support
    z[:, 0] = 0.0
    z[:, 1] = -rng.uniform(0.9, 0.99, 64) / (alpha[:, 0] - 1.0)  # on it, barely
    z = jnp.asarray(z, jnp.float32)
    assert steps_taken(z, jnp.asarray(alpha - 1.0)) <= 3
    np.testing.assert_allclose(
        np.asarray(learned(z, jnp.asarray(alpha)), np.float64),
        np_entmax(np.asarray(z, np.float64), alpha),
        atol=1e-6,
    )
    one = z.at[:, 1].set(-60.0)
    p = np.asarray(learned(one, jnp.asarray(alpha)))
    assert np.all(p[:, 0] == 1.0) and np.all(p[:, 1:] == 0.0)


@pytest.mark.slow
def test_short_learned_alpha_rows_stop_within_four_passes():
    """Rows of ≤ 40 keys with a learned α ≤ 2: at most 4 evaluations of F (2–3 for most rows)."""
    rng = np.random.default_rng(18)
    beta = np.broadcast_to(HEAD_ALPHAS[:7, None, None] - 1.0, (2, 7, 20, 1)).reshape(-1, 1)
    for d in (16, 40):
        z = attention_scores(rng, d, 2.0)[:, :7].reshape(-1, d)
        assert steps_taken(jnp.asarray(z, jnp.float32), jnp.asarray(beta, jnp.float32)) <= 4


@pytest.mark.slow
def test_stopped_learned_alpha_rows_sit_on_the_root_in_float64():
    """search_step's last step is taken into θ: where it stops, F(θ) = 1 to float64 rounding."""
    rng = np.random.default_rng(19)
    z = jnp.asarray(rng.standard_normal((64, 300)))
    beta = jnp.asarray(rng.uniform(0.01, 1.0, (64, 1)))
    row_max = z.max(axis=-1, keepdims=True)
    sums = lambda theta: threshold.threshold_sums(z, row_max, theta, beta)
    rows = threshold.initial_state(beta, 300, jnp.zeros((64, 1), bool), z.dtype, False)
    for _ in range(8):
        rows = threshold.search_step(sums, beta, rows, float(jnp.finfo(z.dtype).eps), False)
    assert bool(jnp.all(rows.done))
    assert float(jnp.abs(sums(rows.theta)[0] - 1.0).max()) < 1e-13


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16])
def test_short_rows_low_precision_inputs_with_alpha_gradients(dtype):
    """bf16/f16 attention scores: p in the input dtype within its rounding of the float64
    reference, and the α-gradient (jit, vmap over the batch) that of float32 input."""
    rng = np.random.default_rng(20)
    z = attention_scores(rng, 16, 1.0)[0]  # (8, 20, 16): padded keys
    alpha = jnp.asarray(HEAD_ALPHAS[:7], jnp.float32)[:, None, None]
    z7 = jnp.asarray(z[:7], dtype)
    p = learned(z7, alpha)
    assert p.dtype == dtype
    want = np_entmax(np.asarray(z7, np.float64), np.asarray(alpha, np.float64))
    np.testing.assert_allclose(np.asarray(p, np.float64), want, rtol=0, atol=float(jnp.finfo(dtype).eps))

    def loss(a, z):
        return jnp.sum(entmax_bisect(z, a).astype(jnp.float32) * jnp.arange(16.0))

    grad = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0)))
    got = grad(alpha, z7[None].repeat(2, axis=0))
    ref = jax.grad(loss)(alpha, z7.astype(jnp.float32))
    np.testing.assert_allclose(got[0], ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], ref, rtol=1e-5, atol=1e-5)
