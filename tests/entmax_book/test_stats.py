"""Tests for entmax_book.stats against independent references.

The paired comparison is checked against SciPy's own one-sample/paired t-tests and its
``confidence_interval``; Holm's adjusted p-values against the procedure's definition (reject
H_(i) at level a iff p_(j) ≤ a/(m − j + 1) for every j ≤ i), applied by brute force over a
grid of levels; the verdict words at their boundaries.
"""

import numpy as np
import pytest
from scipy import stats as sps

from entmax_book import stats


def test_paired_matches_scipy_paired_t_test_and_interval():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 0.3, 10), rng.normal(0.8, 0.3, 10)
    c = stats.paired("a > b", "s", a, b)
    reference = sps.ttest_rel(a, b)
    interval = reference.confidence_interval(0.95)
    assert c.p == pytest.approx(reference.pvalue, rel=1e-10)
    assert (c.low, c.high) == pytest.approx((interval.low, interval.high), rel=1e-10)
    assert c.mean == pytest.approx(np.mean(a - b)) and c.n == 10


def test_one_sample_against_a_number():
    x = np.array([1.9, 1.95, 1.8, 2.0, 1.85])
    c = stats.paired("α above 1.75", "s", x, 1.75)
    assert c.p == pytest.approx(sps.ttest_1samp(x, 1.75).pvalue, rel=1e-10)
    assert c.mean == pytest.approx(x.mean() - 1.75)


def test_identical_differences_have_a_defined_p():
    assert stats.paired("c", "s", [1.0, 1.0, 1.0], 0.5).p == 0.0
    same = stats.paired("c", "s", [1.0, 1.0], [1.0, 1.0])
    assert same.p == 1.0 and same.mean == 0.0 and stats.verdict(same.p, same.mean) == "not shown"


@pytest.mark.parametrize(
    "a, b, match",
    [
        ([1.0], 0.0, "at least 2"),
        ([[1.0, 2.0]], 0.0, "one value per seed"),
        ([1.0, np.nan], 0.0, "finite"),
        ([0.9, 0.8, 0.7], [0.5], r"b must be a number or one value per seed of a \(3\), got shape \(1,\)"),
        ([0.9, 0.8, 0.7], [0.5, 0.4], r"b must be .*got shape \(2,\)"),
        ([0.9, 0.8], [[0.5, 0.4]], r"b must be .*got shape \(1, 2\)"),
    ],
)
def test_paired_refuses_bad_input(a, b, match):
    with pytest.raises(ValueError, match=match):
        stats.paired("c", "s", a, b)


def _holm_by_definition(p, level):
    """Which hypotheses Holm's procedure rejects at ``level`` (the textbook step-down loop)."""
    m = len(p)
    rejected = np.zeros(m, bool)
    for rank, i in enumerate(np.argsort(p, kind="stable")):
        if p[i] > level / (m - rank):
            break
        rejected[i] = True
    return rejected


def test_holm_adjusted_values_reject_exactly_what_the_procedure_rejects():
    rng = np.random.default_rng(1)
    for _ in range(50):
        p = rng.uniform(0, 0.2, rng.integers(1, 9))
        adjusted = stats.holm(p)
        assert np.all(adjusted >= p - 1e-15) and np.all(adjusted <= 1)
        for level in np.linspace(0.001, 0.2, 60):
            np.testing.assert_array_equal(adjusted <= level, _holm_by_definition(p, level))


def test_holm_is_bonferroni_for_one_smallest_value_and_refuses_bad_values():
    assert stats.holm([0.01, 0.5, 0.9])[0] == pytest.approx(0.03)
    assert stats.holm([0.3])[0] == 0.3
    for bad in ([0.1, 1.5], [np.nan], [[0.1]]):
        with pytest.raises(ValueError, match="pvalues"):
            stats.holm(bad)


def test_verdict_boundaries():
    cases = {
        (0.049, 0.1): "holds",
        (0.05, 0.1): "suggestive",
        (0.0999, 0.1): "suggestive",
        (0.10, 0.1): "not shown",
        (0.049, -0.1): "reversed",
        (0.07, -0.1): "not shown",  # a trend against the claim is not "suggestive"
    }
    for (p, mean), word in cases.items():
        assert stats.verdict(p, mean) == word
    assert set(stats.VERDICTS) >= set(cases.values())
    with pytest.raises(ValueError, match="p_corrected"):
        stats.verdict(1.2, 0.1)


@pytest.mark.parametrize("mean", [np.nan, np.inf, -np.inf])
def test_verdict_refuses_a_non_finite_effect(mean):
    with pytest.raises(ValueError, match=f"mean must be a finite number, got {mean}"):
        stats.verdict(0.01, mean)


def test_verdicts_corrects_the_family_together():
    rng = np.random.default_rng(2)
    strong = stats.paired("strong", "s", rng.normal(1.0, 0.1, 10))
    weak = [stats.paired(f"weak {i}", "s", rng.normal(0.25, 0.4, 10)) for i in range(6)]
    alone = stats.verdicts([weak[0]])[0]
    together = stats.verdicts([strong, *weak])
    assert together[0].verdict == "holds"
    assert together[1].p_corrected >= alone.p_corrected  # more tests, larger corrected p
    assert all(row.p_corrected >= row.comparison.p for row in together)
    with pytest.raises(TypeError, match="family"):
        stats.verdicts([])


def test_plateau_reads_the_last_quarter_of_the_curve():
    steps = np.arange(0, 1001, 50)
    falling = 2.0 * np.exp(-steps / 300) + 0.5  # still falling by > 1 % in the last quarter
    flat = 2.0 * np.exp(-steps / 60) + 0.5
    assert not stats.plateaued(steps, falling) and stats.plateaued(steps, flat)
    assert stats.plateaued(steps, falling, tolerance=0.2)  # the tolerance decides
    bumpy = flat.copy()
    bumpy[-1] = bumpy[-3] * 0.95  # a late 5 % drop is not a plateau
    assert not stats.plateaued(steps, bumpy)


@pytest.mark.parametrize("relative", [True, False])
def test_plateau_of_a_curve_flat_at_zero(relative):
    with np.errstate(all="raise"):  # no 0/0
        assert stats.plateaued(range(9), [1.0] + [0.0] * 8, relative=relative)
        # from 0 to below 0: an infinite relative improvement, not a plateau
        assert not stats.plateaued(range(9), [1.0] + [0.0] * 7 + [-0.5], relative=relative)


@pytest.mark.parametrize(
    "steps, values, match",
    [
        ([0, 1], [1.0], "match"),
        ([1, 0], [1.0, 1.0], "increase"),
        ([0, 1, 2], [1, np.nan, 1], "finite"),
        ([0, 100], [2.0, 1.0], "fewer than two"),
    ],
)
def test_plateau_refuses_bad_curves(steps, values, match):
    with pytest.raises(ValueError, match=match):
        stats.plateaued(steps, values)
