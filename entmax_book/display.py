"""Small helpers shared by the book's chapters: one look for every figure, library source on the
page, and the numbers the text quotes.

Every figure of the book draws a map in the same colour and marker (:data:`MAP_STYLES`,
:func:`map_style`), and continuous sweeps over α use one colour map (:data:`ALPHA_CMAP`).
:func:`show_source` prints a library function's code without its docstring, so a chapter can
show what it explains; :func:`show_rows` prints a few labelled numbers as a small table, and
:func:`markdown_table` writes a table for the page.
:func:`glue` stores a computed number, word or figure under a name, for the text to quote with
MyST-NB's ``{glue:text}`` role.

Example:
  >>> from entmax_book.display import map_style
  >>> map_style("sparsemax")["color"]
  '#009E73'
"""

from __future__ import annotations

import ast
import inspect
import math
import numbers
import textwrap
from collections.abc import Sequence

import numpy as np
from IPython.display import Markdown, display

__all__ = [
    "ALPHA_CMAP",
    "MAP_STYLES",
    "glue",
    "map_style",
    "markdown_table",
    "show_rows",
    "show_source",
]

# Okabe–Ito colours (distinguishable with the common colour-vision deficiencies).
MAP_STYLES = {
    "softmax": {"color": "#0072B2", "marker": "o", "label": "softmax (α = 1)"},
    "entmax15": {"color": "#E69F00", "marker": "s", "label": "1.5-entmax (α = 1.5)"},
    "sparsemax": {"color": "#009E73", "marker": "^", "label": "sparsemax (α = 2)"},
    "alpha_entmax": {"color": "#CC79A7", "marker": "D", "label": "learned α"},
}
ALPHA_CMAP = "viridis"  # for many values of α: dark = α near 1, light = large α


def map_style(name: str, **overrides) -> dict:
    """Colour, marker and label of a map for matplotlib (``ax.plot(x, y, **map_style(name))``).

    Args:
      name: a normaliser of :data:`entmax_lib.attention.NORMALISERS`: "softmax", "entmax15",
        "sparsemax" or "alpha_entmax" (learned α).
      **overrides: any matplotlib keyword to add or replace (e.g. ``label=None``).

    Returns:
      A new dict of matplotlib keywords.
    """
    if name not in MAP_STYLES:
        raise ValueError(f"name must be one of {list(MAP_STYLES)}, got {name!r}.")
    return {**MAP_STYLES[name], **overrides}


def show_source(obj) -> None:
    """Print the source code of a library function or class without its docstrings.

    The docstrings (of the object, and of the methods of a class) are removed; the book
    explains what they would say.

    Args:
      obj: a function, method or class defined in a Python file.
    """
    source = textwrap.dedent(inspect.getsource(obj))
    lines = source.splitlines(keepends=True)
    docstring_lines = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                if isinstance(first.value.value, str):
                    docstring_lines.update(range(first.lineno - 1, first.end_lineno))
    print("".join(line for i, line in enumerate(lines) if i not in docstring_lines))


