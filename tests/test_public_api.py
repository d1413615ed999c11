"""The chapters and the benchmarks use only names that exist and are public (fast: no notebook runs).

Every chapter's code cells, every ``benchmarks/*.py`` and the Python inside
``benchmarks/gpu_check.sh`` (heredocs fed to python, ``python -c`` strings) are parsed, not run.
Each name they take from ``entmax_lib`` or ``entmax_book`` is collected: ``from entmax_lib[.x]
import name``, ``import entmax_lib.x [as y]``, and the attribute chains on those names
(``toy.experiment.train_and_evaluate``, ``attention.EntmaxMultiHeadAttention.attend``). Each
module is imported and each chain looked up, so that a renamed function fails here in seconds
rather than when nbval runs the chapter; and no part of a chain may be private (``_x``; dunders
are fine) unless :data:`entmax_book.LIBRARY_INTERNALS_SHOWN` lists it.
"""

import ast
import bisect
import importlib
import json
import pathlib
import re
import shlex
import types
from typing import NamedTuple

import pytest

from entmax_book import LIBRARY_INTERNALS_SHOWN

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("entmax_lib", "entmax_book")
FILES = sorted([*ROOT.glob("chapters/*.ipynb"), *ROOT.glob("benchmarks/*.py"), *ROOT.glob("benchmarks/*.sh")])


class Use(NamedTuple):
    line: int
    module: str  # a module to import, e.g. "entmax_lib"
    chain: tuple  # attributes looked up on it, e.g. ("entmax", "_alpha_tangent")

    @property
    def path(self):
        return ".".join((self.module, *self.chain))


# --- Reading the sources -------------------------------------------------------------------------


def without_magics(cell):
    """A code cell with IPython's ``%line`` magics and ``!shell`` lines made ``pass`` (their
    indentation kept) and a ``%%cell`` magic cell dropped: plain Python that ``ast`` parses."""
    if cell.lstrip().startswith("%%"):
        return ""
    lines = cell.splitlines()
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")):
            lines[i] = line[: len(line) - len(stripped)] + "pass"
    return "\n".join(lines)


def notebook_python(path):
    """The code cells of a notebook, magics removed, as one module (cells in order, each after a
    blank line), and the first line of each cell in it."""
    cells = json.loads(pathlib.Path(path).read_text())["cells"]
    sources = [without_magics("".join(c["source"])) for c in cells if c["cell_type"] == "code"]
    starts, line = [], 1
    for source in sources:
        starts.append(line)
        line += source.count("\n") + 2  # its lines, then the blank line joining the next
    return "\n\n".join(sources), starts


HEREDOC = re.compile(r"\bpython[\d.]*\b[^\n]*<<-?\s*(['\"]?)(\w+)\1[^\n]*\n(.*?)\n\s*\2\s*$", re.S | re.M)


def shell_python(text):
    """The Python a shell script runs inline: heredocs fed to ``python…``, ``python… -c`` strings."""
    snippets = [match.group(3) for match in HEREDOC.finditer(text)]
    for line in text.splitlines():
        if re.search(r"\bpython[\d.]*\s+(\S+\s+)*-c\b", line):
            try:
                words = shlex.split(line, comments=True)
            except ValueError:  # unbalanced quotes over several lines: not parsed here
                continue
            snippets += [
                words[i + 1]
                for i, w in enumerate(words[:-1])
                if w == "-c" and any("python" in word for word in words[:i])
            ]
    return "\n\n".join(snippets)


def python_of(path):
    """The Python source of a chapter, script or shell script, and a function that says where a
    line of it is (for a notebook: which code cell, counting from 1, and which line of it)."""
    path = pathlib.Path(path)
    if path.suffix == ".ipynb":
        source, starts = notebook_python(path)

        def where(line):
            cell = bisect.bisect_right(starts, line)
            return f"code cell {cell}, line {line - starts[cell - 1] + 1}"

        return source, where
    text = path.read_text()
    if path.suffix == ".sh":
        return shell_python(text), lambda line: f"line {line} of its Python"
    return text, lambda line: f"line {line}"


# --- Collecting the names used --------------------------------------------------------------------


def in_packages(module):
    return (module or "").split(".")[0] in PACKAGES


