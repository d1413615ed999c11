"""Tests for entmax_book.toy: the sparse self-attention toy of Chapter 4.

References are independent of the module: the data are checked against the generating
formulas (exact counts, empirical means with explicit statistical tolerances), attention
weights against ``jax.nn.softmax`` and the float64 NumPy bisection ``np_entmax`` of ``references.py``
applied to scores recomputed by hand from the parameters, the learned α's gradient against
finite differences, and the end-to-end run against chance and its own documented shapes.
Bad arguments must fail before any training (``train`` is replaced by a tripwire).
"""

import dataclasses
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from references import np_entmax

from entmax_book import toy
from entmax_lib.attention import NORMALISERS

CONFIG = toy.ToyConfig()


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
        toy.ToyConfig(dim=4, n_classes=4)
    with pytest.raises(ValueError, match="n_informative"):
        toy.ToyConfig(n_informative=0)
    with pytest.raises(ValueError, match="noise_std"):
        toy.ToyConfig(noise_std=float("nan"))
    with pytest.raises(ValueError, match="directions"):
        toy.ToyConfig(directions="diagonal")


def test_basis_directions_and_iid_labels_as_in_the_demo():
    config = toy.ORIGINAL
    prototypes, signal = toy.task_directions(config)
    np.testing.assert_array_equal(prototypes, 2.5 * np.eye(4, 16))
    np.testing.assert_array_equal(signal, 2.5 * np.eye(16)[4])
    data = toy.make_dataset(0, 4000, 8, config)
    counts = np.bincount(data.labels, minlength=4)
    assert len(set(counts.tolist())) > 1  # i.i.d. labels are not exactly balanced ...
    np.testing.assert_allclose(counts / 4000, 0.25, atol=5 * np.sqrt(0.25 * 0.75 / 4000))  # ... but uniform
    assert data.informative.sum(-1).max() == 3


# ----------------------------------------------------------------------------------------
# Model
# ----------------------------------------------------------------------------------------


def _hand_scores(params, tokens):
    """s = X W_k w / √d, recomputed in NumPy from the parameters."""
    keys = np.asarray(params["keys"], np.float64)
    query = np.asarray(params["query"], np.float64)
    return np.asarray(tokens, np.float64) @ keys @ query / np.sqrt(len(query))


@pytest.fixture(scope="module")
def small_batch():
    return toy.make_dataset(5, 6, 32, CONFIG)


def test_initial_weights_follow_the_demo():
    params = toy.init_params(0, CONFIG)
    big = toy.init_params(0, dataclasses.replace(CONFIG, query_scale=3.0))
    np.testing.assert_array_equal(params["readout_bias"], 0.0)
    np.testing.assert_allclose(big["query"], 3.0 * params["query"], rtol=1e-6)
    np.testing.assert_allclose(
        float(toy.learned_alpha(params["alpha_logit"])), toy.DEMO_ALPHA_INIT, rtol=1e-6
    )
    # Every weight N(0, 1/d): the empirical variance over many seeds' keys.
    keys = np.concatenate([np.ravel(toy.init_params(s, CONFIG)["keys"]) for s in range(40)])
    np.testing.assert_allclose(keys.var(), 1 / CONFIG.dim, rtol=5 * np.sqrt(2 / keys.size))


@pytest.mark.parametrize("alpha", [1.0, 1.5, 2.0, 1.3])
def test_forward_matches_independent_references(alpha, small_batch):
    params = toy.init_params(1, dataclasses.replace(CONFIG, query_scale=4.0))
    logits, attn = toy.forward(params, jnp.asarray(small_batch.tokens), alpha)
    s = _hand_scores(params, small_batch.tokens)
    expected = np.asarray(jax.nn.softmax(s, axis=-1)) if alpha == 1.0 else np_entmax(s, alpha)
    np.testing.assert_allclose(attn, expected, atol=1e-4)
    context = np.einsum("nl,nld->nd", expected, small_batch.tokens) @ np.asarray(params["values"])
    np.testing.assert_allclose(logits, context @ np.asarray(params["readout"]), atol=1e-3)
    if alpha == 2.0:
        assert np.all((np.asarray(attn) > 0).sum(-1) < 32)  # sparse


def test_bisection_entmax_forward_matches_the_reference(small_batch):
    s = _hand_scores(toy.init_params(2, dataclasses.replace(CONFIG, query_scale=4.0)), small_batch.tokens)
    for alpha in (1.3, 1.5, 2.0):
        p = toy.bisection_entmax(jnp.asarray(s, jnp.float32), alpha)
        np.testing.assert_allclose(p, np_entmax(s, alpha), atol=1e-4)


