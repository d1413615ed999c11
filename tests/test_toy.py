"""Tests for entmax_lib.toy: the sparse self-attention toy of Chapter 4.

References are independent of the module: the data are checked against the generating
formulas (exact counts, empirical means with explicit statistical tolerances), attention
weights against ``jax.nn.softmax`` and conftest's float64 NumPy bisection ``np_entmax``
applied to scores recomputed by hand from the parameters, and the end-to-end run against
chance and against its own documented shapes.
"""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from references import np_entmax

from entmax_lib import toy

CONFIG = toy.TaskConfig()


# ----------------------------------------------------------------------------------------
# Data generator
# ----------------------------------------------------------------------------------------


def test_exactly_k_informative_positions_and_they_match_the_mask():
    data = toy.make_dataset(0, 200, 24, CONFIG)
    assert data.tokens.shape == (200, 24, CONFIG.dim) and data.tokens.dtype == np.float32
    assert data.positions.shape == (200, CONFIG.n_informative)
    np.testing.assert_array_equal(data.informative.sum(-1), CONFIG.n_informative)
    assert np.all(np.diff(data.positions, axis=-1) > 0)  # sorted and distinct
    rebuilt = np.zeros_like(data.informative)
    np.put_along_axis(rebuilt, data.positions, True, axis=-1)
    np.testing.assert_array_equal(rebuilt, data.informative)


def test_positions_cover_the_sequence_uniformly():
    length, n = 16, 4000
    data = toy.make_dataset(1, n, length, CONFIG)
    freq = data.informative.mean(0)  # expected K/L at every position
    expected = CONFIG.n_informative / length
    tolerance = 5 * np.sqrt(expected * (1 - expected) / n)
    np.testing.assert_allclose(freq, expected, atol=tolerance)


def test_classes_are_balanced():
    data = toy.make_dataset(2, 400, 8, CONFIG)
    np.testing.assert_array_equal(np.bincount(data.labels, minlength=CONFIG.n_classes), 100)
    assert not np.all(np.diff(data.labels) >= 0)  # shuffled, not sorted


def test_same_seed_same_data_other_seed_other_data():
    a, b, c = (toy.make_dataset(s, 32, 16, CONFIG) for s in (7, 7, 8))
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a.tokens, c.tokens)
    assert not np.array_equal(a.positions, c.positions)
    assert not np.array_equal(
        toy.make_dataset([1234, 16], 32, 16).tokens, toy.make_dataset([0, 16], 32, 16).tokens
    )


def test_task_directions_are_orthogonal_with_the_configured_norms():
    prototypes, signal = toy.task_directions(CONFIG)
    gram = prototypes @ prototypes.T
    np.testing.assert_allclose(gram, CONFIG.class_strength**2 * np.eye(CONFIG.n_classes), atol=1e-5)
    np.testing.assert_allclose(prototypes @ signal, 0.0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(signal), CONFIG.signal_strength, rtol=1e-5)


def test_distractors_carry_no_class_signal_and_informative_tokens_do():
    """Per class, distractors average to 0; informative tokens to μ_y + γu (5σ/√N tolerance)."""
    data = toy.make_dataset(3, 2000, 16, CONFIG)
    prototypes, signal = toy.task_directions(CONFIG)
    for c in range(CONFIG.n_classes):
        in_class = data.labels == c
        distractors = data.tokens[in_class][~data.informative[in_class]]
        informative = data.tokens[in_class][data.informative[in_class]]
        tol_d = 5 * CONFIG.noise_std / np.sqrt(len(distractors))
        tol_i = 5 * CONFIG.noise_std / np.sqrt(len(informative))
        np.testing.assert_allclose(distractors.mean(0), 0.0, atol=tol_d)
        np.testing.assert_allclose(distractors.std(0), CONFIG.noise_std, rtol=0.05)
        np.testing.assert_allclose(informative.mean(0), prototypes[c] + signal, atol=tol_i)


def test_bad_generator_input_raises():
    with pytest.raises(ValueError, match="length"):
        toy.make_dataset(0, 4, CONFIG.n_informative - 1, CONFIG)
    with pytest.raises(ValueError, match="n_examples"):
        toy.make_dataset(0, 0, 8, CONFIG)
    with pytest.raises(ValueError, match="dim"):
        toy.TaskConfig(dim=4, n_classes=4)
    with pytest.raises(ValueError, match="n_informative"):
        toy.TaskConfig(n_informative=0)


