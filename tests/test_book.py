"""Checks on the book's sources: the table of contents, the configuration and the notebooks.

These run in seconds and need no kernel: they read ``_config.yml``, ``_toc.yml``,
``references.bib`` and the notebooks in ``chapters/`` as data. Executing the notebooks is
nbval's job (``pytest --nbval-lax chapters/``) and ``jupyter-book build``'s.
"""

import ast
import json
import re
from pathlib import Path

import pytest
import yaml

from entmax_book.toy import claims

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
NOTEBOOKS = sorted(CHAPTERS.glob("*.ipynb"))

# The exact first code cell of every chapter (the house rule); {url} and {branch} come from
# `repository:` in _config.yml, so the install line and the launch buttons cannot disagree.
SETUP_CELL = """\
# On Colab, install entmax_lib from the book's repository; elsewhere, nothing to do.
import sys

if "google.colab" in sys.modules:
    repository = "git+{url}.git@{branch}"
    get_ipython().run_line_magic("pip", f"install -q {{repository}}")

import jax"""

REQUIRED_MYST_EXTENSIONS = {"dollarmath", "amsmath", "colon_fence"}
REQUIRED_SPHINX_EXTENSIONS = {"sphinx_exercise"}
CITE_ROLE = re.compile(r"\{cite(?::\w+)?\}`([^`]+)`")


def load_yaml(name):
    with open(ROOT / name, encoding="utf-8") as f:
        return yaml.safe_load(f)


