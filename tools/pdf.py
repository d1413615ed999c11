"""The whole book as a PDF, A4 and letter: the single-page HTML build printed by headless Chromium.

``python -m tools.pdf PAGE OUT`` (run by ``tools/pdf.sh``, what ``make pdf`` runs, after the
single-page build) prints ``PAGE`` (``_build/singlehtml/intro.html``) into
``OUT/entmax-book.pdf`` (A4) and ``OUT/entmax-book-letter.pdf``. For the print the page gets:

- MathJax from the system (libjs-mathjax, MathJax 2) instead of a CDN, with SVG output, whose
  formulas sit on the text's baseline;
- a **Contents** page after the book's title page, in place of the theme's list of links:
  every chapter and its sections, with their page numbers. Chromium writes a named destination
  for each link target into the PDF; the first print gives their pages (``pdfinfo -dests``,
  poppler-utils), which are written into the contents, and a second print, whose layout is the
  same (the numbers take the room the first print reserved), is the result; the destinations
  are read again to check that they stayed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[1]

MATHJAX = Path(os.environ.get("MATHJAX", "/usr/share/javascript/mathjax/MathJax.js"))
SIZES = {"entmax-book.pdf": "A4", "entmax-book-letter.pdf": "letter"}
PLACEHOLDER = "000"

# Sphinx's MathJax 3 settings, for MathJax 2: typeset only the math (MyST-NB marks the pages
# tex2jax_ignore and the formulas "math"), quietly, as SVG.
MATHJAX_CONFIG = (
    '<script type="text/x-mathjax-config">MathJax.Hub.Config({tex2jax: {inlineMath: [["\\\\(", "\\\\)"]], '
    'displayMath: [["\\\\[", "\\\\]"]], processClass: "math|output_area|tex2jax_process", '
    'ignoreClass: "tex2jax_ignore|mathjax_ignore"}, SVG: {font: "TeX", linebreaks: {automatic: false}}, '
    'messageStyle: "none"});</script>'
)
PRINT_CSS = """
@page { size: PAPER; margin: 16mm 15mm 18mm 15mm; }
pre { white-space: pre-wrap; word-break: break-word; }
/* a cell's code moves whole to the next page rather than leave an empty box (unless it is
   longer than a page); the text uses the page's width; a formula wider than it is scaled down */
div.cell_input, div.cell_output { break-inside: avoid; }
.bd-main .bd-content .bd-article-container, .bd-page-width { max-width: none !important; }
.MathJax_SVG_Display svg { max-width: 100% !important; height: auto !important; }
#print-contents { break-before: page; break-after: page; }
#print-contents h2 { margin-bottom: 1em; }
#print-contents ol { list-style: none; padding-left: 0; margin: 0; }
#print-contents ol ol { padding-left: 1.5em; }
#print-contents li.part { margin-top: 1.2em; font-size: 0.85em; text-transform: uppercase; color: #555; }
#print-contents li.chapter { margin-top: 0.5em; font-weight: 600; }
#print-contents li.section { font-weight: normal; font-size: 0.92em; }
#print-contents a { display: flex; color: inherit; text-decoration: none; }
#print-contents .leader { flex: 1; border-bottom: 1px dotted #888; margin: 0 0.4em 0.3em; }
#print-contents .page { min-width: 2.2em; text-align: right; font-variant-numeric: tabular-nums; }
span[id^="document-"] + section { break-before: page; }
/* the site's navigation and footers are for the screen */
.bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-header-article, .prev-next-area,
.bd-footer, .bd-footer-content, footer { display: none !important; }
"""


def _heading_text(heading) -> str:
    for anchor in heading.select("a.headerlink"):
        anchor.decompose()
    return " ".join(heading.get_text(" ", strip=True).split())


def _parts(root: Path = ROOT) -> dict[str, str]:
    """Page (``chapters/notation``) -> the caption of its part in ``_toc.yml``."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    return {c["file"]: part["caption"] for part in toc.get("parts", []) for c in part.get("chapters", [])}


