"""The package: pyproject.toml and environment.yml list the same dependencies, and the wheel that
`pip install git+…` builds holds everything `import entmax_lib` and the experiments need."""

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]


def _normalise(requirement: str) -> str:
    return re.sub(r"\s+", "", requirement).lower().replace("_", "-")


def _pyproject_requirements():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in ("test", "book"):
        reqs += project["optional-dependencies"][extra]
    return {_normalise(r) for r in reqs}


def _environment_requirements():
    text = (ROOT / "environment.yml").read_text()
    pip_section = text.split("- pip:", 1)[1]
    entries = re.findall(r"^\s+-\s+(\S.*)$", pip_section, flags=re.M)
    return {_normalise(e) for e in entries if not e.startswith("-e")}


def test_environment_yml_matches_pyproject():
    assert _environment_requirements() == _pyproject_requirements()


@pytest.mark.parametrize("requirement", sorted(_pyproject_requirements()))
def test_no_exact_pins(requirement):
    # Colab must keep its own jax/flax/ipywidgets: only lower bounds (and jupyter-book's <2).
    assert "==" not in requirement and "~=" not in requirement


def test_floor_versions_admitted():
    floors = {"jax": "0.7.2", "flax": "0.11.2", "optax": "0.2.8", "ipywidgets": "7.7.1", "numpy": "2.1"}
    reqs = {re.split(r"[<>=!~]", r, maxsplit=1)[0]: r for r in _pyproject_requirements()}
    for name, floor in floors.items():
        bound = re.search(r">=([\d.]+)", reqs[name]).group(1)
        as_tuple = lambda v: tuple(int(p) for p in v.split("."))
        assert as_tuple(bound) <= as_tuple(floor), f"{name}: lower bound {bound} excludes Colab's {floor}"


def test_no_pytorch():
    assert not any(r.startswith("torch") for r in _pyproject_requirements())


# ----------------------------------------------------------------------------------------
# The wheel: what `pip install git+…` (non-editable) installs
# ----------------------------------------------------------------------------------------

PACKAGES = (ROOT / "entmax_lib", ROOT / "entmax_book")
# Files a package directory may hold that are not needed at run time.
NOT_SHIPPED = {".md"}


def _package_files():
    """Every module and data file of the package, relative to the repository root."""
    return sorted(
        p.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for p in package.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix not in NOT_SHIPPED | {".pyc"}
    )


def _pip(*args):
    """Run pip offline (nothing to download: --no-deps, no build isolation)."""
    cmd = [sys.executable, "-m", "pip", *args, "-q", "--no-index", "--disable-pip-version-check"]
    result = subprocess.run(cmd, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """The wheel built offline from a copy of the sources (no stale build/ of the checkout)."""
    import setuptools

    major = int(setuptools.__version__.split(".")[0])
    assert major >= 77, (
        f"setuptools {setuptools.__version__} cannot build this project (>= 77 is in the test extra: "
        'pip install -e ".[test]", which `make test` does)'
    )
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build", "dist")
    for package in PACKAGES:
        shutil.copytree(package, src / package.name, ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE", "LICENSE-TEXT.md"):
        shutil.copy2(ROOT / name, src / name)
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-deps",
        "--no-build-isolation",
        "-q",
        "-w",
        str(tmp),
        str(src),
    ]
    subprocess.run(cmd, check=True, capture_output=True, cwd=tmp)
    (path,) = tmp.glob("entmax_lib-*.whl")
    return path


@pytest.mark.slow  # builds (and installs) the wheel
def test_wheel_contains_every_module_and_data_file(wheel):
    with zipfile.ZipFile(wheel) as archive:
        shipped = set(archive.namelist())
    missing = [f for f in _package_files() if f not in shipped]
    assert not missing, f"not in the wheel: {missing}"
    assert (
        "entmax_book/translation/corpus/generator.py" in shipped
    )  # the generated parallel corpus (a subpackage)
    assert "entmax_book/toy/records/demo.json" in shipped  # the toy experiment's recorded runs


@pytest.mark.slow  # builds (and installs) the wheel
def test_installed_wheel_imports_from_elsewhere(wheel, tmp_path):
    """Install the wheel alone (--no-deps --target) and import every module from another directory."""
    target = tmp_path / "site"
    _pip("install", "--no-deps", "--target", str(target), str(wheel))
    script = f"""
import importlib, pkgutil, sys
sys.path.insert(0, {str(target)!r})
import entmax_lib
assert entmax_lib.__file__.startswith({str(target)!r}), entmax_lib.__file__
import entmax_book
names = [m.name for m in pkgutil.walk_packages(entmax_lib.__path__, "entmax_lib.")]
names += [m.name for m in pkgutil.walk_packages(entmax_book.__path__, "entmax_book.")]
for name in names:
    importlib.import_module(name)
from entmax_book import record
assert str(record.records_folder("toy")).startswith({str(target)!r}), record.records_folder("toy")
assert record.load("toy", "demo")["result"]["seeds"]  # the recorded runs ship in the wheel
assert record.load_arrays("translation", "hard_softmax_seed0")  # with Chapter 5's trained weights
print(len(names), float(entmax_lib.sparsemax(__import__("jax").numpy.array([0.0, 0.5]))[1]))
"""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=elsewhere, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-3000:]
    count, value = result.stdout.split()
    assert int(count) >= len([f for f in _package_files() if f.endswith(".py")]) - 2  # two top-level __init__
    assert float(value) == 0.75
