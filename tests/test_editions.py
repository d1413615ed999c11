"""The editions made from the chapters: the Colab edition (tools/colab.py), the student edition
(tools/student.py), both through the MyST converter (tools/myst.py), and the slides (tools/slides.py).

The editions must match the chapters as they are now and carry no MyST: a reader in Colab or plain
Jupyter sees numbers, links and (Author, Year) where the book does, never a role or a directive.
The numbers they quote are recorded in each notebook (metadata ``entmax_book``) with the
fingerprint of the code that computed them; a fresh execution of a chapter must give them again.
The student edition keeps no line of any solution and leaves a stub for every exercise; its
notebooks run up to their first exercise because their code up to there is the chapter's own.
"""

import ast
import base64
import copy
import re
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest

# The editions are made with the book's tools (the `book` extra: MyST's parser, pybtex for the
# bibliography), which Colab's floor environment of the library and the chapters does not install.
pytest.importorskip("pybtex", reason="the editions need the book's tools: pip install -e '.[book]'")

from tools import colab, myst, slides, student  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
BOOK = myst.load_book()


def _read(path):
    return nbformat.read(path, as_version=4)


# ----------------------------------------------------------------------------------------
# The student edition
# ----------------------------------------------------------------------------------------


def _solution_parts(nb):
    """The chapter's solutions, found independently of tools/student.py: every code cell and every
    markdown line between a solution-start and the next solution-end directive."""
    code, prose, outside = [], [], []
    inside = False
    for cell in nb.cells:
        if cell.cell_type == "code":
            (code if inside else outside).append(cell.source)
            continue
        text = cell.source
        while True:
            marker = "{solution-end}" if inside else "{solution-start}"
            at = text.find(marker)
            piece = text if at < 0 else text[:at]
            (prose if inside else outside).append(piece)
            if at < 0:
                break
            inside = not inside
            text = text[at + len(marker) :]
    assert not inside, "a solution without its end"
    return code, prose, "\n".join(outside)


def _lines(sources, minimum=12):
    return {line.strip() for s in sources for line in s.splitlines() if len(line.strip()) >= minimum}


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    """The student edition of the chapters as they are now (the committed copy is checked apart)."""
    out = tmp_path_factory.mktemp("student")
    student.build(out)
    return out


@pytest.mark.slow
def test_committed_student_edition_is_what_make_student_writes(tmp_path):
    student.build(tmp_path)
    committed = sorted(p.name for p in (ROOT / "student").glob("*.ipynb"))
    assert committed == sorted(p.name for p in tmp_path.glob("*.ipynb")) == [p.name for p in CHAPTERS]
    for name in [*committed, "README.md"]:
        assert (tmp_path / name).read_text("utf-8") == (ROOT / "student" / name).read_text("utf-8"), (
            f"student/{name} is out of date: run `make student` and commit student/"
        )


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_no_solution_survives(chapter, edition):
    nb = _read(chapter)
    code, prose, outside = _solution_parts(nb)
    notebook = _read(edition / chapter.name)
    text = "\n".join(c.source for c in notebook.cells)
    # every solution line long enough to be telling, that the rest of the chapter does not also
    # contain, is gone (a stub keeps only a solution's `def` lines and their decorators)
    outside_lines, student_lines = _lines([outside]), _lines([text])
    leaked = [
        line
        for line in _lines(code) | _lines(prose)
        if line not in outside_lines and not line.startswith(("def ", "@")) and line in student_lines
    ]
    assert len(_lines(code) - outside_lines) > 0 or not code  # the check has something to check
    assert not leaked, f"solution lines in student/{chapter.name}: {leaked[:3]}"
    assert "{solution-start}" not in text and "{solution-end}" not in text
    assert not any("remove-cell" in c.metadata.get("tags", []) for c in notebook.cells if c.source in code)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_every_exercise_has_its_answer_cells(chapter, edition):
    source = chapter.read_text("utf-8")
    labels = re.findall(r":label: ([\w-]+-ex\d+)", source)
    notebook = _read(edition / chapter.name)
    answers = [c for c in notebook.cells if "exercise" in c.metadata.get("tags", [])]
    numbers = {f"Exercise {BOOK.exercises[label]}": label for label in labels}
    answered = [numbers[re.search(r"Exercise \d+", c.source).group(0)] for c in answers]
    assert sorted(set(answered)) == sorted(labels)
    code_stubs = [c for c in answers if c.cell_type == "code"]
    for stub in code_stubs:
        ast.parse(stub.source)  # a stub is valid Python
        body = [line for line in stub.source.splitlines() if line.strip() and not line.startswith("#")]
        assert all(
            line.startswith(("def ", "@")) or line.strip() in ("...", "raise NotImplementedError")
            for line in body
        ), stub.source


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda p: p.stem)
def test_student_notebook_opens_and_runs_like_the_chapter_up_to_the_first_exercise(chapter, edition):
    notebook = _read(edition / chapter.name)
    nbformat.validate(notebook)
    assert student.colab_url(f"student/{chapter.name}") in notebook.cells[0].source
    first = next(
        (i for i, c in enumerate(notebook.cells) if "exercise" in c.metadata.get("tags", [])),
        len(notebook.cells),
    )
    before = [c.source for c in notebook.cells[:first] if c.cell_type == "code"]
    cells = _read(chapter).cells
    first_exercise = next(
        (i for i, c in enumerate(cells) if c.cell_type == "markdown" and "{exercise}" in c.source), len(cells)
    )
    # the same code, in the same order, as the chapter that nbval runs cell by cell
    assert before == [c.source for c in cells[:first_exercise] if c.cell_type == "code"]


