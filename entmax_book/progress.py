"""Progress bars for training loops and sweeps, shown only where someone is watching.

:func:`progress` returns a ``tqdm.auto`` bar: a widget in Jupyter and Colab, text in a
terminal. It is switched off where nobody watches, so that no progress residue ends up in
logs, test output or the pages of the built book:

* ``ENTMAX_PROGRESS=1`` (or ``0``) in the environment forces the bars on (or off);
  ``TQDM_DISABLE=1``, tqdm's own switch, also turns them off.
* In a Jupyter kernel (Jupyter, JupyterLab, VS Code, Colab) the bars are on when the cell was
  sent by a front end that can answer ``input()``. Headless executors — jupyter-book's
  (through nbclient) and nbval — send their cells with ``allow_stdin=False``, so the bars
  are off while the book is built or tested.
* Elsewhere (a script) they are on when standard error is a terminal: off under pytest,
  in CI logs and when the output is redirected.

:func:`report` shows the current step, loss and α in the bar's postfix. It costs nothing when
the bar is off (no device-to-host transfer), and when on it reads the values back from the
device at most once per display refresh. Typical use in a training loop::

    from entmax_book.progress import progress, report

    with progress(num_steps, desc="train") as bar:
        for step in range(num_steps):
            state, loss = train_step(state, batch)
            report(bar, step=step, loss=loss, alpha=model.alpha())  # alpha: optional
            bar.update()

and in a sweep: ``for setting in progress(settings, desc="grid"): ...``.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

__all__ = ["ENV_VAR", "interactive", "progress", "report"]

ENV_VAR = "ENTMAX_PROGRESS"
_ON, _OFF = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def _kernel():
    """The running IPython kernel, or None outside one (IPython is never imported here)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None)


def interactive():
    """Whether progress bars should be shown here (see the module's docstring for the rules).

    Returns:
      True in a terminal and in a Jupyter/Colab front end; False in the book build, nbval,
      pytest, CI and redirected output, unless ``ENTMAX_PROGRESS`` says otherwise.

    Raises:
      ValueError: ``ENTMAX_PROGRESS`` is set to something other than 0/1 (or no/yes, off/on).

    >>> isinstance(interactive(), bool)
    True
    """
    setting = os.environ.get(ENV_VAR, "").strip().lower()
    if setting in _ON:
        return True
    if setting in _OFF or os.environ.get("TQDM_DISABLE", "").strip().lower() in _ON:
        return False
    if setting:
        raise ValueError(f"{ENV_VAR} must be one of {sorted(_ON | _OFF)}, got {setting!r}.")
    kernel = _kernel()
    if kernel is not None:
        # ipykernel records, per execute request, whether the front end can answer input().
        return bool(getattr(kernel, "_allow_stdin", False))
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def progress(iterable_or_total=None, desc=None, enabled=None, **kwargs):
    """A ``tqdm.auto`` progress bar that is on only when :func:`interactive` (or ``enabled``).

    Args:
      iterable_or_total: an iterable to wrap, or the number of steps (an int ≥ 0) for a bar
        advanced by hand with ``bar.update()``.
      desc: the label in front of the bar.
      enabled: True/False to force the bar on/off; None (default) decides by :func:`interactive`.
      **kwargs: passed to ``tqdm.auto.tqdm`` (e.g. ``leave=False`` for inner loops).

    Returns:
      The bar; iterating it yields the iterable's items whether it is shown or not.

    Raises:
      ValueError: a negative number of steps.

    >>> bar = progress(range(3), desc="demo", enabled=False)
    >>> [i for i in bar]
    [0, 1, 2]
    """
    from tqdm.auto import tqdm

    if enabled is None:
        enabled = interactive()
    if isinstance(iterable_or_total, (int, np.integer)) and not isinstance(iterable_or_total, bool):
        if iterable_or_total < 0:
            raise ValueError(f"iterable_or_total must be a number of steps >= 0, got {iterable_or_total}.")
        iterable, total = None, int(iterable_or_total)
    else:
        iterable, total = iterable_or_total, kwargs.pop("total", None)
    return tqdm(iterable, total=total, desc=desc, disable=not enabled, dynamic_ncols=True, **kwargs)


def _format(value):
    if isinstance(value, str):
        return value
    values = np.ravel(np.asarray(value, np.float64))
    if values.size == 1:
        return f"{values[0]:.4g}"
    if values.size <= 4:
        return "[" + " ".join(f"{v:.3g}" for v in values) + "]"
    return f"{values.min():.3g}–{values.max():.3g}"


def report(bar, force=False, **values):
    """Show named values (step, loss, α, ...) in the bar's postfix.

    Scalars are shown with 4 significant digits, up to 4 values (e.g. α per head) as a list,
    more as their range min–max. Nothing is read from the device when the bar is off, and at
    most once per ``bar.mininterval`` seconds (tqdm's refresh interval) when it is on.

    Args:
      bar: a bar from :func:`progress`.
      force: show now, even if the last refresh was less than ``mininterval`` ago.
      **values: numbers, arrays (JAX or NumPy) or strings, shown in the order given.

    Returns:
      True if the postfix was updated.

    >>> bar = progress(10, enabled=False)
    >>> report(bar, step=1, loss=0.5)
    False
    """
    if bar.disable:
        return False
    now = time.monotonic()
    last = getattr(bar, "_entmax_last_report", None)
    if not force and last is not None and now - last < bar.mininterval:
        return False
    bar._entmax_last_report = now
    bar.set_postfix({name: _format(v) for name, v in values.items()}, refresh=True)
    return True
