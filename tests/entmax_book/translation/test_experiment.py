"""The translation Transformer, its training loop and run_experiment, at tiny sizes."""

import json
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from entmax_book.translation import corpus, experiment, run_experiment
from entmax_book.translation.config import TranslationConfig
from entmax_book.translation.corpus import Example
from entmax_book.translation.experiment import prepare_data, unmeasurable
from entmax_book.translation.model import ATTENTION_TYPES, Transformer, greedy_decode
from entmax_book.translation.train import (
    TrainingDiverged,
    cross_entropy,
    learning_rate_schedule,
    make_optimizer,
    train,
)
from entmax_lib.attention import ALPHA_MAX, ALPHA_MIN

TINY = {
    "n_train": 160,
    "n_valid": 8,
    "n_test": 48,
    "vocab_size": 160,
    "d_model": 16,
    "num_heads": 2,
    "num_layers": 1,
    "d_ff": 32,
    "steps": 40,
    "batch_size": 16,
    "learning_rate": 1e-2,
    "warmup_steps": 5,
    "record_every": 10,
    "eval_every": 20,
}
NAMES = ("softmax", "entmax15", "alpha_entmax")


#: The small model of the unit tests, with room for 64 positions.
SMALL = {"d_model": 16, "num_heads": 2, "num_layers": 2, "d_ff": 32, "max_src_len": 64, "max_tgt_len": 64}


def _model(normaliser="softmax", vocab=30, **settings):
    """A small model whose config carries ``settings`` (sizes, rates, schedule) over SMALL."""
    return Transformer(TranslationConfig(**{**SMALL, **settings}), normaliser, vocab, seed=1)


@pytest.fixture(scope="module")
def result():
    return run_experiment(**TINY)


@pytest.mark.slow
def test_result_has_documented_keys_and_is_json(result):
    json.dumps(result)  # JSON-serialisable, no arrays
    assert set(result["bleu"]) == set(result["chrf"]) == set(result["alpha"]) == set(NAMES)
    for name in NAMES:
        model = result["models"][name]
        assert 0 <= model["bleu"] <= 100 and 0 <= model["chrf"] <= 100
        assert 0 <= model["exact_match"] <= 1
        for kind in ATTENTION_TYPES:
            alpha = np.asarray(model["alpha"][kind])
            assert alpha.shape == (TINY["num_layers"], TINY["num_heads"])
            density = np.asarray(model["density"][kind])
            assert density.shape == alpha.shape and np.all((density > 0) & (density <= 1))
            assert len(model["js"][kind]) == TINY["num_layers"]
            assert sum(model["density_hist"][kind]) > 0
        keys = ("positional_prev", "merging", "interrogation", "alignment_mass")
        for key in (*keys, "positional_compound", "marker", "marker_sink"):
            assert np.asarray(model[key]).shape == (TINY["num_layers"], TINY["num_heads"])
        assert set(model["accuracy"]) == {"tokens", "tgt_compound", "tgt_multi_piece", "tgt_marker"}
        assert all(0 <= value <= 1 for value in model["accuracy"].values())
        assert model["skipped"] == {}
    assert result["skipped"] == {}


@pytest.mark.slow
def test_learning_curve_ends_at_the_final_scores(result):
    for name in NAMES:
        model = result["models"][name]
        curve = model["history"]["eval"]
        assert curve["step"] == [20, 40]
        # the last point of the curve is the trained model, scored as in the final results
        assert curve["test_bleu"][-1] == pytest.approx(model["bleu"], abs=0.01)
        assert curve["test_loss"][-1] == pytest.approx(model["test_loss"], abs=1e-4)


@pytest.mark.slow
def test_fixed_alphas_and_softmax_density(result):
    for kind in ATTENTION_TYPES:
        np.testing.assert_array_equal(result["alpha"]["softmax"][kind], 1.0)
        np.testing.assert_array_equal(result["alpha"]["entmax15"][kind], 1.5)
        # softmax never zeroes a weight (no underflow at these sizes): density exactly 1
        np.testing.assert_array_equal(result["models"]["softmax"]["density"][kind], 1.0)


