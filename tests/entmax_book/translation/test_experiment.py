"""The translation pipeline at a tiny size: prepare the data, train, evaluate; and its checks."""

import json

import numpy as np
import pytest
from translation_helpers import TINY

from entmax_book.translation import corpus, experiment
from entmax_book.translation.analysis import analyse
from entmax_book.translation.config import DataConfig
from entmax_book.translation.data import Example
from entmax_book.translation.experiment import prepare_data, split_scores, train_and_evaluate
from entmax_book.translation.model import ATTENTION_TYPES
from entmax_lib.attention import ALPHA_MAX, ALPHA_MIN

NAMES = ("softmax", "entmax15", "alpha_entmax")


@pytest.fixture(scope="module")
def data():
    return prepare_data(TINY.data)


@pytest.fixture(scope="module")
def runs(data):
    return {name: train_and_evaluate(TINY.replace(normaliser=name), data) for name in NAMES}


@pytest.mark.slow
def test_a_run_has_its_config_history_and_test_scores(runs):
    for name, run in runs.items():
        json.dumps(run.result)  # JSON-serialisable, no arrays
        assert run.config.model.normaliser == run.model.normaliser == name
        test = run.result["test"]
        assert 0 <= test["bleu"] <= 100 and 0 <= test["chrf"] <= 100 and 0 <= test["exact_match"] <= 1
        assert set(test["accuracy"]) == {"tokens", "tgt_compound", "tgt_multi_piece", "tgt_marker"}
        assert all(0 <= value <= 1 for value in test["accuracy"].values())


@pytest.mark.slow
def test_the_validation_curve_ends_at_the_trained_model(runs, data):
    for run in runs.values():
        curve = run.result["history"]["eval"]
        assert curve["step"] == [20, 40]
        final = split_scores(run.model, data.valid)
        assert curve["valid_loss"][-1] == pytest.approx(final["loss"], abs=1e-4)
        assert curve["valid_accuracy"][-1] == pytest.approx(final["accuracy"], abs=1e-4)


@pytest.mark.slow
def test_fixed_alphas_and_softmax_density(runs, data):
    for kind in ATTENTION_TYPES:
        np.testing.assert_array_equal(runs["softmax"].model.alphas()[kind], 1.0)
        np.testing.assert_array_equal(runs["entmax15"].model.alphas()[kind], 1.5)
    analysis = analyse(runs["softmax"].model, data.test, TINY.analysis)[0]
    for kind in ATTENTION_TYPES:
        # softmax never zeroes a weight (no underflow at these sizes): density exactly 1
        np.testing.assert_array_equal(analysis["density"][kind], 1.0)


@pytest.mark.slow
def test_learned_alpha_stays_in_range_and_moves(runs):
    run = runs["alpha_entmax"]
    history = run.result["history"]
    assert history["alpha_step"][0] == 0 and history["alpha_step"][-1] == TINY.train.steps
    for kind in ATTENTION_TYPES:
        trajectory = np.asarray(history["alpha"][kind])  # (records, layers, heads)
        assert trajectory.shape == (len(history["alpha_step"]), TINY.model.num_layers, TINY.model.num_heads)
        assert np.all((trajectory >= ALPHA_MIN - 1e-6) & (trajectory <= ALPHA_MAX + 1e-6))
        assert np.any(trajectory[-1] != trajectory[0])  # α is trained
        np.testing.assert_allclose(trajectory[-1], run.model.alphas()[kind], atol=1e-4)


@pytest.mark.slow
def test_loss_decreases(runs):
    for name, run in runs.items():
        loss = run.result["history"]["loss"]
        assert loss[-1] < 0.8 * loss[0], (name, loss)


