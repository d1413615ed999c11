"""The package's metadata: pyproject.toml and environment.yml must list the same dependencies."""

import re
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
