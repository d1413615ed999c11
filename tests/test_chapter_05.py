"""Chapter 5 reads as a story (fast: the notebook is parsed, not run).

- Its visible code stays short: at most :data:`MAX_VISIBLE_LINES` lines in all and
  :data:`MAX_CELL_LINES` in any one cell. A code cell is visible unless it is tagged
  ``remove-cell`` (the book's only hiding tag, see ``test_book.py``); every line counts, blank
  lines and comments included. The code that builds tables and claims lives in
  ``entmax_book.translation`` (``report``, ``measures``), tested there.
- It opens with its takeaways, right after "What you'll learn".
- No markdown glues a verdict word: the text writes "holds", "not shown", … itself, and each
  verdict word the text writes is asserted by a hidden cell.
"""

import json
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "chapters" / "05_adaptively_sparse_transformers.ipynb"
MAX_VISIBLE_LINES, MAX_CELL_LINES = 450, 40
VERDICT_WORDS = ("holds", "suggestive", "not shown", "reversed")


def cells():
    return json.loads(CHAPTER.read_text("utf-8"))["cells"]


def source(cell):
    return "".join(cell["source"])


def hidden(cell):
    return "remove-cell" in cell.get("metadata", {}).get("tags", [])


def visible_code_lines(notebook_cells):
    """{cell index: number of lines} of the code cells a reader sees."""
    return {
        i: len(source(c).splitlines())
        for i, c in enumerate(notebook_cells)
        if c["cell_type"] == "code" and not hidden(c)
    }


def test_visible_code_within_the_limits():
    lines = visible_code_lines(cells())
    assert sum(lines.values()) <= MAX_VISIBLE_LINES, f"{sum(lines.values())} visible code lines"
    long = {i: n for i, n in lines.items() if n > MAX_CELL_LINES}
    assert not long, f"visible code cells over {MAX_CELL_LINES} lines (cell: lines): {long}"


def test_the_count_sees_visible_cells_only():
    code = {"cell_type": "code", "metadata": {}, "source": ["a = 1\n", "\n", "b = 2"]}
    tagged = {**code, "metadata": {"tags": ["remove-cell"]}}
    text = {"cell_type": "markdown", "metadata": {}, "source": ["x\n", "y"]}
    assert visible_code_lines([code, tagged, text, code]) == {0: 3, 3: 3}


def headings(notebook_cells):
    return [
        line
        for c in notebook_cells
        if c["cell_type"] == "markdown"
        for line in source(c).splitlines()
        if line.startswith("## ")
    ]


def test_takeaways_come_right_after_what_you_will_learn():
    found = headings(cells())
    assert found[:2] == ["## What you'll learn", "## Takeaways"], found[:3]


def takeaways(notebook_cells):
    texts = [source(c) for c in notebook_cells if c["cell_type"] == "markdown"]
    return next(t for t in texts if "## Takeaways" in t)


def test_no_markdown_glues_a_verdict_word():
    """Neither the chapter nor the findings page pastes a verdict word: the author writes it."""
    texts = [source(c) for c in cells() if c["cell_type"] == "markdown"]
    texts.append((ROOT / "chapters" / "findings.md").read_text(encoding="utf-8"))
    glued = [m.group(0) for t in texts for m in re.finditer(r"\{glue:?\w*\}`([\w.]+::)?verdict\w*[^`]*`", t)]
    assert not glued, f"verdict words glued into the text (write them, check them in a hidden cell): {glued}"


def test_each_verdict_word_of_the_takeaways_is_asserted_by_a_hidden_cell():
    notebook_cells = cells()
    written = {w for w in VERDICT_WORDS if re.search(rf"\b{w}\b", takeaways(notebook_cells))}
    assert {"holds", "not shown"} <= written, f"the takeaways state verdicts: {written}"
    checks = "\n".join(source(c) for c in notebook_cells if c["cell_type"] == "code" and hidden(c))
    asserted = {w for w in VERDICT_WORDS if re.search(rf'assert verdict\[.*"{w}"', checks)}
    assert written <= asserted, f"written but never asserted: {written - asserted}"