@pytest.mark.slow
def test_learned_alpha_stays_in_range_and_moves(result):
    history = result["models"]["alpha_entmax"]["history"]
    assert history["alpha_step"][0] == 0 and history["alpha_step"][-1] == TINY["steps"]
    for kind in ATTENTION_TYPES:
        trajectory = np.asarray(history["alpha"][kind])  # (records, layers, heads)
        assert trajectory.shape == (len(history["alpha_step"]), TINY["num_layers"], TINY["num_heads"])
        assert np.all((trajectory >= ALPHA_MIN - 1e-6) & (trajectory <= ALPHA_MAX + 1e-6))
        assert np.any(trajectory[-1] != trajectory[0])  # α is trained
        np.testing.assert_allclose(trajectory[-1], result["alpha"]["alpha_entmax"][kind], atol=1e-4)


@pytest.mark.slow
def test_loss_decreases(result):
    for name in NAMES:
        loss = result["models"][name]["history"]["loss"]
        assert loss[-1] < 0.8 * loss[0], (name, loss)


@pytest.mark.slow
def test_samples_are_strings(result):
    for name in NAMES:
        for src, hyp, ref in result["models"][name]["samples"]:
            assert isinstance(hyp, str) and isinstance(src, str) and ref


def _tiny_model(normaliser, vocab=30):
    return _model(normaliser, vocab)


def _random_batch(vocab=30, batch=3, src_len=7, tgt_len=6, seed=0):
    rng = np.random.default_rng(seed)
    src = rng.integers(4, vocab, (batch, src_len))
    src[0, 5:] = 0  # padding
    tgt = rng.integers(4, vocab, (batch, tgt_len))
    return jnp.asarray(src), jnp.asarray(tgt)


@nnx.jit
def _forward(model, src, tgt):
    return model(src, tgt, return_weights=True)


@pytest.fixture(scope="module")
def tiny_model():
    # softmax compiles fastest; masking of every normaliser is tested in test_attention.py
    return _tiny_model("softmax")


def test_decoder_is_causal_and_padding_is_ignored(tiny_model):
    src, tgt = _random_batch()
    logits, weights = _forward(tiny_model, src, tgt)
    changed = tgt.at[:, 4:].set(5)  # future tokens must not change earlier predictions
    np.testing.assert_allclose(
        np.asarray(_forward(tiny_model, src, changed)[0][:, :4]), logits[:, :4], atol=1e-5
    )
    longer_src = jnp.pad(src, ((0, 0), (0, 2)))  # more padding changes nothing
    np.testing.assert_allclose(np.asarray(_forward(tiny_model, longer_src, tgt)[0]), logits, atol=1e-5)
    assert np.all(np.asarray(weights["encoder_self"])[:, 0, :, :, 5:] == 0)
    assert np.all(np.asarray(weights["context"])[:, 0, :, :, 5:] == 0)
    assert np.all(np.triu(np.asarray(weights["decoder_self"]), k=1) == 0)


def test_greedy_decode_agrees_with_teacher_forcing(tiny_model):
    src, _ = _random_batch()
    bos, eos, max_len = 2, 3, 6
    out = greedy_decode(tiny_model, src, max_len, bos, eos)
    assert out.shape == (3, max_len) and out.dtype == np.int32
    tgt_in = np.concatenate([np.full((3, 1), bos), out[:, :-1]], axis=1)
    argmax = np.asarray(jnp.argmax(_forward(tiny_model, src, jnp.asarray(tgt_in))[0], -1))
    for row, pred in zip(out, argmax, strict=True):
        stop = int(np.argmax(row == eos)) + 1 if eos in row else max_len
        np.testing.assert_array_equal(row[:stop], pred[:stop])
        assert np.all(row[stop:] == 0)


def test_cross_entropy_matches_numpy():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((2, 4, 5))
    targets = np.array([[1, 2, 0, 0], [4, 3, 2, 1]])
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = -np.take_along_axis(log_p, targets[..., None], -1)[..., 0]
    expected = nll[targets != 0].mean()
    np.testing.assert_allclose(
        float(cross_entropy(jnp.asarray(logits), jnp.asarray(targets))), expected, rtol=1e-5
    )
    smooth = 0.9 * nll - 0.1 * log_p.mean(-1)
    got = float(cross_entropy(jnp.asarray(logits), jnp.asarray(targets), label_smoothing=0.1))
    np.testing.assert_allclose(got, smooth[targets != 0].mean(), rtol=1e-5)


