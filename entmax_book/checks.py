"""Argument checks shared by the book's experiments: one rule and one error type per mistake.

A value of the wrong *type* (a float or a bool where an integer belongs, a string where a list
belongs) raises ``TypeError``; a value of the right type outside its range raises
``ValueError``. Every message names the argument and the value it got, so that a bad setting
fails when a config is made, before any data are prepared or any model is trained.

>>> count("steps", 3)
3
>>> count("steps", True)
Traceback (most recent call last):
...
TypeError: steps must be an integer, got True.
>>> count("steps", 0)
Traceback (most recent call last):
...
ValueError: steps must be an integer >= 1, got 0.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from entmax_lib.attention import NORMALISERS

__all__ = [
    "INT64_MAX",
    "SEED_MAX",
    "boolean",
    "count",
    "counts",
    "is_int",
    "is_real",
    "normaliser_names",
    "optional_count",
    "positive",
    "rate",
]

#: The largest count the experiments accept: NumPy and JAX take 64-bit integers.
INT64_MAX = 2**63 - 1

#: The largest seed: ``jax.random.key`` keeps only 32 bits of a seed unless 64-bit mode is on, so
#: a larger seed would silently draw the weights of a smaller one.
SEED_MAX = 2**32 - 1


def is_int(value) -> bool:
    """Whether ``value`` is an integer (NumPy integers included), and not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def is_real(value) -> bool:
    """Whether ``value`` is a real number (integers included), and not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def count(name: str, value, minimum: int = 1, maximum: int = INT64_MAX) -> int:
    """``value`` as an int in [minimum, maximum], else TypeError/ValueError naming ``name``."""
    if not is_int(value):
        raise TypeError(f"{name} must be an integer, got {value!r}.")
    if not minimum <= value <= maximum:
        below = maximum == INT64_MAX and value < minimum  # the usual mistake: say only the bound it broke
        bound = f">= {minimum}" if below else f"in [{minimum}, {maximum}]"
        raise ValueError(f"{name} must be an integer {bound}, got {value!r}.")
    return int(value)


def optional_count(name: str, value, minimum: int = 1, maximum: int = INT64_MAX) -> int | None:
    """None, or :func:`count` (name, value, minimum, maximum)."""
    return None if value is None else count(name, value, minimum, maximum)


def counts(name: str, values, minimum: int = 0) -> tuple[int, ...]:
    """A non-empty tuple of distinct integers >= minimum; a bare integer is one entry.

    >>> counts("seeds", 3), counts("seeds", [0, 1])
    ((3,), (0, 1))
    """
    if is_int(values):
        values = [values]
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name} must be an integer or a sequence of integers, got {values!r}.")
    out = tuple(count(f"each entry of {name}", v, minimum) for v in values)
    if not out:
        raise ValueError(f"{name} must not be empty.")
    if len(set(out)) != len(out):
        raise ValueError(f"{name} has duplicate entries: {list(out)}.")
    return out


def positive(name: str, value, allow_zero: bool = False) -> float:
    """A finite real number > 0 (>= 0 with ``allow_zero``), as a float."""
    if not is_real(value):
        raise TypeError(f"{name} must be a real number, got {value!r}.")
    value = float(value)
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {bound}, got {value!r}.")
    return value


def rate(name: str, value) -> float:
    """A probability-like rate in [0, 1) (dropout, label smoothing), as a float."""
    if not is_real(value):
        raise TypeError(f"{name} must be a real number, got {value!r}.")
    if not 0.0 <= value < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {value!r}.")
    return float(value)


def boolean(name: str, value) -> bool:
    """True or False (NumPy's bool included); 0 and 1 are refused."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}.")
    return bool(value)


def normaliser_names(name: str, values) -> tuple[str, ...]:
    """A non-empty tuple of distinct names of :data:`entmax_lib.attention.NORMALISERS`.

    >>> normaliser_names("variants", ["softmax", "alpha_entmax"])
    ('softmax', 'alpha_entmax')
    """
    if isinstance(values, str):
        raise TypeError(
            f"{name} must be a list of normaliser names such as [{values!r}], got the string {values!r}."
        )
    if not isinstance(values, (list, tuple)):
        raise TypeError(f"{name} must be a list of normaliser names, got {values!r}.")
    if not values:
        raise ValueError(f"{name} must not be empty.")
    unknown = [v for v in values if v not in NORMALISERS]
    if unknown:
        raise ValueError(f"{name}: unknown {unknown}; choose from {list(NORMALISERS)}.")
    if len(set(values)) != len(values):
        raise ValueError(f"{name} has duplicate entries: {list(values)}.")
    return tuple(values)