def test_learned_alpha_is_bounded_and_inverted():
    a = jnp.array([-50.0, -1.0, 0.0, 50.0], jnp.float32)
    np.testing.assert_allclose(toy.learned_alpha(a), [1.1, toy.DEMO_ALPHA_INIT, 1.95, 2.8], rtol=1e-6)
    for q in (1.2, 1.557, 2.0, 2.7):
        assert float(toy.learned_alpha(toy.logit_for_alpha(q))) == pytest.approx(q, rel=1e-6)
    for bad in (1.0, 1.1, 2.8, 3.5, float("nan")):
        with pytest.raises(ValueError, match="alpha_init"):
            toy.logit_for_alpha(bad)


def test_learned_alpha_gradient_matches_finite_differences(small_batch):
    params = toy.init_params(3, dataclasses.replace(CONFIG, query_scale=4.0))
    tokens, labels = jnp.asarray(small_batch.tokens, jnp.float32), jnp.asarray(small_batch.labels)

    def loss(logit):
        p = {**params, "alpha_logit": logit}
        logits, _ = toy.forward(p, tokens, toy.learned_alpha(logit))
        return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(6), labels])

    g = float(jax.grad(loss)(jnp.float32(-1.0)))
    h = 1e-2
    fd = (float(loss(jnp.float32(-1.0 + h))) - float(loss(jnp.float32(-1.0 - h)))) / (2 * h)
    assert np.isfinite(g) and g != 0.0
    np.testing.assert_allclose(g, fd, rtol=0.05, atol=1e-4)


def test_fixed_score_norm_fixes_the_scoring_vector(small_batch):
    params = toy.init_params(4, CONFIG)
    tokens = jnp.asarray(small_batch.tokens)
    for scale in (0.5, 10.0):
        bigger = {**params, "keys": scale * params["keys"]}
        np.testing.assert_allclose(
            toy.scores(bigger, tokens, score_norm=2.0), toy.scores(params, tokens, score_norm=2.0), atol=1e-4
        )
    v = np.asarray(params["keys"]) @ np.asarray(params["query"])
    expected = np.asarray(small_batch.tokens) @ (2.0 * v / np.linalg.norm(v))
    np.testing.assert_allclose(toy.scores(params, tokens, score_norm=2.0), expected, atol=1e-4)


def test_pooling_baselines_bracket_the_task():
    data = toy.make_dataset(9, 2000, 64, CONFIG)
    base = toy.pooling_baselines(data, CONFIG)
    # Oracle: the mean of K informative tokens has noise σ/√K along each prototype
    # difference of length ρ√2, so it is nearly always right; uniform pooling is diluted.
    assert base["oracle"] > 0.97
    assert 1 / CONFIG.n_classes < base["uniform"] < base["oracle"] - 0.2


# ----------------------------------------------------------------------------------------
# Bad arguments fail before any training, with the argument's name
# ----------------------------------------------------------------------------------------


class _Reached(Exception):
    pass


@pytest.fixture
def tripwire(monkeypatch):
    """Replace ``toy.train`` by a stub that records the training lengths and stops the run."""
    calls = []

    def fake_train(data, config):
        calls.append(np.asarray(data.tokens if isinstance(data, toy.Dataset) else data[0].tokens).shape[1])
        raise _Reached

    monkeypatch.setattr(toy, "train", fake_train)
    return calls


TINY = {"n_train": 8, "n_test": 8, "batch_size": 8}