def test_prepare_data_from_tsv_splits(tmp_path):
    examples = corpus.generate_corpus(60, seed=3)
    corpus.write_tsv(examples, tmp_path / "pairs.tsv")
    loaded = corpus.load_tsv(tmp_path / "pairs.tsv")
    splits = {"train": loaded[:40], "valid": loaded[40:50], "test": loaded[50:]}
    config = TranslationConfig(
        **{**TINY, "n_train": 40, "n_valid": 10, "n_test": 10, "max_src_len": 16, "max_tgt_len": 20}
    )
    data = prepare_data(config, splits)
    for name, (kept, available) in data["kept"].items():
        assert kept <= available == len(splits[name]) and kept > 0
        assert data["arrays"][name]["src"].shape == (kept, 16)
        assert data["arrays"][name]["tgt_in"].shape == (kept, 20)


def test_bad_settings_raise():
    with pytest.raises(TypeError, match="stepz"):
        run_experiment(stepz=3)
    with pytest.raises(ValueError, match="normaliser"):
        Transformer(TranslationConfig(), "relu", 10)
    with pytest.raises(ValueError, match="vocab_size"):
        Transformer(TranslationConfig(), "softmax", 0)
    with pytest.raises(TypeError, match="TranslationConfig"):
        Transformer({"d_model": 16}, "softmax", 10)
    with pytest.raises(ValueError, match="max_len"):
        _tiny_model("softmax").encode(jnp.ones((1, 70), jnp.int32))


@pytest.mark.parametrize("max_len", [0, 65, 2.0])
def test_greedy_decode_checks_max_len(tiny_model, max_len):
    # the positional table has 64 rows: decoding further would read past it
    with pytest.raises(ValueError, match="max_len"):
        greedy_decode(tiny_model, jnp.ones((1, 5), jnp.int32), max_len, 2, 3)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"normalisers": "softmax"}, "normalisers must be a list"),
        ({"normalisers": []}, "normalisers must be a non-empty list"),
        ({"normalisers": ("softmax", "softmax")}, "distinct"),
        ({"normalisers": ["relu"]}, "unknown"),
        ({"learning_rate": math.nan}, "learning_rate"),
        ({"learning_rate": math.inf}, "learning_rate"),
        ({"learning_rate": 0.0}, "learning_rate"),
        ({"label_smoothing": math.nan}, "label_smoothing"),
        ({"n_train": 0}, "n_train must be an integer >= 1"),
        ({"n_valid": -3}, "n_valid must be an integer >= 1"),
        ({"n_test": 0}, "n_test must be an integer >= 1"),
        ({"n_train": 2.5}, "n_train must be an integer >= 1"),
        ({"vocab_size": True}, "vocab_size must be an integer >= 1"),
        ({"max_src_len": 0}, "max_src_len"),
        ({"density_bins": 0}, "density_bins"),
        ({"num_heads": 0}, "num_heads must be an integer >= 1"),
        ({"num_heads": 3}, "not divisible by num_heads"),
        ({"d_model": 0}, "d_model"),
        ({"steps": 0}, "steps must be an integer >= 1"),
        ({"batch_size": 0}, "batch_size must be an integer >= 1"),
        ({"batch_size": 7000}, "batch_size=7000 exceeds n_train"),
        ({"record_every": 0}, "record_every"),
        ({"eval_every": 0}, "eval_every must be an integer >= 1"),
        ({"n_iter": -1}, "n_iter"),
        ({"n_iter": 0}, "n_iter"),
        ({"dropout": 1.5}, "dropout must be a number in"),
        ({"ffn_dropout": -0.1}, "ffn_dropout must be a number in"),
        ({"attention_dropout": 1.0}, "attention_dropout"),
        ({"schedule": "linear"}, "schedule must be one of"),
        ({"schedule": "inverse_sqrt", "warmup_steps": 0}, "warmup"),
        ({"alpha_learning_rate": -1.0}, "alpha_learning_rate"),
        ({"alpha_learning_rate": math.nan}, "alpha_learning_rate"),
        ({"seed": -1}, "seed must be an integer >= 0"),
        ({"seed": 1.5}, "seed must be an integer >= 0"),
        ({"corpus_seed": -1}, "corpus_seed"),
        ({"corpus_seed": 1.5}, "corpus_seed"),
        ({"corpus_seed": "abc"}, "corpus_seed"),
        ({"label_smoothing": "0.1"}, "label_smoothing"),
        ({"label_smoothing": None}, "label_smoothing"),
        ({"compute_dtype": "float16"}, "compute_dtype"),
        ({"batch_tokens": 0}, "batch_tokens"),
    ],
)
def test_run_experiment_rejects_bad_settings_before_any_work(monkeypatch, setting, message):
    def forbidden(*args, **kwargs):
        raise AssertionError("work started before the settings were checked")

    monkeypatch.setattr(experiment, "prepare_data", forbidden)
    monkeypatch.setattr(experiment, "train", forbidden)
    with pytest.raises(ValueError, match=message):
        run_experiment(**setting)


