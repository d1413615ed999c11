"""The course kit: the autograded assignments and the labs (the editions and the slides are
tested in tests/test_editions.py).

The autograder (`make course`, tools/course.py, Otter Grader) must give the reference solutions
full marks and less to a wrong and to a partly right submission, offline, on the latest and the
floor versions.
"""

import ast
import csv
import datetime as dt
import json
import re
import shutil
import textwrap
from pathlib import Path

import nbformat
import numpy as np
import pytest
from scipy import stats as scipy_stats

import entmax_lib
from tools import bundle, course, exam, fake_class, grading, plan, repository

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
MASTERS = course.masters()


def _read(path):
    return nbformat.read(path, as_version=4)


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
    "ch5_head_analysis": ("/ np.log(n_heads)", ""),  # JS in nats, not in base H as in Chapter 5
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
    result = grading.grade(zips[name], _solutions(built, name))
    assert result.max_score == 10 and result.score == 10 and not result.problem


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

    result = grading.grade(built[1][name], _variant(built, name, tmp_path, unsolve))
    assert 0 < result.score < result.max_score


@pytest.mark.slow
@pytest.mark.parametrize("name", [m.stem for m in MASTERS])
def test_wrong_submission_loses_marks(built, name, tmp_path):
    right, wrong = MISTAKES[name]

    def mistake(nb):
        cells = [c for c in nb.cells if c.cell_type == "code" and right in c.source]
        assert cells, f"{name}: the mistake's reference text is not in the solutions"
        cells[0].source = cells[0].source.replace(right, wrong)

    result = grading.grade(built[1][name], _variant(built, name, tmp_path, mistake))
    assert result.score < result.max_score


# ----------------------------------------------------------------------------------------
# The labs
# ----------------------------------------------------------------------------------------

LABS = sorted((ROOT / "course" / "labs").glob("*.ipynb"))
TRAINING = {"ch4_lab": "experiment.train_and_evaluate(", "ch5_lab": "train(model,"}
PART_C_TRAINING = {  # the key's own run of Part C's changed config, and what stands in for it
    "ch4_lab": ("experiment.train_and_evaluate(changed)", "result"),
    "ch5_lab": ("train(fast_model, data.train, faster.train, seed=faster.seed, stop_after=STEPS)", "history"),
}
RECORDED = {  # what the training cell returns, taken from the recorded run instead
    "ch4_lab": "from entmax_book import record\nfrom entmax_book.toy import runs\n"
    'result = record.load(runs.EXPERIMENT, "demo")["result"]\n'
    "index = result['lengths'].index(32)\n"
    "for v in config.variants:\n"
    "    for key in list(result[v]):\n"
    "        if key.endswith('_per_seed') and np.ndim(result[v][key]) == 2:\n"
    "            result[v][key] = [row[index : index + 1] for row in result[v][key][:3]]\n"
    "table(result)",
    "ch5_lab": 'history = record.load(runs.EXPERIMENT, "hard_alpha_entmax_seed0")\n'
    'history = history["result"]["history"]\n'
    "before, after = mean_alpha(history, 0), mean_alpha(history, STEPS)",
}


def test_labs_cover_chapters_4_and_5():
    assert [p.stem for p in LABS] == sorted(TRAINING)


def _lab_config(lab):
    """The config the lab's setup cell makes (without preparing data or building a model)."""
    import dataclasses

    from entmax_book.toy import configs
    from entmax_book.translation import runs

    if lab.stem == "ch5_lab":
        return runs.config_for(runs.run_name("alpha_entmax", 0))
    (setup,) = [c.source for c in _read(lab).cells if c.cell_type == "code" and "config = " in c.source]
    lines = [line for line in setup.splitlines() if line.startswith(("SEEDS = ", "config = "))]
    namespace = {"dataclasses": dataclasses, "configs": configs}
    exec("\n".join(lines), namespace)
    return namespace["config"]


def _snippets(lab):
    """Every piece of code in a lab: its code cells, and the code of its markdown (inline and fenced)."""
    for cell in _read(lab).cells:
        if cell.cell_type == "code":
            yield cell.source
        else:
            yield from re.findall(r"```python\n(.*?)```", cell.source, flags=re.S)
            yield from re.findall(r"(?<!`)`([^`\n]+)`(?!`)", cell.source)


@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.stem)
def test_every_config_change_a_lab_shows_is_valid_code_for_its_config(lab):
    """Part C changes one setting: each `config.replace(...)` / `dataclasses.replace(config, ...)`
    the lab shows or runs must work on the lab's own config (a field that does not exist, such as
    `config.learning_rate` on a TranslationConfig, fails here)."""
    import dataclasses

    config = _lab_config(lab)
    changes = []
    for snippet in _snippets(lab):
        try:
            tree = ast.parse(textwrap.dedent(snippet))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in (
                "config.replace",
                "dataclasses.replace",
            ):
                if ast.unparse(node.func) == "dataclasses.replace" and ast.unparse(node.args[0]) != "config":
                    continue
                changes.append(ast.unparse(node))
    assert changes, f"{lab.stem}: Part C changes no setting"
    for change in changes:
        changed = eval(change, {"config": config, "dataclasses": dataclasses, "alpha_rate": 6e-3})
        assert type(changed) is type(config) and changed != config, change
    if lab.stem == "ch5_lab":
        (part_c,) = [c.source for c in _read(lab).cells if c.cell_type == "code" and "faster = " in c.source]
        namespace = {"config": config}
        exec(part_c, namespace)
        faster = namespace["faster"]
        assert faster.train.alpha_learning_rate == pytest.approx(10 * config.train.learning_rate)
        assert faster.replace(alpha_learning_rate=config.train.alpha_learning_rate) == config
        # the training the student copies into a new cell uses names the lab defines
        (block,) = [b for b in _snippets(lab) if "fast_history" in b and "(10x faster)" in b]
        defined = {"Transformer", "data", "train", "faster", "STEPS", "mean_alpha", "after"}
        used = {
            n.id
            for n in ast.walk(ast.parse(textwrap.dedent(block)))
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        }
        assert used - {"fast_model", "fast_history", "fast", "kind", "print"} <= defined, used


@pytest.mark.slow
@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.stem)
def test_lab_runs_and_its_reference_answers_from_its_own_run(lab, capsys):
    """Every cell of the lab runs, the training replaced by the recorded run that the public seeds
    reproduce (the training itself is the public API, tested with the packages); the reference
    cell answers every question from that run."""
    namespace = {"get_ipython": lambda: pytest.fail("the Colab branch ran")}
    cells = [c for c in _read(lab).cells if c.cell_type == "code"]
    reference = [c for c in cells if "reference" in c.metadata.get("tags", [])]
    (training,) = [c for c in cells if TRAINING[lab.stem] in c.source and c not in reference]
    assert reference
    for cell in cells:
        source = cell.source
        if cell is training:
            # keep the helpers the training cell defines, skip the training and its timing
            tree = ast.parse(source)
            helpers = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
            source = ast.unparse(ast.Module(body=helpers, type_ignores=[])) + "\n" + RECORDED[lab.stem]
        if cell in reference:  # each key also trains Part C's config: the recorded run stands in
            call, stand_in = PART_C_TRAINING[lab.stem]
            assert call in source, f"{lab.stem}: the key's Part C training is not `{call}`"
            source = source.replace(call, stand_in)
            key_source = source
        exec(compile(source, f"{lab.name}", "exec"), namespace)
    printed = capsys.readouterr().out
    answers = printed[printed.index("Reference answers") :]
    # a model answer for every question of the lab's answers cell, the open ones included
    (asked,) = [c.source for c in _read(lab).cells if c.source.startswith("**Your answers**")]
    questions = [int(n) for n in re.findall(r"^(\d+)\. ", asked, flags=re.M)]
    assert questions == list(range(1, len(questions) + 1)) and len(questions) >= 7, questions
    for n in questions:
        assert re.search(rf"^{n}\. .{{20,}}$", answers, flags=re.M), f"{lab.stem}: no model answer to {n}"
    if lab.stem == "ch4_lab":  # the recorded run has an interval above 0 that Holm leaves not shown
        assert "Its interval excludes 0, yet it is not shown: no contradiction" in answers
        assert "Holm-corrected p" in answers
        assert "2.07" not in answers  # Part C's answer is this run's, not the public seeds' numbers
    else:
        assert "1.022" not in answers and "encoder_self" in answers.split("\n8. ")[1]
        assert re.search(r"^4\. alpha_entmax > softmax: mean [^\n]* BLEU, ", answers, flags=re.M)
        assert re.search(r"^4\. encoder alpha > context: mean [^\n]* alpha, ", answers, flags=re.M)
        assert "Why one claim is clearer" in answers and "Note for the lecturer" not in answers
        # a term's subset of the seeds that turns a verdict around: the key tells the lecturer
        namespace["SEEDS"] = (0, 1, 3, 4, 5, 9)
        exec(compile(key_source, f"{lab.name}", "exec"), namespace)
        term = capsys.readouterr().out
        assert "4. entmax15 > softmax: mean" in term and ": reversed" in term
        assert "Note for the lecturer: with all 10 recorded seeds, entmax15 > softmax is not shown" in term


# ----------------------------------------------------------------------------------------
# Grading: the command line, the feedback, a class (quick tests fake Otter's run)
# ----------------------------------------------------------------------------------------

TEST_FILE = """from otter.test_files import test_case

OK_FORMAT = False

name = "f"
points = None

@test_case(points=1, hidden=False)
def test_public(f):
    assert f(1) == 2

@test_case(points=2, hidden=True)
def test_secret_values(f):
    import numpy as np
    assert np.isclose(f(0.5), 1.5), "values"

@test_case(points=2, hidden=True)
def test_secret_shape(f):
    assert f(2) == 3
"""


def _fake_autograder(path):
    import zipfile

    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("otter_config.json", "{}")
        archive.writestr("tests/f.py", TEST_FILE)
    return path


def _notebook(path, *sources):
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources]), path)
    return path


def _one_line_error(capsys, argv):
    """Run the command line; it must exit with status 2 and one line on stderr."""
    try:
        status = course.main(argv)
    except SystemExit as stop:  # argparse's usage errors
        status = stop.code
    err = capsys.readouterr().err
    assert status == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_grade_without_arguments_says_so_in_one_line(capsys):
    err = _one_line_error(capsys, ["grade"])
    assert "AUTOGRADER" in err and "SUBMISSION" in err


def test_grade_with_a_zip_that_is_not_an_autograder(tmp_path, capsys):
    import zipfile

    with zipfile.ZipFile(tmp_path / "notes.zip", "w") as archive:
        archive.writestr("notes.txt", "hello")
    notebook = _notebook(tmp_path / "s.ipynb", "def f(x):\n    return x + 1")
    assert "not an Otter autograder" in _one_line_error(
        capsys, ["grade", str(tmp_path / "notes.zip"), str(notebook)]
    )
    assert "not a zip" in _one_line_error(capsys, ["grade", str(notebook), str(notebook)])


def test_grade_with_a_notebook_that_is_not_json(tmp_path, capsys):
    (tmp_path / "s.ipynb").write_text("print('hello')\n")
    zip_path = _fake_autograder(tmp_path / "f-autograder.zip")
    err = _one_line_error(capsys, ["grade", str(zip_path), str(tmp_path / "s.ipynb")])
    assert "not a notebook" in err and "not JSON" in err
    assert "no such file" in _one_line_error(capsys, ["grade", str(zip_path), str(tmp_path / "none.ipynb")])