@pytest.mark.parametrize(
    ("data_arg", "error", "message"),
    [
        ({"not": "data"}, TypeError, "data must be PreparedData"),
        ("other caps", ValueError, "the data were prepared with"),
    ],
)
def test_data_of_other_settings_are_refused_before_training(monkeypatch, data_arg, error, message):
    monkeypatch.setattr(experiment, "train", lambda *a, **k: pytest.fail("training started"))
    if data_arg == "other caps":
        data_arg = prepare_data(
            DataConfig(n_train=40, n_valid=4, n_test=4, vocab_size=150, max_src_len=32, max_tgt_len=40)
        )
    with pytest.raises(error, match=message):
        train_and_evaluate(TINY, data=data_arg)


def test_a_config_that_is_not_one_is_refused():
    with pytest.raises(TypeError, match="config must be a TranslationConfig"):
        train_and_evaluate({"steps": 3})


def test_prepare_data_from_tsv_splits(tmp_path):
    examples = corpus.generate_corpus(60, seed=3)
    corpus.write_tsv(examples, tmp_path / "pairs.tsv")
    loaded = corpus.load_tsv(tmp_path / "pairs.tsv")
    splits = {"train": loaded[:40], "valid": loaded[40:50], "test": loaded[50:]}
    config = DataConfig(n_train=40, n_valid=10, n_test=10, vocab_size=160, max_src_len=16, max_tgt_len=20)
    data = prepare_data(config, splits)
    for name, (kept, available) in data.kept.items():
        split = getattr(data, name)
        assert kept <= available == len(splits[name]) and kept > 0 and len(split) == kept
        assert split.src.shape == (kept, 16) and split.tgt_in.shape == (kept, 20)
    assert set(data.test.tags) >= set(corpus.CONSTRUCTIONS)
    untagged = prepare_data(config, splits, tagger=None)
    assert untagged.test.tags == {} and np.array_equal(untagged.test.src, data.test.src)


def _splits(n=12, seed=5):
    examples = corpus.generate_corpus(n, seed=seed)
    return {"train": examples[:8], "valid": examples[8:10], "test": examples[10:]}


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        (lambda e: Example(e.src, e.tgt, ((-1, 0),)), ValueError, r"alignment link \(-1, 0\)"),
        (lambda e: Example(e.src, e.tgt, ((0, 99),)), ValueError, r"alignment link \(0, 99\)"),
        (
            lambda e: Example(e.src, e.tgt, ((0.5, 0),)),
            TypeError,
            r"alignment link \(0.5, 0\) must be a pair of integers",
        ),
        (
            lambda e: Example(e.src, e.tgt, ((0, 0, 1),)),
            TypeError,
            r"alignment link \(0, 0, 1\) must be a pair",
        ),
        (lambda e: Example(e.src, e.tgt, ((True, True),)), TypeError, "must be a pair of integers"),
        (lambda e: Example(None, e.tgt), TypeError, r"\.src must be a string"),
        (lambda e: (e.src, e.tgt), TypeError, "must be an Example"),
    ],
)
def test_prepare_data_names_a_bad_pair(change, error, message):
    splits = _splits()
    splits["test"] = [splits["test"][0], change(splits["test"][1])]
    config = DataConfig(n_train=8, n_valid=2, n_test=2, vocab_size=200)
    with pytest.raises(error, match=message) as info:
        prepare_data(config, splits)
    assert "splits['test'][1]" in str(info.value)


def test_prepare_data_says_which_split_is_empty():
    splits = {**_splits(), "valid": []}
    with pytest.raises(ValueError, match="the valid split is empty"):
        prepare_data(DataConfig(n_train=8, n_valid=2, n_test=2, vocab_size=200), splits)


def test_generated_splits_are_filled_to_their_size():
    config = DataConfig(n_train=40, n_valid=4, n_test=4, vocab_size=150, max_src_len=24, max_tgt_len=28)
    data = prepare_data(config)
    assert [data.kept[k][0] for k in ("train", "valid", "test")] == [40, 4, 4]
    with pytest.raises(ValueError, match="too few generated pairs fit"):
        prepare_data(
            DataConfig(n_train=40, n_valid=4, n_test=4, vocab_size=150, max_src_len=4, max_tgt_len=4)
        )
