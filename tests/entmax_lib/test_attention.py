"""Tests for entmax_lib.attention: masking, normalisation, learned α and flax compatibility.

The references are independent: attention weights are recomputed in NumPy from the module's
kernels and conftest's float64 bisection ``np_entmax``; α-gradients are checked against
central finite differences; flax's own ``MultiHeadAttention`` is the reference for the
projections and for softmax attention.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from references import np_entmax

from entmax_lib.attention import (
    ALPHA_MAX,
    ALPHA_MIN,
    NORMALISERS,
    EntmaxMultiHeadAttention,
    alpha_from_logit,
    attention_weights,
    make_attention_fn,
    normalise_scores,
)

HEADS, FEATURES = 4, 16
FIXED = {"softmax": 1.0, "entmax15": 1.5, "sparsemax": 2.0}


def _inputs(batch=3, length=6, seed=0):
    return jax.random.normal(jax.random.key(seed), (batch, length, FEATURES), jnp.float32)


def _padding_and_causal_mask(lengths, length):
    """(B, 1, L, L): key j allowed for query i iff j ≤ i and j < length of the sentence."""
    keys_valid = np.arange(length)[None, :] < np.asarray(lengths)[:, None]
    causal = np.tril(np.ones((length, length), bool))
    return keys_valid[:, None, None, :] & causal[None, None]


def _module(normaliser, seed=0):
    return EntmaxMultiHeadAttention(HEADS, FEATURES, normaliser, rngs=nnx.Rngs(seed))


def _kernel(linear):
    return np.asarray(linear.kernel[...], np.float64), np.asarray(linear.bias[...], np.float64)


def _numpy_weights(module, x, mask):
    """Attention weights recomputed in float64 NumPy from the module's kernels."""
    x = np.asarray(x, np.float64)
    wq, bq = _kernel(module.query)
    wk, bk = _kernel(module.key)
    q = np.einsum("bld,dhe->blhe", x, wq) + bq
    k = np.einsum("bld,dhe->blhe", x, wk) + bk
    scores = np.einsum("bqhe,bkhe->bhqk", q, k) / np.sqrt(q.shape[-1])
    scores = np.where(mask, scores, -np.inf)
    alpha = np.asarray(module.alpha(), np.float64)[:, None, None]
    return np_entmax(scores, alpha)


@pytest.mark.slow
@pytest.mark.parametrize("normaliser", list(NORMALISERS))
def test_masked_keys_get_zero_weight_and_rows_sum_to_one(normaliser):
    lengths = [6, 4, 2]
    x = _inputs()
    mask = _padding_and_causal_mask(lengths, 6)
    _, weights = _module(normaliser)(x, mask=jnp.asarray(mask), return_weights=True)
    weights = np.asarray(weights)
    assert weights.shape == (3, HEADS, 6, 6)
    assert np.all(weights[~np.broadcast_to(mask, weights.shape)] == 0.0)  # exactly zero
    assert np.all(weights >= 0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)  # every query has ≥ 1 allowed key
    # the first query of a causal row can only attend to itself
    np.testing.assert_allclose(weights[:, :, 0, 0], 1.0, atol=1e-6)


@pytest.mark.parametrize("normaliser", list(NORMALISERS))
def test_weights_match_numpy_reference(normaliser):
    module = _module(normaliser, seed=1)
    x = _inputs(seed=2)
    mask = _padding_and_causal_mask([6, 5, 3], 6)
    _, weights = module(x, mask=jnp.asarray(mask), return_weights=True)
    expected = _numpy_weights(module, x, mask)
    np.testing.assert_allclose(np.asarray(weights), expected, atol=2e-5)


def test_fixed_normalisers_are_sparse_where_softmax_is_not():
    x = 3.0 * _inputs(seed=3)
    dense = np.asarray(_module("softmax")(x, return_weights=True)[1])
    assert np.all(dense > 0)
    for normaliser in ("entmax15", "sparsemax"):
        weights = np.asarray(_module(normaliser)(x, return_weights=True)[1])
        assert np.mean(weights == 0) > 0.1, normaliser


