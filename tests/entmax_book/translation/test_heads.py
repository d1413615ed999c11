"""The paper's head scores on hand-made inputs with known answers."""

import numpy as np
import pytest

from entmax_book.translation.heads import (
    alignment_agreement,
    interrogation_score,
    positional_confidence,
    subword_merging_score,
    top_key_share,
)


def one_hot_rows(keys, length):
    """Attention whose row q puts all weight on key ``keys[q]``."""
    return np.eye(length)[np.asarray(keys)]


# --- positional heads -------------------------------------------------------------------------


def test_positional_confidence():
    length = 6
    previous = one_hot_rows([0, 0, 1, 2, 3, 4], length)  # query 0 has no previous token
    valid = np.ones(length, bool)
    assert positional_confidence(previous, -1, valid) == 1.0
    assert positional_confidence(previous, +1, valid) == 0.0
    nxt = one_hot_rows([1, 2, 3, 4, 5, 5], length)
    assert positional_confidence(nxt, +1, valid) == 1.0
    uniform = np.full((length, length), 1 / length)
    assert positional_confidence(uniform, -1, valid) == pytest.approx(1 / length)
    # Padding: only the first 4 positions are real; query 3's next token is padding.
    half = np.array([0.5, 0.5, 0.0, 0.0, 0.0, 0.0])
    mixed = np.stack([one_hot_rows([1, 2, 3, 4, 5, 5], length), np.tile(half, (length, 1))])
    real = np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 0, 0]], bool)
    # Batch 0 counts queries 0-2 (weight 1 each), batch 1 queries 0-2: weights 0.5, 0, 0.
    assert positional_confidence(mixed, +1, real, key_valid=real) == pytest.approx((3 + 0.5) / 6)


# --- subword merging --------------------------------------------------------------------------


def test_subword_merging_score_by_hand():
    word_ids = np.array([0, 0, 1, 2, 2, 2, -1])
    attn = np.zeros((7, 7))
    attn[0, [0, 1, 2]] = [0.2, 0.7, 0.1]  # piece 0 → piece 1 (same word): 0.7
    attn[1, [0, 1]] = [0.6, 0.4]  # piece 1 → piece 0: 0.6
    attn[2, [2, 3]] = [0.8, 0.2]  # single-piece word: p_22 = 0.8
    attn[3, [4, 5]] = [0.5, 0.5]  # piece 3 → pieces 4, 5: 1.0
    attn[4, [3, 4]] = [0.1, 0.9]
    attn[5, :] = 1 / 7
    attn[6, 6] = 1.0  # EOS belongs to no word
    scores = {"word 0": 0.7, "word 1": 0.8, "word 2": 1.0}
    assert subword_merging_score(attn, word_ids) == pytest.approx(np.mean(list(scores.values())))
    assert subword_merging_score(attn, word_ids, include_single=False) == pytest.approx((0.7 + 1.0) / 2)
    # Batched over sentences: the mean over all clusters of both.
    other = np.eye(7)
    both = subword_merging_score(np.stack([attn, other]), np.stack([word_ids, word_ids]))
    assert both == pytest.approx((0.7 + 0.8 + 1.0 + 0.0 + 1.0 + 0.0) / 6)


# --- interrogation ----------------------------------------------------------------------------


def test_interrogation_score():
    # "where does the teacher live ?" as pieces; "?" at position 5, "where" at 0.
    attn = np.full((7, 7), 1 / 7)
    attn[0] = [0.05, 0.0, 0.0, 0.0, 0.0, 0.9, 0.05]
    question = np.array([0, 0, 0, 0, 0, 1, 0], bool)
    interrogative = np.array([1, 0, 0, 0, 0, 0, 0], bool)
    assert interrogation_score(attn, question, interrogative) == pytest.approx(0.9)
    # Two sentences: the second interrogative word puts 0.7 on "?".
    second = attn.copy()
    second[0] = [0.3, 0.0, 0.0, 0.0, 0.0, 0.7, 0.0]
    assert interrogation_score(np.stack([attn, second]), question, interrogative) == pytest.approx(0.8)
    with pytest.raises(ValueError, match="interrogative"):
        interrogation_score(attn, question, np.zeros(7, bool))


# --- alignment --------------------------------------------------------------------------------


def test_alignment_agreement_by_hand():
    gold = np.array([[1, 0, 0], [0, 1, 1], [0, 0, 0]])  # third target row unaligned
    attn = np.array([[0.8, 0.2, 0.0], [0.6, 0.3, 0.1], [0.0, 0.0, 1.0]])
    result = alignment_agreement(attn, gold)
    # Mass on gold: row 0 0.8, row 1 0.4. Argmax links: (0, 0) correct, (1, 0) wrong.
    assert result["gold_mass"] == pytest.approx(0.6)
    assert result["precision"] == pytest.approx(1 / 2)
    assert result["recall"] == pytest.approx(1 / 3)
    assert result["aer"] == pytest.approx(1 - 2 * 1 / (2 + 3))
    assert result["rows"] == 2
    # Attention spread evenly over the gold links: all mass on gold, every argmax correct.
    perfect = alignment_agreement(gold / np.maximum(gold.sum(-1, keepdims=True), 1), gold)
    assert perfect["gold_mass"] == pytest.approx(1.0) and perfect["precision"] == 1.0
    with pytest.raises(ValueError, match="gold"):
        alignment_agreement(attn, np.zeros_like(gold))


def test_top_key_share_separates_a_sink_from_spread_and_positional_heads():
    """The measure that carries the sink claim must tell the cases apart: a head parking on one
    key, a head spread evenly, a positional head (each query on its previous key); and it must
    not be the maximum over every (sentence, key), which a lucky sentence decides."""
    rng = np.random.default_rng(0)
    n, length = 50, 8
    valid = np.ones((n, length), bool)
    sink = np.zeros((n, length, length))
    sink[..., -1] = 1.0
    spread = np.full((n, length, length), 1 / length)
    positional = np.stack([one_hot_rows(np.maximum(np.arange(length) - 1, 0), length)] * n)
    noisy = rng.dirichlet(np.ones(length), size=(n, length))  # random rows
    scores = {name: top_key_share(w, valid) for name, w in
              {"sink": sink, "spread": spread, "positional": positional, "noisy": noisy}.items()}  # fmt: skip
    assert scores["sink"] == 1.0 and scores["spread"] == pytest.approx(1 / length)
    assert scores["positional"] == pytest.approx(2 / length)  # key 0 takes queries 0 and 1
    assert scores["sink"] > 2 * max(scores["positional"], scores["noisy"], scores["spread"])
    # the old measure, a maximum over sentences and keys, calls random rows a sink more often
    over_all = (noisy.mean(1)).max()
    assert over_all > scores["noisy"]


def test_top_key_share_counts_only_valid_queries_and_keys():
    attn = np.array([[[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]])
    assert top_key_share(attn, np.array([[True, True, False]])) == pytest.approx(0.5)
    assert top_key_share(attn, np.array([[True, False, False]]), np.array([[True, False, True]])) == 0.0
    with pytest.raises(ValueError, match="no sentences"):
        top_key_share(attn, np.zeros((1, 3), bool))
