"""A reveal.js slide deck per chapter, chosen from the executed chapter by rules, built by nbconvert.

``python -m tools.slides [CHAPTER ...]`` (what ``make slides`` runs) writes
``_build/slides/<chapter>.slides.html`` for every chapter (or the ones named, by file stem). The
chapters carry no slide metadata; the selection is made here, on a copy:

- a **title slide**: the chapter's title and its opening paragraph;
- a slide per **section heading** (``## ...``), with the section's first paragraph;
- the section's **displayed equations** (``$$ ... $$``, the definitions and results the prose
  derives), on a sub-slide titled by the section;
- every **figure** (a code cell's image output, or a ``{glue:figure}``), on a sub-slide titled by
  its section, without the code;
- the chapter's **Summary**, whole.

The text before the exercises is the same in the chapter and in its student edition, so the
deck is built from an executed notebook: the book's own outputs
(``_build/jupyter_execute/chapters/``, written by ``make book``) where the chapter's code has not
changed since, otherwise the student edition (``student/``) executed here with nbclient, which
also shows that every student notebook runs. A deck without its title slide or with fewer
images than the executed chapter has figures is an error.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "_build" / "slides"
BOOK_OUTPUTS = ROOT / "_build" / "jupyter_execute" / "chapters"
GLUE_PREFIX = "application/papermill.record/"
FIRST_PARAGRAPH = 420  # characters of a section's first paragraph shown on its slide

_HEADING = re.compile(r"^(#{1,3}) +(.+)$", re.M)
_TARGET = re.compile(r"^\([\w-]+\)=[ \t]*\n?", re.M)
_DISPLAY_MATH = re.compile(r"\$\$.+?\$\$|\\begin\{(align|equation|gather)\*?\}.+?\\end\{\1\*?\}", re.S)
_GLUE_FIGURE = re.compile(r"^(`{3,}|:{3,})\{glue:figure\}[ \t]*(\S+)[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
_DIRECTIVE = re.compile(r"^(`{3,}|:{3,})\{[\w:-]+\}[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
_OPTION = re.compile(r"^:[\w-]+:.*$\n?", re.M)


def _image(output) -> str | None:
    data = output.get("data", {})
    for key in ("image/png", GLUE_PREFIX + "image/png"):
        if key in data:
            return data[key]
    return None


def glue_values(nb, glue_file: Path | None = None) -> dict:
    """The values a chapter glued (``myst_nb.glue``), by name.

    Args:
        nb: the executed notebook.
        glue_file: the book build's ``<chapter>.glue.json``, where the book keeps them, if any.

    Returns:
        name -> the glued output's data (a dict of MIME type -> value, without papermill's prefix).
    """
    values = {}
    if glue_file is not None and glue_file.exists():
        for name, output in json.loads(glue_file.read_text()).items():
            values[name] = output.get("data", {})
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                values[name] = {k.removeprefix(GLUE_PREFIX): v for k, v in output.get("data", {}).items()}
    return values


def _glue_text(data: dict, spec: str) -> str:
    text = str(data.get("text/plain", "")).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    if spec:
        try:
            return format(float(text), spec)
        except ValueError:
            return text
    return text


def to_markdown(text: str, glue: dict) -> str:
    """MyST as plain Markdown that a reveal.js slide renders: roles resolved, targets dropped.

    Args:
        text: a markdown cell's source (MyST).
        glue: the chapter's glued values (see ``glue_values``).

    Returns:
        The text with ``{glue:text}`` values filled in, ``{glue:figure}`` as an inline image,
        ``{ref}``/``{numref}``/``{cite}`` as plain text, and other directives unwrapped.
    """

    def figure(match: re.Match) -> str:
        data = glue.get(match.group(2), {})
        caption = _OPTION.sub("", match.group(3)).strip().replace("\n", " ")
        if "image/png" not in data:
            return caption
        return f"![{caption}](data:image/png;base64,{data['image/png'].strip()})\n\n{caption}\n"

    text = _TARGET.sub("", text)
    text = _GLUE_FIGURE.sub(figure, text)
    text = _DIRECTIVE.sub(lambda m: _OPTION.sub("", m.group(2)), text)

    def glue_role(match: re.Match) -> str:
        name, _, spec = match.group(1).partition(":")
        return _glue_text(glue.get(name, {}), spec) if name in glue else match.group(0)

    text = re.sub(r"\{glue(?::text)?\}`([^`]+)`", glue_role, text)
    text = re.sub(r"\{(?:ref|numref|doc)\}`([^`<]+?)\s*<[^`]+>`", r"\1", text)
    text = re.sub(r"\{(?:ref|numref|doc)\}`([^`]+)`", lambda m: m.group(1).replace("-", " "), text)
    text = re.sub(r"\{cite(?::\w+)?\}`([^`]+)`", lambda m: "[" + m.group(1).replace(",", ", ") + "]", text)
    text = re.sub(r"\{math\}`([^`]+)`", r"$\1$", text)
    return text.strip() + "\n"


def _first_paragraph(text: str) -> str:
    body = _HEADING.sub("", text).strip()
    paragraph = re.split(r"\n\s*\n", body, maxsplit=1)[0].strip() if body else ""
    if paragraph.startswith(("$$", "\\begin", "|", "```", "![")):
        return ""
    if len(paragraph) > FIRST_PARAGRAPH:
        cut = paragraph[:FIRST_PARAGRAPH]
        end = max(cut.rfind(". "), cut.rfind(".\n"))
        paragraph = cut[: end + 1] if end > 0 else cut.rsplit(" ", 1)[0] + " …"
    return paragraph


def _slide(source: str, kind: str, cell_type: str = "markdown", outputs=None):
    if cell_type == "markdown":
        cell = nbformat.v4.new_markdown_cell(source)
    else:
        cell = nbformat.v4.new_code_cell(source)
        cell.outputs = outputs or []
    cell.metadata["slideshow"] = {"slide_type": kind}
    return cell


def figure_count(nb, glue: dict) -> int:
    """How many figures the chapter shows before its exercises (and in its summary).

    Args:
        nb: the executed chapter (or student edition).
        glue: its glued values.

    Returns:
        The number of image outputs of its code cells plus its ``{glue:figure}`` directives that
        have an image.
    """
    count = 0
    for cell in _main_cells(nb):
        if cell.cell_type == "code":
            count += sum(1 for o in cell.get("outputs", []) if _image(o) and not _is_glue(o))
        else:
            count += sum(
                1 for m in _GLUE_FIGURE.finditer(cell.source) if "image/png" in glue.get(m.group(2), {})
            )
    return count


def _is_glue(output) -> bool:
    return bool(output.get("metadata", {}).get("scrapbook"))


def _is_exercises(cell) -> bool:
    return cell.cell_type == "markdown" and (
        re.search(r"^## +Exercises?\b", cell.source, flags=re.M) is not None
        or "{exercise}" in cell.source
        or cell.source.lstrip().startswith("**Exercise ")
    )


def _main_cells(nb):
    """The cells of the chapter's text: up to its exercises, then from its summary on."""
    cells, skipping = [], False
    for cell in nb.cells:
        if "student-edition" in cell.metadata.get("tags", []):
            continue
        if re.search(r"^## +Summary", cell.source, flags=re.M) and cell.cell_type == "markdown":
            skipping = False
            cell = nbformat.from_dict(dict(cell))
            cell.source = cell.source[
                re.search(r"^\([\w-]+\)=\s*\n## +Summary|^## +Summary", cell.source, re.M).start() :
            ]
        elif _is_exercises(cell) or "exercise" in cell.metadata.get("tags", []):
            skipping = True
        if not skipping:
            cells.append(cell)
    return cells


