"""Grading submissions with an assignment's autograder zip, locally (Otter Run, no Docker).

:func:`grade` grades one notebook, :func:`grade_all` a folder of them: a CSV of scores and one
feedback file per student that says which checks failed and why (the error's kind and message,
never the hidden test's code). A file that is not a notebook, a function that was never defined
and a notebook that runs past the timeout each get a plain sentence instead of a traceback.

The submissions' code runs as the user who grades, unsandboxed (see ``tools.course.UNSANDBOXED``).
"""

from __future__ import annotations

import ast
import csv
import json
import re
import subprocess
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from tools import course


class GradingError(ValueError):
    """An autograder or a folder that cannot be graded with (a one-line message)."""


@dataclass(frozen=True)
class Check:
    """One test case of a question, and how a submission did on it."""

    question: str
    test: str
    points: float
    hidden: bool
    passed: bool = False
    reason: str = ""


@dataclass
class Result:
    """A graded submission: its score, its checks, or the problem that stopped its grading."""

    submission: Path
    score: float = 0.0
    max_score: float = 0.0
    checks: list[Check] = field(default_factory=list)
    problem: str = ""
    notes: list[str] = field(default_factory=list)
    student: str = ""  # whose it is (default: the file's name without .ipynb)

    def __post_init__(self):
        self.student = self.student or self.submission.stem


def read_autograder(autograder: Path) -> dict[str, list[Check]]:
    """The questions and test cases of an Otter autograder zip, read without running them.

    Args:
        autograder: the zip that ``make course`` (or the bundle) wrote.

    Returns:
        For each question (the function the student writes), its test cases in order.

    Raises:
        GradingError: the file is missing or is not an Otter autograder zip.
    """
    if not autograder.is_file() or not zipfile.is_zipfile(autograder):
        raise GradingError(
            f"{autograder} is not a zip file (an autograder is NAME-autograder.zip from make course)"
        )
    with zipfile.ZipFile(autograder) as archive:
        names = archive.namelist()
        tests = sorted(n for n in names if re.fullmatch(r"tests/\w+\.py", n))
        if "otter_config.json" not in names or not tests:
            raise GradingError(
                f"{autograder} is not an Otter autograder zip (no otter_config.json and tests/)"
            )
        questions = {}
        for name in tests:
            tree = ast.parse(archive.read(name).decode("utf-8"))
            questions[Path(name).stem] = [
                _case(Path(name).stem, f) for f in tree.body if isinstance(f, ast.FunctionDef)
            ]
    return questions


def _case(question: str, function: ast.FunctionDef) -> Check:
    # @test_case(points=2, hidden=True) def test_...(fn): ...
    options = {
        k.arg: ast.literal_eval(k.value)
        for d in function.decorator_list
        if isinstance(d, ast.Call)
        for k in d.keywords
    }
    return Check(question, function.name, float(options.get("points") or 0), bool(options.get("hidden")))


