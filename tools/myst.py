"""MyST Markdown as the plain Markdown that Colab, Jupyter and reveal.js render.

The chapters' markdown cells use MyST roles and directives that only the book build renders. The
Colab edition (``tools/colab.py``), the student edition (``tools/student.py``) and the slides
(``tools/slides.py``) show the same prose through ``convert``:

- ``{glue:text}`name:.2f``` and ``{glue}`name``` -> the glued value as the book shows it (taken
  from an executed chapter, see ``glued_values``);
- ``{ref}``, ``{numref}``, ``{doc}`` and links to other pages -> a link into the online book,
  with the text the book shows (the section title, "Fig. N", "Exercise N");
- ``{cite}`` -> (Author, Year) and ``{cite:t}`` -> Author (Year), linked to the bibliography;
- ``{math}`` -> ``$...$``;
- ``{exercise}`` and ``{solution-start}`` -> a headed block ("#### Exercise N"), ``{solution-end}``
  -> nothing; admonitions -> a quoted block with a bold title; dropdowns -> ``<details>``;
  ``{glue:figure}`` -> the figure as a cell attachment and its caption;
- ``(label)=`` targets and ``%`` comments -> nothing.

Fenced code blocks are left alone. Any other role or directive is an error, so that a new MyST
construct in a chapter cannot reach a reader unconverted.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
GLUE_PREFIX = "application/papermill.record/"

_FENCE = re.compile(
    r"^(?P<fence>`{3,}|~{3,}|:{3,})(?P<name>\{[\w:-]+\})?(?P<arg>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$\n?",
    re.M | re.S,
)
_OPTION = re.compile(r"^:([\w-]+):[ \t]*(.*?)[ \t]*$\n?", re.M)
_ROLE = re.compile(r"\{(?P<name>[\w:-]+)\}`(?P<content>[^`]+)`")
_TARGET = re.compile(r"^\(([\w-]+)\)=[ \t]*$\n?", re.M)
_COMMENT = re.compile(r"^%.*$\n?", re.M)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*$", re.M)
_PAGE_LINK = re.compile(r"\]\((?!https?:|#|mailto:)(?P<path>[^)#\s]+?)\.(?:ipynb|md)(?P<anchor>#[^)\s]*)?\)")
# A role or directive that survived conversion: what the tests look for in the editions.
LEFTOVER = re.compile(r"\{[\w:-]+\}`|^(`{3,}|:{3,})\{[\w:-]+\}|^\([\w-]+\)=\s*$", re.M)

ADMONITIONS = (
    "note",
    "tip",
    "hint",
    "important",
    "warning",
    "caution",
    "attention",
    "danger",
    "error",
    "seealso",
)


def book_config(root: Path = ROOT) -> dict:
    """The book's ``_config.yml``."""
    return yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))


def book_url(root: Path = ROOT) -> str:
    """The online book's address, the GitHub Pages site of ``_config.yml``'s repository.

    Example: ``https://github.com/owner/name`` -> ``https://owner.github.io/name/``.
    """
    url = book_config(root)["repository"]["url"].rstrip("/")
    owner, name = url.split("github.com/")[1].split("/")[:2]
    return f"https://{owner}.github.io/{name}/"


def code_hash(nb) -> str:
    """A short fingerprint of a notebook's code cells: equal code, equal glued values."""
    code = "\n\x00".join(c.source for c in nb.cells if c.cell_type == "code")
    return hashlib.sha256(code.encode("utf-8")).hexdigest()[:16]


@dataclass
class Target:
    """Where a label points: a page (``chapters/02_gradients``), an anchor and the text a ref shows."""

    page: str
    anchor: str
    text: str


@dataclass
class Book:
    """What links resolve against: the labels of every page and the bibliography.

    Attributes:
        url: the online book's address.
        labels: label -> Target.
        bib: citation key -> (authors as the book cites them, year).
        exercises: exercise label -> its number in the book (sphinx-exercise numbers them in
            table-of-contents order).
    """

    url: str
    labels: dict[str, Target] = field(default_factory=dict)
    bib: dict[str, tuple[str, str]] = field(default_factory=dict)
    exercises: dict[str, int] = field(default_factory=dict)

    def link(self, page: str, anchor: str = "") -> str:
        return f"{self.url}{page}.html" + (f"#{anchor}" if anchor else "")


def _page_markdown(path: Path) -> list[str]:
    import nbformat

    if path.suffix == ".ipynb":
        nb = nbformat.read(path, as_version=4)
        return [c.source for c in nb.cells if c.cell_type == "markdown"]
    return [path.read_text(encoding="utf-8")]


def _toc_pages(root: Path) -> list[str]:
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    pages = [toc["root"]]
    for part in toc.get("parts", []):
        pages += [chapter["file"] for chapter in part.get("chapters", [])]
    return pages


def _source(root: Path, page: str) -> Path:
    for suffix in (".ipynb", ".md"):
        if (root / (page + suffix)).exists():
            return root / (page + suffix)
    raise FileNotFoundError(f"no source for the page {page!r} of _toc.yml")


