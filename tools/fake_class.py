"""A made-up class of submissions, to rehearse grading (``make grade-rehearsal``) and to test it.

``python -m tools.fake_class ASSIGNMENT_BUILD OUT [--students 20]`` writes ``OUT/student-NN.ipynb``
from one assignment's Otter output (``_build/course/NAME``: its solutions and its student
notebook): a mix of right, partly right (one function left as the stub), wrong (a function's
result perturbed), sleeping (a cell that never ends), not-a-notebook, missing-function
(a function renamed) and error-in-a-cell (right, then a scratch cell that fails) submissions.
The kind of each is in ``kinds.csv`` beside ``OUT`` (not in it: every file in the submissions
folder is a submission), and the class list, with one student who handed in nothing, in
``roster.csv`` beside it.
"""

from __future__ import annotations

import argparse
import copy
import csv
import re
import sys
from pathlib import Path

import nbformat

# The mix of a class of 20 (6 right, 4 partly right, 4 wrong, 2 of each problem), every kind
# among the first six; repeated for a larger class.
KINDS = (
    "right", "partly right", "wrong", "sleeping", "not a notebook", "missing function", "error in a cell",
) * 2 + ("right", "partly right", "wrong", "right", "partly right", "right")  # fmt: skip


def _defining(nb, name: str):
    return next(c for c in nb.cells if c.cell_type == "code" and re.search(rf"^def {name}\(", c.source, re.M))


def submission(kind: str, solutions, stubs, questions: list[str], i: int):
    """One made-up submission of a kind.

    Args:
        kind: one of :data:`KINDS`.
        solutions: the assignment's solutions notebook.
        stubs: its student notebook (the functions as ``...``).
        questions: the names of the functions to write, in order.
        i: the student's number (which function a partial or wrong submission gets wrong).

    Returns:
        The notebook, or the text of a file that is not one.
    """
    if kind == "not a notebook":
        return "I could not get Jupyter to save, so here is my code:\n\ndef f(z): return z\n"
    nb = copy.deepcopy(solutions)
    name = questions[i % len(questions)]
    cell = _defining(nb, name)
    if kind == "partly right":
        cell.source = _defining(stubs, name).source
    elif kind == "wrong":  # every return of the function, off by a little
        body = cell.source.split(f"def {name}(", 1)
        body[1] = re.sub(r"^(\s+)return (.+)$", r"\1return _off(\2)", body[1], flags=re.M)
        helper = (
            "def _off(x):\n"
            "    return tuple(_off(v) for v in x) if isinstance(x, tuple) else x * 1.01 + 0.01\n\n\n"
        )
        cell.source = body[0] + helper + f"def {name}(" + body[1]
    elif kind == "sleeping":
        nb.cells.insert(
            nb.cells.index(cell) + 1, nbformat.v4.new_code_cell("import time\n\ntime.sleep(10**6)")
        )
    elif kind == "missing function":
        cell.source = cell.source.replace(f"def {name}(", f"def my_{name}(")
    elif kind == "error in a cell":  # right, then a scratch cell that fails: a note, no points lost
        nb.cells.append(nbformat.v4.new_code_cell("ratio = 1 / 0  # a slip after the graded work"))
    return nb


