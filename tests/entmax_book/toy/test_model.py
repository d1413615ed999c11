"""Tests for entmax_book.toy.model: the attention-pooling classifier and its learned α.

Attention weights are checked against ``jax.nn.softmax`` and the float64 NumPy bisection
``np_entmax`` of ``references.py`` applied to scores recomputed by hand from the parameters,
the learned α's gradient against finite differences.
"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from references import np_entmax

from entmax_book.toy import model, task
from entmax_book.toy.config import DEMO_ALPHA_INIT, ToyConfig, logit_for_alpha
from entmax_lib.attention import NORMALISERS

CONFIG = ToyConfig()


def _hand_scores(params, tokens):
    """s = X W_k w / √d, recomputed in NumPy from the parameters."""
    keys = np.asarray(params["keys"], np.float64)
    query = np.asarray(params["query"], np.float64)
    return np.asarray(tokens, np.float64) @ keys @ query / np.sqrt(len(query))


@pytest.fixture(scope="module")
def small_batch():
    return task.make_dataset(5, 6, 32, CONFIG)


def test_initial_weights_follow_the_demo():
    params = model.init_params(0, CONFIG)
    big = model.init_params(0, dataclasses.replace(CONFIG, query_scale=3.0))
    np.testing.assert_array_equal(params["readout_bias"], 0.0)
    np.testing.assert_allclose(big["query"], 3.0 * params["query"], rtol=1e-6)
    np.testing.assert_allclose(float(model.learned_alpha(params["alpha_logit"])), DEMO_ALPHA_INIT, rtol=1e-6)
    # Every weight N(0, 1/d): the empirical variance over many seeds' keys.
    keys = np.concatenate([np.ravel(model.init_params(s, CONFIG)["keys"]) for s in range(40)])
    np.testing.assert_allclose(keys.var(), 1 / CONFIG.dim, rtol=5 * np.sqrt(2 / keys.size))


@pytest.mark.slow
@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0, 1.3])
def test_forward_matches_independent_references(alpha, small_batch):
    params = model.init_params(1, dataclasses.replace(CONFIG, query_scale=4.0))
    logits, attn = model.forward(params, jnp.asarray(small_batch.tokens), alpha)
    s = _hand_scores(params, small_batch.tokens)
    expected = np.asarray(jax.nn.softmax(s, axis=-1)) if alpha == 1.0 else np_entmax(s, alpha)
    np.testing.assert_allclose(attn, expected, atol=1e-4)
    context = np.einsum("nl,nld->nd", expected, small_batch.tokens) @ np.asarray(params["values"])
    np.testing.assert_allclose(logits, context @ np.asarray(params["readout"]), atol=1e-3)
    if alpha == 2.0:
        assert np.all((np.asarray(attn) > 0).sum(-1) < 32)  # sparse


def test_bisection_entmax_forward_matches_the_reference(small_batch):
    s = _hand_scores(model.init_params(2, dataclasses.replace(CONFIG, query_scale=4.0)), small_batch.tokens)
    for alpha in (1.3, 1.5, 2.0):
        p = model.bisection_entmax(jnp.asarray(s, jnp.float32), alpha)
        np.testing.assert_allclose(p, np_entmax(s, alpha), atol=1e-4)


def test_learned_alpha_is_bounded_and_inverted():
    a = jnp.array([-50.0, -1.0, 0.0, 50.0], jnp.float32)
    np.testing.assert_allclose(model.learned_alpha(a), [1.1, DEMO_ALPHA_INIT, 1.95, 2.8], rtol=1e-6)
    for q in (1.2, 1.557, 2.0, 2.7):
        assert float(model.learned_alpha(logit_for_alpha(q))) == pytest.approx(q, rel=1e-6)
    for bad in (1.0, 1.1, 2.8, 3.5, float("nan")):
        with pytest.raises(ValueError, match="alpha_init"):
            logit_for_alpha(bad)


@pytest.mark.slow
def test_learned_alpha_gradient_matches_finite_differences(small_batch):
    params = model.init_params(3, dataclasses.replace(CONFIG, query_scale=4.0))
    tokens, labels = jnp.asarray(small_batch.tokens, jnp.float32), jnp.asarray(small_batch.labels)

    def loss(logit):
        p = {**params, "alpha_logit": logit}
        logits, _ = model.forward(p, tokens, model.learned_alpha(logit))
        return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(6), labels])

    g = float(jax.grad(loss)(jnp.float32(-1.0)))
    h = 1e-2
    fd = (float(loss(jnp.float32(-1.0 + h))) - float(loss(jnp.float32(-1.0 - h)))) / (2 * h)
    assert np.isfinite(g) and g != 0.0
    np.testing.assert_allclose(g, fd, rtol=0.05, atol=1e-4)


def test_fixed_score_norm_fixes_the_scoring_vector(small_batch):
    params = model.init_params(4, CONFIG)
    tokens = jnp.asarray(small_batch.tokens)
    for scale in (0.5, 10.0):
        bigger = {**params, "keys": scale * params["keys"]}
        np.testing.assert_allclose(
            model.scores(bigger, tokens, score_norm=2.0),
            model.scores(params, tokens, score_norm=2.0),
            atol=1e-4,
        )
    v = np.asarray(params["keys"]) @ np.asarray(params["query"])
    expected = np.asarray(small_batch.tokens) @ (2.0 * v / np.linalg.norm(v))
    np.testing.assert_allclose(model.scores(params, tokens, score_norm=2.0), expected, atol=1e-4)


def test_variant_alpha_is_the_fixed_alpha_or_the_learned_one():
    params = model.init_params(0, CONFIG)
    for variant, alpha in NORMALISERS.items():
        if alpha is not None:
            assert model.variant_alpha(variant, params) == alpha
    shifted = {**params, "alpha_logit": jnp.float32(0.0)}
    assert float(model.variant_alpha("alpha_entmax", shifted)) == pytest.approx(1.1 + 1.7 / 2, rel=1e-6)
