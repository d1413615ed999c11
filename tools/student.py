"""The student edition: every chapter with its solutions removed and its exercises left as stubs.

`python -m tools.student [OUT]` (what `make student` runs) reads `chapters/*.ipynb` and writes
`OUT/<same name>.ipynb` (default `student/`) and `OUT/README.md`, the list of Colab links.

In a chapter an exercise is a sphinx-exercise directive in a markdown cell, followed by a gated
solution::

    ```{exercise}                 <- kept, as a plain "Exercise chN-exK" paragraph
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
`raise NotImplementedError`, or `...`. Both carry the tag ``exercise``.
"""

from __future__ import annotations

import ast
import copy
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
REPO = "entmax-book/entmax-book"
BRANCH = "main"
COLAB = "https://colab.research.google.com/github/{repo}/blob/{branch}/{path}"
BADGE = "https://colab.research.google.com/assets/colab-badge.svg"

_EXERCISE = re.compile(
    r"^(?P<fence>`{3,})\{exercise\}[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$\n?", re.M | re.S
)
_SOLUTION_START = re.compile(
    r"^(?P<fence>`{3,})\{solution-start\}[ \t]*(?P<label>\S+)[^\n]*\n(?:.*?\n)??^(?P=fence)[ \t]*$\n?",
    re.M | re.S,
)
_SOLUTION_END = re.compile(
    r"^(?P<fence>`{3,})\{solution-end\}[^\n]*\n(?:.*?\n)??^(?P=fence)[ \t]*$\n?", re.M | re.S
)
_LABEL = re.compile(r"^:label:[ \t]*(\S+)[ \t]*$", re.M)
_OPTION = re.compile(r"^:[\w-]+:.*$\n?", re.M)


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


def _exercise_as_markdown(text: str) -> str:
    """Turn each ``{exercise}`` directive into a plain paragraph that any Jupyter front end renders."""

    def plain(match: re.Match) -> str:
        body = match.group("body")
        label = _LABEL.search(body)
        name = label.group(1) if label else ""
        body = _OPTION.sub("", body).strip("\n")
        return f"**Exercise {name}.**\n\n{body}\n"

    return _EXERCISE.sub(plain, text)


def _stub(label: str, code: list[str]) -> str:
    """The code stub for a solution: its top-level function signatures, or ``...``."""
    lines = [f"# Exercise {label}: your code here."]
    defs = []
    for source in code:
        try:
            tree = ast.parse(source)
        except SyntaxError:  # IPython magics: no signatures to keep
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                header = source.splitlines()[node.lineno - 1 : node.body[0].lineno - 1]
                # keep the signature, drop decorators' arguments and any docstring
                signature = [line for line in header if not line.lstrip().startswith(('"""', "'''"))]
                defs.append("\n".join(signature) + "\n    raise NotImplementedError")
    if defs:
        return "\n".join(lines) + "\n\n\n" + "\n\n\n".join(defs) + "\n"
    return "\n".join(lines) + "\n...\n"


def _cell_tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def split_chapter(nb) -> tuple[list, list[Solution]]:
    """The student's cells of a chapter and the solutions taken out of it.

    Args:
        nb: the chapter, an nbformat notebook (not modified).

    Returns:
        ``(cells, solutions)``: the new list of cells (markdown exercise statements kept, every
        solution replaced by stubs tagged ``exercise``) and one ``Solution`` per exercise, in order.

    Raises:
        ValueError: a solution that never ends, or a solution-end without a start.
    """
    cells: list = []
    solutions: list[Solution] = []
    current: Solution | None = None

    def close(solution: Solution) -> None:
        answer = nbformat.v4.new_markdown_cell(f"*Your answer to exercise {solution.label}:*\n")
        answer.metadata["tags"] = ["exercise"]
        cells.append(answer)
        if solution.code:
            stub = nbformat.v4.new_code_cell(_stub(solution.label, solution.code))
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
                    new = nbformat.v4.new_markdown_cell(_exercise_as_markdown(before))
                    cells.append(new)
                kept = []
                solutions.append(current)
                close(current)
                current = None
                text = text[end.end() :]
        rest = "".join(kept).strip()
        if rest:
            new = copy.deepcopy(cell)
            new.source = _exercise_as_markdown(rest)
            cells.append(new)
    if current is not None:
        raise ValueError(f"the solution of {current.label} never ends (no solution-end)")
    return cells, solutions


def colab_url(path: str) -> str:
    """The Colab address of a notebook of this repository's main branch.

    Args:
        path: the notebook's path in the repository, e.g. ``student/01_softmax_to_entmax.ipynb``.

    Returns:
        The URL that opens it in Google Colab.
    """
    return COLAB.format(repo=REPO, branch=BRANCH, path=path)


def badge(path: str) -> str:
    """The markdown "Open in Colab" badge for a notebook of the repository (see ``colab_url``)."""
    return f"[![Open in Colab]({BADGE})]({colab_url(path)})"


def student_notebook(nb, path: str):
    """The student edition of one chapter.

    Args:
        nb: the chapter, an nbformat notebook.
        path: where the student notebook lives in the repository (for its Colab badge).

    Returns:
        A new notebook: a first cell with the Colab badge, then the chapter's cells without the
        solutions, outputs cleared.
    """
    cells, _ = split_chapter(nb)
    head = nbformat.v4.new_markdown_cell(
        f"{badge(path)}\n\n*Student edition: the solutions are removed; each exercise is followed by "
        "a cell for your answer. Generated from the book by `make student`; edit the chapter, not "
        "this file.*\n"
    )
    head.metadata["tags"] = ["student-edition"]
    out = copy.deepcopy(nb)
    out.cells = [head, *cells]
    for cell in out.cells:
        cell.pop("id", None)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return out


def _write_notebook(nb, path: Path) -> None:
    # ids are assigned from the cell's position and content, so that a rebuild is byte-identical
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"student-{i:03d}"
    nbformat.validate(nb)
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


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
    """
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.ipynb"):
        old.unlink()
    written, rows = [], []
    for chapter in sorted(chapters.glob("*.ipynb")):
        nb = nbformat.read(chapter, as_version=4)
        path = f"{folder}/{chapter.name}"
        target = out / chapter.name
        _write_notebook(student_notebook(nb, path), target)
        written.append(target)
        title = next(
            (
                line.lstrip("# ").strip()
                for c in nb.cells
                if c.cell_type == "markdown"
                for line in c.source.splitlines()
                if line.startswith("# ")
            ),
            chapter.stem,
        )
        n = len(split_chapter(nb)[1])
        rows.append(f"| {title} | {n} | {badge(path)} |")
    readme = (
        "# The entmax book: student edition\n\n"
        "Every chapter of the book with the solutions removed: each exercise is followed by a cell for "
        "your answer (and, where the solution is code, a stub to complete). Generated by `make student` "
        "from `chapters/`; do not edit these files by hand.\n\n"
        "| Chapter | Exercises | |\n|---|---|---|\n" + "\n".join(rows) + "\n"
    )
    (out / "README.md").write_text(readme, encoding="utf-8")
    return written


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python -m tools.student [OUT]``.

    Args:
        argv: the arguments (default ``sys.argv[1:]``): an optional output folder.
    """
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0]) if argv else ROOT / "student"
    for path in build(out):
        print(path)


if __name__ == "__main__":
    main()
