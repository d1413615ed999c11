"""The shared argument checks: one error type per kind of mistake, the argument named."""

import numpy as np
import pytest

from entmax_book import checks


@pytest.mark.parametrize("value", [1.0, True, np.bool_(True), "3", None])
def test_count_refuses_what_is_not_an_integer_with_a_type_error(value):
    with pytest.raises(TypeError, match="steps must be an integer"):
        checks.count("steps", value)


@pytest.mark.parametrize("value", [-1, 0, 2**63])
def test_count_refuses_an_integer_out_of_range_with_a_value_error(value):
    with pytest.raises(ValueError, match="steps must be an integer"):
        checks.count("steps", value)


def test_count_accepts_numpy_integers_and_returns_a_python_int():
    out = checks.count("steps", np.int64(7))
    assert out == 7 and type(out) is int


def test_counts_refuses_empty_duplicate_and_string():
    with pytest.raises(ValueError, match="must not be empty"):
        checks.counts("seeds", [])
    with pytest.raises(ValueError, match="duplicate"):
        checks.counts("seeds", [1, 1])
    with pytest.raises(TypeError, match="seeds must be an integer or a sequence"):
        checks.counts("seeds", "01")
    with pytest.raises(ValueError, match="each entry of seeds"):
        checks.counts("seeds", [2**70])


@pytest.mark.parametrize("value", [0.0, -1.0, float("inf"), float("nan")])
def test_positive_refuses_zero_negative_and_non_finite(value):
    with pytest.raises(ValueError, match="learning_rate must be finite and > 0"):
        checks.positive("learning_rate", value)


def test_rate_and_boolean():
    assert checks.rate("dropout", 0.1) == 0.1
    with pytest.raises(ValueError, match=r"dropout must be in \[0, 1\)"):
        checks.rate("dropout", 1.0)
    with pytest.raises(TypeError, match="dropout must be a real number"):
        checks.rate("dropout", "0.1")
    with pytest.raises(TypeError, match="balanced must be True or False"):
        checks.boolean("balanced", 1)


def test_normaliser_names():
    assert checks.normaliser_names("variants", ["softmax"]) == ("softmax",)
    with pytest.raises(TypeError, match="got the string"):
        checks.normaliser_names("variants", "softmax")
    with pytest.raises(ValueError, match="unknown"):
        checks.normaliser_names("variants", ["relu"])
    with pytest.raises(ValueError, match="duplicate"):
        checks.normaliser_names("variants", ["softmax", "softmax"])
