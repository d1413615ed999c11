"""Chapter 5's tables, the family's verdicts and provenance, on made-up records whose answers
are computed here independently (SciPy's paired t-test, Holm's correction by hand)."""

import numpy as np
import pytest
from scipy import stats as scipy_stats

from entmax_book import stats
from entmax_book.translation import claims, report
from entmax_book.translation.runs import run_name

KINDS = ("encoder_self", "context", "decoder_self")
CONDITIONS = ("softmax", "entmax15", "alpha_entmax", "alpha_frozen")
SEEDS = (0, 1, 2)


def make_record(rng):
    """{run: result} and {run: analysis} for every condition and seed, with noisy values."""
    results, analyses = {}, {}
    for condition in CONDITIONS:
        for seed in SEEDS:
            name = run_name(condition, seed)
            start = {k: rng.uniform(1.2, 1.8, (2, 4)) for k in KINDS}
            end = {k: start[k] - rng.uniform(0.0, 0.4, (2, 4)) for k in KINDS}
            history = {"alpha": {k: [start[k].tolist(), end[k].tolist()] for k in KINDS}}
            results[name] = {
                "test": {"bleu": rng.uniform(90, 96), "loss": rng.uniform(0.5, 0.6)},
                "history": history,
            }
            accuracy = {k: rng.uniform(0.9, 1.0) for k in ("tokens", "tgt_compound", "tgt_multi_piece")}
            analyses[name] = {
                "test_loss": rng.uniform(0.1, 0.12),
                "accuracy": {**accuracy, "tgt_marker": 1.0},
                "density": {k: rng.uniform(0.2, 1.0, (2, 4)).tolist() for k in KINDS},
                "js": {k: rng.uniform(0.1, 0.4, 2).tolist() for k in KINDS},
                **{key: rng.uniform(0, 1, (2, 4)).tolist() for key in report.HEAD_SCORES},
                "marker_sink": rng.uniform(0, 1, (2, 4)).tolist(),
            }
    return results, analyses


@pytest.fixture
def record():
    return make_record(np.random.default_rng(3))


def column(by_run, condition, fn):
    return np.array([fn(by_run[run_name(condition, s)]) for s in SEEDS])


def family_verdicts(record):
    return claims.verdicts(claims.seed_runs(*record, seeds=SEEDS))


def test_the_family_reads_the_record_paired_over_seeds(record):
    results, analyses = record
    verdicts = family_verdicts(record)
    js = {c: column(analyses, c, lambda a: np.mean(list(a["js"].values()))) for c in CONDITIONS}
    loss = {c: column(results, c, lambda r: r["test"]["loss"]) for c in CONDITIONS}
    checks = {
        "more_diverse": (js["alpha_entmax"], js["softmax"]),
        "learning_helps": (loss["alpha_frozen"], loss["alpha_entmax"]),
    }
    for key, (a, b) in checks.items():
        assert verdicts[key].comparison.mean == pytest.approx(np.mean(a - b)), key
        assert verdicts[key].comparison.p == pytest.approx(scipy_stats.ttest_rel(a, b).pvalue), key


def test_verdicts_are_holm_corrected_over_the_whole_family(record):
    verdicts = family_verdicts(record)
    assert list(verdicts) == [c.name for c in claims.FAMILY]
    p = np.array([v.comparison.p for v in verdicts.values()])
    m, order = len(p), np.argsort(p)
    by_hand = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        by_hand[i] = running
    assert [v.p_corrected for v in verdicts.values()] == pytest.approx(by_hand.tolist())
    assert all(v.verdict == stats.verdict(v.p_corrected, v.comparison.mean) for v in verdicts.values())


def test_a_large_consistent_effect_holds_and_its_opposite_is_reversed():
    results, analyses = make_record(np.random.default_rng(5))
    for seed in SEEDS:  # learned α: far more diverse than softmax; a far higher loss than frozen α
        for condition, value in (("softmax", 0.1), ("alpha_entmax", 0.5), ("alpha_frozen", 0.9)):
            js = value + 0.001 * seed
            analyses[run_name(condition, seed)]["js"] = {k: [js, js] for k in KINDS}
            results[run_name(condition, seed)]["test"]["loss"] = 2.0 - value + 0.001 * seed**2
    verdicts = family_verdicts((results, analyses))
    assert verdicts["more_diverse"].verdict == "holds"
    assert verdicts["learning_helps"].verdict == "reversed"