def deck_notebook(nb, glue: dict, chapter_label: str):
    """The slides of one chapter as a notebook with reveal.js slide metadata.

    Args:
        nb: the executed chapter (or its executed student edition).
        glue: its glued values.
        chapter_label: shown under the title, e.g. ``The entmax book · chapters/01_softmax_to_entmax``.

    Returns:
        A new notebook: the title slide, then one slide per section with its equations and figures
        as sub-slides, then the summary.
    """
    cells = _main_cells(nb)
    title, intro = None, ""
    slides = []
    section = None
    for cell in cells:
        if cell.cell_type == "markdown":
            text = to_markdown(cell.source, glue)
            heading = _HEADING.search(text)
            if title is None and heading and heading.group(1) == "#":
                title = heading.group(2).strip()
                intro = _first_paragraph(text[heading.end() :])
                continue
            if not intro and section is None:
                intro = _first_paragraph(text[: heading.start()] if heading else text)
            if heading and heading.group(1) == "###":
                # a sub-section: its heading and first paragraph (or list), on a sub-slide
                sub = heading.group(2).strip()
                rest = text[heading.end() :]
                nxt = _HEADING.search(rest)
                body = rest[: nxt.start()] if nxt else rest
                lead = _first_paragraph(body) or body.strip()[:FIRST_PARAGRAPH]
                slides.append(
                    _slide(f"### {sub}\n\n{lead}".strip() + "\n", "subslide" if section else "slide")
                )
            if heading and heading.group(1) == "##":
                section = heading.group(2).strip()
                if section.lower().startswith("summary"):
                    slides.append(_slide(text, "slide"))
                    continue
                lead = _first_paragraph(text[heading.end() :])
                slides.append(_slide(f"## {section}\n\n{lead}".strip() + "\n", "slide"))
            for image in re.findall(r"!\[[^\]]*\]\(data:image/png;base64,[^)]+\)", text):
                slides.append(_slide(f"### {section or title}\n\n{image}\n", "subslide"))
            maths = [m.group(0) for m in _DISPLAY_MATH.finditer(text)]
            if maths and section:
                slides.append(_slide(f"### {section}\n\n" + "\n\n".join(maths) + "\n", "subslide"))
        elif cell.cell_type == "code":
            images = [o for o in cell.get("outputs", []) if _image(o) and not _is_glue(o)]
            if images:
                slides.append(_slide(f"### {section or title}\n", "subslide"))
                slides.append(_slide("", "-", "code", images))
    if title is None:
        raise ValueError("the chapter has no title (a '# ' heading)")
    head = _slide(f"# {title}\n\n*{chapter_label}*\n\n{intro}\n", "slide")
    out = nbformat.v4.new_notebook(cells=[head, *slides], metadata=dict(nb.metadata))
    return out


