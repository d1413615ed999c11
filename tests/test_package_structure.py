"""The two packages' structure, read from their source: imports and function lengths.

- No import cycle between the modules of ``entmax_lib`` and ``entmax_book`` (a package's
  ``__init__`` importing its own submodules is not one).
- ``entmax_lib`` imports nothing from ``entmax_book``, not even inside a function.
- ``entmax_book`` uses only public names of ``entmax_lib``.
- No module imports, or reaches through an imported module for, a private name of a sibling.
- Every module can be imported first.
- No function or method is longer than :data:`MAX_FUNCTION_LINES` lines of code.
- The house of ``entmax_book``: one folder per experiment, whose modules import the library,
  the shared modules (:data:`SHARED`) and their own folder, never another experiment; the shared
  modules import no experiment. The toy's folder holds one module per concern and its records,
  and each of its modules has a test module of the same name under tests/entmax_book/toy/.
"""

import ast
import functools
import io
import pathlib
import subprocess
import sys
import tokenize
from typing import NamedTuple

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
LIBRARY, BOOK = "entmax_lib", "entmax_book"
PACKAGES = (LIBRARY, BOOK)
MAX_FUNCTION_LINES = 60  # lines of code, docstrings, comments and blank lines not counted


def module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}


def is_package_module(name):
    return name.split(".")[0] in PACKAGES


# A named tuple's public API is spelt with one underscore, so as not to clash with its fields.
NAMEDTUPLE_API = {"_asdict", "_field_defaults", "_fields", "_make", "_replace"}


def is_private(part):
    dunder = part.startswith("__") and part.endswith("__")
    return part.startswith("_") and not dunder and part not in NAMEDTUPLE_API


def ancestors(name):
    """entmax_book.translation.model -> [entmax_book, entmax_book.translation]."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


@functools.cache
def tree_of(name):
    return ast.parse(MODULES[name].read_text(), filename=str(MODULES[name]))


class Import(NamedTuple):
    module: str  # the module this import runs (a submodule where ``from m import submodule``)
    names: tuple  # the names it takes from that module that are not submodules
    top_level: bool  # a statement of the module body (else inside a function, a try, …)
    line: int


def resolve_relative(name, node):
    """The absolute module of an ``ImportFrom`` in module ``name``."""
    base = node.module or ""
    if not node.level:
        return base
    package = name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]
    parts = package.split(".")
    return ".".join(parts[: len(parts) - node.level + 1] + [base]).strip(".")


@functools.cache
def imports_of(name):
    """Every import of a package module by module ``name``, including imports inside functions
    (a deferred import still makes a cycle)."""
    tree = tree_of(name)
    found = []
    for node in ast.walk(tree):
        top_level = node in tree.body
        if isinstance(node, ast.Import):
            found += [
                Import(alias.name, (), top_level, node.lineno)
                for alias in node.names
                if is_package_module(alias.name)
            ]
        elif isinstance(node, ast.ImportFrom):
            base = resolve_relative(name, node)
            if not is_package_module(base):
                continue
            names = [alias.name for alias in node.names]
            found += [
                Import(f"{base}.{n}", (), top_level, node.lineno) for n in names if f"{base}.{n}" in MODULES
            ]
            plain = tuple(n for n in names if f"{base}.{n}" not in MODULES)
            if plain:
                found.append(Import(base, plain, top_level, node.lineno))
    return found


@functools.cache
def bound_names(name):
    """{local name: dotted path it stands for} for the package names module ``name`` imports."""
    bound = {}
    for node in ast.walk(tree_of(name)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if is_package_module(alias.name):
                    local = alias.asname or alias.name.split(".")[0]
                    bound[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom):
            base = resolve_relative(name, node)
            if is_package_module(base):
                for alias in node.names:
                    bound[alias.asname or alias.name] = f"{base}.{alias.name}"
    return bound


def attribute_chain(node):
    """``a.b.c`` -> ("a", ["b", "c"]); None where the chain does not start at a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return (node.id, parts[::-1]) if isinstance(node, ast.Name) else None