def test_train_checks_the_training_set_size():
    arrays = {k: np.ones((4, 6), np.int32) for k in ("src", "tgt_in", "tgt_out")}
    with pytest.raises(ValueError, match="smaller than batch_size"):
        train(_model(steps=2, batch_size=8, warmup_steps=0), arrays)


def test_unmeasurable_names_what_the_split_lacks():
    arrays = {
        "src_words": np.array([[0, 0, 1, -1], [0, 1, 2, -1]]),
        "src_interrogative": np.array([[0, 1, 0, 0], [0, 0, 0, 0]], bool),
        "src_question": np.array([[0, 0, 1, 0], [0, 0, 0, 0]], bool),
        "src_compound_head": np.array([[0, 0, 0, 0], [0, 1, 0, 0]], bool),
        "src_marker": np.array([[1, 1, 0, 0], [0, 0, 0, 0]], bool),
        "align": np.ones((2, 3, 4)),
    }
    assert unmeasurable(arrays, num_heads=2) == {}
    assert set(unmeasurable(arrays, num_heads=1)) == {"js"}
    single = {**arrays, "src_words": np.array([[0, 1, 2, -1], [0, 1, -1, -1]])}
    assert set(unmeasurable(single, num_heads=2)) == {"merging_multi"}
    no = np.zeros((2, 4), bool)
    plain = {
        **arrays,
        "src_interrogative": no,
        "src_compound_head": no,
        "src_marker": no,
        "src_question": np.ones((2, 4), bool),
        "align": np.zeros((2, 3, 4)),
    }
    assert set(unmeasurable(plain, num_heads=2)) == {
        "interrogation",
        "positional_compound",
        "marker",
        "marker_sink",
        "alignment_mass",
        "alignment_aer",
        "alignment_layer_mass",
        "alignment_layer_aer",
    }


@pytest.mark.slow
def test_run_experiment_reports_what_it_cannot_measure(tmp_path):
    # A small TSV corpus of statements without alignments whose words are all single pieces,
    # and one head per attention: four analyses have nothing to measure.
    nouns = [("dog", "Hund"), ("cat", "Katze"), ("bird", "Vogel"), ("horse", "Pferd")]
    verbs = [("sleeps", "schläft"), ("runs", "läuft"), ("sings", "singt")]
    pairs = [Example(f"the {n} {v} .", f"{d} {w} .") for n, d in nouns for v, w in verbs]
    corpus.write_tsv(pairs * 4, tmp_path / "pairs.tsv")
    loaded = corpus.load_tsv(tmp_path / "pairs.tsv")
    splits = {"train": loaded[:36], "valid": loaded[36:40], "test": loaded[40:]}
    settings = {
        **TINY,
        "n_train": 36,
        "n_valid": 4,
        "n_test": 8,
        "vocab_size": 200,
        "num_heads": 1,
        "steps": 4,
        "batch_size": 8,
        "warmup_steps": 1,
        "record_every": 2,
        "normalisers": ["softmax"],
    }
    result = run_experiment(splits=splits, **settings)
    json.dumps(result)
    assert set(result["skipped"]) == {
        "js",
        "merging_multi",
        "interrogation",
        "positional_compound",
        "marker",
        "alignment_mass",
        "alignment_aer",
        "alignment_layer_mass",
        "alignment_layer_aer",
    }
    model = result["models"]["softmax"]
    assert model["skipped"] == result["skipped"] and not set(model) & set(result["skipped"])
    assert 0 <= model["bleu"] <= 100 and np.asarray(model["positional_prev"]).shape == (1, 1)
    assert model["maps"] == {}  # each map's analysis is skipped


