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


# ----------------------------------------------------------------------------------------
# Reading: only finite numbers, clear errors naming the file
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_load_refuses_non_finite_numbers_naming_the_file(tmp_path, constant):
    (tmp_path / "r.json").write_text('{"provenance": {}, "result": {"x": [1.0, ' + constant + "]}}")
    with pytest.raises(ValueError, match=f"r.json.*{constant}"):
        record.load("toy", "r", tmp_path)


@pytest.mark.parametrize(
    "content",
    [b'{"provenance": {"commit": "ab', b"\xff\xfe\x00\x01binary", b"[1, 2]", b'{"result": {}}'],
    ids=["truncated", "binary", "not_a_dict", "no_provenance"],
)
def test_load_of_a_damaged_record_names_the_file(tmp_path, content):
    (tmp_path / "r.json").write_bytes(content)
    with pytest.raises(ValueError, match=r"r\.json is not a readable record.*record it again"):
        record.load("toy", "r", tmp_path)


def test_load_arrays_refuses_non_finite_weights_naming_file_and_key(tmp_path):
    np.savez(tmp_path / "r.npz", ok=np.ones(2, np.float16), w=np.array([1.0, np.nan], np.float16))
    with pytest.raises(ValueError, match=r"r\.npz.*'w'.*non-finite"):
        record.load_arrays("toy", "r", tmp_path)


@pytest.mark.parametrize("kind", ["not_a_zip", "truncated", "object_array"])
def test_load_arrays_of_a_damaged_file_names_it(tmp_path, kind):
    path = tmp_path / "r.npz"
    if kind == "object_array":
        np.savez(path, w=np.array([{"a": 1}], dtype=object))
    else:
        np.savez(path, w=np.ones(50))
        data = path.read_bytes()
        path.write_bytes(b"not a zip file" if kind == "not_a_zip" else data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"r\.npz is not a readable array file.*record it again"):
        record.load_arrays("toy", "r", tmp_path)


# ----------------------------------------------------------------------------------------
# Names are plain identifiers: records stay in their folder
# ----------------------------------------------------------------------------------------

BAD_NAMES = ["../secret", "/etc/passwd", "", "a/b", "a.b", "a b", "..", "x.refused"]


@pytest.mark.parametrize("name", BAD_NAMES)
@pytest.mark.parametrize("loader", [record.load, record.load_arrays], ids=["load", "load_arrays"])
def test_a_record_name_must_be_a_plain_identifier(tmp_path, loader, name):
    (tmp_path / "secret.json").write_text('{"provenance": {}, "result": {}}')
    folder = tmp_path / "records"
    folder.mkdir()
    with pytest.raises(ValueError, match="name must be a plain identifier"):
        loader("toy", name, folder)
    with pytest.raises(TypeError, match="name must be a string"):
        loader("toy", 3, folder)


@pytest.mark.parametrize("experiment", ["../..", "..", "", "/tmp", "toy/../.."])
def test_an_experiment_must_be_a_plain_identifier(experiment):
    with pytest.raises(ValueError, match="experiment must be a plain identifier"):
        record.load(experiment, "demo")


def test_command_refuses_an_experiment_outside_the_records():
    with pytest.raises(ValueError, match="experiment must be a plain identifier"):
        record.command("../..", {}, "demo", ["--out", "unused"])