def attribute_chain(node):
    """``a.b.c`` -> ("a", ("b", "c")); None where the chain does not start at a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return (node.id, tuple(parts[::-1])) if isinstance(node, ast.Name) else None


SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)


def scope_names(scope):
    """The names a module, function, class or comprehension binds other than by an import:
    assignments, loop targets, arguments, ``def`` and ``class`` names, ``except … as``."""
    names = set()
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        a = scope.args
        names |= {arg.arg for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg] if arg}
    if isinstance(scope, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        body = [generator.target for generator in scope.generators]
    else:
        body = scope.body if isinstance(scope.body, list) else [scope.body]

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            return
        if isinstance(node, SCOPES):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        for child in ast.iter_child_nodes(node):
            visit(child)

    for node in body:
        visit(node)
    return names


def package_uses(source, filename="<snippet>"):
    """Every name of ``entmax_lib`` / ``entmax_book`` that Python ``source`` uses, as :class:`Use`s.

    Attribute chains are followed on the names that imports bind, except where a scope binds
    the same name some other way (a module-level assignment anywhere, a function's argument or
    local variable inside that function).
    """
    tree = ast.parse(source, filename=filename)
    uses, bound = set(), {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if in_packages(alias.name):
                    uses.add(Use(node.lineno, alias.name, ()))
                    top = alias.name.split(".")[0]
                    bound[alias.asname or top] = (alias.name, ()) if alias.asname else (top, ())
        elif isinstance(node, ast.ImportFrom) and not node.level and in_packages(node.module):
            for alias in node.names:
                if alias.name == "*":
                    uses.add(Use(node.lineno, node.module, ()))
                    continue
                uses.add(Use(node.lineno, node.module, (alias.name,)))
                bound[alias.asname or alias.name] = (node.module, (alias.name,))
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}

    def visit(node, shadowed):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, SCOPES):
                visit(child, shadowed | scope_names(child))
                continue
            chain = attribute_chain(child) if isinstance(child, ast.Attribute) else None
            if (
                chain is not None
                and id(child) not in inner
                and chain[0] in bound
                and chain[0] not in shadowed
            ):
                module, base = bound[chain[0]]
                uses.add(Use(child.lineno, module, base + chain[1]))
            visit(child, shadowed)

    visit(tree, scope_names(tree))
    return sorted(uses)


# --- Checking them --------------------------------------------------------------------------------


# A named tuple's public API is spelt with one underscore, so as not to clash with its fields.
NAMEDTUPLE_API = {"_asdict", "_field_defaults", "_fields", "_make", "_replace"}


def is_private(part):
    dunder = part.startswith("__") and part.endswith("__")
    return part.startswith("_") and not dunder and part not in NAMEDTUPLE_API


def private_parts(use):
    """The private parts of a use's dotted path that LIBRARY_INTERNALS_SHOWN does not list."""
    parts = use.path.split(".")
    return [
        part
        for i, part in enumerate(parts)
        if is_private(part) and part not in LIBRARY_INTERNALS_SHOWN.get(".".join(parts[:i]), ())
    ]


def class_field(cls, name):
    """Whether ``name`` is a declared field of class ``cls`` without a class attribute (a dataclass
    field without default, an annotated attribute set in ``__init__``)."""
    return any(name in getattr(klass, "__annotations__", {}) for klass in cls.__mro__)


def missing_part(use):
    """None if ``use`` resolves (its module imports, each attribute exists), else why not."""
    try:
        obj = importlib.import_module(use.module)
    except Exception as err:  # noqa: BLE001 - any failure to import is the finding
        return f"cannot import {use.module} ({type(err).__name__}: {err})"
    path = use.module
    for part in use.chain:
        path = f"{path}.{part}"
        if hasattr(obj, part):
            obj = getattr(obj, part)
        elif isinstance(obj, types.ModuleType):  # a submodule its package does not import
            try:
                obj = importlib.import_module(f"{obj.__name__}.{part}")
            except ModuleNotFoundError:
                return f"{path} does not exist"
            except Exception as err:  # noqa: BLE001
                return f"cannot import {path} ({type(err).__name__}: {err})"
        elif isinstance(obj, type) and class_field(obj, part):
            return None  # an instance attribute: nothing further to look up on the class
        else:
            return f"{path} does not exist"
    return None


def problems(source, filename="<snippet>", where=lambda line: f"line {line}"):
    """What is wrong with the package names that ``source`` uses, one line each."""
    found = []
    for use in package_uses(source, filename):
        private = private_parts(use)
        if private:
            found.append(f"{filename} ({where(use.line)}): {use.path} uses private {', '.join(private)}")
        missing = missing_part(use)
        if missing:
            found.append(f"{filename} ({where(use.line)}): {missing}")
    return list(dict.fromkeys(found))


# --- The tests ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(ROOT)) for p in FILES])
def test_uses_only_existing_public_names(path):
    """Line numbers count in the code cells of a notebook joined by a blank line (magics made
    ``pass``), and in the Python snippets of a shell script, joined likewise."""
    source, where = python_of(path)
    found = problems(source, str(path.relative_to(ROOT)), where)
    assert not found, "\n".join(found)