def owner_module(path):
    """The longest prefix of dotted ``path`` that is a package module."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in MODULES:
            return ".".join(parts[:i])
    return parts[0]


@functools.cache
def private_uses(name):
    """(dotted path of a private name, the module that owns it, where) for each private name of a
    package module that module ``name`` imports or reaches by attribute through an imported name."""
    uses = set()
    for imp in imports_of(name):
        parts = imp.module.split(".")
        uses |= {
            (".".join(parts[: i + 1]), ".".join(parts[:i]), imp.line)
            for i, p in enumerate(parts)
            if is_private(p)
        }
        uses |= {(f"{imp.module}.{n}", imp.module, imp.line) for n in imp.names if is_private(n)}
    bound = bound_names(name)
    for node in ast.walk(tree_of(name)):
        chain = attribute_chain(node) if isinstance(node, ast.Attribute) else None
        if chain is None or chain[0] not in bound:
            continue
        path = bound[chain[0]]
        for part in chain[1]:
            if is_private(part):
                uses.add((f"{path}.{part}", owner_module(path), node.lineno))
            path = f"{path}.{part}"
    return sorted(uses, key=lambda use: (use[2], use[0]))


def test_module_list_covers_both_packages():
    expected = {LIBRARY, f"{LIBRARY}.entmax", BOOK, f"{BOOK}.toy", f"{BOOK}.toy.runs", f"{BOOK}.translation"}
    assert expected <= set(MODULES)


def test_no_import_cycle_between_package_modules():
    graph = {}
    for name in MODULES:
        targets = set()
        for imp in imports_of(name):
            # Importing a.b.c runs a/__init__ and a/b/__init__ first: edges to those too.
            targets |= {m for m in [imp.module, *ancestors(imp.module)] if m in MODULES}
        # A package's __init__ importing its own submodules is not a cycle of the modules themselves:
        # a module's own packages are already being imported when it is.
        graph[name] = targets - {name} - set(ancestors(name))
    visiting, done = set(), set()

    def visit(node, path):
        if node in visiting:
            pytest.fail("import cycle: " + " -> ".join(path[path.index(node) :] + [node]))
        if node in done:
            return
        visiting.add(node)
        for nxt in sorted(graph[node]):
            visit(nxt, path + [node])
        visiting.discard(node)
        done.add(node)

    for name in sorted(graph):
        visit(name, [])


def test_the_library_never_imports_the_book():
    offenders = []
    for name in MODULES:
        if not name.startswith(LIBRARY):
            continue
        offenders += [
            f"{name}:{imp.line}: imports {imp.module}"
            for imp in imports_of(name)
            if imp.module.split(".")[0] == BOOK
        ]
        for node in ast.walk(tree_of(name)):  # importlib.import_module("entmax_book…"), __import__(…)
            if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
                func = (
                    node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                )
                target = node.args[0].value
                if func in ("import_module", "__import__") and str(target).split(".")[0] == BOOK:
                    offenders.append(f"{name}:{node.lineno}: {func}({target!r})")
    assert not offenders, "\n".join(offenders)


def test_the_book_uses_only_public_names_of_the_library():
    offenders = [
        f"{name}:{line}: {path}"
        for name in MODULES
        if name.startswith(BOOK)
        for path, owner, line in private_uses(name)
        if owner.split(".")[0] == LIBRARY
    ]
    assert not offenders, "\n".join(offenders)


def _own_private_module(name, path):
    """A private module of the importer's own package (``entmax_lib._checks`` for
    ``entmax_lib.losses``): code the package shares inside itself, not a sibling's private name."""
    return path in MODULES and path.split(".")[0] == name.split(".")[0]


def test_no_module_imports_a_private_name_of_a_sibling():
    offenders = [
        f"{name}:{line}: {path}"
        for name in MODULES
        for path, owner, line in private_uses(name)
        if owner != name and not _own_private_module(name, path)
    ]
    assert not offenders, "\n".join(offenders)


def test_a_private_module_is_shared_within_its_package_only():
    assert _own_private_module("entmax_lib.losses", "entmax_lib._checks")
    assert not _own_private_module("entmax_book.toy", "entmax_lib._checks")
    assert not _own_private_module("entmax_lib.losses", "entmax_lib.entmax._prepare")


FIRST_IMPORTS = (
    "entmax_lib.pallas_kernel",
    "entmax_lib.threshold",
    "entmax_lib",
    "entmax_book.toy",
    "entmax_book.toy.runs",
    "entmax_book.translation",
)


@pytest.mark.slow
def test_any_module_can_be_imported_first():
    """Each in a fresh interpreter (an import order that works only after another module was
    imported would fail here); the interpreters run side by side."""
    runs = {}
    for first in FIRST_IMPORTS:
        code = f"import {first}; import entmax_lib; print(entmax_lib.entmax_bisect.__name__)"
        runs[first] = subprocess.Popen(
            [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
        )
    for first, run in runs.items():
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, f"import {first} first: {err}"
        assert out.strip() == "entmax_bisect", first


def code_lines(source):
    """Numbers of the lines that hold code: not blank, not only a comment (a string spanning
    several lines counts on each of them)."""
    lines = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}
    skip.add(tokenize.ENDMARKER)
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type not in skip:
            lines.update(range(token.start[0], token.end[0] + 1))
    return lines


