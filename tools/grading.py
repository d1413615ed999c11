"""Grading submissions with an assignment's autograder zip, locally (Otter Run, no Docker).

:func:`grade` grades one notebook, :func:`grade_all` a folder of them: a CSV of scores and one
feedback file per student that says which checks failed and why (the error's kind and message,
never the hidden test's code). A file that is not a notebook, a function that was never defined
and a notebook that runs past the timeout each get a plain sentence instead of a traceback, and
the sentence goes into ``scores.csv``'s ``problem`` column. Submissions may be named as a learning
platform exports them (Moodle's ``NAME_ID_assignsubmission_file_`` folders, Canvas's
``lastfirst_USERID_SUBMISSIONID_FILE`` files): :func:`platform_owner` reads the student's name.

The submissions' code runs as the user who grades, unsandboxed (see ``tools.course.UNSANDBOXED``).
"""

from __future__ import annotations

import ast
import csv
import json
import re
import subprocess
import tempfile
import unicodedata
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
    missing: list[str] = field(default_factory=list)  # the questions' functions never defined

    def __post_init__(self):
        self.student = self.student or self.submission.stem

    @property
    def graded(self) -> bool:
        """Whether the notebook ran and its checks were read; a graded submission can still have
        a problem (a function never defined), one that was not graded always has one."""
        return bool(self.checks)