def _readme_section():
    text = (ROOT / "README.md").read_text("utf-8")
    return text[text.index("## Teaching with the book") : text.index("## Recorded runs")]


@pytest.mark.slow
def test_grading_is_said_to_be_unsandboxed_with_the_safe_ways_that_exist(capsys):
    import subprocess
    import sys

    for command in ("grade", "grade-all"):
        with pytest.raises(SystemExit):
            course.main([command, "--help"])
        help_text = " ".join(capsys.readouterr().out.split())
        assert "unsandboxed" in help_text and "throwaway user" in help_text and "otter grade" in help_text
    section = _readme_section()
    assert "unsandboxed" in section
    # the throwaway user's command is this tool's command line, with arguments it accepts
    (line,) = [line for line in section.splitlines() if line.startswith("sudo -u grader")]
    args = line.split("tools.course", 1)[1].split()
    assert course.parser().parse_args(args).command == "grade-all"
    # Otter's container grading, as documented, with options that this Otter has
    (docker,) = re.findall(r"`(otter grade [^`]+)`", section)
    otter_help = subprocess.run(
        [sys.executable, "-c", "import sys; from otter.cli import cli; sys.exit(cli())", "grade", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    options = [word for word in docker.split() if word.startswith("-")]
    assert options and all(re.search(rf"(^|[\s,]){re.escape(o)}\b", otter_help) for o in options), options
    assert docker.split()[0:2] == ["otter", "grade"] and "-p" not in options


OTTER_OUTPUT = """f results:
    f - 2 result:
        ❌ Test case failed
        Error at line 12 in test f:
              assert np.isclose(f(0.5), 1.5), "values"
        AssertionError: values

    f - 3 result:
        ❌ Test case failed
        Error at line 15 in test f:
              assert f(2) == 3
        TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'"""


def _fake_otter(outcomes):
    """An Otter run that writes the results of `outcomes[notebook name]`: a score and an output,
    or "sleep" (the run times out)."""
    import subprocess

    def run(*args, cwd=None, timeout=None):
        outcome = outcomes[Path(args[-1]).stem]
        if outcome == "sleep":
            raise subprocess.TimeoutExpired(args, timeout)
        score, output = outcome
        tests = [
            {"name": "Public Tests", "output": ""},
            {"name": "f", "score": score, "max_score": 5, "output": output},
        ]
        Path(args[args.index("-o") + 1], "results.json").write_text(json.dumps({"tests": tests}))
        return subprocess.CompletedProcess(args, 0, "", "")

    return run


def test_feedback_names_failed_checks_without_hidden_code(tmp_path, monkeypatch):
    zip_path = _fake_autograder(tmp_path / "f-autograder.zip")
    monkeypatch.setattr(course, "_otter", _fake_otter({"s": (1, OTTER_OUTPUT)}))
    result = grading.grade(zip_path, _notebook(tmp_path / "s.ipynb", "def f(x):\n    return x + 1"))
    assert (result.score, result.max_score) == (1, 5)
    assert [c.passed for c in result.checks] == [True, False, False]
    text = grading.feedback(result)
    assert "s.ipynb: 1 / 5" in text and "public check test_public (1 pt): passed" in text
    # a hidden check's failure is named by its kind only: its message can quote the hidden inputs
    assert "hidden check test_secret_values (2 pt): FAILED: wrong result" in text and ": values" not in text
    assert "FAILED: TypeError raised" in text and "still the `...` stub" in text
    assert "unsupported operand" not in text
    assert "assert" not in text and "np.isclose" not in text and "f(2) == 3" not in text
    assert not result.notes
    # a report that does not match Otter's score (another Otter's format) is said to be so
    monkeypatch.setattr(course, "_otter", _fake_otter({"s": (0, "f results: something else")}))
    result = grading.grade(zip_path, tmp_path / "s.ipynb")
    assert result.score == 0 and "did not match" in grading.feedback(result)


def test_a_function_never_defined_is_named(tmp_path, monkeypatch):
    zip_path = _fake_autograder(tmp_path / "f-autograder.zip")
    output = OTTER_OUTPUT.replace("f - 2", "f - 1").replace("'NoneType' and 'int'", "x")
    monkeypatch.setattr(course, "_otter", _fake_otter({"s": (0, output)}))
    result = grading.grade(zip_path, _notebook(tmp_path / "s.ipynb", "def my_f(x):\n    return x + 1"))
    assert all("`f` is never defined in the notebook" in c.reason for c in result.checks)
    assert result.problem == grading.never_defined("f") and result.missing == ["f"] and result.graded
    assert grading.defined_names(
        {"cells": [{"cell_type": "code", "source": "%pip install x\nfrom a import f"}]}
    ) == {"f"}
    assert grading.defined_names({"cells": [{"cell_type": "code", "source": "def f(:"}]}) == set()


def test_a_cell_that_does_not_parse_is_named_not_blamed_on_the_stub(tmp_path, monkeypatch):
    """A SyntaxError in the cell that defines the function: the problem column names that cell,
    and the function counts as never defined (not "is it still the stub?")."""
    zip_path = _fake_autograder(tmp_path / "f-autograder.zip")
    output = OTTER_OUTPUT.replace("'NoneType' and 'int'", "x")
    monkeypatch.setattr(course, "_otter", _fake_otter({"s": (0, output)}))
    notebook = _notebook(tmp_path / "s.ipynb", "import numpy as np", "def f(x):\n    return x +* 1")
    result = grading.grade(zip_path, notebook)
    assert "(code cell 2) is not valid Python (invalid syntax, line 2 of the cell)" in result.problem
    assert "Problem: the code cell that starts `def f(x):`" in grading.feedback(result)
    assert grading.never_defined("f") in result.problem and result.missing == ["f"]
    assert all("never defined" in c.reason and "stub" not in c.reason for c in result.checks)


def test_an_error_in_the_notebook_as_handed_in_is_noted(tmp_path, monkeypatch):
    """The grade comes from a fresh run; an error saved in the student's own outputs is a note."""
    zip_path = _fake_autograder(tmp_path / "f-autograder.zip")
    monkeypatch.setattr(course, "_otter", _fake_otter({"s": (5, "")}))
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("import nope"), nbformat.v4.new_code_cell("f = abs")]
    )
    nb.cells[0].outputs = [
        nbformat.v4.new_output("error", ename="ModuleNotFoundError", evalue="No module named 'nope'")
    ]
    nbformat.write(nb, tmp_path / "s.ipynb")
    result = grading.grade(zip_path, tmp_path / "s.ipynb")
    assert result.score == 5 and not result.problem
    assert result.notes == ["as handed in, code cell 1 ended in ModuleNotFoundError: No module named 'nope'"]


def test_a_function_never_defined_is_one_line_and_fills_the_problem_column(tmp_path, monkeypatch):
    """Two functions to write, one renamed: the other is graded as usual, the renamed one gets one
    plain line in the feedback (not a line per check) and the `problem` column says so."""
    import zipfile

    zip_path = tmp_path / "fg-autograder.zip"
    with zipfile.ZipFile(zip_path, "w") as archive:
        archive.writestr("otter_config.json", "{}")
        archive.writestr("tests/f.py", TEST_FILE)
        archive.writestr("tests/g.py", TEST_FILE.replace('"f"', '"g"').replace("(f)", "(g)"))
    folder = tmp_path / "class"
    folder.mkdir()
    _notebook(folder / "ann.ipynb", "def f(x):\n    return x + 1", "def my_g(x):\n    return x + 1")
    failed = OTTER_OUTPUT.replace("f results", "g results").replace("f - ", "g - ")

    def otter(*args, cwd=None, timeout=None):
        tests = [
            {"name": "f", "score": 5, "max_score": 5, "output": "f results: All test cases passed!"},
            {"name": "g", "score": 0, "max_score": 5, "output": failed.replace("g - 2", "g - 1")},
        ]
        Path(args[args.index("-o") + 1], "results.json").write_text(json.dumps({"tests": tests}))
        import subprocess

        return subprocess.CompletedProcess(args, 0, "", "")

    monkeypatch.setattr(course, "_otter", otter)
    results = grading.grade_all(zip_path, folder, tmp_path / "out")
    (row,) = csv.DictReader((tmp_path / "out" / "scores.csv").open())
    assert (row["score"], row["f"], row["g"]) == ("5", "5", "0")
    assert row["problem"] == "`g` is never defined in the notebook (renamed, or its cell deleted?)"
    text = (tmp_path / "out" / "feedback" / "ann.txt").read_text()
    lines = text.splitlines()
    assert [line for line in lines if "never defined" in line] == [
        "- g (5 pt): FAILED: `g` is never defined in the notebook (renamed, or its cell deleted?)"
    ]
    assert not any(line.startswith("- g,") for line in lines) and sum("passed" in x for x in lines) == 3
    assert "Not graded" not in text
    summary = grading.summary(results, tmp_path / "out")
    assert "ann: `g` is never defined" in summary and "1 of 1 graded, mean 5.00" in summary


def test_error_messages_keep_their_quotes_and_are_cut_at_a_word(tmp_path, monkeypatch):
    """Otter writes str(error).strip("'"): the feedback puts the quotes back; a long message is cut
    at a word boundary, before any quotation it would leave open, with the ellipsis outside."""
    # the messages exactly as Otter 7 reported them in the grading rehearsal
    assert grading._reason("TypeError: unsupported operand type(s) for -: 'NoneType' and 'float") == (
        "TypeError: unsupported operand type(s) for -: 'NoneType' and 'float'"
    )
    assert grading._reason("AttributeError: NoneType' object has no attribute 'sum") == (
        "AttributeError: 'NoneType' object has no attribute 'sum'"
    )
    assert grading._reason("ValueError: can't broadcast 'x") == "ValueError: can't broadcast 'x'"
    assert grading._reason("ZeroDivisionError: division by zero") == "ZeroDivisionError: division by zero"
    assert grading._reason("AssertionError") == "wrong result (a check on its values failed)"
    long = "shapes " + " and ".join(f"'({i}, {i + 1})'" for i in range(60)) + " do not match"
    cut = grading._reason(f"ValueError: {long}")
    assert cut.endswith("…") and len(cut) <= len("ValueError: ") + grading.MESSAGE_LIMIT + 1
    kept = cut.removeprefix("ValueError: ").removesuffix("…")
    assert long.startswith(kept) and long[len(kept)] == " "  # at a word boundary
    assert len(grading._quotes(kept)) % 2 == 0  # every quotation it shows closes
    assert grading.shorten("a 'quoted name that is long' end", 12) == "a…"
    # in a feedback file, with the stub's hint after the closed quote
    zip_path = _fake_autograder(tmp_path / "f-autograder.zip")
    output = OTTER_OUTPUT.replace("f - 2", "f - 1").replace(
        "AssertionError: values", "TypeError: unsupported operand type(s) for -: 'NoneType' and 'float"
    )
    monkeypatch.setattr(course, "_otter", _fake_otter({"s": (0, output)}))
    result = grading.grade(zip_path, _notebook(tmp_path / "s.ipynb", "def f(x):\n    ..."))
    text = grading.feedback(result)
    assert (
        "FAILED: TypeError: unsupported operand type(s) for -: 'NoneType' and 'float' "
        "(the function returned None" in text
    ), text


