"""The package's import structure: no cycles, no private names taken from a sibling module."""

import ast
import pathlib
import subprocess
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "entmax_lib"


def module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name):
    """(imported module, imported names, at module level?) for every import of a package module,
    including imports inside functions (a deferred import still makes a cycle)."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        top_level = node in tree.body
        if isinstance(node, ast.Import):
            found += [
                (alias.name, [], top_level) for alias in node.names if alias.name.startswith("entmax_lib")
            ]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    package.split(".")[: len(package.split(".")) - node.level + 1] + [base]
                ).strip(".")
            if not base.startswith("entmax_lib"):
                continue
            names = [alias.name for alias in node.names]
            submodules = [f"{base}.{n}" for n in names if f"{base}.{n}" in MODULES]
            found += [(m, [], top_level) for m in submodules]
            plain = [n for n in names if f"{base}.{n}" not in MODULES]
            if plain:
                found.append((base, plain, top_level))
    return found


def test_no_import_cycle_between_package_modules():
    graph = {name: {m for m, _, _ in imports_of(name) if m in MODULES and m != name} for name in MODULES}
    # A package's __init__ importing its own submodules is not a cycle of the modules themselves.
    for name in graph:
        graph[name] -= {p for p in graph if name.startswith(p + ".") and MODULES[p].name == "__init__.py"}
    visiting, done = set(), set()

    def visit(node, path):
        if node in visiting:
            pytest.fail("import cycle: " + " -> ".join(path + [node]))
        if node in done:
            return
        visiting.add(node)
        for nxt in graph[node]:
            visit(nxt, path + [node])
        visiting.discard(node)
        done.add(node)

    for name in graph:
        visit(name, [])


def test_no_module_imports_a_private_name_of_a_sibling():
    offenders = []
    for name in MODULES:
        for module, names, _ in imports_of(name):
            offenders += [
                f"{name}: from {module} import {n}" for n in names if n.startswith("_") and module != name
            ]
        tree = ast.parse(MODULES[name].read_text())
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("entmax_lib"):
                for alias in node.names:
                    if f"{node.module}.{alias.name}" in MODULES:
                        aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                offenders.append(f"{name}: {aliases[node.value.id]}.{node.attr}")
    assert not offenders, offenders


@pytest.mark.parametrize("first", ["entmax_lib.pallas_kernel", "entmax_lib.threshold", "entmax_lib"])
def test_any_module_can_be_imported_first(first):
    code = f"import {first}; import entmax_lib; print(entmax_lib.entmax_bisect.__name__)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "entmax_bisect"