def read_autograder(autograder: Path) -> dict[str, list[Check]]:
    """The questions and test cases of an Otter autograder zip, read without running them.

    Args:
        autograder: the zip that ``make course`` (or the bundle) wrote.

    Returns:
        For each question (the function the student writes), its test cases in order; the
        questions in the assignment's order (:func:`question_order`).

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
    assignment = autograder.name.removesuffix("-autograder.zip")
    return {q: questions[q] for q in question_order(assignment, list(questions))}


def question_order(assignment: str, names: list[str], masters: Path = course.MASTERS) -> list[str]:
    """``names`` (an autograder's questions) in the order its master notebook asks them.

    The zip stores its tests in no particular order; the master
    (``course/assignments/ASSIGNMENT.ipynb``) is the order the students see. Names the master
    does not ask (an autograder from another commit) follow, sorted.

    Example:
        >>> question_order("ch2_gradients", ["entmax_alpha_gradient", "entmax_jacobian"])
        ['entmax_jacobian', 'entmax_alpha_gradient']
    """
    asked: list[str] = []
    master = masters / f"{assignment}.ipynb"
    if master.is_file():
        try:
            cells = json.loads(master.read_text(encoding="utf-8"))["cells"]
        except (ValueError, KeyError, TypeError):
            cells = []
        for cell in cells:
            source = "".join(cell.get("source", ""))
            if cell.get("cell_type") == "raw" and source.strip().startswith("# BEGIN QUESTION"):
                match = re.search(r"^name:\s*(\S+)", source, flags=re.M)
                if match and match.group(1) in names and match.group(1) not in asked:
                    asked.append(match.group(1))
    return asked + sorted(set(names) - set(asked))


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


def _code_cells(nb: dict):
    """(number, source) of each code cell, counted from 1, without IPython's % and ! lines."""
    cells = [c for c in nb["cells"] if c.get("cell_type") == "code"]
    for number, cell in enumerate(cells, start=1):
        source = _source(cell)
        yield (
            number,
            "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))),
        )


def defined_names(nb: dict) -> set[str]:
    """The names that the notebook's code cells define at top level (def, class, =, import).

    A cell that is not valid Python defines nothing: it stops with a SyntaxError when it runs
    (:func:`syntax_errors` names it).

    Args:
        nb: the notebook's JSON.

    Returns:
        The names defined by the cells that parse.
    """
    return set().union(*_names_by_cell(nb).values())


def _names_by_cell(nb: dict) -> dict[int, set[str]]:
    """Code cell number -> the names it defines at top level (nothing for a cell that does not parse)."""
    by_cell = {}
    for number, source in _code_cells(nb):
        names = by_cell.setdefault(number, set())
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return by_cell


def defined_in_failed_cell(failed: set[int], nb: dict, questions) -> list[str]:
    """One sentence per graded function whose defining cell raised an error in the grader's run
    (the function may then be undefined, or an older version, when the checks run).

    Args:
        failed: the numbers of the code cells that raised (see :func:`errors_in_fresh_run`).
        nb: the submitted notebook's JSON.
        questions: the graded functions' names.

    >>> cell = {"cell_type": "code", "source": "import nope\\ndef f(x):\\n    return x"}
    >>> defined_in_failed_cell({1}, {"cells": [cell]}, ["f", "g"])
    ["`f` is defined in code cell 1, which stopped with an error in the grader's run (see the note)"]
    """
    by_cell = _names_by_cell(nb)
    return [
        f"`{q}` is defined in code cell {n}, which stopped with an error in the grader's run (see the note)"
        for q in questions
        for n in [max((n for n, names in by_cell.items() if q in names), default=None)]
        if n in failed
    ]


def _first_line(source: str, limit: int = 40) -> str:
    """A cell's first non-empty line, shortened: how a student finds the cell."""
    line = next((line.strip() for line in source.splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def syntax_errors(nb: dict) -> list[str]:
    """One plain sentence per code cell that is not valid Python (it defines nothing when run).

    >>> (error,) = syntax_errors({"cells": [{"cell_type": "code", "source": "x = 1"},
    ...                                     {"cell_type": "code", "source": "def f(:"}]})
    >>> error.startswith("the code cell that starts `def f(:` (code cell 2) is not valid Python")
    True
    """
    errors = []
    for number, source in _code_cells(nb):
        try:
            ast.parse(source)
        except SyntaxError as error:
            where = f"{error.msg}, line {error.lineno} of the cell"
            errors.append(
                f"the code cell that starts `{_first_line(source)}` (code cell {number}) is not valid Python "
                f"({where}): nothing in it ran, so nothing it defines exists"
            )
    return errors


def errors_as_handed_in(nb: dict) -> list[str]:
    """One sentence per code cell whose saved output, as the student handed it in, is an error.

    The grade comes from a fresh run; this only tells the grader that the student's own run
    did not go through from top to bottom.

    >>> errors_as_handed_in({"cells": [{"cell_type": "code", "source": "import nope", "outputs": [
    ...     {"output_type": "error", "ename": "ModuleNotFoundError", "evalue": "No module named 'nope'"}]}]})
    ["as handed in, code cell 1 ended in ModuleNotFoundError: No module named 'nope'"]
    """
    cells = [c for c in nb["cells"] if c.get("cell_type") == "code"]
    return [
        f"as handed in, code cell {number} ended in {out.get('ename', 'an error')}: "
        + shorten(out.get("evalue", ""))
        for number, cell in enumerate(cells, start=1)
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]


#: The most characters of an error message that a feedback line quotes.
MESSAGE_LIMIT = 300


def _quotes(text: str) -> list[int]:
    # where text has a quotation mark ', not an apostrophe inside a word (can't, O'Brien)
    return [
        i
        for i, char in enumerate(text)
        if char == "'" and not (text[i - 1 : i].isalnum() and text[i + 1 : i + 2].isalnum())
    ]


def restore_quotes(message: str) -> str:
    """An exception's message with the quotation marks that Otter's report strips put back.

    Otter writes ``str(exception).strip("'")``, which takes the closing quote off a message
    that ends with a quoted name, and the opening one off a message that starts with one.

    Args:
        message: the message as Otter's report gives it (after ``Kind: ``).

    Returns:
        The message with balanced quotes.

    Example:
        >>> restore_quotes("unsupported operand type(s) for -: 'NoneType' and 'float")
        "unsupported operand type(s) for -: 'NoneType' and 'float'"
        >>> restore_quotes("NoneType' object has no attribute 'sum")
        "'NoneType' object has no attribute 'sum'"
        >>> restore_quotes("can't multiply sequence by non-int of type 'float")
        "can't multiply sequence by non-int of type 'float'"
        >>> restore_quotes("name 'f' is not defined")
        "name 'f' is not defined"
    """
    quotes = _quotes(message)
    if quotes:
        first = quotes[0]
        # the first quotation mark closes a name ("NoneType' object"): its opening one was stripped
        if first > 0 and not message[first - 1].isspace() and message[first - 1] not in "([{":
            message = "'" + message
        if len(_quotes(message)) % 2:
            message += "'"
    return message


def shorten(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` cut to at most ``limit`` characters and "…": at a word boundary, and before a
    quotation that the cut would leave open, so that every quote it shows closes.

    Args:
        text: a message.
        limit: the most characters kept (the "…" comes on top).

    Returns:
        ``text`` itself when it is short enough, otherwise its cut start and "…".

    Example:
        >>> shorten("the value 'a very long name' is wrong", 20)
        'the value…'
        >>> shorten("short", 20)
        'short'
    """
    if len(text) <= limit:
        return text
    cut = text[:limit]
    if not text[limit].isspace() and " " in cut:  # not inside a word
        cut = cut[: cut.rindex(" ")]
    quotes = _quotes(cut)
    if len(quotes) % 2:  # a quotation left open: end before it
        cut = cut[: quotes[-1]]
    return cut.rstrip(" ,;:-(") + "…"


def _reason(block: str) -> str:
    # The last line of Otter's report of a failed case is the error: "Kind: message". The lines
    # above it quote the test's code, which stays private.
    last = [line.strip() for line in block.strip().splitlines() if line.strip()][-1]
    match = re.fullmatch(r"([A-Za-z_][\w.]*)(?::\s*(.*))?", last, flags=re.S)
    if not match:
        return shorten(last)
    kind, message = match.group(1), restore_quotes((match.group(2) or "").strip())
    if kind == "AssertionError":
        return "wrong result (a check on its values failed)" + (f": {shorten(message)}" if message else "")
    return f"{kind}: {shorten(message)}" if message else kind


def _failed_cases(output: str) -> dict[tuple[str, int], str]:
    # "NAME - i result:" blocks; a case that passed is not listed once any case failed.
    blocks = re.split(r"^\s*(\w+) - (\d+) result:\s*$", output, flags=re.M)
    failed = {}
    for question, index, block in zip(blocks[1::3], blocks[2::3], blocks[3::3], strict=True):
        if "Test case failed" in block:
            failed[(question, int(index))] = _reason(block.split("\n\n")[0] if "\n\n" in block else block)
    return failed


_STUB_HINT = (
    " (the function returned None: is it still the `...` stub, or missing a return? Or did a cell"
    " above it stop with an error, so that it was never defined?)"
)


def _private(reason: str) -> str:
    """What a student may read of a failed hidden check: the kind of failure, never its message,
    which can quote the hidden test's inputs (an exception raised with them, an assert's text)."""
    if not reason:
        return reason
    if reason.startswith("wrong result"):
        return "wrong result (a check on its values failed)" + _hint(reason)
    kind = reason.partition(":")[0].strip()
    return f"{kind} raised" + _hint(reason)


def _hint(reason: str) -> str:
    # A function left as the stub (`...`) returns None; say so instead of only Python's words,
    # for a public and a hidden check alike.
    return _STUB_HINT if "NoneType" in reason else ""


def _explain(reason: str) -> str:
    return reason + _hint(reason)


def never_defined(question: str) -> str:
    """The plain sentence for a question whose function the notebook never defines."""
    return f"`{question}` is never defined in the notebook (renamed, or its cell deleted?)"


def _checks(questions: dict[str, list[Check]], tests: list[dict], defined: set[str]) -> list[Check]:
    failed = {}
    for entry in tests:
        if "max_score" in entry:
            failed.update(_failed_cases(entry.get("output", "")))
    checks = []
    for question, cases in questions.items():
        missing = question not in defined
        for i, case in enumerate(cases, start=1):
            raw = failed.get((question, i), "")
            reason = _private(raw) if case.hidden else _explain(raw)
            if missing:
                reason = never_defined(question)
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
                "run",
                "-p",
                "-a",
                str(autograder.resolve()),
                "-o",
                tmp,
                str(submission.resolve()),
                cwd=Path(tmp),
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            result.problem = f"stopped after {timeout:g} s: a cell runs too long (a sleep, an endless loop?)"
            return result
        path = Path(tmp) / "results.json"
        if run.returncode != 0 or not path.exists():
            error = (run.stderr.strip().splitlines() or ["no message"])[-1]
            result.problem = f"the notebook could not be run: {shorten(error)}"
            return result
        tests = json.loads(path.read_text())["tests"]
        executed = _executed_notebook(Path(tmp))
    defined = defined_names(nb)
    result.checks = _checks(questions, tests, defined)
    # A cell that does not parse, and a function never defined: plain sentences, in the problem column too
    result.missing = [q for q in questions if q not in defined]
    fresh = errors_in_fresh_run(executed, nb) if executed else {}
    broken = defined_in_failed_cell(set(fresh), nb, [q for q in questions if q in defined])
    result.problem = "; ".join([*syntax_errors(nb), *(never_defined(q) for q in result.missing), *broken])
    result.notes.extend(errors_as_handed_in(nb))
    result.notes.extend(fresh.values())
    result.score = sum(t["score"] for t in tests if "max_score" in t)
    for entry in tests:  # Otter's score is the grade; say so where its report could not be read
        passed = sum(c.points for c in result.checks if c.question == entry["name"] and c.passed)
        if "max_score" in entry and passed != entry["score"]:
            result.notes.append(
                f"{entry['name']}: Otter scored {entry['score']:g}; its per-check report did not match"
            )
    return result


def syntax_errors_of(result: Result) -> list[str]:
    """The sentences of ``result.problem`` about cells that do not parse (see :func:`syntax_errors`)."""
    return [part for part in result.problem.split("; ") if " is not valid Python " in part]


def errors_in_fresh_run(executed: dict, nb: dict) -> dict[int, str]:
    """One sentence per code cell of the student's that raised an error in the grader's own run.

    Otter runs the notebook from top to bottom and goes on after an error, so a cell that fails
    costs only the checks that needed it; this names the cell. ``executed`` is that run's notebook,
    with the cells Otter adds; a cell is the student's when its source is one of ``nb``'s code
    cells (its number is that cell's). Errors in Otter's own cells, and in the notebook's grader
    cells (the setup cell and the ``grader.check`` calls, which fail outside Jupyter's own run by
    design), are left to the checks.

    Returns:
        code cell number -> the sentence (the last error of a cell, if it printed several).

    >>> cell = {"cell_type": "code", "source": "x = 1 / 0"}
    >>> ran = {**cell, "outputs": [{"output_type": "error", "ename": "ZeroDivisionError",
    ...                            "evalue": "division by zero"}]}
    >>> errors_in_fresh_run({"cells": [ran]}, {"cells": [cell]})
    {1: "in the grader's run, code cell 1 (`x = 1 / 0`) ended in ZeroDivisionError: division by zero"}
    """
    numbers = {}
    for number, cell in enumerate((c for c in nb["cells"] if c.get("cell_type") == "code"), start=1):
        if not _GRADER_CELL.search(_source(cell)):
            numbers.setdefault(_source(cell), number)
    found = {}
    for cell in executed["cells"]:
        number = numbers.get(_source(cell)) if cell.get("cell_type") == "code" else None
        for out in cell.get("outputs", []) if number else []:
            if out.get("output_type") == "error":
                found[number] = (
                    f"in the grader's run, code cell {number} (`{_first_line(_source(cell))}`) ended in "
                    f"{out.get('ename', 'an error')}: {shorten(out.get('evalue', ''))}"
                )
    return found


#: A cell of the notebook's grading plumbing: it uses Otter's ``grader`` or installs Otter.
_GRADER_CELL = re.compile(r"\bgrader\.|otter")


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return source if isinstance(source, str) else "".join(source)


def _executed_notebook(folder: Path) -> dict | None:
    """The notebook of Otter's run, from the ``results.pkl`` that ``otter run -p`` leaves."""
    path = folder / "results.pkl"
    if not path.exists():
        return None
    import dill  # Otter's own pickler, installed with it

    notebook = getattr(dill.loads(path.read_bytes()), "notebook", None)
    return json.loads(json.dumps(notebook)) if notebook is not None else None


def feedback(result: Result) -> str:
    """The feedback for a student: the score, then every check with what went wrong.

    Args:
        result: a graded submission.

    Returns:
        Plain text, one line per check; hidden checks are named, their code is not shown.
    """
    lines = [f"{result.submission.name}: {result.score:g} / {result.max_score:g}"]
    if not result.graded:
        return "\n".join([*lines, f"Not graded: {result.problem or 'no checks were run'}", ""])
    lines += [f"Problem: {line}" for line in syntax_errors_of(result)]
    said = set()
    for check in result.checks:
        if check.question in result.missing:  # one line for the function, not one per check
            if check.question not in said:
                said.add(check.question)
                points = sum(c.points for c in result.checks if c.question == check.question)
                lines.append(f"- {check.question} ({points:g} pt): FAILED: {never_defined(check.question)}")
            continue
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
    them; otherwise the first column of every line. Blank lines are skipped, and so is the
    "Points Possible" line of a Canvas gradebook export.

    Args:
        roster: the CSV file, e.g. exported from the learning platform.

    Returns:
        The students' names, as their submissions are named (file ``NAME.ipynb``, folder ``NAME/``,
        or a learning platform's names for them: :func:`match_roster`).

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
    # Canvas's gradebook export has a "Points Possible" line under its header: not a student
    rows = [row for row in rows if not (row and row[0].strip().casefold() == "points possible")]
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


#: Moodle's "Download all submissions": a folder ``Full Name_PARTICIPANT_assignsubmission_file_``
#: per student (``..._onlinetext_`` for online text), or, not in folders, that prefix on each file.
_MOODLE = re.compile(r"(?P<name>.+?)_(?P<id>\d+)_assignsubmission_[a-z]+_(?P<rest>.*)", re.S)
#: Canvas's "Download submissions": flat files ``lastfirst[_LATE]_USERID_SUBMISSIONID_FILE``, the
#: name being the student's sortable name ("Lopez, Ana") in lowercase letters and digits only.
_CANVAS = re.compile(r"(?P<name>[^\W_A-Z]+)(?:_LATE|_late)?_(?P<id>\d+)_(?P<sub>\d+)_(?P<rest>.+)", re.S)


def platform_owner(name: str, is_file: bool = True) -> tuple[str, str, str]:
    """Whose a file or folder of a learning platform's export is, read from its name.

    Args:
        name: the name of a file or folder in the submissions folder.
        is_file: whether it is a file (whose own name is the student's without its extension).

    Returns:
        ``(student, id, rest)``: the student's name as the platform wrote it, the platform's id of
        the student ("" if none) and the rest of the name (the file the student uploaded; "" for
        a Moodle folder). A name that follows no platform's pattern is the student's own:
        ``(stem, "", name)`` for a file, ``(name, "", name)`` for a folder.

    Example:
        >>> platform_owner("Ana Lopez_123_assignsubmission_file_")
        ('Ana Lopez', '123', '')
        >>> platform_owner("lopezana_12345_67890_ch1_thresholds.ipynb")
        ('lopezana', '12345', 'ch1_thresholds.ipynb')
        >>> platform_owner("lopezana_LATE_12345_67890_ch1_thresholds-1.ipynb")
        ('lopezana', '12345', 'ch1_thresholds-1.ipynb')
        >>> platform_owner("ann.ipynb")
        ('ann', '', 'ann.ipynb')
    """
    for pattern in (_MOODLE, _CANVAS):
        match = pattern.fullmatch(name)
        if match and match["name"].strip():
            return match["name"].strip(), match["id"], match["rest"]
    return Path(name).stem if is_file else name, "", name


def _plain(text: str) -> str:
    # letters and digits only, casefolded
    return "".join(re.findall(r"[^\W_]+", text.casefold()))


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def name_keys(name: str) -> list[str]:
    """The forms in which a learning platform may write a student's name, most exact first: the
    name casefolded; its letters and digits only; family name first, as Canvas writes it
    ("Ana Lopez" and "Lopez, Ana" both give ``lopezana``); each also without accents.

    Example:
        >>> name_keys("Ana Lopez")
        ['ana lopez', 'analopez', 'lopezana']
        >>> name_keys("Lopez, Ana")[1:]
        ['lopezana', 'analopez']
    """
    keys = [name.strip().casefold()]
    if "," in name:  # "Family, Given"
        family, _, given = name.partition(",")
        orders = [family + " " + given, given + " " + family]
    else:
        words = name.split()
        orders = [name, " ".join(words[-1:] + words[:-1])]
    for text in orders:
        keys += [_plain(text), _plain(_ascii(text))]
    return [k for i, k in enumerate(keys) if k and k not in keys[:i]]


@dataclass
class _Owner:
    # a student's entries in the submissions folder (several for a platform's flat files)
    name: str
    ids: set[str] = field(default_factory=set)
    entries: list[tuple[Path, str]] = field(default_factory=list)  # (entry, the uploaded file's name)


def _files(entry: Path) -> list[Path]:
    if entry.is_file():
        return [entry]
    return [
        p
        for p in entry.rglob("*")
        if p.is_file()
        and not any(_hidden(part) for part in p.relative_to(entry).parents if part.name)
        and not _hidden(p)
    ]


def _choose(owner: _Owner, folder: Path, assignment: str) -> Path | str:
    # the notebook to grade of one student's entries, or why there is none
    files = [(p, rest if p == entry else p.name) for entry, rest in owner.entries for p in _files(entry)]
    notebooks = sorted((f for f in files if f[0].suffix.lower() == ".ipynb"), key=lambda f: f[0].as_posix())
    if len(notebooks) == 1:
        return notebooks[0][0]
    if notebooks:  # the one named after the assignment (Canvas adds -1, -2 to a resubmission)
        named = [p for p, rest in notebooks if re.sub(r"-\d+$", "", Path(rest).stem) == assignment]
        return named[0] if named else max((p for p, _ in notebooks), key=lambda p: p.stat().st_mtime)
    if len(owner.entries) == 1:
        entry = owner.entries[0][0]
        if entry.is_file():
            kind = f"a {entry.suffix} file" if entry.suffix else "a file without an extension"
            return (
                f"not a notebook: {entry.name} is {kind}; hand in the .ipynb "
                "(in Jupyter or Colab: File > Download .ipynb)"
            )
        if not files:
            return "no submission (an empty folder)"
        names = ", ".join(sorted(p.relative_to(entry).as_posix() for p, _ in files)[:5])
        return f"not a notebook: the folder holds no .ipynb, only {names}"
    if not files:
        return "no submission (empty folders)"
    names = ", ".join(sorted(p.relative_to(folder).as_posix() for p, _ in files)[:5])
    return f"not a notebook: no .ipynb among {names}"


def _owners(folder: Path, skip: Path | None) -> dict[str, _Owner]:
    # every student's entries, by the casefolded name the platform wrote
    if not folder.is_dir():
        raise GradingError(f"FOLDER {folder} is not a folder of submissions")
    skip = skip.resolve() if skip else None
    owners: dict[str, _Owner] = {}
    for entry in sorted(folder.iterdir()):
        if (
            _hidden(entry)
            or (skip is not None and entry.resolve() == skip)
            or not (entry.is_file() or entry.is_dir())
        ):
            continue
        name, student_id, rest = platform_owner(entry.name, entry.is_file())
        owner = owners.setdefault(name.casefold(), _Owner(name))
        owner.ids |= {student_id} - {""}
        owner.entries.append((entry, rest))
    return owners


def find_submissions(folder: Path, assignment: str = "", skip: Path | None = None) -> dict[str, Path | str]:
    """Every student's submission in a folder, flat or one folder per student.

    ``FOLDER/NAME.ipynb`` is NAME's notebook; ``FOLDER/NAME/`` (a learning platform's export)
    holds NAME's files: its notebook is the only ``*.ipynb`` in it (at any depth), or, of several,
    the one named after the assignment, else the newest. A platform's names are read as the
    student's (:func:`platform_owner`): Moodle's folders ``NAME_ID_assignsubmission_file_`` and
    Canvas's files ``lastfirst_USERID_SUBMISSIONID_FILE``; one student's several entries are
    taken together. Hidden files (``.DS_Store``, ``__MACOSX``, ``.ipynb_checkpoints``) are ignored.

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
    return {o.name: _choose(o, folder, assignment) for o in _owners(folder, skip).values()}


def match_roster(students: list[str], owners: dict[str, _Owner]) -> dict[str, str]:
    """Which submission is whose: each roster name matched to at most one submission's name, by
    :func:`name_keys` (the exact name first) or by the platform's id of the student.

    Args:
        students: the roster's names (or ids).
        owners: the submissions' owners, by casefolded name.

    Returns:
        For each roster name that matched, the casefolded name of its submission.
    """
    index: dict[str, str] = {}
    for rank in range(6):  # the exact forms of every name first, then the looser ones
        for key, owner in owners.items():
            keys = name_keys(owner.name)
            if rank < len(keys):
                index.setdefault(keys[rank], key)
    for key, owner in owners.items():
        for student_id in owner.ids:
            index.setdefault(student_id, key)
    matched: dict[str, str] = {}
    taken: set[str] = set()
    for student in students:
        for key in [*name_keys(student), student.strip()]:
            owner = index.get(key)
            if owner is not None and owner not in taken:
                matched[student] = owner
                taken.add(owner)
                break
    return matched


def grade_all(
    autograder: Path,
    folder: Path,
    out: Path,
    timeout: float = 300,
    jobs: int = 2,
    roster: Path | None = None,
) -> list[Result]:
    """Grade a class: ``out/scores.csv`` (a row per student) and ``out/feedback/STUDENT.txt``.

    Submissions are found by :func:`find_submissions` (``FOLDER/STUDENT.ipynb``,
    ``FOLDER/STUDENT/*.ipynb``, or a learning platform's names). A file that is not a notebook
    gets a row with the reason and 0 points, and so does, with a roster, every student on it who
    handed in nothing ("no submission"). A submission whose student is not on the roster is
    graded and noted. A roster that matches no submission at all stops grading with an error:
    its names are not those of the submissions (a CSV of zeros would hide that).

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
            positive, the folder holds no submission, or no name on the roster matches one.
    """
    if not timeout > 0:
        raise GradingError(f"--timeout must be a number of seconds > 0, got {timeout!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise GradingError(f"--jobs must be an integer >= 1, got {jobs!r}")
    questions = read_autograder(autograder)
    students = read_roster(roster) if roster is not None else None
    assignment = autograder.name.removesuffix("-autograder.zip")
    owners = _owners(folder, skip=out)
    if not owners:
        raise GradingError(f"FOLDER {folder} holds no submission (no *.ipynb, no folder per student)")
    found = {key: _choose(owner, folder, assignment) for key, owner in owners.items()}
    order: list[tuple[str, str | None, bool]] = []  # (student, whose submission, on the roster)
    if students is not None:
        matched = match_roster(students, owners)
        if not matched:
            raise GradingError(
                f"no name on --roster {roster} matches any of the {len(owners)} submissions in {folder} "
                f"(roster: {_some(students)}; submissions: {_some(o.name for o in owners.values())}): "
                "give the roster's column of the names (or platform ids) the submissions carry, "
                "or grade without --roster"
            )
        order = [(student, matched.get(student), True) for student in students]
        unmatched = sorted(set(owners) - set(matched.values()))
    else:
        unmatched = sorted(owners)
    order += [(owners[key].name, key, students is None) for key in unmatched]
    max_score = sum(c.points for cases in questions.values() for c in cases)

    def one(item: tuple[str, str | None, bool]) -> Result:
        student, key, on_roster = item
        entry = found.get(key) if key is not None else None
        if entry is None:
            result = Result(folder / student, max_score=max_score, problem="no submission", student=student)
        elif isinstance(entry, str):
            result = Result(folder / owners[key].name, max_score=max_score, problem=entry, student=student)
        else:
            result = grade(autograder, entry, timeout)
            result.student = student
        if not on_roster:
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


def _some(items, shown: int = 3) -> str:
    """The first ``shown`` names, then how many more there are.

    Example:
        >>> _some(["a", "b", "c", "d", "e"])
        "'a', 'b', 'c' … and 2 more"
        >>> _some(["a", "b"])
        "'a', 'b'"
    """
    items = list(items)
    text = ", ".join(repr(i) for i in items[:shown])
    return text + (f" … and {len(items) - shown} more" if len(items) > shown else "")


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
    graded = [r for r in results if r.graded]
    mean = sum(r.score for r in graded) / len(graded) if graded else 0.0
    lines.append(
        f"{len(graded)} of {len(results)} graded, mean {mean:.2f}; {out / 'scores.csv'}, {out / 'feedback'}/"
    )
    return "\n".join(lines)