# Learning platforms' exports, as they name what a student handed in
MOODLE = "{name}_{id}_assignsubmission_file_"


def test_moodle_and_canvas_exports_are_matched_to_the_roster(tmp_path, monkeypatch):
    zip_path = _fake_autograder(tmp_path / "ch1_thresholds-autograder.zip")
    code = "def f(x):\n    return x + 1"
    moodle = tmp_path / "moodle"
    for name, student_id in (("Ana Lopez", 123), ("Bo Chen", 456), ("Zoë Ng", 789)):
        (moodle / MOODLE.format(name=name, id=student_id)).mkdir(parents=True)
    _notebook(moodle / MOODLE.format(name="Ana Lopez", id=123) / "ch1_thresholds.ipynb", code)
    _notebook(moodle / MOODLE.format(name="Bo Chen", id=456) / "my work.ipynb", code)
    (moodle / MOODLE.format(name="Zoë Ng", id=789) / "answers.pdf").write_bytes(b"%PDF")
    (moodle / "Bo Chen_456_assignsubmission_onlinetext_").mkdir()  # his online text: the same student
    (moodle / "Bo Chen_456_assignsubmission_onlinetext_" / "onlinetext.html").write_text("<p>hi</p>")
    canvas = tmp_path / "canvas"
    canvas.mkdir()
    _notebook(canvas / "lopezana_12345_67890_ch1_thresholds.ipynb", code)
    _notebook(canvas / "chenbo_LATE_22222_67891_ch1_thresholds-1.ipynb", code)  # late, resubmitted
    _notebook(canvas / "chenbo_LATE_22222_67891_scratch.ipynb", code)
    (canvas / "ngzoe_33333_67892_ch1_thresholds.pdf").write_bytes(b"%PDF")
    graded = []

    def otter(*args, cwd=None, timeout=None):
        graded.append(Path(args[-1]).name)
        return _fake_otter({Path(args[-1]).stem: (5, "")})(*args, cwd=cwd, timeout=timeout)

    monkeypatch.setattr(course, "_otter", otter)
    roster = tmp_path / "roster.csv"
    # a Canvas gradebook: "Family, Given" names, a Points Possible line; Moodle's: full names
    roster.write_text(
        "Student,ID,SIS Login ID\n    Points Possible,,\n"
        '"Lopez, Ana",12345,alopez\n"Chen, Bo",22222,bchen\n"Ng, Zoë",33333,zng\n"Kim, Di",44444,dkim\n'
    )
    for export, expected_files in (
        (canvas, {"Lopez, Ana": "lopezana_12345_67890_ch1_thresholds.ipynb",
                  "Chen, Bo": "chenbo_LATE_22222_67891_ch1_thresholds-1.ipynb"}),
        (moodle, {"Lopez, Ana": "Ana Lopez_123_assignsubmission_file_/ch1_thresholds.ipynb",
                  "Chen, Bo": "Bo Chen_456_assignsubmission_file_/my work.ipynb"}),
    ):  # fmt: skip
        out = tmp_path / f"graded-{export.name}"
        assert (
            course.main(["grade-all", str(zip_path), str(export), "--roster", str(roster), "--out", str(out)])
            == 0
        )
        rows = {r["student"]: r for r in csv.DictReader((out / "scores.csv").open())}
        assert list(rows) == ["Lopez, Ana", "Chen, Bo", "Ng, Zoë", "Kim, Di"], list(rows)
        for student, file in expected_files.items():
            assert (rows[student]["score"], rows[student]["file"], rows[student]["note"]) == ("5", file, "")
        assert rows["Ng, Zoë"]["problem"].startswith("not a notebook") and rows["Ng, Zoë"]["note"] == ""
        assert rows["Kim, Di"]["problem"] == "no submission"
        assert sorted(p.stem for p in (out / "feedback").glob("*.txt")) == sorted(rows)
    # by full name ("Ana Lopez"), by Canvas's id, and without a roster: the platform's names
    (tmp_path / "names.csv").write_text("student\nAna Lopez\n22222\nzoe ng\n")
    grading.grade_all(zip_path, canvas, tmp_path / "by-name", roster=tmp_path / "names.csv")
    rows = {r["student"]: r for r in csv.DictReader((tmp_path / "by-name" / "scores.csv").open())}
    assert [rows[s]["score"] for s in ("Ana Lopez", "22222")] == ["5", "5"]
    assert rows["zoe ng"]["problem"].startswith("not a notebook")  # accents dropped as Canvas may
    grading.grade_all(zip_path, moodle, tmp_path / "plain")
    rows = [r["student"] for r in csv.DictReader((tmp_path / "plain" / "scores.csv").open())]
    assert rows == ["Ana Lopez", "Bo Chen", "Zoë Ng"]
    assert grading.platform_owner("Ana Lopez_123_assignsubmission_file_x.ipynb") == (
        "Ana Lopez",
        "123",
        "x.ipynb",
    )
    assert grading.platform_owner("student-01.ipynb") == ("student-01", "", "student-01.ipynb")
    assert grading.platform_owner("a.b", is_file=False) == ("a.b", "", "a.b")


def test_a_roster_that_matches_no_submission_fails_loudly(tmp_path, capsys, monkeypatch):
    zip_path = _fake_autograder(tmp_path / "f-autograder.zip")
    folder = tmp_path / "export"
    (folder / MOODLE.format(name="Ana Lopez", id=123)).mkdir(parents=True)
    _notebook(folder / MOODLE.format(name="Ana Lopez", id=123) / "f.ipynb", "x = 1")
    roster = tmp_path / "roster.csv"
    roster.write_text("student\ns1234567\ns7654321\n")  # student numbers, not the export's names
    monkeypatch.setattr(course, "_otter", lambda *a, **k: pytest.fail("graded before the roster was checked"))
    err = _one_line_error(capsys, ["grade-all", str(zip_path), str(folder), "--roster", str(roster)])
    assert "no name on --roster" in err and "'s1234567'" in err and "'Ana Lopez'" in err
    assert not (folder / "graded" / "scores.csv").exists()
    (tmp_path / "empty").mkdir()
    err = _one_line_error(
        capsys, ["grade-all", str(zip_path), str(tmp_path / "empty"), "--roster", str(roster)]
    )
    assert "holds no submission" in err


def test_grade_all_writes_scores_and_one_feedback_file_per_student(tmp_path, monkeypatch):
    zip_path = _fake_autograder(tmp_path / "f-autograder.zip")
    folder = tmp_path / "submissions"
    folder.mkdir()
    for name in ("ann", "bob", "cat"):
        _notebook(folder / f"{name}.ipynb", "def f(x):\n    return x + 1")
    (folder / "dan.ipynb").write_text("not json")
    monkeypatch.setattr(
        course, "_otter", _fake_otter({"ann": (5, ""), "bob": (1, OTTER_OUTPUT), "cat": "sleep"})
    )
    results = grading.grade_all(zip_path, folder, tmp_path / "out", timeout=7)
    rows = list(csv.DictReader((tmp_path / "out" / "scores.csv").open()))
    assert [r["student"] for r in rows] == ["ann", "bob", "cat", "dan"]
    assert [(r["score"], r["f"]) for r in rows] == [("5", "5"), ("1", "1"), ("0", "0"), ("0", "0")]
    assert rows[2]["problem"].startswith("stopped after 7 s") and rows[3]["problem"].startswith(
        "not a notebook"
    )
    feedback = {p.stem: p.read_text() for p in (tmp_path / "out" / "feedback").glob("*.txt")}
    assert sorted(feedback) == ["ann", "bob", "cat", "dan"]
    assert "Not graded: not a notebook: not JSON" in feedback["dan"] and feedback["ann"].count("passed") == 3
    assert "2 of 4 graded" in grading.summary(results, tmp_path / "out")
    (tmp_path / "empty").mkdir()
    with pytest.raises(grading.GradingError, match="holds no submission"):
        grading.grade_all(zip_path, tmp_path / "empty", tmp_path / "out2")
    with pytest.raises(grading.GradingError, match="FOLDER .* is not a folder"):
        grading.grade_all(zip_path, tmp_path / "nowhere", tmp_path / "out2")
    for bad, match in ((dict(timeout=0), "--timeout"), (dict(jobs=0), "--jobs")):
        with pytest.raises(grading.GradingError, match=match):
            grading.grade_all(zip_path, folder, tmp_path / "out3", **bad)


def test_grade_all_with_a_roster_gives_every_student_a_row(tmp_path, monkeypatch):
    """An LMS export: a folder per student (notebooks at any depth, several, or none), flat files,
    files that are not notebooks; the roster names who is in the class."""
    zip_path = _fake_autograder(tmp_path / "f-autograder.zip")
    folder = tmp_path / "export"
    code = "def f(x):\n    return x + 1"
    _notebook(folder.mkdir() or folder / "ann.ipynb", code)  # flat
    (folder / "bob" / "attempt").mkdir(parents=True)  # a folder, the notebook one level down
    _notebook(folder / "bob" / "attempt" / "my work.ipynb", code)
    (folder / "bob" / "notes.txt").write_text("hi")
    (folder / "Cat").mkdir()  # the roster says "cat"; several notebooks: the assignment's is graded
    _notebook(folder / "Cat" / "scratch.ipynb", code)
    _notebook(folder / "Cat" / "f.ipynb", code)
    (folder / "dan.pdf").write_bytes(b"%PDF-1.4")  # not a notebook, flat
    (folder / "eve").mkdir()  # a folder without a notebook
    (folder / "eve" / "answers.py").write_text(code)
    (folder / "fay").mkdir()  # an empty folder
    _notebook(folder / "zed.ipynb", code)  # not on the roster
    (folder / ".DS_Store").write_bytes(b"\0")  # ignored, as are checkpoints
    (folder / "ann" / ".ipynb_checkpoints").mkdir(parents=True)
    roster = tmp_path / "roster.csv"
    roster.write_text("Email,Student\na@x,ann\nb@x,bob\nc@x,cat\nd@x,dan\ne@x,eve\nf@x,fay\ng@x,gil\n")
    graded = {}

    def otter(*args, cwd=None, timeout=None):
        graded[Path(args[-1]).name] = True
        return _fake_otter({Path(args[-1]).stem: (5, "")})(*args, cwd=cwd, timeout=timeout)

    monkeypatch.setattr(course, "_otter", otter)
    out = folder / "graded"  # inside the folder: not a submission
    assert course.main(["grade-all", str(zip_path), str(folder), "--roster", str(roster)]) == 0
    rows = list(csv.DictReader((out / "scores.csv").open()))
    assert [r["student"] for r in rows] == ["ann", "bob", "cat", "dan", "eve", "fay", "gil", "zed"]
    row = {r["student"]: r for r in rows}
    assert sorted(graded) == ["ann.ipynb", "f.ipynb", "my work.ipynb", "zed.ipynb"]
    for name in ("ann", "bob", "cat", "zed"):
        assert row[name]["score"] == "5" and not row[name]["problem"], row[name]
    assert row["bob"]["file"] == "bob/attempt/my work.ipynb" and row["cat"]["file"] == "Cat/f.ipynb"
    assert row["dan"]["problem"].startswith("not a notebook: dan.pdf is a .pdf file")
    assert row["eve"]["problem"] == "not a notebook: the folder holds no .ipynb, only answers.py"
    assert row["fay"]["problem"].startswith("no submission")
    assert (row["gil"]["score"], row["gil"]["problem"], row["gil"]["f"]) == ("0", "no submission", "0")
    assert row["zed"]["note"] == "not on the roster" and not row["ann"]["note"]
    feedback = {p.stem: p.read_text() for p in (out / "feedback").glob("*.txt")}
    assert sorted(feedback) == sorted(row) and "Not graded: no submission" in feedback["gil"]
    # without a roster: who handed something in
    shutil.rmtree(out)
    grading.grade_all(zip_path, folder, out)
    assert [r["student"] for r in csv.DictReader((out / "scores.csv").open())] == [
        "ann", "bob", "Cat", "dan", "eve", "fay", "zed",
    ]  # fmt: skip


