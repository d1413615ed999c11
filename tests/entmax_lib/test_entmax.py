"""Unit tests of entmax_lib's maps against independent references.

Known values, the sort-based algorithms and bisection, derivatives against finite
differences and against the papers' formulas (``references.py``), the α-cotangent reduction,
JAX transformations, dtypes, axes and the float32 accuracy.

Most checks run under ``jax.jit``: one compilation per test instead of one per primitive
and shape (eager dispatch), which keeps the suite fast. The known-value tests call the
maps eagerly, as a reader of the book would.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads
from maps import MAPS
from references import (
    np_alpha_grad,
    np_entmax,
    np_entmax15_sort,
    np_jacobian,
    np_sparsemax_sort,
    well_separated,
)

from entmax_lib import entmax15, entmax_bisect, softmax, sparsemax

ALPHAS = [1.01, 1.33, 1.5, 1.9, 2.0, 2.5]

bisect_fixed = jax.jit(entmax_bisect, static_argnames=("alpha", "axis", "n_iter"))  # α a Python float
bisect_learned = jax.jit(entmax_bisect, static_argnames=("axis", "n_iter"))  # α traced


# ----------------------------------------------------------------------------------------
# Known values (from the documentation of the PyTorch entmax package, github.com/deep-spin/entmax)
# ----------------------------------------------------------------------------------------


def test_known_values_sparsemax_and_entmax15():
    x = jnp.array([-2.0, 0.0, 0.5])
    # Eagerly (as in a notebook) for the two exact maps, under jit for the bisection.
    for p in (sparsemax(x), bisect_fixed(x, 2.0), bisect_learned(x, jnp.array(2.0))):
        np.testing.assert_allclose(p, [0.0, 0.25, 0.75], atol=1e-12)
    for p in (entmax15(x), bisect_fixed(x, 1.5), bisect_learned(x, jnp.array(1.5))):
        np.testing.assert_allclose(p, [0.0, 0.3260, 0.6740], atol=5e-5)


def test_known_values_alpha_133_and_its_alpha_derivative():
    x = jnp.array([[-1.0, 0.0, 0.5], [1.0, 2.0, 3.5]])
    expected = [[0.0460, 0.3276, 0.6264], [0.0026, 0.1012, 0.8963]]
    p00 = lambda a: entmax_bisect(x, a)[0, 0]
    fixed, learned, by_grad, by_jacfwd = jax.jit(
        lambda a: (entmax_bisect(x, 1.33), entmax_bisect(x, a), jax.grad(p00)(a), jax.jacfwd(p00)(a))
    )(jnp.array(1.33))
    np.testing.assert_allclose(fixed, expected, atol=5e-5)
    np.testing.assert_allclose(learned, expected, atol=5e-5)
    assert round(float(by_grad), 4) == round(float(by_jacfwd), 4) == -0.2562


def test_known_sparsemax_jacobian():
    x = jnp.array([0.0, 1.0, 1.5])
    expected_jacobian = [[0, 0, 0], [0, 0.5, -0.5], [0, -0.5, 0.5]]
    maps = {
        "sparsemax": sparsemax,
        "bisect_fixed": lambda z: entmax_bisect(z, 2.0),
        "bisect_array": lambda z: entmax_bisect(z, jnp.array(2.0)),
    }
    jacobians = jax.jit(lambda x: {name: (jax.jacfwd(f)(x), jax.jacrev(f)(x)) for name, f in maps.items()})(x)
    for name, f in maps.items():
        np.testing.assert_allclose(f(x), [0.0, 0.25, 0.75], atol=1e-12, err_msg=name)
        np.testing.assert_allclose(jacobians[name][0], expected_jacobian, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(jacobians[name][1], expected_jacobian, atol=1e-12, err_msg=name)


def test_known_values_row_wise_alpha():
    x = jnp.array([[0.5, 1.0], [1.5, 2.0]])
    alpha = jnp.array([[2.0], [1.5]])
    expected = [[0.25, 0.75], [0.32600737, 0.67399263]]
    np.testing.assert_allclose(bisect_learned(x, alpha), expected, atol=1e-8)
    np.testing.assert_allclose(jax.jit(entmax_bisect)(x, alpha), expected, atol=1e-6)  # 25 halvings


# ----------------------------------------------------------------------------------------
# sparsemax and entmax15 equal the sort-based algorithms (NumPy) and the bisection reference
# ----------------------------------------------------------------------------------------


SORT_SHAPES = [(1,), (2, 3, 16)]  # float32 is compared in test_float32_worst_error_against_float64_reference


@functools.cache
def _exact_maps():
    """sparsemax and entmax15 for every shape (float64): one compilation."""
    zs = [2.0 * np.random.default_rng(len(shape) + shape[-1]).standard_normal(shape) for shape in SORT_SHAPES]
    outputs = jax.jit(lambda zs: [(sparsemax(z), entmax15(z)) for z in zs])(zs)
    return dict(zip(SORT_SHAPES, zip(zs, outputs, strict=True), strict=True))


@pytest.mark.slow
@pytest.mark.parametrize("shape", SORT_SHAPES)
def test_exact_maps_equal_sorting_and_bisection(shape):
    z, (sparse, ent15) = _exact_maps()[shape]
    np.testing.assert_allclose(sparse, np_sparsemax_sort(z), atol=1e-14)
    np.testing.assert_allclose(ent15, np_entmax15_sort(z), atol=1e-14)
    np.testing.assert_allclose(sparse, np_entmax(z, 2.0), atol=1e-12)
    np.testing.assert_allclose(ent15, np_entmax(z, 1.5), atol=1e-12)


# ----------------------------------------------------------------------------------------
# Derivatives against central finite differences (float64)
# ----------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("alpha", ALPHAS)
def test_gradients_match_finite_differences_learned_alpha(alpha):
    """Derivatives w.r.t. x and α together; α is traced, so all α share one compilation."""
    z = jnp.asarray(well_separated(np.random.default_rng(round(alpha * 100)), (4, 6), alpha))
    check_grads(bisect_learned, (z, jnp.full((4, 1), alpha)), order=1, modes=("fwd", "rev"))


FIXED_ALPHAS = [1.33, 1.5, 2.0]  # a generic power, and the two exponents compiled as multiplies


@pytest.mark.slow
def test_gradients_match_finite_differences_fixed_alpha():
    """Derivatives w.r.t. x of every fixed-α map (α a Python float), all in one program."""
    zs = {
        alpha: well_separated(np.random.default_rng(round(alpha * 100)), (4, 6), alpha)
        for alpha in FIXED_ALPHAS
    }
    z_softmax = np.random.default_rng(0).standard_normal((4, 6))
    inputs = (jnp.asarray(np.stack(list(zs.values()))), jnp.asarray(z_softmax))

    @jax.jit
    def maps(z_stack, z_softmax):
        fixed = [entmax_bisect(z, alpha) for z, alpha in zip(z_stack, FIXED_ALPHAS, strict=True)]
        exact = [sparsemax(z_stack[FIXED_ALPHAS.index(2.0)]), entmax15(z_stack[FIXED_ALPHAS.index(1.5)])]
        return fixed, exact, [softmax(z_softmax), entmax_bisect(z_softmax, 1.0)]

    check_grads(maps, inputs, order=1, modes=("fwd", "rev"))


@pytest.mark.slow
def test_second_derivatives_of_the_fixed_maps_are_finite_and_right():
    """Hessian-vector products (e.g. for meta-learning) need the JVP rule itself to be differentiable:
    s = sqrt(p) at α = 1.5 must not turn 0 · ∞ into NaN off the support."""
    z = jnp.asarray(well_separated(np.random.default_rng(21), (2, 6), 1.5))
    both = jax.jit(lambda z: (sparsemax(z), entmax15(z)))
    assert all(np.any(np.asarray(p) == 0) for p in both(z))  # entries off the support are exercised
    check_grads(both, (z,), order=2, modes=("fwd", "rev"))


# ----------------------------------------------------------------------------------------
# The α = 1 branch of Proposition 1
# ----------------------------------------------------------------------------------------


@jax.jit
def _alpha_jvp(z, alpha):
    """(p, ∂p/∂α) for one α per row (the tangent of each row's α is 1)."""
    return jax.jvp(lambda a: entmax_bisect(z, a), (alpha,), (jnp.ones_like(alpha),))


@pytest.mark.slow
def test_alpha_gradient_at_one():
    z = np.random.default_rng(1).standard_normal((4, 6))
    ones = jnp.ones((4, 1))
    p, g = _alpha_jvp(z, ones)
    np.testing.assert_allclose(p, jax.nn.softmax(z), atol=1e-14)
    assert np.all(np.isfinite(g)) and np.max(np.abs(g)) > 0.01

    # One-sided forward difference: the map is only defined for α ≥ 1.
    h = 1e-6
    forward_difference = (bisect_learned(z, ones + h) - p) / h
    np.testing.assert_allclose(g, forward_difference, atol=1e-5)

    # The α → 1⁺ limit of the general (α > 1) formula, evaluated naively at α = 1 + 1e-4:
    # the two differ by O(1e-4) · ∂g/∂α.
    beta = 1e-4
    limit = np_alpha_grad(np_entmax(z, 1.0 + beta), 1.0 + beta)
    np.testing.assert_allclose(g, limit, atol=1e-4)
    # ... and exactly the α = 1 line of Proposition 1.
    np.testing.assert_allclose(g, np_alpha_grad(jax.nn.softmax(z), 1.0), atol=1e-13)

    # Reverse mode agrees with forward mode.
    w = np.random.default_rng(2).standard_normal((4, 6))
    g_rev = jax.jit(jax.grad(lambda a: jnp.sum(w * entmax_bisect(z, a))))(ones)
    np.testing.assert_allclose(g_rev, np.sum(w * g, axis=-1, keepdims=True), atol=1e-13)


# ----------------------------------------------------------------------------------------
# Derivatives against naive formulas
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [1.05, 1.33, 1.5, 2.0, 2.5, 3.0])
def test_alpha_gradient_matches_naive_proposition_1(alpha):
    rng = np.random.default_rng(round(alpha * 100))
    z = well_separated(rng, (4, 6), alpha, margin=0.01)
    _, g = _alpha_jvp(z, jnp.full((4, 1), alpha))
    expected = np_alpha_grad(np_entmax(z, alpha), alpha)
    np.testing.assert_allclose(g, expected, atol=1e-9)
    np.testing.assert_allclose(np.sum(g, axis=-1), 0.0, atol=1e-12)


