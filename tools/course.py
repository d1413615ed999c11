"""The course kit for a lecturer: assignments (Otter Grader), labs, grading, the private bundle.

The sources are in ``course/``: the assignments' master notebooks (Otter's format: each question a
``# BEGIN QUESTION`` block with its solution and its public and hidden tests), the labs (each with
a final "Reference" part: the answer key), the plan of the term (``course/plan.json``), the exam's
questions (``tools/exam.py``), the mini-project brief and the rubrics.

``python -m tools.course`` (what ``make course`` runs) writes what students may see:

- ``student/assignments/NAME/``: each assignment's student notebook and public tests;
- ``student/labs/NAME.ipynb``: each lab without its reference part;
- ``course/schedule.csv`` and the plan's tables in ``intro.md``, from ``course/plan.json``;
- ``course/exam/specimen.md``: the exam's format, from a public seed, without its key;
- ``_build/course/NAME-autograder.zip``: the autograders of the public edition.

``python -m tools.course bundle --seed SEED OUT`` writes the private instructor bundle of one
term outside the repository (see :mod:`tools.bundle`); ``grade`` and ``grade-all`` grade
submissions (see :mod:`tools.grading`). Links and install cells point at the repository and
release named in ``_config.yml`` (:mod:`tools.repository`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import psutil

from tools import repository

ROOT = Path(__file__).resolve().parents[1]
MASTERS = ROOT / "course" / "assignments"
LABS = ROOT / "course" / "labs"
BUILD = ROOT / "_build" / "course"
STUDENT = ROOT / "student" / "assignments"
STUDENT_LABS = ROOT / "student" / "labs"

# What each module an assignment imports is installed as, on Gradescope (the autograder zip's
# environment) and on Colab; entmax_lib comes from the book's repository at the release.
PACKAGES = {"numpy": "numpy", "scipy": "scipy", "jax": "jax", "entmax_lib": "entmax_lib @ {pip}"}
_RNG = re.compile(r"default_rng\((\d+)\)")


def _otter(*args: str, cwd: Path | None = None, timeout: float | None = None) -> subprocess.CompletedProcess:
    # Otter's command line, from the environment that runs this script, in its own process group
    # so that a timeout ends it with the notebook's kernel.
    code = "import sys; from otter.cli import cli; sys.exit(cli())"
    with subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        text=True,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            # the notebook's kernel runs in a session of its own: end it by its id, then Otter's group
            for child in psutil.Process(process.pid).children(recursive=True):
                child.kill()
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def masters() -> list[Path]:
    """The master notebooks of the assignments, sorted by name.

    Returns:
        The paths of ``course/assignments/*.ipynb``.
    """
    return sorted(MASTERS.glob("*.ipynb"))


def labs() -> list[Path]:
    """The labs (with their reference parts), sorted by name.

    Returns:
        The paths of ``course/labs/*.ipynb``.
    """
    return sorted(LABS.glob("*.ipynb"))


def term_seed(seed: int, *keys: object) -> int:
    """A seed for one random draw of one term, from the term's seed and what the draw is for.

    Args:
        seed: the term's seed, chosen by the instructor and kept private.
        keys: what the draw is for (an assignment's name, the seed the public edition uses).

    Returns:
        An integer in [0, 2**128) (NumPy's ``default_rng`` takes it whole): the same for the same
        arguments, unrelated across them, and as hard to guess as the term's seed up to 128 bits.

    Example:
        >>> term_seed(2027, "ch1_thresholds", 1) == term_seed(2027, "ch1_thresholds", 1)
        True
        >>> term_seed(2027, "ch1_thresholds", 1) != term_seed(2028, "ch1_thresholds", 1)
        True
    """
    text = ":".join(str(k) for k in (seed, *keys))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:16], "big")


def _requirements(nb, repo: repository.Repository) -> list[str]:
    # The packages that the notebook's code imports, as pip names (Otter adds itself).
    imported = set()
    for cell in nb.cells:
        if cell.cell_type == "code":
            imported |= {
                m.split(".")[0] for m in re.findall(r"^\s*(?:from|import)\s+([\w.]+)", cell.source, re.M)
            }
    return sorted(PACKAGES[m].format(pip=repo.pip_url()) for m in imported & set(PACKAGES))


def prepare(master: Path, out: Path, repo: repository.Repository, seed: int | None = None) -> Path:
    """A master notebook made ready for Otter Assign: links filled in, requirements listed,
    and, for a term, the hidden tests' random inputs drawn afresh.

    Args:
        master: the master notebook in ``course/assignments``.
        out: the folder to write the prepared master into.
        repo: the repository and release that the links and install cells name.
        seed: the term's seed; None keeps the public edition's hidden inputs.

    Returns:
        The prepared master, ``out/NAME.ipynb``, and beside it the ``requirements.txt`` that
        its config names.
    """
    nb = nbformat.read(master, as_version=4)
    for cell in nb.cells:
        cell.source = repo.fill(cell.source)
        if seed is not None and cell.cell_type == "code" and re.search(r"hidden:\s*true", cell.source, re.I):
            cell.source = _RNG.sub(
                lambda m: f"default_rng({term_seed(seed, master.stem, m.group(1))})", cell.source
            )
    config = nb.cells[0]
    assert config.source.startswith("# ASSIGNMENT CONFIG"), f"{master.name}: the first cell is Otter's config"
    # a requirements file (not a list in the config), which every Otter release since 3 reads
    config.source += "\nrequirements: requirements.txt"
    out.mkdir(parents=True, exist_ok=True)
    (out / "requirements.txt").write_text(
        "".join(f"{r}\n" for r in _requirements(nb, repo)), encoding="utf-8"
    )
    nbformat.write(nb, out / master.name)
    return out / master.name


def _normalise(path: Path) -> None:
    # Otter writes random cell ids: number them, so that a rebuild gives the same bytes.
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:03d}"
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


def assign(
    master: Path, out: Path, repo: repository.Repository | None = None, seed: int | None = None
) -> Path:
    """Run Otter Assign on one master notebook.

    Args:
        master: the master notebook (solutions and all tests).
        out: the folder to write into (emptied first): ``out/autograder`` and ``out/student``.
        repo: the repository and release (default: ``_config.yml``'s).
        seed: the term's seed for the hidden tests' inputs (None: the public edition's).

    Returns:
        The autograder zip, copied to ``out/../NAME-autograder.zip`` (a name without Otter's
        time stamp).

    Raises:
        RuntimeError: Otter Assign failed (its output is in the message).
    """
    shutil.rmtree(out, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        prepared = prepare(master, Path(tmp), repo or repository.load(), seed)
        result = _otter("assign", str(prepared), str(out.resolve()), cwd=Path(tmp))
    if result.returncode != 0:
        raise RuntimeError(f"otter assign {master.name} failed:\n{result.stdout}\n{result.stderr}")
    (zip_path,) = (out / "autograder").glob("*.zip")
    target = out.parent / f"{master.stem}-autograder.zip"
    shutil.copyfile(zip_path, target)
    for notebook in out.rglob("*.ipynb"):
        _normalise(notebook)
    return target


#: What each lab's term draws afresh, so that a term's lab answers are not the public ones:
#: (name of the lab's setting, how many seeds, drawn from how many).
LAB_DRAWS = {
    "ch4_lab": [("SEEDS", 3, 10_000)],  # three new seeds of the toy demo
    "ch5_lab": [("SEED", 1, 10_000), ("SEEDS", 6, 10)],  # a model seed; 6 of the 10 recorded seeds
}


#: The first cell of a term's lab, in place of the public lab's Colab badge.
TERM_LAB_NOTE = (
    "*This is this term's lab, with this term's seeds: work in this file, not in the public lab of the "
    "same name. Open it in Jupyter, or in Colab with File → Upload notebook.*"
)


def lab_parameters(lab_name: str, seed: int | None) -> dict[str, str]:
    """A lab's settings for one term, as Python literals, drawn from the term's seed.

    Args:
        lab_name: the lab's file name without ``.ipynb``.
        seed: the term's seed, or None for the public edition (its settings are the lab's own).

    Returns:
        {setting: literal}; a draw of several seeds is a sorted tuple.

    Example:
        >>> lab_parameters("ch4_lab", None)
        {}
        >>> term = lab_parameters("ch4_lab", 2027)
        >>> term == lab_parameters("ch4_lab", 2027) != lab_parameters("ch4_lab", 2028)
        True
    """
    if seed is None:
        return {}
    import numpy as np

    rng = np.random.default_rng(term_seed(seed, lab_name))
    parameters = {}
    for name, count, among in LAB_DRAWS.get(lab_name, []):
        drawn = sorted(int(x) for x in rng.choice(among, size=count, replace=False))
        parameters[name] = str(drawn[0]) if count == 1 else f"({', '.join(map(str, drawn))})"
    return parameters


def _set_parameters(nb: nbformat.NotebookNode, parameters: dict[str, str], name: str) -> None:
    """Replace the value of each ``NAME = value  # comment`` line of the code (once each)."""
    for setting, literal in parameters.items():
        pattern = re.compile(rf"^{setting} = [^#\n]*?(\s*#.*)?$", flags=re.M)
        found = 0
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.source, n = pattern.subn(
                    lambda m: f"{setting} = {literal}{m.group(1) or ''}", cell.source
                )
                found += n
        if found != 1:
            raise ValueError(f"{name}: the setting {setting} is set on {found} lines, not 1")


def split_lab(
    lab: Path, repo: repository.Repository, parameters: dict[str, str] | None = None
) -> tuple[nbformat.NotebookNode, nbformat.NotebookNode]:
    """A lab as students get it (up to its "## Reference" heading) and its answer key (all of it).

    Args:
        lab: the lab in ``course/labs``.
        repo: the repository and release that its badge and install cell name.
        parameters: the term's settings (:func:`lab_parameters`), written into both; None or {}:
            the lab's own.

    Returns:
        ``(student notebook, answer key)``, links filled in.

    Raises:
        ValueError: the lab has no cell that starts with ``## Reference``, or a setting of
            ``parameters`` is not set on exactly one line.
    """
    key = nbformat.read(lab, as_version=4)
    for cell in key.cells:
        cell.source = repo.fill(cell.source).replace("{{path}}", f"student/labs/{lab.name}")
    if parameters:  # a term's lab is a file handed out, not the public notebook its badge would open
        first = key.cells[0]
        first.source, n = re.subn(
            r"^\[!\[Open in Colab\].*$", TERM_LAB_NOTE, first.source, count=1, flags=re.M
        )
        if n != 1:
            raise ValueError(f"{lab.name}: its first cell has no Colab badge line to replace")
    _set_parameters(key, parameters or {}, lab.name)
    starts = [
        i
        for i, c in enumerate(key.cells)
        if c.cell_type == "markdown" and c.source.startswith("## Reference")
    ]
    if not starts:
        raise ValueError(f"{lab.name}: no '## Reference' part to keep out of the student's notebook")
    student = nbformat.from_dict(json.loads(json.dumps(key)))
    student.cells = student.cells[: starts[0]]
    return student, key


def write_notebook(nb, path: Path) -> None:
    """Write a notebook with numbered cell ids (a rebuild gives the same bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    nb.nbformat, nb.nbformat_minor = 4, max(nb.get("nbformat_minor", 5), 5)  # cell ids need 4.5
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:03d}"
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


def build(
    out: Path = BUILD,
    student: Path | None = STUDENT,
    student_labs: Path | None = STUDENT_LABS,
    repo: repository.Repository | None = None,
    seed: int | None = None,
) -> dict[str, Path]:
    """Build every assignment (autograder zips, student notebooks) and the students' labs.

    Args:
        out: where Otter's output and the autograder zips go.
        student: where to copy each student notebook and its public tests (None: nowhere).
        student_labs: where to write the labs without their reference parts (None: nowhere).
        repo: the repository and release (default: ``_config.yml``'s).
        seed: the term's seed for the hidden tests' inputs (None: the public edition's).

    Returns:
        For every assignment name, its autograder zip.
    """
    repo = repo or repository.load()
    out.mkdir(parents=True, exist_ok=True)
    zips = {}
    if student is not None:
        shutil.rmtree(student, ignore_errors=True)
    for master in masters():
        zips[master.stem] = assign(master, out / master.stem, repo, seed)
        if student is not None:
            shutil.copytree(out / master.stem / "student", student / master.stem)
    if student_labs is not None:
        shutil.rmtree(student_labs, ignore_errors=True)
        for lab in labs():
            write_notebook(split_lab(lab, repo)[0], student_labs / lab.name)
    return zips


def _seed(text: str) -> int:
    # --seed: a non-negative integer (argparse names the argument in its one-line error)
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative; give an integer >= 0")
    return value


class _Parser(argparse.ArgumentParser):
    # A usage mistake is one line and exit status 2, not a page of usage.
    def error(self, message):
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


UNSANDBOXED = (
    "The submission's code runs as you, unsandboxed: a cell can read the hidden tests and write "
    "anywhere you can. For submissions you do not trust, grade as a throwaway user in a throwaway "
    "folder (README, 'Teaching with the book': sudo -u grader ...), or use Otter's container "
    "grading: otter grade -a AUTOGRADER.zip -o OUT --timeout 300 --no-network FOLDER (needs Docker). "
    "Neither stops a notebook from tampering with the checks it is graded by: read any surprising "
    "full score."
)


def parser() -> argparse.ArgumentParser:
    """The command line of ``python -m tools.course`` (see the module's docstring).

    Returns:
        The parser, with one sub-command per task.
    """
    top = _Parser(prog="python -m tools.course", description="The course kit: build, grade, bundle.")
    sub = top.add_subparsers(dest="command", parser_class=_Parser)
    sub.add_parser("build", help="what students may see, and the public autograders (the default)")
    one = sub.add_parser(
        "grade", help="grade one submission", description="Grade one notebook. " + UNSANDBOXED
    )
    one.add_argument("autograder", type=Path, metavar="AUTOGRADER", help="NAME-autograder.zip")
    one.add_argument("submission", type=Path, metavar="SUBMISSION", help="the student's notebook")
    one.add_argument("--timeout", type=float, default=300, help="seconds before the run is stopped (300)")
    many = sub.add_parser(
        "grade-all",
        help="grade every notebook in a folder",
        description="Grade every submission in FOLDER (STUDENT.ipynb, or a folder per student as a "
        "learning platform exports it): OUT/scores.csv and OUT/feedback/STUDENT.txt. " + UNSANDBOXED,
    )
    many.add_argument("autograder", type=Path, metavar="AUTOGRADER", help="NAME-autograder.zip")
    many.add_argument(
        "folder",
        type=Path,
        metavar="FOLDER",
        help="the submissions: FOLDER/STUDENT.ipynb or FOLDER/STUDENT/*.ipynb",
    )
    many.add_argument(
        "--roster",
        type=Path,
        metavar="ROSTER.csv",
        help="the class list (a 'student' column, or the first): every student on it gets a row, "
        "0 with 'no submission' where nothing was handed in",
    )
    many.add_argument("--out", type=Path, help="where scores.csv and feedback/ go (FOLDER/graded)")
    many.add_argument("--timeout", type=float, default=300, help="seconds per notebook (300)")
    many.add_argument("--jobs", type=int, default=2, help="notebooks graded at once (2)")
    bundle = sub.add_parser("bundle", help="the private instructor bundle of one term")
    bundle.add_argument("out", type=Path, metavar="OUT", help="a folder outside the repository")
    bundle.add_argument(
        "--seed",
        type=_seed,
        help="the term's secret seed, an integer >= 0 (default: a random 128-bit one, printed: keep it)",
    )
    bundle.add_argument("--start", help="the Monday of week 1, YYYY-MM-DD (dates the schedule)")
    bundle.add_argument(
        "--timezone",
        help="the IANA time zone of the plan's times, e.g. Europe/Berlin (the plan's: Europe/London)",
    )
    bundle.add_argument(
        "--no-run-keys",
        dest="run_keys",
        action="store_false",
        help="write the labs' answer keys without running them (running them trains: a few minutes)",
    )
    return top


def main(argv: list[str] | None = None) -> int:
    """Run the command line; bad input gets one line on stderr and exit status 2.

    Args:
        argv: the arguments (default ``sys.argv[1:]``).

    Returns:
        The exit status.
    """
    from tools import bundle, exam, grading, plan

    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        if args.command == "grade":
            grading.read_autograder(args.autograder)
            grading.read_submission(args.submission)  # one line, not a report, for a file that is not one
            result = grading.grade(args.autograder, args.submission, timeout=args.timeout)
            print(grading.feedback(result), end="")
        elif args.command == "grade-all":
            out, start = args.out or args.folder / "graded", time.perf_counter()
            results = grading.grade_all(
                args.autograder, args.folder, out, timeout=args.timeout, jobs=args.jobs, roster=args.roster
            )
            print(grading.summary(results, out), f"in {time.perf_counter() - start:.0f} s")
        elif args.command == "bundle":
            seed, warning = bundle.choose_seed(args.seed)
            print(warning, file=sys.stderr)
            print(
                bundle.make(
                    args.out, seed=seed, start=args.start, timezone=args.timezone, run_keys=args.run_keys
                )
            )
        else:
            for name, zip_path in build().items():
                print(f"{name}: {zip_path.relative_to(ROOT)}, student notebook in student/assignments/{name}")
            print(f"labs without their reference parts: {STUDENT_LABS.relative_to(ROOT)}")
            print(plan.write_public())
            exam.SPECIMEN.write_text(exam.specimen(), encoding="utf-8")
            print(f"the exam's specimen paper: {exam.SPECIMEN.relative_to(ROOT)}")
    except (grading.GradingError, bundle.BundleError, plan.PlanError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