def test_a_bad_roster_is_named_in_one_line(tmp_path, capsys):
    zip_path = _fake_autograder(tmp_path / "f-autograder.zip")
    _notebook((tmp_path / "s").mkdir() or tmp_path / "s" / "ann.ipynb", "x = 1")
    args = ["grade-all", str(zip_path), str(tmp_path / "s"), "--roster"]
    assert "--roster" in _one_line_error(capsys, [*args, str(tmp_path / "none.csv")])
    for text, match in (
        ("", "names no student"),
        ("student\nann\nAnn\n", "on it twice"),
        ("student,x\n,1\n", "without"),
    ):
        (tmp_path / "r.csv").write_text(text)
        err = _one_line_error(capsys, [*args, str(tmp_path / "r.csv")])
        assert "--roster" in err and match in err, err
    (tmp_path / "r.csv").write_text("ann\nbob\n")  # no header: the first column
    assert grading.read_roster(tmp_path / "r.csv") == ["ann", "bob"]


# ----------------------------------------------------------------------------------------
# One term: the repository and release, the hidden inputs per seed, the bundle
# ----------------------------------------------------------------------------------------

FORK = repository.Repository("a-university/sparse-attention-2027", "term-2027")


def test_repository_and_release_come_from_config_yml(tmp_path):
    repo = repository.load()
    assert repo.name == "entmax-book/entmax-book" and repo.release == "main"
    config = tmp_path / "_config.yml"
    config.write_text(
        "repository:\n  url: https://github.com/a-university/sparse-attention-2027\n  branch: term-2027\n"
    )
    assert repository.load(config) == FORK
    config.write_text("repository:\n  url: https://gitlab.com/x/y\n  branch: main\n")
    with pytest.raises(ValueError, match="repository.url"):
        repository.load(config)


@pytest.mark.parametrize("master", MASTERS, ids=lambda p: p.stem)
def test_prepared_master_names_the_release_and_what_the_grader_installs(master, tmp_path):
    prepared = _read(course.prepare(master, tmp_path, FORK))
    text = "\n".join(c.source for c in prepared.cells)
    assert "{{" not in text and "entmax-book/entmax-book" not in text
    assert f"raw.githubusercontent.com/{FORK.name}/term-2027/student/assignments/{master.stem}/tests" in text
    assert (
        FORK.colab_url(f"student/assignments/{master.stem}/{master.stem}.ipynb") in prepared.cells[1].source
    )
    # Otter's requirements (Gradescope's environment) cover every package the notebook imports
    assert "requirements: requirements.txt" in prepared.cells[0].source
    config = (tmp_path / "requirements.txt").read_text()
    imported = {m.split(".")[0] for m in re.findall(r"^\s*(?:from|import)\s+([\w.]+)", text, flags=re.M)}
    for module in imported & {"numpy", "scipy", "jax", "entmax_lib"}:
        assert re.search(rf"^{module}\b", config, flags=re.M), (module, config)
    if "entmax_lib" in imported:
        assert f"entmax_lib @ git+https://github.com/{FORK.name}.git@term-2027" in config


@pytest.mark.parametrize("master", MASTERS, ids=lambda p: p.stem)
def test_a_term_seed_draws_new_hidden_inputs_and_keeps_the_public_tests(master, tmp_path):
    def tests(seed, out):
        return [
            (h, s)
            for q in _questions(course.prepare(master, tmp_path / out, FORK, seed)).values()
            for h, s in q[1]
        ]

    public, term, other = tests(None, "a"), tests(2027, "b"), tests(2028, "c")
    assert [s for h, s in public if not h] == [s for h, s in term if not h]
    seeded = [s for h, s in public if h and "default_rng(" in s]
    assert seeded, "a hidden test with random inputs"
    changed = [(a, b, c) for (_, a), (_, b), (_, c) in zip(public, term, other, strict=True) if a != b]
    assert len(changed) == len(seeded) and all(b != c for _, b, c in changed)


def _rubric_points(path):
    """The points of a rubric's table: the sum of its Points column."""
    rows = [line.split("|") for line in path.read_text("utf-8").splitlines() if line.startswith("| ")]
    column = [cell.strip() for cell in rows[0]].index("Points")
    return sum(int(row[column]) for row in rows[1:] if row[column].strip().isdigit())


def test_every_assignment_is_worth_its_weight():
    weights = {part["part"]: part for part in plan.load()["grading"]}
    assignments = weights["Assignments 1–5"]
    for master in MASTERS:
        points = sum(
            int(re.search(r"points:\s*(\d+)", source).group(1))
            for _, tests in _questions(master).values()
            for _, source in tests
        )
        assert points == assignments["points"] == 10, master.name
    assert assignments["items"] == len(MASTERS)
    assert (weights["Labs 4 and 5"]["items"], weights["Labs 4 and 5"]["points"]) == (len(LABS), 10)
    assert _rubric_points(ROOT / "course" / "rubrics" / "lab.md") == weights["Labs 4 and 5"]["points"]
    final = weights["Final"]
    assert sum(q.points for q in exam.paper(0)) == final["points"]
    assert _rubric_points(ROOT / "course" / "rubrics" / "project.md") == final["points"]


def test_the_public_assignments_weigh_less_than_what_a_term_keeps_private():
    """The assignments' masters and hidden tests' code are public: the default plan makes them
    formative and puts most of the grade on the labs and the final; every page that states a
    weight or points states the plan's."""
    parts = {part["part"]: part for part in plan.load()["grading"]}
    assignments, labs, written, final = (
        parts[k] for k in ("Assignments 1–5", "Labs 4 and 5", "Written exercises", "Final")
    )
    assert assignments["weight"] <= 20 < labs["weight"] + final["weight"]
    assert "formative" in assignments["how"] and "private fork with new masters" in assignments["how"]
    each = lambda part: f"{plan.weight_each(part):g} %"  # noqa: E731
    readme = " ".join(_readme_section().split())
    assert f"the five assignments {assignments['weight']} % ({each(assignments)} each, formative" in readme
    assert f"the two labs {labs['weight']} % ({each(labs)} each)" in readme
    assert f"the final (the exam or the mini-project) {final['weight']} %" in readme
    assert (
        f"**Assignments** ({assignments['points']} points each, {each(assignments)} of the grade each"
        in readme
    )
    assert f"**Labs** (graded, {labs['points']} points and {each(labs)} of the grade each" in readme
    assert f"The **final** ({final['weight']} % of the grade)" in readme
    assert "half the plan's grade" not in readme and "50 %" not in readme
    # what a lecturer must do to make the assignments summative, said plainly
    summative = readme[readme.index("**To make the assignments summative**") :]
    for words in ("new masters", "private", "a new seed is not enough", "course/plan.json", "make bundle"):
        assert words in summative, words
    rubrics = ROOT / "course" / "rubrics"
    assert f"{labs['points']} points each, {each(labs)} of the grade each" in (rubrics / "lab.md").read_text()
    assert (
        f"{final['points']} points, {final['weight']} % of the grade" in (rubrics / "project.md").read_text()
    )
    assert f"{written['points']} points each" in (rubrics / "written.md").read_text()
    brief = (ROOT / "course" / "project" / "brief.md").read_text()
    assert f"{final['weight']} % of the grade" in brief
    policies = " ".join(POLICIES.read_text("utf-8").split())
    assert f"({assignments['weight']} % of the grade, {each(assignments)} each)" in policies
    assert f"the labs ({labs['weight']} %, {each(labs)} each)" in policies
    assert f"the final ({final['weight']} %)" in policies
    intro = (ROOT / "intro.md").read_text("utf-8")
    assert f"| Assignments 1–5 | {assignments['weight']} % ({each(assignments)} each) | 10 each |" in intro
    # every "N % of the grade" anywhere in the kit is one of the plan's weights
    stated = set()
    for path in [ROOT / "README.md", *sorted((ROOT / "course").rglob("*.md"))]:
        stated |= {float(n) for n in re.findall(r"(\d+) % of the grade", path.read_text("utf-8"))}
    assert stated <= {float(p["weight"]) for p in parts.values()} | {
        plan.weight_each(p) for p in parts.values()
    }


def test_a_plan_part_needs_items_and_points(tmp_path):
    broken = json.loads(plan.PLAN.read_text("utf-8"))
    broken["grading"][0]["items"] = 0
    (tmp_path / "plan.json").write_text(json.dumps(broken))
    with pytest.raises(plan.PlanError, match="items"):
        plan.load(tmp_path / "plan.json")
    broken["grading"][0].update(items=5, points=None)
    (tmp_path / "plan.json").write_text(json.dumps(broken))
    with pytest.raises(plan.PlanError, match="points"):
        plan.load(tmp_path / "plan.json")


def test_intro_and_schedule_are_made_from_the_plan():
    current = plan.load()
    intro = (ROOT / "intro.md").read_text("utf-8")
    assert plan.intro_text(current, intro) == intro, (
        "run `make course`: intro.md's tables differ from course/plan.json"
    )
    schedule = (ROOT / "course" / "schedule.csv").read_text("utf-8")
    assert schedule == plan.csv_text(plan.dated(current, None)), "run `make course`: course/schedule.csv"
    weeks = [m["week"] for m in current["meetings"] if m["meeting"] in ("Lecture", "Lab")]
    assert (
        weeks.count(3) == 2 and sum("Assignment 3 handed out" in m["what"] for m in current["meetings"]) == 1
    )
    for week in range(1, 6):  # one chapter a week
        lecture = next(m for m in current["meetings"] if m["week"] == week and m["meeting"] == "Lecture")
        assert re.findall(r"Chapter (\d)", lecture["what"]) == [str(week)], lecture


def _parse_ics(text):
    """A small RFC 5545 reader: checks the physical lines, unfolds them and returns the components
    as (name, [(property, parameters, value)], children)."""
    raw = text.encode("utf-8")
    assert raw.endswith(b"\r\n") and b"\n" not in raw.replace(b"\r\n", b""), "lines end with CRLF only"
    physical = raw.split(b"\r\n")[:-1]
    assert all(len(line) <= 75 for line in physical), max(physical, key=len)
    for line in physical:
        line.decode("utf-8")  # a fold never splits a character
    logical = []
    for line in physical:
        if line[:1] in (b" ", b"\t"):
            assert logical, "a continuation line first"
            logical[-1] += line[1:]
        else:
            logical.append(line)
    stack = [("ROOT", [], [])]
    for line in (entry.decode("utf-8") for entry in logical):
        match = re.fullmatch(r"([A-Z][A-Z0-9-]*)((?:;[A-Z0-9-]+=[^;:]*)*):(.*)", line)
        assert match, f"not a content line: {line!r}"
        name, params, value = match.groups()
        assert not re.search(r"(?<!\\)[,;]", value) or name not in ("SUMMARY", "DESCRIPTION"), line
        if name == "BEGIN":
            stack.append((value, [], []))
        elif name == "END":
            component = stack.pop()
            assert component[0] == value, f"END:{value} closes {component[0]}"
            stack[-1][2].append(component)
        else:
            stack[-1][1].append((name, params, value))
    (calendar,) = stack[0][2]
    assert len(stack) == 1 and calendar[0] == "VCALENDAR"
    return calendar