@pytest.mark.parametrize("alpha", [1.0, 1.33, 1.5, 2.0, 2.5])
def test_x_jacobian_matches_naive_formula(alpha):
    """Learned-α path (one compilation for all α); the fixed-α maps are checked in the transforms test."""
    rng = np.random.default_rng(3)
    z = well_separated(rng, (6,), alpha) if alpha > 1 else rng.standard_normal(6)
    expected = np_jacobian(np_entmax(z, alpha), alpha)
    jac_fwd, jac_rev = _x_jacobians(z, jnp.array(alpha))
    np.testing.assert_allclose(jac_fwd, expected, atol=1e-10)
    np.testing.assert_allclose(jac_rev, expected, atol=1e-10)


@jax.jit
def _x_jacobians(z, alpha):
    return jax.jacfwd(entmax_bisect)(z, alpha), jax.jacrev(entmax_bisect)(z, alpha)


def naive_entmax_jax(z, alpha, n_bisect=60, n_newton=2):
    """A naive differentiable α-entmax (α > 1): bisection on τ, then unrolled Newton steps.

    Bisection finds τ with comparisons, through which no derivative flows (so it sits
    under ``stop_gradient``); one Newton step τ ← τ − f(τ)/f'(τ) on
    f(τ) = Σ[x − τ]_+^{1/β} − 1 from the converged τ carries exactly the implicit
    derivative −f_x/f_τ, so autodiff of this function is an independent check of the
    closed-form Jacobians w.r.t. x and α.
    """
    beta = alpha - 1.0
    x = beta * z

    def powers(tau, exponent):
        base = x - tau
        on = base > 0
        return jnp.where(on, jnp.where(on, base, 1.0) ** exponent, 0.0)

    def halve(_, bracket):
        lo, hi = bracket
        mid = 0.5 * (lo + hi)
        mass = jnp.sum(powers(mid, 1.0 / beta))
        return jnp.where(mass >= 1, mid, lo), jnp.where(mass >= 1, hi, mid)

    bracket = (jnp.max(x) - 1.0, jnp.max(x) - (1.0 / z.shape[-1]) ** beta)
    tau, _ = jax.lax.stop_gradient(jax.lax.fori_loop(0, n_bisect, halve, bracket))
    for _ in range(n_newton):
        f = jnp.sum(powers(tau, 1.0 / beta)) - 1.0
        df = -jnp.sum(powers(tau, 1.0 / beta - 1.0)) / beta
        tau = tau - f / df
    return powers(tau, 1.0 / beta)


