"""Bad and extreme input: masks (-inf), fully masked rows, huge or peaked scores, NaN,
invalid arguments (clear errors naming the argument), traced α < 1, wrongly shaped α."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from maps import MAPS
from references import np_alpha_grad, np_entmax

from entmax_lib import entmax15, entmax_bisect, softmax, sparsemax
from entmax_lib.entmax import ALPHA_LIMIT

INF = np.inf


# ----------------------------------------------------------------------------------------
# -inf entries and fully masked rows
# ----------------------------------------------------------------------------------------

MASKED = np.array(
    [
        [1.0, -INF, 0.5, -INF, 2.0, 0.1],
        [0.3, 0.1, -INF, 0.2, -0.5, -INF],
        [-INF, -INF, -INF, -INF, -INF, -INF],  # fully masked
        [-INF, -INF, 3.0, -INF, -INF, -INF],  # one entry left
    ]
)


@jax.jit
def _values_and_grads(z, w, alpha_rows):
    """Every map and ∂(Σ w ⊙ p)/∂z, plus the learned-α map with its x- and α-gradients."""
    out = {name: _value_and_pullback(f, w, z) for name, (f, _) in MAPS.items()}
    # One traced α per row: the gradients w.r.t. x and α.
    p, pullback = jax.vjp(entmax_bisect, z, alpha_rows)
    return out, (p, *pullback(w))


def _value_and_pullback(f, w, z):
    """(f(z), ∂(Σ w ⊙ f(z))/∂z) from one forward pass: smaller programs to compile."""
    p, pullback = jax.vjp(f, z)
    return p, pullback(w.astype(p.dtype))[0]


def _reference_without_masked(z, alpha):
    """The map applied to the finite entries only, scattered back with zeros (NumPy, float64)."""
    p = np.zeros_like(z)
    for i, row in enumerate(z):
        keep = np.isfinite(row)
        if keep.any():
            p[i, keep] = np_entmax(row[keep], alpha)
    return p


@pytest.mark.slow
def test_masked_entries_get_zero_probability_and_finite_gradients():
    w = np.random.default_rng(0).standard_normal(MASKED.shape)
    alpha_rows = jnp.array([[1.0], [1.5], [2.0], [3.0]])
    maps, (p_learned, gz_learned, galpha) = _values_and_grads(MASKED, w, alpha_rows)
    masked = np.isneginf(MASKED)
    for name, (p, grad) in maps.items():
        p, grad = np.asarray(p), np.asarray(grad)
        assert np.all(p[masked] == 0.0), name  # exactly zero
        np.testing.assert_allclose(
            p, _reference_without_masked(MASKED, MAPS[name][1]), atol=1e-12, err_msg=name
        )
        assert np.all(np.isfinite(grad)), name
        assert np.all(grad[masked] == 0.0) and np.all(grad[2] == 0.0), name
        assert np.max(np.abs(grad[:2])) > 1e-3, name  # unmasked rows still learn
    # One α per row, traced; the α-gradient of each row is that of its unmasked entries.
    assert np.all(np.asarray(p_learned)[masked] == 0.0) and np.all(np.isfinite(gz_learned))
    assert np.all(np.asarray(gz_learned)[masked] == 0.0)
    assert np.all(np.isfinite(galpha))
    expected_p = np.zeros_like(MASKED)
    expected_galpha = np.zeros(4)
    for i, alpha in enumerate([1.0, 1.5, 2.0, 3.0]):
        keep = np.isfinite(MASKED[i])
        if keep.any():
            expected_p[i, keep] = np_entmax(MASKED[i, keep], alpha)
            expected_galpha[i] = w[i, keep] @ np_alpha_grad(expected_p[i, keep], alpha)
    np.testing.assert_allclose(p_learned, expected_p, atol=1e-12)
    np.testing.assert_allclose(galpha[:, 0], expected_galpha, atol=1e-9)
    assert galpha[2, 0] == 0.0 and galpha[3, 0] == 0.0  # fully masked / single entry: p does not move


# ----------------------------------------------------------------------------------------
# Huge and peaked scores, in float16, float32 and float64
# ----------------------------------------------------------------------------------------

PEAKED = np.array(
    [
        [1e4, 0.0, -1e4, 5e3, -5e3],  # one-hot
        [-1e4, -1e4, -1e4, -1e4, 1e4],  # one-hot on the last entry
        [1e4, 1e4 - 0.5, 1e4 - 1.0, 1e4 - 3.0, -1e4],  # large offset, finite differences between entries
        [-1e4, -1e4 + 0.25, -1e4 + 0.5, -1e4, -1e4 + 2.0],
        [-INF, -INF, -INF, -INF, -INF],  # fully masked, in every dtype
        [-INF, 1e4, -INF, -1e4, 1e4 - 1.0],  # masked and huge
    ]
)
PEAKED_ATOL = {jnp.float16: 1e-3, jnp.float32: 1e-6, jnp.float64: 1e-12}


@functools.cache
def _peaked_values_and_grads():
    """Every map and its gradient on PEAKED cast to each dtype: one compilation for all dtypes."""
    w = np.random.default_rng(1).standard_normal(PEAKED.shape)
    zs = [jnp.asarray(PEAKED, dtype) for dtype in PEAKED_ATOL]

    def values_and_grads(z):
        return {name: _value_and_pullback(f, w, z) for name, (f, _) in MAPS.items()}

    outputs = jax.jit(lambda zs: [values_and_grads(z) for z in zs])(zs)
    return {dtype: (z, out) for dtype, z, out in zip(PEAKED_ATOL, zs, outputs, strict=True)}


@pytest.mark.slow
@pytest.mark.parametrize("dtype", list(PEAKED_ATOL), ids=lambda d: jnp.dtype(d).name)
def test_large_and_peaked_scores(dtype):
    z, outputs = _peaked_values_and_grads()[dtype]
    z64 = np.asarray(z, np.float64)  # the reference sees the same rounded scores
    for name, (p, grad) in outputs.items():
        p64, grad64 = np.asarray(p, np.float64), np.asarray(grad, np.float64)
        assert p.dtype == grad.dtype == jnp.dtype(dtype), name
        reference = _reference_without_masked(z64, MAPS[name][1])
        np.testing.assert_allclose(p64, reference, atol=PEAKED_ATOL[dtype], err_msg=name)
        np.testing.assert_array_equal(p64[:2], np.eye(5)[[0, 4]], err_msg=name)  # exactly one-hot
        assert np.all(p64[4] == 0.0) and np.all(p64[5, [0, 2]] == 0.0), name
        assert np.all(np.isfinite(grad64)) and np.all(grad64[4] == 0.0), name


@pytest.mark.slow
def test_very_spread_scores_float32_match_float64():
    """Scores of scale 1e4 (float32): the threshold search must not lose the threshold."""
    z = jnp.asarray(1e4 * np.random.default_rng(2).standard_normal((64, 16)), jnp.float32)
    z = z.at[:, 1].set(z[:, 0] - 0.5)  # a close runner-up in every row: not all one-hot
    z64 = np.asarray(z, np.float64)
    alpha_rows = jnp.asarray(1.0 + 2.0 * np.random.default_rng(3).uniform(size=(64, 1)), jnp.float32)
    outs = jax.jit(
        lambda z, a: {name: f(z) for name, (f, _) in MAPS.items()} | {"rows": entmax_bisect(z, a)}
    )(z, alpha_rows)
    for name, p in outs.items():
        alpha = np.asarray(alpha_rows, np.float64) if name == "rows" else MAPS[name][1]
        np.testing.assert_allclose(p, np_entmax(z64, alpha), atol=2e-6, err_msg=name)


# ----------------------------------------------------------------------------------------
# NaN and +inf
# ----------------------------------------------------------------------------------------


@pytest.mark.slow
def test_nan_poisons_its_row_only():
    rng = np.random.default_rng(4)
    z = rng.standard_normal((4, 6))
    z[1, 2] = np.nan
    z[3, 0] = np.inf  # documented: +inf also gives NaN in its row
    w = rng.standard_normal((4, 6))
    w[[1, 3]] = 0.0  # the loss does not depend on the bad rows

    @jax.jit
    def values_and_grads(z, w):
        out = {name: _value_and_pullback(f, w, z) for name, (f, _) in MAPS.items()}
        p, pullback = jax.vjp(lambda a: entmax_bisect(z, a), jnp.full((4, 1), 1.7))
        out["learned_rows"] = (p, pullback(w)[0])  # the α-gradient
        return out

    good = [0, 2]
    for name, (p, grad) in values_and_grads(z, w).items():
        p, grad = np.asarray(p), np.asarray(grad)
        assert np.all(np.isnan(p[[1, 3]])), name
        alpha = 1.7 if name == "learned_rows" else MAPS[name][1]
        np.testing.assert_allclose(p[good], np_entmax(z[good], alpha), atol=1e-12, err_msg=name)
        assert np.all(np.isfinite(grad[good])), name


# ----------------------------------------------------------------------------------------
# Invalid arguments: clear errors that name the argument
# ----------------------------------------------------------------------------------------

X = jnp.array([[0.5, 1.0, -1.0], [2.0, 0.0, 1.0]])
ALL = [softmax, sparsemax, entmax15, entmax_bisect]


def _call(f, x, **kwargs):
    return f(x, **kwargs)


@pytest.mark.parametrize(
    "alpha", [0.5, 0.0, -1.0, 0.999, np.float32(0.5), jnp.array(0.5), jnp.array([[1.2], [0.9]])]
)
def test_concrete_alpha_below_one_raises(alpha):
    with pytest.raises(ValueError, match="alpha"):
        entmax_bisect(X, alpha)


@pytest.mark.parametrize("alpha", [np.nan, np.inf, -np.inf, jnp.array(np.nan), jnp.array([[1.5], [np.inf]])])
def test_non_finite_alpha_raises(alpha):
    with pytest.raises(ValueError, match="alpha"):
        entmax_bisect(X, alpha)


@pytest.mark.parametrize("alpha", [None, "1.5", True, jnp.array(True), [1.5, "a"]])
def test_non_numeric_alpha_raises_type_error_naming_alpha(alpha):
    with pytest.raises(TypeError, match="alpha"):
        entmax_bisect(X, alpha)


@pytest.mark.parametrize(
    "alpha_shape",
    [(2, 3), (3,), (1, 3), (2, 1, 1, 1), (5, 1)],
    ids=["per_entry", "along_axis", "row_along_axis", "too_many_dims", "no_broadcast"],
)
def test_alpha_of_wrong_shape_raises(alpha_shape):
    with pytest.raises(ValueError, match="alpha"):
        entmax_bisect(X, jnp.full(alpha_shape, 1.5))


@pytest.mark.parametrize("f", [entmax_bisect, jax.jit(entmax_bisect)], ids=["eager", "jit"])
def test_alpha_that_would_enlarge_x_is_refused_naming_both_shapes(f):
    # (5, 1) broadcasts with (1, 4) to (5, 4): one α per row, but x has one row.
    with pytest.raises(ValueError, match=r"alpha with shape \(5, 1\) .* x with shape \(1, 4\)"):
        f(jnp.zeros((1, 4)), jnp.full((5, 1), 1.5))


def test_alpha_shape_checked_along_the_chosen_axis():
    alpha_per_column = jnp.full((1, 3), 1.5)  # size 1 along axis 0: fine
    p = jax.jit(entmax_bisect, static_argnames="axis")(X, alpha_per_column, axis=0)
    np.testing.assert_allclose(p, np_entmax(np.asarray(X).T, 1.5).T, atol=1e-12)
    with pytest.raises(ValueError, match="alpha"):
        entmax_bisect(X, jnp.full((2, 1), 1.5), axis=0)


@pytest.mark.parametrize("f", ALL, ids=lambda f: f.__name__)
@pytest.mark.parametrize("axis", [2, -3, 10])
def test_axis_out_of_range_raises(f, axis):
    with pytest.raises(ValueError, match="axis"):
        _call(f, X, axis=axis)


@pytest.mark.parametrize("f", ALL, ids=lambda f: f.__name__)
@pytest.mark.parametrize("axis", [1.0, "1", None, (0, 1)])
def test_non_integer_axis_raises(f, axis):
    with pytest.raises(TypeError, match="axis"):
        _call(f, X, axis=axis)


@pytest.mark.parametrize("f", ALL, ids=lambda f: f.__name__)
def test_empty_axis_raises(f):
    with pytest.raises(ValueError, match="axis"):
        _call(f, jnp.zeros((3, 0)))
    _call(f, jnp.zeros((0, 3)))  # an empty batch axis is fine: nothing to normalise, nothing wrong


@pytest.mark.parametrize("f", [softmax, sparsemax, entmax15, entmax_bisect], ids=lambda f: f.__name__)
@pytest.mark.parametrize(
    "x",
    [jnp.array([1, 2, 3]), np.array([True, False]), jnp.array([1 + 1j, 2])],
    ids=["int", "bool", "complex"],
)
def test_non_float_input_raises_type_error_naming_x(f, x):
    with pytest.raises(TypeError, match="x"):
        f(x)


@pytest.mark.parametrize("f", ALL, ids=lambda f: f.__name__)
def test_scalar_input_raises(f):
    with pytest.raises(ValueError, match="dimension"):
        _call(f, jnp.array(1.0))


def test_bad_n_iter_raises():
    with pytest.raises(ValueError, match="n_iter"):
        entmax_bisect(X, 1.5, n_iter=0)
    with pytest.raises(TypeError, match="n_iter"):
        entmax_bisect(X, 1.5, n_iter=2.5)
    with pytest.raises(ValueError, match="n_iter"):  # not an OverflowError from deep inside jax
        entmax_bisect(X, 1.5, n_iter=10**12)


@pytest.mark.parametrize("flag", [True, np.bool_(True)])
def test_booleans_are_not_integers(flag):
    """``axis=True`` and ``n_iter=True`` are mistakes, not 1."""
    with pytest.raises(TypeError, match="axis"):
        sparsemax(X, axis=flag)
    with pytest.raises(TypeError, match="n_iter"):
        entmax_bisect(X, 1.5, n_iter=flag)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [jnp.bfloat16, jnp.float16, jnp.float32, jnp.int32])
def test_concrete_alpha_of_any_jax_real_dtype_is_accepted(dtype):
    """bfloat16 is an ml_dtypes type, not a NumPy floating type: it must still count as a number."""
    alpha = jnp.array(2 if dtype == jnp.int32 else 1.5, dtype)
    want = np_entmax(np.asarray(X, np.float64), float(alpha))
    np.testing.assert_allclose(entmax_bisect(X, alpha), want, atol=1e-12)
    np.testing.assert_allclose(entmax_bisect(X, jnp.full((2, 1), alpha)), want, atol=1e-12)
    with pytest.raises(ValueError, match="alpha"):
        entmax_bisect(X, jnp.array(0.5, dtype) if dtype != jnp.int32 else jnp.array(0, dtype))


@pytest.mark.parametrize("alpha", [1e14, 2e6, np.float32(1e14), jnp.array([[1.5], [1e300]]), 10**400])
def test_concrete_alpha_above_the_limit_raises_naming_alpha(alpha):
    """Above ALPHA_LIMIT the search's arithmetic breaks down (NaN from α ≈ 5e13 in float32)."""
    with pytest.raises(ValueError, match=r"alpha must be at most 1e\+06"):
        entmax_bisect(X, alpha)