def render(deck, path: Path) -> Path:
    """Write a deck notebook as reveal.js HTML with nbconvert's slides exporter, code hidden.

    Args:
        deck: the notebook from ``deck_notebook``.
        path: the HTML file to write.

    Returns:
        ``path``.
    """
    from nbconvert import SlidesExporter

    exporter = SlidesExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    html, _ = exporter.from_notebook_node(deck)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html, encoding="utf-8")
    return path


def check_deck(html: str, title: str, figures: int) -> None:
    """Raise unless a rendered deck has its title slide and at least ``figures`` images.

    Args:
        html: the deck's HTML.
        title: the chapter's title, expected in the first slide's first heading.
        figures: how many figures the chapter has.

    Raises:
        ValueError: the title slide is missing or images are missing.
    """
    sections = re.findall(r"<section\b", html)
    first = re.search(r"<section\b.*?<h1[^>]*>(.*?)</h1>", html, flags=re.S)
    if not sections or first is None or title not in re.sub(r"<[^>]+>", "", first.group(1)):
        raise ValueError(f"no title slide {title!r}")
    images = len(re.findall(r"<img\b[^>]*src=\"data:image/png;base64,", html))
    if images < figures:
        raise ValueError(f"{images} images in the deck, {figures} figures in the chapter")


def executed(chapter: Path, student_dir: Path = ROOT / "student", timeout: int = 1200):
    """The executed chapter: the book's outputs if its code is unchanged, else the student edition run here.

    Args:
        chapter: the chapter's path.
        student_dir: the student edition (``make student``).
        timeout: seconds allowed per cell when executing.

    Returns:
        ``(notebook, glue_file_or_None, where)``, ``where`` saying which source was used.
    """
    source = nbformat.read(chapter, as_version=4)
    book = BOOK_OUTPUTS / chapter.name
    if book.exists():
        done = nbformat.read(book, as_version=4)
        code = lambda nb: [c.source for c in nb.cells if c.cell_type == "code"]
        if code(done) == code(source):
            return done, BOOK_OUTPUTS / f"{chapter.stem}.glue.json", "book outputs"
    from nbclient import NotebookClient

    nb = nbformat.read(student_dir / chapter.name, as_version=4)
    NotebookClient(
        nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(student_dir)}}
    ).execute()
    return nb, None, "student edition, executed"


def build(names: list[str] | None = None, out: Path = OUT) -> dict[str, Path]:
    """Build the deck of every chapter (or of the chapters named).

    Args:
        names: chapter file stems, e.g. ``["07_sparse_outputs"]``; None for all.
        out: the folder for the decks (and the executed notebooks they came from).

    Returns:
        chapter stem -> the deck's HTML file.

    Raises:
        ValueError: a deck without its title slide or its figures (see ``check_deck``).
    """
    chapters = sorted((ROOT / "chapters").glob("*.ipynb"))
    if names:
        chapters = [c for c in chapters if c.stem in names]
    decks = {}
    for chapter in chapters:
        start = time.perf_counter()
        nb, glue_file, where = executed(chapter)
        (out / "executed").mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, out / "executed" / chapter.name)
        glue = glue_values(nb, glue_file)
        deck = deck_notebook(nb, glue, f"The entmax book · chapters/{chapter.name}")
        title = re.match(r"# (.+)", deck.cells[0].source).group(1)
        path = render(deck, out / f"{chapter.stem}.slides.html")
        check_deck(path.read_text("utf-8"), title, figure_count(nb, glue))
        decks[chapter.stem] = path
        size = path.stat().st_size / 1e6
        print(f"{path}: {size:.1f} MB, from the {where}, {time.perf_counter() - start:.0f} s")
    return decks


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python -m tools.slides [CHAPTER_STEM ...]``.

    Args:
        argv: chapter file stems (default: ``sys.argv[1:]``; none: every chapter).
    """
    argv = sys.argv[1:] if argv is None else argv
    build(argv or None)


if __name__ == "__main__":
    main()