def test_alpha_is_one_plus_sigmoid_clamped():
    logits = jnp.array([-20.0, -4.0, 0.0, 1.0, 30.0])
    alpha = np.asarray(alpha_from_logit(logits))
    expected = np.clip(1 + 1 / (1 + np.exp(-np.asarray(logits, np.float64))), 1.01, 2.0)
    np.testing.assert_allclose(alpha, expected, rtol=1e-6)
    assert alpha[0] == pytest.approx(ALPHA_MIN) and alpha[-1] == pytest.approx(ALPHA_MAX)
    assert np.all((alpha >= ALPHA_MIN) & (alpha <= ALPHA_MAX))


def test_learned_alpha_initialisation_and_range():
    module = EntmaxMultiHeadAttention(8, FEATURES, "alpha_entmax", rngs=nnx.Rngs(0))
    logits = np.asarray(module.alpha_logit[...])
    assert logits.shape == (8,) and 0.2 < logits.std() < 3.0  # a ~ N(0, 1), not a constant
    alpha = np.asarray(module.alpha())
    assert np.all((alpha >= ALPHA_MIN) & (alpha <= ALPHA_MAX))
    for normaliser, value in FIXED.items():
        np.testing.assert_array_equal(np.asarray(_module(normaliser).alpha()), value)
        assert not hasattr(_module(normaliser), "alpha_logit")


def test_alpha_rngs_keep_other_weights_identical():
    plain = EntmaxMultiHeadAttention(HEADS, FEATURES, "softmax", rngs=nnx.Rngs(5))
    learned = EntmaxMultiHeadAttention(
        HEADS, FEATURES, "alpha_entmax", rngs=nnx.Rngs(5), alpha_rngs=nnx.Rngs(99)
    )
    for name in ("query", "key", "value", "out"):
        np.testing.assert_array_equal(getattr(plain, name).kernel[...], getattr(learned, name).kernel[...])


@nnx.jit
def _loss(module, x, mask, target):
    return jnp.sum((module(x, mask=mask) - target) ** 2)


@pytest.mark.slow
def test_alpha_gradients_are_nonzero_and_match_finite_differences():
    module = EntmaxMultiHeadAttention(HEADS, FEATURES, "alpha_entmax", rngs=nnx.Rngs(7))
    # float64 copy of every parameter, so that finite differences are accurate
    graphdef, state = nnx.split(module)
    module = nnx.merge(graphdef, jax.tree.map(lambda v: v.astype(jnp.float64), state))
    x = jnp.asarray(_inputs(seed=4), jnp.float64)
    target = jnp.asarray(_inputs(seed=5), jnp.float64)
    mask = jnp.asarray(_padding_and_causal_mask([6, 5, 4], 6))
    grad = np.asarray(nnx.grad(_loss)(module, x, mask, target).alpha_logit[...])
    assert np.all(np.abs(grad) > 1e-6), grad

    logits = module.alpha_logit[...]
    eps = 1e-5
    for h in range(HEADS):
        losses = []
        for sign in (1, -1):
            module.alpha_logit[...] = logits.at[h].add(sign * eps)
            losses.append(float(_loss(module, x, mask, target)))
        np.testing.assert_allclose(grad[h], (losses[0] - losses[1]) / (2 * eps), rtol=1e-4, atol=1e-8)


@pytest.mark.slow
def test_alpha_gradient_through_nnx_grad():
    module = EntmaxMultiHeadAttention(HEADS, FEATURES, "alpha_entmax", rngs=nnx.Rngs(3))
    x, target = _inputs(seed=6), _inputs(seed=7)
    grads = nnx.grad(_loss)(module, x, None, target)
    assert np.all(np.abs(np.asarray(grads.alpha_logit[...])) > 0)


def _flax_mha(module, attention_fn=None):
    kwargs = {} if attention_fn is None else {"attention_fn": attention_fn}
    mha = nnx.MultiHeadAttention(HEADS, FEATURES, decode=False, rngs=nnx.Rngs(123), **kwargs)
    for name in ("query", "key", "value", "out"):
        getattr(mha, name).kernel[...] = getattr(module, name).kernel[...]
        getattr(mha, name).bias[...] = getattr(module, name).bias[...]
    return mha