def test_claims_table_shows_the_chosen_rows_in_order(record):
    verdicts = family_verdicts(record)
    lines = report.claims_table(verdicts, ["encoder_sparsest", "no_bleu_cost"]).splitlines()
    assert len(lines) == 4 and lines[0].startswith("| claim | measured on |")
    assert (
        lines[2].startswith("| **encoder keeps the largest α**: encoder self-attention learns a larger α")
        and "| BLEU: learned α's − softmax's + 0.5 |" in lines[3]
    )
    assert lines[2].endswith(f"**{verdicts['encoder_sparsest'].verdict}** |")
    assert len(report.claims_table(verdicts).splitlines()) == 2 + len(verdicts)


def test_effects_table_gives_each_seed_the_effects_the_family_tests(record):
    results, analyses = record
    seed_runs = claims.seed_runs(results, analyses, seeds=SEEDS)
    lines = report.effects_table(seed_runs, SEEDS).splitlines()
    names = ["no loss cost", "no BLEU cost", "more diverse", "encoder keeps the largest α", "dip, then rise"]
    assert lines[0] == "| seed | " + " | ".join([*names, "learning helps", "two modes"]) + " |"
    assert len(lines) == 2 + len(SEEDS)
    loss = {c: column(results, c, lambda r: r["test"]["loss"]) for c in CONDITIONS}
    learning_helps = loss["alpha_frozen"] - loss["alpha_entmax"]  # independently, per seed
    bleu = {c: column(results, c, lambda r: r["test"]["bleu"]) for c in CONDITIONS}
    no_bleu_cost = bleu["alpha_entmax"] - bleu["softmax"] + claims.BLEU_MARGIN
    for i, line in enumerate(lines[2:]):
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        assert cells[0] == str(SEEDS[i])
        assert float(cells[6]) == pytest.approx(learning_helps[i], abs=5e-5)
        assert float(cells[2]) == pytest.approx(no_bleu_cost[i], abs=5e-3)
    verdicts = family_verdicts(record)  # the table's columns average to the family's effects
    means = {name: values.mean() for name, values in claims.effects(seed_runs).items()}
    assert means == pytest.approx({k: v.comparison.mean for k, v in verdicts.items()})


def test_alpha_table_gives_each_seed_the_mean_final_alpha_of_each_type(record):
    results, _ = record
    lines = report.alpha_table(results, seeds=SEEDS).splitlines()
    assert lines[0] == "| seed | encoder self, mean α | context, mean α | decoder self, mean α |"
    for i, line in enumerate(lines[2:]):
        cells = [float(c) for c in line.strip("|").split("|")]
        final = results[run_name("alpha_entmax", SEEDS[i])]["history"]["alpha"]
        expected = [np.mean(final[k][-1]) for k in ("encoder_self", "context", "decoder_self")]
        assert cells == pytest.approx([SEEDS[i], *expected], abs=5e-4)


def test_accuracy_table_rows_intervals_and_the_cap_at_100(record):
    results, analyses = record
    table = report.accuracy_table(results, analyses, seeds=SEEDS).splitlines()
    assert len(table) == 2 + len(CONDITIONS)
    header = [cell.strip() for cell in table[0].strip("|").split("|")]
    assert header == ["condition", "test loss", "tokens", "two-word nouns", "multi-piece words"] + [
        "marker questions",
        "BLEU",
    ]
    softmax = [cell.strip() for cell in table[2].strip("|").split("|")]
    assert softmax[0] == "softmax"
    assert softmax[5] == "100.0 [100.0, 100.0]"  # every seed 100 %: the interval is the point
    bleu = column(results, "softmax", lambda r: r["test"]["bleu"])
    half = scipy_stats.t.ppf(0.975, 2) * bleu.std(ddof=1) / np.sqrt(3)
    assert softmax[6] == f"{bleu.mean():.2f} [{bleu.mean() - half:.2f}, {bleu.mean() + half:.2f}]"


