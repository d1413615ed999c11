"""Chapter 4's family of claims: each row against scipy and hand-computed values on made-up
results whose answer is known, and the family's shape (one softmax-drop row per experiment)."""

import numpy as np
import pytest
from scipy import stats as scipy_stats

from entmax_book.toy import claims

VARIANTS = ("softmax", "entmax15", "sparsemax", "alpha_entmax")


def make_result(rng, n_seeds=6, n_lengths=3, lead=0.02, mass_lead=0.2, alpha=1.9, softmax=None):
    """A result dict of train_and_evaluate's shape, with per-seed values drawn around known means."""
    shared = rng.normal(0, 0.01, (n_seeds, 1))  # seed-to-seed shift shared by the variants
    base = (softmax if softmax is not None else 0.9 - 0.05 * np.arange(n_lengths) + shared).copy()
    result = {"seeds": list(range(n_seeds)), "lengths": list(range(n_lengths))}
    for v in VARIANTS:
        acc = base if v == "softmax" else base + lead + rng.normal(0, 0.002, base.shape)
        mass = 0.3 + (0 if v == "softmax" else mass_lead) + rng.normal(0, 0.01, base.shape)
        entry = {"accuracy_per_seed": acc.tolist(), "informative_mass_per_seed": mass.tolist()}
        if v == "alpha_entmax":
            entry["final_alpha_per_seed"] = (alpha + rng.normal(0, 0.02, base.shape)).tolist()
        result[v] = entry
    return result, base


def test_per_seed_reads_seeds_by_lengths_and_refuses_what_is_missing():
    result, _ = make_result(np.random.default_rng(0))
    assert claims.per_seed(result, "sparsemax", "accuracy").shape == (6, 3)
    with pytest.raises(KeyError, match="no variant"):
        claims.per_seed(result, "relu", "accuracy")
    with pytest.raises(KeyError, match="no per-seed metric"):
        claims.per_seed(result, "softmax", "support")


def test_setting_claims_match_scipy_paired_t_tests():
    result, _ = make_result(np.random.default_rng(1))
    rows = {claims.key_of(c): c for c in claims.setting_claims(result, "demo")}
    assert list(rows) == [
        "drop",
        "keeps",
        *[f"acc_{v}" for v in claims.SPARSE],
        *[f"mass_{v}" for v in claims.SPARSE],
        "alpha",
    ]
    acc = {v: np.asarray(result[v]["accuracy_per_seed"]) for v in VARIANTS}
    lead = acc["entmax15"][:, -1] - acc["softmax"][:, -1]
    reference = scipy_stats.ttest_1samp(lead, 0.0)
    assert rows["acc_entmax15"].mean == pytest.approx(lead.mean())
    assert rows["acc_entmax15"].p == pytest.approx(reference.pvalue)
    interval = reference.confidence_interval(0.95)
    assert (rows["acc_entmax15"].low, rows["acc_entmax15"].high) == pytest.approx(
        (interval.low, interval.high)
    )
    # the drop is the first length minus the last: 0.05 per length step over 3 lengths
    assert rows["drop"].mean == pytest.approx(0.10)
    keeps = (acc["softmax"][:, 0] - acc["softmax"][:, -1]) - (
        acc["sparsemax"][:, 0] - acc["sparsemax"][:, -1]
    )
    assert rows["keeps"].p == pytest.approx(scipy_stats.ttest_1samp(keeps, 0.0).pvalue)
    alpha = np.asarray(result["alpha_entmax"]["final_alpha_per_seed"])[:, -1]
    assert rows["alpha"].mean == pytest.approx(alpha.mean() - claims.NEAR_2)
    assert rows["alpha"].p == pytest.approx(scipy_stats.ttest_1samp(alpha, claims.NEAR_2).pvalue)
    assert "drop" not in {claims.key_of(c) for c in claims.setting_claims(result, "s", drop=False)}


