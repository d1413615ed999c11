"""The toy's task: sequences of L tokens, K of them informative, hidden among noise.

A sequence holds L tokens x_1 … x_L ∈ R^d. K of them, at random positions, are
*informative*; the other L − K are *distractors*:

    informative:  x_j = μ_y + γ u + σ ε_j,        distractor:  x_j = σ ε_j,        ε_j ~ N(0, I_d),

where y ∈ {0, …, C−1} is the class, μ_y = ρ e_y are class prototypes of norm ρ
(``class_strength``), u is a shared unit "marker" direction scaled by γ (``signal_strength``),
and e_0 … e_{C−1}, u are orthonormal: either the first C + 1 basis axes (``directions="basis"``,
as in the demo) or random orthonormal directions drawn from ``task_seed``. The task reads the
task fields of a :class:`~entmax_book.toy.config.ToyConfig` only.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from entmax_book import checks
from entmax_book.toy.config import ToyConfig

__all__ = ["Dataset", "make_dataset", "pooling_baselines", "task_directions"]


class Dataset(NamedTuple):
    """A batch of toy sequences.

    Attributes:
      tokens: (n, L, d) float32 token vectors.
      labels: (n,) int32 class labels.
      informative: (n, L) bool, True at the K informative positions.
      positions: (n, K) int32, the informative positions of each sequence in increasing order.
    """

    tokens: np.ndarray
    labels: np.ndarray
    informative: np.ndarray
    positions: np.ndarray


@functools.lru_cache(maxsize=32)
def _directions(config: ToyConfig):
    if config.directions == "basis":
        basis = np.eye(config.dim, config.n_classes + 1)
    else:
        rng = np.random.default_rng(config.task_seed)
        basis, _ = np.linalg.qr(rng.standard_normal((config.dim, config.n_classes + 1)))
    prototypes = (config.class_strength * basis[:, : config.n_classes].T).astype(np.float32)
    signal = (config.signal_strength * basis[:, config.n_classes]).astype(np.float32)
    return prototypes, signal


def task_directions(config: ToyConfig):
    """The task's fixed directions: prototypes μ (C, d) of norm ρ and the marker γu (d,).

    The columns of the first C + 1 basis axes, or of one random orthonormal d × (C + 1) matrix
    (QR of a Gaussian matrix from ``numpy.random.default_rng(config.task_seed)``), scaled.

    Returns:
      (prototypes, signal): float32 NumPy arrays of shapes (C, d) and (d,).

    >>> mu, u = task_directions(ToyConfig(directions="basis"))
    >>> mu[1].tolist()[:3], float(u[4])
    ([0.0, 2.0, 0.0], 3.0)
    """
    prototypes, signal = _directions(config)
    return prototypes.copy(), signal.copy()


def make_dataset(seed, n_examples: int, length: int, config: ToyConfig = ToyConfig()) -> Dataset:
    """Draw ``n_examples`` sequences of ``length`` tokens with NumPy's ``default_rng(seed)``.

    Each sequence gets exactly K informative positions, uniform without replacement. Labels
    are balanced (``arange(n) mod C`` shuffled) or i.i.d. uniform, per ``config.balanced_classes``.

    Args:
      seed: anything ``numpy.random.default_rng`` accepts (e.g. ``[test_seed, L]``).
      n_examples: n, number of sequences (≥ 1).
      length: L, tokens per sequence (> K).
      config: the :class:`ToyConfig` (its task fields).

    Returns:
      A :class:`Dataset` of NumPy arrays.

    >>> make_dataset(0, 5, 10).informative.sum(-1).tolist()
    [4, 4, 4, 4, 4]
    """
    n_examples = checks.count("n_examples", n_examples)
    length = checks.count("length", length, config.n_informative + 1)
    n_inf = config.n_informative
    rng = np.random.default_rng(seed)
    if config.balanced_classes:
        labels = rng.permutation(np.arange(n_examples, dtype=np.int32) % config.n_classes)
    else:
        labels = rng.integers(0, config.n_classes, n_examples).astype(np.int32)
    # K distinct positions per row: the K smallest of L i.i.d. uniforms.
    order = np.argsort(rng.random((n_examples, length)), axis=-1)
    positions = np.sort(order[:, :n_inf], axis=-1).astype(np.int32)
    informative = np.zeros((n_examples, length), bool)
    np.put_along_axis(informative, positions, True, axis=-1)
    prototypes, signal = _directions(config)
    content = prototypes[labels] + signal  # (n, d)
    tokens = config.noise_std * rng.standard_normal((n_examples, length, config.dim), dtype=np.float32)
    tokens[informative] += np.repeat(content, n_inf, axis=0)
    return Dataset(tokens, labels, informative, positions)


def pooling_baselines(data: Dataset, config: ToyConfig = ToyConfig()) -> dict:
    """Accuracy of two fixed poolings with the ideal read-out argmax_c μ_cᵀ c, for reference.

    * ``oracle``: c = mean of the K informative tokens (perfect attention);
    * ``uniform``: c = mean of all L tokens (what softmax gives when all scores tie).

    Returns:
      {"oracle": float, "uniform": float}.
    """
    prototypes, _ = _directions(config)
    inf = np.asarray(data.informative, np.float32)
    tokens = np.asarray(data.tokens)
    pooled_oracle = np.einsum("nl,nld->nd", inf, tokens) / inf.sum(-1, keepdims=True)
    pooled_uniform = tokens.mean(1)
    labels = np.asarray(data.labels)
    return {
        "oracle": float(np.mean(np.argmax(pooled_oracle @ prototypes.T, -1) == labels)),
        "uniform": float(np.mean(np.argmax(pooled_uniform @ prototypes.T, -1) == labels)),
    }