# --- options for longer runs: dropout, label smoothing, schedules, α learning rate ---------------


def _dropout_model(normaliser="softmax", **settings):
    return _model(normaliser, num_layers=1, **settings)


@nnx.jit
def _logits(model, src, tgt, key):
    return model(src, tgt, True, dropout_key=key)


def test_dropout_is_off_without_a_key_and_random_with_one():
    src, tgt = _random_batch()
    rates = {"dropout": 0.3, "attention_dropout": 0.2, "ffn_dropout": 0.4}
    plain, noisy = _dropout_model(), _dropout_model(**rates)
    reference = np.asarray(_logits(plain, src, tgt, None)[0])
    # evaluation (no key) is deterministic and ignores the rates
    np.testing.assert_array_equal(np.asarray(_logits(noisy, src, tgt, None)[0]), reference)
    # rates of 0 ignore the key: the default model is unchanged by training with dropout keys
    np.testing.assert_array_equal(np.asarray(_logits(plain, src, tgt, jax.random.key(0))[0]), reference)
    first = np.asarray(_logits(noisy, src, tgt, jax.random.key(0))[0])
    again = np.asarray(_logits(noisy, src, tgt, jax.random.key(0))[0])
    other = np.asarray(_logits(noisy, src, tgt, jax.random.key(1))[0])
    np.testing.assert_array_equal(first, again)
    assert not np.allclose(first, reference, atol=1e-3) and not np.allclose(first, other, atol=1e-3)


@pytest.mark.slow  # three more compilations
def test_each_dropout_acts_on_its_own():
    src, tgt = _random_batch()
    reference = np.asarray(_logits(_dropout_model(), src, tgt, None)[0])
    # returned weights are those before dropout: rows still sum to 1
    for name, rate in {"dropout": 0.3, "attention_dropout": 0.2, "ffn_dropout": 0.4}.items():
        logits, weights = _logits(_dropout_model(**{name: rate}), src, tgt, jax.random.key(0))
        assert not np.allclose(np.asarray(logits), reference, atol=1e-3), name
        np.testing.assert_allclose(np.asarray(weights["context"]).sum(-1), 1.0, atol=1e-5)


def test_label_smoothing_by_hand():
    # two classes, p = (1/4, 3/4), target 1, ε = 0.2:
    # (1 − ε)·(−log 3/4) + ε·mean(−log 1/4, −log 3/4)
    logits = jnp.log(jnp.array([[[1.0, 3.0]]]))
    expected = 0.8 * math.log(4 / 3) + 0.2 * (math.log(4) + math.log(4 / 3)) / 2
    got = float(cross_entropy(logits, jnp.array([[1]]), pad_id=0, label_smoothing=0.2))
    assert got == pytest.approx(expected, rel=1e-6)
    assert expected == pytest.approx(0.397543, abs=1e-6)


def test_schedules_at_a_few_steps():
    inverse = learning_rate_schedule(
        TranslationConfig(steps=1000, learning_rate=2e-3, warmup_steps=100, schedule="inverse_sqrt")
    )
    # step s = count + 1: 2e-3 · min(s/100, √(100/s))
    for count, value in [(0, 2e-5), (49, 1e-3), (99, 2e-3), (399, 1e-3), (899, 2e-3 / 3)]:
        assert float(inverse(count)) == pytest.approx(value, rel=1e-5)
    cosine = learning_rate_schedule(TranslationConfig(steps=300, learning_rate=1.0, warmup_steps=100))
    for count, value in [(0, 0.0), (50, 0.5), (100, 1.0), (200, 0.55), (300, 0.1)]:
        assert float(cosine(count)) == pytest.approx(value, abs=1e-6)
    # the warm-up is at most half the run
    short = learning_rate_schedule(TranslationConfig(steps=10, learning_rate=1.0, warmup_steps=100))
    assert float(short(5)) == pytest.approx(1.0)