def show_rows(title: str, rows: dict, fmt: str = "{:.1f}") -> None:
    """Print a small table: a title, then one labelled line per entry of ``rows``.

    A key that names a map (a key of :data:`MAP_STYLES`) is written as the map's label, as in
    the figures; any other key as it is. A value may be one number or a short sequence of
    numbers, each written with ``fmt``.

    Args:
      title: the line above the table (what the numbers are, with their unit).
      rows: label or map name -> a number or a 1-D sequence of numbers.
      fmt: a ``str.format`` pattern for one number.

    Example:
      >>> show_rows("mass at L = 32 (%)", {"softmax": 67.01, "sparsemax": [79.4, 80.0]})
      mass at L = 32 (%)
        softmax (α = 1)       67.0
        sparsemax (α = 2)     79.4   80.0
    """
    if not isinstance(rows, dict) or not rows:
        raise TypeError(f"rows must be a non-empty dict of label -> numbers, got {rows!r}.")
    labels = {key: MAP_STYLES[key]["label"] if key in MAP_STYLES else str(key) for key in rows}
    width = max(len(label) for label in labels.values()) + 2
    print(title)
    for key, value in rows.items():
        cells = [fmt.format(float(x)) for x in np.ravel(np.asarray(value, dtype=float))]
        print(f"  {labels[key]:<{width}}" + "".join(f"{cell:>7s}" for cell in cells))


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A Markdown table: one header line, the separator, then one line per row.

    Cells are written as given (format numbers before); a cell must not contain "|" or a line
    break, which would split it.

    Args:
      header: the column titles.
      rows: the rows, each with one cell per column.

    Returns:
      the Markdown text, e.g. for ``IPython.display.Markdown`` or :func:`glue`.

    Raises:
      ValueError: naming the first row whose length differs from the header's, or the first
        cell with a "|" or a line break.

    Example:
      >>> print(markdown_table(["map", "mass (%)"], [["softmax", "67.0"], ["sparsemax", "79.4"]]))
      | map | mass (%) |
      |---|---|
      | softmax | 67.0 |
      | sparsemax | 79.4 |
    """
    header = [str(h) for h in header]
    rows = [[str(c) for c in row] for row in rows]
    for i, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(f"rows[{i}] has {len(row)} cells, the header {len(header)}.")
    for cell in (*header, *(c for row in rows for c in row)):
        if "|" in cell or "\n" in cell:
            raise ValueError(f"a table cell may not contain '|' or a line break: {cell!r}.")
    lines = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    return "\n".join([*lines, *("| " + " | ".join(row) + " |" for row in rows)])


def _check_name(name):
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {type(name).__name__} {name!r}.")
    if not name or any(c.isspace() or c in ":`" for c in name):
        raise ValueError(
            f"name must be a non-empty string without spaces, colons or backticks (the text refers "
            f"to it as {{glue:text}}`name:.2f`), got {name!r}."
        )


def _number(name, value) -> float:
    """``value`` as a finite Python float, or a clear error naming ``name``."""
    wrong = f"value of {name!r} must be a number, a string, a figure or a Markdown table, got"
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{wrong} bool {value!r}; glue a word for a truth value.")
    if isinstance(value, numbers.Real):
        try:
            number = float(value)
        except OverflowError:  # a Python int beyond float range
            raise ValueError(
                f"value of {name!r} must be finite (within float range), got an integer of "
                f"{len(str(abs(value)))} digits."
            ) from None
    elif hasattr(value, "__array__"):  # NumPy and JAX arrays and scalars
        array = np.asarray(value)
        if not (array.dtype.kind in "iuf" or "float" in array.dtype.name):
            raise TypeError(f"{wrong} an array of dtype {array.dtype}.")
        if array.size != 1:
            raise TypeError(f"{wrong} an array of shape {array.shape}; glue one value.")
        number = float(array.reshape(()))
    else:
        raise TypeError(f"{wrong} {type(value).__name__}.")
    if not math.isfinite(number):
        raise ValueError(f"value of {name!r} must be finite, got {number}.")
    return number


def glue(name: str, value) -> None:
    """Store a computed value under ``name`` for the text to quote (``{glue:text}`name:.2f```).

    In the book build MyST-NB pastes the value into the prose, so that every number the text
    quotes is the one the cell computed. Outside the build (Jupyter, Colab, where MyST-NB is
    not installed) the value is shown instead: a number or word is printed as ``name = value``,
    a figure is drawn.

    Args:
      name: the key the text refers to; unique within a chapter, non-empty, without spaces,
        colons or backticks.
      value: a finite real number (NumPy and JAX scalars and one-element arrays included;
        stored as a Python float), a string, a matplotlib figure, or an
        ``IPython.display.Markdown`` table (pasted on another page with ``{glue}`` and its
        ``:doc:`` option).

    Raises:
      TypeError: a ``name`` that is not a string; a ``value`` that is not a real number, a
        string or a figure (bytes, a bool, a complex number, a string or multi-element array).
      ValueError: an empty ``name`` or one with spaces, colons or backticks; NaN, ±inf or an
        integer beyond float range.

    Example (outside the build, as on Colab, where MyST-NB is not installed):
      >>> import sys, unittest.mock
      >>> with unittest.mock.patch.dict(sys.modules, {"myst_nb": None}):
      ...     glue("answer", 42)
      answer = 42.0
    """
    _check_name(name)
    is_figure = hasattr(value, "savefig")
    is_markdown = isinstance(value, Markdown)
    if not (is_figure or is_markdown or isinstance(value, str)):
        value = _number(name, value)
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        if is_figure:
            import matplotlib.pyplot as plt

            plt.figure(value.number)
            plt.show()
        elif is_markdown:
            display(value)
        else:
            print(f"{name} = {value}")
        return
    if is_markdown:
        value = _Table(value.data)
    myst_glue(name, value, display=False)


class _Table(Markdown):
    """A Markdown table that also renders as HTML.

    MyST-NB pastes a value on another page (``{glue}`` with ``:doc:``) from its HTML only.
    """

    def _repr_html_(self):
        from markdown_it import MarkdownIt  # installed with MyST-NB, so only in the build

        return MarkdownIt("commonmark").enable("table").render(self.data)