@pytest.mark.parametrize("normaliser", list(NORMALISERS))
def test_equals_flax_multi_head_attention_with_attention_fn(normaliser):
    module = _module(normaliser, seed=11)
    alpha = module.alpha() if normaliser == "alpha_entmax" else None
    mha = _flax_mha(module, make_attention_fn(normaliser, alpha=alpha))
    q, kv = _inputs(seed=8), _inputs(length=5, seed=9)
    mask = jnp.asarray(np.arange(5)[None, :] < np.array([5, 3, 1])[:, None])[:, None, None, :]
    expected, weights = module(q, kv, mask=mask, return_weights=True)
    got = mha(q, kv, mask=mask, sow_weights=True)
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), atol=1e-5)
    (sown,) = jax.tree.leaves(nnx.pop(mha, nnx.Intermediate))
    np.testing.assert_allclose(np.asarray(sown), np.asarray(weights), atol=1e-6)


def test_softmax_equals_flax_default_attention():
    module = _module("softmax", seed=12)
    mha = _flax_mha(module)  # flax's own dot_product_attention
    x = _inputs(seed=10)
    mask = jnp.asarray(_padding_and_causal_mask([6, 4, 2], 6))
    np.testing.assert_allclose(np.asarray(mha(x, mask=mask)), np.asarray(module(x, mask=mask)), atol=1e-5)


def test_attention_fn_is_causal_and_dropout():
    module = _module("sparsemax", seed=13)
    fn = make_attention_fn("sparsemax")
    x = _inputs(seed=14)
    q, k, v = module.query(x), module.key(x), module.value(x)
    causal = jnp.tril(jnp.ones((6, 6), bool))
    np.testing.assert_allclose(
        np.asarray(fn(q, k, v, is_causal=True, deterministic=True)),
        np.asarray(fn(q, k, v, mask=causal, deterministic=True)),
        atol=1e-6,
    )
    dropped = fn(q, k, v, dropout_rate=0.5, dropout_rng=jax.random.key(0), deterministic=False)
    assert not np.allclose(np.asarray(dropped), np.asarray(fn(q, k, v, deterministic=True)))


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="normaliser"):
        EntmaxMultiHeadAttention(HEADS, FEATURES, "relu", rngs=nnx.Rngs(0))
    with pytest.raises(ValueError, match="divisible"):
        EntmaxMultiHeadAttention(3, FEATURES, "softmax", rngs=nnx.Rngs(0))
    with pytest.raises(ValueError, match="alpha"):
        make_attention_fn("alpha_entmax")
    with pytest.raises(ValueError, match="alpha"):
        normalise_scores(jnp.zeros((2, HEADS, 3, 3)), "alpha_entmax", alpha=jnp.ones(3) * 1.5)


@pytest.mark.parametrize("num_heads", [0, -2, 2.0, True])
def test_num_heads_must_be_a_positive_integer(num_heads):
    with pytest.raises(ValueError, match="num_heads must be an integer >= 1"):
        EntmaxMultiHeadAttention(num_heads, FEATURES, "softmax", rngs=nnx.Rngs(0))


def test_num_heads_accepts_numpy_integers():
    assert EntmaxMultiHeadAttention(np.int64(2), FEATURES, "softmax", rngs=nnx.Rngs(0)).head_dim == 8


@pytest.mark.slow
@pytest.mark.parametrize("shape", [(5,), (3, 5)])
def test_alpha_entmax_needs_a_head_axis(shape):
    with pytest.raises(ValueError, match=r"scores of shape \(\.\.\., H, Lq, Lk\)"):
        normalise_scores(jnp.zeros(shape), "alpha_entmax", 1.5)
    # With a head axis the same call works: a number is one α for every head.
    p = normalise_scores(jnp.zeros((2, 3, 5)), "alpha_entmax", 1.5)
    np.testing.assert_allclose(np.asarray(p).sum(-1), 1.0, atol=1e-6)


@pytest.mark.slow
def test_bfloat16_parameters_outside_jit():
    """A layer cast to bfloat16 (its α logits too) runs eagerly: a concrete bf16 α is a number."""
    layer = EntmaxMultiHeadAttention(2, 8, "alpha_entmax", rngs=nnx.Rngs(0))
    graphdef, state = nnx.split(layer)
    layer = nnx.merge(graphdef, jax.tree.map(lambda a: a.astype(jnp.bfloat16), state))
    x = jax.random.normal(jax.random.key(1), (1, 3, 8), jnp.bfloat16)
    out, weights = layer(x, return_weights=True)
    assert out.dtype == jnp.bfloat16 and weights.dtype == jnp.bfloat16
    np.testing.assert_allclose(np.asarray(weights, np.float32).sum(-1), 1.0, atol=2e-2)


