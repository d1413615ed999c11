"""Chapter 5's pre-registered family: each effect is oriented so that a positive mean supports
its claim, and the verdicts follow on runs whose answer is known."""

import numpy as np
import pytest

from entmax_book.translation import claims
from entmax_book.translation.claims import FAMILY, SeedRun

KINDS = ("encoder_self", "context", "decoder_self")


def run(loss=2.0, bleu=30.0, js=0.3, alpha=None, history=None):
    alpha = alpha or {kind: np.full((2, 8), 1.5) for kind in KINDS}
    history = history or {kind: np.stack([np.full((2, 8), 1.5)] * 3) for kind in KINDS}
    return SeedRun({"loss": loss, "bleu": bleu}, {kind: [js, js] for kind in KINDS}, alpha, history)


def seeds(make, n=10):
    rng = np.random.default_rng(0)
    return [make(rng) for _ in range(n)]


def effects(runs):
    return {claim.name: claim.effect(runs) for claim in FAMILY}


def test_the_family_is_the_seven_claims_in_order():
    assert [c.name for c in FAMILY] == [
        "no_loss_cost", "no_bleu_cost", "more_diverse", "encoder_sparsest",
        "dip_then_rise", "learning_helps", "two_modes",
    ]  # fmt: skip


def test_non_inferiority_holds_within_the_margin_and_fails_beyond_it():
    equal = effects({"softmax": run(), "alpha_entmax": run(), "alpha_frozen": run()})
    assert equal["no_loss_cost"] == pytest.approx(0.02 * 2.0) and equal["no_bleu_cost"] == pytest.approx(0.5)
    worse = effects({"softmax": run(), "alpha_entmax": run(loss=2.1, bleu=29.0), "alpha_frozen": run()})
    assert worse["no_loss_cost"] < 0 and worse["no_bleu_cost"] < 0


def test_encoder_sparsest_dip_then_rise_and_two_modes_read_the_alphas():
    encoder = np.concatenate([np.full((1, 8), 1.05), np.full((1, 8), 1.95)])  # 8 dense, 8 sparse heads
    alpha = {"encoder_self": encoder, "context": np.full((2, 8), 1.2), "decoder_self": np.full((2, 8), 1.3)}
    trace = np.stack([np.full((2, 8), 1.5), np.full((2, 8), 1.3), np.full((2, 8), 1.4)])  # dip 0.2, rise 0.1
    history = {"encoder_self": trace, "context": np.stack([np.full((2, 8), 1.5)] * 3), "decoder_self": trace}
    found = effects(
        {"softmax": run(), "alpha_entmax": run(alpha=alpha, history=history), "alpha_frozen": run()}
    )
    assert found["encoder_sparsest"] == pytest.approx(1.5 - 1.3)
    assert found["dip_then_rise"] == pytest.approx(2 / 3)  # two of the three attention types
    assert found["two_modes"] == 8.0
    flat = effects({"softmax": run(), "alpha_entmax": run(), "alpha_frozen": run()})
    assert flat["dip_then_rise"] == 0.0 and flat["two_modes"] == 0.0


def test_verdicts_on_runs_whose_answer_is_known():
    def seed(rng):
        noise = rng.normal(0, 0.01)
        return {
            "softmax": run(loss=2.0 + noise, js=0.20 + rng.normal(0, 0.01)),
            "alpha_entmax": run(loss=2.0 + noise + rng.normal(0, 0.005), js=0.30 + rng.normal(0, 0.01)),
            "alpha_frozen": run(loss=2.0 + noise + rng.normal(0, 0.005)),
        }

    rows = claims.verdicts(seeds(seed))
    assert list(rows) == [c.name for c in FAMILY]
    assert rows["no_loss_cost"].verdict == "holds"  # equal losses are within a 2 % margin
    assert rows["more_diverse"].verdict == "holds"
    assert rows["learning_helps"].verdict == "not shown"  # no difference: not shown, never "equal"
    assert rows["two_modes"].verdict == "not shown"
    assert all(v.p_corrected >= v.comparison.p for v in rows.values())  # Holm never lowers a p-value


def test_the_family_needs_two_seeds():
    with pytest.raises(ValueError, match="at least 2 seeds"):
        claims.family([{"softmax": run(), "alpha_entmax": run(), "alpha_frozen": run()}])


def test_seed_runs_read_the_record_s_results_and_analyses():
    """Per seed, each condition's test scores, the heads' JS and α: the final α is the history's
    last record, so the claims need no weights."""
    from entmax_book.translation.runs import run_name

    history = {
        kind: [np.full((2, 8), 1.5).tolist(), np.full((2, 8), 1.4 + s).tolist()]
        for s, kind in enumerate(KINDS)
    }
    results, analyses = {}, {}
    for seed in (3, 4):
        for c in ("softmax", "alpha_entmax", "alpha_frozen"):
            results[run_name(c, seed)] = {"test": {"loss": seed}, "history": {"alpha": history}}
            analyses[run_name(c, seed)] = {"js": {kind: [0.1 * seed] for kind in KINDS}}
    found = claims.seed_runs(results, analyses, seeds=(3, 4))
    assert [sorted(s) for s in found] == [["alpha_entmax", "alpha_frozen", "softmax"]] * 2
    assert found[1]["alpha_entmax"].test == {"loss": 4} and found[0]["softmax"].js["context"] == [
        0.30000000000000004
    ]
    np.testing.assert_allclose(found[0]["alpha_entmax"].alphas["context"], 2.4)
    assert found[0]["alpha_entmax"].alpha_history["encoder_self"].shape == (2, 2, 8)