def make_class(build: Path, out: Path, students: int = 20) -> list[tuple[Path, str]]:
    """Write a made-up class of submissions of one assignment.

    Args:
        build: the assignment's Otter output, ``_build/course/NAME``.
        out: the folder for the submissions (created).
        students: how many.

    Returns:
        ``(path, kind)`` per student; also written to ``kinds.csv`` beside ``out``, and the class
        list, every student and one more who handed in nothing, to ``roster.csv`` beside it.
    """
    from tools import grading

    name = build.name
    solutions = nbformat.read(build / "autograder" / f"{name}.ipynb", as_version=4)
    stubs = nbformat.read(build / "student" / f"{name}.ipynb", as_version=4)
    questions = list(grading.read_autograder(build.parent / f"{name}-autograder.zip"))
    out.mkdir(parents=True, exist_ok=True)
    made = []
    for i in range(students):
        kind = KINDS[i % len(KINDS)]
        path = out / f"student-{i + 1:02d}.ipynb"
        nb = submission(kind, solutions, stubs, questions, i)
        path.write_text(nb if isinstance(nb, str) else nbformat.writes(nb), encoding="utf-8")
        made.append((path, kind))
    with open(out.parent / "kinds.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([("student", "kind"), *((p.stem, k) for p, k in made)])
    with open(out.parent / "roster.csv", "w", newline="", encoding="utf-8") as f:
        absent = f"student-{students + 1:02d}"
        csv.writer(f).writerows([("student",), *((p.stem,) for p, _ in made), (absent,)])
    return made


#: What grading must give each kind: ``(score, max_score, problem, timeout) -> bool``.
EXPECTED = {
    "right": lambda score, top, problem, timeout: score == top and not problem,
    "partly right": lambda score, top, problem, timeout: 0 < score < top and not problem,
    "wrong": lambda score, top, problem, timeout: score < top and not problem,
    "error in a cell": lambda score, top, problem, timeout: score == top and not problem,
    "missing function": lambda score, top, problem, timeout: (
        score < top and "is never defined in the notebook" in problem
    ),
    "sleeping": lambda score, top, problem, timeout: (
        score == 0 and problem.startswith(f"stopped after {timeout:g} s")
    ),
    "not a notebook": lambda score, top, problem, timeout: (
        score == 0 and problem.startswith("not a notebook")
    ),
}


def check(kinds: Path, scores: Path, timeout: float) -> list[str]:
    """Compare a graded made-up class with the kind of each submission.

    Where grading wrote its feedback files beside ``scores.csv`` (``feedback/STUDENT.txt``), a
    missing function must also be one plain line there, not one line per check.

    Args:
        kinds: the class's ``kinds.csv`` (from :func:`make_class`).
        scores: the ``scores.csv`` that grading wrote.
        timeout: the seconds per notebook grading was given (a sleeper must be stopped after them).

    Returns:
        One line per student whose grade does not fit their kind; empty when every grade fits.
    """
    rows = {r["student"]: r for r in csv.DictReader(scores.open(encoding="utf-8"))}
    feedback = scores.parent / "feedback"
    wrong = []
    for row in csv.DictReader(kinds.open(encoding="utf-8")):
        student, kind = row["student"], row["kind"]
        got = rows.get(student)
        if got is None:
            wrong.append(f"{student} ({kind}): no row in {scores.name}")
            continue
        score, top, problem = float(got["score"]), float(got["max_score"]), got["problem"]
        if not EXPECTED[kind](score, top, problem, timeout):
            wrong.append(f"{student} ({kind}): graded {score:g} / {top:g}, problem {problem!r}")
        text = feedback / f"{student}.txt"
        if kind == "error in a cell" and text.is_file():
            if "Note: in the grader's run, code cell" not in text.read_text(encoding="utf-8"):
                wrong.append(f"{student} ({kind}): the feedback does not name the cell that failed")
        if kind == "missing function" and text.is_file():
            said = [line for line in text.read_text(encoding="utf-8").splitlines() if "never defined" in line]
            if len(said) != 1:
                wrong.append(f"{student} ({kind}): {len(said)} feedback lines say so, not one")
    return wrong


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python -m tools.fake_class ASSIGNMENT_BUILD OUT [--students N]``, or
    ``python -m tools.fake_class check KINDS SCORES --timeout S`` after grading the class."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["check"]:
        parser = argparse.ArgumentParser(prog="python -m tools.fake_class check")
        parser.add_argument("kinds", type=Path, help="the class's kinds.csv")
        parser.add_argument("scores", type=Path, help="the scores.csv grading wrote")
        parser.add_argument(
            "--timeout", type=float, required=True, help="the seconds grading gave a notebook"
        )
        args = parser.parse_args(argv[1:])
        wrong = check(args.kinds, args.scores, args.timeout)
        print("\n".join(wrong) or f"every grade fits its submission's kind ({args.kinds})")
        raise SystemExit(1 if wrong else 0)
    parser = argparse.ArgumentParser(prog="python -m tools.fake_class", description=__doc__.split("\n\n")[0])
    parser.add_argument("build", type=Path, help="the assignment's Otter output, _build/course/NAME")
    parser.add_argument("out", type=Path, help="the folder for the submissions")
    parser.add_argument("--students", type=int, default=20)
    args = parser.parse_args(argv)
    made = make_class(args.build, args.out, args.students)
    print(
        f"{len(made)} submissions in {args.out}, their kinds in {args.out.parent / 'kinds.csv'},"
        f" the class list in {args.out.parent / 'roster.csv'}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])
