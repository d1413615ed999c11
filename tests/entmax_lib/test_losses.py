"""Fenchel–Young losses (entmax_lib.losses) against independent references.

The reference is a float64 NumPy loss written from the definition, L = Ω*(z) − ⟨z, y⟩ + Ω(y)
with Ω*(z) = ⟨z, p*⟩ − Ω(p*) and p* by bisection; Optax's losses are the references at α = 1
(softmax cross-entropy) and α = 2 (the sparsemax loss). The checks run under ``jax.jit`` on a
few shared shapes, one α per row: a handful of compilations for the whole file.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
import scipy.special
from references import np_entmax, np_jacobian, well_separated

from entmax_lib import entmax15_loss, entmax_bisect_loss, sparsemax_loss

B, D = 32, 6  # the shape of most checks
# One α per row: 1 exactly, just above 1, the named maps, and random values up to 3.
ALPHAS = np.concatenate([[1.0, 1.0 + 1e-6, 1.5, 2.0], np.random.default_rng(0).uniform(1.01, 3.0, B - 4)])
FIXED = {  # the Python-float paths, with the α they compute
    "sparsemax_loss": (sparsemax_loss, 2.0),
    "entmax15_loss": (entmax15_loss, 1.5),
    "bisect_alpha_1": (functools.partial(entmax_bisect_loss, alpha=1.0), 1.0),
    "bisect_alpha_1.7": (functools.partial(entmax_bisect_loss, alpha=1.7), 1.7),
}


@jax.jit
def loss_and_grads(z, y, alpha):
    """Per-row loss of entmax_bisect_loss with a traced α, and its gradients in z and α."""
    loss = entmax_bisect_loss(z, y, alpha)
    total = lambda s, a: entmax_bisect_loss(s, y, a, reduction="sum")  # noqa: E731
    return loss, *jax.grad(total, argnums=(0, 1))(z, alpha)


@functools.partial(jax.jit, static_argnums=0)
def fixed_loss_and_grad(name, z, y):
    loss_fn = FIXED[name][0]
    return loss_fn(z, y), jax.grad(lambda s: loss_fn(s, y, reduction="sum"))(z)


# ----------------------------------------------------------------------------------------
# Float64 NumPy reference
# ----------------------------------------------------------------------------------------


def np_entmax_stable(z, alpha, n_iter=200):
    """entmax_α by bisection on θ: p_i = exp(log1p(β(z_i − max z − θ))/β), any α ≥ 1 per row.

    Accurate for α → 1 too (no power 1/β of a number near 1), for finite differences in α.
    """
    z = np.asarray(z, np.float64)
    alpha = np.broadcast_to(np.asarray(alpha, np.float64), z.shape[:-1] + (1,))
    beta = np.maximum(alpha - 1.0, 1e-300)
    y = z - z.max(-1, keepdims=True)

    def mass_at(theta):
        u = beta * (y - theta)
        return np.where(u > -1, np.exp(np.log1p(np.where(u > -1, u, 0.0)) / beta), 0.0)

    lo, hi = np.zeros_like(beta), (1.0 - z.shape[-1] ** -beta) / beta
    hi = np.where(alpha > 1, hi, np.log(z.shape[-1]))
    for _ in range(n_iter):
        mid = 0.5 * (lo + hi)
        big = mass_at(mid).sum(-1, keepdims=True) >= 1
        lo, hi = np.where(big, mid, lo), np.where(big, hi, mid)
    p = mass_at(lo)
    softmax = np.exp(y) / np.exp(y).sum(-1, keepdims=True)
    return np.where(alpha > 1, p / p.sum(-1, keepdims=True), softmax)


def np_omega(p, alpha):
    """Ω_α(p) = (Σ p^α − 1)/(α(α−1)), Σ p log p at α = 1, α per row; last axis, float64.

    Σ p^α − 1 is written Σ p (p^β − 1) = Σ p expm1(β log p) (Σ p = 1): the same number, without
    the cancellation of the first form near α = 1.
    """
    p = np.asarray(p, np.float64)
    alpha = np.broadcast_to(np.asarray(alpha, np.float64), p.shape[:-1] + (1,))[..., 0]
    log_p = np.log(np.where(p > 0, p, 1.0))
    shannon = np.sum(p * log_p, axis=-1)
    beta = alpha - 1.0
    beta_safe = np.where(beta > 0, beta, 1.0)
    tsallis = np.sum(p * np.expm1(beta_safe[..., None] * log_p), axis=-1) / (alpha * beta_safe)
    return np.where(beta > 0, tsallis, shannon)


def np_fy_loss(z, y, alpha):
    """Ω*(z) − ⟨z, y⟩ + Ω(y), with Ω*(z) = ⟨z, p*⟩ − Ω(p*), straight from the definition."""
    z, y = np.asarray(z, np.float64), np.asarray(y, np.float64)
    p = np_entmax_stable(z, alpha)
    conjugate = np.sum(z * p, axis=-1) - np_omega(p, alpha)
    return conjugate - np.sum(z * y, axis=-1) + np_omega(y, alpha)


def one_hot(labels, d=D):
    return np.eye(d)[labels]


def test_reference_agrees_with_the_shared_numpy_entmax():
    z = np.random.default_rng(1).standard_normal((B, D))
    np.testing.assert_allclose(np_entmax_stable(z, ALPHAS[:, None]), np_entmax(z, ALPHAS[:, None]), atol=1e-9)


# ----------------------------------------------------------------------------------------
# Values against the references
# ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_traced_alpha_matches_numpy_reference():
    rng = np.random.default_rng(2)
    z = 2.0 * rng.standard_normal((B, D))
    y = rng.dirichlet(np.full(D, 0.7), B)
    y[::3] = one_hot(rng.integers(0, D, len(y[::3])))  # integer labels, as targets
    loss, _, _ = loss_and_grads(jnp.asarray(z), jnp.asarray(y), jnp.asarray(ALPHAS[:, None]))
    np.testing.assert_allclose(loss, np_fy_loss(z, y, ALPHAS[:, None]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", FIXED)
def test_fixed_alpha_matches_numpy_reference(name):
    alpha = FIXED[name][1]
    rng = np.random.default_rng(3)
    z = 2.0 * rng.standard_normal((B, D))
    labels = rng.integers(0, D, B)
    loss, _ = fixed_loss_and_grad(name, jnp.asarray(z), jnp.asarray(labels))
    np.testing.assert_allclose(loss, np_fy_loss(z, one_hot(labels), alpha), rtol=0, atol=1e-12)


def test_alpha_one_is_softmax_cross_entropy():
    rng = np.random.default_rng(4)
    z = jnp.asarray(3.0 * rng.standard_normal((B, D)))
    labels = rng.integers(0, D, B)
    targets = jnp.asarray(rng.dirichlet(np.ones(D), B))
    ce = optax.softmax_cross_entropy_with_integer_labels(z, jnp.asarray(labels))
    # With a probability target Ω(y) = −H(y) is added: cross-entropy minus the target's entropy.
    ce_soft = optax.softmax_cross_entropy(z, targets) + np_omega(targets, 1.0)
    fixed, _ = fixed_loss_and_grad("bisect_alpha_1", z, jnp.asarray(labels))
    ones = jnp.ones((B, 1))
    traced, _, _ = loss_and_grads(z, jnp.asarray(one_hot(labels)), ones)
    traced_soft, _, _ = loss_and_grads(z, targets, ones)
    for loss, expected in ((fixed, ce), (traced, ce), (traced_soft, ce_soft)):
        np.testing.assert_allclose(loss, expected, rtol=0, atol=1e-13)


def test_alpha_one_with_a_distribution_target_is_kl_divergence_not_cross_entropy():
    rng = np.random.default_rng(14)
    z = rng.standard_normal((B, D))
    y = rng.dirichlet(np.ones(D), B)
    softmax = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
    kl = scipy.special.rel_entr(y, softmax).sum(-1)
    loss = entmax_bisect_loss(jnp.asarray(z), jnp.asarray(y), alpha=1.0)
    np.testing.assert_allclose(loss, kl, rtol=0, atol=1e-13)
    ce = optax.softmax_cross_entropy(jnp.asarray(z), jnp.asarray(y))
    assert np.all(np.asarray(ce) - np.asarray(loss) > 0.1)  # the target's entropy, left out


@pytest.mark.slow
@pytest.mark.parametrize("beta", [1e-4, 1e-5, 1e-6, 1e-7])
def test_alpha_just_above_one_as_a_number_is_as_accurate_as_as_an_array(beta):
    # Float32 scores: Ω_α = Σ (p^α − p)/(α(α−1)) cancels there unless written with expm1.
    z, label = jnp.array([0.0, 1.0, 2.0], jnp.float32), jnp.array(0)
    alpha = float(np.float32(1.0 + beta))  # the α float32 computes with
    expected = np_fy_loss(np.asarray(z), one_hot(0, 3), alpha)
    as_number = entmax_bisect_loss(z, label, alpha=alpha)
    as_array = entmax_bisect_loss(z, label, alpha=jnp.asarray(alpha, jnp.float32))
    np.testing.assert_allclose([as_number, as_array], [expected, expected], rtol=2e-6)


def test_alpha_two_is_optax_sparsemax_loss():
    rng = np.random.default_rng(5)
    z = jnp.asarray(2.0 * rng.standard_normal((B, D)))
    labels = jnp.asarray(rng.integers(0, D, B))
    loss, _ = fixed_loss_and_grad("sparsemax_loss", z, labels)
    traced, _, _ = loss_and_grads(z, jax.nn.one_hot(labels, D), jnp.full((B, 1), 2.0))
    expected = jax.jit(optax.losses.multiclass_sparsemax_loss)(z, labels)
    np.testing.assert_allclose(loss, expected, rtol=0, atol=1e-13)
    np.testing.assert_allclose(traced, expected, rtol=0, atol=1e-13)


# ----------------------------------------------------------------------------------------
# Properties: non-negative, zero exactly past the margin 1/(α−1)
# ----------------------------------------------------------------------------------------


def test_nonnegative_and_zero_exactly_at_the_target():
    rng = np.random.default_rng(6)
    z = 4.0 * rng.standard_normal((B, D))
    labels = rng.integers(0, D, B)
    loss, _, _ = loss_and_grads(jnp.asarray(z), jnp.asarray(one_hot(labels)), jnp.asarray(ALPHAS[:, None]))
    distance = np.abs(np_entmax(z, ALPHAS[:, None]) - one_hot(labels)).sum(-1)
    assert np.all(np.asarray(loss) >= 0)
    assert np.all(loss[distance == 0] == 0) and np.all(loss[distance > 1e-9] > 0)
    assert 0 < np.sum(distance == 0) < B  # both cases occur


def margin_scores(rng, labels, gap):
    """Random scores whose label entry beats every other by exactly ``gap`` (per row)."""
    z = rng.standard_normal((len(labels), D))
    others = np.where(one_hot(labels) > 0, -np.inf, z).max(-1)
    z[np.arange(len(labels)), labels] = others + gap
    return z


@pytest.mark.parametrize("past", [True, False])
def test_zero_loss_and_gradient_past_the_margin(past):
    rng = np.random.default_rng(7)
    labels = rng.integers(0, D, B)
    alphas = np.maximum(ALPHAS, 1.2)  # α = 1 has no margin
    margin = 1.0 / (alphas - 1.0)
    # Short of the margin by 10 % or more, the runner-up keeps at least (0.1)^{1/(α−1)}.
    gap = margin + rng.uniform(1e-6, 1.0, B) if past else margin * rng.uniform(0.5, 0.9, B)
    z = jnp.asarray(margin_scores(rng, labels, gap))
    losses = [loss_and_grads(z, jnp.asarray(one_hot(labels)), jnp.asarray(alphas[:, None]))[:2]]
    for name, (_, alpha) in FIXED.items():
        if alpha > 1:
            margin = 1 / (alpha - 1)
            gap = margin + rng.uniform(1e-6, 1.0, B) if past else margin * rng.uniform(0.5, 0.9, B)
            z = jnp.asarray(margin_scores(rng, labels, gap))
            losses.append(fixed_loss_and_grad(name, z, jnp.asarray(labels)))
    for loss, grad in losses:
        if past:
            assert np.all(np.asarray(loss) == 0) and np.all(np.asarray(grad) == 0)
        else:
            assert np.all(np.asarray(loss) > 0) and np.all(np.abs(grad).sum(-1) > 0)


# ----------------------------------------------------------------------------------------
# Gradients: p* − y in z, the envelope rule in α, both against finite differences
# ----------------------------------------------------------------------------------------


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(8)
    alphas = ALPHAS[:, None]
    # Scores at least 0.05 from a support change, so that the loss is smooth around them.
    z = np.concatenate(
        [well_separated(rng, (1, D), a) if a > 1.01 else rng.standard_normal((1, D)) for a in ALPHAS]
    )
    y = rng.dirichlet(np.ones(D), B)
    y[:4] = one_hot(rng.integers(0, D, 4), D)  # Ω(one-hot) = 0 for every α
    _, dz, dalpha = loss_and_grads(jnp.asarray(z), jnp.asarray(y), jnp.asarray(alphas))
    np.testing.assert_allclose(dz, np_entmax_stable(z, alphas) - y, rtol=0, atol=1e-12)
    # Rows are independent: perturb one column (or α) of every row at once.
    h, fd_z = 1e-6, np.zeros_like(z)
    for j in range(D):
        step = np.zeros_like(z)
        step[:, j] = h
        fd_z[:, j] = (np_fy_loss(z + step, y, alphas) - np_fy_loss(z - step, y, alphas)) / (2 * h)
    np.testing.assert_allclose(dz, fd_z, rtol=0, atol=1e-7)
    h = 1e-5
    f = lambda a: np_fy_loss(z, y, a)  # noqa: E731
    central = (f(alphas + h) - f(alphas - h)) / (2 * h)
    one_sided = (-3 * f(alphas) + 4 * f(alphas + h) - f(alphas + 2 * h)) / (2 * h)  # α = 1: no α < 1
    fd_alpha = np.where(ALPHAS < 1 + h, one_sided, central)
    np.testing.assert_allclose(dalpha[:, 0], fd_alpha, rtol=1e-6, atol=1e-8)


def test_alpha_gradient_per_row_and_shared():
    rng = np.random.default_rng(9)
    z = jnp.asarray(rng.standard_normal((B, D)))
    y = jnp.asarray(one_hot(rng.integers(0, D, B)))
    _, _, per_row = loss_and_grads(z, y, jnp.full((B, 1), 1.5))
    shared = jax.jit(jax.grad(lambda a: entmax_bisect_loss(z, y, a, reduction="sum")))(jnp.array(1.5))
    assert shared.shape == ()
    np.testing.assert_allclose(shared, per_row.sum(), rtol=1e-12)


def test_hessian_is_the_jacobian_of_the_map():
    z = well_separated(np.random.default_rng(10), (D,), 1.5)
    hessian = jax.jit(jax.hessian(entmax15_loss))(jnp.asarray(z), jnp.asarray(1))
    np.testing.assert_allclose(hessian, np_jacobian(np_entmax(z, 1.5), 1.5), atol=1e-10)


# ----------------------------------------------------------------------------------------
# Transformations, dtypes, masks, axes, reductions
# ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_integer_labels_vmap_reductions_and_axis():
    rng = np.random.default_rng(11)
    z = jnp.asarray(rng.standard_normal((B, D)))
    labels = jnp.asarray(rng.integers(0, D, B))
    alpha = jnp.asarray(ALPHAS[:, None])
    jitted, _, _ = loss_and_grads(z, jax.nn.one_hot(labels, D), alpha)

    @jax.jit
    def variants(z, labels, alpha):
        vmapped = jax.vmap(entmax_bisect_loss)(z, labels, alpha[:, 0])
        total_by_axis = entmax_bisect_loss(z.T, labels, alpha.T, axis=0, reduction="sum")
        return vmapped, total_by_axis, entmax_bisect_loss(z, labels, alpha, reduction="mean")

    vmapped, total_by_axis, mean = variants(z, labels, alpha)  # integer labels
    np.testing.assert_allclose(vmapped, jitted, rtol=1e-12)
    np.testing.assert_allclose([total_by_axis, mean], [jitted.sum(), jitted.mean()], rtol=1e-12)


def test_traced_labels_out_of_range_give_nan():
    labels = jnp.zeros(B, int).at[3].set(D).at[5].set(-1)
    loss, _ = fixed_loss_and_grad("sparsemax_loss", jnp.zeros((B, D)), labels)
    assert np.isnan(loss[3]) and np.isnan(loss[5]) and np.isfinite(np.delete(np.asarray(loss), [3, 5])).all()


def test_bfloat16_input():
    rng = np.random.default_rng(12)
    z = jnp.asarray(rng.standard_normal((B, D)), jnp.bfloat16)
    labels = rng.integers(0, D, B)
    alpha = jnp.asarray(ALPHAS[:, None], jnp.bfloat16)
    loss, dz, dalpha = loss_and_grads(z, jnp.asarray(labels), alpha)
    assert loss.dtype == dz.dtype == dalpha.dtype == jnp.bfloat16
    z64, a64 = np.asarray(z, np.float64), np.asarray(alpha, np.float64)
    np.testing.assert_allclose(np.asarray(loss, np.float64), np_fy_loss(z64, one_hot(labels), a64), atol=2e-2)
    np.testing.assert_allclose(np.asarray(dz, np.float64), np_entmax(z64, a64) - one_hot(labels), atol=2e-2)


def test_masked_entries():
    rng = np.random.default_rng(13)
    z = rng.standard_normal((B, D))
    z[:, 1] = -np.inf  # class 1 is masked in every row
    z[0] = -np.inf  # row 0 is padding
    labels = rng.choice([0, 2, 3, 4, 5], B)
    labels[1] = 1  # a label the scores exclude
    loss, dz, dalpha = loss_and_grads(
        jnp.asarray(z), jnp.asarray(one_hot(labels)), jnp.asarray(ALPHAS[:, None])
    )
    # A masked entry is as if the class did not exist.
    kept = [0, 2, 3, 4, 5]
    labels_kept = np.searchsorted(kept, labels[2:])
    expected = np_fy_loss(z[2:, kept], one_hot(labels_kept, 5), ALPHAS[2:, None])
    np.testing.assert_allclose(loss[2:], expected, atol=1e-12)
    assert loss[0] == 0 and loss[1] == np.inf
    assert np.all(dz[0] == 0) and dalpha[0] == 0 and np.all(dz[:, 1] == 0) and np.isfinite(dz).all()


FMAX = float(np.finfo(np.float32).max)
ALL_LOSSES = {
    "sparsemax_loss": sparsemax_loss,
    "entmax15_loss": entmax15_loss,
    "bisect_alpha_1": functools.partial(entmax_bisect_loss, alpha=1.0),
    "bisect_alpha_1.3": functools.partial(entmax_bisect_loss, alpha=1.3),
    "bisect_alpha_array": lambda z, y, **kw: entmax_bisect_loss(z, y, jnp.float32(1.3), **kw),
}


@pytest.mark.parametrize("name", ALL_LOSSES)
def test_finite_scores_a_float32_range_apart_give_no_nan(name):
    # z − max(z) overflows to −inf at −fmax; the loss must not multiply that by p − y = 0.
    loss_fn = ALL_LOSSES[name]
    z = jnp.array([FMAX, -FMAX, 0.0], jnp.float32)
    loss, grad = jax.value_and_grad(loss_fn)(z, jnp.array(0))
    assert loss == 0 and np.all(np.asarray(grad) == 0)
    assert loss_fn(z, jnp.array(2)) >= FMAX / 2  # the exact loss is fmax (± Ω terms)
    assert loss_fn(z, jnp.array(1)) == np.inf  # the exact loss, 2 fmax, overflows float32


def test_mean_over_an_empty_batch_is_refused_not_nan():
    z, labels = jnp.zeros((0, 3)), jnp.zeros((0,), int)
    with pytest.raises(ValueError, match=r"reduction='mean'.*empty.*\(0, 3\)"):
        sparsemax_loss(z, labels, reduction="mean")
    assert sparsemax_loss(z, labels, reduction="sum") == 0
    assert sparsemax_loss(z, labels).shape == (0,)


@pytest.fixture
def x64_off():
    """JAX's default: 32-bit integers, as most users run it (the test session enables x64)."""
    jax.config.update("jax_enable_x64", False)
    yield
    jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize("labels", [np.array([2**32 + 1, 0]), np.array([0, 2**63 - 1]), [0, 2**32 + 2]])