@jax.jit
def _naive_and_library_jacobians(z, alpha):
    naive = jax.jacfwd(naive_entmax_jax, argnums=(0, 1))(z, alpha)
    forward = jax.jacfwd(entmax_bisect, argnums=(0, 1))(z, alpha)
    reverse = jax.jacrev(entmax_bisect, argnums=(0, 1))(z, alpha)
    return naive_entmax_jax(z, alpha), naive, forward, reverse


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [1.33, 1.5, 2.0, 2.5])
def test_jacobians_match_autodiff_of_naive_bisection(alpha):
    z = jnp.asarray(well_separated(np.random.default_rng(4), (6,), alpha))
    p_naive, naive, forward, reverse = _naive_and_library_jacobians(z, jnp.array(alpha))
    np.testing.assert_allclose(p_naive, np_entmax(z, alpha), atol=1e-12)
    for library in (forward, reverse):
        np.testing.assert_allclose(library[0], naive[0], atol=1e-10)  # ∂p/∂x
        np.testing.assert_allclose(library[1], naive[1], atol=1e-10)  # ∂p/∂α
    assert np.max(np.abs(naive[1])) > 1e-2


# ----------------------------------------------------------------------------------------
# One α per head: the α-cotangent is summed back to α's shape
# ----------------------------------------------------------------------------------------


