"""Chapter 5's per-seed measures, against values computed here by hand or with SciPy."""

import numpy as np
import pytest
from scipy import stats as scipy_stats

from entmax_book.translation import measures
from entmax_book.translation.runs import run_name

KINDS = ("encoder_self", "context", "decoder_self")


def alpha_run(start, end):
    """A result whose α history goes from ``start`` to ``end`` ({kind: (layers, heads)})."""
    return {
        "history": {"alpha": {k: [np.asarray(start[k]).tolist(), np.asarray(end[k]).tolist()] for k in KINDS}}
    }


def test_per_seed_reads_each_seed_in_order():
    by_run = {run_name("a", 0): 3.0, run_name("a", 1): 1.0, run_name("a", 2): 2.0, run_name("b", 0): 9.0}
    assert measures.per_seed(by_run, "a", lambda v: 10 * v, seeds=(0, 1, 2)).tolist() == [30.0, 10.0, 20.0]
    assert measures.per_seed(by_run, "a", float, seeds=(2, 0)).tolist() == [2.0, 3.0]
    with pytest.raises(KeyError):
        measures.per_seed(by_run, "b", float, seeds=(0, 1))


def test_interval_is_the_t_interval_of_the_mean():
    values = np.array([0.2, 0.5, 0.3, 0.9])
    half = scipy_stats.t.ppf(0.975, 3) * values.std(ddof=1) / 2.0
    mean, low, high = measures.interval(values)
    assert mean == pytest.approx(0.475) and (low, high) == pytest.approx((0.475 - half, 0.475 + half))


def test_alpha_change_keeps_the_sign_and_moved_does_not():
    # each model: one head up by 0.2, one down by 0.2 in every attention type → change 0, moved 0.2
    start = {k: [[1.5, 1.5]] for k in KINDS}
    end = {k: [[1.7, 1.3]] for k in KINDS}
    down = {k: [[1.2, 1.4]] for k in KINDS}  # both fall: −0.3 and −0.1
    results = {run_name("c", 0): alpha_run(start, end), run_name("c", 1): alpha_run(start, down)}
    seeds = (0, 1)
    assert measures.alpha_change(results, "c", seeds).tolist() == pytest.approx([0.0, -0.2])
    assert measures.alpha_moved(results, "c", seeds).tolist() == pytest.approx([0.2, 0.2])
    assert measures.final_alpha(results, "c", "context", seeds).tolist() == [[1.7, 1.3], [1.2, 1.4]]
    assert measures.start_alpha(results, "c", "context", seeds).shape == (2, 2)


def analysis(density=None, js=None, **scores):
    density = density or {k: [[1.0, 1.0]] for k in KINDS}
    js = js or {k: [0.0] for k in KINDS}
    return {"density": density, "js": js, **scores}


def test_density_spread_is_the_sd_of_every_head_and_zero_for_softmax():
    spread = {"encoder_self": [[0.2, 0.4]], "context": [[0.6, 0.8]], "decoder_self": [[1.0, 1.0]]}
    by_run = {run_name("s", 0): analysis(), run_name("x", 0): analysis(density=spread)}
    assert measures.density_spread(by_run, "s", (0,)).tolist() == [0.0]
    expected = np.std([0.2, 0.4, 0.6, 0.8, 1.0, 1.0])
    assert measures.density_spread(by_run, "x", (0,)) == pytest.approx([expected])
    # within one attention type: the gaps between the types no longer count
    within = measures.density_spread(by_run, "x", (0,), kinds=("encoder_self",))
    assert within == pytest.approx([0.1])


def test_diversity_averages_layers_of_the_chosen_types():
    js = {"encoder_self": [0.1, 0.3], "context": [0.5, 0.5], "decoder_self": [0.0, 0.2]}
    by_run = {run_name("c", 0): analysis(js=js)}
    assert measures.diversity(by_run, "c", seeds=(0,)) == pytest.approx([1.6 / 6])
    assert measures.diversity(by_run, "c", kinds=("encoder_self",), seeds=(0,)) == pytest.approx([0.2])


def test_best_head_and_the_marker_gap_of_the_best_marker_head():
    # the best marker head (layer 1, head 0: 0.6) is a sink (0.55 on "."); another head has the
    # largest gap (0.5 − 0.0) but is not the best marker head
    marker = [[0.1, 0.5], [0.6, 0.2]]
    sink = [[0.1, 0.0], [0.55, 0.2]]
    by_run = {run_name("c", 0): analysis(marker=marker, marker_sink=sink)}
    assert measures.best_head(by_run, "c", "marker", (0,)).tolist() == [0.6]
    assert measures.marker_vs_sink(by_run, "c", (0,)) == pytest.approx([0.05])


def test_top_key_shares_are_every_encoder_head_s():
    shares = [[0.2, 0.9], [0.3, 0.4]]
    by_run = {run_name("c", 0): {"top_key_share": shares}, run_name("c", 1): {"top_key_share": shares}}
    assert measures.top_key_shares(by_run, "c", (0, 1)).tolist() == [[0.2, 0.9, 0.3, 0.4]] * 2


def curve(loss, accuracy):
    return {"step": [100, 200, 300, 400], "valid_loss": loss, "valid_accuracy": accuracy}


def test_last_quarter_change_takes_the_best_in_the_right_direction():
    c = curve([3.0, 1.0, 0.9, 0.8], [0.5, 0.9, 0.96, 0.95])
    assert measures.last_quarter_change(c, "valid_loss") == (0.9, 0.8)  # from step 300 on
    assert measures.last_quarter_change(c, "valid_accuracy") == (0.96, 0.96)


def test_plateau_summary_counts_and_ranges():
    results = {
        run_name("a", 0): {
            "plateau": True,
            "history": {"eval": curve([3.0, 1.0, 1.0, 0.9], [0.5, 0.9, 0.97, 0.971])},
        },
        run_name("a", 1): {
            "plateau": False,
            "history": {"eval": curve([3.0, 1.0, 0.5, 0.4], [0.5, 0.8, 0.90, 0.93])},
        },
    }
    got = measures.plateau_summary(results)
    assert (got["n_runs"], got["n_plateau"]) == (2, 1)
    assert got["max_accuracy_gain"] == pytest.approx(3.0)
    assert (got["loss_gain_min"], got["loss_gain_max"]) == pytest.approx((10.0, 20.0))
    assert got["loss_gain_mean"] == pytest.approx(15.0)
