"""Tests for entmax_book.toy.experiment: training, evaluation and the pipeline.

The end-to-end run is checked against chance and its own documented shapes. Bad arguments
must fail before any training (``train`` is replaced by a tripwire); a training that diverges
stops with an error naming the variant, seed, length and step, and keeps its losses.
"""

import dataclasses
import json

import numpy as np
import pytest

from entmax_book.toy import configs, experiment, task
from entmax_book.toy.config import DEMO_ALPHA_INIT, LEARNED_ALPHA_MIN, LEARNED_ALPHA_SPAN, ToyConfig
from entmax_lib.attention import NORMALISERS

CONFIG = ToyConfig()


class _Reached(Exception):
    pass


@pytest.fixture
def tripwire(monkeypatch):
    """Replace ``experiment.train`` by a stub that records the training lengths and stops the run."""
    calls = []

    def fake_train(data, config):
        calls.append(np.asarray(data.tokens if isinstance(data, task.Dataset) else data[0].tokens).shape[1])
        raise _Reached

    monkeypatch.setattr(experiment, "train", fake_train)
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
        experiment.train_and_evaluate(**{"lengths": (8,), **TINY, **overrides})
    assert not tripwire  # nothing was trained
    if name in ("n_test", "n_train"):
        assert "length" not in str(info.value)  # a message about counts, not lengths


def test_a_bad_progress_setting_fails_before_training(tripwire, monkeypatch):
    monkeypatch.setenv("ENTMAX_PROGRESS", "2")
    with pytest.raises(ValueError, match="ENTMAX_PROGRESS"):
        experiment.train_and_evaluate(lengths=(8,), **TINY)
    assert not tripwire


def test_an_int_length_is_one_length(tripwire):
    with pytest.raises(_Reached):
        experiment.train_and_evaluate(lengths=8, **TINY)
    assert tripwire == [8]


def test_train_refuses_data_that_do_not_fit_the_config():
    data = task.make_dataset(0, 8, 8, CONFIG)
    with pytest.raises(ValueError, match="per-seed"):
        experiment.train([data, data], CONFIG)  # 2 datasets for 10 seeds
    with pytest.raises(ValueError, match="token dimension"):
        experiment.train(data, ToyConfig(dim=16))
    with pytest.raises(TypeError, match="Dataset"):
        experiment.train((data.tokens, data.labels), CONFIG)


# ----------------------------------------------------------------------------------------
# End to end (trains small models)
# ----------------------------------------------------------------------------------------

LENGTHS = (6, 8)
SEEDS = (0, 1)
STEPS, EVERY = 60, 10


@pytest.fixture(scope="module")
def tiny_run():
    return experiment.train_and_evaluate(
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
        for key in experiment.METRICS:
            assert len(entry[key]) == n_len and len(entry[key + "_std"]) == n_len
            per_seed = np.array(entry[key + "_per_seed"])
            assert per_seed.shape == (len(SEEDS), n_len)
            np.testing.assert_allclose(per_seed.mean(0), entry[key], rtol=1e-9)
            np.testing.assert_allclose(per_seed.std(0, ddof=1), entry[key + "_std"], rtol=1e-9)
        for key in ("accuracy", "informative_mass", "support_hits"):
            assert np.all((np.array(entry[key]) >= 0) & (np.array(entry[key]) <= 1))
        assert set(experiment.METRICS) >= {"support_hits", "informative_score_std", "score_gap"}
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
    assert np.all((final > LEARNED_ALPHA_MIN) & (final < LEARNED_ALPHA_MIN + LEARNED_ALPHA_SPAN))
    assert learned["alpha_history"][0][0] == pytest.approx(DEMO_ALPHA_INIT, abs=0.05)  # starts at alpha_init
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
    data = task.make_dataset(0, 64, 8, CONFIG)
    config = dataclasses.replace(
        CONFIG, variants=("softmax", "alpha_entmax"), steps=20, batch_size=16, learning_rate=2e-2
    )
    a = experiment.train(data, dataclasses.replace(config, seeds=(4, 5)))
    b = experiment.train(data, dataclasses.replace(config, seeds=(5, 4)))  # same compile
    np.testing.assert_array_equal(a.loss[:, 0], b.loss[:, 1])
    np.testing.assert_array_equal(a.alpha[1, 0], b.alpha[1, 1])
    assert not np.array_equal(a.loss[:, 0], a.loss[:, 1])  # another seed, another run
    assert a.alpha[1, 0, -1] != a.alpha[1, 0, 0]  # the learned α moved
    np.testing.assert_array_equal(a.alpha[0], 1.0)  # softmax's α is fixed
    np.testing.assert_allclose(a.loss[0, :, 0], a.loss[1, :, 0], rtol=0.2)  # same start, other map


@pytest.mark.slow
def test_per_seed_data_and_full_batch_as_in_the_demo():
    config = dataclasses.replace(configs.ORIGINAL, variants=("alpha_entmax",), seeds=(0, 1), steps=5)
    data = [task.make_dataset([0, 8, s], 32, 8, config) for s in (0, 1)]
    result = experiment.train(data, config)
    metrics = experiment.evaluate(result, data, keep_attention=2)["alpha_entmax"]
    assert metrics["accuracy"].shape == (2,) and metrics["attention"].shape == (2, 2, 8)
    with pytest.raises(ValueError, match="per-seed"):
        experiment.train(data, dataclasses.replace(config, seeds=(0, 1, 2)))


@pytest.mark.slow
def test_the_grid_shows_progress_only_when_someone_watches(monkeypatch, capsys):
    settings = dict(lengths=(6,), seeds=(0,), steps=5, n_train=64, n_test=64, history_every=5)
    monkeypatch.setenv("ENTMAX_PROGRESS", "0")
    experiment.train_and_evaluate(**settings)
    assert "toy grid" not in capsys.readouterr().err
    monkeypatch.setenv("ENTMAX_PROGRESS", "1")
    experiment.train_and_evaluate(**settings)
    err = capsys.readouterr().err
    assert "toy grid" in err and "L=6" in err and "final loss=" in err and "alpha=" in err


@pytest.mark.slow
def test_a_diverging_training_stops_with_its_losses(monkeypatch):
    """A learning rate of 1e30 used to train on through NaN and return non-finite results."""
    evaluated = []
    real_evaluate = experiment.evaluate
    monkeypatch.setattr(experiment, "evaluate", lambda *a, **k: evaluated.append(1) or real_evaluate(*a, **k))
    settings = dict(lengths=(6, 8), seeds=(3, 4), steps=12, history_every=4, **TINY)
    with pytest.raises(experiment.TrainingDiverged, match=r"variant 'softmax', seed 3, length L = 6") as info:
        experiment.train_and_evaluate(learning_rate=1e30, **settings)
    error = info.value
    assert isinstance(error, FloatingPointError) and not evaluated  # nothing evaluated on NaN weights
    assert (error.variant, error.seed, error.length) == ("softmax", 3, 6) and 1 < error.step <= 12
    assert f"at step {error.step} of 12" in str(error)
    loss = error.history["loss"]
    assert loss.shape == (len(NORMALISERS), 2, 12) and error.history["seeds"] == (3, 4)
    assert np.all(np.isfinite(loss[:, :, : error.step - 1]))  # every loss before the step is kept
    assert not np.all(np.isfinite(loss[0, 0, error.step - 1]))
    sane = experiment.train_and_evaluate(learning_rate=1e-2, **settings)  # the same run, a sane rate
    assert np.all(np.isfinite(sane["softmax"]["loss_history_per_seed"]))