def test_split_chapter_handles_shared_cells():
    # A solution's start in the exercise's cell, its end in the next exercise's cell, prose only.
    cells = [
        nbformat.v4.new_markdown_cell(
            "## Ex\n\n```{exercise}\n:label: chX-ex1\n\nDo A.\n```\n\n```{solution-start} chX-ex1\n"
            ":class: dropdown\n```\n\nSecret prose A."
        ),
        nbformat.v4.new_code_cell("secret_code_a = 1"),
        nbformat.v4.new_code_cell("assert secret_code_a", metadata={"tags": ["remove-cell"]}),
        nbformat.v4.new_markdown_cell(
            "```{solution-end}\n```\n\n```{exercise}\n:label: chX-ex2\n\nDo B.\n```\n\n"
            "```{solution-start} chX-ex2\n:class: dropdown\n```\n\nSecret B.\n\n"
            "```{solution-end}\n```\n\nAfter."
        ),
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    out, solutions = student.split_chapter(nb)
    text = "\n".join(c.source for c in out)
    assert [s.label for s in solutions] == ["chX-ex1", "chX-ex2"]
    assert solutions[0].code == ["secret_code_a = 1"] and solutions[0].checks == ["assert secret_code_a"]
    assert "Secret" not in text and "secret_code_a" not in text
    assert "```{exercise}\n:label: chX-ex1" in text and "Do B." in text and text.rstrip().endswith("After.")
    assert "*Your answer to exercise chX-ex1:*" in text
    assert "*Your answer to Exercise 7:*" in "".join(
        c.source for c in student.split_chapter(nb, {"chX-ex1": 7})[0]
    )
    assert [c.cell_type for c in out if "exercise" in c.metadata.get("tags", [])] == [
        "markdown",
        "code",
        "markdown",
    ]
    broken = copy.deepcopy(nb)
    broken.cells = broken.cells[:3]
    with pytest.raises(ValueError, match="never ends"):
        student.split_chapter(broken)


def test_stub_keeps_signatures_and_decorators_only():
    stub = student._stub(
        "chX-ex1", ['import numpy as np\n\n\ndef f(z, n=3):\n    """Doc."""\n    return z\n']
    )
    assert "def f(z, n=3):" in stub and "raise NotImplementedError" in stub
    assert "return z" not in stub and "Doc." not in stub and "import numpy" not in stub
    assert student._stub("chX-ex2", ["x = 1"]).rstrip().endswith("...")
    decorated = "f = jax.custom_jvp(g)\n\n\n@f.defjvp\ndef _(primals, tangents):\n    return g(*primals), 0\n"
    stub = student._stub("Exercise 1", [decorated])
    assert "@f.defjvp\ndef _(primals, tangents):\n    raise NotImplementedError" in stub
    assert "custom_jvp" not in stub and "return" not in stub


def test_chapter_3_exercise_2_stub_keeps_its_defjvp_decorators(edition):
    stubs = [
        c.source
        for c in _read(edition / "03_implementing_entmax_lib.ipynb").cells
        if c.cell_type == "code" and "exercise" in c.metadata.get("tags", [])
    ]
    (stub,) = [s for s in stubs if f"Exercise {BOOK.exercises['ch3-ex2']}:" in s]
    assert stub.count("def _(primals, tangents):") == 2
    assert "@calls_itself.defjvp\ndef _(primals, tangents):" in stub
    assert "@calls_raw.defjvp\ndef _(primals, tangents):" in stub


# ----------------------------------------------------------------------------------------
# The MyST converter
# ----------------------------------------------------------------------------------------

TOY_BOOK = myst.Book(
    "https://example.org/book/",
    labels={
        "sec-a": myst.Target("chapters/01_x", "sec-a", "1.1 A section"),
        "chap-x": myst.Target("chapters/01_x", "", "1. X"),
        "fig-a": myst.Target("chapters/01_x", "fig-a", "Fig. 1"),
    },
    bib={"k1": ("Martins and Astudillo", "2016"), "k2": ("Peters et al.", "2019")},
    exercises={"ch1-ex1": 3},
)


def _toy_page():
    return myst.Page("chapters/01_x", {"gap": {"text/plain": "0.6712"}, "word": {"text/plain": "'holds'"}})


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("{glue:text}`gap:.2f` and {glue:text}`word`", "0.67 and holds"),
        ("{glue}`gap`", "0.6712"),
        ("see {ref}`sec-a`", "see [1.1 A section](https://example.org/book/chapters/01_x.html#sec-a)"),
        ("{ref}`the start <chap-x>`", "[the start](https://example.org/book/chapters/01_x.html)"),
        ("{numref}`fig-a`", "[Fig. 1](https://example.org/book/chapters/01_x.html#fig-a)"),
        ("{cite}`k1`", "([Martins and Astudillo, 2016](https://example.org/book/bibliography.html))"),
        (
            "{cite}`k1,k2`",
            "([Martins and Astudillo, 2016](https://example.org/book/bibliography.html); "
            "[Peters et al., 2019](https://example.org/book/bibliography.html))",
        ),
        ("{cite:t}`k2`", "[Peters et al. (2019)](https://example.org/book/bibliography.html)"),
        ("{math}`x^2`", "$x^2$"),
        ("[Chapter 2](02_y.ipynb)", "[Chapter 2](https://example.org/book/chapters/02_y.html)"),
        ("(sec-a)=\n## 1.1 A section\n% a comment\nText.", "## 1.1 A section\nText."),
        ("```{exercise}\n:label: ch1-ex1\n\nDo {glue:text}`gap:.1f`.\n```", "#### Exercise 3\n\nDo 0.7."),
        (
            "```{solution-start} ch1-ex1\n:class: dropdown\n```\nWhy.\n```{solution-end}\n```",
            "#### Solution to Exercise 3\n\nWhy.",
        ),
        (
            "```{note}\nMind {cite}`k2`.\n```",
            "> **Note**\n>\n> Mind ([Peters et al., 2019](https://example.org/book/bibliography.html)).",
        ),
        ("```{dropdown} More\nHidden.\n```", "<details>\n<summary>More</summary>\n\nHidden.\n\n</details>"),
        ("```python\nx = {ref}`sec-a`\n```", "```python\nx = {ref}`sec-a`\n```"),
    ],
)
def test_convert_gives_plain_markdown(source, expected):
    assert myst.convert(source, TOY_BOOK, _toy_page()) == expected + "\n"