def test_gradient_contrast_is_the_paired_difference_of_the_leads():
    rng = np.random.default_rng(2)
    demo, softmax = make_result(rng, lead=0.01)
    exact, _ = make_result(rng, lead=0.02, softmax=softmax)
    rows = claims.gradient_contrast(demo, exact)
    assert [claims.key_of(c) for c in rows] == [f"exact_{v}" for v in claims.SPARSE]
    for c, v in zip(rows, claims.SPARSE, strict=True):
        lead_demo = np.asarray(demo[v]["accuracy_per_seed"])[:, -1] - softmax[:, -1]
        lead_exact = np.asarray(exact[v]["accuracy_per_seed"])[:, -1] - softmax[:, -1]
        assert c.mean == pytest.approx(0.01, abs=0.003)  # the leads differ by 0.01 by construction
        assert c.p == pytest.approx(scipy_stats.ttest_rel(lead_exact, lead_demo).pvalue)
    other = dict(exact, seeds=[9, 8, 7, 6, 5, 4])
    with pytest.raises(ValueError, match="same seeds"):
        claims.gradient_contrast(demo, other)


def test_condition_claims_read_the_right_runs():
    rng = np.random.default_rng(3)
    stress, _ = make_result(rng, alpha=1.5)
    query = {"softmax": stress["softmax"], "alpha_entmax": {"final_alpha_per_seed": [[1.4]] * 6}}
    fixed = {
        "softmax": {
            "accuracy_per_seed": [[0.9, 0.8, 0.6]] * 6,
            "informative_mass_per_seed": [[0.8, 0.3, 0.02 + 0.001 * s] for s in range(6)],
        },
        "alpha_entmax": {
            "accuracy_per_seed": [[0.9, 0.85, 0.8]] * 6,
            "informative_mass_per_seed": [[0.8, 0.5, 0.4]] * 6,
            "final_alpha_per_seed": [[1.2, 1.4, 1.6 + 0.01 * s] for s in range(6)],
        },
    }
    rows = {claims.key_of(c): c for c in claims.condition_claims(stress, query, fixed)}
    free_alpha = np.asarray(stress["alpha_entmax"]["final_alpha_per_seed"])[:, -1]
    assert rows["query"].mean == pytest.approx(free_alpha.mean() - 1.4)
    assert rows["dilutes"].mean == pytest.approx(0.8 - 0.0225)
    assert rows["fixed_mass"].mean == pytest.approx(0.4 - 0.0225)
    assert rows["fixed_rises"].mean == pytest.approx(1.625 - 1.2)
    assert rows["fixed_lower"].mean == pytest.approx(free_alpha.mean() - 1.625)
    softmax_free = np.asarray(stress["softmax"]["accuracy_per_seed"])[:, -1]
    assert rows["fixed_acc"].mean == pytest.approx(softmax_free.mean() - 0.6)
    assert all(c.setting == "stress" for c in rows.values())


def results_of_known_answer():
    rng = np.random.default_rng(4)
    demo, softmax = make_result(rng, lead=0.03, mass_lead=0.2, alpha=1.95)
    exact, _ = make_result(rng, lead=0.03, mass_lead=0.2, alpha=1.95, softmax=softmax)
    stress, softmax_s = make_result(rng, lead=0.0, mass_lead=0.2, alpha=1.5)
    stress_exact, _ = make_result(rng, lead=0.0, mass_lead=0.2, alpha=1.5, softmax=softmax_s)
    query = {"softmax": stress["softmax"], "alpha_entmax": {"final_alpha_per_seed": [[1.3]] * 6}}
    fixed, _ = make_result(rng, lead=0.0, alpha=1.7)
    return {
        "demo": demo,
        "demo_exact_gradient": exact,
        "stress": stress,
        "stress_exact_gradient": stress_exact,
        "stress_query_x3": query,
        "stress_fixed_scale": fixed,
    }


def test_the_family_counts_softmax_drop_once_per_experiment_and_corrects_with_holm():
    results = results_of_known_answer()
    family = claims.family(results)
    assert len(family) == 4 * 8 + 2 + 3 + 6
    table = claims.verdict_table(results)
    assert len(table) == len(family)  # every (claim, setting) once
    assert [s for k, s in table if k == "drop"] == ["demo", "stress"]
    # Holm by hand
    p = np.array([c.p for c in family])
    order = np.argsort(p)
    by_hand = np.maximum.accumulate(np.minimum(1, (len(p) - np.arange(len(p))) * p[order]))
    assert np.allclose(np.array([v.p_corrected for v in table.values()])[order], by_hand)
    # the answers built in: more mass holds everywhere, α above 1.75 in the demo and below it
    # (reversed) in the stress setting, no lead at all in the stress setting is not shown
    assert all(table[f"mass_{v}", s].verdict == "holds" for v in claims.SPARSE for s in claims.SETTINGS)
    assert table["alpha", "demo"].verdict == "holds"
    assert table["alpha", "stress"].verdict == "reversed"
    assert table["acc_sparsemax", "demo"].verdict == "holds"
    with pytest.raises(KeyError, match="missing"):
        claims.family({k: v for k, v in results.items() if k != "stress_fixed_scale"})


