"""Per-seed measures of Chapter 5's recorded runs: one number per seed for each condition.

Every comparison of Chapter 5 is paired over seeds, so every measure here returns one value per
seed (an array, seed first), read from the recorded results (``record.load(...)["result"]``:
the training history and the test scores) or from the analyses of the trained weights
(:func:`~entmax_book.translation.analysis.analyse`). Both come as a dict keyed by run name,
:func:`~entmax_book.translation.runs.run_name` (:data:`~entmax_book.translation.runs.RUNS`).

Example:
  >>> results = {run_name("softmax", s): {"test": {"bleu": b}} for s, b in enumerate([90.0, 92.0, 94.0])}
  >>> per_seed(results, "softmax", lambda r: r["test"]["bleu"], seeds=(0, 1, 2)).tolist()
  [90.0, 92.0, 94.0]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from entmax_book import stats
from entmax_book.translation.model import ATTENTION_TYPES
from entmax_book.translation.runs import SEEDS, run_name

__all__ = [
    "alpha_change",
    "alpha_moved",
    "best_head",
    "density_spread",
    "diversity",
    "final_alpha",
    "interval",
    "largest_drop",
    "last_quarter_change",
    "marker_vs_sink",
    "per_seed",
    "plateau_summary",
    "start_alpha",
    "top_key_shares",
]


def per_seed(by_run: Mapping, condition: str, fn: Callable, seeds: Sequence[int] = SEEDS) -> np.ndarray:
    """``fn`` of each seed's run of ``condition``, as an array (seed first).

    Args:
      by_run: {run name: a run's result or analysis}.
      condition: the condition, e.g. "softmax".
      fn: what to read of one run (a number or an array of one shape for every seed).
      seeds: the seeds, in order.

    Returns:
      ``np.array([fn(by_run[run_name(condition, s)]) for s in seeds])``.
    """
    return np.array([fn(by_run[run_name(condition, seed)]) for seed in seeds])


def interval(values) -> tuple[float, float, float]:
    """(mean, low, high): the mean of per-seed values and its 95 % t-interval
    (:func:`entmax_book.stats.paired` against 0).

    >>> [round(v, 3) for v in interval([1.0, 2.0, 3.0])]
    [2.0, -0.484, 4.484]
    """
    c = stats.paired("", "", values)
    return c.mean, c.low, c.high


def final_alpha(results: Mapping, condition: str, kind: str, seeds=SEEDS) -> np.ndarray:
    """(seed, layer · head): every head's α of attention type ``kind`` at the end of training.

    Read from the training history's last α record (``history["alpha"][kind][-1]``).
    """
    return per_seed(results, condition, lambda r: np.ravel(r["history"]["alpha"][kind][-1]), seeds)


def start_alpha(results: Mapping, condition: str, kind: str, seeds=SEEDS) -> np.ndarray:
    """(seed, layer · head): every head's α of attention type ``kind`` at initialisation
    (the history's first α record, the random draw)."""
    return per_seed(results, condition, lambda r: np.ravel(r["history"]["alpha"][kind][0]), seeds)


def _alpha_steps(results, condition, seeds):
    """(types, seed, heads) of final α − initial α."""
    return np.array(
        [
            final_alpha(results, condition, k, seeds) - start_alpha(results, condition, k, seeds)
            for k in ATTENTION_TYPES
        ]
    )


def alpha_change(results: Mapping, condition: str, seeds=SEEDS) -> np.ndarray:
    """Per seed: the mean over every head (all attention types) of final α − initial α.

    Negative when the heads end denser than their random start.
    """
    return _alpha_steps(results, condition, seeds).mean(axis=(0, 2))


def alpha_moved(results: Mapping, condition: str, seeds=SEEDS) -> np.ndarray:
    """Per seed: the mean over every head (all attention types) of |final α − initial α|."""
    return np.abs(_alpha_steps(results, condition, seeds)).mean(axis=(0, 2))


def density_spread(analyses: Mapping, condition: str, seeds=SEEDS, kinds=ATTENTION_TYPES) -> np.ndarray:
    """Per seed: the standard deviation of the densities of the model's heads of the attention
    types ``kinds`` (``analysis["density"]``; all types pooled by default, which also counts the
    gaps between the types). Softmax's is 0: every head has density 1."""
    return per_seed(
        analyses,
        condition,
        lambda a: np.std(np.concatenate([np.ravel(a["density"][k]) for k in kinds])),
        seeds,
    )


def diversity(analyses: Mapping, condition: str, kinds=ATTENTION_TYPES, seeds=SEEDS) -> np.ndarray:
    """Per seed: the Jensen–Shannon divergence between the heads of a layer
    (``analysis["js"]``), averaged over the layers of the attention types ``kinds``."""
    return per_seed(analyses, condition, lambda a: np.mean([a["js"][k] for k in kinds]), seeds)


def best_head(analyses: Mapping, condition: str, key: str, seeds=SEEDS) -> np.ndarray:
    """Per seed: the best head's score ``key`` (the largest of ``analysis[key]``, [layer][head]),
    e.g. "merging_multi" or "alignment_mass"."""
    return per_seed(analyses, condition, lambda a: np.max(a[key]), seeds)


def _marker_gap(analysis):
    marker = np.asarray(analysis["marker"])
    layer, head = np.unravel_index(np.argmax(marker), marker.shape)
    return marker[layer, head] - np.asarray(analysis["marker_sink"])[layer, head]


def marker_vs_sink(analyses: Mapping, condition: str, seeds=SEEDS) -> np.ndarray:
    """Per seed: the best marker head's weight on a marker question's "?" minus the same head's
    weight on a statement's final "." (positive: it tells a question from a sentence end)."""
    return per_seed(analyses, condition, _marker_gap, seeds)


def top_key_shares(analyses: Mapping, condition: str, seeds=SEEDS) -> np.ndarray:
    """(seed, layer · head): every encoder head's top-key share (``analysis["top_key_share"]``:
    the weight of a sentence's most-attended key, averaged over sentences), the baseline that a
    claimed sink head is compared with."""
    return per_seed(analyses, condition, lambda a: np.ravel(a["top_key_share"]), seeds)


def _largest_drop(ablated, kind, construction):
    accuracy = [head[construction] for layer in ablated[kind] for head in layer]
    return 100 * (ablated["intact"][construction] - min(accuracy))


def largest_drop(ablations: Mapping, condition: str, kind: str, construction: str, seeds=SEEDS) -> np.ndarray:
    """Per seed: the accuracy lost (points) on ``construction`` when the most needed head of
    ``kind`` is switched off, max over heads h of 100 · (accuracy(intact) − accuracy(without h)).

    Args:
      ablations: {run name: :func:`~entmax_book.translation.analysis.head_ablations` of the run}.
      condition: e.g. "softmax".
      kind: an attention type, e.g. "context".
      construction: a key of ``construction_accuracy``, e.g. "tgt_marker" or "tokens".

    >>> run = {"intact": {"tokens": 0.9}, "context": [[{"tokens": 0.85}, {"tokens": 0.6}]]}
    >>> drop = largest_drop({run_name("softmax", 0): run}, "softmax", "context", "tokens", seeds=(0,))
    >>> drop.round(6).tolist()
    [30.0]
    """
    return per_seed(ablations, condition, lambda a: _largest_drop(a, kind, construction), seeds)


def last_quarter_change(curve: Mapping, key: str) -> tuple[float, float]:
    """(value, best): a validation curve's value at the start of the run's last quarter, and its
    best value from there on (the largest for an accuracy, the smallest otherwise).

    Args:
      curve: a training history's "eval" ({"step": [...], key: [...]}).
      key: e.g. "valid_loss" or "valid_accuracy".

    >>> last_quarter_change({"step": [0, 1, 2, 3, 4], "valid_loss": [5.0, 3.0, 2.0, 1.5, 1.2]}, "valid_loss")
    (1.5, 1.2)
    """
    steps = np.asarray(curve["step"])
    start = int(np.searchsorted(steps, 0.75 * steps[-1]))
    values = np.asarray(curve[key], np.float64)
    best = values[start:].max() if "accuracy" in key else values[start:].min()
    return float(values[start]), float(best)


def plateau_summary(results: Mapping) -> dict:
    """How close the runs came to convergence, over their last quarter.

    Args:
      results: {run name: result}, each with "plateau" (``runs.plateaued`` of its curve) and
        ``history["eval"]``.

    Returns:
      {"n_runs", "n_plateau": runs at their plateau, "max_accuracy_gain": the largest gain of
      validation token accuracy (points), "loss_gain_mean"/"_min"/"_max": the relative fall of
      the validation loss (per cent)}.
    """
    loss, accuracy = [], []
    for r in results.values():
        at, best = last_quarter_change(r["history"]["eval"], "valid_loss")
        loss.append(100 * (at - best) / at)
        at, best = last_quarter_change(r["history"]["eval"], "valid_accuracy")
        accuracy.append(100 * (best - at))
    return {
        "n_runs": len(results),
        "n_plateau": sum(bool(r["plateau"]) for r in results.values()),
        "max_accuracy_gain": max(accuracy),
        "loss_gain_mean": float(np.mean(loss)),
        "loss_gain_min": min(loss),
        "loss_gain_max": max(loss),
    }