def contents(soup, parts: dict[str, str]) -> list[tuple[str, str, str]]:
    """The book's parts, chapters and their sections, in order: ``(level, id, title)``.

    Sphinx's single-page builder marks where each page of the toc starts with
    ``<span id="document-PAGE">``, followed by the page's ``<section>``, its headings one level
    down (a chapter's title is an ``h2``). Section ids repeat from page to page ("What you'll
    learn"), so each listed heading gets an id of its own, ``contents-N``, which the entry links.

    Args:
        soup: the single-page book (BeautifulSoup); the ids are added to it.
        parts: page -> its part's caption (``_parts``).

    Returns:
        One entry per part (level ``part``, no id), per page (``chapter``) and per section directly
        inside a page (``section``).
    """
    entries, part = [], None

    def target(heading) -> str:
        anchor = soup.new_tag("span", id=f"contents-{len(entries)}")
        heading.insert(0, anchor)
        return anchor["id"]

    for marker in soup.select('span[id^="document-"]'):
        page = marker.find_next_sibling("section")
        heading = page.find(["h1", "h2"], recursive=False) if page else None
        if heading is None:
            continue
        caption = parts.get(marker["id"].removeprefix("document-"))
        if caption and caption != part:
            entries.append(("part", "", caption))
            part = caption
        entries.append(("chapter", target(heading), _heading_text(heading)))
        for section in page.find_all("section", recursive=False):
            title = section.find(["h2", "h3"], recursive=False)
            if title is not None:
                entries.append(("section", target(title), _heading_text(title)))
    return entries


def prepare(html: str, size: str, mathjax: Path = MATHJAX) -> tuple[str, list[str]]:
    """The page ready to print: local MathJax, print CSS for ``size``, and a contents page.

    Args:
        html: the single-page build's HTML.
        size: the paper, CSS ``@page`` size: ``A4`` or ``letter``.
        mathjax: the system's ``MathJax.js``.

    Returns:
        ``(html, ids)``: the page, and the ids of the sections the contents lists, in order;
        each entry's page number is the placeholder ``000`` (see ``number_contents``).

    Raises:
        ValueError: the page does not load MathJax once, or has no chapters or no print table
            of contents.
    """
    local = f'<script async src="file://{mathjax}?config=TeX-AMS_SVG"></script>'
    html, n = re.subn(r'<script[^>]*src="https://[^"]*mathjax[^"]*"[^>]*></script>', local, html, flags=re.I)
    if n != 1:
        raise ValueError(f"expected one MathJax script in the page, found {n}")
    html, n = re.subn(r"<script>window\.MathJax = .*?</script>", lambda m: MATHJAX_CONFIG, html, flags=re.S)
    if n != 1:
        raise ValueError(f"expected Sphinx's MathJax settings in the page, found {n}")
    soup = BeautifulSoup(html, "html.parser")
    entries = contents(soup, _parts())
    if not any(level == "chapter" for level, _, _ in entries):
        raise ValueError("no chapters found in the page")
    style = soup.new_tag("style")
    style.string = PRINT_CSS.replace("PAPER", size)
    soup.head.append(style)
    # sphinx-book-theme prints a title page with the toc's links (#jb-print-toc); the
    # contents with page numbers take the links' place
    toc = soup.select_one("#jb-print-toc")
    if toc is None:
        raise ValueError("no print table of contents (#jb-print-toc) in the page")
    toc.replace_with(BeautifulSoup(_contents_html(entries), "html.parser"))
    return str(soup), [entry_id for _, entry_id, _ in entries if entry_id]


def _contents_html(entries) -> str:
    items, open_chapter = [], False
    for level, entry_id, title in entries:
        close = "</ol></li>" if open_chapter and level != "section" else ""
        if level == "part":
            items.append(f'{close}<li class="part">{title}</li>')
            open_chapter = False
            continue
        link = (
            f'<a href="#{entry_id}"><span class="title">{title}</span><span class="leader"></span>'
            f'<span class="page" data-for="{entry_id}">{PLACEHOLDER}</span></a>'
        )
        if level == "chapter":
            items.append(f'{close}<li class="chapter">{link}<ol>')
            open_chapter = True
        else:
            items.append(f'<li class="section">{link}</li>')
    end = "</ol></li>" if open_chapter else ""
    return '<nav id="print-contents"><h2>Contents</h2><ol>' + "".join(items) + end + "</ol></nav>"