@pytest.mark.parametrize("alpha_lr", [0.0, 3e-2])
def test_separate_alpha_learning_rate(alpha_lr):
    # a parameter tree shaped like the model's: the α logits are the leaves named alpha_logit
    params = {"layer": {"attention": {"alpha_logit": jnp.zeros(2), "query": {"kernel": jnp.zeros((3, 2))}}}}
    config = TranslationConfig(
        steps=10, learning_rate=1e-2, warmup_steps=1, schedule="inverse_sqrt", alpha_learning_rate=alpha_lr
    )
    optimizer = make_optimizer(config)
    grads = jax.tree_util.tree_map(jnp.ones_like, params)
    updates, _ = optimizer.update(grads, optimizer.init(params), params)
    # Adam's first update is −lr · g / |g| (up to ε): −α lr for the α logits, −lr for the rest
    attention = updates["layer"]["attention"]
    np.testing.assert_allclose(attention["alpha_logit"], -alpha_lr, rtol=1e-4, atol=1e-9)
    np.testing.assert_allclose(attention["query"]["kernel"], -1e-2, rtol=1e-4)


def test_the_model_alpha_logits_are_found_by_name():
    params = nnx.state(_dropout_model("alpha_entmax"), nnx.Param)
    paths = [path for path, _ in jax.tree_util.tree_leaves_with_path(params)]
    named = [p for p in paths if any(getattr(key, "key", None) == "alpha_logit" for key in p)]
    assert len(named) == 3  # encoder self, decoder self and context attention of the one layer


@pytest.mark.slow
def test_training_with_dropout_and_options_runs():
    model = _dropout_model(
        "alpha_entmax", dropout=0.1, attention_dropout=0.1, ffn_dropout=0.1, steps=4, batch_size=8,
        warmup_steps=2, record_every=2, label_smoothing=0.1, schedule="inverse_sqrt",
        alpha_learning_rate=1e-2,
    )  # fmt: skip
    rng = np.random.default_rng(0)
    arrays = {k: rng.integers(4, 30, (16, 6)).astype(np.int32) for k in ("src", "tgt_in", "tgt_out")}
    history = train(model, arrays)
    assert len(history["loss"]) == 2 and np.all(np.isfinite(history["loss"]))


@pytest.mark.slow
def test_evaluation_during_training_sees_the_current_weights_and_changes_nothing():
    rng = np.random.default_rng(2)
    arrays = {k: rng.integers(4, 30, (16, 6)).astype(np.int32) for k in ("src", "tgt_in", "tgt_out")}
    config = {"steps": 6, "batch_size": 8, "warmup_steps": 1, "record_every": 1}
    probe = jnp.asarray(arrays["src"][:2]), jnp.asarray(arrays["tgt_in"][:2])

    def evaluate(model):
        return {"logit_sum": jnp.sum(model(*probe))}

    plain = _dropout_model("alpha_entmax", **config)
    plain_history = train(plain, arrays)
    watched = _dropout_model("alpha_entmax", **config)
    history = train(watched, arrays, evaluate=evaluate, eval_steps=[3, 6])
    assert history["eval"]["step"] == [3, 6]
    assert history["loss"] == plain_history["loss"]  # evaluating does not change training
    final = float(evaluate(plain)["logit_sum"])
    assert history["eval"]["logit_sum"][1] == pytest.approx(final, rel=1e-5)
    assert history["eval"]["logit_sum"][0] != pytest.approx(final, rel=1e-3)
    for bad in ([0], [7], [2.5], ["3"], [True]):
        with pytest.raises(ValueError, match="eval_steps"):
            train(watched, arrays, evaluate=evaluate, eval_steps=bad)
    with pytest.raises(ValueError, match="evaluate"):
        train(watched, arrays, eval_steps=[2])


@pytest.mark.slow
def test_training_shows_step_loss_and_alpha_when_someone_watches(monkeypatch, capsys):
    model = _dropout_model("alpha_entmax", steps=4, batch_size=8, warmup_steps=2, record_every=2)
    rng = np.random.default_rng(1)
    arrays = {k: rng.integers(4, 30, (16, 6)).astype(np.int32) for k in ("src", "tgt_in", "tgt_out")}
    monkeypatch.setenv("ENTMAX_PROGRESS", "0")
    train(model, arrays, desc="quiet")
    assert "quiet" not in capsys.readouterr().err
    monkeypatch.setenv("ENTMAX_PROGRESS", "1")
    train(model, arrays, desc="watched")
    err = capsys.readouterr().err
    assert "watched" in err and "4/4" in err and "step=" in err and "loss=" in err and "alpha=" in err


