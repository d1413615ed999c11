"""The course kit: the student edition, the autograded assignments, the slides.

The student edition (`make student`, tools/student.py) must match the chapters as they are now, keep
no line of any solution and leave a stub for every exercise; the notebooks run up to their first
exercise because their code up to there is the chapter's own, which nbval runs. The autograder
(`make course`, tools/course.py, Otter Grader) must give the reference solutions full marks and
less to a wrong and to a partly right submission, offline, on the latest and the floor versions.
"""

import ast
import copy
import json
import re
from pathlib import Path

import nbformat
import pytest

from tools import course, slides, student

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
MASTERS = course.masters()


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
    # contain, is gone (a stub keeps only a solution's `def` lines)
    outside_lines, student_lines = _lines([outside]), _lines([text])
    leaked = [
        line
        for line in _lines(code) | _lines(prose)
        if line not in outside_lines and not line.startswith("def ") and line in student_lines
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
    answered = [re.search(r"exercise ([\w-]+-ex\d+)", c.source, flags=re.I).group(1) for c in answers]
    assert sorted(set(answered)) == sorted(labels)
    code_stubs = [c for c in answers if c.cell_type == "code"]
    for stub in code_stubs:
        ast.parse(stub.source)  # a stub is valid Python
        body = [line for line in stub.source.splitlines() if line.strip() and not line.startswith("#")]
        assert all(
            line.startswith("def ") or line.strip() in ("...", "raise NotImplementedError") for line in body
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
    chapter_code = [c.source for c in _read(chapter).cells if c.cell_type == "code"]
    # the same code, in the same order, as the chapter that nbval runs cell by cell
    assert before == chapter_code[: len(before)]
    assert len(before) >= len(chapter_code) - sum(len(s) > 0 for s in _solution_parts(_read(chapter))[0])


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
    assert "**Exercise chX-ex1.**" in text and "Do B." in text and text.rstrip().endswith("After.")
    assert [c.cell_type for c in out if "exercise" in c.metadata.get("tags", [])] == [
        "markdown",
        "code",
        "markdown",
    ]
    broken = copy.deepcopy(nb)
    broken.cells = broken.cells[:3]
    with pytest.raises(ValueError, match="never ends"):
        student.split_chapter(broken)


def test_stub_keeps_signatures_only():
    stub = student._stub(
        "chX-ex1", ['import numpy as np\n\n\ndef f(z, n=3):\n    """Doc."""\n    return z\n']
    )
    assert "def f(z, n=3):" in stub and "raise NotImplementedError" in stub
    assert "return z" not in stub and "Doc." not in stub and "import numpy" not in stub
    assert student._stub("chX-ex2", ["x = 1"]).rstrip().endswith("...")


# ----------------------------------------------------------------------------------------
# The autograded assignments: the master notebooks
# ----------------------------------------------------------------------------------------


def _questions(master):
    """Question name -> (solution sources, [(hidden, test source)]) of an Otter master notebook."""
    questions, current, block = {}, None, None
    for cell in _read(master).cells:
        source = cell.source.strip()
        if cell.cell_type == "raw":
            if source.startswith("# BEGIN QUESTION"):
                current = re.search(r"name:\s*(\S+)", source).group(1)
                questions[current] = ([], [])
            elif source.startswith("# BEGIN SOLUTION"):
                block = "solution"
            elif source.startswith("# BEGIN TESTS"):
                block = "tests"
            elif source.startswith(("# END SOLUTION", "# END TESTS", "# END QUESTION")):
                block = None
        elif cell.cell_type == "code" and current and block == "solution":
            questions[current][0].append(cell.source)
        elif cell.cell_type == "code" and current and block == "tests":
            hidden = re.search(r"hidden:\s*(true|false)", cell.source, flags=re.I).group(1).lower() == "true"
            questions[current][1].append((hidden, cell.source))
    return questions


def test_one_assignment_with_hidden_tests_per_chapter_1_to_5():
    chapters = sorted(int(re.match(r"ch(\d+)_", m.name).group(1)) for m in MASTERS)
    assert chapters == [1, 2, 3, 4, 5]
    for master in MASTERS:
        questions = _questions(master)
        assert questions, master.name
        for name, (solution, tests) in questions.items():
            assert any(f"def {name}(" in s for s in solution), f"{master.name}: {name} is a function to write"
            assert any(hidden for hidden, _ in tests) and any(not hidden for hidden, _ in tests), name


@pytest.mark.parametrize("master", MASTERS, ids=lambda p: p.stem)
def test_hidden_tests_are_self_contained(master):
    # The grader ships with the course material: its references are in the tests themselves, not in
    # this repository's tests/ or in the library the student may be using.
    for _, (_, tests) in _questions(master).items():
        for _, source in tests:
            imported = re.findall(r"^\s*(?:from|import)\s+([\w.]+)", source, flags=re.M)
            assert not any(m.split(".")[0] in ("tests", "entmax_lib", "entmax_book") for m in imported), (
                source
            )


# ----------------------------------------------------------------------------------------
# The autograded assignments: built and graded with Otter (slow: each grading runs a kernel)
# ----------------------------------------------------------------------------------------

# A plausible mistake in each assignment, as (reference text, mistaken text) in its solutions.
MISTAKES = {
    "ch1_thresholds": ("z = np.asarray(z, dtype=np.float64) / 2", "z = np.asarray(z, dtype=np.float64)"),
    "ch2_gradients": ("/ (alpha - 1) ** 2 +", "/ (alpha - 1) +"),
    "ch3_masked_attention": ("@ jnp.asarray(k).T / jnp.sqrt(q.shape[-1])", "@ jnp.asarray(k).T"),
    "ch4_attention_analysis": ("L = int(np.floor(bound)) + 1", "L = int(np.floor(bound))"),
    "ch5_head_analysis": ("np.log(", "np.log2("),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("course")
    zips = course.build(out / "build", student=out / "student")
    return out, zips


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    # Any attempt of the grader (or of a graded notebook) to reach the network fails.
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        monkeypatch.setenv(var, "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", "")
    monkeypatch.setenv("no_proxy", "")


def test_mistakes_cover_every_assignment():
    assert set(MISTAKES) == {m.stem for m in MASTERS}


def _solutions(built, name):
    out, _ = built
    return out / "build" / name / "autograder" / f"{name}.ipynb"


def _variant(built, name, tmp_path, change):
    nb = _read(_solutions(built, name))
    change(nb)
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def _test_ast(text):
    tree = ast.parse(text)
    return ast.dump(tree)


@pytest.mark.slow
def test_committed_student_assignments_are_what_make_course_writes(built):
    out, _ = built
    fresh, committed = out / "student", ROOT / "student" / "assignments"
    names = lambda d: sorted(p.relative_to(d).as_posix() for p in d.rglob("*") if p.is_file())
    assert names(fresh) == names(committed), "run `make course` and commit student/assignments"
    for rel in names(fresh):
        a, b = fresh / rel, committed / rel
        if rel.endswith(".ipynb"):
            # Otter's versions differ in metadata only
            cells = lambda p: [(c.cell_type, c.source) for c in _read(p).cells]
            assert cells(a) == cells(b), f"{rel} is out of date: run `make course`"
        else:  # the public tests, however this Otter version lays them out
            assert _test_ast(a.read_text()) == _test_ast(b.read_text()), f"{rel} is out of date"
        assert "hidden=True" not in b.read_text(), f"{rel} holds a hidden test"


@pytest.mark.slow
@pytest.mark.parametrize("name", [m.stem for m in MASTERS])
def test_reference_solutions_get_full_marks(built, name):
    _, zips = built
    score, max_score = course.grade(zips[name], _solutions(built, name))
    assert max_score > 0 and score == max_score


@pytest.mark.slow
@pytest.mark.parametrize("name", [m.stem for m in MASTERS])
def test_partly_right_submission_gets_part_of_the_marks(built, name, tmp_path):
    # The first question left as the student got it (the stub), the others solved.
    first = next(iter(_questions(ROOT / "course" / "assignments" / f"{name}.ipynb")))
    stub = next(
        c.source
        for c in _read(built[0] / "student" / name / f"{name}.ipynb").cells
        if f"def {first}(" in c.source
    )

    def unsolve(nb):
        (cell,) = [c for c in nb.cells if c.cell_type == "code" and f"def {first}(" in c.source]
        cell.source = stub

    score, max_score = course.grade(built[1][name], _variant(built, name, tmp_path, unsolve))
    assert 0 < score < max_score


@pytest.mark.slow
@pytest.mark.parametrize("name", [m.stem for m in MASTERS])
def test_wrong_submission_loses_marks(built, name, tmp_path):
    right, wrong = MISTAKES[name]

    def mistake(nb):
        cells = [c for c in nb.cells if c.cell_type == "code" and right in c.source]
        assert cells, f"{name}: the mistake's reference text is not in the solutions"
        cells[0].source = cells[0].source.replace(right, wrong)

    score, max_score = course.grade(built[1][name], _variant(built, name, tmp_path, mistake))
    assert score < max_score


def test_results_are_read_from_otter_json(tmp_path, monkeypatch):
    # grade() sums the scored entries of Otter's results.json (the "Public Tests" entry has none).
    results = {
        "tests": [
            {"name": "Public Tests", "status": "passed"},
            {"name": "a", "score": 2, "max_score": 5},
            {"name": "b", "score": 3, "max_score": 3},
        ]
    }

    def fake(*args, cwd=None):
        Path(args[args.index("-o") + 1], "results.json").write_text(json.dumps(results))
        return type("R", (), {"returncode": 0, "stdout": "", "stderr": ""})()

    monkeypatch.setattr(course, "_otter", fake)
    assert course.grade(tmp_path / "x.zip", tmp_path / "x.ipynb") == (5, 8)


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
            "(ch9-a)=\n## 9.1 A part\n\nIts lead. The gap is {glue:text}`gap:.2f`.\n\n$$\nx = 1\n$$"
        ),
        nbformat.v4.new_code_cell("plot()", outputs=[image]),
        nbformat.v4.new_code_cell("glue()", outputs=[glued, number]),
        nbformat.v4.new_markdown_cell("```{glue:figure} fig_glued\n:name: f\n\nA glued figure.\n```"),
        nbformat.v4.new_markdown_cell("## Exercises\n\n```{exercise}\n:label: ch9-ex1\n\nSecret task.\n```"),
        nbformat.v4.new_code_cell("solution_plot()", outputs=[image]),
        nbformat.v4.new_markdown_cell("(ch9-summary)=\n## Summary\n\n- One point."),
    ]
    return nbformat.v4.new_notebook(cells=cells)


def test_deck_has_title_sections_equations_figures_and_summary_but_no_exercises(tmp_path):
    nb = _executed_toy_chapter()
    glue = slides.glue_values(nb)
    assert slides.figure_count(nb, glue) == 2  # the plot and the glued figure, not the solution's
    deck = slides.deck_notebook(nb, glue, "The entmax book")
    text = "\n".join(c.source for c in deck.cells)
    assert deck.cells[0].source.startswith("# 9. A toy chapter") and "Opening words, see the part" in text
    assert deck.cells[0].metadata["slideshow"]["slide_type"] == "slide"
    assert "## 9.1 A part" in text and "$$\nx = 1\n$$" in text and "0.12" in text and "[k1, k2]" in text
    assert "## Summary" in text and "Secret" not in text and "(ch9-a)=" not in text
    assert sum(1 for c in deck.cells if c.cell_type == "code") == 1  # the plot, without its code
    html = slides.render(deck, tmp_path / "deck.slides.html").read_text()
    slides.check_deck(html, "9. A toy chapter", 2)
    assert "plot()" not in html and "reveal" in html.lower()
    with pytest.raises(ValueError, match="images"):
        slides.check_deck(html, "9. A toy chapter", 3)
    with pytest.raises(ValueError, match="title"):
        slides.check_deck(html, "10. Another chapter", 2)


@pytest.mark.slow
def test_a_chapter_deck_built_from_its_executed_student_edition(tmp_path, monkeypatch):
    # Chapter 7 is the quickest to execute (~20 s). make slides builds and checks all of them.
    monkeypatch.setattr(slides, "BOOK_OUTPUTS", tmp_path / "no-book-build")
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


# ----------------------------------------------------------------------------------------
# The labs
# ----------------------------------------------------------------------------------------

LABS = sorted((ROOT / "course" / "labs").glob("*.ipynb"))
TRAINING = {"ch4_lab": "experiment.train_and_evaluate(", "ch5_lab": "train(model,"}
RECORDED = {  # what the training cell returns, taken from the recorded run instead
    "ch4_lab": 'result = record.load(runs.EXPERIMENT, "demo")["result"]\n'
    "index = result['lengths'].index(32)\n"
    "for v in config.variants:\n"
    "    for key in list(result[v]):\n"
    "        if key.endswith('_per_seed') and np.ndim(result[v][key]) == 2:\n"
    "            result[v][key] = [row[index : index + 1] for row in result[v][key][:3]]\n"
    "table(result)",
    "ch5_lab": 'history = record.load(translation_record.EXPERIMENT, "alpha_entmax_seed0")\n'
    'history = history["result"]["history"]\n'
    "before, after = mean_alpha(history, 0), mean_alpha(history, STEPS)",
}


def test_labs_cover_chapters_4_and_5():
    assert [p.stem for p in LABS] == sorted(TRAINING)


@pytest.mark.slow
@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.stem)
def test_lab_runs_and_its_reference_is_computed_from_the_record(lab, capsys):
    """Every cell of the lab runs, the training replaced by the recorded run it reproduces (the
    training itself is the public API, tested with the packages); the reference cell answers."""
    namespace = {"get_ipython": lambda: pytest.fail("the Colab branch ran")}
    cells = [c for c in _read(lab).cells if c.cell_type == "code"]
    (training,) = [c for c in cells if TRAINING[lab.stem] in c.source]
    assert any("reference" in c.metadata.get("tags", []) for c in cells)
    for cell in cells:
        source = cell.source
        if cell is training:
            # keep the helpers the training cell defines, skip the training and its timing
            tree = ast.parse(source)
            helpers = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
            source = ast.unparse(ast.Module(body=helpers, type_ignores=[])) + "\n" + RECORDED[lab.stem]
        exec(compile(source, f"{lab.name}", "exec"), namespace)
    printed = capsys.readouterr().out
    answers = printed[printed.index("Reference answers") :]
    assert re.search(r"^1\. .+$", answers, flags=re.M) and re.search(r"^3\. .+$", answers, flags=re.M)
