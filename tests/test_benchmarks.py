"""The benchmark scripts that can run in seconds on a CPU: ``benchmarks/kernel_check.py``.

The check is written for GPU hardware (``benchmarks/gpu_check.sh``); here it runs the fused
kernel in Pallas' interpret mode on one tiny size, so that the script itself is known to work
before a GPU run depends on it.
"""

import importlib.util
import pathlib
import re

import jax
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
