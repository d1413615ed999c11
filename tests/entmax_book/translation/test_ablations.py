"""Chapter 5's recorded head ablations still match the record they were made from and the code.

* the record covers every run of ``runs.RUNS``, every head of every attention type, and the
  constructions that ``analysis.construction_accuracy`` measures; its provenance names the runs
  and the corpus the code defines today;
* each run's intact accuracies are the run's recorded test accuracies (the checkpoints' float16
  weights move a share by at most 0.43 points, measured);
* one model ablated again now reproduces its recorded ablations.
"""

import dataclasses

import numpy as np
import pytest

from entmax_book import record
from entmax_book.translation import ablations, configs, measures, runs
from entmax_book.translation.model import ATTENTION_TYPES

RECORD = record.load(runs.EXPERIMENT, ablations.NAME)
ABLATIONS = RECORD["result"]
CONSTRUCTIONS = {"tokens", "tgt_compound", "tgt_multi_piece", "tgt_marker"}


def test_the_record_has_every_run_and_every_head():
    model = configs.HARDER.model
    assert list(ABLATIONS) == list(runs.RUNS)
    for name, ablated in ABLATIONS.items():
        assert set(ablated) == {"intact", *ATTENTION_TYPES}, name
        assert set(ablated["intact"]) == CONSTRUCTIONS
        for kind in ATTENTION_TYPES:
            assert len(ablated[kind]) == model.num_layers, (name, kind)
            for layer in ablated[kind]:
                assert len(layer) == model.num_heads and all(set(h) == CONSTRUCTIONS for h in layer)


def test_the_provenance_is_the_codes_runs_and_corpus():
    config = RECORD["provenance"]["config"]
    assert config["runs"] == list(runs.RUNS) and config["split"] == "test"
    assert config["data"] == dataclasses.asdict(configs.HARDER.data)
    assert not RECORD["provenance"]["uncommitted_changes"]


def test_the_intact_models_score_what_their_runs_recorded():
    for name, ablated in ABLATIONS.items():
        recorded = record.load(runs.EXPERIMENT, name)["result"]["test"]["accuracy"]
        for key in CONSTRUCTIONS:
            assert ablated["intact"][key] == pytest.approx(recorded[key], abs=1e-2), (name, key)


def test_largest_drop_reads_the_worst_head():
    name = runs.run_name("softmax", 0)
    context = ABLATIONS[name]["context"]
    worst = min(h["tgt_marker"] for layer in context for h in layer)
    expected = 100 * (ABLATIONS[name]["intact"]["tgt_marker"] - worst)
    drop = measures.largest_drop(ABLATIONS, "softmax", "context", "tgt_marker", seeds=(0,))
    assert drop.tolist() == pytest.approx([expected])


@pytest.mark.slow
def test_one_model_ablated_now_reproduces_its_record():
    name = runs.run_name("alpha_entmax", 3)
    live = ablations.ablate_run(name)
    recorded = ABLATIONS[name]
    gaps = [
        abs(h[key] - r[key])
        for kind in ATTENTION_TYPES
        for row, recorded_row in zip(live[kind], recorded[kind], strict=True)
        for h, r in zip(row, recorded_row, strict=True)
        for key in CONSTRUCTIONS
    ]
    assert np.max(gaps) < 2e-3