def number_contents(html: str, pages: dict[str, int]) -> str:
    """Write each contents entry's page number in place of its placeholder.

    Args:
        html: the page from ``prepare``.
        pages: section id -> page number (``destinations``).

    Raises:
        ValueError: an entry whose section has no destination in the PDF.
    """

    def page(match: re.Match) -> str:
        entry_id = match.group(1)
        if entry_id not in pages:
            raise ValueError(f"the section {entry_id!r} has no destination in the PDF")
        return f'<span class="page" data-for="{entry_id}">{pages[entry_id]}</span>'

    return re.sub(rf'<span class="page" data-for="([^"]+)">{PLACEHOLDER}</span>', page, html)


def print_pdf(chromium: str, page: Path, pdf: Path) -> None:
    """Print an HTML file to PDF with headless Chromium, after MathJax has typeset it."""
    subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--allow-file-access-from-files", "--no-pdf-header-footer", "--virtual-time-budget=60000",
         "--run-all-compositor-stages-before-draw", f"--print-to-pdf={pdf}", f"file://{page.resolve()}"],
        check=True, capture_output=True,
    )  # fmt: skip


def destinations(pdf: Path) -> dict[str, int]:
    """The PDF's named destinations (link targets Chromium kept) and their pages (``pdfinfo -dests``)."""
    out = subprocess.run(["pdfinfo", "-dests", str(pdf)], check=True, capture_output=True, text=True).stdout
    lines = re.finditer(r'^\s*(\d+)\s+\[.*?\]\s+"(.*)"\s*$', out, re.M)
    return {m.group(2): int(m.group(1)) for m in lines}


def page_count(pdf: Path) -> int:
    out = subprocess.run(["pdfinfo", str(pdf)], check=True, capture_output=True, text=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", out, re.M).group(1))


def build(page: Path, out: Path, chromium: str, min_pages: int = 20) -> list[Path]:
    """Print the book in every size of ``SIZES`` into ``out``, with its contents numbered.

    Raises:
        RuntimeError: the numbers moved the layout (a destination changed page), or the PDF has
            fewer than ``min_pages`` pages (not the book).
    """
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, size in SIZES.items():
        html, ids = prepare(page.read_text(encoding="utf-8"), size)
        draft = page.with_name(f"print-{size}.html")
        draft.write_text(html, encoding="utf-8")
        pdf = out / name
        print_pdf(chromium, draft, pdf)
        first = destinations(pdf)
        draft.write_text(number_contents(html, first), encoding="utf-8")
        print_pdf(chromium, draft, pdf)
        second = destinations(pdf)
        moved = [i for i in ids if first.get(i) != second.get(i)]
        if moved:
            raise RuntimeError(f"{pdf}: numbering the contents moved {moved[:3]}")
        pages = page_count(pdf)
        if pages < min_pages:
            raise RuntimeError(f"{pdf}: not the book ({pages} pages)")
        print(f"{pdf}: {size}, {pages} pages, {len(ids)} contents entries, {pdf.stat().st_size / 1e6:.1f} MB")
        written.append(pdf)
    return written


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python -m tools.pdf PAGE OUT`` (CHROMIUM=... names the browser)."""
    page, out = (argv if argv is not None else sys.argv[1:]) or ["_build/singlehtml/intro.html", "_build/pdf"]
    chromium = os.environ.get("CHROMIUM") or next(
        (shutil.which(c) for c in ("chromium", "chromium-browser", "google-chrome") if shutil.which(c)), None
    )
    for need, hint in (
        (chromium, "chromium"),
        (MATHJAX.exists(), "libjs-mathjax"),
        (shutil.which("pdfinfo"), "poppler-utils"),
    ):
        if not need:
            sys.exit(f"make pdf needs the system package {hint}: sudo apt-get install {hint}")
    build(Path(page), Path(out), chromium)


if __name__ == "__main__":
    main()
