"""A reveal.js slide deck per chapter, chosen from the executed chapter by rules, shown offline.

``python -m tools.slides [CHAPTER ...]`` (what ``make slides`` runs) writes
``_build/slides/<chapter>.slides.html`` for every chapter (or the ones named, by file stem). The
chapters carry no slide metadata; the selection is made here, on a copy:

- a **title slide**: the chapter's title and its opening paragraph;
- a slide per **section heading** (``## ...``), with the section's first paragraph;
- the section's **displayed equations** (``$$ ... $$``, the definitions and results the prose
  derives), on a sub-slide titled by the section;
- every **figure** (a code cell's image output, or a ``{glue:figure}``), on a sub-slide titled by
  its section, without the code;
- the chapter's **Summary**, whole;
- as **speaker notes** (``<aside class="notes">``, press ``s`` in the deck), the paragraphs of each
  section that its slides skip.

The markdown is converted by ``tools.myst`` as for the Colab edition (glued numbers, links,
citations as (Author, Year)), then rendered to HTML here with markdown-it; formulas stay TeX for
MathJax. Nothing is fetched from the network when a deck is shown: ``_build/slides/`` holds the
decks and one copy of what they load, ``reveal.js/`` (reveal.js 5, MIT, from the Python package
sphinx-revealjs, a dependency of the book) and ``mathjax/`` (MathJax 2.7, Apache 2.0, from the
system package libjs-mathjax, as for ``make pdf``; ``MATHJAX=/path/to/MathJax.js`` overrides); the
folder can be copied to the lecture hall's computer as it is.

The text before the exercises is the same in the chapter and in its student edition, so the
deck is built from an executed notebook: the book's own outputs
(its execution cache, ``_build/.jupyter_cache``, written by ``make book``) where the chapter's code has not
changed since, otherwise the student edition (``student/``) executed here with nbclient, which
also shows that every student notebook runs. A deck without its title slide or with fewer
images than the executed chapter has figures is an error.
"""

from __future__ import annotations

import html
import importlib.util
import os
import re
import shutil
import sys
import time
from pathlib import Path

import nbformat

from tools import myst

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "_build" / "slides"
BOOK_CACHE = ROOT / "_build" / ".jupyter_cache"
FIRST_PARAGRAPH = 420  # characters of a section's first paragraph shown on its slide
MATHJAX = Path(os.environ.get("MATHJAX", "/usr/share/javascript/mathjax/MathJax.js"))

