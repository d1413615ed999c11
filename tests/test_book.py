"""Checks on the book's sources: the table of contents, the configuration and the notebooks.

These run in seconds and need no kernel: they read ``_config.yml``, ``_toc.yml``,
``references.bib`` and the notebooks in ``chapters/`` as data. Executing the notebooks is
nbval's job (``pytest --nbval-lax chapters/``) and ``jupyter-book build``'s.
"""

import json
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
NOTEBOOKS = sorted(CHAPTERS.glob("*.ipynb"))

# The exact first code cell of every chapter (the house rule); {url} and {branch} come from
# `repository:` in _config.yml, so the install line and the launch buttons cannot disagree.
SETUP_CELL = """\
# Setup: on Colab, install entmax_lib from the book's repository; elsewhere, nothing to do.
import sys

if "google.colab" in sys.modules:
    get_ipython().run_line_magic("pip", "install -q git+{url}.git@{branch}")

import jax

print("JAX backend:", jax.default_backend())"""

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
    assert cell_source(cells[0]).startswith("# "), f"{path.name}: the first cell must start with a '# ' title"

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
    assert execute["execute_notebooks"] == "force", (
        "notebooks are stored without outputs: the build must run them"
    )
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
