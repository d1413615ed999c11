"""The head analyses of a trained model: what a split cannot support is named, not measured."""

import dataclasses
import json

import numpy as np
import pytest
from translation_helpers import TINY

from entmax_book.translation import corpus
from entmax_book.translation.analysis import (
    ablate_head,
    alpha_modes,
    analyse,
    construction_accuracy,
    head_ablations,
    uniform_baseline,
    unmeasurable,
)
from entmax_book.translation.config import AnalysisConfig, DataConfig, TranslationConfig
from entmax_book.translation.data import Example, Split
from entmax_book.translation.experiment import prepare_data, train_and_evaluate


def _split(src_words, tags, align):
    n, length = src_words.shape
    ids = np.full((n, length), 5)
    return Split(tuple(Example("a", "b") for _ in range(n)), ids, ids, ids, src_words, src_words, align, tags)


#: Two sentences of 4 pieces with every source tag: a question with an interrogative and a
#: marker, and a statement with a two-word noun; WORDS has one word of 2 pieces.
TAGS = {
    "src_interrogative": np.array([[0, 1, 0, 0], [0, 0, 0, 0]], bool),
    "src_question": np.array([[0, 0, 1, 0], [0, 0, 0, 0]], bool),
    "src_compound_head": np.array([[0, 0, 0, 0], [0, 1, 0, 0]], bool),
    "src_marker": np.array([[1, 1, 0, 0], [0, 0, 0, 0]], bool),
}
WORDS = np.array([[0, 0, 1, -1], [0, 1, 2, -1]])


def test_unmeasurable_names_what_the_split_lacks():
    tags, words = TAGS, WORDS
    split = _split(words, tags, np.ones((2, 4, 4)))
    assert unmeasurable(split, num_heads=2) == {}
    assert set(unmeasurable(split, num_heads=1)) == {"js"}
    single = _split(np.array([[0, 1, 2, -1], [0, 1, -1, -1]]), tags, np.ones((2, 4, 4)))
    assert set(unmeasurable(single, num_heads=2)) == {"merging_multi"}
    no = np.zeros((2, 4), bool)
    plain_tags = {**tags, "src_interrogative": no, "src_compound_head": no, "src_marker": no}
    plain_tags["src_question"] = np.ones((2, 4), bool)
    everything = {
        "interrogation", "positional_compound", "marker", "marker_sink",
        "alignment_mass", "alignment_aer", "alignment_layer_mass", "alignment_layer_aer",
    }  # fmt: skip
    assert set(unmeasurable(_split(words, plain_tags, np.zeros((2, 4, 4))), num_heads=2)) == everything
    # a corpus without a tagger: every tagged analysis is named, none is measured
    assert set(unmeasurable(_split(words, {}, np.zeros((2, 4, 4))), num_heads=2)) == everything


def test_a_uniform_head_scores_its_share_of_the_pieces():
    # sentences of 4 pieces, so a uniform head gives every key 1/4 (a 2-piece word: 1 other piece)
    tags, words = TAGS, WORDS
    baseline = uniform_baseline(_split(words, tags, np.ones((2, 4, 4))))
    for key in (
        "merging_multi", "positional_compound", "positional_prev", "marker", "marker_sink", "top_key_share",
    ):  # fmt: skip
        assert baseline[key] == pytest.approx(1 / 4), key
    # padding takes no weight: the second sentence's last position is padding (id 0)
    padded = _split(words, tags, np.ones((2, 4, 4)))
    src = padded.src.copy()
    src[1, 3] = 0
    padded = dataclasses.replace(padded, src=src)
    assert uniform_baseline(padded)["positional_compound"] == pytest.approx(1 / 3, abs=1e-4)  # 4 decimals


def test_construction_accuracy_counts_each_target_tag():
    tags = {
        "tgt_compound": np.array([[0, 1, 0]], bool),
        "tgt_marker": np.array([[1, 0, 0]], bool),
        "tgt_multi_piece": np.zeros((1, 3), bool),
    }
    words = np.zeros((1, 3), int)
    split = Split(
        (Example("a", "b"),), words, words, np.array([[3, 4, 0]]), words, words, np.zeros((1, 3, 3)), tags
    )
    logits = np.eye(5)[[[3, 2, 0]]]
    expected = {"tokens": 0.5, "tgt_compound": 0.0, "tgt_marker": 1.0, "tgt_multi_piece": None}
    assert construction_accuracy(logits, split) == expected


