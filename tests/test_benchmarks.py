"""The benchmark scripts: ``benchmarks/kernel_check.py`` runs in seconds on a CPU, and no
benchmark takes code from tests/.

The kernel check is written for GPU hardware (``benchmarks/gpu_check.sh``); here it runs the
fused kernel in Pallas' interpret mode on one tiny size, so that the script itself is known to
work before a GPU run depends on it. ``benchmarks/bench_entmax.py`` keeps its own float64
reference, checked here against the unit tests' one.
"""

import importlib.util
import pathlib
import re

import jax
import numpy as np
import pytest

from entmax_lib import pallas_kernel

SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "kernel_check.py"


@pytest.fixture(scope="module")
def kernel_check():
    spec = importlib.util.spec_from_file_location("kernel_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reported(output):
    """{(size, setting): difference} from the script's output."""
    lines = re.findall(r"^(\d+x\d+) (\S+)\s+max \|kernel - XLA\| = (\S+)$", output, re.M)
    return {(size, name): float(value) for size, name, value in lines}


@pytest.mark.slow
def test_kernel_matches_xla_in_interpret_mode(kernel_check, capsys):
    assert kernel_check.main(["--interpret", "--sizes", "8x16"]) == 0
    output = capsys.readouterr().out
    differences = reported(output)
    assert set(differences) == {("8x16", "alpha=1.5"), ("8x16", "alpha=2"), ("8x16", "learned")}, output
    assert all(d <= 1e-6 for d in differences.values()), output
    assert output.rstrip().endswith(": ok")


def test_a_wrong_kernel_fails_the_check(kernel_check, capsys, monkeypatch):
    fake = lambda z, beta, n_iter, interpret=False: jax.nn.softmax(z, axis=-1)
    monkeypatch.setattr(pallas_kernel, "entmax_rows", fake)
    monkeypatch.setattr(kernel_check, "SETTINGS", (("alpha=2", 1.0),))  # one is enough here
    assert kernel_check.main(["--interpret", "--sizes", "4x8"]) == 1
    output = capsys.readouterr().out
    assert all(d > 1e-3 for d in reported(output).values()), output
    assert output.rstrip().endswith(": FAILED")


def test_compiling_the_kernel_needs_a_gpu(kernel_check, capsys):
    assert jax.default_backend() == "cpu"
    with pytest.raises(SystemExit) as exit_:
        kernel_check.main(["--sizes", "8x16"])
    assert exit_.value.code == 2 and "--interpret" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["8", "8x", "axb", "0x16", f"8x{pallas_kernel.MAX_COLS + 1}"])
def test_bad_sizes_are_refused(kernel_check, text):
    with pytest.raises(SystemExit):
        kernel_check.parse_args(["--interpret", "--sizes", text])


def test_sizes_are_parsed(kernel_check):
    args = kernel_check.parse_args(["--interpret", "--sizes", "8x16", "2X4096"])
    assert args.sizes == [(8, 16), (2, 4096)] and args.interpret and args.n_iter == 25


BENCHMARKS = sorted(SCRIPT.parent.glob("*.py"))


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.name)
def test_a_benchmark_imports_no_test_code(path):
    """A benchmark runs from a checkout or a copy of benchmarks/ alone: it takes nothing from tests/."""
    source = path.read_text()
    assert "sys.path.insert" not in source and "sys.path.append" not in source
    assert not re.search(r"^\s*(from|import)\s+(references|conftest|tests)\b", source, re.M)


def test_the_entmax_benchmark_s_reference_is_the_tests_reference():
    from references import np_entmax

    spec = importlib.util.spec_from_file_location("bench_entmax", SCRIPT.parent / "bench_entmax.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    z = np.random.default_rng(0).normal(size=(64, 33)) * 3
    alpha = np.random.default_rng(1).uniform(1.01, 2.5, size=(64, 1))
    for a in (1.5, 2.0, alpha):
        np.testing.assert_allclose(bench.reference_entmax(z, a), np_entmax(z, a), atol=1e-12)