@jax.jit
def _weighted_sum_grads(alpha, z, w):
    """∂(Σ w ⊙ entmax(z, α))/∂α by reverse and by forward mode."""
    loss = lambda a: jnp.sum(w * entmax_bisect(z, a))
    return jax.grad(loss)(alpha), jax.jacfwd(loss)(alpha)


@pytest.mark.slow
def test_alpha_cotangent_summed_back_to_alpha_shape():
    batch, heads, length = 2, 3, 4
    rng = np.random.default_rng(5)
    z = rng.standard_normal((batch, heads, length, length))
    w = rng.standard_normal((batch, heads, length, length))
    alpha = np.array([1.2, 1.6, 2.3]).reshape(heads, 1, 1)

    g, g_forward = _weighted_sum_grads(alpha, z, w)
    assert g.shape == g_forward.shape == alpha.shape
    # Loop over the (batch, head) slices; each slice of shape (L, L) takes α of shape (1, 1).
    expected = np.zeros(heads)
    for b in range(batch):
        for h in range(heads):
            expected[h] += float(_weighted_sum_grads(alpha[h], z[b, h], w[b, h])[0][0, 0])
    np.testing.assert_allclose(g[:, 0, 0], expected, rtol=1e-10, atol=1e-14)
    assert np.min(np.abs(expected)) > 1e-3  # the check is not vacuous

    np.testing.assert_allclose(g_forward, g, rtol=1e-10, atol=1e-14)


# ----------------------------------------------------------------------------------------
# α = 1 traced inside jit
# ----------------------------------------------------------------------------------------


def test_traced_alpha_one_inside_jit_is_softmax():
    z = np.random.default_rng(6).standard_normal((4, 6))
    softmax_np = np.exp(z) / np.sum(np.exp(z), axis=-1, keepdims=True)
    for alpha in (jnp.array(1.0), jnp.ones((4, 1))):
        np.testing.assert_allclose(bisect_learned(z, alpha), softmax_np, atol=1e-14)
    np.testing.assert_allclose(jax.jit(entmax_bisect)(z, jnp.array(1.0)), softmax_np, atol=1e-14)
    p32 = bisect_learned(jnp.asarray(z, jnp.float32), jnp.float32(1.0))
    assert p32.dtype == jnp.float32
    np.testing.assert_allclose(p32, softmax_np, atol=1e-6)


# ----------------------------------------------------------------------------------------
# JAX transformations
# ----------------------------------------------------------------------------------------


TRANSFORM_MAPS = list(MAPS)


@functools.cache
def _transformed():
    """Every map under jit, vmap, jacfwd, jacrev, grad and vmap(grad): one compilation for all."""
    rng = np.random.default_rng(7)
    z = jnp.asarray(rng.standard_normal((4, 6)))
    w = jnp.asarray(rng.standard_normal((4, 6)))

    @jax.jit
    def transformed(z, w):
        return {
            name: (
                f(z),
                jax.vmap(f, in_axes=1, out_axes=1)(z.T).T,
                jax.jacfwd(f)(z[0]),
                jax.jacrev(f)(z[0]),
                jax.grad(lambda z: jnp.sum(w * f(z)))(z),
                jax.vmap(jax.grad(lambda z, w: w @ f(z)))(z, w),
            )
            for name, (f, _) in MAPS.items()
            if name in TRANSFORM_MAPS
        }

    return z, w, transformed(z, w)