@pytest.mark.slow
def test_every_file_checked_uses_the_packages():
    """Guards the collection itself: a file whose imports the parser missed would pass unseen."""
    for path in FILES:
        if path.name not in ("gpu_check.sh",):
            assert package_uses(python_of(path)[0]), path


def test_the_library_internals_shown_exist_and_are_private():
    for module, names in LIBRARY_INTERNALS_SHOWN.items():
        assert module.split(".")[0] == "entmax_lib", module
        imported = importlib.import_module(module)
        for name in names:
            assert is_private(name), name
            assert callable(getattr(imported, name, None)), f"{module}.{name} does not exist"


SNIPPET = """
import entmax_lib
import entmax_lib.threshold as th
from entmax_lib import entmax as core, entmax_bisect
from entmax_lib.threshold import _row_stats
from entmax_book import toy

p = entmax_bisect(x)                # fine
core._alpha_tangent(p, 1.5)         # private, but listed
core._finish(x, x.dtype, -1)        # private, not listed
th.entmax_forward.__doc__           # a dunder: fine
toy.no_such_function()              # missing
entmax_lib.__version__              # fine
entmax_lib.entmax.softmax_typo      # missing
th.SearchState._fields              # a named tuple's API: fine

def local(toy):                     # a local name that shadows an import: not followed
    return toy.anything
"""


def test_the_parser_flags_private_and_missing_names():
    assert {use.path for use in package_uses(SNIPPET)} == {
        "entmax_lib",
        "entmax_lib.threshold",
        "entmax_lib.entmax",
        "entmax_lib.entmax_bisect",
        "entmax_lib.threshold._row_stats",
        "entmax_book.toy",
        "entmax_book.toy.no_such_function",
        "entmax_lib.entmax._alpha_tangent",
        "entmax_lib.entmax._finish",
        "entmax_lib.threshold.entmax_forward.__doc__",
        "entmax_lib.__version__",
        "entmax_lib.entmax.softmax_typo",
        "entmax_lib.threshold.SearchState._fields",
    }
    found = problems(SNIPPET)
    assert len(found) == 4, found
    assert any(": entmax_lib.threshold._row_stats uses private _row_stats" in f for f in found)
    assert any(": entmax_lib.entmax._finish uses private _finish" in f for f in found)
    assert any("entmax_lib.entmax.softmax_typo does not exist" in f for f in found)
    assert any("entmax_book.toy.no_such_function does not exist" in f for f in found)
    assert not any("_alpha_tangent" in f or "__doc__" in f or "_fields" in f for f in found)


def test_a_missing_module_and_a_missing_imported_name_are_flagged():
    found = problems("from entmax_book.no_such_module import x\nfrom entmax_lib.metrics import nope\n")
    assert any("cannot import entmax_book.no_such_module" in f for f in found), found
    assert any("entmax_lib.metrics.nope does not exist" in f for f in found), found


def test_toy_attribute_chain_is_flagged_when_missing():
    """A renamed function (e.g. toy.run_experiment, now toy.experiment.train_and_evaluate) fails here."""
    found = problems("from entmax_book import toy\ntoy.definitely_renamed_function(1)\n")
    assert found == ["<snippet> (line 2): entmax_book.toy.definitely_renamed_function does not exist"]


def test_notebooks_with_magics_parse(tmp_path):
    cells = [
        "%matplotlib inline\nimport numpy as np",
        "%%time\nthis is not python",
        "if True:\n    !pip install -q something\n    get_ipython().run_line_magic('pip', 'x')\n",
        "from entmax_lib import entmax as core\ncore._z_tangent",
    ]
    notebook = {
        "cells": [{"cell_type": "code", "source": c} for c in cells]
        + [{"cell_type": "markdown", "source": "x"}]
    }
    path = tmp_path / "chapter.ipynb"
    path.write_text(json.dumps(notebook))
    assert {use.path for use in package_uses(python_of(path)[0])} == {
        "entmax_lib.entmax",
        "entmax_lib.entmax._z_tangent",
    }
    source, where = python_of(path)
    assert problems(source) == []
    use = next(use for use in package_uses(source) if use.chain == ("entmax", "_z_tangent"))
    assert where(use.line) == "code cell 4, line 2"


def test_python_inside_a_shell_script_is_found():
    script = """#!/usr/bin/env bash
python3 -c "import entmax_lib; print(entmax_lib.no_such)" | tee x
python3 - <<'PY' 2>&1 | tee y
from entmax_lib import entmax as E
E._bisect_forward
PY
echo done
"""
    found = problems(shell_python(script))
    assert any("entmax_lib.no_such does not exist" in f for f in found), found
    assert any("_bisect_forward uses private _bisect_forward" in f for f in found), found
    assert any("entmax_lib.entmax._bisect_forward does not exist" in f for f in found), found
