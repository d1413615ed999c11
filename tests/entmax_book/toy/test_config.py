"""Tests for entmax_book.toy.config: every setting is checked when the config is made."""

import pytest

from entmax_book.checks import SEED_MAX
from entmax_book.toy.config import ToyConfig


def test_bad_task_settings_raise_when_the_config_is_made():
    with pytest.raises(ValueError, match="dim"):
        ToyConfig(dim=4, n_classes=4)
    with pytest.raises(ValueError, match="n_informative"):
        ToyConfig(n_informative=0)
    with pytest.raises(ValueError, match="noise_std"):
        ToyConfig(noise_std=float("nan"))
    with pytest.raises(ValueError, match="directions"):
        ToyConfig(directions="diagonal")


@pytest.mark.parametrize("seed", [2**70, 2**63, SEED_MAX + 1])
def test_a_seed_beyond_what_jax_takes_is_refused_when_the_config_is_made(seed):
    """A seed of 2**70 used to pass and fail in training with an OverflowError; one of 2**32
    would silently draw the weights of seed 0 (``jax.random.key`` keeps 32 bits)."""
    with pytest.raises(
        ValueError, match=rf"each entry of seeds must be an integer in \[0, {SEED_MAX}\], got {seed}"
    ):
        ToyConfig(seeds=(0, seed))
    assert ToyConfig(seeds=(SEED_MAX,)).seeds == (SEED_MAX,)


def test_settings_of_the_wrong_type_raise_type_errors():
    for field, value in (("seeds", (1.0,)), ("seeds", "01"), ("steps", True), ("variants", "softmax")):
        with pytest.raises(TypeError, match=field):
            ToyConfig(**{field: value})