def test_convert_attaches_a_glued_figure_and_records_what_it_used():
    page = myst.Page("chapters/01_x", {"fig": {"image/png": "iVBO\n"}, "gap": {"text/plain": "1.0"}})
    text = myst.convert(
        "```{glue:figure} fig\n:name: fig-a\n\nThe caption.\n```\n{glue}`gap`", TOY_BOOK, page, "c1"
    )
    assert text.startswith("![The caption.](attachment:fig.png)") and "*The caption.*" in text
    assert page.attachments == {"c1": {"fig.png": {"image/png": "iVBO"}}} and page.used == {"fig", "gap"}


def test_convert_writes_out_a_glued_table():
    table = "| a | b |\n|---|---|\n| 1 | 2 |\n"
    page = myst.Page("chapters/01_x", {"tab": {"text/markdown": table, "text/plain": "<Markdown>"}})
    assert myst.convert("Rows:\n\n```{glue} tab\n```\n", TOY_BOOK, page, "c1") == f"Rows:\n\n{table}"
    assert page.used == {"tab"}
    with pytest.raises(ValueError, match="no glued Markdown 'gap'"):
        myst.convert("```{glue} gap\n```", TOY_BOOK, _toy_page())


def test_an_edition_records_its_glued_tables_for_a_checkout_without_a_build():
    table = "| a | b |\n|---|---|\n| 1 | 2 |\n"
    glue = {"tab": {"text/markdown": table, "text/plain": "<Markdown>"}, "gap": {"text/plain": "1.0"}}
    page = myst.Page("chapters/01_x", glue)
    myst.convert("```{glue} tab\n```\n{glue}`gap`", TOY_BOOK, page, "c1")
    nb = nbformat.v4.new_notebook()
    colab.record(nb, "chapters/01_x.ipynb", "hash", page)
    assert nb.metadata[colab.META]["glue"] == {"gap": "1.0"}
    recorded = colab.recorded_glue(nb)
    assert recorded == {"gap": {"text/plain": "1.0"}, "tab": {"text/markdown": table}}
    again = myst.Page("chapters/01_x", recorded)
    assert myst.convert("```{glue} tab\n```", TOY_BOOK, again, "c1") == table


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("{glue:text}`missing:.2f`", "no glued value 'missing'"),
        ("{ref}`nowhere`", "no such label"),
        ("{cite}`k9`", "no bibliography entry"),
        ("{term}`entropy`", "role {term}"),
        ("```{tabs}\nx\n```", "directive {tabs}"),
    ],
)
def test_convert_refuses_what_it_cannot_render(source, error):
    with pytest.raises(ValueError, match=re.escape(error)):
        myst.convert(source, TOY_BOOK, _toy_page())