# --- bad input round two: meaning-changing arguments are refused, naming the argument ---------


@pytest.mark.slow
def test_an_additive_float_mask_is_refused_not_read_as_booleans():
    q = k = jax.random.normal(jax.random.key(0), (4, 2, 8))
    valid = jnp.arange(4) < 3
    additive = jnp.where(valid, 0.0, -1e9)[None, None, :]  # the other convention
    with pytest.raises(TypeError, match="mask must be boolean"):
        attention_weights(q, k, "softmax", mask=additive)
    layer = EntmaxMultiHeadAttention(2, 8, "sparsemax", rngs=nnx.Rngs(0))
    with pytest.raises(TypeError, match="mask must be boolean"):
        layer(jnp.ones((1, 4, 8)), mask=additive)
    fn = make_attention_fn("entmax15")
    with pytest.raises(TypeError, match="mask must be boolean"):
        fn(q, k, k, mask=additive)
    # as bias, the additive mask means what it says
    weights = attention_weights(q, k, "sparsemax", bias=jnp.where(valid, 0.0, -jnp.inf)[None, None, :])
    assert np.all(np.asarray(weights)[..., 3] == 0.0)


@pytest.mark.parametrize("normaliser", ["softmax", "entmax15", "sparsemax"])
def test_alpha_for_a_fixed_map_is_refused(normaliser):
    with pytest.raises(ValueError, match="alpha is only for normaliser 'alpha_entmax'"):
        make_attention_fn(normaliser, alpha=1.5)
    with pytest.raises(ValueError, match="alpha is only for"):
        normalise_scores(jnp.zeros((1, 2, 3, 3)), normaliser, alpha=jnp.array([1.5, 1.5]))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"n_iter": 0}, "n_iter"),
        ({"n_iter": True}, "n_iter"),
        ({"in_features": 0}, "in_features"),
        ({"in_features": 16.0}, "in_features"),
        ({"qkv_features": 0}, "qkv_features"),
        ({"dropout_rate": 1.0}, "dropout_rate"),
        ({"dropout_rate": "0.1"}, "dropout_rate"),
    ],
)
def test_layer_arguments_are_checked_when_the_layer_is_made(kwargs, name):
    settings = {"num_heads": 2, "in_features": 16, "normaliser": "alpha_entmax", **kwargs}
    with pytest.raises(ValueError, match=name):
        EntmaxMultiHeadAttention(rngs=nnx.Rngs(0), **settings)
    with pytest.raises(ValueError, match="n_iter"):
        make_attention_fn("alpha_entmax", alpha=1.5, n_iter=0)


@pytest.mark.slow
def test_layer_dropout_acts_only_with_a_key_and_returns_the_weights_before_it():
    layer = EntmaxMultiHeadAttention(2, 8, "entmax15", rngs=nnx.Rngs(0), dropout_rate=0.5)
    x = jax.random.normal(jax.random.key(1), (2, 5, 8))
    plain, weights = layer(x, return_weights=True)
    again, _ = layer(x, return_weights=True, dropout_key=None)
    np.testing.assert_array_equal(plain, again)  # no key: deterministic
    dropped, dropped_weights = layer(x, return_weights=True, dropout_key=jax.random.key(2))
    np.testing.assert_array_equal(dropped_weights, weights)  # analyses see the weights themselves
    assert not np.allclose(dropped, plain, atol=1e-4)
    # the same key, the same mask
    np.testing.assert_array_equal(layer(x, dropout_key=jax.random.key(2)), dropped)


def test_learns_alpha_names_the_one_learned_normaliser():
    from entmax_lib.attention import learns_alpha

    assert [n for n in NORMALISERS if learns_alpha(n)] == ["alpha_entmax"]
    with pytest.raises(ValueError, match="normaliser must be one of"):
        learns_alpha("relu")