def _props(component, name):
    return [value for key, _, value in component[1] if key == name]


def test_dated_schedule_and_calendar():
    rows = plan.dated(plan.load(), "2027-01-11")
    first_lab = next(r for r in rows if r["meeting"] == "Lab")
    assert (first_lab["week"], first_lab["date"], first_lab["start"]) == ("1", "2027-01-14", "14:00")
    stamp = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)
    ics = plan.icalendar(rows, stamp=stamp)
    calendar = _parse_ics(ics)
    assert _props(calendar, "VERSION") == ["2.0"] and _props(calendar, "PRODID")
    events = [c for c in calendar[2] if c[0] == "VEVENT"]
    assert len(events) == sum(bool(r["date"] and r["start"]) for r in rows) > 10
    uids = [_props(e, "UID") for e in events]
    assert all(len(u) == 1 for u in uids) and len({u[0] for u in uids}) == len(events), "UIDs unique"
    for event in events:
        assert len(_props(event, "DTSTAMP")) == 1 and len(_props(event, "DTSTART")) == 1
        assert all(re.fullmatch(r"\d{8}T\d{6}Z", v) for k in ("DTSTART", "DTEND") for v in _props(event, k))
    by_summary = {_props(e, "SUMMARY")[0]: e for e in events}
    lab = by_summary["Sparse attention (the entmax book): week 1 lab"]
    assert _props(lab, "DTSTART") == ["20270114T140000Z"] and _props(lab, "DTEND") == ["20270114T153000Z"]
    # the long descriptions are folded, and unfold to the plan's text (escaped)
    lecture = by_summary["Sparse attention (the entmax book): week 1 lecture"]
    assert _props(lecture, "DESCRIPTION")[0].replace("\\,", ",").replace("\\;", ";") == rows[1]["what"]
    assert max(len(line.encode()) for line in ics.split("\r\n")) == 75
    # every deadline of the plan is an event at its time, with a reminder
    deadlines = [e for e in events if _props(e, "CATEGORIES") == ["DEADLINE"]]
    assert len(deadlines) == len(plan.load()["due"]) >= 7
    a1 = by_summary["Sparse attention (the entmax book): Assignment 1 due"]
    assert _props(a1, "DTSTART") == ["20270121T140000Z"] and [c[0] for c in a1[2]] == ["VALARM"]
    # stable: the same plan and term give the same file; another term other UIDs
    assert plan.icalendar(plan.dated(plan.load(), "2027-01-11"), stamp=stamp) == ics
    other = plan.icalendar(plan.dated(plan.load(), "2027-09-27"), stamp=stamp)
    assert not {u[0] for u in uids} & set(re.findall(r"^UID:(.*)\r$", other, flags=re.M))
    # local times in the plan's zone, in UTC: British Summer Time is an hour ahead
    summer = plan.icalendar(plan.dated(plan.load(), "2027-06-07"), stamp=stamp)
    assert "DTSTART:20270610T130000Z" in summer  # week 1's lab, 14:00 in London
    assert "DTSTART:20270610T120000Z" in plan.icalendar(
        plan.dated(plan.load(), "2027-06-07"), zone="Europe/Berlin", stamp=stamp
    )
    with pytest.raises(plan.PlanError, match="timezone 'Mars/Base'"):
        plan.icalendar(rows, zone="Mars/Base")
    with pytest.raises(plan.PlanError, match="Monday"):
        plan.dated(plan.load(), "2027-01-12")
    with pytest.raises(plan.PlanError, match="not a date"):
        plan.dated(plan.load(), "next monday")


def test_ics_parser_check_fails_on_what_rfc_5545_forbids():
    good = plan.icalendar(plan.dated(plan.load(), "2027-01-11"))
    for bad in (
        good.replace("\r\n", "\n"),  # bare LF
        good.replace("\r\n ", ""),  # unfolded: lines over 75 octets
        good.replace("END:VEVENT", "END:VTODO", 1),  # unbalanced
    ):
        with pytest.raises(AssertionError):
            _parse_ics(bad)
    assert plan.fold("X:" + "é" * 80).replace("\r\n ", "") == "X:" + "é" * 80


def test_every_graded_item_has_a_deadline_in_the_plan(tmp_path):
    current = plan.load()
    due = {d["item"]: d for d in current["due"]}
    assert {f"Assignment {i}" for i in range(1, len(MASTERS) + 1)} | {"Lab 4", "Lab 5"} <= set(due)
    for item, d in due.items():  # each meeting text that says "X due" is in the week of X's deadline
        said = [m["week"] for m in current["meetings"] if re.search(rf"\b{item} due\b", m["what"])]
        assert not said or said == [d["week"]], (item, said, d)
    rows = plan.dated(current, "2027-01-11")
    assert [r["what"] for r in rows if r["meeting"] == "Due"] == [f"{d['item']} due" for d in current["due"]]
    broken = dict(current, due=[{"item": "Assignment 1", "week": 99, "weekday": 3, "time": "14:00"}])
    (tmp_path / "plan.json").write_text(json.dumps(broken))
    with pytest.raises(plan.PlanError, match="week 99"):
        plan.load(tmp_path / "plan.json")
    broken["due"][0].update(week=2, time="2pm")
    (tmp_path / "plan.json").write_text(json.dumps(broken))
    with pytest.raises(plan.PlanError, match="'2pm' is not HH:MM"):
        plan.load(tmp_path / "plan.json")


@pytest.mark.parametrize("lab", LABS, ids=lambda p: p.stem)
def test_student_lab_is_committed_without_its_answers(lab):
    student_nb, key = course.split_lab(lab, repository.load())
    committed = ROOT / "student" / "labs" / lab.name
    cells = lambda nb: [(c.cell_type, c.source) for c in nb.cells]
    assert cells(_read(committed)) == cells(student_nb), "run `make course` and commit student/labs"
    text = "\n".join(c.source for c in student_nb.cells)
    assert "## Reference" not in text and "Reference answers" not in text and "{{" not in text
    assert not any("reference" in c.metadata.get("tags", []) for c in student_nb.cells)
    assert repository.load().colab_url(f"student/labs/{lab.name}") in student_nb.cells[0].source
    assert "Reference answers" in "\n".join(c.source for c in key.cells)
    assert re.search(r"90 minutes.*Part A.*Part B.*Part C", student_nb.cells[0].source, flags=re.S)


def test_exam_paper_numbers_come_from_the_seed_and_the_specimen_has_no_key():
    a, b = exam.paper(course.term_seed(2027, "exam")), exam.paper(course.term_seed(2028, "exam"))
    assert sum(q.points for q in a) == 20 and [q.text for q in a] != [q.text for q in b]
    specimen = (ROOT / "course" / "exam" / "specimen.md").read_text("utf-8")
    assert specimen == exam.specimen(), "run `make course`: course/exam/specimen.md"
    assert "Key" not in specimen and all(q.key not in specimen for q in exam.paper(0))
    key = exam.markdown(a, "k", with_key=True)
    assert key.count("> **Key.**") == len(a) == len(exam.QUESTIONS)


@pytest.mark.slow
def test_exam_keys_are_right():
    seeds = [int(s) for s in np.random.default_rng(5).integers(2**32, size=8)]
    questions = [exam.sparsemax_by_hand(np.random.default_rng(seed)) for seed in seeds]
    z = np.array(
        [[float(v) for v in re.search(r"z = \(([^)]*)\)", q.text).group(1).split(",")] for q in questions]
    )
    p = np.array(
        [[float(v) for v in re.search(r"\$p = \(([^)]*)\)", q.key).group(1).split(",")] for q in questions]
    )
    assert np.allclose(p, np.asarray(entmax_lib.sparsemax(z.astype(np.float32))), atol=2e-4)
    for seed in seeds:
        q = exam.paired_claims(np.random.default_rng(seed))
        a, b = (np.array(v.split(", "), float) for v in re.findall(r": \(([^)]*)\)", q.text)[:2])
        low, high = map(float, re.search(r"interval \[([-\d.]+), ([-\d.]+)\]", q.key).groups())
        half = scipy_stats.t.ppf(0.975, len(a) - 1) * np.std(a - b, ddof=1) / np.sqrt(len(a))
        assert np.allclose([low, high], [np.mean(a - b) - half, np.mean(a - b) + half], atol=1e-4)


def test_the_exams_density_and_diversity_key_is_right():
    from scipy.spatial.distance import jensenshannon

    for seed in range(60):
        q = exam.density_and_diversity(np.random.default_rng(seed))
        vectors = re.findall(r"p_[12] = \(([^)]*)\)", q.text)
        p1, p2 = (np.array([float(x) for x in v.split(", ")]) for v in vectors)
        assert "-0" not in q.text
        for p in (p1, p2):
            assert p.min() >= 0 and np.isclose(p.sum(), 1) and 1 < np.sum(p > 0) < 4
        assert np.any((p1 > 0) & (p2 > 0)) and not np.array_equal(p1 > 0, p2 > 0)
        assert f"densities {np.sum(p1 > 0)}/4 and {np.sum(p2 > 0)}/4" in q.key
        js = float(re.search(r"JS \$= ([0-9.]+)\$", q.key).group(1))
        assert abs(js - jensenshannon(p1, p2, base=2) ** 2) < 1e-4


def test_the_exams_holm_key_needs_the_claimed_sign_as_well_as_the_corrected_p():
    for seed in range(60):
        q = exam.paired_claims(np.random.default_rng(seed))
        assert "both with effects in the claimed direction" in q.text
        mean = float(re.search(r"mean (-?[\d.]+), interval", q.key).group(1))
        adjusted = [float(v) for v in re.search(r"claims 1–3: \(([^)]*)\)", q.key).group(1).split(", ")]
        held = q.key[q.key.index("hold: ") :].split(" (2 pts)")[0]
        claims = set(re.findall(r"claim (\d)", held.split(" (claim 1 is reversed")[0]))
        assert ("1" in claims) == (adjusted[0] < 0.05 and mean > 0), held
        assert ("reversed" in held) == (adjusted[0] < 0.05 and mean < 0), held


def test_the_exams_no_cost_question_is_non_inferiority_and_both_answers_occur():
    verdicts = set()
    for seed in range(40):
        q = exam.no_cost(np.random.default_rng(seed))
        d = np.array(re.search(r"d = \(([^)]*)\)", q.text).group(1).split(", "), float)
        low, high = map(float, re.search(r"interval \[([-\d.]+), ([-\d.]+)\]", q.key).groups())
        half = scipy_stats.t.ppf(0.975, len(d) - 1) * np.std(d, ddof=1) / np.sqrt(len(d))
        assert np.allclose([low, high], [d.mean() - half, d.mean() + half], atol=1e-4)
        verdict = "not shown" if "not shown" in q.key else "shown"
        assert verdict == ("shown" if low > -0.5 else "not shown") and abs(low + 0.5) >= 0.02
        verdicts.add(verdict)
    assert verdicts == {"shown", "not shown"}