def test_book_labels_and_bibliography_are_the_books():
    assert BOOK.labels["ch2-jacobian"].page == "chapters/02_gradients"
    assert BOOK.labels["chap-gradients"].anchor == ""  # a chapter's label is its page
    assert BOOK.bib["martins2016sparsemax"] == ("Martins and Astudillo", "2016")
    assert BOOK.bib["correia2019adaptively"] == ("Correia et al.", "2019")
    assert BOOK.bib["dacosta_qjax"] == ("da Costa", "n.d.")  # as the book cites it
    assert BOOK.labels["ch4-fig-dilution"].text == "Fig. 1"  # numbered in page order
    assert BOOK.labels["ch4-demo-figure"].text == "Fig. 2"
    assert BOOK.bib["entmax_package"] == ("DeepSPIN", "2019")  # apart from Peters et al. (2019)
    # Exercises are numbered through the book in the order of the toc (the statistics primer's
    # come between Chapter 3's and Chapter 4's).
    sources = [next(ROOT.glob(f"{page}.*")) for page in myst._toc_pages(ROOT)]
    labels = [
        label for source in sources for label in re.findall(r":label: ([\w-]+-ex\d+)", source.read_text())
    ]
    assert "stats-ex1" in labels
    assert [BOOK.exercises[label] for label in labels] == list(range(1, len(labels) + 1))


# ----------------------------------------------------------------------------------------
# The Colab edition
# ----------------------------------------------------------------------------------------

COLAB = sorted((ROOT / colab.EDITION).glob("*.ipynb"))
EDITIONS = [*COLAB, *sorted((ROOT / "student").glob("*.ipynb"))]


@pytest.mark.slow
def test_committed_colab_edition_is_what_make_colab_writes(tmp_path):
    colab.build(tmp_path)
    assert (
        [p.name for p in COLAB]
        == sorted(p.name for p in tmp_path.glob("*.ipynb"))
        == [p.name for p in CHAPTERS]
    )
    for path in COLAB:
        assert (tmp_path / path.name).read_text("utf-8") == path.read_text("utf-8"), (
            f"colab/{path.name} is out of date: run `make colab` and commit colab/"
        )