@pytest.mark.parametrize(
    "overrides, error, name",
    [
        ({"steps": 0}, ValueError, "steps"),
        ({"steps": 2.5}, TypeError, "steps"),
        ({"history_every": 0}, ValueError, "history_every"),
        ({"variants": ("softmax", "softmax")}, ValueError, "variants"),
        ({"variants": ("relu",)}, ValueError, "variants"),
        ({"variants": ()}, ValueError, "variants"),
        ({"n_test": 0}, ValueError, "n_test"),
        ({"n_train": -5}, ValueError, "n_train"),
        ({"learning_rate": float("nan")}, ValueError, "learning_rate"),
        ({"learning_rate": -1.0}, ValueError, "learning_rate"),
        ({"noise_std": float("nan")}, ValueError, "noise_std"),
        ({"lengths": (8, 8)}, ValueError, "lengths"),
        ({"lengths": (2,)}, ValueError, "lengths"),
        ({"lengths": ()}, ValueError, "lengths"),
        ({"seeds": (0, 0)}, ValueError, "seeds"),
        ({"alpha_init": 1.0}, ValueError, "alpha_init"),
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"score_norm": 0.0}, ValueError, "score_norm"),
        ({"gradient": "numeric"}, ValueError, "gradient"),
        ({"attention_length": 16}, ValueError, "attention_length"),
        ({"lengths": (4,)}, ValueError, "lengths"),  # L = K: no distractor to score against
        ({"data_per_seed": "no"}, TypeError, "data_per_seed"),
        ({"balanced_classes": "no"}, TypeError, "balanced_classes"),
        ({"n_attention_examples": 50}, ValueError, "n_attention_examples"),
        ({"train_seed": -1}, ValueError, "train_seed"),
        ({"train_seed": 1.5}, TypeError, "train_seed"),
        ({"test_seed": "a"}, TypeError, "test_seed"),
        ({"batch_size": 9}, ValueError, "batch_size"),
    ],
)
def test_bad_run_arguments_fail_before_training(overrides, error, name, tripwire):
    with pytest.raises(error, match=name) as info:
        toy.run_experiment(**{"lengths": (8,), **TINY, **overrides})
    assert not tripwire  # nothing was trained
    if name in ("n_test", "n_train"):
        assert "length" not in str(info.value)  # a message about counts, not lengths


def test_a_bad_progress_setting_fails_before_training(tripwire, monkeypatch):
    monkeypatch.setenv("ENTMAX_PROGRESS", "2")
    with pytest.raises(ValueError, match="ENTMAX_PROGRESS"):
        toy.run_experiment(lengths=(8,), **TINY)
    assert not tripwire


def test_an_int_length_is_one_length(tripwire):
    with pytest.raises(_Reached):
        toy.run_experiment(lengths=8, **TINY)
    assert tripwire == [8]


def test_train_refuses_data_that_do_not_fit_the_config():
    data = toy.make_dataset(0, 8, 8, CONFIG)
    with pytest.raises(ValueError, match="per-seed"):
        toy.train([data, data], CONFIG)  # 2 datasets for 10 seeds
    with pytest.raises(ValueError, match="token dimension"):
        toy.train(data, toy.ToyConfig(dim=16))
    with pytest.raises(TypeError, match="Dataset"):
        toy.train((data.tokens, data.labels), CONFIG)


def test_original_is_the_demo():
    o = toy.ORIGINAL
    assert (o.dim, o.n_classes, o.n_informative) == (16, 4, 3)
    assert o.lengths == (4, 8, 16, 32) and o.seeds == (0, 1, 2)
    assert (o.steps, o.learning_rate, o.batch_size) == (5000, 5e-3, None)
    assert (o.n_train, o.n_test, o.attention_length) == (512, 2000, 16)
    assert o.alpha_init == pytest.approx(1.1 + 1.7 / (1 + np.exp(1.0)))
    assert o.data_per_seed and not o.balanced_classes and o.directions == "basis"


# ----------------------------------------------------------------------------------------
# End to end (trains small models)
# ----------------------------------------------------------------------------------------

LENGTHS = (6, 8)
SEEDS = (0, 1)
STEPS, EVERY = 60, 10


@pytest.fixture(scope="module")
def tiny_run():
    return toy.run_experiment(
        lengths=LENGTHS,
        seeds=SEEDS,
        steps=STEPS,
        learning_rate=2e-2,
        n_train=256,
        n_test=256,
        n_attention_examples=3,
        history_every=EVERY,
    )


