"""The course kit: the autograded assignments and the labs (the editions and the slides are
tested in tests/test_editions.py).

The autograder (`make course`, tools/course.py, Otter Grader) must give the reference solutions
full marks and less to a wrong and to a partly right submission, offline, on the latest and the
floor versions.
"""

import ast
import json
import re
from pathlib import Path

import nbformat
import pytest

from tools import course

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
# The labs
# ----------------------------------------------------------------------------------------

LABS = sorted((ROOT / "course" / "labs").glob("*.ipynb"))
TRAINING = {"ch4_lab": "toy.run_experiment(", "ch5_lab": "train(model,"}
RECORDED = {  # what the training cell returns, taken from the recorded run instead
    "ch4_lab": 'result = record.load(toy_record.EXPERIMENT, "demo")["result"]\n'
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
