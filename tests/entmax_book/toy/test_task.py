"""Tests for entmax_book.toy.task: the data of Chapter 4's toy.

The data are checked against the generating formulas: exact counts, and empirical means with
explicit statistical tolerances.
"""

import numpy as np
import pytest

from entmax_book.toy import configs, task
from entmax_book.toy.config import ToyConfig

CONFIG = ToyConfig()


def test_exactly_k_informative_positions_and_they_match_the_mask():
    data = task.make_dataset(0, 200, 24, CONFIG)
    assert data.tokens.shape == (200, 24, CONFIG.dim) and data.tokens.dtype == np.float32
    assert data.positions.shape == (200, CONFIG.n_informative)
    np.testing.assert_array_equal(data.informative.sum(-1), CONFIG.n_informative)
    assert np.all(np.diff(data.positions, axis=-1) > 0)  # sorted and distinct
    rebuilt = np.zeros_like(data.informative)
    np.put_along_axis(rebuilt, data.positions, True, axis=-1)
    np.testing.assert_array_equal(rebuilt, data.informative)


def test_positions_cover_the_sequence_uniformly():
    length, n = 16, 4000
    data = task.make_dataset(1, n, length, CONFIG)
    freq = data.informative.mean(0)  # expected K/L at every position
    expected = CONFIG.n_informative / length
    tolerance = 5 * np.sqrt(expected * (1 - expected) / n)
    np.testing.assert_allclose(freq, expected, atol=tolerance)


def test_classes_are_balanced():
    data = task.make_dataset(2, 400, 8, CONFIG)
    np.testing.assert_array_equal(np.bincount(data.labels, minlength=CONFIG.n_classes), 100)
    assert not np.all(np.diff(data.labels) >= 0)  # shuffled, not sorted


def test_same_seed_same_data_other_seed_other_data():
    a, b, c = (task.make_dataset(s, 32, 16, CONFIG) for s in (7, 7, 8))
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a.tokens, c.tokens)
    assert not np.array_equal(a.positions, c.positions)
    assert not np.array_equal(
        task.make_dataset([1234, 16], 32, 16).tokens, task.make_dataset([0, 16], 32, 16).tokens
    )


def test_task_directions_are_orthogonal_with_the_configured_norms():
    prototypes, signal = task.task_directions(CONFIG)
    gram = prototypes @ prototypes.T
    np.testing.assert_allclose(gram, CONFIG.class_strength**2 * np.eye(CONFIG.n_classes), atol=1e-5)
    np.testing.assert_allclose(prototypes @ signal, 0.0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(signal), CONFIG.signal_strength, rtol=1e-5)


def test_distractors_carry_no_class_signal_and_informative_tokens_do():
    """Per class, distractors average to 0; informative tokens to μ_y + γu (5σ/√N tolerance)."""
    data = task.make_dataset(3, 2000, 16, CONFIG)
    prototypes, signal = task.task_directions(CONFIG)
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
        task.make_dataset(0, 4, CONFIG.n_informative - 1, CONFIG)
    with pytest.raises(ValueError, match="n_examples"):
        task.make_dataset(0, 0, 8, CONFIG)


def test_basis_directions_and_iid_labels_as_in_the_demo():
    config = configs.ORIGINAL
    prototypes, signal = task.task_directions(config)
    np.testing.assert_array_equal(prototypes, 2.5 * np.eye(4, 16))
    np.testing.assert_array_equal(signal, 2.5 * np.eye(16)[4])
    data = task.make_dataset(0, 4000, 8, config)
    counts = np.bincount(data.labels, minlength=4)
    assert len(set(counts.tolist())) > 1  # i.i.d. labels are not exactly balanced ...
    np.testing.assert_allclose(counts / 4000, 0.25, atol=5 * np.sqrt(0.25 * 0.75 / 4000))  # ... but uniform
    assert data.informative.sum(-1).max() == 3


def test_pooling_baselines_bracket_the_task():
    data = task.make_dataset(9, 2000, 64, CONFIG)
    base = task.pooling_baselines(data, CONFIG)
    # Oracle: the mean of K informative tokens has noise σ/√K along each prototype
    # difference of length ρ√2, so it is nearly always right; uniform pooling is diluted.
    assert base["oracle"] > 0.97
    assert 1 / CONFIG.n_classes < base["uniform"] < base["oracle"] - 0.2
