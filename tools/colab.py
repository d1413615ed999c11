"""The Colab edition: every chapter with its prose as the online book shows it, for Colab and Jupyter.

``python -m tools.colab [OUT]`` (what ``make colab`` runs) reads ``chapters/*.ipynb`` and writes
``OUT/<same name>.ipynb`` (default ``colab/``): the same cells, with every markdown cell's MyST
converted to plain Markdown by ``tools.myst`` (glued values as their numbers, cross-references as
links into the online book, citations as (Author, Year), exercises and solutions as headed blocks)
and the code cells without outputs (run, they compute the glued values again).

The glued values come from an executed chapter whose code is the chapter's code:

1. the book build's (``_build/jupyter_execute/chapters/<name>.ipynb`` and its ``.glue.json``,
   written by ``make book``), or else
2. the committed edition's own record, when the chapter's code has not changed since it was
   generated (a prose-only edit regenerates without a build).

Each edition notebook records them in its metadata, ``entmax_book``: the chapter's path, the
fingerprint of its code (``tools.myst.code_hash``) and ``glue``, name -> the value's text, for
every value its prose quotes. ``tests/test_editions.py`` checks the record against a fresh
execution of a chapter.

This module is also a Sphinx extension (``_config.yml``, ``sphinx.local_extensions``): it points
each chapter's Colab launch button at the chapter's Colab edition.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import nbformat

from tools import myst, repository

ROOT = Path(__file__).resolve().parents[1]
EDITION = "colab"
BOOK_OUTPUTS = ROOT / "_build" / "jupyter_execute" / "chapters"
META = "entmax_book"


def check_output_folder(out: Path, sources: Path) -> None:
    """Refuse to write an edition where it would overwrite or delete the sources it is made from.

    Args:
        out: the edition's folder.
        sources: the folder of the chapters.

    Raises:
        ValueError: ``out`` is the sources' folder or contains it (or any of its notebooks).
    """
    out, sources = Path(out).resolve(), Path(sources).resolve()
    if out == sources or out in sources.parents:
        raise ValueError(f"out={str(out)!r} is or contains the chapters' folder {str(sources)!r}")


def recorded_glue(nb) -> dict[str, dict]:
    """The glued outputs an edition notebook recorded: name -> {MIME type: value} (text/plain for a
    quoted value, text/markdown for a glued table, image/png for a figure)."""
    meta = nb.metadata.get(META, {})
    glue = {name: {"text/plain": text} for name, text in meta.get("glue", {}).items()}
    for name, table in meta.get("tables", {}).items():
        glue[name] = {"text/markdown": table}
    for cell in nb.cells:
        for attachment, data in cell.get("attachments", {}).items():
            glue.setdefault(attachment.removesuffix(".png"), {}).update(data)
    return glue


def chapter_glue(chapter: Path, outputs: Path = BOOK_OUTPUTS, edition: Path = ROOT / EDITION) -> dict:
    """The glued outputs of a chapter, from an execution of its current code.

    Args:
        chapter: the chapter's notebook.
        outputs: the book build's executed chapters (``make book``).
        edition: the committed Colab edition, whose record serves while the code is unchanged.

    Returns:
        name -> MIME type -> value (see ``tools.myst.glued_outputs``).

    Raises:
        RuntimeError: neither the build nor the edition ran this code: run ``make book``.
    """
    code = myst.code_hash(nbformat.read(chapter, as_version=4))
    executed = outputs / chapter.name
    if executed.exists() and myst.code_hash(nbformat.read(executed, as_version=4)) == code:
        glue_file = outputs / f"{chapter.stem}.glue.json"
        return myst.glued_outputs(None, glue_file if glue_file.exists() else None)
    committed = edition / chapter.name
    if committed.exists():
        nb = nbformat.read(committed, as_version=4)
        if nb.metadata.get(META, {}).get("code") == code:
            return recorded_glue(nb)
    raise RuntimeError(
        f"{chapter.name}: its code changed since the last book build and the last `make colab`; "
        "run `make book` first, for the values its prose quotes"
    )


def convert_cells(cells, book: myst.Book, page: myst.Page) -> list:
    """Copies of ``cells`` with their markdown converted (figures attached) and code outputs cleared."""
    out = []
    for i, cell in enumerate(cells):
        new = copy.deepcopy(cell)
        if cell.cell_type == "markdown":
            key = f"cell-{i}"
            new.source = myst.convert(cell.source, book, page, key)
            if key in page.attachments:
                new["attachments"] = page.attachments[key]
        elif cell.cell_type == "code":
            new.source = repository.load().retarget(cell.source)  # install the configured release
            new.outputs, new.execution_count = [], None
        out.append(new)
    return out


def record(nb, chapter_path: str, code: str, page: myst.Page) -> None:
    """Write the edition's record (chapter, code fingerprint, glued values quoted) into ``nb.metadata``."""
    # figures travel as cell attachments; the record holds the values the text quotes and the
    # glued tables, so that a checkout without a book build can write the edition again
    used = sorted(page.used)
    values = {
        k: page.glue[k]["text/plain"] for k in used if not {"image/png", "text/markdown"} & set(page.glue[k])
    }
    tables = {k: page.glue[k]["text/markdown"] for k in used if "text/markdown" in page.glue[k]}
    nb.metadata[META] = {"chapter": chapter_path, "code": code, "glue": values}
    if tables:
        nb.metadata[META]["tables"] = tables


