"""The student edition: every chapter with its solutions removed and its exercises left as stubs.

`python -m tools.student [OUT]` (what `make student` runs) reads `chapters/*.ipynb` and writes
`OUT/<same name>.ipynb` (default `student/`) and `OUT/README.md`, the list of Colab links in the
book's order (`--readme` writes the README alone).

In a chapter an exercise is a sphinx-exercise directive in a markdown cell, followed by a gated
solution::

    ```{exercise}                 <- kept (as "#### Exercise N", see below)
    :label: chN-exK
    ...
    ```

    ```{solution-start} chN-exK   <- from here ...
    :class: dropdown
    ```
    (prose, code cells, hidden checks tagged remove-cell)
    ```{solution-end}             <- ... to here: removed
    ```

The solution-start directive may share its cell with the exercise, and the solution-end
directive may share its cell with what follows (the next exercise, the summary); both are
handled. In place of each solution the student gets a markdown cell for the written answer and,
where the solution had code, a code cell: the solution's function signatures with a body of
`raise NotImplementedError` (decorators kept), or `...`. Both carry the tag ``exercise``.

Like the Colab edition (``tools/colab.py``), the student edition carries no MyST: its markdown is
converted by ``tools.myst`` with the glued values of the chapter's last execution, which each
notebook records in its metadata (``entmax_book``). ``OUT/README.md`` lists the chapters, the
assignments (``student/assignments/``, written by ``make course``) and the labs (``course/labs/``)
with their Colab links.
"""

from __future__ import annotations

import ast
import copy
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from tools import colab, myst, repository

ROOT = Path(__file__).resolve().parents[1]
BADGE = "https://colab.research.google.com/assets/colab-badge.svg"

_SOLUTION_START = re.compile(
    r"^(?P<fence>`{3,})\{solution-start\}[ \t]*(?P<label>\S+)[^\n]*\n(?:.*?\n)??^(?P=fence)[ \t]*$\n?",
    re.M | re.S,
)
_SOLUTION_END = re.compile(
    r"^(?P<fence>`{3,})\{solution-end\}[^\n]*\n(?:.*?\n)??^(?P=fence)[ \t]*$\n?", re.M | re.S
)


@dataclass
class Solution:
    """One exercise's solution as found in a chapter.

    Attributes:
        label: the exercise's label, e.g. ``ch1-ex3``.
        prose: the solution's markdown text.
        code: the source of its visible code cells.
        checks: the source of its hidden (remove-cell) code cells.
    """

    label: str
    prose: list[str] = field(default_factory=list)
    code: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)


def _stub(name: str, code: list[str]) -> str:
    """The code stub for a solution: its top-level functions' decorators and signatures, or ``...``."""
    lines = [f"# {name}: your code here."]
    defs = []
    for source in code:
        try:
            tree = ast.parse(source)
        except SyntaxError:  # IPython magics: no signatures to keep
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([d.lineno for d in node.decorator_list] + [node.lineno])
                header = source.splitlines()[first - 1 : node.body[0].lineno - 1]
                # keep the decorators and the signature, drop any docstring
                signature = [line for line in header if not line.lstrip().startswith(('"""', "'''"))]
                defs.append("\n".join(signature) + "\n    raise NotImplementedError")
    if defs:
        return "\n".join(lines) + "\n\n\n" + "\n\n\n".join(defs) + "\n"
    return "\n".join(lines) + "\n...\n"