def test_accuracy_differences_are_paired_seed_by_seed(record):
    results, analyses = record
    table = report.accuracy_differences(results, analyses, seeds=SEEDS).splitlines()
    assert len(table) == 2 + len(CONDITIONS) - 1  # every condition but the baseline
    learned = [cell.strip() for cell in table[3].strip("|").split("|")]
    assert learned[0] == "learned α − softmax"
    bleu = {c: column(results, c, lambda r: r["test"]["bleu"]) for c in ("softmax", "alpha_entmax")}
    d = bleu["alpha_entmax"] - bleu["softmax"]  # paired: the same seed's two runs
    test = scipy_stats.ttest_1samp(d, 0.0)
    low, high = test.confidence_interval(0.95)
    assert learned[6] == f"{d.mean():+.2f} [{low:+.2f}, {high:+.2f}]"
    # the loss difference to four decimals, as the text quotes it
    loss = {c: column(results, c, lambda r: r["test"]["loss"]) for c in ("softmax", "alpha_entmax")}
    d = loss["alpha_entmax"] - loss["softmax"]
    low, high = scipy_stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert learned[1] == f"{d.mean():+.4f} [{low:+.4f}, {high:+.4f}]"
    # a paired interval is not the difference of the two conditions' own intervals
    assert high - low != pytest.approx(
        2
        * scipy_stats.t.ppf(0.975, 2)
        * (bleu["alpha_entmax"].std(ddof=1) + bleu["softmax"].std(ddof=1))
        / np.sqrt(3)
    )


def test_heads_table_has_a_column_per_score_and_the_sink_gap(record):
    table = report.heads_table(record[1], seeds=SEEDS).splitlines()
    assert len(table) == 2 + len(CONDITIONS)
    assert table[0].count("|") == len(report.HEAD_SCORES) + 3
    best = column(record[1], "alpha_entmax", lambda a: np.max(a["merging_multi"]))
    row = [cell.strip() for cell in table[4].strip("|").split("|")]
    assert row[0] == "learned α" and row[2].startswith(f"{best.mean():.2f} [")


def test_provenance_summary_in_words():
    def made(commit, cpu):
        machine = {"cpu": "Some CPU", "cores": 2, "jax_backend": "cpu"}
        versions = {"python": "3.11", "jax": "0.10.2", "flax": "0.12", "optax": "0.2", "entmax_lib": "0.1"}
        return {"provenance": {"commit": commit, "versions": versions, "machine": machine,
                               "cpu_seconds": cpu, "recorded": "2026-12-02T12:00:00+00:00"}}  # fmt: skip

    records = {"a": made("abcdef1234567", 600.0), "b": made("0123456789abc", 1200.0), "c": made(None, 0.0)}
    got = report.provenance_summary(records)
    assert got["runs"] == "3" and got["cpu_minutes"] == "30"
    assert got["commits"] == "0123456789, None, abcdef1234"
    assert got["versions"].startswith("python 3.11; jax 0.10.2")
    assert got["machine"] == "Some CPU, 2 cores, JAX on cpu" and got["recorded"] == "2026-12-02"
    many = {str(i): made(f"{i:x}" * 12, 60.0) for i in range(10, 15)}
    for i, r in enumerate(many.values()):
        r["provenance"]["recorded"] = f"2026-12-0{5 - i}T12:00:00+00:00"  # the last commit first
    assert report.provenance_summary(many)["commits"] == "5, from eeeeeeeeee to aaaaaaaaaa"


def test_paper_numbers():
    assert report.paper_span("previous-token heads") == "0.935–0.959"
    lines = report.paper_table().splitlines()
    assert len(lines) == 1 + len(report.PAPER) and "< 0.8" in lines[6]
    assert lines[1].split()[-3:] == ["29.79", "29.83", "29.90"]  # BLEU: two decimals
    assert lines[7].split()[-3:] == ["0.985", "0.970", "0.995"]  # shares of weight: three
    assert all(len(line) == len(lines[0]) for line in lines)  # aligned columns


