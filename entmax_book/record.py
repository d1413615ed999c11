"""Recorded runs: train once with a committed command, keep the result with its provenance, load it.

A run too long for a chapter is recorded once and shipped with the package, as tutorial series
ship pretrained checkpoints. Each run is one JSON file under ``entmax_book/<experiment>/records/``
holding the run's result and its provenance (git commit, package versions, the full config,
seeds, wall and CPU time, the machine). A chapter :func:`load` s the file and computes every
analysis from it; fast tests check that the record still matches the code.

:func:`record_runs` is the loop behind each experiment's command (for Chapter 4,
``python -m entmax_book.toy.runs``): it records the runs not recorded yet, one file each, so a
record can be built in several sittings, and it stops at the first failure without touching the
files already written.
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
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["command", "provenance", "save", "load", "load_arrays", "record_runs", "records_folder"]

#: The package's folder: each experiment's folder in it holds that experiment's shipped records.
_PACKAGE = Path(__file__).resolve().parent

_PACKAGES = ("jax", "jaxlib", "flax", "optax", "numpy", "scipy", "entmax_lib")
#: Significant digits kept for every float of a record (float32 carries about 7).
_DIGITS = 7


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


def _rounded(value):
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"a record cannot hold the non-finite number {value}.")
        return float(f"{value:.{_DIGITS}g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return value


def _write(path: Path, data: bytes):
    # Under a temporary name, then renamed: an interrupted run never leaves a half-written
    # file that a later sitting would take for a finished record.
    partial = path.with_suffix(path.suffix + ".partial")
    partial.write_bytes(data)
    partial.replace(path)


def save(path, result: dict, provenance: dict, arrays: dict | None = None) -> Path:
    """Write ``{"provenance": …, "result": …}`` to ``path`` (floats to 7 significant digits).

    Args:
      path: the ``.json`` file.
      result, provenance: JSON-able dicts.
      arrays: optional name → array (e.g. a model's weights), written beside it as ``.npz``,
        floating-point arrays in float16 (a checkpoint to analyse, not to resume training).
        The JSON is written last: a record whose JSON exists is complete.

    Returns:
      the path of the JSON file.
    """
    import numpy as np  # deferred, like jax in provenance()

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if arrays is not None:
        with np.errstate(over="ignore"):  # an overflow becomes inf, refused just below
            small = {
                k: (
                    np.asarray(v, np.float16)
                    if np.issubdtype(np.asarray(v).dtype, np.floating)
                    else np.asarray(v)
                )
                for k, v in arrays.items()
            }
        if not all(np.all(np.isfinite(v)) for v in small.values() if v.dtype == np.float16):
            raise ValueError("a record cannot hold non-finite weights (or weights beyond float16's range).")
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **small)
        _write(path.with_suffix(".npz"), buffer.getvalue())
    text = json.dumps({"provenance": _rounded(provenance), "result": _rounded(result)}, separators=(",", ":"))
    _write(path, text.encode())
    return path


def records_folder(experiment: str) -> Path:
    """The folder of ``experiment``'s shipped records, ``entmax_book/<experiment>/records``.

    Inside the installed package, so Colab finds them too.

    >>> records_folder("toy").relative_to(records_folder("toy").parents[2]).as_posix()
    'entmax_book/toy/records'
    """
    return _PACKAGE / experiment / "records"


def load(experiment: str, name: str, folder=None) -> dict:
    """A recorded run: ``{"provenance": …, "result": …}``.

    Args:
      experiment: the experiment (e.g. ``"toy"``), whose records are in :func:`records_folder`.
      name: the run's name (the file is ``<name>.json``).
      folder: read from this folder instead of the shipped records.

    Raises:
      FileNotFoundError: naming the runs that are recorded, and the command that records them.
    """
    base = Path(folder) if folder is not None else records_folder(experiment)
    path = base / f"{name}.json"
    if not path.is_file():
        present = sorted(p.stem for p in base.glob("*.json")) if base.is_dir() else []
        raise FileNotFoundError(
            f"no recorded run {name!r} in {base} (recorded: {present or 'none'}); "
            f"record it with the experiment's command, e.g. python -m entmax_book.{experiment}.runs."
        )
    return json.loads(path.read_text())


def load_arrays(experiment: str, name: str, folder=None) -> dict:
    """The arrays saved with a recorded run (name → float16 or integer NumPy array)."""
    import numpy as np

    base = Path(folder) if folder is not None else records_folder(experiment)
    path = base / f"{name}.npz"
    if not path.is_file():
        raise FileNotFoundError(f"no arrays recorded for run {name!r} in {base}.")
    with np.load(path) as archive:
        return {k: archive[k] for k in archive.files}


def record_runs(runs: dict[str, Callable[[dict], tuple[dict, dict]]], folder, only=None, force=False) -> dict:
    """Record the runs that are not recorded yet, in order, one file each.

    Args:
      runs: name → function. The function gets the records made so far (name → loaded record,
        for runs whose config depends on an earlier result) and returns ``(config, result)``,
        both JSON-able, or ``(config, result, arrays)`` to save arrays too (see :func:`save`).
      folder: where the ``<name>.json`` files go.
      only: record only these names (the others must already be there if they are needed).
      force: re-record runs that are already there.

    Returns:
      name → record, for every run in ``runs`` that is recorded when the loop ends.
    """
    folder = Path(folder)
    unknown = sorted(set(only or ()) - set(runs))
    if unknown:
        raise ValueError(f"unknown run names {unknown}; the runs are {list(runs)}.")
    done = {}
    for name, run in runs.items():
        path = folder / f"{name}.json"
        wanted = only is None or name in only
        if path.is_file() and not (force and wanted):
            done[name] = load("", name, folder)
            print(f"{name}: recorded already ({path})", file=sys.stderr)
            continue
        if not wanted:
            continue
        print(f"{name}: recording …", file=sys.stderr)
        wall, cpu = time.perf_counter(), time.process_time()
        config, result, *arrays = run(done)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        save(path, result, provenance(config, wall, cpu), arrays[0] if arrays else None)
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
    parser = argparse.ArgumentParser(prog=f"python -m entmax_book.{experiment}.runs", description=description)
    parser.add_argument("--out", default=str(records_folder(experiment)), help="folder of the records")
    parser.add_argument("--only", nargs="+", choices=list(runs), help="record only these runs")
    parser.add_argument("--force", action="store_true", help="record again runs already recorded")
    args = parser.parse_args(argv)
    return record_runs(runs, args.out, only=args.only, force=args.force)
