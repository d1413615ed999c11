"""The README keeps its promises: the quick start is two make commands that wrap the long form
and set themselves up, the badges point at the workflows and at every chapter, and the Python
examples run (offline) and print or return what their comments say."""

import contextlib
import hashlib
import io
import os
import re
import shutil
import subprocess
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import yaml
from flax import nnx

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
REPO_URL = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"].rstrip("/")
needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _section(title):
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, flags=re.M | re.S)
    assert match, f"README has no section {title!r}"
    return match.group(1)


def _blocks(text, language):
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.M | re.S)


def _commands(block):
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def _make_dry_run(*args):
    # A fresh make, not the child of the `make test ARGS=...` that may be running these tests
    # (make passes its flags and command-line variables on through the environment).
    inherited = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")
    inherited += ("ARGS", "VENV", "EXTRAS", "PINS", "WORKERS")
    env = {k: v for k, v in os.environ.items() if k not in inherited}
    cmd = ["make", "-n", "--no-print-directory", *args]
    result = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return [line.strip() for line in result.stdout.splitlines()]


# ----------------------------------------------------------------------------------------
# The two commands
# ----------------------------------------------------------------------------------------


def test_quick_start_is_exactly_two_commands():
    (block,) = _blocks(_section("Quick start"), "bash")
    assert _commands(block) == ["make book", "make test"]


LONG_FORM = {
    "book": "jupyter-book build -W -n --keep-going .",
    "test": "python -m pytest -n 2 --dist loadfile",
}


@needs_make
@pytest.mark.parametrize("target", LONG_FORM)
def test_make_targets_run_the_long_form_commands(target):
    long_form = [c for block in _blocks(_section("The long form"), "bash") for c in _commands(block)]
    assert LONG_FORM[target] in long_form
    assert _make_dry_run(target)[-1] == LONG_FORM[target]


@needs_make
def test_make_test_passes_pytest_arguments():
    run = "python -m pytest -n 2 --dist loadfile -m 'not slow' tests"
    assert _make_dry_run("test", "ARGS=-m 'not slow' tests")[-1] == run


@needs_make
def test_make_test_runs_in_one_process_with_no_workers():
    assert _make_dry_run("test", "WORKERS=0")[-1] == "python -m pytest -n 0 --dist loadfile"


def _fake_venv(path, installed_after_pyproject):
    """A stand-in environment: bin/python exists, and its install stamp names the content of
    the current pyproject.toml (as the Makefile keys it: its bytes and the default extras, no
    pins) or the content of an older one."""
    (path / "bin").mkdir(parents=True)
    (path / "bin" / "python").touch()
    key = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + b"test,book ").hexdigest()[:12]
    (path / f".installed-{key if installed_after_pyproject else '0' * 12}").touch()


@needs_make
def test_make_sets_up_a_missing_environment(tmp_path):
    venv = tmp_path / "env"
    steps = " ".join(_make_dry_run("test", f"VENV={venv}"))
    assert f"-m venv {venv}" in steps
    assert f"{venv}/bin/python -m pip install -q -e " in steps
    assert f"touch {venv}/.installed" in steps


@needs_make
@pytest.mark.parametrize("up_to_date", [True, False])
def test_make_reinstalls_only_when_pyproject_changed(tmp_path, up_to_date):
    venv = tmp_path / "env"
    _fake_venv(venv, installed_after_pyproject=up_to_date)
    steps = _make_dry_run("test", f"VENV={venv}")
    reinstalls = any("pip install" in step for step in steps)
    assert reinstalls is not up_to_date
    assert not any("-m venv" in step for step in steps)  # the environment is reused
    assert steps[-1] == LONG_FORM["test"]


# ----------------------------------------------------------------------------------------
# Badges
# ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("workflow", ["tests.yml", "book.yml"])
def test_workflow_badges(workflow):
    assert (ROOT / ".github" / "workflows" / workflow).exists()
    assert f"]({REPO_URL}/actions/workflows/{workflow}/badge.svg)" in README


@pytest.mark.parametrize("chapter", sorted(p.name for p in (ROOT / "chapters").glob("*.ipynb")))
def test_every_chapter_has_an_open_in_colab_badge(chapter):
    owner_repo = REPO_URL.removeprefix("https://github.com/")
    colab = f"https://colab.research.google.com/github/{owner_repo}/blob/main/colab/{chapter}"
    assert f"[![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]({colab})" in README


# ----------------------------------------------------------------------------------------
# The Python examples, executed as written
# ----------------------------------------------------------------------------------------


CLAIM = re.compile(r"^(\S[^#\n]*?)\s+#\s*\[([-\d., ]+)\]", flags=re.M)


@pytest.fixture(scope="module")
def readme_run(tmp_path_factory):
    """Every ```python block of the README, in order, in one namespace, from an empty directory.

    A line ``expression  # [numbers]`` is a claim: the expression is evaluated again right
    after its block has run, and its value kept next to the numbers.
    """
    blocks = _blocks(README, "python")
    assert len(blocks) >= 2
    namespace, printed, claims = {}, io.StringIO(), []
    cwd = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("readme"))
    try:
        with contextlib.redirect_stdout(printed):
            for i, block in enumerate(blocks):
                exec(compile(block, f"README.md python block {i + 1}", "exec"), namespace)
                for expression, numbers in CLAIM.findall(block):
                    claims.append((expression, numbers, np.asarray(eval(expression, namespace))))
    finally:
        os.chdir(cwd)
    return namespace, printed.getvalue(), claims


@pytest.mark.slow  # the README's examples compile Flax layers: ~20 s
def test_commented_values_are_what_the_code_returns(readme_run):
    _, _, claims = readme_run
    assert len(claims) >= 2
    for expression, numbers, got in claims:
        expected = [float(v) for v in numbers.replace(",", " ").split()]
        np.testing.assert_allclose(got, expected, atol=1e-3, err_msg=expression)


@pytest.mark.slow  # the README's examples compile Flax layers: ~20 s
def test_flax_snippet_fixed_alpha_is_sparse_attention_inside_flax(readme_run):
    ns, _, _ = readme_run
    mha, x = ns["mha"], ns["x"]
    assert isinstance(mha, nnx.MultiHeadAttention)
    assert mha(x).shape == (2, 10, 64)
    mha(x, sow_weights=True)
    (weights,) = jax.tree.leaves(nnx.pop(mha, nnx.Intermediate))
    weights = np.asarray(weights)
    assert weights.shape == (2, 8, 10, 10)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    assert (weights == 0).mean() > 0.1  # 1.5-entmax: many exact zeros; softmax would have none


@pytest.mark.slow  # the README's examples compile Flax layers: ~20 s
def test_flax_snippet_learned_alpha_per_head(readme_run):
    ns, printed, _ = readme_run
    attn, x, weights = ns["attn"], ns["x"], np.asarray(ns["weights"])
    assert ns["y"].shape == (2, 10, 64) and weights.shape == (2, 8, 10, 10)
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-5)
    alpha = np.asarray(attn.alpha())
    assert alpha.shape == (8,) and np.all((alpha >= 1.01) & (alpha <= 2.0)) and np.ptp(alpha) > 0
    shown = [float(v) for v in re.findall(r"\d+\.\d+", printed)]
    np.testing.assert_allclose(shown, alpha, atol=1e-4)
    # "trained with the rest": the loss has a non-zero gradient for every head's α logit.
    grads = nnx.grad(lambda m: jnp.sum(m(x) ** 2))(attn)
    assert np.all(np.abs(np.asarray(grads.alpha_logit[...])) > 0)