def test_load_does_not_follow_symbolic_links(tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text('{"provenance": {}, "result": {"secret": 1}}')
    folder = tmp_path / "records"
    folder.mkdir()
    (folder / "r.json").symlink_to(outside)
    (folder / "r.npz").symlink_to(outside)
    with pytest.raises(ValueError, match="symbolic link"):
        record.load("toy", "r", folder)
    with pytest.raises(ValueError, match="symbolic link"):
        record.load_arrays("toy", "r", folder)


def test_record_runs_refuses_a_run_name_that_leaves_the_folder(tmp_path):
    calls = []
    folder = tmp_path / "records"
    with pytest.raises(ValueError, match="run name must be a plain identifier.*'../escaped'"):
        record.record_runs({"ok": _run(1.0, calls), "../escaped": _run(2.0, calls)}, folder)
    assert calls == [] and sorted(p.name for p in tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------------------
# Writing: nothing half-written, nothing finished thrown away
# ----------------------------------------------------------------------------------------


def test_a_refused_result_leaves_no_orphan_arrays(tmp_path):
    with pytest.raises(ValueError, match=r"result\['x'\] is nan"):
        record.save(tmp_path / "r.json", {"x": float("nan")}, {}, {"w": np.ones(2)})
    assert list(tmp_path.iterdir()) == []


def test_object_arrays_are_refused_before_anything_is_written(tmp_path):
    with pytest.raises(TypeError, match="arrays\\['w'\\] has dtype object"):
        record.save(tmp_path / "r.json", {}, {}, {"ok": np.ones(2), "w": np.array([{"a": 1}], dtype=object)})
    assert list(tmp_path.iterdir()) == []


def test_a_failed_rename_leaves_no_partial_file(tmp_path, monkeypatch):
    def refuse(self, target):
        raise PermissionError("rename refused")

    monkeypatch.setattr(type(tmp_path), "replace", refuse)
    with pytest.raises(PermissionError, match="rename refused"):
        record.save(tmp_path / "r.json", {"x": 1.0}, {}, {"w": np.ones(2)})
    assert list(tmp_path.iterdir()) == []


def test_numpy_scalars_and_arrays_in_a_result_are_recorded_as_numbers(tmp_path):
    result = {"a": np.float32(0.5), "b": np.int64(3), "c": np.bool_(True), "d": np.arange(3)}
    result["e"] = (np.float64(0.25),)
    record.save(tmp_path / "r.json", result, {"config": {"lr": np.float32(1e-3)}})
    loaded = record.load("toy", "r", tmp_path)
    assert loaded["result"] == {"a": 0.5, "b": 3, "c": True, "d": [0, 1, 2], "e": [0.25]}
    assert loaded["provenance"]["config"] == {"lr": 0.001}


def test_a_value_json_cannot_hold_is_refused_naming_its_key(tmp_path):
    with pytest.raises(TypeError, match=r"result\['runs'\]\[1\]\['f'\] is a set"):
        record.save(tmp_path / "r.json", {"runs": [{}, {"f": {1, 2}}]}, {})
    with pytest.raises(ValueError, match=r"provenance\['config'\]\['lr'\] is inf"):
        record.save(tmp_path / "r.json", {}, {"config": {"lr": float("inf")}})
    assert list(tmp_path.iterdir()) == []


def test_record_runs_checks_the_folder_before_training(tmp_path):
    calls = []
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    for folder in (not_a_folder, not_a_folder / "sub"):
        with pytest.raises(ValueError, match=f"folder {re.escape(str(folder))} cannot hold records"):
            record.record_runs({"run": _run(1.0, calls)}, folder)
    assert calls == []


def test_a_refused_result_is_kept_beside_and_its_key_named(tmp_path):
    calls = []

    def diverged(done):
        return {"lr": 1.0}, {"history": {"loss": [1.0, float("nan")]}, "step": np.int64(2)}, {"w": np.ones(3)}

    named = r"'bad'.*result\['history'\]\['loss'\]\[1\] is nan.*bad\.refused\.json"
    with pytest.raises(ValueError, match=named):
        record.record_runs({"ok": _run(1.0, calls), "bad": diverged}, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.refused.json", "bad.refused.npz", "ok.json"]
    kept = json.loads((tmp_path / "bad.refused.json").read_text())
    assert kept["provenance"]["config"] == {"lr": 1.0} and kept["result"]["step"] == 2
    assert np.isnan(kept["result"]["history"]["loss"][1])
    np.testing.assert_array_equal(np.load(tmp_path / "bad.refused.npz")["w"], np.ones(3))
    # The raw result is not taken for a record: the run is still to be recorded.
    with pytest.raises(FileNotFoundError, match=r"recorded: \['ok'\]"):
        record.load("toy", "bad", tmp_path)


# ----------------------------------------------------------------------------------------
# Which runs: `only` is a list of names; a missing dependency is named
# ----------------------------------------------------------------------------------------


def test_only_must_be_a_non_empty_list_of_names(tmp_path):
    calls = []
    runs = {"demo": _run(1.0, calls)}
    string = r"only must be a list of run names, got the string 'demo'; write \['demo'\]"
    with pytest.raises(TypeError, match=string):
        record.record_runs(runs, tmp_path, only="demo")
    with pytest.raises(ValueError, match="only is empty"):
        record.record_runs(runs, tmp_path, only=[])
    assert calls == []


def test_a_run_that_needs_a_missing_record_says_which(tmp_path):
    def second(done):
        return {}, {"x": done["first"]["result"]["score"]}

    calls = []
    runs = {"first": _run(3.0, calls), "second": second}
    with pytest.raises(KeyError, match="run 'second' needs the record of 'first'.*not recorded"):
        record.record_runs(runs, tmp_path, only=["second"])
    assert calls == [] and list(tmp_path.iterdir()) == []