def test_bundle_refuses_the_repository_and_a_used_folder(tmp_path):
    with pytest.raises(bundle.BundleError, match="inside the repository"):
        bundle.make(ROOT / "_build" / "bundle", seed=1, run_keys=False)
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "x").write_text("")
    with pytest.raises(bundle.BundleError, match="not empty"):
        bundle.make(tmp_path / "old", seed=1, run_keys=False)
    with pytest.raises(plan.PlanError, match="Monday"):
        bundle.make(tmp_path / "new", seed=1, start="2027-01-13", run_keys=False)


def test_a_term_seed_is_drawn_when_none_is_given_and_a_guessable_one_is_warned_of(
    tmp_path, capsys, monkeypatch
):
    drawn = {bundle.choose_seed(None)[0] for _ in range(5)}
    assert len(drawn) == 5 and all(bundle.GUESSABLE < s < 2**128 for s in drawn)
    seed, warning = bundle.choose_seed(None)
    assert str(seed) in warning and "keep it" in warning.lower()
    assert "guess" in bundle.choose_seed(2027)[1] and "guess" in bundle.choose_seed(2**32 - 1)[1]
    assert "guess" not in bundle.choose_seed(2**32)[1] and str(2**100) in bundle.choose_seed(2**100)[1]
    with pytest.raises(bundle.BundleError, match="seed"):
        bundle.choose_seed(-1)
    with pytest.raises(bundle.BundleError, match="seed"):
        bundle.make(tmp_path / "b", seed="2027", run_keys=False)
    # different seeds draw different hidden inputs even above 2**32 (the whole seed is used)
    assert course.term_seed(2**64, "x") != course.term_seed(2**64 + 2**40, "x")
    # the command line: no --seed draws one, prints it, and makes the bundle with it
    made = {}
    monkeypatch.setattr(
        bundle,
        "make",
        lambda out, seed, start=None, timezone=None, run_keys=True: (
            made.update(seed=seed, keys=run_keys) or "ok"
        ),
    )
    assert course.main(["bundle", str(tmp_path / "b")]) == 0
    err = capsys.readouterr().err
    assert "WARNING" in err and str(made["seed"]) in err and made["seed"] >= bundle.GUESSABLE
    assert course.main(["bundle", str(tmp_path / "b"), "--seed", "7"]) == 0 and made["seed"] == 7
    assert made["keys"] and course.main(["bundle", str(tmp_path / "b"), "--no-run-keys"]) == 0
    assert not made["keys"]
    assert "guess" in capsys.readouterr().err
    for bad in ("abc", "-3", "1.5"):
        assert "--seed" in _one_line_error(capsys, ["bundle", str(tmp_path / "b"), "--seed", bad])


def test_make_help_lists_each_target_once():
    text = (ROOT / "Makefile").read_text("utf-8")
    header = text[: text.index("\n\n", text.index("make colab"))]
    listed = re.findall(r"^#   make ([\w-]+)", text, flags=re.M)
    assert len(listed) == len(set(listed)), sorted(t for t in listed if listed.count(t) > 1)
    assert {"colab", "student", "course", "grade", "bundle", "grade-rehearsal", "slides", "pdf"} <= set(
        listed
    )
    assert "make colab" in header


def test_readme_says_what_is_public_and_how_to_release_a_term(tmp_path):
    section = _readme_section()
    public = section[section.index("**What is public.**") : section.index("**A term's release.**")]
    for words in ("instructor bundle", "hidden tests' *inputs*", "per term", "course/policies.md"):
        assert words in public, words
    release = section[section.index("**A term's release.**") : section.index("**Grading safely.**")]
    (block,) = re.findall(r"```bash\n(.*?)```", release, flags=re.S)
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.split("#")[0].strip()]
    # the sed that the README gives changes _config.yml's release, and only it
    (sed,) = [c for c in commands if c.startswith("sed ")]
    pattern, replacement = re.fullmatch(r"sed -i 's/(.*)/(.*)/' _config.yml", sed).groups()
    config = (ROOT / "_config.yml").read_text("utf-8")
    changed = re.sub(pattern, replacement, config, flags=re.M)
    (tmp_path / "_config.yml").write_text(changed)
    assert repository.load(tmp_path / "_config.yml") == repository.Repository(
        repository.load().name, "term-2027"
    )
    assert len(changed.splitlines()) == len(config.splitlines())
    assert sum(a != b for a, b in zip(changed.splitlines(), config.splitlines(), strict=True)) == 1
    tag = next(c for c in commands if c.startswith("git commit"))
    assert "git tag -a term-2027" in tag and any(
        c.startswith("git push origin HEAD term-2027") for c in commands
    )
    (bundle_line,) = [c for c in commands if c.startswith("make bundle")]
    assert "SEED" not in bundle_line  # the seed is drawn, and printed to keep
    assert "git+https://github.com/OWNER/NAME.git@term-2027" in release


POLICIES = ROOT / "course" / "policies.md"


def test_policies_cover_what_a_term_needs_and_agree_with_the_plan():
    text = POLICIES.read_text("utf-8")
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings == [
        "Late work",
        "Collaboration and academic integrity",
        "AI tools",
        "Regrade requests",
        "Accessibility",
    ]
    for page in (ROOT / "README.md", ROOT / "student" / "README.md", ROOT / "intro.md"):
        assert "course/policies.md" in page.read_text("utf-8"), page.name
    # the deadlines the policies state are the plan's
    due = {d["item"]: d for d in plan.load()["due"]}
    assert "by the Sunday of the lab's week, 23:59" in text
    assert all((due[f"Lab {n}"]["weekday"], due[f"Lab {n}"]["time"]) == (6, "23:59") for n in (4, 5))
    lab = plan.load()["slots"]["Lab"]
    assert "due at the start of the lab in the week after they are handed out" in text
    for n in range(1, 6):
        d = due[f"Assignment {n}"]
        handed = next(m["week"] for m in plan.load()["meetings"] if f"Assignment {n} handed out" in m["what"])
        assert (d["week"], d["weekday"], d["time"]) == (handed + 1, lab["weekday"], lab["start"]), n
    lecture = plan.load()["slots"]["Lecture"]
    assert "due at the lecture of the week after they are handed out\n  (weeks 2 and 3)" in text
    for n, week in ((1, 2), (2, 3)):
        d = due[f"Written exercise {n}"]
        assert (d["week"], d["weekday"], d["time"]) == (week, lecture["weekday"], lecture["start"]), n
    assert "chooses the mini-project says so in writing by the\n  lecture of week 6" in text
    assert (due["Mini-project"]["week"], due["Mini-project"]["time"]) == (
        next(m["week"] for m in plan.load()["meetings"] if m["meeting"] == "Exam"),
        plan.load()["slots"]["Exam"]["start"],
    )


@pytest.mark.slow
def test_a_term_bundle_grades_its_solutions_in_full(tmp_path):
    out = tmp_path / "bundle"
    bundle.make(out, seed=2027, start="2027-01-11", repo=FORK, run_keys=False)
    names = [m.stem for m in MASTERS]
    assert sorted(p.stem for p in (out / "assignments").glob("*.ipynb")) == names
    assert sorted((out / "labs").iterdir()) == [out / "labs" / f"{lab.stem}-key.ipynb" for lab in LABS]
    # the term's labs: drawn seeds, the same in the students' notebook and in the key, not the public ones
    for lab in LABS:
        term = course.lab_parameters(lab.stem, 2027)
        student = (out / "student" / "labs" / lab.name).read_text()
        key = (out / "labs" / f"{lab.stem}-key.ipynb").read_text()
        for setting, literal in term.items():
            line = f"{setting} = {literal}"
            assert line in student and line in key, (lab.stem, line)
            assert line not in (ROOT / "student" / "labs" / lab.name).read_text()
        assert "## Reference" not in student and "## Reference" in key
        cells = nbformat.reads(student, as_version=4).cells
        assert not any("colab-badge" in c.source for c in cells)
        # only the badge's line is replaced: the title, the time plan and Part A's questions stay
        public = nbformat.read(ROOT / "student" / "labs" / lab.name, as_version=4).cells[0].source
        assert cells[0].source == public.replace(public.splitlines()[0], course.TERM_LAB_NOTE, 1)
        assert cells[0].source.startswith(course.TERM_LAB_NOTE) and "# Lab " in cells[0].source
        assert "**Part A.**" in cells[0].source
    assert (out / "exam" / "key.md").exists() and (out / "policies.md").read_text() == POLICIES.read_text()
    calendar = _parse_ics((out / "schedule.ics").read_bytes().decode("utf-8"))
    assert sum(_props(e, "CATEGORIES") == ["DEADLINE"] for e in calendar[2]) == len(plan.load()["due"])
    for name in names:
        result = grading.grade(
            out / "autograders" / f"{name}-autograder.zip", out / "assignments" / f"{name}.ipynb"
        )
        assert result.score == result.max_score == 10, grading.feedback(result)


def test_lab_parameters_are_drawn_per_term_and_written_on_their_one_line():
    a, b = course.lab_parameters("ch4_lab", 1), course.lab_parameters("ch4_lab", 2)
    assert a != b and set(a) == {"SEEDS"} and course.lab_parameters("ch4_lab", None) == {}
    seeds = eval(a["SEEDS"])
    assert len(seeds) == len(set(seeds)) == 3 and list(seeds) == sorted(seeds)
    five = eval(course.lab_parameters("ch5_lab", 1)["SEEDS"])
    assert len(five) == 6 and set(five) <= set(range(10))
    student, key = course.split_lab(LABS[0], repository.load(), a)
    assert f"SEEDS = {a['SEEDS']}  # the lab's three seeds" in "\n".join(c.source for c in key.cells)
    with pytest.raises(ValueError, match="NOPE is set on 0 lines"):
        course.split_lab(LABS[0], repository.load(), {"NOPE": "1"})


@pytest.mark.slow
def test_an_answer_key_is_run_with_its_outputs_and_a_failing_one_stops_the_bundle():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("SEEDS = (3, 4)\nprint(sum(SEEDS))")])
    ran = bundle.run_notebook(nb, timeout=120)
    assert ran.cells[0].outputs[0]["text"] == "7\n" and not nb.cells[0].get("outputs")
    broken = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import no_such_module")])
    with pytest.raises(bundle.BundleError, match="ModuleNotFoundError"):
        bundle.run_notebook(broken, timeout=120)