def docstring_lines(node):
    """The lines of the docstrings of ``node`` and of the functions and classes inside it."""
    lines = set()
    for inner in ast.walk(node):
        if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and inner.body:
            first = inner.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def function_lengths(name):
    """(qualified name, first line, lines of code) for every function and method of a module;
    a function's count includes the functions nested in it."""
    source = MODULES[name].read_text()
    code = code_lines(source)
    found = []

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                span = set(range(child.lineno, child.end_lineno + 1))
                length = len((span & code) - docstring_lines(child))
                found.append((prefix + child.name, child.lineno, length))
                visit(child, f"{prefix}{child.name}.<locals>.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree_of(name), "")
    return found


def test_function_length_counts_code_only():
    source = (
        'def f(x):\n    """Doc.\n\n    More.\n    """\n'
        "    # a comment\n\n    y = (x +\n         1)\n    return y\n"
    )
    tree = ast.parse(source)
    lines = (set(range(1, 11)) & code_lines(source)) - docstring_lines(tree.body[0])
    assert sorted(lines) == [1, 8, 9, 10]


def test_no_function_is_longer_than_the_limit():
    offenders = [
        f"{MODULES[name].relative_to(ROOT)}:{line} {qualname}: {length} lines"
        for name in MODULES
        for qualname, line, length in function_lengths(name)
        if length > MAX_FUNCTION_LINES
    ]
    assert not offenders, (
        f"functions longer than {MAX_FUNCTION_LINES} lines of code (docstrings, comments and blank "
        "lines not counted):\n" + "\n".join(offenders)
    )


def _reaches(name, target, seen=None):
    """Whether module ``name`` imports ``target``, directly or through the modules it imports
    (not counting the ``__init__`` of its own packages, which run whatever imports it)."""
    seen = set() if seen is None else seen
    for imp in imports_of(name):
        own = set(ancestors(name))
        for module in [imp.module, *[m for m in ancestors(imp.module) if m not in own]]:
            if module == target or module.startswith(target + "."):
                return True
            if module in MODULES and module not in seen and module != name:
                seen.add(module)
                if _reaches(module, target, seen):
                    return True
    return False


def test_the_generic_data_path_does_not_import_the_generated_corpus():
    """Tokenising, padding and alignment work on any corpus: the word tags come from a tagger."""
    for name in ("entmax_book.translation.data", "entmax_book.translation.tokenizer"):
        assert not _reaches(name, "entmax_book.translation.corpus"), name
    assert _reaches("entmax_book.translation.experiment", "entmax_book.translation.corpus")  # the check works


def _reads_a_model_setting(name):
    """Lines of module ``name`` that read ``<something>model.config`` (settings out of a model)."""
    return [
        node.lineno
        for node in ast.walk(tree_of(name))
        if isinstance(node, ast.Attribute)
        and node.attr == "config"
        and isinstance(node.value, ast.Name)
        and "model" in node.value.id
    ]


def test_training_and_analysis_read_no_setting_out_of_a_model():
    """The settings travel as configs to their consumers (train, analyse), not inside the model."""
    for name in MODULES:
        if name.startswith("entmax_book") and not name.endswith(".model"):
            assert not _reads_a_model_setting(name), (name, _reads_a_model_setting(name))
    assert _reads_a_model_setting("entmax_book.translation.model")  # the check sees greedy_decode's


# --- The house of entmax_book ---------------------------------------------------------------------

#: The modules of ``entmax_book`` that both experiments share (and the package's ``__init__``).
SHARED = {BOOK, *(f"{BOOK}.{m}" for m in ("checks", "display", "progress", "record", "stats"))}
#: The experiments: one folder (subpackage) of ``entmax_book`` each.
EXPERIMENTS = ("toy", "translation")
TOY_MODULES = ("claims", "config", "configs", "experiment", "model", "runs", "task")


def experiment_of(name):
    """ "toy" for entmax_book.toy and its modules; None for a shared module."""
    parts = name.split(".")
    return parts[1] if parts[0] == BOOK and len(parts) > 1 and parts[1] in EXPERIMENTS else None


def test_an_experiment_imports_the_library_the_shared_modules_and_itself_only():
    offenders = []
    for name in MODULES:
        own = experiment_of(name)
        if own is None:
            continue
        for imp in imports_of(name):
            if (
                imp.module.split(".")[0] != LIBRARY
                and imp.module not in SHARED
                and experiment_of(imp.module) != own
            ):
                offenders.append(f"{name}:{imp.line}: imports {imp.module}")
    assert not offenders, "\n".join(offenders)


def test_the_shared_modules_import_no_experiment():
    offenders = [
        f"{name}:{imp.line}: imports {imp.module}"
        for name in SHARED
        for imp in imports_of(name)
        if experiment_of(imp.module) is not None
    ]
    assert not offenders, "\n".join(offenders)


def test_the_toy_is_one_folder_of_one_module_per_concern_with_its_records():
    folder = ROOT / BOOK / "toy"
    assert sorted(p.stem for p in folder.glob("*.py")) == ["__init__", *TOY_MODULES]
    records = sorted(p.suffix for p in (folder / "records").iterdir())
    assert records and set(records) == {".json"}
    assert not [p.name for p in (ROOT / BOOK).glob("toy*.py")], "the toy lives in entmax_book/toy/ only"


@pytest.mark.parametrize("module", TOY_MODULES)
def test_each_toy_module_has_its_test_module(module):
    assert (ROOT / "tests" / BOOK / "toy" / f"test_{module}.py").is_file()