@pytest.mark.slow
@pytest.mark.parametrize("name", TRANSFORM_MAPS)
def test_jit_vmap_grad_jacfwd_jacrev(name):
    z, w, results = _transformed()
    p, vmapped, jac_fwd, jac_rev, grad, vmapped_grad = results[name]
    alpha = MAPS[name][1]
    np.testing.assert_allclose(p, np_entmax(z, alpha), atol=1e-12)
    np.testing.assert_allclose(vmapped, p, atol=1e-14)
    np.testing.assert_allclose(jac_rev, jac_fwd, atol=1e-12)
    np.testing.assert_allclose(jac_fwd, np_jacobian(p[0], alpha), atol=1e-12)
    np.testing.assert_allclose(grad[0], w[0] @ jac_fwd, atol=1e-12)
    np.testing.assert_allclose(vmapped_grad, grad, atol=1e-12)
    assert np.max(np.abs(grad)) > 1e-3


def test_vmap_and_jit_over_alpha():
    rng = np.random.default_rng(8)
    z = jnp.asarray(rng.standard_normal((4, 6)))
    alpha = jnp.array([1.0, 1.3, 2.0, 2.7])

    @jax.jit
    def per_row(z, alpha):
        p = jax.vmap(entmax_bisect)(z, alpha)
        g = jax.vmap(jax.grad(lambda z, a: entmax_bisect(z, a)[0], argnums=1))(z, alpha)
        return p, g

    p, g = per_row(z, alpha)
    np.testing.assert_allclose(p, np_entmax(z, alpha[:, None]), atol=1e-12)
    np.testing.assert_allclose(p, bisect_learned(z, alpha[:, None]), atol=1e-14)
    _, g_rows = _alpha_jvp(z, alpha[:, None])
    np.testing.assert_allclose(g, g_rows[:, 0], atol=1e-12)


# ----------------------------------------------------------------------------------------
# dtypes and axes
# ----------------------------------------------------------------------------------------

# Tolerances: the rounding of a value ≤ 1 to the output dtype (half an ulp at 1), plus slack.
DTYPE_ATOL = {jnp.float16: 1e-3, jnp.bfloat16: 5e-3, jnp.float32: 1e-6, jnp.float64: 1e-12}
DTYPE_MAPS = MAPS


@functools.cache
def _values_and_grads_in_every_dtype():
    """Every map and a gradient, for the same scores cast to each dtype: one compilation."""
    z = 2.0 * np.random.default_rng(9).standard_normal((4, 7))
    zs = [jnp.asarray(z, dtype) for dtype in DTYPE_ATOL]

    def values_and_grads(z):
        # jax.vjp gives p and a gradient from one forward pass (smaller programs to compile).
        outs = {}
        for name, (f, _) in DTYPE_MAPS.items():
            p, vjp = jax.vjp(f, z)
            outs[name] = (p, vjp(jnp.ones_like(p).at[:, 1:].set(0))[0])
        return outs

    outputs = jax.jit(lambda zs: [values_and_grads(z) for z in zs])(zs)
    return {dtype: (z, out) for dtype, z, out in zip(DTYPE_ATOL, zs, outputs, strict=True)}


@pytest.mark.slow
@pytest.mark.parametrize("dtype", list(DTYPE_ATOL), ids=lambda d: jnp.dtype(d).name)
def test_dtypes(dtype):
    z, outputs = _values_and_grads_in_every_dtype()[dtype]
    z64 = np.asarray(z, np.float64)  # the reference sees the same (rounded) scores
    for name, (p, grad) in outputs.items():
        alpha = MAPS[name][1]
        assert p.dtype == grad.dtype == jnp.dtype(dtype), name
        np.testing.assert_allclose(
            np.asarray(p, np.float64), np_entmax(z64, alpha), atol=DTYPE_ATOL[dtype], err_msg=name
        )
        assert np.all(np.isfinite(np.asarray(grad, np.float64))), name


AXIS_MAPS = {name: MAPS[name] for name in ("softmax", "sparsemax", "entmax15", "bisect_fixed_alpha")}