def test_labels_beyond_int32_are_refused_not_wrapped(x64_off, labels):
    with pytest.raises(ValueError, match=r"labels must be class indices in \[0, 3\)"):
        sparsemax_loss(np.zeros((2, 3), np.float32), labels)


def test_no_gradient_to_labels():
    z = jnp.array([0.1, 0.5, -0.3])
    y = jnp.array([0.2, 0.5, 0.3])
    assert np.all(jax.jit(jax.grad(sparsemax_loss, argnums=1))(z, y) == 0)


# ----------------------------------------------------------------------------------------
# Bad input: a clear error naming the argument, raised before any computation
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"labels": jnp.array([0, 3])}, ValueError, r"labels must be class indices in \[0, 3\)"),
        ({"labels": jnp.array([-1, 0])}, ValueError, "labels must be class indices"),
        ({"labels": jnp.array([0, 1, 2])}, ValueError, "integer labels must have the shape"),
        ({"labels": jnp.array([[0.5, 0.6, -0.1]] * 2)}, ValueError, "labels .* non-negative"),
        ({"labels": jnp.array([[0.5, 0.4, 0.0]] * 2)}, ValueError, "labels .* sum to 1"),
        ({"labels": jnp.ones((2, 4)) / 4}, ValueError, "probability labels must have the shape"),
        ({"labels": jnp.array([True, False])}, TypeError, "labels must be integer"),
        ({"reduction": "avg"}, ValueError, "reduction must be one of"),
        ({"reduction": None}, ValueError, "reduction must be one of"),
        ({"alpha": 0.5}, ValueError, "alpha must be >= 1"),
        ({"alpha": jnp.array([[0.9], [1.5]])}, ValueError, "alpha must be >= 1"),
        ({"alpha": float("nan")}, ValueError, "alpha must be finite"),
        ({"alpha": jnp.ones((2, 3))}, ValueError, "alpha with shape"),
        ({"alpha": "1.5"}, TypeError, "alpha must be a real number"),
        ({"alpha": None}, TypeError, "alpha must be a real number .* got None"),
        ({"alpha": jnp.full((5, 1), 1.5)}, ValueError, r"alpha with shape \(5, 1\) .* scores .*\(2, 3\)"),
        ({"labels": np.array(["a", "b"])}, TypeError, "labels must be integer .* got dtype <U1"),
        ({"labels": ["a", "b"]}, TypeError, "labels must be integer .* got dtype <U1"),
        ({"labels": [None, 1]}, TypeError, "labels must be integer .* got dtype object"),
        ({"axis": 2}, ValueError, "axis=2 is out of range"),
        ({"scores": jnp.zeros((2, 3), jnp.int32)}, TypeError, "scores must be a floating-point"),
        ({"n_iter": 0}, ValueError, "n_iter must be between"),
    ],
)
def test_bad_input_names_the_argument(kwargs, error, match):
    arguments = {"scores": jnp.zeros((2, 3)), "labels": jnp.array([0, 2]), **kwargs}
    with pytest.raises(error, match=match):
        entmax_bisect_loss(**arguments)


def test_alpha_that_would_enlarge_the_scores_is_refused_naming_both_shapes():
    with pytest.raises(ValueError, match=r"alpha with shape \(5, 1\).*scores with shape \(1, 4\)"):
        entmax_bisect_loss(jnp.zeros((1, 4)), jnp.array([0]), jnp.full((5, 1), 1.5))


def test_bad_reduction_is_reported_before_anything_else():
    with pytest.raises(ValueError, match="reduction"):
        sparsemax_loss(jnp.zeros((2, 3), jnp.int32), jnp.array([5, 7]), reduction="mean_")
