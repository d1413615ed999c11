"""Tests for entmax_book.record: the recorded-run mechanism (files, provenance, the skip loop)."""

import json
import re

import numpy as np
import pytest

from entmax_book import record


def _run(value, calls):
    def run(done):
        calls.append(sorted(done))
        return {"value": value}, {"score": value / 3}

    return run


def test_save_and_load_round_trip_with_seven_digits(tmp_path):
    path = record.save(tmp_path / "r.json", {"x": [1 / 3, 2.0, "a", None]}, {"config": {"lr": 1e-3}})
    loaded = record.load("any", "r", tmp_path)
    assert loaded["result"]["x"] == [0.3333333, 2.0, "a", None]
    assert loaded["provenance"]["config"] == {"lr": 0.001}
    assert not list(tmp_path.glob("*.partial")) and path.is_file()


def test_a_record_refuses_non_finite_numbers(tmp_path):
    with pytest.raises(ValueError, match="non-finite"):
        record.save(tmp_path / "r.json", {"loss": float("nan")}, {})
    assert not (tmp_path / "r.json").exists()


def test_a_missing_record_names_what_is_there_and_the_command(tmp_path):
    record.save(tmp_path / "a.json", {}, {})
    with pytest.raises(FileNotFoundError, match=r"'b'.*\['a'\].*python -m entmax_book.toy.runs"):
        record.load("toy", "b", tmp_path)


def test_record_runs_skips_what_is_recorded_and_passes_earlier_records(tmp_path):
    calls = []
    runs = {"first": _run(3.0, calls), "second": _run(6.0, calls)}
    done = record.record_runs(runs, tmp_path, only=["first"])
    assert list(done) == ["first"] and calls == [[]]
    done = record.record_runs(runs, tmp_path)
    assert calls == [[], ["first"]]  # "first" was not run again; "second" saw it
    assert done["second"]["result"] == {"score": 2.0}
    assert done["second"]["provenance"]["config"] == {"value": 6.0}
    record.record_runs(runs, tmp_path, only=["second"], force=True)
    assert calls[-1] == ["first"] and len(calls) == 3
    with pytest.raises(ValueError, match="unknown run names"):
        record.record_runs(runs, tmp_path, only=["third"])


def test_a_failed_run_leaves_the_earlier_records_and_no_file_of_its_own(tmp_path):
    def broken(done):
        raise RuntimeError("diverged")

    calls = []
    with pytest.raises(RuntimeError, match="diverged"):
        record.record_runs({"ok": _run(1.0, calls), "bad": broken}, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.json"]


def test_provenance_names_commit_versions_machine_and_time():
    p = record.provenance({"steps": 5}, 12.34, 20.0)
    assert p["commit"] is None or re.fullmatch(r"[0-9a-f]{40}", p["commit"])
    assert p["versions"]["jax"] and p["versions"]["entmax_lib"] and p["versions"]["python"]
    assert p["machine"]["cores"] >= 1 and p["machine"]["cpu"]
    assert p["wall_seconds"] == 12.3 and p["cpu_seconds"] == 20.0
    json.dumps(p)  # JSON-able


def test_arrays_are_saved_beside_the_record_in_float16(tmp_path):
    weights = {"w": np.linspace(-1, 1, 7, dtype=np.float32), "step": np.array([3, 4])}
    record.record_runs({"run": lambda done: ({"c": 1}, {"r": 2}, weights)}, tmp_path)
    back = record.load_arrays("toy", "run", tmp_path)
    assert back["w"].dtype == np.float16 and back["step"].dtype == weights["step"].dtype
    np.testing.assert_allclose(back["w"], weights["w"], atol=1e-3)
    np.testing.assert_array_equal(back["step"], [3, 4])
    with pytest.raises(ValueError, match="non-finite weights"):
        record.save(tmp_path / "big.json", {}, {}, {"w": np.array([1e6])})  # beyond float16
    assert not (tmp_path / "big.json").exists()
    with pytest.raises(FileNotFoundError, match="no arrays"):
        record.load_arrays("toy", "big", tmp_path)