def _bibliography(path: Path) -> dict[str, tuple[str, str]]:
    from pybtex.database import parse_file

    bib = {}
    for key, entry in parse_file(str(path)).entries.items():
        people = entry.persons.get("author", [])
        last = [" ".join(p.prelast_names + p.last_names).replace("{", "").replace("}", "") for p in people]
        if not last:
            authors = entry.fields.get("title", key).replace("{", "").replace("}", "")
        elif len(last) == 1:
            authors = last[0]
        elif len(last) == 2:
            authors = f"{last[0]} and {last[1]}"
        else:
            authors = f"{last[0]} et al."
        bib[key] = (authors, entry.fields.get("year", "n.d."))
    return bib


def load_book(root: Path = ROOT) -> Book:
    """Read every page of ``_toc.yml`` for its labels, and ``references.bib``.

    Args:
        root: the book's folder.

    Returns:
        The ``Book`` that ``convert`` resolves roles against.
    """
    book = Book(book_url(root), bib=_bibliography(root / "references.bib"))
    number = 0
    for page in _toc_pages(root):
        figures = 0
        for text in _page_markdown(_source(root, page)):
            text = _FENCE.sub(lambda m: m.group(0) if m.group("name") else "", text)
            for match in _TARGET.finditer(text):
                heading = _HEADING.match(text, match.end())
                title = heading.group(2) if heading else match.group(1)
                top = heading is not None and heading.group(1) == "#"
                book.labels[match.group(1)] = Target(page, "" if top else match.group(1), title)
            for match in re.finditer(r"^(`{3,}|:{3,})\{exercise\}[^\n]*\n(.*?)^\1", text, re.M | re.S):
                number += 1
                label = re.search(r"^:label:[ \t]*(\S+)", match.group(2), re.M)
                if label:
                    book.exercises[label.group(1)] = number
                    book.labels[label.group(1)] = Target(page, label.group(1), f"Exercise {number}")
            # Sphinx numbers a page's figures from 1 ("Fig. 1"), the toc being unnumbered
            for match in re.finditer(
                r"^(`{3,}|:{3,})\{(?:glue:)?figure\}[^\n]*\n(.*?)^\1", text, re.M | re.S
            ):
                figures += 1
                name = re.search(r"^:name:[ \t]*(\S+)", match.group(2), re.M)
                if name:
                    book.labels[name.group(1)] = Target(page, name.group(1), f"Fig. {figures}")
    return book


def glued_outputs(nb=None, glue_file: Path | None = None) -> dict[str, dict]:
    """The outputs a chapter glued (MyST-NB's ``glue``), by name.

    A notebook executed by nbclient keeps them among its outputs; the book build moves them into
    ``_build/jupyter_execute/<page>.glue.json``.

    Args:
        nb: an executed notebook (nbformat), or None.
        glue_file: the build's ``.glue.json`` of the chapter, or None.

    Returns:
        name -> the output's data, MIME type (without papermill's prefix) -> value as a string.
    """
    outputs = []
    if glue_file is not None:
        outputs += json.loads(glue_file.read_text(encoding="utf-8")).values()
    if nb is not None:
        outputs += [o for cell in nb.cells for o in cell.get("outputs", [])]
    glued = {}
    for output in outputs:
        name = output.get("metadata", {}).get("scrapbook", {}).get("name")
        if name:
            glued[name] = {
                mime.removeprefix(GLUE_PREFIX): "".join(v) if isinstance(v, list) else v
                for mime, v in output.get("data", {}).items()
            }
    return glued


def format_glue(text: str, spec: str) -> str:
    """A glued value as ``{glue:text}`name:spec``` shows it.

    >>> format_glue("0.6712", ".2f"), format_glue("'holds'", "")
    ('0.67', 'holds')
    """
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    return format(float(text), spec) if spec else text


@dataclass
class Page:
    """The page being converted and what its conversion used.

    Attributes:
        name: its path in the book without suffix, e.g. ``chapters/04_sparse_self_attention``.
        glue: the chapter's glued outputs (``glued_outputs``): name -> MIME type -> value.
        used: the glue names the converted text quotes (filled by ``convert``).
        attachments: per converted cell, the figures it shows (filled by ``convert``).
    """

    name: str
    glue: dict[str, dict]
    used: set[str] = field(default_factory=set)
    attachments: dict[str, dict] = field(default_factory=dict)