@pytest.mark.slow
def test_a_made_up_class_is_graded_by_one_command(built, tmp_path, capsys):
    out, _ = built
    made = fake_class.make_class(out / "build" / "ch4_attention_analysis", tmp_path / "class", students=7)
    kinds = dict((p.stem, k) for p, k in made)
    assert set(kinds.values()) == set(fake_class.KINDS)
    zip_path = out / "build" / "ch4_attention_analysis-autograder.zip"
    assert course.main(["grade-all", str(zip_path), str(tmp_path / "class"), "--timeout", "20"]) == 0
    scores = tmp_path / "class" / "graded" / "scores.csv"
    assert len(list(csv.DictReader(scores.open()))) == 7
    assert fake_class.check(tmp_path / "kinds.csv", scores, timeout=20) == []
    # the check can fail: a right submission graded 0 does not fit its kind
    rows = list(csv.DictReader(scores.open()))
    right = next(r for r in rows if kinds[r["student"]] == "right")
    right["score"] = "0"
    broken = tmp_path / "broken.csv"
    with broken.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert fake_class.check(tmp_path / "kinds.csv", broken, timeout=20) == [
        f"{right['student']} (right): graded 0 / 10, problem ''"
    ]
    missing = next(s for s, k in kinds.items() if k == "missing function")
    assert "is never defined" in (tmp_path / "class" / "graded" / "feedback" / f"{missing}.txt").read_text()


@pytest.mark.slow
def test_a_cell_that_fails_in_the_graders_own_run_is_named_in_the_feedback(built, tmp_path):
    """Otter goes on after an error: the grade stands, and the feedback names the cell."""
    out, _ = built
    made = fake_class.make_class(out / "build" / "ch4_attention_analysis", tmp_path / "class", students=1)
    ((path, kind),) = made
    assert kind == "right"
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("ratio = 1 / 0  # a slip after the graded work"))
    nbformat.write(nb, path)
    result = grading.grade(out / "build" / "ch4_attention_analysis-autograder.zip", path, timeout=120)
    assert result.score == result.max_score > 0
    number = sum(c.cell_type == "code" for c in nb.cells)
    assert result.notes == [
        f"in the grader's run, code cell {number} (`{grading._first_line(nb.cells[-1].source)}`) ended in "
        "ZeroDivisionError: division by zero"
    ]
    assert "Note: in the grader's run, code cell" in grading.feedback(result)


def test_only_the_students_own_cells_are_named_from_the_graders_run():
    mine = {"cell_type": "code", "source": "import numpy as np\nx = np.log(-1) / 0"}
    error = {"output_type": "error", "ename": "ZeroDivisionError", "evalue": "float division by zero"}
    added = {"cell_type": "code", "source": "otter_state = 1 / 0", "outputs": [error]}  # Otter's own
    check = {"cell_type": "code", "source": 'grader.check("f")'}  # the student's, but plumbing
    executed = {"cells": [added, {**check, "outputs": [{**error, "ename": "NameError"}]}]}
    executed["cells"] += [{**mine, "outputs": [error]}, {"cell_type": "markdown", "source": "x"}]
    notes = grading.errors_in_fresh_run(executed, {"cells": [check, mine]})
    assert notes == {
        2: "in the grader's run, code cell 2 (`import numpy as np`) ended in ZeroDivisionError: "
        "float division by zero"
    }
    assert grading.errors_in_fresh_run({"cells": [{**mine, "outputs": []}]}, {"cells": [mine]}) == {}
    # the function defined in the failed cell is named; one defined elsewhere is not
    defining = {"cell_type": "code", "source": "def f(x):\n    return np.log(x) / 0"}
    assert grading.defined_in_failed_cell({2}, {"cells": [mine, defining]}, ["f"]) == [
        "`f` is defined in code cell 2, which stopped with an error in the grader's run (see the note)"
    ]
    assert grading.defined_in_failed_cell({1}, {"cells": [mine, defining]}, ["f"]) == []


@pytest.mark.parametrize(
    "module", [repository, course, exam, grading, plan, bundle], ids=lambda m: m.__name__
)
def test_examples_in_the_course_tools_run(module):
    import doctest

    assert doctest.testmod(module).failed == 0


# ----------------------------------------------------------------------------------------
# The kit agrees with the book: Chapter 5's head diversity, the verdict words, the primer,
# exercises named by title, the recorded runs' times
# ----------------------------------------------------------------------------------------


def _solution(name, function):
    """The master's solution of one function, run."""
    namespace = {}
    for solutions, _ in _questions(ROOT / "course" / "assignments" / f"{name}.ipynb").values():
        for source in solutions:  # every question's, in order: the first imports NumPy
            exec(source, namespace)
    return namespace[function]


def test_assignment_5_uses_chapter_5s_head_diversity_and_the_books_verdicts():
    from entmax_book import stats
    from entmax_lib.metrics import head_diversity

    master = ROOT / "course" / "assignments" / "ch5_head_analysis.ipynb"
    text = "\n".join(c.source for c in _read(master).cells)
    assert "natural log" not in text and "pairwise" not in text and "head_disagreement" not in text
    assert r"\log_H" in text and "base $H$" in text and "entmax_lib.metrics.head_diversity" in text
    # the solution is the library's (and so Chapter 5's) measure, whatever the number of heads
    solution = _solution("ch5_head_analysis", "head_diversity")
    rng = np.random.default_rng(0)
    for heads in (2, 3, 8):
        w = rng.dirichlet(np.ones(7) * 0.3, size=(heads, 5))
        w[w < 0.05] = 0
        w /= w.sum(-1, keepdims=True)
        assert np.isclose(solution(w), head_diversity(w)), heads
    # a student who calls the library passes every test of the question, the hidden ones too
    (_, tests) = _questions(master)["head_diversity"]
    for _, source in tests:
        namespace = {}
        exec(source, namespace)
        (test,) = [f for name, f in namespace.items() if name.startswith("test_")]
        test(head_diversity)
    # the verdict is the book's word for the paired t-test's p and the sign of the mean
    paired_interval = _solution("ch5_head_analysis", "paired_interval")
    words = set()
    for seed in range(200):
        r = np.random.default_rng(seed)
        n = int(r.integers(3, 11))
        a, b = r.normal(size=n), r.normal(size=n) + r.normal(0, 0.8)
        mean, low, high, p, verdict = paired_interval(a, b)
        book = stats.paired("a > b", "", a, b)
        assert np.allclose([mean, low, high, p], [book.mean, book.low, book.high, book.p])
        assert verdict == stats.verdict(p, mean) and verdict in stats.VERDICTS
        words.add(verdict)
    assert words == set(stats.VERDICTS)
    for word in stats.VERDICTS:
        assert f'`"{word}"`' in text, word


def test_rubrics_read_the_verdict_as_the_book_does():
    for name in ("lab.md", "project.md"):
        text = (ROOT / "course" / "rubrics" / name).read_text("utf-8")
        assert "Holm-corrected p-value" in text and "uncorrected interval" in text.replace("\n", " ")
        assert "read from the interval;" not in text and "Verdicts read from the intervals" not in text
        for word in ("holds", "suggestive", "not shown", "reversed"):
            assert word in text, (name, word)


def test_the_lab_rubrics_example_is_lab_4s_recorded_run():
    from entmax_book import record, stats
    from entmax_book.toy import runs

    demo = record.load(runs.EXPERIMENT, "demo")["result"]
    index = demo["lengths"].index(32)
    mass = {
        v: np.array(demo[v]["informative_mass_per_seed"])[:3, index]
        for v in ("softmax", "entmax15", "sparsemax", "alpha_entmax")
    }
    rows = stats.verdicts(
        [stats.paired(v, "", mass[v], mass["softmax"]) for v in ("entmax15", "sparsemax", "alpha_entmax")]
    )
    row = rows[0]
    assert row.comparison.low > 0 and row.verdict == "not shown"  # the case the rubric explains
    text = " ".join((ROOT / "course" / "rubrics" / "lab.md").read_text("utf-8").split())
    c = row.comparison
    assert f"[{c.low:+.3f}, {c.high:+.3f}] and a Holm p of {row.p_corrected:.2f}" in text


def _chapter_text(stem):
    return "\n".join(c.source for c in _read(ROOT / "chapters" / f"{stem}.ipynb").cells)


def test_labs_and_assignments_name_the_books_exercises_by_title_not_number():
    """The book numbers its exercises through the whole book (Chapter 5's fourth is Exercise 19):
    the kit names an exercise by its title, which the student edition keeps."""
    sources = [*LABS, *MASTERS, *sorted((ROOT / "course").rglob("*.md"))]
    for path in sources:
        text = path.read_text("utf-8")
        assert not re.search(r"(?<!written )exercise \d", text, flags=re.I), path.name
    question = " ".join(_read(ROOT / "course" / "labs" / "ch5_lab.ipynb").cells[0].source.split())
    (title,) = re.findall(r'\*\*"([^"]+)"\*\*', question)
    chapter5 = _chapter_text("05_adaptively_sparse_transformers")
    assert f"**{title}**" in chapter5  # the exercise's own title
    student5 = "\n".join(
        c.source for c in _read(ROOT / "student" / "05_adaptively_sparse_transformers.ipynb").cells
    )
    assert f"**{title}**" in student5  # ... which the student edition shows
    # the sections the question names exist, where it says
    assert "## 2.2 The Jacobian with respect to z" in _chapter_text("02_gradients")
    assert "The Jacobian with respect to z" in question and "§2.2" in question
    assert "### The learned α" in chapter5 and "*The learned α*" in question


def test_the_statistics_primer_is_read_before_chapter_4():
    meetings = plan.load()["meetings"]
    (reading,) = [m for m in meetings if m["meeting"] == "Reading" and "statistics primer" in m["what"]]
    assert reading["week"] == 3 and reading["what"].index("primer") < reading["what"].index("Chapter 4")
    lab4 = next(m for m in meetings if m["meeting"] == "Lab" and "Lab 4" in m["what"])
    assert reading["week"] < lab4["week"]
    assert "statistics primer" in (ROOT / "intro.md").read_text("utf-8")
    assert "statistics primer" in (ROOT / "course" / "schedule.csv").read_text("utf-8")
    # the student edition lists the chapters in the book's order: the primer between 3 and 4
    from tools import student

    readme = (ROOT / "student" / "README.md").read_text("utf-8")
    assert readme == student.readme(), "run `python -m tools.student --readme`"
    links = re.findall(r"blob/[^/]+/student/([\w]+)\.ipynb", readme.split("## Assignments")[0])
    assert links.index("03_implementing_entmax_lib") + 1 == links.index("stats_primer")
    assert links.index("stats_primer") + 1 == links.index("04_sparse_self_attention")


def _recorded_minutes():
    """Chapter 5's recorded runs: CPU minutes per condition (median) and over all runs (mean)."""
    by = {}
    for path in sorted((ROOT / "entmax_book" / "translation" / "records").glob("hard_*_seed*.json")):
        condition = path.stem.removeprefix("hard_").rsplit("_seed", 1)[0]
        cpu = json.loads(path.read_text())["provenance"]["cpu_seconds"] / 60
        by.setdefault(condition, []).append(cpu)
    return {k: float(np.median(v)) for k, v in by.items()}, float(
        np.mean([x for v in by.values() for x in v])
    )


