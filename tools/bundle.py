"""The private instructor bundle of one term: ``python -m tools.course bundle --seed SEED OUT``.

Everything a lecturer grades with, and nothing that belongs in the public repository, in one
folder outside it:

- ``assignments/NAME.ipynb``: the solutions notebooks;
- ``autograders/NAME-autograder.zip``: the graders, with the hidden tests, their random inputs
  drawn afresh from the term's seed, so that last term's outputs do not answer this term's
  tests (local grading, or Gradescope: each zip lists the packages its assignment imports);
- ``student/NAME/``: the student notebooks and public tests (the same as ``student/assignments``);
- ``labs/NAME-key.ipynb``: each lab with its reference part (the answer key);
- ``exam/paper.md`` and ``exam/key.md``: the term's exam and its key;
- ``rubrics/``, ``project/``, ``policies.md``: the lab, written-exercise and project rubrics,
  the mini-project brief and the course's policies;
- ``schedule.csv`` (and ``schedule.ics`` with ``--start``): the plan with the term's dates, the
  meetings and the deadlines (the calendar in UTC from the plan's time zone, or ``--timezone``);
- ``README.md``: how to grade, the seed to keep, and the commit the bundle was made from (and
  whether the working tree had uncommitted changes).
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path

from tools import course, exam, plan, repository

ROOT = Path(__file__).resolve().parents[1]


class BundleError(ValueError):
    """A bundle that must not be written there (a one-line message)."""


#: Seeds below this can be found by trying them all (a laptop tries 2**32 seeds in hours):
#: a student who has last term's public tests and this term's grader's behaviour could then
#: recover the hidden inputs. A term's seed should be drawn, not chosen: :func:`choose_seed`.
GUESSABLE = 2**32
SEED_BITS = 128


def choose_seed(seed: int | None) -> tuple[int, str]:
    """The term's seed, and the warning to print with it.

    Args:
        seed: the seed the instructor gave (``--seed`` / ``make bundle SEED=``), or None.

    Returns:
        ``(seed, warning)``: with None, a fresh random 128-bit seed (:mod:`secrets`) and a warning
        to write it down, since the bundle cannot be made again without it; with a seed below
        :data:`GUESSABLE` (a year, a course number), that seed and a warning that it can be
        guessed; otherwise the seed and a reminder to keep it private.

    Raises:
        BundleError: the seed is negative or not an integer.

    Example:
        >>> seed, warning = choose_seed(None)
        >>> seed.bit_length() <= 128 and str(seed) in warning and "keep" in warning.lower()
        True
        >>> "guess" in choose_seed(2027)[1]
        True
    """
    if seed is None:
        seed = secrets.randbits(SEED_BITS)
        return seed, (
            f"WARNING: no --seed (SEED=) given: drew the random {SEED_BITS}-bit term seed {seed}. Keep it "
            "private and write it down (a password manager): the same seed makes this bundle again, "
            "and no other seed does."
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise BundleError(f"--seed must be an integer >= 0, got {seed!r}")
    if seed < GUESSABLE:
        return seed, (
            f"WARNING: the term seed {seed} is small enough to guess (below 2**32: a year, a course "
            "number, or any of 4 billion seeds tried one by one) and with it the hidden tests' inputs "
            "and the exam; omit --seed to draw a random 128-bit seed."
        )
    return seed, f"term seed {seed}: keep it private (it makes this bundle again)"


def source_commit(root: Path = ROOT) -> tuple[str, list[str]]:
    """The commit of the repository that a bundle is made from, and what differs from it.

    Args:
        root: the repository.

    Returns:
        ``(commit, changed)``: the full hash of ``HEAD`` (or ``"unknown"`` outside a git
        checkout) and the paths that ``git status`` lists as changed or untracked (empty for a
        clean tree). A path that ``.gitignore`` ignores once its patterns' trailing slashes are
        dropped is not uncommitted work: a symlinked ``.venv`` is a link, not a folder, so git's
        ``.venv/`` does not ignore it.
    """

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
        ).stdout

    with tempfile.TemporaryDirectory() as tmp:
        excludes = Path(tmp) / "exclude"
        excludes.write_text("\n".join(folder_patterns(root / ".gitignore")) + "\n", encoding="utf-8")
        try:
            commit = git("rev-parse", "HEAD").strip()
            status = git("-c", f"core.excludesFile={excludes}", "status", "--porcelain")
        except (OSError, subprocess.CalledProcessError):
            return "unknown", []
    changed = [line[3:] for line in status.splitlines() if line.strip()]
    return commit, changed


def folder_patterns(gitignore: Path) -> list[str]:
    """The patterns of ``gitignore`` that name only folders (``.venv/``), without their slash.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / ".gitignore"
        >>> _ = path.write_text("_build/\\n*.pyc\\n# a comment/\\n!keep/\\n/.whl/\\n")
        >>> folder_patterns(path)
        ['_build', '/.whl']
    """
    try:
        lines = gitignore.read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    return [
        line.strip().rstrip("/")
        for line in lines
        if line.strip().endswith("/") and not line.strip().startswith(("#", "!")) and line.strip() != "/"
    ]


def run_notebook(nb, timeout: float = 1800):
    """A copy of ``nb`` run from top to bottom in a fresh Python kernel, with its outputs.

    Args:
        nb: a notebook (a lab's answer key).
        timeout: the most seconds one cell may take.

    Returns:
        The executed copy; ``nb`` is unchanged.

    Raises:
        BundleError: a cell stopped with an error (its name and message).
    """
    import json

    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    with tempfile.TemporaryDirectory() as tmp:
        client = NotebookClient(
            nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": tmp}}
        )
        try:
            client.execute()
        except CellExecutionError as error:
            last = (str(error).strip().splitlines() or ["an error"])[-1]
            raise BundleError(f"a lab's answer key stopped: {last}") from None
    return nb


def provenance(commit: str, changed: list[str]) -> str:
    """The bundle README's sentence on where the bundle comes from.

    Example:
        >>> provenance("abc123", [])
        'Made from commit `abc123` of the book, a clean working tree.'
        >>> "2 changed" in provenance("abc123", ["a.py", "b.ipynb"])
        True
    """
    if commit == "unknown":
        return "Made from a copy of the book that is not a git checkout: its commit is unknown."
    if not changed:
        return f"Made from commit `{commit}` of the book, a clean working tree."
    shown = ", ".join(f"`{path}`" for path in changed[:5]) + (", …" if len(changed) > 5 else "")
    return (
        f"Made from commit `{commit}` of the book, with uncommitted changes (a dirty working tree, "
        f"{len(changed)} changed or untracked {'file' if len(changed) == 1 else 'files'}: {shown}): "
        "that commit alone does not make it again."
    )


README = """# Instructor bundle, term seed {seed}

Keep this folder private: it holds the solutions, the hidden tests and the keys. The seed
{seed} makes it again (`python -m tools.course bundle --seed {seed} OUT`) from the same commit;
a new term takes a new seed, so that the hidden tests draw new inputs.

{provenance}

Students open the public notebooks of {repo} at `{release}` (the `repository` section of the
book's `_config.yml`): the assignments in `student/assignments/`. {release_note}

The labs are this term's own: `student/labs/` here has them with the seeds drawn from the term's
seed, and `labs/NAME-key.ipynb` has their answer keys, {keys}. The public labs (in the
repository's `student/labs/`) use the public seeds, whose answers anyone can compute: hand out
this folder's `student/labs/` (on the learning platform) and grade only those.

Grade a class, offline, from the repository's root:

    python -m tools.course grade-all {bundle}/autograders/NAME-autograder.zip SUBMISSIONS/ --out GRADED/

It writes `GRADED/scores.csv` and one feedback file per student (`GRADED/feedback/`), which names
each failed check and its error (of a hidden check, the kind of error only) without quoting the
hidden test. The notebooks' code runs as you,
unsandboxed: for submissions you do not trust, see the README's "Teaching with the book".
On Gradescope, upload `autograders/NAME-autograder.zip` as the assignment's autograder.

Labs are graded with `rubrics/lab.md` against `labs/NAME-key.ipynb`. The exam's key is
`exam/key.md`; the mini-project is graded with `rubrics/project.md`, the two written exercises
with `rubrics/written.md`. The course's policies (late work, collaboration, AI tools, regrades,
accessibility) are in `policies.md`. {schedule}
"""

NO_START = (
    "note: no schedule.ics was written, and schedule.csv has weeks without dates: give the Monday "
    "of week 1 (--start YYYY-MM-DD, make bundle START=YYYY-MM-DD) for a dated schedule and calendar"
)


def make(
    out: Path,
    seed: int,
    start: str | None = None,
    repo: repository.Repository | None = None,
    timezone: str | None = None,
    run_keys: bool = True,
) -> str:
    """Write the instructor bundle of one term.

    Args:
        out: the bundle's folder: outside the repository, and new or empty.
        seed: the term's secret seed (hidden tests' inputs, the exam's numbers).
        start: the Monday of week 1 (``YYYY-MM-DD``) to date the schedule, or None.
        repo: the repository and release (default: ``_config.yml``'s).
        timezone: the IANA time zone of the plan's times (default: the plan's ``timezone``).
        run_keys: run each lab's answer key with the term's settings (a few minutes: they train),
            so that the key shows its answers; False writes them unexecuted.

    Returns:
        What was written where: a line, then the commit it was made from (and a warning if the
        working tree had uncommitted changes), then, without ``start``, a note that no
        ``schedule.ics`` was written.

    Raises:
        BundleError: ``out`` is inside the repository, or not empty, or ``seed`` is not an
            integer >= 0, or a lab's answer key stops with an error.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise BundleError(f"seed must be an integer >= 0, got {seed!r}")
    out = out.resolve()
    if out == ROOT or ROOT in out.parents:
        raise BundleError(
            f"{out} is inside the repository; the bundle must live outside it (it holds the keys)"
        )
    if out.exists() and any(out.iterdir()):
        raise BundleError(f"{out} is not empty; give a new folder")
    term = plan.load()
    rows = plan.dated(term, start)  # a bad date or zone stops here, before the slow part
    zone = timezone or term.get("timezone", "UTC")
    plan.timezone(zone)
    repo = repo or repository.load()
    with tempfile.TemporaryDirectory() as tmp:
        zips = course.build(Path(tmp), student=out / "student", student_labs=None, repo=repo, seed=seed)
        for name, zip_path in zips.items():
            (out / "autograders").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(zip_path, out / "autograders" / zip_path.name)
            (out / "assignments").mkdir(exist_ok=True)
            shutil.copyfile(
                Path(tmp) / name / "autograder" / f"{name}.ipynb", out / "assignments" / f"{name}.ipynb"
            )
    for lab in course.labs():
        student, key = course.split_lab(lab, repo, course.lab_parameters(lab.stem, seed))
        course.write_notebook(student, out / "student" / "labs" / lab.name)
        if run_keys:
            key = run_notebook(key)
        course.write_notebook(key, out / "labs" / f"{lab.stem}-key.ipynb")
    questions = exam.paper(course.term_seed(seed, "exam"))
    (out / "exam").mkdir()
    (out / "exam" / "paper.md").write_text(
        exam.markdown(questions, "The written exam", False), encoding="utf-8"
    )
    (out / "exam" / "key.md").write_text(
        exam.markdown(questions, "The written exam: key", True), encoding="utf-8"
    )
    for folder in ("rubrics", "project"):
        shutil.copytree(ROOT / "course" / folder, out / folder)
    shutil.copyfile(ROOT / "course" / "policies.md", out / "policies.md")
    (out / "schedule.csv").write_text(plan.csv_text(rows), encoding="utf-8")
    if start:
        (out / "schedule.ics").write_text(plan.icalendar(rows, zone=zone), encoding="utf-8", newline="")
    commit, changed = source_commit()
    schedule = (
        "`schedule.csv` and `schedule.ics` (for a calendar) have every meeting and deadline, dated."
        if start
        else "`schedule.csv` has the meetings and deadlines by week, without dates, and there is no "
        "`schedule.ics`: the bundle was made without a start date (`--start`)."
    )
    release_note = (
        "`main` moves during a term: for a term, tag a release and set it in `_config.yml` (see the "
        "book's README, \"A term's release\"), then make the bundle again."
        if repo.release == "main"
        else "That release stays as it is for the whole term."
    )
    keys = (
        "run with those seeds (their answers are printed)"
        if run_keys
        else "not run (`--no-run-keys`): run each before grading, a few minutes"
    )
    readme = README.format(
        release_note=release_note,
        keys=keys,
        seed=seed,
        repo=repo.name,
        release=repo.release,
        bundle=out,
        provenance=provenance(commit, changed),
        schedule=schedule,
    )
    (out / "README.md").write_text(readme, encoding="utf-8")
    lines = [f"the instructor bundle of term seed {seed}: {out} (keep it private)"]
    lines.append(
        f"made from commit {commit}"
        + (f", WARNING: with uncommitted changes in {len(changed)} files" if changed else "")
    )
    if not start:
        lines.append(NO_START)
    return "\n".join(lines)