def _role(match: re.Match, book: Book, page: Page) -> str:
    name, content = match.group("name"), match.group("content")
    if name in ("glue", "glue:text", "glue:"):
        key, _, spec = content.partition(":")
        if "text/plain" not in page.glue.get(key, {}):
            raise ValueError(f"{page.name}: no glued value {key!r} in the executed chapter")
        page.used.add(key)
        return format_glue(page.glue[key]["text/plain"], spec)
    if name in ("ref", "numref", "doc"):
        explicit = re.fullmatch(r"(.+?)\s*<([^>]+)>", content, re.S)
        text, label = (explicit.group(1), explicit.group(2)) if explicit else (None, content)
        if name == "doc":
            target = Target(label.removesuffix(".md").removesuffix(".ipynb"), "", text or label)
        elif label not in book.labels:
            raise ValueError(f"{page.name}: {{{name}}}`{content}`: no such label in the book")
        else:
            target = book.labels[label]
        if text is None:
            text = target.text
        return f"[{text}]({book.link(target.page, target.anchor)})"
    if name in ("cite", "cite:p", "cite:t", "cite:ps", "cite:ts"):
        keys = [k.strip() for k in content.split(",")]
        missing = [k for k in keys if k not in book.bib]
        if missing:
            raise ValueError(f"{page.name}: no bibliography entry for {missing}")
        link = book.link("bibliography")
        if name.startswith("cite:t"):
            return "; ".join(f"[{book.bib[k][0]} ({book.bib[k][1]})]({link})" for k in keys)
        return "(" + "; ".join(f"[{book.bib[k][0]}, {book.bib[k][1]}]({link})" for k in keys) + ")"
    if name == "math":
        return f"${content}$"
    raise ValueError(f"{page.name}: the MyST role {{{name}}} has no plain Markdown form here")


def _inline(text: str, book: Book, page: Page) -> str:
    text = _TARGET.sub("", text)
    text = _COMMENT.sub("", text)
    text = _ROLE.sub(lambda m: _role(m, book, page), text)

    def page_link(match: re.Match) -> str:
        base = page.name.rsplit("/", 1)[0] + "/" if "/" in page.name else ""
        target = (Path(base) / match.group("path")).as_posix()
        return f"]({book.link(target, (match.group('anchor') or '#')[1:])})"

    return _PAGE_LINK.sub(page_link, text)


def _directive(match: re.Match, book: Book, page: Page, cell_key: str) -> str:
    name = match.group("name")[1:-1]
    arg = match.group("arg").strip()
    options = dict(_OPTION.findall(match.group("body")))
    body = _OPTION.sub("", match.group("body"), count=0).strip("\n")
    body = convert(body, book, page, cell_key) if name not in ("math",) else body
    if name == "exercise":
        number = book.exercises.get(options.get("label", ""), "")
        title = f"#### Exercise {number}".rstrip() + (f" ({arg})" if arg else "")
        return f"{title}\n\n{body}\n"
    if name == "solution-start":
        number = book.exercises.get(arg, "")
        return f"#### Solution to Exercise {number}\n\n"
    if name == "solution-end":
        return ""
    if name == "glue":  # a glued table (Markdown) of the same chapter, written out as it is
        markdown = page.glue.get(arg, {}).get("text/markdown")
        if markdown is None:
            raise ValueError(f"{page.name}: no glued Markdown {arg!r} in the executed chapter")
        page.used.add(arg)
        return markdown.strip() + "\n"
    if name == "glue:figure":
        if "image/png" not in page.glue.get(arg, {}):
            raise ValueError(f"{page.name}: no glued figure {arg!r} in the executed chapter")
        page.used.add(arg)
        attachment = f"{arg}.png"
        png = page.glue[arg]["image/png"].strip()
        page.attachments.setdefault(cell_key, {})[attachment] = {"image/png": png}
        caption = " ".join(body.split())
        return f"![{caption}](attachment:{attachment})\n\n*{caption}*\n"
    if name == "math":
        return f"$$\n{body}\n$$\n"
    if name == "dropdown" or "dropdown" in options.get("class", ""):
        summary = arg or name.capitalize()
        return f"<details>\n<summary>{summary}</summary>\n\n{body}\n\n</details>\n"
    if name in ADMONITIONS or name == "admonition":
        title = arg if name == "admonition" else name.capitalize() + (f": {arg}" if arg else "")
        quoted = "\n".join("> " + line if line else ">" for line in body.splitlines())
        return f"> **{title}**\n>\n{quoted}\n"
    raise ValueError(f"{page.name}: the MyST directive {{{name}}} has no plain Markdown form here")


def convert(text: str, book: Book, page: Page, cell_key: str = "") -> str:
    """One markdown cell's MyST as plain Markdown (see the module's docstring).

    Args:
        text: the cell's source.
        book: the labels and bibliography (``load_book``).
        page: the page and its glued values; the glue names used and the figures to attach
            (under ``cell_key``) are added to it.
        cell_key: a key for this cell's attachments in ``page.attachments``.

    Returns:
        The converted text.

    Raises:
        ValueError: a role or directive without a plain form, or a label, citation key or
            glued value that does not exist.
    """
    out, last = [], 0
    for match in _FENCE.finditer(text):
        out.append(_inline(text[last : match.start()], book, page))
        if match.group("name"):
            out.append(_directive(match, book, page, cell_key))
        else:
            out.append(match.group(0))  # a code block: verbatim
        last = match.end()
    out.append(_inline(text[last:], book, page))
    converted = "".join(out)
    return re.sub(r"\n{3,}", "\n\n", converted).strip("\n") + "\n"