def colab_notebook(nb, name: str, book: myst.Book, glue: dict):
    """The Colab edition of one chapter.

    Args:
        nb: the chapter (nbformat; not modified).
        name: its file name, e.g. ``01_softmax_to_entmax.ipynb``.
        book: labels and bibliography (``tools.myst.load_book``).
        glue: its glued outputs (``chapter_glue``).

    Returns:
        A new notebook: a first cell linking the online page, then the chapter's cells converted.
    """
    stem = name.removesuffix(".ipynb")
    page = myst.Page(f"chapters/{stem}", glue)
    head = nbformat.v4.new_markdown_cell(
        f"*[Read this chapter in the online book]({book.link(page.name)}), with its outputs. "
        "The numbers in the text are those of the book's last build; running the cells computes "
        f"them again. Generated from `chapters/{name}` by `make colab`: edit the chapter, not this "
        "file.*\n"
    )
    head.metadata["tags"] = ["colab-edition"]
    out = copy.deepcopy(nb)
    out.cells = [head, *convert_cells(nb.cells, book, page)]
    record(out, f"chapters/{name}", myst.code_hash(nb), page)
    return out


def write_notebook(nb, path: Path, prefix: str) -> None:
    """Write ``nb`` with cell ids from their position, so that a rebuild is byte-identical."""
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{prefix}-{i:03d}"
    nbformat.validate(nb)
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


def build(out: Path = ROOT / EDITION, chapters: Path = ROOT / "chapters") -> list[Path]:
    """Write the Colab edition of every chapter.

    Args:
        out: the folder to write into (created if missing; its old notebooks are replaced).
        chapters: the folder of the book's chapters.

    Returns:
        The paths of the notebooks written.

    Raises:
        ValueError: ``out`` is or contains ``chapters`` (see ``check_output_folder``).
        RuntimeError: a chapter's glued values are not known (see ``chapter_glue``).
    """
    check_output_folder(out, chapters)
    book = myst.load_book(chapters.parent)
    notebooks = {}
    for chapter in sorted(chapters.glob("*.ipynb")):
        nb = nbformat.read(chapter, as_version=4)
        # the values it quotes: from the build, or recorded in the edition being replaced, or
        # (writing elsewhere, as the tests do) in the committed edition
        edition = out if (out / chapter.name).exists() else ROOT / EDITION
        notebooks[chapter] = colab_notebook(nb, chapter.name, book, chapter_glue(chapter, edition=edition))
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.ipynb"):
        old.unlink()
    for chapter, nb in notebooks.items():
        write_notebook(nb, out / chapter.name, "colab")
    return [out / chapter.name for chapter in notebooks]


def _launch_button_to_edition(app, pagename, templatename, context, doctree) -> None:
    edition = Path(app.srcdir) / EDITION / (Path(pagename).name + ".ipynb")
    if not edition.exists():
        return
    for group in context.get("header_buttons", []):
        for button in group.get("buttons", []):
            if button.get("text") == "Colab" and button.get("url", "").endswith(f"/{pagename}.ipynb"):
                button["url"] = button["url"].removesuffix(f"{pagename}.ipynb") + f"{EDITION}/{edition.name}"


def setup(app) -> dict:
    """Sphinx extension: each chapter's Colab launch button opens its Colab edition.

    sphinx-book-theme builds the launch buttons from the page's own source path (priority 501);
    this runs after it and points the Colab button at ``colab/<chapter>.ipynb``, for the pages
    that have one.
    """
    app.connect("html-page-context", _launch_button_to_edition, priority=502)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python -m tools.colab [OUT]``."""
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0]) if argv else ROOT / EDITION
    try:
        paths = build(out)
    except (ValueError, RuntimeError) as error:
        sys.exit(f"tools.colab: {error}")
    for path in paths:
        print(path)


if __name__ == "__main__":
    main()