def test_failures_are_ten_points_below_softmax_in_the_same_seed():
    result = {
        "softmax": {"accuracy_per_seed": [[0.9, 0.90], [0.9, 0.85], [0.9, 0.88]]},
        "sparsemax": {"accuracy_per_seed": [[0.9, 0.79], [0.9, 0.76], [0.9, 0.30]]},
    }
    found = claims.failures(result, variants=("sparsemax",))["sparsemax"]
    assert found.tolist() == [True, False, True]  # 0.11 and 0.58 below softmax; 0.09 is not a failure
    assert claims.failures(result, margin=0.05, variants=("sparsemax",))["sparsemax"].tolist() == [
        True,
        True,
        True,
    ]
    with pytest.raises(ValueError, match="margin"):
        claims.failures(result, margin=1.5)


def test_claims_table_shows_every_row_with_its_units():
    table = claims.verdict_table(results_of_known_answer())
    text = claims.claims_table(table)
    assert text.count("\n") == 1 + len(table)
    # each claim named once, on the first of its rows; the rows under it leave the cell empty
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in text.splitlines()[2:]]
    named = [row[0] for row in rows if row[0]]
    assert len(named) == len(set(named)) == len({r.comparison.claim for r in table.values()})
    lines, claim = {}, None
    for row in rows:
        claim = row[0] or claim
        lines[claim, row[1]] = " | ".join(row)
    assert "points" in lines[claims.CLAIMS["acc_sparsemax"], "demo"]
    assert "points" not in lines[claims.CLAIMS["alpha"], "demo"]
    assert claims.claims_table(table, [("alpha", "stress")]).count("**reversed**") == 1


def test_summary_table_gives_mean_and_spread_per_length():
    result, base = make_result(np.random.default_rng(5))
    lines = claims.summary_table(result).splitlines()
    assert lines[0] == "|  | " + " | ".join(f"L = {n}" for n in result["lengths"]) + " |"
    assert len(lines) == 2 + 2 * len(VARIANTS) + 1  # accuracy and mass per variant, then α
    softmax = [cell.strip() for cell in lines[2].strip("|").split("|")]
    assert softmax[0] == "softmax, accuracy (%)"
    last = 100 * base[:, -1]
    assert softmax[-1] == f"{last.mean():.2f} ± {last.std(ddof=1):.2f}"
    alpha = [cell.strip() for cell in lines[-1].strip("|").split("|")]
    final = np.array(result["alpha_entmax"]["final_alpha_per_seed"])[:, 0]
    assert alpha[:2] == ["final learned α", f"{final.mean():.2f} ± {final.std(ddof=1):.2f}"]
    without = claims.summary_table({k: v for k, v in result.items() if k != "alpha_entmax"})
    assert "learned α" not in without


def test_the_groups_split_the_claims_each_in_one_group():
    grouped = [key for keys in claims.CLAIM_GROUPS.values() for key in keys]
    assert sorted(grouped) == sorted(claims.CLAIMS) and len(grouped) == len(set(grouped))


def test_seed_table_gives_every_seed_at_the_longest_length():
    result, base = make_result(np.random.default_rng(7))
    lines = claims.seed_table(result).splitlines()
    assert lines[0].startswith("| seed | softmax, accuracy (%) |") and lines[0].endswith(
        "| final learned α |"
    )
    assert len(lines) == 2 + len(result["seeds"])
    for i, line in enumerate(lines[2:]):
        cells = [float(c) for c in line.strip("|").split("|")]
        assert cells[0] == result["seeds"][i]
        assert cells[1] == pytest.approx(100 * base[i, -1], abs=0.005)  # softmax's accuracy
        sparse_mass = result["sparsemax"]["informative_mass_per_seed"][i][-1]
        assert cells[7] == pytest.approx(100 * sparse_mass, abs=0.005)
        assert cells[9] == pytest.approx(result["alpha_entmax"]["final_alpha_per_seed"][i][-1], abs=5e-4)