@pytest.mark.slow
def test_analyse_reports_what_it_cannot_measure(tmp_path):
    # A small TSV corpus of statements without alignments whose words are all single pieces,
    # and one head per attention: the analyses that need them are named in "skipped".
    nouns = [("dog", "Hund"), ("cat", "Katze"), ("bird", "Vogel"), ("horse", "Pferd")]
    verbs = [("sleeps", "schläft"), ("runs", "läuft"), ("sings", "singt")]
    pairs = [Example(f"the {n} {v} .", f"{d} {w} .") for n, d in nouns for v, w in verbs]
    corpus.write_tsv(pairs * 4, tmp_path / "pairs.tsv")
    loaded = corpus.load_tsv(tmp_path / "pairs.tsv")
    splits = {"train": loaded[:36], "valid": loaded[36:40], "test": loaded[40:]}
    config = TINY.replace(n_train=36, n_valid=4, n_test=8, vocab_size=200, num_heads=1, normaliser="softmax",
                          steps=4, batch_size=8, warmup_steps=1, record_every=2)  # fmt: skip
    data = prepare_data(config.data, splits)
    run = train_and_evaluate(config, data)
    analysis = analyse(run.model, data.test, AnalysisConfig())[0]
    json.dumps(analysis)
    assert set(analysis["skipped"]) == {
        "js", "merging_multi", "interrogation", "positional_compound", "marker",
        "alignment_mass", "alignment_aer", "alignment_layer_mass", "alignment_layer_aer",
    }  # fmt: skip
    assert not set(analysis) & set(analysis["skipped"])
    assert np.asarray(analysis["positional_prev"]).shape == (1, 1)
    assert analysis["maps"] == {}  # each map's analysis is skipped


@pytest.mark.slow
def test_analyse_measures_every_head_of_a_tagged_corpus():
    config = TranslationConfig().replace(n_train=60, n_valid=4, n_test=24, vocab_size=160, d_model=16,
                                         num_heads=2, num_layers=1, d_ff=32, steps=2, batch_size=8,
                                         warmup_steps=1, record_every=1)  # fmt: skip
    data = prepare_data(DataConfig(**{**config.data.__dict__}))
    run = train_and_evaluate(config, data)
    analysis, weights = analyse(run.model, data.test, config.analysis)
    for key in ("positional_prev", "merging", "interrogation", "alignment_mass", "marker", "marker_sink"):
        assert np.asarray(analysis[key]).shape == (1, 2), key
    for kind, w in weights.items():
        assert w.shape[:3] == (1, 24, 2), kind
        assert sum(analysis["density_hist"][kind]) > 0


def test_alpha_modes_are_not_fooled_by_heads_at_the_clamp():
    # 43 heads at the 1.01 floor with a tail: a bimodality coefficient would call this bimodal
    from scipy import stats

    clamped = np.concatenate([np.full(43, 1.01), np.linspace(1.3, 1.6, 5)])
    n = clamped.size
    sarle = (stats.skew(clamped, bias=False) ** 2 + 1) / (
        stats.kurtosis(clamped, bias=False) + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3))
    )
    assert sarle > 5 / 9  # the coefficient says "bimodal"
    assert alpha_modes(clamped) == {"dense": 43, "sparse": 0, "heads": 48}  # the counts say no sparse mode
    two_modes = np.concatenate([np.full(20, 1.1), np.full(28, 1.9)])
    assert alpha_modes({"encoder_self": two_modes.reshape(2, 24)}) == {"dense": 20, "sparse": 28, "heads": 48}


@pytest.mark.slow
def test_ablating_a_head_removes_its_contribution_and_only_in_the_copy():
    import jax.numpy as jnp
    from translation_helpers import small_model

    model = small_model("softmax", num_layers=1)
    src, tgt = jnp.asarray([[5, 6, 7, 8]]), jnp.asarray([[2, 9, 10]])
    before = np.asarray(model(src, tgt))
    ablated = ablate_head(model, "context", 0, 1)
    np.testing.assert_array_equal(np.asarray(model(src, tgt)), before)  # the original is unchanged
    assert not np.allclose(np.asarray(ablated(src, tgt)), before)
    kernel = np.asarray(ablated.decoder_layers[0].context_attention.out.kernel.value)
    assert not kernel[1].any() and kernel[0].any()
    # ablating every head of an attention equals removing it: its output is only the bias
    for head in range(2):
        model = ablate_head(model, "encoder_self", 0, head)
    out = model.encoder_layers[0].self_attention(jnp.ones((1, 4, 16)))
    np.testing.assert_allclose(
        np.asarray(out),
        np.broadcast_to(model.encoder_layers[0].self_attention.out.bias.value, (1, 4, 16)),
        atol=1e-6,
    )
    with pytest.raises(ValueError, match="kind must be one of"):
        ablate_head(model, "cross", 0, 0)


@pytest.mark.slow
def test_head_ablations_measure_every_head_against_the_intact_model():
    from entmax_book.translation.model import Transformer

    config = TINY
    data = prepare_data(config.data)
    model = Transformer(config.model, data.tokenizer.vocab_size, seed=0)
    result = head_ablations(model, data.test, kinds=("encoder_self",))
    assert set(result) == {"intact", "encoder_self"}
    table = result["encoder_self"]
    assert len(table) == config.model.num_layers and len(table[0]) == config.model.num_heads
    assert set(table[0][0]) == set(result["intact"])