@pytest.mark.slow
def test_run_experiment_returns_the_documented_json(tiny_run):
    r = json.loads(json.dumps(tiny_run))  # plain lists and floats only
    assert r["lengths"] == list(LENGTHS) and r["seeds"] == list(SEEDS)
    assert r["chance"] == pytest.approx(1 / CONFIG.n_classes)
    n_len = len(LENGTHS)
    for variant in NORMALISERS:
        entry = r[variant]
        for key in toy.METRICS:
            assert len(entry[key]) == n_len and len(entry[key + "_std"]) == n_len
            per_seed = np.array(entry[key + "_per_seed"])
            assert per_seed.shape == (len(SEEDS), n_len)
            np.testing.assert_allclose(per_seed.mean(0), entry[key], rtol=1e-9)
            np.testing.assert_allclose(per_seed.std(0, ddof=1), entry[key + "_std"], rtol=1e-9)
        for key in ("accuracy", "informative_mass", "support_hits"):
            assert np.all((np.array(entry[key]) >= 0) & (np.array(entry[key]) <= 1))
        assert set(toy.METRICS) >= {"support_hits", "informative_score_std", "score_gap"}
        assert np.all(np.array(entry["support"]) <= np.array(LENGTHS))
        assert np.array(entry["attention_per_seed"]).shape == (len(SEEDS), 3, max(LENGTHS))
        np.testing.assert_allclose(np.sum(entry["attention_per_seed"], -1), 1.0, atol=1e-5)
    np.testing.assert_allclose(r["softmax"]["support"], LENGTHS)  # softmax is dense
    np.testing.assert_allclose(r["softmax"]["support_hits"], 1.0)
    learned = r["alpha_entmax"]
    assert r["history_steps"] == list(range(1, STEPS + 1, EVERY))
    for variant in NORMALISERS:
        losses = np.array(r[variant]["loss_history_per_seed"])
        assert losses.shape == (n_len, len(SEEDS), STEPS // EVERY)
        assert np.all(losses[:, :, -1] < losses[:, :, 0])  # training lowered the loss
    assert np.array(learned["alpha_history_per_seed"]).shape == (n_len, len(SEEDS), STEPS // EVERY)
    final = np.array(learned["final_alpha_per_seed"])
    assert np.all((final > toy.LEARNED_ALPHA_MIN) & (final < toy.LEARNED_ALPHA_MIN + toy.LEARNED_ALPHA_SPAN))
    assert learned["alpha_history"][0][0] == pytest.approx(
        toy.DEMO_ALPHA_INIT, abs=0.05
    )  # starts at alpha_init
    positions = np.array(r["examples"]["positions"])
    assert positions.shape == (3, CONFIG.n_informative) and positions.max() < max(LENGTHS)
    assert len(r["baselines"]["oracle_accuracy"]) == n_len


@pytest.mark.slow
def test_short_training_beats_chance_clearly(tiny_run):
    chance = tiny_run["chance"]
    for variant in NORMALISERS:
        assert min(tiny_run[variant]["accuracy_per_seed"][1]) > chance + 0.3, variant  # L = 8
    # Trained attention prefers the informative tokens over the uniform K/L.
    assert tiny_run["softmax"]["informative_mass"][1] > CONFIG.n_informative / LENGTHS[1] + 0.05


@pytest.mark.slow
def test_training_is_deterministic_and_variants_share_the_initialisation():
    data = toy.make_dataset(0, 64, 8, CONFIG)
    config = dataclasses.replace(
        CONFIG, variants=("softmax", "alpha_entmax"), steps=20, batch_size=16, learning_rate=2e-2
    )
    a = toy.train(data, dataclasses.replace(config, seeds=(4, 5)))
    b = toy.train(data, dataclasses.replace(config, seeds=(5, 4)))  # same compile
    np.testing.assert_array_equal(a.loss[:, 0], b.loss[:, 1])
    np.testing.assert_array_equal(a.alpha[1, 0], b.alpha[1, 1])
    assert not np.array_equal(a.loss[:, 0], a.loss[:, 1])  # another seed, another run
    assert a.alpha[1, 0, -1] != a.alpha[1, 0, 0]  # the learned α moved
    np.testing.assert_array_equal(a.alpha[0], 1.0)  # softmax's α is fixed
    np.testing.assert_allclose(a.loss[0, :, 0], a.loss[1, :, 0], rtol=0.2)  # same start, other map


@pytest.mark.slow
def test_per_seed_data_and_full_batch_as_in_the_demo():
    config = dataclasses.replace(toy.ORIGINAL, variants=("alpha_entmax",), seeds=(0, 1), steps=5)
    data = [toy.make_dataset([0, 8, s], 32, 8, config) for s in (0, 1)]
    result = toy.train(data, config)
    metrics = toy.evaluate(result, data, keep_attention=2)["alpha_entmax"]
    assert metrics["accuracy"].shape == (2,) and metrics["attention"].shape == (2, 2, 8)
    with pytest.raises(ValueError, match="per-seed"):
        toy.train(data, dataclasses.replace(config, seeds=(0, 1, 2)))


@pytest.mark.slow
def test_the_grid_shows_progress_only_when_someone_watches(monkeypatch, capsys):
    settings = dict(lengths=(6,), seeds=(0,), steps=5, n_train=64, n_test=64, history_every=5)
    monkeypatch.setenv("ENTMAX_PROGRESS", "0")
    toy.run_experiment(**settings)
    assert "toy grid" not in capsys.readouterr().err
    monkeypatch.setenv("ENTMAX_PROGRESS", "1")
    toy.run_experiment(**settings)
    err = capsys.readouterr().err
    assert "toy grid" in err and "L=6" in err and "final loss=" in err and "alpha=" in err