# ----------------------------------------------------------------------------------------
# Model
# ----------------------------------------------------------------------------------------


def _hand_scores(model, tokens):
    """s = (X W_k + b_k) w / √d, recomputed in NumPy from the parameters."""
    kernel = np.asarray(model.keys.kernel[...], np.float64)
    bias = np.asarray(model.keys.bias[...], np.float64)
    query = np.asarray(model.query[...], np.float64)
    return (np.asarray(tokens, np.float64) @ kernel + bias) @ query / np.sqrt(model.dim)


@pytest.fixture(scope="module")
def small_batch():
    return toy.make_dataset(5, 6, 32, CONFIG)


@pytest.fixture(scope="module")
def forward(small_batch):
    """Model, logits and attention of every variant on the small batch (each map compiled once)."""
    out = {}
    for seed, variant in enumerate(toy.VARIANTS):
        model = toy.make_model(variant, CONFIG, seed=seed, q_init=1.5)
        logits, attn = model(jnp.asarray(small_batch.tokens))
        out[variant] = (model, np.asarray(logits), np.asarray(attn))
    return out


@pytest.mark.parametrize("variant", list(toy.VARIANTS))
def test_model_shapes_and_attention_rows_sum_to_one(variant, forward):
    _, logits, attn = forward[variant]
    assert logits.shape == (6, CONFIG.n_classes)
    assert attn.shape == (6, 32)
    assert np.all(attn >= 0)
    np.testing.assert_allclose(attn.sum(-1), 1.0, atol=1e-5)


def test_q_equal_one_is_softmax_attention(forward, small_batch):
    model, _, attn = forward["softmax"]
    expected = jax.nn.softmax(jnp.asarray(_hand_scores(model, small_batch.tokens)), axis=-1)
    np.testing.assert_allclose(attn, np.asarray(expected), atol=1e-5)
    assert np.all(attn > 0)  # dense


@pytest.mark.parametrize("variant, q", [("entmax15", 1.5), ("sparsemax", 2.0), ("learned_q", 1.5)])
def test_entmax_attention_matches_numpy_bisection(variant, q, forward, small_batch):
    model, _, attn = forward[variant]
    np.testing.assert_allclose(float(model.q), q, rtol=1e-6)
    expected = np_entmax(_hand_scores(model, small_batch.tokens), q)
    np.testing.assert_allclose(attn, expected, atol=1e-4)


def test_sparsemax_attention_is_sparse(forward):
    _, _, attn = forward["sparsemax"]
    assert np.all((attn > 0).sum(-1) < attn.shape[-1])


def test_learned_q_gets_a_finite_nonzero_gradient(small_batch):
    model = toy.make_model("learned_q", CONFIG, seed=3, q_init=1.7)
    np.testing.assert_allclose(float(model.q), 1.7, rtol=1e-6)

    def loss(model):
        logits, _ = model(jnp.asarray(small_batch.tokens))
        return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(6), small_batch.labels])

    graphdef, state = nnx.split(model)
    grads = jax.jit(jax.grad(lambda state: loss(nnx.merge(graphdef, state))))(state)
    g = float(grads["q_logit"][...])
    assert np.isfinite(g) and g != 0.0


def test_bad_model_input_raises():
    with pytest.raises(ValueError, match="variant"):
        toy.make_model("relu", CONFIG, seed=0)
    with pytest.raises(ValueError, match="q_init"):
        toy.make_model("learned_q", CONFIG, seed=0, q_init=1.0)
    with pytest.raises(ValueError, match="q must be"):
        toy.AttentionPoolingClassifier(8, 4, q=0.5, rngs=nnx.Rngs(0))


def test_pooling_baselines_bracket_the_task():
    data = toy.make_dataset(9, 2000, 64, CONFIG)
    base = toy.pooling_baselines(data, CONFIG)
    # Oracle: the mean of K informative tokens has noise σ/√K along each prototype
    # difference of length ρ√2, so it is nearly always right; uniform pooling is diluted.
    assert base["oracle"] > 0.97
    assert 1 / CONFIG.n_classes < base["uniform"] < base["oracle"] - 0.2


# ----------------------------------------------------------------------------------------
# End to end
# ----------------------------------------------------------------------------------------

LENGTHS = (8,)
SEEDS = (0, 1)
STEPS, EVERY = 100, 10


