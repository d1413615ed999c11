"""Tests for entmax_book.progress: when bars are shown, and what they show.

The decisive cases run real Jupyter kernels: a cell sent the way nbclient (jupyter-book) and
nbval send it must print no progress output, one sent the way Jupyter's front ends send it
must display the widget.
"""

import io
import os
import sys
import types

import jax.numpy as jnp
import numpy as np
import pytest

from entmax_book import progress as progress_module
from entmax_book.progress import ENV_VAR, interactive, progress, report


@pytest.fixture
def clean_env(monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    return monkeypatch


class _Stream(io.StringIO):
    def __init__(self, tty):
        super().__init__()
        self.tty = tty

    def isatty(self):
        return self.tty


@pytest.mark.parametrize("tty", [True, False])
def test_script_shows_bars_only_on_a_terminal(clean_env, tty):
    clean_env.setattr(sys, "stderr", _Stream(tty))
    assert interactive() is tty


@pytest.mark.parametrize("value, expected", [("1", True), ("on", True), ("0", False), ("no", False)])
def test_environment_variable_forces_the_choice(clean_env, value, expected):
    clean_env.setattr(sys, "stderr", _Stream(not expected))
    clean_env.setenv(ENV_VAR, value)
    assert interactive() is expected


def test_tqdm_disable_turns_bars_off(clean_env):
    clean_env.setattr(sys, "stderr", _Stream(True))
    clean_env.setenv("TQDM_DISABLE", "1")
    assert interactive() is False


def test_bad_environment_value_is_a_clear_error(clean_env):
    clean_env.setenv(ENV_VAR, "maybe")
    with pytest.raises(ValueError, match=ENV_VAR):
        interactive()


@pytest.mark.parametrize("allow_stdin", [True, False])
def test_kernel_follows_the_front_end(clean_env, allow_stdin):
    kernel = types.SimpleNamespace(_allow_stdin=allow_stdin)
    shell = types.SimpleNamespace(kernel=kernel)
    clean_env.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: shell))
    clean_env.setattr(sys, "stderr", _Stream(not allow_stdin))  # the terminal rule must not decide
    assert interactive() is allow_stdin


def test_progress_wraps_iterables_and_totals():
    assert list(progress(range(4), enabled=False)) == [0, 1, 2, 3]
    assert progress(7, enabled=False).total == 7
    assert progress(np.int64(5), enabled=False).total == 5
    assert progress(["a", "b"], enabled=False).total == 2


@pytest.mark.parametrize("total", [-3, np.int64(-1)])
def test_progress_refuses_a_negative_total(total):
    with pytest.raises(ValueError, match=f"iterable_or_total must be a number of steps >= 0, got {total}"):
        progress(total, enabled=False)


class _Unreadable:
    def __array__(self, *args, **kwargs):
        raise AssertionError("read from the device although the bar is off")


def test_report_reads_nothing_when_off():
    bar = progress(3, enabled=False)
    assert report(bar, loss=_Unreadable(), alpha=_Unreadable()) is False


def test_report_shows_step_loss_and_alpha():
    out = io.StringIO()
    bar = progress(10, desc="train", enabled=True, file=out, mininterval=60)
    assert report(bar, step=3, loss=jnp.float32(0.123456), alpha=jnp.array([1.2, 1.5]))
    assert bar.postfix == "step=3, loss=0.1235, alpha=[1.2 1.5]"
    assert not report(bar, step=4, loss=0.1)  # within mininterval: skipped
    assert report(bar, force=True, step=5, loss=0.1, alpha=jnp.linspace(1.1, 1.9, 8))
    assert bar.postfix == "step=5, loss=0.1, alpha=1.1–1.9"
    bar.close()
    assert "train" in out.getvalue() and "alpha=[1.2 1.5]" in out.getvalue()


_CELL = """
from entmax_book.progress import progress, report
with progress(3, desc="kernel-check") as bar:
    for step in range(3):
        report(bar, force=True, step=step, loss=1.0 / (step + 1))
        bar.update()
print("done")
"""


def _kernel_env():
    """The kernel's environment: no forcing of the bars, this checkout's entmax_lib importable."""
    env = {k: v for k, v in os.environ.items() if k not in (ENV_VAR, "TQDM_DISABLE")}
    root = os.path.dirname(os.path.dirname(progress_module.__file__))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    return env


def _run_in_kernel(kc, allow_stdin):
    outputs = []
    reply = kc.execute_interactive(_CELL, allow_stdin=allow_stdin, output_hook=outputs.append, timeout=120)
    assert reply["content"]["status"] == "ok", reply["content"]
    return [m for m in outputs if m["msg_type"] in ("stream", "display_data", "update_display_data")]


@pytest.mark.slow
def test_real_kernel_headless_vs_front_end():
    """nbclient and nbval send allow_stdin=False: no output but the cell's own; a front end gets the bar."""
    jupyter_client = pytest.importorskip("jupyter_client")
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="python3", env=_kernel_env())
    try:
        headless = _run_in_kernel(kc, allow_stdin=False)
        assert [m["content"].get("text") for m in headless] == ["done\n"]
        front_end = _run_in_kernel(kc, allow_stdin=True)
        shown = [
            m for m in front_end if "application/vnd.jupyter.widget-view+json" in m["content"].get("data", {})
        ]
        assert shown, [m["content"] for m in front_end]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


@pytest.mark.slow
def test_book_executor_records_no_progress_output(tmp_path):
    """jupyter-book executes chapters with nbclient: the stored outputs hold no bar."""
    nbclient = pytest.importorskip("nbclient")
    nbformat = pytest.importorskip("nbformat")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(_CELL)])
    client = nbclient.NotebookClient(notebook, timeout=120, kernel_name="python3")
    client.execute(env=_kernel_env(), cwd=str(tmp_path))
    outputs = notebook.cells[0].outputs
    assert [(o.output_type, o.get("text")) for o in outputs] == [("stream", "done\n")]
    assert "widgets" not in notebook.metadata