def _cell_tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def split_chapter(nb, numbers: dict[str, int] | None = None) -> tuple[list, list[Solution]]:
    """The student's cells of a chapter and the solutions taken out of it.

    Args:
        nb: the chapter, an nbformat notebook (not modified).
        numbers: exercise label -> its number in the book, for the answer cells ("Exercise 10");
            without it they name the label.

    Returns:
        ``(cells, solutions)``: the new list of cells (markdown exercise statements kept as MyST, every
        solution replaced by stubs tagged ``exercise``) and one ``Solution`` per exercise, in order.

    Raises:
        ValueError: a solution that never ends, or a solution-end without a start.
    """
    cells: list = []
    solutions: list[Solution] = []
    current: Solution | None = None

    def close(solution: Solution) -> None:
        number = (numbers or {}).get(solution.label)
        name = f"Exercise {number}" if number else f"exercise {solution.label}"
        answer = nbformat.v4.new_markdown_cell(f"*Your answer to {name}:*\n")
        answer.metadata["tags"] = ["exercise"]
        cells.append(answer)
        if solution.code:
            stub = nbformat.v4.new_code_cell(_stub(name, solution.code))
            stub.metadata["tags"] = ["exercise"]
            cells.append(stub)

    for cell in nb.cells:
        if cell.cell_type != "markdown":
            if current is None:
                cells.append(copy.deepcopy(cell))
            elif cell.cell_type == "code":
                target = current.checks if "remove-cell" in _cell_tags(cell) else current.code
                target.append(cell.source)
            continue
        text, kept = cell.source, []
        while text:
            if current is None:
                start = _SOLUTION_START.search(text)
                if _SOLUTION_END.search(text[: start.start() if start else len(text)]):
                    raise ValueError(f"a solution-end without a solution-start in: {cell.source[:80]!r}")
                if start is None:
                    kept.append(text)
                    break
                kept.append(text[: start.start()])
                current = Solution(start.group("label"))
                text = text[start.end() :]
            else:
                end = _SOLUTION_END.search(text)
                if end is None:
                    current.prose.append(text)
                    break
                current.prose.append(text[: end.start()])
                before = "".join(kept).strip()
                if before:
                    new = nbformat.v4.new_markdown_cell(before)
                    cells.append(new)
                kept = []
                solutions.append(current)
                close(current)
                current = None
                text = text[end.end() :]
        rest = "".join(kept).strip()
        if rest:
            new = copy.deepcopy(cell)
            new.source = rest
            cells.append(new)
    if current is not None:
        raise ValueError(f"the solution of {current.label} never ends (no solution-end)")
    return cells, solutions


def colab_url(path: str) -> str:
    """The Colab address of a notebook of the repository, at the release students use
    (``_config.yml``'s ``repository``, see ``tools.repository``).

    Args:
        path: the notebook's path in the repository, e.g. ``student/01_softmax_to_entmax.ipynb``.

    Returns:
        The URL that opens it in Google Colab.
    """
    return repository.load().colab_url(path)


def badge(path: str) -> str:
    """The markdown "Open in Colab" badge for a notebook of the repository (see ``colab_url``)."""
    return f"[![Open in Colab]({BADGE})]({colab_url(path)})"


def student_notebook(nb, path: str, book: myst.Book, glue: dict):
    """The student edition of one chapter.

    Args:
        nb: the chapter, an nbformat notebook.
        path: where the student notebook lives in the repository (for its Colab badge).
        book: labels and bibliography (``tools.myst.load_book``).
        glue: the chapter's glued outputs (``tools.colab.chapter_glue``).

    Returns:
        A new notebook: a first cell with the Colab badge, then the chapter's cells without the
        solutions, MyST converted, outputs cleared, and the glued values quoted in its metadata.
    """
    cells, _ = split_chapter(nb, book.exercises)
    head = nbformat.v4.new_markdown_cell(
        f"{badge(path)}\n\n*Student edition: the solutions are removed; each exercise is followed by "
        "a cell for your answer. Generated from the book by `make student`; edit the chapter, not "
        "this file.*\n"
    )
    head.metadata["tags"] = ["student-edition"]
    name = Path(path).name
    page = myst.Page(f"chapters/{name.removesuffix('.ipynb')}", glue)
    out = copy.deepcopy(nb)
    out.cells = [head, *colab.convert_cells(cells, book, page)]
    colab.record(out, f"chapters/{name}", myst.code_hash(nb), page)
    return out