@pytest.mark.parametrize("path", EDITIONS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_an_edition_carries_no_myst(path):
    for cell in _read(path).cells:
        if cell.cell_type == "markdown":
            prose = re.sub(r"^```.*?^```", "", cell.source, flags=re.M | re.S)  # code blocks stay as written
            assert not myst.LEFTOVER.search(prose), (
                f"MyST left in {path.parent.name}/{path.name}: {cell.source[:200]!r}"
            )


@pytest.mark.parametrize("path", EDITIONS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_an_edition_records_the_values_it_quotes_from_the_chapters_current_code(path):
    nb = _read(path)
    chapter = _read(ROOT / "chapters" / path.name)
    recorded = nb.metadata[colab.META]
    assert recorded["chapter"] == f"chapters/{path.name}"
    assert recorded["code"] == myst.code_hash(chapter), (
        f"{path}: the chapter's code changed: make book, then make colab student"
    )
    source = "\n".join(c.source for c in chapter.cells if c.cell_type == "markdown")
    quoted = {m.split(":")[0] for m in re.findall(r"\{glue(?::text)?\}`([^`]+)`", source)}
    assert set(recorded["glue"]) <= quoted


def test_the_colab_edition_quotes_every_glued_value_of_the_chapter():
    for path in COLAB:
        source = "\n".join(
            c.source for c in _read(ROOT / "chapters" / path.name).cells if c.cell_type == "markdown"
        )
        quoted = {m.split(":")[0] for m in re.findall(r"\{glue(?::text)?\}`([^`]+)`", source)}
        assert quoted <= set(_read(path).metadata[colab.META]["glue"]), path.name


@pytest.mark.parametrize("path", COLAB, ids=lambda p: p.stem)
def test_colab_edition_values_are_the_book_builds(path):
    """Where `make book` has run on the chapter's current code, the edition quotes its values."""
    executed = colab.BOOK_OUTPUTS / path.name
    if not executed.exists() or myst.code_hash(_read(executed)) != myst.code_hash(
        _read(ROOT / "chapters" / path.name)
    ):
        pytest.skip("no book build of this chapter's current code")
    glue_file = colab.BOOK_OUTPUTS / f"{path.stem}.glue.json"
    built = myst.glued_outputs(None, glue_file if glue_file.exists() else None)
    for name, text in _read(path).metadata[colab.META]["glue"].items():
        assert built[name]["text/plain"] == text, name


@pytest.mark.slow
def test_colab_edition_values_match_a_fresh_execution_of_the_chapter(tmp_path):
    """Chapter 1's glued values, computed again by nbclient, are those its Colab edition quotes."""
    from nbclient import NotebookClient

    chapter = _read(ROOT / "chapters" / "01_softmax_to_entmax.ipynb")
    NotebookClient(
        chapter, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    fresh = myst.glued_outputs(chapter)
    recorded = _read(ROOT / colab.EDITION / "01_softmax_to_entmax.ipynb").metadata[colab.META]["glue"]
    assert len(recorded) >= 4
    for name, text in recorded.items():
        value = fresh[name]["text/plain"]
        try:
            assert float(value) == pytest.approx(float(text), rel=1e-6, abs=1e-9), name
        except ValueError:
            assert value == text, name


def test_launch_button_opens_the_colab_edition():
    url = "https://colab.research.google.com/github/o/r/blob/main/chapters/01_softmax_to_entmax.ipynb"
    binder = "https://mybinder.org/v2/gh/o/r/main?urlpath=tree/chapters/01_softmax_to_entmax.ipynb"
    context = {
        "header_buttons": [
            {
                "label": "launch-buttons",
                "buttons": [{"text": "Colab", "url": url}, {"text": "Binder", "url": binder}],
            }
        ]
    }
    app = SimpleNamespace(srcdir=str(ROOT))
    colab._launch_button_to_edition(app, "chapters/01_softmax_to_entmax", "page.html", context, None)
    buttons = context["header_buttons"][0]["buttons"]
    assert (
        buttons[0]["url"]
        == "https://colab.research.google.com/github/o/r/blob/main/colab/01_softmax_to_entmax.ipynb"
    )
    assert buttons[1]["url"] == binder
    config = myst.book_config()
    assert config["sphinx"]["local_extensions"] == {"tools.colab": "./"}


def test_built_book_launches_the_colab_edition():
    page = ROOT / "_build" / "html" / "chapters" / "01_softmax_to_entmax.html"
    if not page.exists():
        pytest.skip("no book build")
    links = re.findall(r'href="(https://colab\.research\.google\.com/[^"]+)"', page.read_text("utf-8"))
    assert links and all(link.endswith("/colab/01_softmax_to_entmax.ipynb") for link in links)


# ----------------------------------------------------------------------------------------
# Where the editions are written
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("tool", [colab, student], ids=["colab", "student"])
@pytest.mark.parametrize("where", ["chapters", "parent"])
def test_an_edition_never_overwrites_its_sources(tool, where, tmp_path):
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    shutil.copy(CHAPTERS[0], chapters)
    out = chapters if where == "chapters" else tmp_path
    with pytest.raises(ValueError, match="chapters' folder"):
        tool.build(out, chapters)
    assert (chapters / CHAPTERS[0].name).read_bytes() == CHAPTERS[0].read_bytes()
    with pytest.raises(SystemExit, match="chapters' folder"):
        tool.main([str(ROOT / "chapters")])
    assert all(path.exists() for path in CHAPTERS)


def test_student_readme_links_every_chapter_assignment_and_lab():
    readme = (ROOT / "student" / "README.md").read_text("utf-8")
    notebooks = [
        *(f"student/{p.name}" for p in CHAPTERS),
        *(
            p.relative_to(ROOT).as_posix()
            for p in sorted((ROOT / "student" / "assignments").glob("*/*.ipynb"))
            if p.stem == p.parent.name
        ),
        *(p.relative_to(ROOT).as_posix() for p in sorted((ROOT / "student" / "labs").glob("*.ipynb"))),
    ]
    assert len(notebooks) >= len(CHAPTERS) + 7
    for path in notebooks:
        assert f"]({student.colab_url(path)})" in readme, path


# ----------------------------------------------------------------------------------------
# The slides
# ----------------------------------------------------------------------------------------

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def _executed_toy_chapter():
    image = nbformat.v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"})
    glued = nbformat.v4.new_output(
        "display_data",
        data={"application/papermill.record/image/png": PNG},
        metadata={"scrapbook": {"name": "fig_glued", "mime_prefix": "application/papermill.record/"}},
    )
    number = nbformat.v4.new_output(
        "display_data",
        data={"application/papermill.record/text/plain": "0.123456"},
        metadata={"scrapbook": {"name": "gap", "mime_prefix": "application/papermill.record/"}},
    )
    cells = [
        nbformat.v4.new_markdown_cell("(chap-x)=\n# 9. A toy chapter"),
        nbformat.v4.new_code_cell("import sys"),
        nbformat.v4.new_markdown_cell("Opening words, see {ref}`the part <ch9-a>` and {cite}`k1,k2`."),
        nbformat.v4.new_markdown_cell(
            "(ch9-a)=\n## 9.1 A part\n\nIts lead. The gap is {glue:text}`gap:.2f`.\n\n$$\nx = 1\n$$\n\n"
            "A paragraph for the speaker, with $y < 2$."
        ),
        nbformat.v4.new_code_cell("plot()", outputs=[image]),
        nbformat.v4.new_code_cell("glue()", outputs=[glued, number]),
        nbformat.v4.new_markdown_cell("```{glue:figure} fig_glued\n:name: f\n\nA glued figure.\n```"),
        nbformat.v4.new_markdown_cell("## Exercises\n\n```{exercise}\n:label: ch9-ex1\n\nSecret task.\n```"),
        nbformat.v4.new_code_cell("solution_plot()", outputs=[image]),
        nbformat.v4.new_markdown_cell("(ch9-summary)=\n## Summary\n\n- One point."),
    ]
    return nbformat.v4.new_notebook(cells=cells)


SLIDES_BOOK = myst.Book(
    "https://example.org/book/",
    labels={"ch9-a": myst.Target("chapters/09_x", "ch9-a", "9.1 A part")},
    bib={"k1": ("Martins and Astudillo", "2016"), "k2": ("Peters et al.", "2019")},
    exercises={"ch9-ex1": 1},
)


def test_deck_has_title_sections_equations_figures_notes_and_summary_but_no_exercises(tmp_path, monkeypatch):
    monkeypatch.setattr(slides, "_BOOK", SLIDES_BOOK)
    nb = _executed_toy_chapter()
    glue = slides.glue_values(nb)
    assert slides.figure_count(nb, glue) == 2  # the plot and the glued figure, not the solution's
    deck = slides.deck_notebook(nb, glue, "The entmax book")
    text = "\n".join(c.source for c in deck.cells)
    assert deck.cells[0].source.startswith("# 9. A toy chapter")
    assert deck.cells[0].metadata["slideshow"]["slide_type"] == "slide"
    assert "## 9.1 A part" in text and "$$\nx = 1\n$$" in text and "0.12" in text
    assert "Opening words, see [the part](https://example.org/book/chapters/09_x.html#ch9-a)" in text
    assert (
        "([Martins and Astudillo, 2016](https://example.org/book/bibliography.html); [Peters et al., 2019]"
        in text
    )
    assert "A paragraph for the speaker" not in text
    assert "## Summary" in text and "Secret" not in text and "(ch9-a)=" not in text
    assert sum(1 for c in deck.cells if c.cell_type == "code") == 1  # the plot, without its code
    html = slides.render(deck, tmp_path / "deck.slides.html").read_text()
    slides.check_deck(html, "9. A toy chapter", 2)
    images = re.findall(r"<img\b[^>]*>", html)
    assert len(images) == 2 and all(re.search(r'\balt="[^"]+"', tag) for tag in images), images
    with pytest.raises(ValueError, match="without alt text"):
        slides.check_deck(re.sub(r'\balt="[^"]*"', "", html), "9. A toy chapter", 2)
    assert "plot()" not in html and "Reveal.initialize" in html
    notes = re.findall(r'<aside class="notes">(.*?)</aside>', html, flags=re.S)
    assert (
        len(notes) == 1
        and 'A paragraph for the speaker, with <span class="math inline">\\(y &lt; 2\\)</span>.' in notes[0]
    )
    assert '<div class="math block">\n\\[x = 1\\]\n</div>' in html
    _assert_offline(html, tmp_path)
    with pytest.raises(ValueError, match="images"):
        slides.check_deck(html, "9. A toy chapter", 3)
    with pytest.raises(ValueError, match="title"):
        slides.check_deck(html, "10. Another chapter", 2)


def _assert_offline(html, folder):
    """Everything a deck loads is a file beside it: no CDN, no network."""
    loaded = re.findall(r'<(?:script|link|img)\b[^>]*?(?:src|href)="([^"]+)"', html)
    assert loaded and not re.search(r"unpkg|jsdelivr|cdnjs|googleapis|mathjax\.org|code\.jquery", html)
    for url in loaded:
        assert url.startswith("data:image/png;base64,") or (folder / url.split("?")[0]).is_file(), url
    css = [p for p in folder.rglob("*.css")]
    assert css and not any(re.search(r"url\(['\"]?(https?:)?//", p.read_text("utf-8")) for p in css)
    assert (folder / "reveal.js" / "LICENSE").is_file() and (folder / "mathjax" / "LICENSE").is_file()


@pytest.mark.slow
def test_a_chapter_deck_built_from_its_executed_student_edition(tmp_path, monkeypatch):
    # Chapter 7 is the quickest to execute (~20 s). make slides builds and checks all of them.
    monkeypatch.setattr(slides, "BOOK_CACHE", tmp_path / "no-book-build")
    (deck,) = slides.build(["07_sparse_outputs"], out=tmp_path).values()
    html = deck.read_text("utf-8")
    executed = _read(tmp_path / "executed" / "07_sparse_outputs.ipynb")
    assert not [
        o for c in executed.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"
    ]
    # the figures of the chapter's text, counted here: image outputs before the exercises
    first_exercise = next(i for i, c in enumerate(executed.cells) if "exercise" in c.metadata.get("tags", []))
    figures = sum(
        "image/png" in o.get("data", {})
        for c in executed.cells[:first_exercise]
        if c.cell_type == "code"
        for o in c.outputs
    )
    assert figures >= 1
    assert html.count('src="data:image/png;base64,') >= figures
    assert re.search(r"<section\b.*?<h1[^>]*>7\. Sparse outputs", html, flags=re.S)
    assert '<aside class="notes">' in html and "{cite}" not in html and "{ref}" not in html
    _assert_offline(html, tmp_path)


def test_a_deck_shows_the_figures_a_student_edition_carries_as_attachments():
    """The student edition has each ``{glue:figure}`` as a cell attachment; the deck page cannot
    read attachments, so the figure must reach it inline."""
    png = base64.b64encode(b"\x89PNG not really").decode()
    figure = nbformat.v4.new_markdown_cell("![A caption.](attachment:fig.png)\n\n*A caption.*\n")
    figure["attachments"] = {"fig.png": {"image/png": png}}
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# 9. A chapter\n\nWhat it is about."),
            nbformat.v4.new_markdown_cell("## 9.1 A section\n\nThe section's first words."),
            figure,
        ]
    )
    assert slides.figure_count(nb, {}) == 1
    deck = slides.deck_notebook(nb, {}, "The entmax book")
    assert f"data:image/png;base64,{png}" in "".join(c.source for c in deck.cells)


# ----------------------------------------------------------------------------------------
# The PDF
# ----------------------------------------------------------------------------------------

TOY_SINGLE_PAGE = """<html><head><script>window.MathJax = {"options": {}}</script>
<script defer="defer" src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"></script></head>
<body><div class="onlyprint" id="jb-print-docs-body"><h1>The book</h1>
<div id="jb-print-toc"><h2>Contents</h2><ul><li>1. One</li></ul></div></div><article>
<section id="the-book"><h1>The book<a class="headerlink" href="#the-book">#</a></h1><p>Intro.</p>
<section id="intro-part"><h2>Not a chapter</h2><p>More intro.</p></section>
<span id="document-chapters/one"></span>
<section id="chap-one"><h2>1. One</h2><p>Text <span class="math notranslate nohighlight">\\(x_i\\)</span>.</p>
<section id="one-a"><h3>1.1 A</h3><p>a</p></section>
<section id="one-b"><h3>1.2 B</h3><p>b</p></section></section>
<span id="document-chapters/two"></span>
<section id="chap-two"><h2>2. Two</h2><section id="two-a"><h3>2.1 A</h3><p>c</p></section></section>
</section>
</article></body></html>"""


def test_pdf_page_gets_local_mathjax_and_a_contents_page_to_number():
    from tools import pdf

    html, ids = pdf.prepare(TOY_SINGLE_PAGE, "letter", Path("/usr/share/javascript/mathjax/MathJax.js"))
    assert ids == [f"contents-{i}" for i in range(5)]  # two chapters, three sections; not the intro's
    assert "https://" not in html and "config=TeX-AMS_SVG" in html and "size: letter" in html
    nav = html[html.index('<nav id="print-contents">') : html.index("</nav>")]
    assert html.index("The book") < html.index("<nav") < html.index("Intro.") and "jb-print-toc" not in html
    assert nav.count(f">{pdf.PLACEHOLDER}</span>") == 5 and "Not a chapter" not in nav
    assert '<a href="#contents-2"><span class="title">1.2 B</span>' in nav
    assert '<h3><span id="contents-2"></span>1.2 B</h3>' in html
    numbered = pdf.number_contents(html, dict(zip(ids, [3, 3, 4, 5, 12], strict=True)))
    assert '<span class="page" data-for="contents-4">12</span>' in numbered
    assert pdf.PLACEHOLDER + "</span>" not in numbered
    with pytest.raises(ValueError, match="'contents-1' has no destination"):
        pdf.number_contents(html, {"contents-0": 3})


@pytest.mark.slow
def test_pdf_contents_gives_the_pages_the_sections_start_on(tmp_path):
    from tools import pdf

    chromium = shutil.which("chromium") or shutil.which("google-chrome")
    if not (chromium and shutil.which("pdfinfo") and pdf.MATHJAX.exists()):
        pytest.skip("needs chromium, poppler-utils and libjs-mathjax")
    filler = "<p>" + "Words to fill a page. " * 400 + "</p>"
    page = tmp_path / "intro.html"
    page.write_text(TOY_SINGLE_PAGE.replace("<p>a</p>", filler).replace("<p>c</p>", filler * 2))
    (a4,) = [
        p for p in pdf.build(page, tmp_path / "pdf", chromium, min_pages=5) if p.name == "entmax-book.pdf"
    ]
    dests = pdf.destinations(a4)
    chap_one, one_a, one_b, chap_two, two_a = (dests[f"contents-{i}"] for i in range(5))
    # title, contents, introduction: a page each; each chapter starts a page; the filler pushes on
    assert chap_one == 4 and one_b > one_a and two_a == chap_two > one_b
    text = subprocess.run(
        ["pdftotext", "-layout", "-f", "2", "-l", "2", str(a4), "-"], capture_output=True, text=True
    ).stdout
    for title, number in [("1.2 B", one_b), ("2.1 A", two_a)]:
        assert re.search(rf"{re.escape(title)}[ .]*\s{number}\s*$", text, flags=re.M), text


def test_a_fork_or_a_term_release_is_one_change_of_config(tmp_path, monkeypatch):
    """The editions take the repository and release from _config.yml: their badges and install
    cells point at a fork's tag when the config names it."""
    from tools import repository

    fork = repository.Repository("me/fork", "term-2027")
    monkeypatch.setattr(repository, "load", lambda config=None: fork)
    assert student.colab_url("student/01_softmax_to_entmax.ipynb") == (
        "https://colab.research.google.com/github/me/fork/blob/term-2027/student/01_softmax_to_entmax.ipynb"
    )
    chapter = nbformat.read(ROOT / "chapters" / "01_softmax_to_entmax.ipynb", as_version=4)
    install = next(c for c in chapter.cells if c.cell_type == "code" and "pip" in c.source)
    assert repository.CHAPTERS_POINT_AT.pip_url() in install.source
    assert fork.pip_url() in repository.load().retarget(install.source)
    assert repository.CHAPTERS_POINT_AT.pip_url() not in repository.load().retarget(install.source)
