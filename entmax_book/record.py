"""Recorded runs: train once with a committed command, keep the result with its provenance, load it.

A run too long for a chapter is recorded once and shipped with the package, as tutorial series
ship pretrained checkpoints. Each run is one JSON file under ``entmax_book/<experiment>/records/``
holding the run's result and its provenance (git commit, package versions, the full config,
seeds, wall and CPU time, the machine). A chapter :func:`load` s the file and computes every
analysis from it; fast tests check that the record still matches the code.

:func:`record_runs` is the loop behind each experiment's command (for Chapter 4,
``python -m entmax_book.toy.runs``): it records the runs not recorded yet, one file each, so a
record can be built in several sittings, and it stops at the first failure without touching the
files already written. Names of experiments and runs are plain identifiers, so that no record is
read or written outside its folder; everything that can be checked before a run trains is, and a
finished run whose result cannot be recorded keeps its raw output beside the records.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import io
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

__all__ = ["command", "provenance", "save", "load", "load_arrays", "record_runs", "records_folder"]

#: The package's folder: each experiment's folder in it holds that experiment's shipped records.
_PACKAGE = Path(__file__).resolve().parent

_PACKAGES = ("jax", "jaxlib", "flax", "optax", "numpy", "scipy", "entmax_lib")
#: Significant digits kept for every float of a record (float32 carries about 7).
_DIGITS = 7
#: Experiment and run names: plain identifiers, so that a record never lies outside its folder.
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _check_name(value, what="name"):
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, got {type(value).__name__} {value!r}.")
    if not _NAME.fullmatch(value):
        raise ValueError(
            f"{what} must be a plain identifier (letters, digits and underscores, not starting with "
            f"a digit), got {value!r}: a record stays in its folder."
        )
    return value


def _git(*args) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=_PACKAGE.parent, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def provenance(config: dict, wall_seconds: float, cpu_seconds: float) -> dict:
    """Where a result came from: commit, versions, config, time and machine.

    Args:
      config: the run's full configuration (JSON-able).
      wall_seconds, cpu_seconds: the run's wall-clock and process CPU time.

    Returns:
      A JSON-able dict: ``commit`` (``git rev-parse HEAD``, None outside a checkout),
      ``uncommitted_changes`` (True if tracked package files differ from the commit),
      ``versions`` (Python and the packages), ``config``, ``wall_seconds``, ``cpu_seconds``,
      ``machine`` (CPU model, cores, JAX backend), ``recorded`` (UTC time), ``command``.

    >>> p = provenance({"steps": 1}, 1.0, 2.0)
    >>> sorted(p["versions"])[:3], p["config"]
    (['entmax_lib', 'flax', 'jax'], {'steps': 1})
    """
    import jax  # deferred: recording needs it, reading a record does not

    versions = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    changed = _git("status", "--porcelain", "--untracked-files=no", "--", "entmax_lib", "entmax_book")
    return {
        "commit": _git("rev-parse", "HEAD"),
        "uncommitted_changes": None if changed is None else bool(changed),
        "versions": versions,
        "config": config,
        "wall_seconds": round(wall_seconds, 1),
        "cpu_seconds": round(cpu_seconds, 1),
        "machine": {
            "cpu": _cpu_model(),
            "cores": os.cpu_count(),
            "jax_backend": jax.default_backend(),
            "platform": platform.platform(),
        },
        "recorded": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
    }


def _jsonable(value, where):
    """``value`` with floats rounded to :data:`_DIGITS` digits and NumPy/JAX values made Python
    ones; what JSON cannot hold faithfully is refused, naming ``where`` it is."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where} is {value}; a record cannot hold non-finite numbers.")
        return float(f"{value:.{_DIGITS}g}")
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise TypeError(f"{where} has the key {key!r}; the keys of a record are strings.")
        return {k: _jsonable(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if hasattr(value, "__array__") and hasattr(value, "tolist"):  # NumPy and JAX scalars and arrays
        return _jsonable(value.tolist(), where)
    raise TypeError(
        f"{where} is a {type(value).__name__}; a record holds numbers, strings, booleans, None, "
        "lists and dicts."
    )


def _small_arrays(arrays: dict) -> dict:
    """The arrays to save: floating point in float16, checked (finite, no pickling needed)."""
    import numpy as np

    small = {}
    for key, value in arrays.items():
        array = np.asarray(value)
        if array.dtype.kind == "O":
            raise TypeError(
                f"arrays[{key!r}] has dtype object, which only pickling could store; give numbers."
            )
        if "float" in array.dtype.name:
            with np.errstate(over="ignore"):  # an overflow becomes inf, refused just below
                array = array.astype(np.float16)
            if not np.all(np.isfinite(array)):
                raise ValueError(
                    f"arrays[{key!r}]: a record cannot hold non-finite weights (or weights beyond "
                    "float16's range, ±65504)."
                )
        small[key] = array
    return small


def _write(path: Path, data: bytes):
    # Under a temporary name, then renamed: an interrupted run never leaves a half-written
    # file that a later sitting would take for a finished record, and a failed one no debris.
    partial = path.with_suffix(path.suffix + ".partial")
    try:
        partial.write_bytes(data)
        partial.replace(path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def save(path, result: dict, provenance: dict, arrays: dict | None = None) -> Path:
    """Write ``{"provenance": …, "result": …}`` to ``path`` (floats to 7 significant digits).

    Everything is checked before anything is written: a refused record leaves no file.

    Args:
      path: the ``.json`` file.
      result, provenance: dicts of numbers, strings, booleans, None, lists and dicts; NumPy
        and JAX scalars and arrays are stored as numbers and lists.
      arrays: optional name → array (e.g. a model's weights), written beside it as ``.npz``,
        floating-point arrays in float16 (a checkpoint to analyse, not to resume training).
        The JSON is written last: a record whose JSON exists is complete.

    Returns:
      the path of the JSON file.

    Raises:
      ValueError: a non-finite number, or a weight beyond float16's range; the message names
        its key (e.g. ``result['history']['loss'][3] is nan``).
      TypeError: a value JSON cannot hold (a set, a complex number, an object array, ...),
        named likewise.
    """
    import numpy as np  # deferred, like jax in provenance()

    path = Path(path)
    record = {"provenance": _jsonable(provenance, "provenance"), "result": _jsonable(result, "result")}
    text = json.dumps(record, separators=(",", ":"), allow_nan=False)
    small = None if arrays is None else _small_arrays(arrays)
    path.parent.mkdir(parents=True, exist_ok=True)
    if small is not None:
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **small)  # no object arrays: nothing pickled
        _write(path.with_suffix(".npz"), buffer.getvalue())
    try:
        _write(path, text.encode())
    except BaseException:
        if small is not None:  # arrays without their JSON are no record
            path.with_suffix(".npz").unlink(missing_ok=True)
        raise
    return path


def records_folder(experiment: str) -> Path:
    """The folder of ``experiment``'s shipped records, ``entmax_book/<experiment>/records``.

    Inside the installed package, so Colab finds them too.

    >>> records_folder("toy").relative_to(records_folder("toy").parents[2]).as_posix()
    'entmax_book/toy/records'
    """
    return _PACKAGE / experiment / "records"


def _base(experiment, folder) -> Path:
    """The folder of an experiment's records; with ``folder`` given, ``experiment`` only names
    the command in messages (and may be "")."""
    if folder is None:
        return records_folder(_check_name(experiment, "experiment"))
    if experiment != "":
        _check_name(experiment, "experiment")
    return Path(folder)


def _record_file(base: Path, name, suffix: str) -> Path:
    path = base / f"{_check_name(name)}{suffix}"
    if path.is_symlink():
        raise ValueError(f"{path} is a symbolic link; a record is a plain file in its folder.")
    return path


def _again(experiment) -> str:
    command = f"python -m entmax_book.{experiment}.runs" if experiment else "the experiment's command"
    return f"record it again with {command}"


class _NonFinite(ValueError):
    pass


def _refuse_constant(constant):
    raise _NonFinite(constant)


def load(experiment: str, name: str, folder=None) -> dict:
    """A recorded run: ``{"provenance": …, "result": …}``.

    Args:
      experiment: the experiment (e.g. ``"toy"``, a plain identifier), whose records are in
        :func:`records_folder`.
      name: the run's name (the file is ``<name>.json``), a plain identifier.
      folder: read from this folder instead of the shipped records.

    Raises:
      FileNotFoundError: naming the runs that are recorded, and the command that records them.
      TypeError, ValueError: a name that is not a string, or not a plain identifier; a file that
        is a symbolic link, not JSON (truncated, binary), not a record, or holds NaN or infinity
        (which :func:`save` refuses) — naming the file.
    """
    base = _base(experiment, folder)
    path = _record_file(base, name, ".json")
    if not path.is_file():
        stems = (p.stem for p in base.glob("*.json")) if base.is_dir() else ()
        present = sorted(stem for stem in stems if _NAME.fullmatch(stem))  # not x.refused
        command = f"python -m entmax_book.{experiment}.runs" if experiment else "the experiment's command"
        raise FileNotFoundError(
            f"no recorded run {name!r} in {base} (recorded: {present or 'none'}); "
            f"record it with the experiment's command, e.g. {command}."
        )
    try:
        record = json.loads(path.read_bytes().decode("utf-8"), parse_constant=_refuse_constant)
    except _NonFinite as constant:
        raise ValueError(
            f"{path} is not a readable record: it holds the non-finite number {constant}; "
            f"{_again(experiment)}."
        ) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not a readable record ({error}); {_again(experiment)}.") from None
    if not (isinstance(record, dict) and {"provenance", "result"} <= set(record)):
        raise ValueError(
            f'{path} is not a readable record (not {{"provenance": …, "result": …}}); {_again(experiment)}.'
        )
    return record


def load_arrays(experiment: str, name: str, folder=None) -> dict:
    """The arrays saved with a recorded run (name → float16 or integer NumPy array).

    Raises:
      FileNotFoundError, TypeError, ValueError: as :func:`load`; also a file that is not an
        ``.npz`` NumPy reads without pickling, or holds non-finite weights — naming the file.
    """
    import numpy as np

    base = _base(experiment, folder)
    path = _record_file(base, name, ".npz")
    if not path.is_file():
        raise FileNotFoundError(f"no arrays recorded for run {name!r} in {base}.")
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {k: archive[k] for k in archive.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as error:
        raise ValueError(f"{path} is not a readable array file ({error}); {_again(experiment)}.") from None
    for key, array in arrays.items():
        if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
            raise ValueError(
                f"{path}: array {key!r} holds non-finite weights, which a record cannot hold; "
                f"{_again(experiment)}."
            )
    return arrays


class _Records(dict):
    """The records made so far, as a run sees them: a missing one is named, with the run."""

    def __init__(self, folder: Path):
        super().__init__()
        self.folder, self.running = folder, None

    def __missing__(self, key):
        raise KeyError(
            f"run {self.running!r} needs the record of {key!r}, which is not recorded in {self.folder}; "
            f"record {key!r} first (or together: only=[{key!r}, {self.running!r}])."
        )


def _check_only(only, runs) -> list | None:
    if only is None:
        return None
    if isinstance(only, str):
        raise TypeError(f"only must be a list of run names, got the string {only!r}; write [{only!r}].")
    only = list(only)
    if not only:
        raise ValueError("only is empty: nothing would be recorded; pass None to record every missing run.")
    unknown = sorted(set(only) - set(runs))
    if unknown:
        raise ValueError(f"unknown run names {unknown}; the runs are {list(runs)}.")
    return only


def _check_folder(folder: Path):
    """Fail now, not after the training, if ``folder`` cannot take files."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise ValueError(
            f"folder {folder} cannot hold records ({error}); choose a writable folder."
        ) from None


def _raw(value):
    """``value`` as JSON can hold it, losing as little as possible (NaN stays NaN)."""
    if isinstance(value, dict):
        return {k if isinstance(k, str) else repr(k): _raw(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_raw(v) for v in value]
    if value is None or isinstance(value, str | int | float):
        return value
    if hasattr(value, "__array__") and hasattr(value, "tolist"):
        return _raw(value.tolist())
    return repr(value)


def _keep_refused(folder: Path, name: str, record: dict, arrays) -> list[Path]:
    """Write a run's refused output beside the records, under names no record can have."""
    import numpy as np

    kept = [folder / f"{name}.refused.json"]
    kept[0].write_text(json.dumps(_raw(record)))
    if arrays is not None:
        kept.append(folder / f"{name}.refused.npz")
        np.savez(kept[1], **{k: np.asarray(v) for k, v in arrays.items()})
    return kept


def record_runs(runs: dict[str, Callable[[dict], tuple[dict, dict]]], folder, only=None, force=False) -> dict:
    """Record the runs that are not recorded yet, in order, one file each.

    The names, ``only`` and the folder are checked before any run starts. A run whose result
    cannot be recorded (a NaN, a value JSON cannot hold) is not lost: its raw output is written
    to ``<name>.refused.json`` (and ``.refused.npz``) and the error names the key.

    Args:
      runs: name (a plain identifier) → function. The function gets the records made so far
        (name → loaded record, for runs whose config depends on an earlier result; asking for
        one not recorded raises a ``KeyError`` naming both runs) and returns ``(config,
        result)``, or ``(config, result, arrays)`` to save arrays too (see :func:`save`).
      folder: where the ``<name>.json`` files go.
      only: a list of names: record only these (the others must already be there if they are
        needed).
      force: re-record runs that are already there.

    Returns:
      name → record, for every run in ``runs`` that is recorded when the loop ends.
    """
    folder = Path(folder)
    for name in runs:
        _check_name(name, "run name")
    only = _check_only(only, runs)
    wanted = {name for name in runs if only is None or name in only}
    if any(force or not (folder / f"{name}.json").is_file() for name in wanted):
        _check_folder(folder)
    done = _Records(folder)
    for name, run in runs.items():
        path = folder / f"{name}.json"
        if path.is_file() and not (force and name in wanted):
            done[name] = load("", name, folder)
            print(f"{name}: recorded already ({path})", file=sys.stderr)
            continue
        if name not in wanted:
            continue
        print(f"{name}: recording …", file=sys.stderr)
        done.running = name
        wall, cpu = time.perf_counter(), time.process_time()
        config, result, *arrays = run(done)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        origin = provenance(config, wall, cpu)
        arrays = arrays[0] if arrays else None
        try:
            save(path, result, origin, arrays)
        except (TypeError, ValueError) as error:
            kept = _keep_refused(folder, name, {"provenance": origin, "result": result}, arrays)
            raise type(error)(
                f"run {name!r} finished but cannot be recorded: {error} Its raw output is kept in "
                f"{', '.join(map(str, kept))}."
            ) from error
        done[name] = load("", name, folder)
        print(f"{name}: {wall:.0f} s wall, {cpu:.0f} s CPU → {path}", file=sys.stderr)
    return done


def command(experiment: str, runs: dict, description: str, argv=None) -> dict:
    """The command line of an experiment's record module (``python -m entmax_book.<experiment>.runs``).

    Options: ``--out FOLDER`` (default: the shipped records of ``experiment``), ``--only NAME …``
    (record only these runs; an unknown name stops the command before any training) and
    ``--force`` (record again runs already recorded).

    Args:
      experiment: the experiment (``"toy"``, ``"translation"``), whose records are in :func:`records_folder`.
      runs: name → function, as for :func:`record_runs`.
      description: the command's one-line description.
      argv: the arguments (default: ``sys.argv[1:]``).

    Returns:
      what :func:`record_runs` returns.
    """
    _check_name(experiment, "experiment")
    parser = argparse.ArgumentParser(prog=f"python -m entmax_book.{experiment}.runs", description=description)
    parser.add_argument("--out", default=str(records_folder(experiment)), help="folder of the records")
    parser.add_argument("--only", nargs="+", choices=list(runs), help="record only these runs")
    parser.add_argument("--force", action="store_true", help="record again runs already recorded")
    args = parser.parse_args(argv)
    return record_runs(runs, args.out, only=args.only, force=args.force)
