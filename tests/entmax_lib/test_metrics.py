"""Attention analyses on hand-made inputs with known answers."""

import numpy as np
import pytest

from entmax_lib import softmax, sparsemax
from entmax_lib.metrics import (
    alignment_agreement,
    attention_density,
    head_diversity,
    interrogation_score,
    positional_confidence,
    subword_merging_score,
)


def one_hot_rows(keys, length):
    """Attention whose row q puts all weight on key ``keys[q]``."""
    return np.eye(length)[np.asarray(keys)]


# --- density ----------------------------------------------------------------------------------


def test_density_of_sparse_and_dense_rows():
    scores = np.array([[1.0, 0.5, -10.0, -10.0], [0.3, -0.2, 0.1, 0.0]])
    sparse = np.asarray(sparsemax(scores))
    np.testing.assert_allclose(sparse[0], [0.75, 0.25, 0.0, 0.0], atol=1e-6)  # τ = 0.25
    assert attention_density(sparse, True)[0] == 0.5
    np.testing.assert_array_equal(attention_density(np.asarray(softmax(scores)), True), [1.0, 1.0])


def test_density_counts_only_allowed_keys():
    attn = np.array([[0.5, 0.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    allowed = np.array([[True, True, False, False], [True, True, True, True], [False] * 4])
    density = attention_density(attn, allowed)
    assert density[0] == 1.0 and density[1] == 0.25 and np.isnan(density[2])
    # Decoder self-attention: query q may see q + 1 keys; all weight on itself → 1/(q+1).
    causal = np.tril(np.ones((5, 5), bool))
    np.testing.assert_allclose(attention_density(np.eye(5), causal), 1 / np.arange(1, 6))
    assert attention_density(np.full((1, 4), 0.25), True, threshold=0.3)[0] == 0.0


# --- head diversity ---------------------------------------------------------------------------


def test_identical_heads_have_zero_diversity():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(6), size=5)  # (Lq, Lk)
    assert head_diversity(np.stack([p] * 4)) == pytest.approx(0.0, abs=1e-12)
    assert head_diversity(np.full((8, 3, 5), 0.2)) == pytest.approx(0.0, abs=1e-12)


def test_heads_on_distinct_keys_have_diversity_one():
    n_heads = 4
    heads = np.stack([one_hot_rows([h, h, h], 6) for h in range(n_heads)])  # (H, Lq=3, Lk=6)
    assert head_diversity(heads) == pytest.approx(1.0)
    batched = np.stack([heads, heads[::-1]])  # (B, H, Lq, Lk)
    assert head_diversity(batched) == pytest.approx(1.0)


def test_diversity_known_value_and_masking():
    # Two heads: [1, 0] and [0.5, 0.5]; mean [0.75, 0.25].
    # JS = H2(0.75, 0.25) − (0 + 1)/2 = 0.811278... − 0.5 in base 2.
    expected = -(0.75 * np.log2(0.75) + 0.25 * np.log2(0.25)) - 0.5
    heads = np.array([[[1.0, 0.0, 0.0]], [[0.5, 0.5, 0.0]]])
    assert head_diversity(heads) == pytest.approx(expected)
    # A padded key and a padded query do not change the value; an invalid query is skipped.
    padded = np.concatenate([heads, np.full((2, 1, 3), 1 / 3)], axis=1)  # second query = filler
    allowed = np.array([[True, True, False], [True, True, False]])
    assert head_diversity(padded, allowed, query_valid=[True, False]) == pytest.approx(expected)
    with pytest.raises(ValueError, match="2 heads"):
        head_diversity(heads[:1])


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