def test_claims_table_shows_both_p_values_and_no_negative_zero():
    rows = stats.verdicts(
        [stats.paired("tiny", "s", [1e-5, -2e-5, 0.5e-5]), stats.paired("up", "s", [1.0, 1.2, 0.9])]
    )
    table = report.claims_table({"tiny": rows[0], "up": rows[1]}).splitlines()
    assert table[0].split("|")[4:6] == [" p ", " p (Holm) "]
    cells = table[-1].split("|")
    assert float(cells[4]) == pytest.approx(rows[1].comparison.p, rel=0.05)
    assert float(cells[5]) == pytest.approx(rows[1].p_corrected, rel=0.05)
    assert "-0.000" not in table[2] and "+0.000 [" in table[2]


def test_claims_table_leaves_p_blank_where_every_seed_gives_the_same_effect():
    """Ten zeros have no spread to test: their p of 1 is a convention, not a result."""
    flat, up = stats.verdicts(
        [stats.paired("flat", "s", [0.0] * 10), stats.paired("up", "s", [1.0, 1.2, 0.9])]
    )
    assert flat.comparison.p == 1.0  # still counted by Holm
    lines = report.claims_table({"two_modes": flat, "up": up}).splitlines()
    cells = [cell.strip() for cell in lines[2].split("|")[1:-1]]
    assert cells[2:] == ["0 in every seed", "—", "—", "**not shown**"]
    assert "in every seed" not in lines[3] and "—" not in lines[3]


def test_plateau_table_has_a_row_per_run_with_its_last_quarter():
    steps = [100, 200, 300, 400]
    results = {
        run_name("softmax", 0): {"history": {"eval": {"step": steps, "valid_loss": [3, 2, 1.0, 0.9]}}},
        run_name("alpha_frozen", 2): {"history": {"eval": {"step": steps, "valid_loss": [3, 2, 0.5, 0.5]}}},
    }
    results[run_name("softmax", 0)]["plateau"] = False
    results[run_name("alpha_frozen", 2)]["plateau"] = True
    rows = [line.split(" | ") for line in report.plateau_table(results).splitlines()[2:]]
    expected = [("softmax", "0"), (report.LABELS["alpha_frozen"], "2")]
    assert [(r[0].strip("| "), r[1]) for r in rows] == expected
    assert rows[0][2:5] == ["1.000", "0.900", "10.0"] and rows[0][5].startswith("no")
    assert rows[1][4:6] == ["0.0", "yes |"]


def test_plateau_table_orders_each_condition_s_runs_from_the_nearest_to_its_plateau():
    steps = [100, 200, 300, 400]
    curves = {  # the fall over the last quarter: 10 %, 0 %, 5 %
        run_name("softmax", 0): [3, 2, 1.0, 0.9],
        run_name("softmax", 1): [3, 2, 1.0, 1.0],
        run_name("entmax15", 0): [3, 2, 1.0, 0.95],
    }
    results = {
        name: {"history": {"eval": {"step": steps, "valid_loss": loss}}, "plateau": False}
        for name, loss in curves.items()
    }
    rows = [line.split(" | ") for line in report.plateau_table(results).splitlines()[2:]]
    assert [(r[0].strip("| "), r[1], r[4]) for r in rows] == [
        ("softmax", "1", "0.0"),
        ("softmax", "0", "10.0"),
        (report.LABELS["entmax15"], "0", "5.0"),
    ]


def test_seed_table_has_a_row_per_run_with_its_own_scores(record):
    results, analyses = record
    table = report.seed_table(results, analyses, seeds=SEEDS).splitlines()
    assert table[0] == "| condition | seed | test loss | tokens | BLEU | JS between heads |"
    assert len(table) == 2 + len(CONDITIONS) * len(SEEDS)
    second = table[2 + len(SEEDS) + 1]  # the second condition's second seed
    row = [cell.strip() for cell in second.strip("|").split("|")]
    condition, seed = CONDITIONS[1], SEEDS[1]
    analysis = analyses[run_name(condition, seed)]
    assert row[:2] == [report.LABELS[condition], str(seed)]
    assert row[2] == f"{results[run_name(condition, seed)]['test']['loss']:.3f}"  # the claims' loss
    assert row[4] == f"{results[run_name(condition, seed)]['test']['bleu']:.2f}"
    assert row[5] == f"{np.mean([analysis['js'][k] for k in analysis['js']]):.3f}"