def test_chapter_5s_training_times_agree_with_the_records():
    per_condition, mean = _recorded_minutes()
    assert len(per_condition) == 4
    readme = " ".join((ROOT / "README.md").read_text("utf-8").split())
    lab = " ".join(_read(ROOT / "course" / "labs" / "ch5_lab.ipynb").cells[0].source.split())
    brief = " ".join((ROOT / "course" / "project" / "brief.md").read_text("utf-8").split())
    said = {
        "readme mean": re.search(r"(\d+) minutes a run on average", readme),
        "readme softmax": re.search(r"about (\d+) for softmax", readme),
        "readme learned": re.search(r"(\d+) for learned α", readme),
        "lab learned": re.search(r"about (\d+) minutes of CPU time each", lab),
        "lab mean": re.search(r"(\d+) on average over the chapter's forty runs", lab),
        "lab softmax": re.search(r"about (\d+) for softmax", lab),
        "brief softmax": re.search(r"about \*\*(\d+) minutes\*\* of CPU time with softmax", brief),
        "brief learned": re.search(r"about \*\*(\d+) minutes\*\* with learned α", brief),
        "brief mean": re.search(r"(\d+) on average over its forty runs", brief),
    }
    assert all(said.values()), [k for k, v in said.items() if not v]
    expected = {"mean": mean, "softmax": per_condition["softmax"], "learned": per_condition["alpha_entmax"]}
    for key, match in said.items():
        assert int(match.group(1)) == round(expected[key.split()[-1]]), (key, expected)
    assert "an hour" in brief and "Compute" in brief  # the mini-project's estimate


def test_bundle_readme_records_its_commit_and_a_missing_start_is_noted(tmp_path, monkeypatch):
    import subprocess

    monkeypatch.setattr(course, "build", lambda *args, **kwargs: {})  # no autograders: not what is tested
    message = bundle.make(tmp_path / "b", seed=2**100, run_keys=False)
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    readme = (tmp_path / "b" / "README.md").read_text()
    assert f"Made from commit `{head}`" in readme and head in message
    commit, changed = bundle.source_commit()
    assert commit == head and (("uncommitted changes" in readme) == bool(changed))
    assert "no schedule.ics was written" in message and "START=" in message
    assert not (tmp_path / "b" / "schedule.ics").exists() and "no `schedule.ics`" in readme
    dated = bundle.make(tmp_path / "c", seed=2**100, start="2027-01-11", run_keys=False)
    assert "schedule.ics" not in dated and (tmp_path / "c" / "schedule.ics").exists()
    assert "dirty working tree" in bundle.provenance("abc", ["x.py"])
    assert "clean working tree" in bundle.provenance("abc", [])
    assert "not a git checkout" in bundle.provenance(*bundle.source_commit(tmp_path))


def test_the_rehearsals_check_wants_one_line_for_a_missing_function(tmp_path):
    (tmp_path / "kinds.csv").write_text("student,kind\ns1,missing function\n")
    graded = tmp_path / "graded"
    (graded / "feedback").mkdir(parents=True)
    problem = grading.never_defined("g")
    (graded / "scores.csv").write_text(f'student,score,max_score,problem\ns1,5,10,"{problem}"\n')
    (graded / "feedback" / "s1.txt").write_text(f"s1.ipynb: 5 / 10\n- g (5 pt): FAILED: {problem}\n")
    assert fake_class.check(tmp_path / "kinds.csv", graded / "scores.csv", timeout=60) == []
    (graded / "feedback" / "s1.txt").write_text(
        "".join(f"- g, check {i}: FAILED: {problem}\n" for i in range(3))
    )
    assert fake_class.check(tmp_path / "kinds.csv", graded / "scores.csv", timeout=60) == [
        "s1 (missing function): 3 feedback lines say so, not one"
    ]
    (graded / "scores.csv").write_text("student,score,max_score,problem\ns1,5,10,\n")  # the old empty column
    (graded / "feedback" / "s1.txt").unlink()
    assert fake_class.check(tmp_path / "kinds.csv", graded / "scores.csv", timeout=60) == [
        "s1 (missing function): graded 5 / 10, problem ''"
    ]


# The lecturer's read: an unambiguous lab rubric, the exam's K-token argument, the kit's small edges


def test_the_lab_rubric_is_point_by_point_and_adds_up_to_10():
    path = ROOT / "course" / "rubrics" / "lab.md"
    text = path.read_text("utf-8")
    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in text.splitlines() if line.startswith("| ")]
    header, rows = rows[0], rows[1:]
    assert "Half marks" not in header and header[header.index("Points")] == "Points"
    points = [int(r[header.index("Points")]) for r in rows]
    assert sum(points) == 10 and set(points) == {1}  # one point a row, given whole ...
    halves = [r for r in rows if "½" in r[-1]]
    assert halves and all(
        r[0].startswith(("Part A", "Part B", "Part C")) and ("(½" in r[-1] or "earns ½" in r[-1])
        for r in halves
    )  # ... or a half, where the row says when
    assert sum(p for r, p in zip(rows, points, strict=True) if r[0].startswith("Part B")) == 3
    flat = " ".join(text.split())
    assert "loses the verdict point, B2, and keeps B1 and B3 (2 points)" in flat
    assert "loses the Part B point" not in flat and "full marks" not in flat


def test_the_exams_sparsemax_question_has_a_support_of_two_or_three_of_its_four_tokens():
    for seed in range(200):
        key = exam.paper(seed)[0].key
        assert re.search(r"Support size \$k = [23]\$", key), (seed, key)


def test_the_exams_dilution_key_derives_the_threshold_for_k_tokens():
    for seed in range(8):
        question = exam.paper(seed)[3]
        K = int(re.search(r"\$K = (\d+)\$", question.text).group(1))
        s = float(re.search(r"score \$s = ([\d.]+)\$", question.text).group(1))
        assert "$s \\ge 1/K$" in question.text
        assert "$\\tau = s - 1/K$" in question.key and "at least $1/K$ below $s$" in question.key
        assert f"= {s - 1 / K:g}$" in question.key and "at least 1 below" not in question.key
    specimen = (ROOT / "course" / "exam" / "specimen.md").read_text("utf-8")
    assert specimen == exam.specimen() and "$s \\ge 1/K$" in specimen


def test_scores_columns_follow_the_assignments_question_order(tmp_path):
    import zipfile

    master = course.MASTERS / "ch2_gradients.ipynb"
    asked = list(_questions(master))
    assert asked != sorted(asked)  # the case that matters: not alphabetical
    zip_path = tmp_path / "ch2_gradients-autograder.zip"
    with zipfile.ZipFile(zip_path, "w") as archive:
        archive.writestr("otter_config.json", "{}")
        for name in sorted(asked):
            archive.writestr(f"tests/{name}.py", TEST_FILE)
    assert list(grading.read_autograder(zip_path)) == asked
    # names the master does not ask (another commit's autograder) follow, sorted
    assert grading.question_order("ch2_gradients", ["zz", *asked, "aa"]) == [*asked, "aa", "zz"]
    assert grading.question_order("no_such_assignment", ["b", "a"]) == ["a", "b"]


def test_a_hidden_check_that_got_none_carries_the_stub_hint():
    public = grading._explain("wrong result (a check on its values failed): expected an array, got NoneType")
    hidden = grading._private("wrong result (a check on its values failed): expected an array, got NoneType")
    assert public.endswith(grading._STUB_HINT) and hidden.endswith(grading._STUB_HINT)
    assert "expected an array" not in hidden  # still no message of a hidden check
    assert grading._private("wrong result (a check on its values failed): 3 != 4") == (
        "wrong result (a check on its values failed)"
    )
    assert grading._private("TypeError: 'NoneType' object is not subscriptable").endswith(grading._STUB_HINT)


def test_lab_4s_key_states_its_third_answer_in_words():
    from entmax_book import record
    from entmax_book.toy import runs

    lab = _read(ROOT / "course" / "labs" / "ch4_lab.ipynb")
    cell = next(c.source for c in lab.cells if "3. largest gap" in c.source)
    demo = record.load(runs.EXPERIMENT, "demo")["result"]
    index = demo["lengths"].index(32)
    accuracy = {
        v: np.array(demo[v]["accuracy_per_seed"])[:3, index]
        for v in ("softmax", "entmax15", "sparsemax", "alpha_entmax")
    }
    spread = max(a.std(ddof=1) for a in accuracy.values())
    gap = max(a.mean() for a in accuracy.values()) - min(a.mean() for a in accuracy.values())
    fragment = cell[cell.index('print(f"3.') : cell.index("masses = ")]
    import contextlib
    import io

    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(fragment, {"gap": gap, "spread": spread})
    words = "within" if gap <= spread else "larger than"
    assert f"The gap is {words} the seed-to-seed spread ({gap:.3f} vs {spread:.3f})" in printed.getvalue()


def test_slides_command_line_says_what_it_takes(capsys):
    from tools import slides

    assert slides.main(["--help"]) == 0 and "usage: python -m tools.slides" in capsys.readouterr().out
    assert slides.main(["no_such_chapter"]) == 2
    err = capsys.readouterr().err
    assert "error: no chapter 'no_such_chapter'" in err and "07_sparse_outputs" in err
    assert slides.main(["--frobnicate"]) == 2 and "unknown option" in capsys.readouterr().err
    stems = [c.stem for c in CHAPTERS]
    assert slides.chapter_stems(["07", "chapters/02_gradients.ipynb"], stems) == [
        "07_sparse_outputs",
        "02_gradients",
    ]


def test_bundle_provenance_counts_files_in_words_and_skips_a_linked_venv(tmp_path):
    import subprocess

    assert "1 changed or untracked file: `a.py`)" in bundle.provenance("abc", ["a.py"])
    assert "2 changed or untracked files:" in bundle.provenance("abc", ["a.py", "b.py"])
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    git("init", "-q")
    (repo / ".gitignore").write_text(".venv/\n_build/\n")
    git("add", ".gitignore")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    (tmp_path / "env").mkdir()
    (repo / ".venv").symlink_to(tmp_path / "env")  # a linked environment, not a folder for git
    commit, changed = bundle.source_commit(repo)
    assert len(commit) == 40 and changed == []
    (repo / "work.py").write_text("x = 1\n")
    assert bundle.source_commit(repo)[1] == ["work.py"]


def test_a_roster_that_matches_nothing_says_how_many_submissions_it_left_out(tmp_path, capsys, monkeypatch):
    zip_path = _fake_autograder(tmp_path / "f-autograder.zip")
    folder = tmp_path / "export"
    folder.mkdir()
    for i in range(5):
        _notebook(folder / f"student-{i}.ipynb", "x = 1")
    roster = tmp_path / "roster.csv"
    roster.write_text("student\ns1\n")
    monkeypatch.setattr(course, "_otter", lambda *a, **k: pytest.fail("graded before the roster was checked"))
    err = _one_line_error(capsys, ["grade-all", str(zip_path), str(folder), "--roster", str(roster)])
    assert "'student-0', 'student-1', 'student-2' … and 2 more" in err, err
    assert "roster: 's1';" in err


def test_the_written_exercises_are_handed_out_before_they_are_due():
    # The plan names a written exercise by its ordinal ("the first written exercise"): the book's
    # pages may not type "exercise 1", which would read as one of the book's numbered exercises.
    ordinal = {
        "Written exercise 1": "the first written exercise",
        "Written exercise 2": "the second written exercise",
    }
    term = plan.load()
    for due in term["due"]:
        if not due["item"].startswith(("Written exercise", "Assignment")):
            continue
        name = ordinal.get(due["item"], due["item"])
        weeks = [m["week"] for m in term["meetings"] if f"{name} handed out" in m["what"]]
        assert weeks and weeks[0] < due["week"], due
    schedule = (ROOT / "course" / "schedule.csv").read_text("utf-8")
    intro = (ROOT / "intro.md").read_text("utf-8")
    for text in (schedule, intro):
        assert all(f"{name} handed out" in text for name in ordinal.values())
