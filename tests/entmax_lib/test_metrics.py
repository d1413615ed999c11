"""Attention analyses on hand-made inputs with known answers."""

import numpy as np
import pytest

from entmax_lib import softmax, sparsemax
from entmax_lib.metrics import attention_density, attention_entropy, head_diversity, support_size


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


# --- support and entropy ----------------------------------------------------------------------


def test_support_size_counts_nonzero_allowed_keys():
    scores = np.array([[1.0, 0.5, -10.0, -10.0], [0.3, -0.2, 0.1, 0.0]])
    sparse = np.asarray(sparsemax(scores))
    assert support_size(sparse).tolist() == [2, int((sparse[1] > 0).sum())]
    assert support_size(np.asarray(softmax(scores)), np.arange(4) < 3).tolist() == [3, 3]


def test_entropy_of_uniform_and_one_hot_rows_against_scipy():
    from scipy.stats import entropy

    rows = np.array([[0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0], [0.5, 0.3, 0.2, 0.0]])
    np.testing.assert_allclose(attention_entropy(rows), [entropy(r) for r in rows], atol=1e-12)
    np.testing.assert_allclose(attention_entropy(rows[:1], np.arange(4) < 2), [0.5 * np.log(4)], atol=1e-12)
