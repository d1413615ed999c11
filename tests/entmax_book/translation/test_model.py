"""Tests for the checkpoint functions of entmax_book.translation.model (weights / load_weights)."""

import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from entmax_book import record
from entmax_book.translation.config import TranslationConfig
from entmax_book.translation.model import Transformer, load_weights, weights

SMALL = TranslationConfig(d_model=16, num_heads=2, num_layers=2, d_ff=32)
SRC = jnp.array([[5, 6, 7, 8, 0], [9, 10, 11, 0, 0]])
TGT = jnp.array([[1, 12, 13, 14], [1, 15, 16, 0]])


@nnx.jit
def _forward(model):
    return model(SRC, TGT)


def _logits(model):
    return np.asarray(_forward(model))


@pytest.mark.slow  # builds and runs three Transformers
def test_a_checkpoint_makes_another_model_compute_the_same(tmp_path):
    trained = Transformer(SMALL, "alpha_entmax", vocab_size=20, seed=0)
    other = Transformer(SMALL, "alpha_entmax", vocab_size=20, seed=1)
    assert not np.allclose(_logits(trained), _logits(other))
    load_weights(other, weights(trained))
    np.testing.assert_array_equal(_logits(other), _logits(trained))
    for kind, alpha in trained.alphas().items():
        np.testing.assert_array_equal(other.alphas()[kind], alpha)
    # Through a record: float16 on disk, float32 again in the model, logits within float16 rounding.
    record.save(tmp_path / "run.json", {}, {}, weights(trained))
    fresh = load_weights(
        Transformer(SMALL, "alpha_entmax", vocab_size=20, seed=2), record.load_arrays("", "run", tmp_path)
    )
    assert all(np.asarray(v).dtype == np.float32 for v in weights(fresh).values())
    np.testing.assert_allclose(_logits(fresh), _logits(trained), atol=2e-2)


def test_a_checkpoint_of_another_architecture_is_refused_before_anything_changes():
    softmax = Transformer(SMALL, "softmax", vocab_size=20, seed=0)
    learned = Transformer(SMALL, "alpha_entmax", vocab_size=20, seed=0)
    before = weights(softmax)
    with pytest.raises(ValueError, match="missing.*alpha_logit|unexpected.*alpha_logit"):
        load_weights(softmax, weights(learned))
    wider = weights(Transformer(SMALL, "softmax", vocab_size=21, seed=0))
    with pytest.raises(ValueError, match="shape"):
        load_weights(softmax, wider)
    for name, value in weights(softmax).items():
        np.testing.assert_array_equal(value, before[name])
