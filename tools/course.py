"""The autograded assignments: build them with Otter Assign, grade a submission with Otter Run.

The sources are the master notebooks in ``course/assignments/`` (Otter's format: each question a
``# BEGIN QUESTION`` block with its solution between ``# BEGIN SOLUTION`` / ``# END SOLUTION``
and its tests, public or hidden, between ``# BEGIN TESTS`` / ``# END TESTS``).

``python -m tools.course`` (what ``make course`` runs) writes, for every master notebook
``NAME.ipynb``:

- ``_build/course/NAME-autograder.zip``: the grader, with the hidden tests (keep it private);
- ``_build/course/NAME/``: everything Otter Assign wrote (the solutions notebook, the student
  notebook);
- ``student/assignments/NAME/``: the student notebook and its public tests, committed so that
  Colab can open it (its setup cell fetches the public tests from GitHub).

``python -m tools.course grade ZIP SUBMISSION.ipynb`` grades one submission locally (no Docker,
no network) and prints ``score / max``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
MASTERS = ROOT / "course" / "assignments"
BUILD = ROOT / "_build" / "course"
STUDENT = ROOT / "student" / "assignments"


def _otter(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    # Otter's command line, from the environment that runs this script.
    code = "import sys; from otter.cli import cli; sys.exit(cli())"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def masters() -> list[Path]:
    """The master notebooks of the assignments, sorted by name.

    Returns:
        The paths of ``course/assignments/*.ipynb``.
    """
    return sorted(MASTERS.glob("*.ipynb"))


def _normalise(path: Path) -> None:
    # Otter writes random cell ids: number them, so that a rebuild gives the same bytes.
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:03d}"
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


def assign(master: Path, out: Path) -> Path:
    """Run Otter Assign on one master notebook.

    Args:
        master: the master notebook (solutions and all tests).
        out: the folder to write into (emptied first): ``out/autograder`` and ``out/student``.

    Returns:
        The autograder zip, copied to ``out/../NAME-autograder.zip`` (a name without Otter's
        time stamp).

    Raises:
        RuntimeError: Otter Assign failed (its output is in the message).
    """
    shutil.rmtree(out, ignore_errors=True)
    result = _otter("assign", str(master), str(out))
    if result.returncode != 0:
        raise RuntimeError(f"otter assign {master.name} failed:\n{result.stdout}\n{result.stderr}")
    (zip_path,) = (out / "autograder").glob("*.zip")
    target = out.parent / f"{master.stem}-autograder.zip"
    shutil.copyfile(zip_path, target)
    for notebook in out.rglob("*.ipynb"):
        _normalise(notebook)
    return target


def build(out: Path = BUILD, student: Path | None = STUDENT) -> dict[str, Path]:
    """Build every assignment: the autograder zips and the student notebooks.

    Args:
        out: where Otter's output and the autograder zips go.
        student: where to copy each student notebook and its public tests (None: nowhere).

    Returns:
        For every assignment name, its autograder zip.
    """
    out.mkdir(parents=True, exist_ok=True)
    zips = {}
    if student is not None:
        shutil.rmtree(student, ignore_errors=True)
    for master in masters():
        zips[master.stem] = assign(master, out / master.stem)
        if student is not None:
            shutil.copytree(out / master.stem / "student", student / master.stem)
    return zips


def grade(autograder: Path, submission: Path) -> tuple[float, float]:
    """Grade one submitted notebook with its assignment's autograder, locally.

    Args:
        autograder: the assignment's autograder zip (from ``build``).
        submission: the student's notebook.

    Returns:
        ``(score, max_score)`` over all tests, public and hidden.

    Raises:
        RuntimeError: Otter Run failed to produce results.
    """
    with tempfile.TemporaryDirectory() as tmp:
        result = _otter("run", "-a", str(autograder), "-o", tmp, str(submission))
        results = Path(tmp) / "results.json"
        if result.returncode != 0 or not results.exists():
            raise RuntimeError(f"otter run failed:\n{result.stdout}\n{result.stderr}")
        tests = json.loads(results.read_text())["tests"]
    scored = [t for t in tests if "max_score" in t]
    return sum(t["score"] for t in scored), sum(t["max_score"] for t in scored)


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python -m tools.course`` builds; ``... grade ZIP NOTEBOOK`` grades.

    Args:
        argv: the arguments (default ``sys.argv[1:]``).
    """
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "grade":
        score, max_score = grade(Path(argv[1]), Path(argv[2]))
        print(f"{score:g} / {max_score:g}")
        return
    for name, zip_path in build().items():
        print(
            f"{name}: {zip_path.relative_to(ROOT)}, student notebook in {(STUDENT / name).relative_to(ROOT)}"
        )


if __name__ == "__main__":
    main()