@pytest.mark.slow
def test_alpha_at_the_limit_is_the_argmax_without_nan():
    z = jnp.array([[0.0, 1.0, 0.5], [3.0, -1.0, 2.0]], jnp.float32)
    p = entmax_bisect(z, ALPHA_LIMIT)
    np.testing.assert_array_equal(p, np.eye(3)[[1, 0]])
    grad = jax.grad(lambda a: entmax_bisect(z, a)[0, 1])(jnp.float32(ALPHA_LIMIT / 2))
    assert np.isfinite(grad)


def test_traced_alpha_above_the_limit_is_clamped():
    z = jnp.array([[0.0, 1.0, 0.5]], jnp.float32)
    p = jax.jit(entmax_bisect)(z, jnp.float32(1e14))  # NaN before the clamp
    np.testing.assert_array_equal(p, [[0.0, 1.0, 0.0]])


# ----------------------------------------------------------------------------------------
# Traced α: values below 1 are clamped (softmax, zero α-gradient); NaN gives NaN
# ----------------------------------------------------------------------------------------


def test_traced_alpha_below_one_is_softmax_with_zero_alpha_gradient():
    z = np.random.default_rng(5).standard_normal((3, 6))
    w = np.random.default_rng(6).standard_normal((3, 6))
    alpha_rows = jnp.array([[0.5], [0.0], [1.5]])

    @jax.jit
    def value_and_alpha_grad(alpha_rows):
        return entmax_bisect(z, alpha_rows), jax.grad(lambda a: jnp.sum(w * entmax_bisect(z, a)))(alpha_rows)

    p, galpha = value_and_alpha_grad(alpha_rows)
    np.testing.assert_allclose(p[:2], np_entmax(z[:2], 1.0), atol=1e-14)
    np.testing.assert_allclose(p[2], np_entmax(z[2], 1.5), atol=1e-12)
    assert galpha[0, 0] == 0.0 and galpha[1, 0] == 0.0
    assert abs(galpha[2, 0]) > 1e-3


def test_traced_infinite_alpha_gives_nan():
    """Documented in entmax_bisect: a traced α of +inf gives NaN in its row only."""
    z = np.random.default_rng(8).standard_normal((2, 6))
    p = jax.jit(entmax_bisect)(z, jnp.array([[np.inf], [1.5]]))
    assert np.all(np.isnan(p[0])), p[0]
    np.testing.assert_allclose(p[1], np_entmax(z[1], 1.5), atol=1e-12)


def test_traced_nan_alpha_gives_nan():
    """Documented in entmax_bisect: a traced α that is NaN gives NaN (not silently softmax)."""
    z = np.random.default_rng(7).standard_normal((2, 6))
    p = jax.jit(entmax_bisect)(z, jnp.array([[np.nan], [1.5]]))
    assert np.all(np.isnan(p[0])), p[0]
    np.testing.assert_allclose(p[1], np_entmax(z[1], 1.5), atol=1e-12)
