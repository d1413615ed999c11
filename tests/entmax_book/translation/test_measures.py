"""Chapter 5's per-seed measures, against values computed here by hand or with SciPy."""

import numpy as np
import pytest
from scipy import stats as scipy_stats

from entmax_book.translation import measures

KINDS = ("encoder_self", "context", "decoder_self")


def alpha_run(start, end):
    """A result whose α history goes from ``start`` to ``end`` ({kind: (layers, heads)})."""
    return {
        "history": {"alpha": {k: [np.asarray(start[k]).tolist(), np.asarray(end[k]).tolist()] for k in KINDS}}
    }


def test_per_seed_reads_each_seed_in_order():
    by_run = {"a_seed0": 3.0, "a_seed1": 1.0, "a_seed2": 2.0, "b_seed0": 9.0}
    assert measures.per_seed(by_run, "a", lambda v: 10 * v).tolist() == [30.0, 10.0, 20.0]
    assert measures.per_seed(by_run, "a", float, seeds=(2, 0)).tolist() == [2.0, 3.0]
    with pytest.raises(KeyError):
        measures.per_seed(by_run, "b", float)


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
    results = {"c_seed0": alpha_run(start, end), "c_seed1": alpha_run(start, down)}
    seeds = (0, 1)
    assert measures.alpha_change(results, "c", seeds).tolist() == pytest.approx([0.0, -0.2])
    assert measures.alpha_moved(results, "c", seeds).tolist() == pytest.approx([0.2, 0.2])
    assert measures.final_alpha(results, "c", "context", seeds).tolist() == [[1.7, 1.3], [1.2, 1.4]]
    assert measures.start_alpha(results, "c", "context", seeds).shape == (2, 2)


def sarle_by_hand(x):
    """Sarle's coefficient from the moments, with the textbook bias corrections."""
    x = np.asarray(x, np.float64)
    n, d = len(x), x - x.mean()
    m2, m3, m4 = (d**2).mean(), (d**3).mean(), (d**4).mean()
    g1 = np.sqrt(n * (n - 1)) / (n - 2) * m3 / m2**1.5
    g2 = (n - 1) / ((n - 2) * (n - 3)) * ((n + 1) * (m4 / m2**2 - 3) + 6)
    return (g1**2 + 1) / (g2 + 3 * (n - 1) ** 2 / ((n - 2) * (n - 3)))


def test_bimodality_matches_the_moments_and_separates_two_modes_from_one():
    rng = np.random.default_rng(0)
    skewed = rng.exponential(size=40)
    assert measures.bimodality(skewed) == pytest.approx(sarle_by_hand(skewed))
    two_modes = np.concatenate([rng.normal(1.1, 0.02, 50), rng.normal(1.9, 0.02, 50)])
    one_mode = rng.normal(1.5, 0.1, 100)
    assert measures.bimodality(two_modes) > 5 / 9 > measures.bimodality(one_mode)
    assert measures.bimodality(rng.uniform(size=100_000)) == pytest.approx(5 / 9, abs=0.01)
    with pytest.raises(ValueError, match="at least 4"):
        measures.bimodality([1.0, 2.0, 3.0])


def test_encoder_bimodality_reads_the_final_encoder_alpha():
    encoder = [[1.01, 1.02, 1.03, 1.9], [1.5, 1.6, 1.7, 1.8]]
    end = {"encoder_self": encoder, "context": [[1.5] * 4] * 2, "decoder_self": [[1.5] * 4] * 2}
    results = {"c_seed0": alpha_run(end, end), "c_seed1": alpha_run(end, end)}
    got = measures.encoder_bimodality(results, "c", (0, 1))
    assert got == pytest.approx([sarle_by_hand(np.ravel(encoder))] * 2)


def analysis(density=None, js=None, **scores):
    density = density or {k: [[1.0, 1.0]] for k in KINDS}
    js = js or {k: [0.0] for k in KINDS}
    return {"density": density, "js": js, **scores}


def test_density_spread_is_the_sd_of_every_head_and_zero_for_softmax():
    spread = {"encoder_self": [[0.2, 0.4]], "context": [[0.6, 0.8]], "decoder_self": [[1.0, 1.0]]}
    by_run = {"s_seed0": analysis(), "x_seed0": analysis(density=spread)}
    assert measures.density_spread(by_run, "s", (0,)).tolist() == [0.0]
    expected = np.std([0.2, 0.4, 0.6, 0.8, 1.0, 1.0])
    assert measures.density_spread(by_run, "x", (0,)) == pytest.approx([expected])


def test_diversity_averages_layers_of_the_chosen_types():
    js = {"encoder_self": [0.1, 0.3], "context": [0.5, 0.5], "decoder_self": [0.0, 0.2]}
    by_run = {"c_seed0": analysis(js=js)}
    assert measures.diversity(by_run, "c", seeds=(0,)) == pytest.approx([1.6 / 6])
    assert measures.diversity(by_run, "c", kinds=("encoder_self",), seeds=(0,)) == pytest.approx([0.2])


def test_best_head_and_the_marker_gap_of_the_best_marker_head():
    # the best marker head (layer 1, head 0: 0.6) is a sink (0.55 on "."); another head has the
    # largest gap (0.5 − 0.0) but is not the best marker head
    marker = [[0.1, 0.5], [0.6, 0.2]]
    sink = [[0.1, 0.0], [0.55, 0.2]]
    by_run = {"c_seed0": analysis(marker=marker, marker_sink=sink)}
    assert measures.best_head(by_run, "c", "marker", (0,)).tolist() == [0.6]
    assert measures.marker_vs_sink(by_run, "c", (0,)) == pytest.approx([0.05])


def curve(loss, accuracy):
    return {"step": [100, 200, 300, 400], "valid_loss": loss, "valid_accuracy": accuracy}


def test_last_quarter_change_takes_the_best_in_the_right_direction():
    c = curve([3.0, 1.0, 0.9, 0.8], [0.5, 0.9, 0.96, 0.95])
    assert measures.last_quarter_change(c, "valid_loss") == (0.9, 0.8)  # from step 300 on
    assert measures.last_quarter_change(c, "valid_accuracy") == (0.96, 0.96)


def test_plateau_summary_counts_and_ranges():
    results = {
        "a_seed0": {
            "plateau": True,
            "history": {"eval": curve([3.0, 1.0, 1.0, 0.9], [0.5, 0.9, 0.97, 0.971])},
        },
        "a_seed1": {
            "plateau": False,
            "history": {"eval": curve([3.0, 1.0, 0.5, 0.4], [0.5, 0.8, 0.90, 0.93])},
        },
    }
    got = measures.plateau_summary(results)
    assert (got["n_runs"], got["n_plateau"]) == (2, 1)
    assert got["max_accuracy_gain"] == pytest.approx(3.0)
    assert (got["loss_gain_min"], got["loss_gain_max"]) == pytest.approx((10.0, 20.0))
    assert got["loss_gain_mean"] == pytest.approx(15.0)