_HEADING = re.compile(r"^(#{1,4}) +(.+)$", re.M)
_DISPLAY_MATH = re.compile(r"\$\$.+?\$\$|\\begin\{(align|equation|gather)\*?\}.+?\\end\{\1\*?\}", re.S)
_GLUE_FIGURE = re.compile(r"^(`{3,}|:{3,})\{glue:figure\}[ \t]*(\S+)[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
_IMAGE = re.compile(r"!\[[^\]]*\]\(data:image/png;base64,[^)]+\)")
_BOOK: myst.Book | None = None


def _image(output) -> str | None:
    data = output.get("data", {})
    for key in ("image/png", myst.GLUE_PREFIX + "image/png"):
        if key in data:
            return data[key]
    return None


def glue_values(nb, glue_file: Path | None = None) -> dict:
    """The outputs a chapter glued, by name: ``tools.myst.glued_outputs`` of the notebook and of
    the book build's ``<chapter>.glue.json`` (where the build keeps them), if it exists."""
    exists = glue_file is not None and glue_file.exists()
    return myst.glued_outputs(nb, glue_file if exists else None)


def _book() -> myst.Book:
    global _BOOK
    if _BOOK is None:
        _BOOK = myst.load_book()
    return _BOOK


def to_markdown(text: str, glue: dict, book: myst.Book | None = None) -> str:
    """MyST as the plain Markdown of a slide: ``tools.myst.convert``, figures inline.

    Args:
        text: a markdown cell's source (MyST, or already plain).
        glue: the chapter's glued outputs (see ``glue_values``).
        book: labels and bibliography (default: the book's, ``tools.myst.load_book``).

    Returns:
        The converted text, with each ``{glue:figure}`` as an inline (data URI) image.
    """
    page = myst.Page("chapters/slides", glue)
    text = myst.convert(text, book or _book(), page, "cell")
    return _inline_attachments(text, page.attachments.get("cell", {}))


def _inline_attachments(text: str, attachments: dict) -> str:
    """``(attachment:NAME)`` links as data URIs: a deck page cannot read a cell's attachments."""
    for name, data in attachments.items():
        if "image/png" in data:
            text = text.replace(f"(attachment:{name})", f"(data:image/png;base64,{data['image/png']})")
    return text


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


def _notes(text: str, shown: list[str]) -> list[str]:
    """The paragraphs of ``text`` that its slides do not show (``shown``): for the speaker notes."""
    paragraphs = []
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = paragraph.strip()
        if not paragraph or paragraph.startswith("#") or _IMAGE.search(paragraph):
            continue
        if paragraph in shown or _DISPLAY_MATH.fullmatch(paragraph):
            continue
        paragraphs.append(paragraph)
    return paragraphs


def figure_count(nb, glue: dict) -> int:
    """How many figures the chapter shows before its exercises (and in its summary).

    Args:
        nb: the executed chapter (or student edition).
        glue: its glued values.

    Returns:
        The number of image outputs of its code cells plus its ``{glue:figure}`` directives that
        have an image and the images its markdown cells carry as attachments (a student edition's
        figures).
    """
    count = 0
    for cell in _main_cells(nb):
        if cell.cell_type == "code":
            count += sum(1 for o in cell.get("outputs", []) if _image(o) and not _is_glue(o))
        else:
            count += sum(
                1 for m in _GLUE_FIGURE.finditer(cell.source) if "image/png" in glue.get(m.group(2), {})
            )
            count += sum(
                1
                for name, data in cell.get("attachments", {}).items()
                if "image/png" in data and f"(attachment:{name})" in cell.source
            )
    return count


def _is_glue(output) -> bool:
    return bool(output.get("metadata", {}).get("scrapbook"))


def _is_exercises(cell) -> bool:
    return cell.cell_type == "markdown" and (
        re.search(r"^## +Exercises?\b", cell.source, flags=re.M) is not None
        or "{exercise}" in cell.source
        or re.search(r"^#### +Exercise \d+", cell.source, flags=re.M) is not None
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
        as sub-slides, then the summary. A section's (or sub-section's) slide carries, in its
        metadata ``notes``, the paragraphs that the slides skip.
    """
    title, intro = None, ""
    slides, title_notes = [], []
    notes = title_notes
    section = None
    for cell in _main_cells(nb):
        if cell.cell_type == "markdown":
            # a student edition carries its figures as the cell's attachments
            text = _inline_attachments(to_markdown(cell.source, glue), cell.get("attachments", {}))
            heading = _HEADING.search(text)
            shown = []
            if title is None and heading and heading.group(1) == "#":
                title = heading.group(2).strip()
                intro = _first_paragraph(text[heading.end() :])
                notes.extend(_notes(text, [intro]))
                continue
            if not intro and section is None:
                intro = _first_paragraph(text[: heading.start()] if heading else text)
                shown.append(intro)
            if heading and heading.group(1) == "###":
                # a sub-section: its heading and first paragraph (or list), on a sub-slide
                sub = heading.group(2).strip()
                rest = text[heading.end() :]
                nxt = _HEADING.search(rest)
                body = rest[: nxt.start()] if nxt else rest
                lead = _first_paragraph(body) or body.strip()[:FIRST_PARAGRAPH]
                shown.append(lead)
                slides.append(
                    _slide(f"### {sub}\n\n{lead}".strip() + "\n", "subslide" if section else "slide")
                )
                notes = slides[-1].metadata.setdefault("notes", [])
            if heading and heading.group(1) == "##":
                section = heading.group(2).strip()
                if section.lower().startswith("summary"):
                    slides.append(_slide(text, "slide"))
                    continue
                lead = _first_paragraph(text[heading.end() :])
                shown.append(lead)
                slides.append(_slide(f"## {section}\n\n{lead}".strip() + "\n", "slide"))
                notes = slides[-1].metadata.setdefault("notes", [])
            notes.extend(_notes(text, shown))
            for image in _IMAGE.findall(text):
                slides.append(_slide(f"### {section or title}\n\n{image}\n", "subslide"))
            maths = [m.group(0) for m in _DISPLAY_MATH.finditer(text)]
            if maths and section:
                slides.append(_slide(f"### {section}\n\n" + "\n\n".join(maths) + "\n", "subslide"))
        elif cell.cell_type == "code":
            images = [o for o in cell.get("outputs", []) if _image(o) and not _is_glue(o)]
            if images:
                slides.append(_slide(f"### {section or title}\n", "subslide"))
                slides.append(_slide("", "-", "code", images))
                # alt text for the image: what it is a figure of (the chapter's prose describes it)
                slides[-1].metadata["alt"] = (
                    f"Figure of the section '{section or title}', drawn by the chapter's code"
                )
    if title is None:
        raise ValueError("the chapter has no title (a '# ' heading)")
    head = _slide(f"# {title}\n\n*{chapter_label}*\n\n{intro}\n", "slide")
    if title_notes:
        head.metadata["notes"] = title_notes
    return nbformat.v4.new_notebook(cells=[head, *slides], metadata=dict(nb.metadata))


def _markdown_renderer():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.amsmath import amsmath_plugin
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    md = MarkdownIt("commonmark", {"html": True}).enable("table")

    def maths(content: str, options: dict) -> str:
        return (r"\[%s\]" if options.get("display_mode") else r"\(%s\)") % html.escape(content)

    dollarmath_plugin(md, double_inline=True, renderer=maths)
    amsmath_plugin(md, renderer=html.escape)
    return md


def _cell_html(cell, md) -> str:
    if cell.cell_type == "markdown":
        return md.render(cell.source)
    alt = html.escape(cell.metadata.get("alt", "A figure of the chapter"), quote=True)
    return "".join(
        f'<img alt="{alt}" src="data:image/png;base64,{_image(o).strip()}">'
        for o in cell.outputs
        if _image(o)
    )


def deck_html(deck, title: str) -> str:
    """A deck notebook as one reveal.js page that loads only ``reveal.js/`` and ``mathjax/`` beside it.

    Args:
        deck: the notebook from ``deck_notebook``.
        title: the page's title.

    Returns:
        The HTML: a ``<section>`` per slide, its sub-slides nested, its notes as
        ``<aside class="notes">``.
    """
    md = _markdown_renderer()
    stacks: list[list[str]] = []
    for cell in deck.cells:
        kind = cell.metadata.get("slideshow", {}).get("slide_type", "-")
        if kind == "slide" or not stacks:
            stacks.append([""])
        elif kind == "subslide":
            stacks[-1].append("")
        body = _cell_html(cell, md)
        if cell.metadata.get("notes"):
            body += '<aside class="notes">' + md.render("\n\n".join(cell.metadata["notes"])) + "</aside>"
        stacks[-1][-1] += body
    sections = []
    for stack in stacks:
        inner = "".join(f"<section>{slide}</section>" for slide in stack)
        sections.append(inner if len(stack) == 1 else f"<section>{inner}</section>")
    return TEMPLATE.format(title=html.escape(title), slides="\n".join(sections))


TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>{title}</title>
<link rel="stylesheet" href="reveal.js/dist/reveal.css">
<link rel="stylesheet" href="reveal.js/dist/theme/white.css">
<style>
.reveal {{ font-size: 30px; }}
.reveal h1 {{ font-size: 1.9em; }} .reveal h2 {{ font-size: 1.4em; }} .reveal h3 {{ font-size: 1.15em; }}
.reveal h1, .reveal h2, .reveal h3 {{ text-transform: none; }}
.reveal section img {{ max-height: 520px; max-width: 100%; border: 0; box-shadow: none; }}
.reveal table {{ font-size: 0.7em; }}
.reveal p, .reveal li {{ text-align: left; }}
</style>
<script type="text/x-mathjax-config">
MathJax.Hub.Config({{tex2jax: {{inlineMath: [["\\\\(", "\\\\)"]], displayMath: [["\\\\[", "\\\\]"]],
  processEscapes: true}}, TeX: {{extensions: ["AMSmath.js", "AMSsymbols.js"]}},
  SVG: {{font: "TeX"}}, messageStyle: "none", showMathMenu: false}});
</script>
<script src="mathjax/MathJax.js?config=TeX-AMS_SVG"></script>
</head>
<body>
<div class="reveal"><div class="slides">
{slides}
</div></div>
<script src="reveal.js/dist/reveal.js"></script>
<script src="reveal.js/plugin/notes/notes.js"></script>
<script>
Reveal.initialize({{hash: true, slideNumber: "c/t", width: 1280, height: 800, plugins: [RevealNotes]}});
Reveal.on("slidechanged", () => window.MathJax && MathJax.Hub.Queue(["Typeset", MathJax.Hub]));
</script>
</body>
</html>
"""


def render(deck, path: Path) -> Path:
    """Write a deck notebook as reveal.js HTML (``deck_html``), with what it loads beside it (``vendor``).

    Args:
        deck: the notebook from ``deck_notebook``.
        path: the HTML file to write.

    Returns:
        ``path``.
    """
    title = re.match(r"# (.+)", deck.cells[0].source)
    path.parent.mkdir(parents=True, exist_ok=True)
    vendor(path.parent)
    path.write_text(deck_html(deck, title.group(1) if title else path.stem), encoding="utf-8")
    return path


def _reveal_dir() -> Path:
    spec = importlib.util.find_spec("sphinx_revealjs")
    if spec is None or spec.origin is None:
        raise RuntimeError(
            "make slides needs reveal.js from the package sphinx-revealjs: pip install -e '.[book]'"
        )
    return Path(spec.origin).parent / "_static" / "revealjs"


REVEAL_FILES = (
    "LICENSE",
    "dist/reveal.js",
    "dist/reveal.css",
    "dist/theme/white.css",
    "dist/theme/fonts/source-sans-pro",
    "plugin/notes/notes.js",
)
# MathJax 2 with TeX input and SVG output (its glyphs drawn from its own font data: no web fonts)
MATHJAX_FILES = (
    "MathJax.js",
    "config/TeX-AMS_SVG.js",
    "jax/input/TeX",
    "jax/element",
    "jax/output/SVG/jax.js",
    "jax/output/SVG/config.js",
    "jax/output/SVG/autoload",
    "jax/output/SVG/fonts/TeX",
    "extensions",
    "localization/en",
)


def _copy(source: Path, target: Path) -> None:
    if source.is_dir():
        # the browsers a deck runs in read the .woff fonts; the .eot/.ttf copies are left out
        shutil.copytree(source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.eot", "*.ttf"))
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def vendor(out: Path, mathjax: Path = MATHJAX) -> None:
    """Copy reveal.js and MathJax (the parts the decks load, with their licences) into ``out``.

    Args:
        out: the decks' folder; ``out/reveal.js/`` and ``out/mathjax/`` are written.
        mathjax: the system's ``MathJax.js`` (Debian/Ubuntu: ``apt-get install libjs-mathjax``).

    Raises:
        RuntimeError: sphinx-revealjs or MathJax is not installed.
    """
    if not mathjax.exists():
        raise RuntimeError(
            f"make slides needs MathJax 2 at {mathjax}: apt-get install libjs-mathjax (or MATHJAX=...)"
        )
    reveal = _reveal_dir()
    for name in REVEAL_FILES:
        _copy(reveal / name, out / "reveal.js" / name)
    for name in MATHJAX_FILES:
        _copy(mathjax.parent / name, out / "mathjax" / name)
    notice = Path("/usr/share/doc/libjs-mathjax/copyright")
    licence = notice if notice.exists() else mathjax.parent / "LICENSE"
    if licence.exists():
        shutil.copy2(licence, out / "mathjax" / "LICENSE")


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
    without_alt = [tag for tag in re.findall(r"<img\b[^>]*>", html) if not re.search(r'\balt="[^"]+"', tag)]
    if without_alt:
        raise ValueError(f"{len(without_alt)} images in the deck without alt text")
    if images < figures:
        raise ValueError(f"{images} images in the deck, {figures} figures in the chapter")


def executed(chapter: Path, student_dir: Path = ROOT / "student", timeout: int = 1200):
    """The executed chapter: the book's outputs if its code is unchanged, else the student edition run here.

    The book's outputs are read from its execution cache (``_build/.jupyter_cache``, by the
    chapter's code): the notebooks a build writes into ``_build/jupyter_execute`` keep no
    outputs when they come from that cache.

    Args:
        chapter: the chapter's path.
        student_dir: the student edition (``make student``).
        timeout: seconds allowed per cell when executing.

    Returns:
        ``(notebook, glue_file_or_None, where)``, ``where`` saying which source was used.
    """
    source = nbformat.read(chapter, as_version=4)
    if BOOK_CACHE.is_dir():
        from jupyter_cache import get_cache

        cache = get_cache(BOOK_CACHE)
        try:  # the cache keeps the code cells: their outputs go back into the chapter
            _, merged = cache.merge_match_into_notebook(source)
            return merged, None, "book outputs"
        except KeyError:  # not executed by the book since its code changed
            pass
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


USAGE = """usage: python -m tools.slides [CHAPTER ...]

Write _build/slides/CHAPTER.slides.html, a reveal.js deck, for every chapter or for the chapters
named by file stem (e.g. 07_sparse_outputs) or by their number prefix (e.g. 07).

chapters: {chapters}"""


def chapter_stems(names: list[str], stems: list[str]) -> list[str]:
    """The chapter stems that ``names`` (stems or their number prefix, ``07``) name.

    Raises:
        ValueError: a name that is no chapter's, with the chapters there are.

    Example:
        >>> chapter_stems(["07"], ["01_a", "07_b"])
        ['07_b']
    """
    chosen = []
    for name in names:
        found = [s for s in stems if s == name or s.split("_", 1)[0] == name or s == Path(name).stem]
        if not found:
            raise ValueError(f"no chapter {name!r}; the chapters: {', '.join(stems)}")
        chosen += [s for s in found if s not in chosen]
    return chosen


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m tools.slides [CHAPTER_STEM ...]``.

    Args:
        argv: chapter file stems (default: ``sys.argv[1:]``; none: every chapter).

    Returns:
        The exit status: 0 when the decks were written or for ``--help`` (the usage, on
        stdout); 2, with the usage and the error on stderr, for another option or a name that is
        no chapter's.
    """
    argv = sys.argv[1:] if argv is None else argv
    stems = [c.stem for c in sorted((ROOT / "chapters").glob("*.ipynb"))]
    usage = USAGE.format(chapters=", ".join(stems))
    if set(argv) & {"-h", "--help"}:
        print(usage)
        return 0
    options = [a for a in argv if a.startswith("-")]
    if options:
        print(f"{usage}\n\nerror: unknown option {options[0]!r}", file=sys.stderr)
        return 2
    try:
        names = chapter_stems(argv, stems)
    except ValueError as error:
        print(f"{usage}\n\nerror: {error}", file=sys.stderr)
        return 2
    build(names or None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