def _title(nb, default: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line.lstrip("# ").strip()
    return default


def _course_rows(folder: str) -> tuple[list[str], list[str]]:
    """The README's rows for the assignments (``student/assignments/NAME/NAME.ipynb``, written by
    ``make course``) and the labs (``course/labs/``)."""
    assignments = []
    for notebook in sorted((ROOT / folder).glob("assignments/*/*.ipynb")):
        if notebook.stem == notebook.parent.name:
            nb = nbformat.read(notebook, as_version=4)
            path = f"{folder}/assignments/{notebook.parent.name}/{notebook.name}"
            assignments.append(f"| {_title(nb, notebook.stem)} | {badge(path)} |")
    labs = []
    for notebook in sorted((ROOT / folder / "labs").glob("*.ipynb")):
        nb = nbformat.read(notebook, as_version=4)
        labs.append(f"| {_title(nb, notebook.stem)} | {badge(f'{folder}/labs/{notebook.name}')} |")
    return assignments, labs


def build(
    out: Path = ROOT / "student", chapters: Path = ROOT / "chapters", folder: str = "student"
) -> list[Path]:
    """Write the student edition of every chapter and its README with the Colab links.

    Args:
        out: the folder to write into (created if missing; old notebooks in it are replaced).
        chapters: the folder of the book's chapters.
        folder: the edition's folder in the repository, for the Colab links (``student``).

    Returns:
        The paths of the notebooks written.

    Raises:
        ValueError: ``out`` is or contains ``chapters`` (``tools.colab.check_output_folder``).
        RuntimeError: a chapter's glued values are not known (``tools.colab.chapter_glue``).
    """
    colab.check_output_folder(out, chapters)
    book = myst.load_book(chapters.parent)
    notebooks = {}
    for chapter in sorted(chapters.glob("*.ipynb")):
        nb = nbformat.read(chapter, as_version=4)
        path = f"{folder}/{chapter.name}"
        notebooks[chapter.name] = student_notebook(nb, path, book, colab.chapter_glue(chapter))
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.ipynb"):
        old.unlink()
    for name, nb in notebooks.items():
        colab.write_notebook(nb, out / name, "student")
    (out / "README.md").write_text(readme(chapters, folder), encoding="utf-8")
    return [out / name for name in notebooks]


def book_order(chapters: Path) -> list[Path]:
    """The chapters' notebooks in the book's order (``_toc.yml`` beside ``chapters``: the
    statistics primer between Chapters 3 and 4), then any the toc does not list, by name."""
    pages = myst._toc_pages(chapters.parent)
    rank = {chapters.parent / f"{page}.ipynb": i for i, page in enumerate(pages)}
    return sorted(chapters.glob("*.ipynb"), key=lambda p: (rank.get(p, len(rank)), p.name))


def readme(chapters: Path = ROOT / "chapters", folder: str = "student") -> str:
    """The student edition's README: its chapters in the book's order, the assignments and the
    labs, each with its Colab link (``python -m tools.student --readme`` writes it alone).

    Args:
        chapters: the folder of the book's chapters.
        folder: the edition's folder in the repository, for the Colab links.

    Returns:
        The Markdown text.
    """
    rows = []
    for chapter in book_order(chapters):
        nb = nbformat.read(chapter, as_version=4)
        n = len(split_chapter(nb)[1])
        rows.append(f"| {_title(nb, chapter.stem)} | {n} | {badge(f'{folder}/{chapter.name}')} |")
    assignments, labs = _course_rows(folder)
    return (
        "# The entmax book: student edition\n\n"
        "Every chapter of the book with the solutions removed: each exercise is followed by a cell for "
        "your answer (and, where the solution is code, a stub to complete). Generated by `make student` "
        "from `chapters/`; do not edit these files by hand.\n\n"
        "| Chapter | Exercises | |\n|---|---|---|\n" + "\n".join(rows) + "\n\n"
        "## Assignments\n\n"
        'Autograded: `grader.check("name")` runs the public tests as you work; hand in the notebook '
        "(File → Download .ipynb).\n\n"
        "| Assignment | |\n|---|---|\n" + "\n".join(assignments) + "\n\n"
        "## Labs\n\n"
        "These are the public labs, with the public seeds, for practice. A graded lab is the one your "
        "course hands out for this term: its seeds are its own.\n\n"
        "| Lab | |\n|---|---|\n" + "\n".join(labs) + "\n\n"
        "The course's policies (late work, collaboration, AI tools, regrades, accessibility): "
        "[`course/policies.md`](../course/policies.md).\n"
    )


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python -m tools.student [OUT]``, or ``python -m tools.student --readme``
    to write ``student/README.md`` alone (the notebooks untouched).

    Args:
        argv: the arguments (default ``sys.argv[1:]``): an optional output folder.
    """
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--readme"]:
        (ROOT / "student" / "README.md").write_text(readme(), encoding="utf-8")
        print(ROOT / "student" / "README.md")
        return
    out = Path(argv[0]) if argv else ROOT / "student"
    try:
        paths = build(out)
    except (ValueError, RuntimeError) as error:
        sys.exit(f"tools.student: {error}")
    for path in paths:
        print(path)


if __name__ == "__main__":
    main()
