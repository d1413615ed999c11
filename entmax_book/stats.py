"""Verdicts from numbers: paired differences over seeds, Holm's correction, verdict strings.

An experiment chapter states claims ("sparsemax is more accurate than softmax at L = 512") and
checks each on several seeds. Every claim is written as a :class:`Comparison` whose effect is
*positive when the claim is right*: the mean over seeds of a per-seed difference, its 95 %
t-interval and the two-sided t-test p-value of "the mean difference is zero". The chapter's
family of comparisons is corrected together with :func:`holm`, and :func:`verdict` turns the
corrected p-value and the sign of the effect into the word the chapter prints:

* ``"holds"``: corrected p < 0.05 and the effect has the claimed sign;
* ``"reversed"``: corrected p < 0.05 and the opposite sign;
* ``"suggestive"``: corrected p in [0.05, 0.10) and the claimed sign;
* ``"not shown"``: anything else. It never means "equal": a test that finds no difference
  does not show equivalence.

Reference: S. Holm, "A simple sequentially rejective multiple test procedure",
Scandinavian Journal of Statistics 6 (1979).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import stats as _scipy_stats

#: The verdict words, from strongest to weakest support for the claim.
VERDICTS = ("holds", "suggestive", "not shown", "reversed")


class Comparison(NamedTuple):
    """One claim checked over seeds.

    Attributes:
      claim: the claim in words, oriented so that a positive ``mean`` supports it.
      setting: where it was checked (a setting or a condition).
      mean: mean over seeds of the per-seed difference.
      low, high: its 95 % t-interval.
      p: two-sided p-value of the one-sample t-test of "mean difference = 0" (uncorrected).
      n: number of seeds.
    """

    claim: str
    setting: str
    mean: float
    low: float
    high: float
    p: float
    n: int


def paired(claim: str, setting: str, a, b=0.0) -> Comparison:
    """The per-seed differences ``a − b`` as a :class:`Comparison`.

    With d_s = a_s − b_s over n seeds, mean d̄, sample standard deviation s_d:
    interval d̄ ± t_{0.975, n−1} · s_d / √n, and p = 2 P(T_{n−1} > |d̄| √n / s_d). When every
    difference is the same (s_d = 0), p is 0 for a non-zero mean and 1 for a zero mean.

    Args:
      claim, setting: the words of the row (see :class:`Comparison`).
      a: per-seed values, shape (n,), n ≥ 2.
      b: per-seed values of the same seeds (the shape of ``a``), or a number (a one-sample
        comparison).

    Returns:
      A :class:`Comparison`.

    >>> c = paired("a beats b", "demo", [0.9, 0.8, 0.85], [0.7, 0.7, 0.72])
    >>> round(c.mean, 3), c.n, c.p < 0.05
    (0.143, 3, True)
    """
    a = np.asarray(a, np.float64)
    if a.ndim != 1 or len(a) < 2:
        raise ValueError(f"a must be one value per seed for at least 2 seeds, got shape {a.shape}.")
    b = np.asarray(b, np.float64)
    if b.ndim != 0 and b.shape != a.shape:
        raise ValueError(f"b must be a number or one value per seed of a ({len(a)}), got shape {b.shape}.")
    d = a - b
    if not np.all(np.isfinite(d)):
        raise ValueError(f"the differences for {claim!r} ({setting}) are not all finite: {d}.")
    n, mean, sd = len(d), float(d.mean()), float(d.std(ddof=1))
    half = float(_scipy_stats.t.ppf(0.975, n - 1)) * sd / np.sqrt(n)
    if sd == 0.0:
        p = 0.0 if mean != 0.0 else 1.0
    else:
        p = float(2 * _scipy_stats.t.sf(abs(mean) * np.sqrt(n) / sd, n - 1))
    return Comparison(claim, setting, mean, float(mean - half), float(mean + half), p, n)


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjusted p-values (controls the family-wise error rate).

    Sorted ascending, p_(i) becomes max_{j ≤ i} min(1, (m − j + 1) p_(j)) for m tests; the
    adjusted values come back in the input order. Rejecting where the adjusted value is below
    0.05 is Holm's procedure at level 0.05.

    Args:
      pvalues: the m uncorrected p-values.

    Returns:
      The m adjusted p-values, each ≥ its input and ≤ 1.

    >>> holm([0.01, 0.04, 0.03]).round(3).tolist()
    [0.03, 0.06, 0.06]
    """
    p = np.asarray(pvalues, np.float64)
    if p.ndim != 1 or np.any((p < 0) | (p > 1)) or np.any(np.isnan(p)):
        raise ValueError(f"pvalues must be a list of numbers in [0, 1], got {pvalues}.")
    m = len(p)
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(stepped)
    return adjusted