def test_training_stops_at_the_first_non_finite_loss_and_keeps_the_history():
    rng = np.random.default_rng(3)
    arrays = {k: rng.integers(4, 30, (16, 6)).astype(np.int32) for k in ("src", "tgt_in", "tgt_out")}
    model = _dropout_model(steps=50, batch_size=8, warmup_steps=1, record_every=2, learning_rate=1e30)
    with pytest.raises(TrainingDiverged, match="not finite at step") as info:
        train(model, arrays)
    error = info.value
    assert 1 <= error.step < 50  # stopped early, not after the whole run
    assert all(np.isfinite(error.history["loss"])) and len(error.history["step"]) < error.step
    json.dumps(error.history)  # what was measured stays usable


def _splits(n=12, seed=5):
    examples = corpus.generate_corpus(n, seed=seed)
    return {"train": examples[:8], "valid": examples[8:10], "test": examples[10:]}


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        (lambda e: Example(e.src, e.tgt, ((-1, 0),)), ValueError, r"alignment link \(-1, 0\)"),
        (lambda e: Example(e.src, e.tgt, ((0, 99),)), ValueError, r"alignment link \(0, 99\)"),
        (lambda e: (e.src, e.tgt), TypeError, "must be an Example"),
    ],
)
def test_prepare_data_names_a_bad_pair(change, error, message):
    splits = _splits()
    splits["test"] = [splits["test"][0], change(splits["test"][1])]
    config = TranslationConfig(n_train=8, n_valid=2, n_test=2, vocab_size=200, batch_size=8)
    with pytest.raises(error, match=message) as info:
        prepare_data(config, splits)
    assert "splits['test'][1]" in str(info.value)


def test_prepare_data_says_which_split_is_empty():
    splits = {**_splits(), "valid": []}
    config = TranslationConfig(n_train=8, n_valid=2, n_test=2, vocab_size=200, batch_size=8)
    with pytest.raises(ValueError, match="the valid split is empty"):
        prepare_data(config, splits)


def test_generated_splits_are_filled_to_their_size():
    config = TranslationConfig(
        n_train=40, n_valid=4, n_test=4, vocab_size=150, batch_size=8, max_src_len=24, max_tgt_len=28
    )
    data = prepare_data(config)
    assert [data["kept"][k][0] for k in ("train", "valid", "test")] == [40, 4, 4]
    with pytest.raises(ValueError, match="too few generated pairs fit"):
        prepare_data(TranslationConfig(n_train=40, n_valid=4, n_test=4, vocab_size=150, batch_size=8,
                                       max_src_len=4, max_tgt_len=4))  # fmt: skip


def test_data_prepared_with_other_length_caps_are_refused_before_training(monkeypatch):
    config = TranslationConfig(n_train=40, n_valid=4, n_test=4, vocab_size=150, batch_size=8,
                               max_src_len=32, max_tgt_len=40)  # fmt: skip
    data = prepare_data(config)
    monkeypatch.setattr(experiment, "train", lambda *a, **k: pytest.fail("training started"))
    with pytest.raises(ValueError, match="prepared with max_src_len"):
        run_experiment(config, data=data, max_src_len=28)


def test_stop_after_runs_the_start_of_the_same_schedule():
    """Stopping after 4 of 8 steps gives the first records of the whole run, and is checked."""
    rng = np.random.default_rng(3)
    arrays = {k: rng.integers(4, 30, (16, 6)).astype(np.int32) for k in ("src", "tgt_in", "tgt_out")}
    settings = {"steps": 8, "batch_size": 8, "warmup_steps": 4, "record_every": 2}
    start = train(_model(**settings), arrays, stop_after=4)
    whole = train(_model(**settings), arrays)
    assert start["step"] == [2, 4] and whole["step"] == [2, 4, 6, 8]
    np.testing.assert_allclose(start["loss"], whole["loss"][:2], rtol=1e-6)
    with pytest.raises(ValueError, match="stop_after"):
        train(_model(**settings), arrays, stop_after=9)