@pytest.fixture(scope="module")
def tiny_run():
    return toy.run_experiment(
        lengths=LENGTHS,
        seeds=SEEDS,
        steps=STEPS,
        n_train=512,
        n_test=256,
        n_attention_examples=3,
        q_history_every=EVERY,
    )


def test_run_experiment_returns_the_documented_json(tiny_run):
    r = json.loads(json.dumps(tiny_run))  # plain lists and floats only
    assert r["lengths"] == list(LENGTHS) and r["seeds"] == list(SEEDS)
    assert r["chance"] == pytest.approx(1 / CONFIG.n_classes)
    n_len = len(LENGTHS)
    for variant in toy.VARIANTS:
        entry = r[variant]
        for key in ("accuracy", "informative_mass", "support", "support_hits", "score_gap"):
            assert len(entry[key]) == n_len
            assert len(entry[key + "_std"]) == n_len
            assert np.array(entry[key + "_per_seed"]).shape == (len(SEEDS), n_len)
            np.testing.assert_allclose(np.mean(entry[key + "_per_seed"], 0), entry[key], rtol=1e-9)
        assert np.all((np.array(entry["accuracy"]) >= 0) & (np.array(entry["accuracy"]) <= 1))
        for key in ("informative_mass", "support_hits"):
            assert np.all((np.array(entry[key]) >= 0) & (np.array(entry[key]) <= 1))
        assert np.all(np.array(entry["support"]) <= np.array(LENGTHS))
        assert np.array(entry["attention"]).shape == (3, max(LENGTHS))
        np.testing.assert_allclose(np.sum(entry["attention"], -1), 1.0, atol=1e-5)
    np.testing.assert_allclose(r["softmax"]["support"], LENGTHS)  # softmax is dense
    np.testing.assert_allclose(r["softmax"]["support_hits"], 1.0)
    learned = r["learned_q"]
    assert len(learned["q_history"]) == n_len and len(learned["final_q"]) == n_len
    assert learned["q_history_steps"] == list(range(1, STEPS + 1, EVERY))
    assert len(learned["q_history"][0]) == STEPS // EVERY
    assert np.array(learned["q_history_per_seed"]).shape == (n_len, len(SEEDS), STEPS // EVERY)
    assert np.all(np.array(learned["final_q"]) > 1.0)
    assert learned["q_history"][0][0] == pytest.approx(1.5, abs=0.05)  # starts near q_init
    positions = np.array(r["examples"]["positions"])
    assert positions.shape == (3, CONFIG.n_informative) and positions.max() < max(LENGTHS)
    assert len(r["baselines"]["oracle_accuracy"]) == n_len


def test_short_training_beats_chance_clearly(tiny_run):
    chance = tiny_run["chance"]
    for variant in toy.VARIANTS:
        assert min(tiny_run[variant]["accuracy_per_seed"][0]) > chance + 0.4, variant  # L = 8
    # Trained attention prefers the informative tokens over the uniform K/L.
    assert tiny_run["softmax"]["informative_mass"][0] > CONFIG.n_informative / LENGTHS[0] + 0.1


def test_zero_steps_returns_the_untrained_models():
    data = toy.make_dataset(0, 32, 8, CONFIG)
    result = toy.train("learned_q", data, seeds=(0, 1), config=CONFIG, steps=0, q_init=1.7)
    assert result.loss.shape == (2, 0) and len(result.states) == 2
    fresh = toy.make_model("learned_q", CONFIG, seed=1, q_init=1.7)
    np.testing.assert_array_equal(result.model(1).query[...], fresh.query[...])
    np.testing.assert_allclose(float(result.model(0).q), 1.7, rtol=1e-6)


def test_training_is_deterministic_given_the_seed(tiny_run):
    # Same shapes and settings as ``tiny_run``'s learned-q runs, so the compiled loop is reused.
    data = toy.make_dataset([0, LENGTHS[0]], 512, LENGTHS[0], CONFIG)
    result = toy.train("learned_q", data, seeds=(4, 4, 5), config=CONFIG, steps=STEPS, batch_size=64)
    np.testing.assert_array_equal(result.loss[0], result.loss[1])
    np.testing.assert_array_equal(result.q[0], result.q[1])
    assert not np.array_equal(result.loss[0], result.loss[2])  # another seed, another run
    assert result.q[0, -1] != result.q[0, 0]  # q did move