def test_seed_table_marks_the_failed_runs_and_only_them():
    result, base = make_result(np.random.default_rng(7))
    result["sparsemax"]["accuracy_per_seed"][3][-1] = base[3, -1] - 0.2  # 20 points below softmax
    failed = claims.failures(result)
    assert failed["sparsemax"][3] and sum(int(f.sum()) for f in failed.values()) >= 1
    table = claims.seed_table(result)
    marked = [
        (i, j)
        for i, line in enumerate(table.splitlines()[2:])
        for j, cell in enumerate(line.strip("|").split("|"))
        if "(failed)" in cell
    ]
    header = table.splitlines()[0].strip("|").split("|")
    expected = [(i, 1 + 1 + k) for k, v in enumerate(claims.SPARSE) for i in np.flatnonzero(failed[v])]
    assert sorted(marked) == sorted(expected)
    assert all("accuracy" in header[j] for _, j in marked)
    # without softmax's column the failures are still those against softmax
    sparse_only = claims.seed_table(result, claims.SPARSE)
    assert sparse_only.count("(failed)") == table.count("(failed)")


def fixed_pair(rng, shift):
    """Two fixed-scale results on six seeds: the smaller scale's α is the larger's plus ``shift``."""
    large = 1.2 + 0.3 * np.arange(3) + 0.02 * rng.standard_normal((6, 3))
    small = large + shift + 0.02 * rng.standard_normal((6, 3))
    common = {"seeds": list(range(6)), "lengths": [8, 64, 512]}
    return (
        {**common, "config": {"score_norm": 0.4}, "alpha_entmax": {"final_alpha_per_seed": large.tolist()}},
        {**common, "config": {"score_norm": 0.07}, "alpha_entmax": {"final_alpha_per_seed": small.tolist()}},
        large,
        small,
    )


def test_the_predictions_are_their_own_family_corrected_with_holm():
    large_run, small_run, large, small = fixed_pair(np.random.default_rng(3), shift=0.5)
    rows = claims.prediction_claims(large_run, small_run)
    assert [(claims.key_of(c), c.setting) for c in rows] == [
        ("small_rises", "stress"),
        ("small_higher", "stress, L = 8"),
        ("small_higher", "stress, L = 64"),
        ("small_higher", "stress, L = 512"),
    ]
    assert rows[0].mean == pytest.approx((small[:, -1] - small[:, 0]).mean())
    assert rows[2].mean == pytest.approx((small[:, 1] - large[:, 1]).mean())
    table = claims.prediction_table({"stress_fixed_scale": large_run, "stress_fixed_scale_small": small_run})
    p = np.array([c.p for c in rows])
    order = np.argsort(p)
    by_hand = np.maximum.accumulate(np.minimum(1, (len(p) - np.arange(len(p))) * p[order]))
    assert np.allclose(np.array([v.p_corrected for v in table.values()])[order], by_hand)
    assert all(v.verdict == "holds" for v in table.values())
    # the other way round: a lower α with the smaller scale reverses the prediction
    large_run, small_run, _, _ = fixed_pair(np.random.default_rng(3), shift=-0.5)
    table = claims.prediction_table({"stress_fixed_scale": large_run, "stress_fixed_scale_small": small_run})
    assert table["small_higher", "stress, L = 8"].verdict == "reversed"
    text = claims.claims_table(table, family="pre-registered")
    assert "verdict (pre-registered)" in text and text.count("**reversed**") == 3
    assert "points" not in text  # α, in its own units


def test_the_predictions_refuse_runs_that_do_not_pair():
    large_run, small_run, _, _ = fixed_pair(np.random.default_rng(3), shift=0.5)
    with pytest.raises(ValueError, match="smaller one"):
        claims.prediction_claims(small_run, large_run)
    with pytest.raises(ValueError, match="same seeds"):
        claims.prediction_claims(large_run, {**small_run, "seeds": list(range(1, 7))})