def read_submission(path: Path) -> dict:
    """A submitted notebook as JSON.

    Args:
        path: the file the student handed in.

    Returns:
        The notebook's JSON.

    Raises:
        GradingError: the file is missing, not JSON, or JSON without notebook cells.
    """
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GradingError(f"{path}: no such file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise GradingError(f"{path} is not a notebook: not JSON ({error})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise GradingError(f"{path} is not a notebook: JSON without a list of cells")
    return nb


def defined_names(nb: dict) -> set[str] | None:
    """The names that the notebook's code cells define at top level (def, class, =, import).

    Args:
        nb: the notebook's JSON.

    Returns:
        The names, or None when a code cell is not valid Python (then nothing can be said).
    """
    names = set()
    for cell in nb["cells"]:
        if cell.get("cell_type") != "code":
            continue
        source = "".join(cell.get("source", ""))
        source = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
        try:
            tree = ast.parse(source)
        except SyntaxError:
            return None
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _reason(block: str) -> str:
    # The last line of Otter's report of a failed case is the error: "Kind: message". The lines
    # above it quote the test's code, which stays private.
    last = [line.strip() for line in block.strip().splitlines() if line.strip()][-1]
    kind, _, message = last.partition(":")
    if kind == "AssertionError":
        return "wrong result (a check on its values failed)" + (
            f": {message.strip()}" if message.strip() else ""
        )
    return last[:300]


def _failed_cases(output: str) -> dict[tuple[str, int], str]:
    # "NAME - i result:" blocks; a case that passed is not listed once any case failed.
    blocks = re.split(r"^\s*(\w+) - (\d+) result:\s*$", output, flags=re.M)
    failed = {}
    for question, index, block in zip(blocks[1::3], blocks[2::3], blocks[3::3], strict=True):
        if "Test case failed" in block:
            failed[(question, int(index))] = _reason(block.split("\n\n")[0] if "\n\n" in block else block)
    return failed


_STUB_HINT = " (the function returned None: is it still the `...` stub, or missing a return?)"


def _private(reason: str) -> str:
    """What a student may read of a failed hidden check: the kind of failure, never its message,
    which can quote the hidden test's inputs (an exception raised with them, an assert's text)."""
    if not reason or reason.startswith("wrong result"):
        return reason and "wrong result (a check on its values failed)"
    kind = reason.partition(":")[0].strip()
    return f"{kind} raised" + (_STUB_HINT if "NoneType" in reason else "")


def _explain(reason: str) -> str:
    # A function left as the stub (`...`) returns None; say so instead of only Python's words.
    return reason + (_STUB_HINT if "NoneType" in reason else "")


def _checks(questions: dict[str, list[Check]], tests: list[dict], defined: set[str] | None) -> list[Check]:
    failed = {}
    for entry in tests:
        if "max_score" in entry:
            failed.update(_failed_cases(entry.get("output", "")))
    checks = []
    for question, cases in questions.items():
        missing = defined is not None and question not in defined
        for i, case in enumerate(cases, start=1):
            raw = failed.get((question, i), "")
            reason = _private(raw) if case.hidden else _explain(raw)
            if missing:
                reason = f"`{question}` is never defined in the notebook (renamed, or its cell deleted?)"
            checks.append(Check(case.question, case.test, case.points, case.hidden, not reason, reason))
    return checks


def grade(autograder: Path, submission: Path, timeout: float = 300) -> Result:
    """Grade one submitted notebook with its assignment's autograder, locally (no Docker).

    The notebook's code runs as the calling user, unsandboxed.

    Args:
        autograder: the assignment's autograder zip.
        submission: the student's notebook.
        timeout: seconds before the run (the whole notebook and the tests) is stopped.

    Returns:
        The :class:`Result`: Otter's score over all tests, public and hidden, each check's
        outcome, or the problem that stopped grading (the score is then 0).

    Raises:
        GradingError: the autograder is not an Otter autograder zip.
    """
    questions = read_autograder(autograder)
    result = Result(submission, max_score=sum(c.points for cases in questions.values() for c in cases))
    try:
        nb = read_submission(submission)
    except GradingError as error:
        result.problem = str(error).replace(f"{submission} is ", "", 1)
        return result
    with tempfile.TemporaryDirectory() as tmp:
        try:
            run = course._otter(
                "run", "-a", str(autograder.resolve()), "-o", tmp, str(submission.resolve()), timeout=timeout
            )
        except subprocess.TimeoutExpired:
            result.problem = f"stopped after {timeout:g} s: a cell runs too long (a sleep, an endless loop?)"
            return result
        path = Path(tmp) / "results.json"
        if run.returncode != 0 or not path.exists():
            error = (run.stderr.strip().splitlines() or ["no message"])[-1]
            result.problem = f"the notebook could not be run: {error[:300]}"
            return result
        tests = json.loads(path.read_text())["tests"]
    result.checks = _checks(questions, tests, defined_names(nb))
    result.score = sum(t["score"] for t in tests if "max_score" in t)
    for entry in tests:  # Otter's score is the grade; say so where its report could not be read
        passed = sum(c.points for c in result.checks if c.question == entry["name"] and c.passed)
        if "max_score" in entry and passed != entry["score"]:
            result.notes.append(
                f"{entry['name']}: Otter scored {entry['score']:g}; its per-check report did not match"
            )
    return result


def feedback(result: Result) -> str:
    """The feedback for a student: the score, then every check with what went wrong.

    Args:
        result: a graded submission.

    Returns:
        Plain text, one line per check; hidden checks are named, their code is not shown.
    """
    lines = [f"{result.submission.name}: {result.score:g} / {result.max_score:g}"]
    if result.problem:
        return "\n".join([*lines, f"Not graded: {result.problem}", ""])
    for check in result.checks:
        kind = "hidden" if check.hidden else "public"
        outcome = "passed" if check.passed else f"FAILED: {check.reason}"
        lines.append(f"- {check.question}, {kind} check {check.test} ({check.points:g} pt): {outcome}")
    return "\n".join([*lines, *(f"Note: {note}" for note in result.notes), ""])


#: What a lecturer's roster may call the column of students' names (the first column otherwise).
ROSTER_COLUMNS = ("student", "name", "username", "login", "id", "email")


def read_roster(roster: Path) -> list[str]:
    """The students of a roster CSV, in its order.

    The student is the column named ``student`` (or ``name``, ``username``, ``login``, ``id``,
    ``email``, in that order of preference, any case) when the first line is a header with one of
    them; otherwise the first column of every line. Blank lines are skipped.

    Args:
        roster: the CSV file, e.g. exported from the learning platform.

    Returns:
        The students' names, as their submissions are named (file ``NAME.ipynb`` or folder ``NAME/``).

    Raises:
        GradingError: the file is missing, not text, names nobody, or names a student twice.
    """
    try:
        text = roster.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise GradingError(f"--roster {roster}: no such file") from None
    except (UnicodeDecodeError, IsADirectoryError):
        raise GradingError(f"--roster {roster}: not a text CSV file") from None
    lines = [row for row in csv.reader(text.splitlines()) if any(cell.strip() for cell in row)]
    if not lines:
        raise GradingError(f"--roster {roster}: names no student (the file is empty)")
    header = [cell.strip().lower() for cell in lines[0]]
    column = next((header.index(c) for c in ROSTER_COLUMNS if c in header), None)
    rows = lines[1:] if column is not None else lines
    column = column or 0
    students = [row[column].strip() if column < len(row) else "" for row in rows]
    if not students or not all(students):
        raise GradingError(f"--roster {roster}: a line without a student in column {column + 1}")
    seen = set()
    for student in students:
        if student.casefold() in seen:
            raise GradingError(f"--roster {roster}: {student!r} is on it twice")
        seen.add(student.casefold())
    return students


def _hidden(path: Path) -> bool:
    return path.name.startswith((".", "_", "~$")) or path.name == "__MACOSX"


def find_submissions(folder: Path, assignment: str = "", skip: Path | None = None) -> dict[str, Path | str]:
    """Every student's submission in a folder, flat or one folder per student.

    ``FOLDER/NAME.ipynb`` is NAME's notebook; ``FOLDER/NAME/`` (a learning platform's export)
    holds NAME's files: its notebook is the only ``*.ipynb`` in it (at any depth), or, of several,
    the one named after the assignment, else the newest. Hidden files (``.DS_Store``,
    ``__MACOSX``, ``.ipynb_checkpoints``) are ignored.

    Args:
        folder: the submissions.
        assignment: the assignment's name (which of several notebooks is the submission).
        skip: a folder inside ``folder`` to ignore (where the grades are written).

    Returns:
        For each student, the notebook to grade, or the reason there is none to grade (a file
        that is not a notebook, a folder without one), sorted by student.

    Raises:
        GradingError: ``folder`` is not a folder.
    """
    if not folder.is_dir():
        raise GradingError(f"FOLDER {folder} is not a folder of submissions")
    skip = skip.resolve() if skip else None
    found: dict[str, Path | str] = {}
    for entry in sorted(folder.iterdir()):
        if _hidden(entry) or (skip is not None and entry.resolve() == skip):
            continue
        if entry.is_file():
            if entry.suffix.lower() == ".ipynb":
                found[entry.stem] = entry
            else:
                kind = f"a {entry.suffix} file" if entry.suffix else "a file without an extension"
                found[entry.stem] = (
                    f"not a notebook: {entry.name} is {kind}; hand in the .ipynb "
                    "(in Jupyter or Colab: File > Download .ipynb)"
                )
        elif entry.is_dir():
            files = [
                p
                for p in entry.rglob("*")
                if p.is_file()
                and not any(_hidden(part) for part in p.relative_to(entry).parents if part.name)
                and not _hidden(p)
            ]
            notebooks = sorted((p for p in files if p.suffix.lower() == ".ipynb"), key=lambda p: p.as_posix())
            if len(notebooks) == 1:
                found[entry.name] = notebooks[0]
            elif notebooks:
                named = [p for p in notebooks if p.stem == assignment]
                found[entry.name] = named[0] if named else max(notebooks, key=lambda p: p.stat().st_mtime)
            elif files:
                names = ", ".join(sorted(p.relative_to(entry).as_posix() for p in files)[:5])
                found[entry.name] = f"not a notebook: the folder holds no .ipynb, only {names}"
            else:
                found[entry.name] = "no submission (an empty folder)"
    return found


def grade_all(
    autograder: Path,
    folder: Path,
    out: Path,
    timeout: float = 300,
    jobs: int = 2,
    roster: Path | None = None,
) -> list[Result]:
    """Grade a class: ``out/scores.csv`` (a row per student) and ``out/feedback/STUDENT.txt``.

    Submissions are found by :func:`find_submissions` (``FOLDER/STUDENT.ipynb`` or
    ``FOLDER/STUDENT/*.ipynb``). A file that is not a notebook gets a row with the reason and 0
    points, and so does, with a roster, every student on it who handed in nothing ("no
    submission"). A submission whose student is not on the roster is graded and noted.

    Args:
        autograder: the assignment's autograder zip.
        folder: the submissions.
        out: where the CSV and the feedback files go (created; skipped if inside ``folder``).
        timeout: seconds per notebook.
        jobs: notebooks graded at the same time.
        roster: a CSV of the class (:func:`read_roster`), or None to grade what is there.

    Returns:
        The results: the roster's order, then the students not on it, sorted by name.

    Raises:
        GradingError: the autograder or the roster is not one, ``timeout`` or ``jobs`` is not
            positive, or (without a roster) the folder holds no submission.
    """
    if not timeout > 0:
        raise GradingError(f"--timeout must be a number of seconds > 0, got {timeout!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise GradingError(f"--jobs must be an integer >= 1, got {jobs!r}")
    questions = read_autograder(autograder)
    students = read_roster(roster) if roster is not None else None
    assignment = autograder.name.removesuffix("-autograder.zip")
    found = find_submissions(folder, assignment, skip=out)
    if students is None and not found:
        raise GradingError(f"FOLDER {folder} holds no submission (no *.ipynb, no folder per student)")
    by_key = {name.casefold(): name for name in found}
    order = []
    if students is not None:
        order = [(student, by_key.pop(student.casefold(), None)) for student in students]
    order += [(by_key[key], by_key[key]) for key in sorted(by_key)]
    max_score = sum(c.points for cases in questions.values() for c in cases)

    def one(item: tuple[str, str | None]) -> Result:
        student, name = item
        entry = found.get(name) if name is not None else None
        if entry is None:
            result = Result(folder / student, max_score=max_score, problem="no submission", student=student)
        elif isinstance(entry, str):
            result = Result(folder / name, max_score=max_score, problem=entry, student=student)
        else:
            result = grade(autograder, entry, timeout)
            result.student = student
        if (
            students is not None
            and name is not None
            and student == name
            and name.casefold() not in {s.casefold() for s in students}
        ):
            result.notes.append("not on the roster")
        return result

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(one, order))
    (out / "feedback").mkdir(parents=True, exist_ok=True)
    with open(out / "scores.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "score", "max_score", *questions, "problem", "note", "file"])
        for r in results:
            by_question = [sum(c.points for c in r.checks if c.question == q and c.passed) for q in questions]
            writer.writerow(
                [
                    r.student,
                    f"{r.score:g}",
                    f"{r.max_score:g}",
                    *(f"{s:g}" for s in by_question),
                    r.problem,
                    "; ".join(r.notes),
                    r.submission.relative_to(folder).as_posix() if r.submission.exists() else "",
                ]
            )
            (out / "feedback" / f"{_file_name(r.student)}.txt").write_text(feedback(r), encoding="utf-8")
    return results


def _file_name(student: str) -> str:
    # a student's name as a file name: what a file system refuses becomes "_"
    return re.sub(r'[\\/:*?"<>|\x00-\x1f]', "_", student).strip(". ") or "_"


def summary(results: list[Result], out: Path) -> str:
    """One line per problem and a total, for the terminal after :func:`grade_all`.

    Args:
        results: what :func:`grade_all` returned.
        out: where it wrote.

    Returns:
        The text.
    """
    lines = [f"{r.student}: {r.problem}" for r in results if r.problem]
    graded = [r for r in results if not r.problem]
    mean = sum(r.score for r in graded) / len(graded) if graded else 0.0
    lines.append(
        f"{len(graded)} of {len(results)} graded, mean {mean:.2f}; {out / 'scores.csv'}, {out / 'feedback'}/"
    )
    return "\n".join(lines)
