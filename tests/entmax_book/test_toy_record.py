"""Chapter 4's shipped record still matches the code that made it.

* every run of ``toy_record.RUNS`` is recorded, with its provenance, and its config is the one
  the code defines today (a changed default or a changed run fails here);
* the first 51 training steps of the recorded configs, rerun now for seed 0 at the shortest
  length, reproduce the recorded training loss before step 1 (relative 1e-5: the same data and
  weights) and before step 51 (relative 5e-2), and the learned α after steps 1 and 51 (relative
  1e-2). Float rounding differs between JAX versions and grows over 50 Adam steps: on Colab's
  versions the loss at step 51 differs by 0.3 % (demo) and 1.3 % (stress, learned α) from the
  record made with the latest; a change of the code (data, weights, learning rate, map) moves
  it by far more;
* the record stays small.
"""

import dataclasses
import re

import numpy as np
import pytest
from recorded_config import assert_same

from entmax_book import record, toy, toy_record

RECORDS = {name: record.load(toy_record.EXPERIMENT, name) for name in toy_record.RUNS}


@pytest.mark.parametrize("name", list(toy_record.RUNS))
def test_the_recorded_config_is_the_code_s_config(name):
    config = dataclasses.asdict(toy_record.config_for(name, RECORDS))
    recorded = RECORDS[name]["provenance"]["config"]
    assert set(recorded) == set(config), f"{name}: the config's fields changed; record again"
    for key, value in config.items():
        assert_same(recorded[key], value, f"{name}.{key}")
    assert RECORDS[name]["result"]["config"] == recorded


@pytest.mark.parametrize("name", list(toy_record.RUNS))
def test_every_run_has_its_provenance(name):
    p = RECORDS[name]["provenance"]
    assert re.fullmatch(r"[0-9a-f]{40}", p["commit"]) and p["uncommitted_changes"] is False
    assert p["versions"]["jax"] and p["versions"]["entmax_lib"]
    assert p["wall_seconds"] > 0 and p["cpu_seconds"] > 0 and p["machine"]["cpu"]
    assert "toy_record" in p["command"]
    result = RECORDS[name]["result"]
    assert len(result["seeds"]) == 10 and result["seeds"] == list(range(10))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["demo", "demo_exact_gradient", "stress"])
def test_the_start_of_each_recorded_curve_is_reproduced(name):
    recorded = RECORDS[name]["result"]
    config = toy_record.config_for(name, RECORDS)
    assert config.history_every == 50
    shortest = min(config.lengths)
    rerun = toy.run_experiment(
        config, lengths=(shortest,), seeds=(0,), steps=51, n_attention_examples=0, attention_length=None
    )
    i = recorded["lengths"].index(shortest)
    for variant in config.variants:
        first, fifty_first = np.array(recorded[variant]["loss_history_per_seed"])[i, 0, :2]
        again = rerun[variant]["loss_history_per_seed"][0][0]
        assert again[0] == pytest.approx(first, rel=1e-5), variant  # the same data and weights
        assert again[1] == pytest.approx(fifty_first, rel=5e-2), variant  # the same 50 steps
    alpha = np.array(recorded["alpha_entmax"]["alpha_history_per_seed"])[i, 0, :2]
    np.testing.assert_allclose(rerun["alpha_entmax"]["alpha_history_per_seed"][0][0], alpha, rtol=1e-2)


def test_the_record_is_small():
    folder = record.RECORDS / toy_record.EXPERIMENT
    sizes = {p.name: p.stat().st_size for p in folder.glob("*.json")}
    assert set(sizes) == {f"{name}.json" for name in toy_record.RUNS}
    assert sum(sizes.values()) < 5e6, sizes


def test_the_command_refuses_an_unknown_run_before_training(tmp_path, monkeypatch):
    monkeypatch.setattr(toy, "run_experiment", lambda *a, **k: pytest.fail("trained"))
    with pytest.raises(SystemExit):
        toy_record.main(["--out", str(tmp_path), "--only", "demo_typo"])
    with pytest.raises(ValueError, match="unknown run"):
        toy_record.config_for("demo_typo", {})