@pytest.mark.slow
@pytest.mark.parametrize("axis", [0, -2])  # -2 is axis 1 here; -1 is the default, used everywhere else
def test_any_axis_equals_moving_the_axis(axis):
    rng = np.random.default_rng(10 + axis)
    z = jnp.asarray(rng.standard_normal((3, 4, 5)))
    alpha_shape = list(z.shape)
    alpha_shape[axis] = 1  # one α per slice: size 1 along `axis`
    alpha = jnp.asarray(1.0 + 2.0 * rng.uniform(size=alpha_shape))

    def along_axis(z, alpha):
        out = {name: f(z, axis=axis) for name, (f, _) in AXIS_MAPS.items()}
        out["learned_alpha"] = entmax_bisect(z, alpha, axis=axis)
        return out

    def moved(z, alpha):
        z, alpha = jnp.moveaxis(z, axis, -1), jnp.moveaxis(alpha, axis, -1)
        out = {name: f(z) for name, (f, _) in AXIS_MAPS.items()}
        out["learned_alpha"] = entmax_bisect(z, alpha)
        return {name: jnp.moveaxis(p, -1, axis) for name, p in out.items()}

    actual, expected = jax.jit(lambda z, alpha: (along_axis(z, alpha), moved(z, alpha)))(z, alpha)
    for name, p in actual.items():
        np.testing.assert_allclose(p, expected[name], atol=1e-14, err_msg=name)
        np.testing.assert_allclose(np.sum(p, axis=axis), 1.0, atol=1e-12, err_msg=name)


# ----------------------------------------------------------------------------------------
# float32 accuracy against the float64 reference
# ----------------------------------------------------------------------------------------

# Honest bounds. For α ≤ 2 the error is a few float32 ulps. For α > 2, p = [x − τ]_+^{1/(α−1)}
# is a root of (x − τ), whose float32 rounding (~6e-8 for scores of order 1) is amplified
# near the threshold: at α = 3, p ≈ sqrt(x − τ) moves by ~1e-5 for entries of size ~1e-3.
FLOAT32_CASES = {
    "softmax": (softmax, 1.0, 1e-6),
    "sparsemax": (sparsemax, 2.0, 1e-6),
    "entmax15": (entmax15, 1.5, 1e-6),
    "entmax_bisect(1.25)": (lambda z: entmax_bisect(z, 1.25), 1.25, 1e-6),
    "entmax_bisect(1.5)": (lambda z: entmax_bisect(z, 1.5), 1.5, 1e-6),
    "entmax_bisect(2.0)": (lambda z: entmax_bisect(z, 2.0), 2.0, 1e-6),
    "entmax_bisect(3.0)": (lambda z: entmax_bisect(z, 3.0), 3.0, 1e-4),
    "entmax_bisect(learned α ∈ [1, 2])": (lambda z, a: entmax_bisect(z, a), "per-row", 1e-6),
}


@pytest.mark.slow
def test_float32_worst_error_against_float64_reference():
    """Worst |p32 − p64| over 3 × 256 random rows of length 64 (scales 0.5, 3, 20)."""
    rng = np.random.default_rng(11)
    z = np.concatenate([scale * rng.standard_normal((256, 64)) for scale in (0.5, 3.0, 20.0)])
    z32 = jnp.asarray(z, jnp.float32)
    z_rounded = np.asarray(z32, np.float64)  # the reference sees the float32 inputs
    alpha_rows = jnp.asarray(1.0 + rng.uniform(size=(len(z), 1)), jnp.float32)
    outputs = jax.jit(
        lambda z, a: {
            name: f(z, a) if alpha == "per-row" else f(z) for name, (f, alpha, _) in FLOAT32_CASES.items()
        }
    )(z32, alpha_rows)
    worst = {}
    for name, (_, alpha, _) in FLOAT32_CASES.items():
        p = outputs[name]
        if alpha == "per-row":
            alpha = np.asarray(alpha_rows, np.float64)
        assert p.dtype == jnp.float32
        reference = np_entmax(z_rounded, alpha, n_iter=80)  # 80 halvings: float64 resolution
        worst[name] = float(np.max(np.abs(np.asarray(p, np.float64) - reference)))
    print("\nworst float32 absolute error vs float64 reference (768 rows × 64):")
    for name, err in worst.items():
        print(f"  {name:36s} {err:.2e}")
    for name, (_, _, bound) in FLOAT32_CASES.items():
        assert worst[name] < bound, (name, worst[name])