def verdict(p_corrected: float, mean: float) -> str:
    """The verdict word for a corrected p-value and the signed effect (see the module).

    >>> verdict(0.01, +0.2), verdict(0.01, -0.2), verdict(0.07, 0.1), verdict(0.4, 0.1)
    ('holds', 'reversed', 'suggestive', 'not shown')
    """
    if not 0.0 <= p_corrected <= 1.0:
        raise ValueError(f"p_corrected must lie in [0, 1], got {p_corrected}.")
    if not np.isfinite(mean):
        raise ValueError(f"mean must be a finite number, got {mean}.")
    if p_corrected < 0.05 and mean != 0.0:
        return "holds" if mean > 0 else "reversed"
    if p_corrected < 0.10 and mean > 0:
        return "suggestive"
    return "not shown"


def plateaued(
    steps, values, last_fraction: float = 0.25, tolerance: float = 0.01, relative: bool = True
) -> bool:
    """Whether a curve to minimise has reached its plateau: it improved by less than
    ``tolerance`` (relative, or absolute) over the last ``last_fraction`` of the run.

    With v_a the value at the first kept step at or after a = (1 − last_fraction) · (last
    step) and v_min the smallest value from there on: plateau ⇔ (v_a − v_min) / |v_a| <
    tolerance, or v_a − v_min < tolerance with ``relative=False`` (for an error rate, say). A
    loss still falling by 1 % or more over the last quarter has not converged; a curve that does
    not fall at all (v_min = v_a, even at 0) has.

    Args:
      steps: the steps at which the curve was measured, increasing.
      values: the loss at those steps (finite).
      last_fraction: the final part of the run that must be flat, in (0, 1).
      tolerance: the largest improvement over it that still counts as flat.
      relative: measure the improvement relative to v_a (default) or in the values' units.

    >>> plateaued([0, 100, 200, 300, 400], [3.0, 1.0, 0.80, 0.798, 0.797])
    True
    >>> plateaued([0, 100, 200, 300, 400], [3.0, 1.0, 0.80, 0.75, 0.70])
    False
    >>> plateaued([0, 100, 200, 300, 400], [0.5, 0.1, 0.040, 0.038, 0.036], tolerance=0.005, relative=False)
    True
    """
    steps, values = np.asarray(steps, np.float64), np.asarray(values, np.float64)
    if steps.ndim != 1 or steps.shape != values.shape or len(steps) < 2 or np.any(np.diff(steps) <= 0):
        raise ValueError("steps must increase and match values, with at least two points.")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"values must be finite, got {values}.")
    if not 0.0 < last_fraction < 1.0 or not tolerance > 0.0:
        raise ValueError(f"need 0 < last_fraction < 1 and tolerance > 0, got {last_fraction}, {tolerance}.")
    start = int(np.searchsorted(steps, (1.0 - last_fraction) * steps[-1]))
    if start >= len(steps) - 1:
        raise ValueError(f"the last {last_fraction:.0%} of the run holds fewer than two measured points.")
    v_a = values[start]
    gain = v_a - values[start:].min()
    # A product, not gain/|v_a|: a curve flat at 0 is flat (no 0/0), one falling from 0 is not.
    return bool(gain == 0.0 or gain < tolerance * (abs(v_a) if relative else 1.0))


class Verdict(NamedTuple):
    """A :class:`Comparison` with its Holm-corrected p-value and its verdict word."""

    comparison: Comparison
    p_corrected: float
    verdict: str


def verdicts(family) -> list[Verdict]:
    """Correct a family of :class:`Comparison` together (Holm) and give each its verdict.

    >>> rows = verdicts([paired("up", "s", [1.0, 1.2, 0.9]), paired("flat", "s", [0.1, -0.2, 0.05])])
    >>> [r.verdict for r in rows]
    ['holds', 'not shown']
    """
    family = list(family)
    if not family or not all(isinstance(c, Comparison) for c in family):
        raise TypeError("family must be a non-empty list of Comparison.")
    corrected = holm([c.p for c in family])
    return [Verdict(c, float(q), verdict(float(q), c.mean)) for c, q in zip(family, corrected, strict=True)]