def load_notebook(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def cell_source(cell):
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def toc_files(node):
    """All `file:` entries of a jb-book table of contents, in order, at any depth."""
    if isinstance(node, dict):
        found = [node["file"]] if "file" in node else []
        for key in ("parts", "chapters", "sections"):
            for child in node.get(key, []):
                found += toc_files(child)
        return found
    return []


def notebook_id(path):
    return path.name


@pytest.fixture(scope="module")
def config():
    return load_yaml("_config.yml")


@pytest.fixture(scope="module")
def toc():
    return load_yaml("_toc.yml")


# (1) Notebooks are committed clean: outputs are produced by the build, never stored.


@pytest.mark.parametrize("path", NOTEBOOKS, ids=notebook_id)
def test_notebook_has_no_outputs(path):
    nb = load_notebook(path)
    dirty = [
        i
        for i, cell in enumerate(nb["cells"])
        if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count") is not None)
    ]
    assert not dirty, (
        f"{path.name}: code cells {dirty} have outputs or an execution count; clear all outputs before "
        "committing (the nbstripout pre-commit hook does it)."
    )
    assert "widgets" not in nb["metadata"], (
        f"{path.name} stores saved widget state (notebook metadata 'widgets'); remove it, it is an output."
    )


def test_there_are_notebooks():
    assert NOTEBOOKS, "chapters/ holds no notebooks"


# (2) The table of contents and the chapters agree.


def test_toc_format_and_root(toc):
    assert toc["format"] == "jb-book"
    assert (ROOT / f"{toc['root']}.md").exists(), f"the toc's root page {toc['root']}.md is missing"


def test_every_toc_entry_exists(toc):
    missing = [
        entry
        for entry in toc_files(toc)
        if not any((ROOT / f"{entry}{suffix}").exists() for suffix in (".ipynb", ".md"))
    ]
    assert not missing, f"_toc.yml lists files that do not exist: {missing}"


def test_every_notebook_is_in_the_toc(toc):
    listed = set(toc_files(toc))
    orphans = [p.name for p in NOTEBOOKS if str(p.relative_to(ROOT).with_suffix("")) not in listed]
    assert not orphans, (
        f"notebooks in chapters/ that _toc.yml does not list (they would not be built): {orphans}"
    )


def test_toc_lists_each_file_once(toc):
    files = toc_files(toc)
    assert len(files) == len(set(files)), f"_toc.yml lists a file twice: {files}"


# (3) Every chapter starts with a title and the exact setup cell, installing from _config.yml's repository.


@pytest.mark.parametrize("path", NOTEBOOKS, ids=notebook_id)
def test_notebook_starts_with_title_then_setup_cell(path, config):
    cells = load_notebook(path)["cells"]
    assert cells and cells[0]["cell_type"] == "markdown", (
        f"{path.name}: the first cell must be the title (markdown)"
    )
    title = re.sub(r"^\([\w-]+\)=\n", "", cell_source(cells[0]))  # an optional MyST label first
    assert title.startswith("# "), f"{path.name}: the first cell must start with a '# ' title"

    first_code = next((cell for cell in cells if cell["cell_type"] == "code"), None)
    assert first_code is not None, f"{path.name} has no code cell"
    repository = config["repository"]
    expected = SETUP_CELL.format(url=repository["url"], branch=repository["branch"])
    assert cell_source(first_code).strip() == expected, (
        f"{path.name}: the first code cell is not the setup cell for "
        f"{repository['url']}@{repository['branch']}:\n{cell_source(first_code)}"
    )


# (4) The configuration the build relies on.


def test_config_executes_every_notebook_and_fails_on_errors(config):
    execute = config["execute"]
    # Notebooks are stored without outputs: the build runs them, or reuses the outputs of an
    # earlier build of the same code, which the Makefile drops whenever a package source changes.
    assert execute["execute_notebooks"] in ("force", "cache")
    if execute["execute_notebooks"] == "cache":
        makefile = (ROOT / "Makefile").read_text()
        assert "rm -rf _build/.jupyter_cache" in makefile
        assert "book: $(STAMP) _build/.packages-stamp" in makefile
    assert execute["timeout"] >= 300, "JAX compiles take longer than Jupyter Book's 30 s default cell timeout"
    assert execute.get("allow_errors", False) is False, "a failing cell must fail the build"
    assert config["only_build_toc_files"] is True


def test_config_extensions(config):
    myst = set(config["parse"]["myst_enable_extensions"])
    assert REQUIRED_MYST_EXTENSIONS <= myst, f"missing MyST extensions: {REQUIRED_MYST_EXTENSIONS - myst}"
    sphinx = set(config["sphinx"]["extra_extensions"])
    assert REQUIRED_SPHINX_EXTENSIONS <= sphinx, (
        f"missing Sphinx extensions: {REQUIRED_SPHINX_EXTENSIONS - sphinx}"
    )
    assert config["bibtex_bibfiles"] == ["references.bib"]
    assert (ROOT / "references.bib").exists()


def test_config_repository(config):
    repository = config["repository"]
    assert repository["url"] == "https://github.com/entmax-book/entmax-book"
    assert repository["branch"] == "main", "Jupyter Book's default branch is 'master': set it"
    assert config["launch_buttons"]["colab_url"] == "https://colab.research.google.com"


def test_every_citation_is_in_the_bibliography():
    bib_keys = set(re.findall(r"^@\w+\{([^,\s]+),", (ROOT / "references.bib").read_text("utf-8"), re.M))
    texts = {"intro.md": (ROOT / "intro.md").read_text("utf-8")}
    for path in NOTEBOOKS:
        cells = load_notebook(path)["cells"]
        texts[path.name] = "\n".join(cell_source(c) for c in cells if c["cell_type"] == "markdown")
    unknown = {
        name: sorted({key.strip() for keys in CITE_ROLE.findall(text) for key in keys.split(",")} - bib_keys)
        for name, text in texts.items()
    }
    unknown = {name: keys for name, keys in unknown.items() if keys}
    assert not unknown, f"citation keys missing from references.bib: {unknown}"


# (5) One voice: hand-typed numbers that match the toc, no machine paths, every solution executed.

CHAPTER_TITLE = re.compile(r"^# (\d+)\. ", re.M)  # after an optional label line
CHAPTER_MENTION = re.compile(r"\b[Cc]hapter (\d+)\b")
CHAPTER_LINK = re.compile(r"\[[Cc]hapter (\d+)\]\(([^)#\s]+?\.ipynb)(?:#[^)]*)?\)")
CHAPTER_REF = re.compile(r"\{ref\}`[Cc]hapter (\d+) <(chap-[\w-]+)>`")
CHAPTER_LABEL = re.compile(r"\((chap-[\w-]+)\)=")
EXERCISE_MENTION = re.compile(r"\b[Ee]xercises? \d+\b")
MACHINE_PATH = re.compile(r"/work/|/home/\w|/Users/\w|/tmp/\w|ipykernel_\d+|[A-Z]:\\\\Users")
CODE_FENCE = re.compile(r"^\s*(```+|~~~+)\s*(\{code-cell\}|python|py|ipython3?)\b", re.M)


def chapter_numbers(toc):
    """{file name: number} from the titles "# N. …" of the notebooks, in toc order."""
    numbers = {}
    for entry in toc_files(toc):
        path = ROOT / (entry + ".ipynb")
        if path.exists():
            match = CHAPTER_TITLE.search(cell_source(load_notebook(path)["cells"][0]))
            if match:
                numbers[path.name] = int(match.group(1))
    return numbers


def markdown_texts():
    texts = {"intro.md": (ROOT / "intro.md").read_text("utf-8")}
    texts.update({p.name: p.read_text("utf-8") for p in sorted(CHAPTERS.glob("*.md"))})
    for path in NOTEBOOKS:
        cells = load_notebook(path)["cells"]
        texts[path.name] = "\n".join(cell_source(c) for c in cells if c["cell_type"] == "markdown")
    return texts


def test_numbered_chapters_follow_the_toc(toc):
    """Sidebar order, prev/next and the global exercise numbering follow the toc: the chapter
    numbers in the titles must increase along it, and match the file names."""
    numbers = chapter_numbers(toc)
    assert list(numbers.values()) == sorted(numbers.values()), f"toc order vs chapter numbers: {numbers}"
    for name, number in numbers.items():
        assert name.startswith(f"{number:02d}_"), f"{name} is titled chapter {number}"


def test_hand_typed_chapter_numbers_match_the_toc(toc):
    """A typed "Chapter N" names a chapter of the toc; a link to a chapter is a {ref} to its
    label (one style, as everywhere else), and the number it shows is that chapter's."""
    numbers = chapter_numbers(toc)
    by_label = {}
    for name, number in numbers.items():
        label = CHAPTER_LABEL.match(cell_source(load_notebook(CHAPTERS / name)["cells"][0]))
        if label:
            by_label[label.group(1)] = number
    problems = []
    for name, text in markdown_texts().items():
        for number in map(int, CHAPTER_MENTION.findall(text)):
            if number not in numbers.values():
                problems.append(f"{name}: 'Chapter {number}' is not a chapter of the toc")
        for number, target in CHAPTER_LINK.findall(text):
            problems.append(f"{name}: [Chapter {number}]({target}): use {{ref}}`Chapter {number} <label>`")
        for number, label in CHAPTER_REF.findall(text):
            if by_label.get(label) != int(number):
                problems.append(f"{name}: Chapter {number} <{label}> is chapter {by_label.get(label)}")
    assert not problems, problems


def test_exercises_are_referenced_by_label_not_number():
    """Exercise numbers are global and follow the toc; a typed "exercise 1" goes stale."""
    found = {name: EXERCISE_MENTION.findall(text) for name, text in markdown_texts().items()}
    found = {name: hits for name, hits in found.items() if hits}
    assert not found, f"use {{ref}}`label` for exercises: {found}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=notebook_id)
def test_no_machine_paths_in_sources(path):
    hits = [
        line.strip()[:120]
        for cell in load_notebook(path)["cells"]
        for line in cell_source(cell).splitlines()
        if MACHINE_PATH.search(line)
    ]
    assert not hits, f"{path.name} names paths of the build machine: {hits}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=notebook_id)
def test_solutions_are_executed_code_not_markdown(path):
    """Solutions use solution-start / solution-end with code cells between them (run by the build
    and by nbval): never a fenced code block in markdown, nor the one-cell ``{solution}`` directive
    (its content can only be markdown)."""
    in_solution, problems = False, []
    for index, cell in enumerate(load_notebook(path)["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        text = cell_source(cell)
        if re.search(r"\{solution\}", text):
            problems.append(f"cell {index} uses the one-cell {{solution}} directive")
        # Split the cell at the directives so that a start and an end in one cell are both seen.
        for part in re.split(r"(\{solution-(?:start|end)\})", text):
            if part == "{solution-start}":
                in_solution = True
            elif part == "{solution-end}":
                in_solution = False
            elif in_solution and CODE_FENCE.search(part):
                problems.append(f"cell {index}")
    assert not problems, f"{path.name}: solution code in markdown (make it a code cell): {problems}"


# (6) Checks out of the reader's way: the asserts that keep the book honest run in hidden cells.

HIDING_TAG = "remove-cell"
# Every tag a notebook cell may carry. Jupyter Book's other hiding tags (hide-input, hide-cell,
# remove-input, remove-output, ...) would give the book a second way to hide: one is enough.
ALLOWED_CELL_TAGS = {HIDING_TAG}


def is_check(statement):
    """An ``assert`` statement, or a call such as ``np.testing.assert_allclose(...)``."""
    if isinstance(statement, ast.Assert):
        return True
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name.startswith("assert")
    return False


@pytest.mark.parametrize("path", NOTEBOOKS, ids=notebook_id)
def test_cell_tags_are_known_and_hide_one_way(path):
    unknown = {
        index: sorted(set(tags) - ALLOWED_CELL_TAGS)
        for index, cell in enumerate(load_notebook(path)["cells"])
        if set(tags := cell.get("metadata", {}).get("tags", [])) - ALLOWED_CELL_TAGS
    }
    assert not unknown, (
        f"{path.name}: cell tags outside {sorted(ALLOWED_CELL_TAGS)}: {unknown}; to hide a cell, "
        f"tag it {HIDING_TAG!r} (the book's only hiding tag)"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=notebook_id)
def test_checks_are_in_hidden_cells(path):
    """A visible code cell shows an idea or a result; the asserts that check it go in the code
    cell right after it, tagged ``remove-cell`` (executed by nbval and by the build, not shown on
    the page). So no untagged code cell may hold a top-level ``assert`` or a top-level call of a
    function whose name starts with ``assert`` (``np.testing.assert_allclose``, ...). Asserts
    inside functions and loops are part of the code a reader studies and may stay. IPython lines
    (``%magic``, ``!shell``) are skipped before parsing."""
    visible_checks = []
    for index, cell in enumerate(load_notebook(path)["cells"]):
        if cell["cell_type"] != "code" or HIDING_TAG in cell.get("metadata", {}).get("tags", []):
            continue
        lines = cell_source(cell).splitlines()
        python = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in lines)
        for statement in ast.parse(python).body:
            if is_check(statement):
                visible_checks.append(
                    f"cell {index}, line {statement.lineno}: {lines[statement.lineno - 1].strip()}"
                )
    assert not visible_checks, (
        f"{path.name}: checks in visible cells; move them into a code cell tagged {HIDING_TAG!r} "
        f"right after: {visible_checks}"
    )


# A number the reader could take for a measurement: a decimal with two or more digits after the
# point, or any number with a unit of time, size, share or count of repetitions (not a shape,
# "8192 × 512", and not the level of an interval, "95 % interval").
MEASURED_NUMBER = re.compile(
    r"(?<![\w.\-])(\d[\d,]*(?:\.\d+)?\s?(?:ms|µs|s|seconds?|minutes?|times|GB|MB|MiB|KiB"
    r"|×(?!\s?\d)|%(?! (?:confidence )?interval))(?!\w)|\d+\.\d{2,})"
)
# Vague stand-ins for a measured value ("over a hundred", "a few tenths").
VAGUE_QUANTITY = re.compile(
    r"\b(?:over|more than|less than|under|about|nearly|almost) (?:a|one) (?:hundred|thousand|dozen)"
    r"|\ba few (?:hundredths|tenths|thousandths)\b",
    re.IGNORECASE,
)
NOT_PROSE = [
    re.compile(r"\$\$.*?\$\$", re.DOTALL),  # display maths: derivations, worked examples
    re.compile(r"\$[^$\n]*\$"),  # inline maths
    re.compile(r"\{[\w:-]+\}`[^`]*`"),  # roles: glue, ref, cite, doc
    re.compile(r"```.*?```", re.DOTALL),  # directives and code blocks (an exercise's text stays)
    re.compile(r"`[^`\n]*`"),  # inline code
    re.compile(r"\]\([^)]*\)"),  # link targets
    re.compile(r"^\s*#.*$", re.MULTILINE),  # headings
]


def prose_of(markdown):
    """The running text of a markdown cell: what a reader reads as sentences."""
    # keep the body of exercise and admonition directives, drop their fences and options
    text = re.sub(
        r"^```\{(?:exercise|solution-start|solution-end|note|tip|admonition|important|warning)\}.*$",
        "",
        markdown,
        flags=re.MULTILINE,
    )
    text = re.sub(r"^:[\w-]+:.*$", "", text, flags=re.MULTILINE)
    text = re.sub(r"^```\s*$", "", text, flags=re.MULTILINE)
    for pattern in NOT_PROSE:
        text = pattern.sub(" ", text)
    return text


def code_literals(nb):
    """Every number written in the notebook's visible code: its settings and inputs (a hidden
    check that restates a number of the text does not make it a setting)."""
    literals = set()
    for cell in nb["cells"]:
        hidden = "remove-cell" in cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] == "code" and not hidden:
            literals.update(re.findall(r"\d+(?:\.\d+)?", cell_source(cell)))
    return literals


@pytest.mark.parametrize("path", NOTEBOOKS, ids=notebook_id)
def test_prose_quotes_measured_values_by_glue(path):
    """A number in a chapter's text that a reader could take for a result must be glued.

    Rule of thumb: in the running text (not maths, code, roles or headings), a decimal with two or
    more digits after the point, a number with a unit (ms, s, %, ×, times, MB, …) or a vague
    stand-in ("over a hundred", "a few tenths") is a measured value, so it must come from an
    output through ``{glue:text}``. A number also written in the notebook's code is a setting
    (the run's input, e.g. "256 rows", "α = 1.5") and may be typed; a number written only in a
    hidden check is not a setting. Maths is exempt: worked
    examples and derivations are exact, not measured.
    """
    nb = load_notebook(path)
    settings = code_literals(nb)
    typed = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "markdown":
            continue
        prose = prose_of(cell_source(cell))
        for match in MEASURED_NUMBER.finditer(prose):
            number = re.match(r"[\d,]+(?:\.\d+)?", match.group(1)).group(0).replace(",", "")
            if number not in settings:
                typed.append(match.group(1))
        typed += VAGUE_QUANTITY.findall(prose)
    assert not typed, f"{path.name}: hand-typed values in the text, glue them: {typed}"


@pytest.mark.parametrize(
    ("markdown", "flagged"),
    [
        ("the library took 1.70 ms against 2.62 ms", ["1.70 ms", "2.62 ms"]),
        ("it keeps 93.5 % of the mass", ["93.5 %"]),
        ("more than a hundred times less accurate", ["more than a hundred"]),
        ("off by a few hundredths", ["a few hundredths"]),
        ("it took {glue:text}`ms:.2f` ms on $8192 \\times 512$ scores", []),
        ("a shape of 8192 × 512 and a 95 % confidence interval", []),
        ("by hand, $\\tau \\approx -0.8210$", []),
    ],
)
def test_measured_value_rule(markdown, flagged):
    """The rule of test_prose_quotes_measured_values_by_glue, on sentences whose verdict is known."""
    prose = prose_of(markdown)
    found = [m.group(1) for m in MEASURED_NUMBER.finditer(prose)] + VAGUE_QUANTITY.findall(prose)
    assert found == flagged


FINDINGS = CHAPTERS / "findings.md"
# MyST-NB reads `doc::key:format` by splitting off the format at the last colon, so a
# cross-document reference needs its format (`:s` for a word), or "doc:" is taken for the key.
CROSS_GLUE = re.compile(r"\{glue:\w*\}`([\w./-]+\.ipynb)::(\w+):[^`:]+`")
ANY_CROSS_GLUE = re.compile(r"\{glue:\w*\}`[^`]*::")
GLUE_CALL = re.compile(r"""glue\(\s*(f?)(["'])(.+?)\2""")


def glued_keys(path):
    """Patterns of the keys a notebook glues: literal keys, and f-string keys with each
    replacement field read as "anything"."""
    patterns = []
    for cell in load_notebook(path)["cells"]:
        if cell["cell_type"] == "code":
            for is_f, _, key in GLUE_CALL.findall(cell_source(cell)):
                parts = re.split(r"\{[^}]*\}", key) if is_f else [key]
                patterns.append(re.compile(".+".join(map(re.escape, parts))))
    return patterns


def test_findings_page_pastes_only_values_the_chapters_glue():
    """The synthesis page quotes the experiment chapters by cross-document glue, never by hand:
    each pasted key is glued by the notebook it names, and its text has no typed measured value."""
    text = FINDINGS.read_text("utf-8")
    references = CROSS_GLUE.findall(text)
    assert len(references) >= 20, "the page pastes the chapters' verdicts and numbers"
    assert len(references) == len(ANY_CROSS_GLUE.findall(text)), "each needs its :format"
    missing = []
    for notebook, key in references:
        patterns = glued_keys(CHAPTERS / notebook)
        if not any(p.fullmatch(key) for p in patterns):
            missing.append(f"{notebook}::{key}")
    assert not missing, f"keys no chapter glues: {missing}"
    prose = prose_of(text)
    typed = [m.group(1) for m in MEASURED_NUMBER.finditer(prose)] + VAGUE_QUANTITY.findall(prose)
    assert not typed, f"hand-typed values on the findings page: {typed}"


def test_findings_page_comes_after_the_experiments_and_before_going_further(toc):
    files = toc_files(toc)
    assert files.index("chapters/findings") == files.index("chapters/05_adaptively_sparse_transformers") + 1
    assert files.index("chapters/findings") < files.index("chapters/06_making_entmax_fast")


APPENDICES = {
    "04_in_numbers.md": (
        "04_sparse_self_attention.ipynb",
        [
            *(f"ch4_family_{group}" for group in claims.CLAIM_GROUPS),
            "ch4_verdict_grid",
            "ch4_predictions_table",
            "ch4_hits_end",
            "ch4_hits_start",
            *(
                f"ch4_seeds_{s}"
                for s in (
                    "demo",
                    "stress",
                    "demo_exact",
                    "stress_exact",
                    "alpha_scales",
                    "fixed",
                    "fixed_small",
                )
            ),
        ],
        "ch4-numbers",
    ),
    "05_in_numbers.md": (
        "05_adaptively_sparse_transformers.ipynb",
        [
            "ch5_effects",
            "ch5_alpha_table",
            "ch5_seed_table",
            "ch5_ablation_table",
            "ch5_plateau_table",
        ],
        "ch5-numbers",
    ),
}


def test_appendix_pages_follow_the_findings_and_paste_their_chapters_full_table(toc):
    """Each experiment chapter's full tables are on their own page after the findings page (every
    verdict of Chapter 4's family; every seed's effects and scores of Chapter 5's):
    the page pastes the tables the chapter glues (from its HTML: MyST-NB pastes nothing else across
    pages; Chapter 4's family split by topic, every group once), under the label the chapter cites."""
    files = toc_files(toc)
    after = files.index("chapters/findings")
    assert files[after + 1 : after + 3] == ["chapters/04_in_numbers", "chapters/05_in_numbers"]
    for page, (notebook, keys, label) in APPENDICES.items():
        text = (CHAPTERS / page).read_text("utf-8")
        assert text.startswith(f"({label})=\n# "), page
        assert text.count("```{glue} ") == len(keys), page
        for key in keys:
            assert f"```{{glue}} {key}\n:doc: {notebook}\n```" in text, (page, key)
            assert any(p.fullmatch(key) for p in glued_keys(CHAPTERS / notebook)), (notebook, key)
        chapter = load_notebook(CHAPTERS / notebook)
        cites = "".join(cell_source(c) for c in chapter["cells"] if c["cell_type"] == "markdown")
        assert f"{{ref}}`{label}`" in cites, f"{notebook} does not point its reader to {page}"
        prose = prose_of(text)
        typed = [m.group(1) for m in MEASURED_NUMBER.finditer(prose)] + VAGUE_QUANTITY.findall(prose)
        assert not typed, f"hand-typed values on {page}: {typed}"


def test_no_markdown_line_starts_with_a_percent_sign():
    """MyST reads a line that starts with "%" as a comment and drops it from the page, so a
    sentence wrapped before "% of the tokens" loses its end. The one deliberate comment is the
    marker "% plan: …" around the parts of intro.md that ``tools.plan`` writes."""
    hits = []
    for name, text in markdown_texts().items():
        fences = []  # open fences: True for code, False for a directive (parsed as MyST)
        for line in text.splitlines():
            stripped = line.strip()
            if stripped in ("```", "~~~") and fences:
                fences.pop()
            elif stripped.startswith(("```", "~~~")):
                fences.append(not stripped.lstrip("`~").startswith("{"))
            elif not any(fences) and stripped.startswith("%") and not stripped.startswith("% plan: "):
                hits.append(f"{name}: {stripped[:60]}")
    assert not hits, hits


def test_headings_and_exercise_links_read_as_text():
    """A heading's text becomes the text of every link to it, where maths is not rendered
    ("2.4 … \\alpha"), and a link to an exercise shows its own text ("Exercise", no number)."""
    problems = []
    for name, text in markdown_texts().items():
        problems += [f"{name}: {h}" for h in re.findall(r"^#+ .*\$.*$", text, re.M)]
        problems += [f"{name}: {r}" for r in re.findall(r"\{ref\}`[Ee]xercises? <[^>]+>`", text)]
    assert not problems, problems


def test_display_maths_in_a_list_item_stands_on_its_own_lines():
    """Inside a list item, `$$…$$` written inline is not read as display maths: every dollar
    after it is paired wrongly and the item renders as raw LaTeX."""
    hits = []
    for name, text in markdown_texts().items():
        hits += [f"{name}: {line.strip()[:50]}" for line in re.findall(r"^[ \t]+\$\$\S.*$", text, re.M)]
    assert not hits, hits


CROSS_PAGE_GLUE = re.compile(r"```\{glue\} (\S+)\n:doc: (\S+)\n```")


def test_a_figure_pasted_on_another_page_is_also_shown_in_its_chapter():
    """MyST-NB writes a glued figure's image only where its own notebook shows it: pasted on
    another page alone (``{glue}`` with ``:doc:``), the page links to an image the build never
    writes. So every figure pasted across pages must also be a ``{glue:figure}`` of its chapter."""
    missing = []
    for name, text in markdown_texts().items():
        for key, notebook in CROSS_PAGE_GLUE.findall(text):
            cells = load_notebook(CHAPTERS / notebook)["cells"]
            code = "\n".join(cell_source(c) for c in cells if c["cell_type"] == "code")
            prose = "\n".join(cell_source(c) for c in cells if c["cell_type"] == "markdown")
            if f'glue("{key}", fig)' in code and f"{{glue:figure}} {key}\n" not in prose:
                missing.append((name, key))
    assert not missing, f"figures pasted across pages but never shown in their chapter: {missing}"
