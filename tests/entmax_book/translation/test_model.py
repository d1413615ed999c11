"""The translation Transformer: masking, decoding, dropout, its α logits and its checkpoints."""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx
from translation_helpers import small_model

from entmax_book import record
from entmax_book.translation.config import ModelConfig
from entmax_book.translation.model import Transformer, greedy_decode, load_weights, weights

SMALL = ModelConfig(d_model=16, num_heads=2, num_layers=2, d_ff=32)
SRC = jnp.array([[5, 6, 7, 8, 0], [9, 10, 11, 0, 0]])
TGT = jnp.array([[1, 12, 13, 14], [1, 15, 16, 0]])


@nnx.jit
def _forward(model):
    return model(SRC, TGT)


def _logits(model):
    return np.asarray(_forward(model))


@pytest.mark.slow  # builds and runs three Transformers
def test_a_checkpoint_makes_another_model_compute_the_same(tmp_path):
    trained = Transformer(dataclasses.replace(SMALL, normaliser="alpha_entmax"), vocab_size=20, seed=0)
    other = Transformer(dataclasses.replace(SMALL, normaliser="alpha_entmax"), vocab_size=20, seed=1)
    assert not np.allclose(_logits(trained), _logits(other))
    load_weights(other, weights(trained))
    np.testing.assert_array_equal(_logits(other), _logits(trained))
    for kind, alpha in trained.alphas().items():
        np.testing.assert_array_equal(other.alphas()[kind], alpha)
    # Through a record: float16 on disk, float32 again in the model, logits within float16 rounding.
    record.save(tmp_path / "run.json", {}, {}, weights(trained))
    fresh = load_weights(
        Transformer(dataclasses.replace(SMALL, normaliser="alpha_entmax"), vocab_size=20, seed=2),
        record.load_arrays("", "run", tmp_path),
    )
    assert all(np.asarray(v).dtype == np.float32 for v in weights(fresh).values())
    np.testing.assert_allclose(_logits(fresh), _logits(trained), atol=2e-2)


def test_a_checkpoint_of_another_architecture_is_refused_before_anything_changes():
    softmax = Transformer(dataclasses.replace(SMALL, normaliser="softmax"), vocab_size=20, seed=0)
    learned = Transformer(dataclasses.replace(SMALL, normaliser="alpha_entmax"), vocab_size=20, seed=0)
    before = weights(softmax)
    with pytest.raises(ValueError, match="missing.*alpha_logit|unexpected.*alpha_logit"):
        load_weights(softmax, weights(learned))
    wider = weights(Transformer(dataclasses.replace(SMALL, normaliser="softmax"), vocab_size=21, seed=0))
    with pytest.raises(ValueError, match="shape"):
        load_weights(softmax, wider)
    for name, value in weights(softmax).items():
        np.testing.assert_array_equal(value, before[name])


def _random_batch(vocab=30, batch=3, src_len=7, tgt_len=6, seed=0):
    rng = np.random.default_rng(seed)
    src = rng.integers(4, vocab, (batch, src_len))
    src[0, 5:] = 0  # padding
    tgt = rng.integers(4, vocab, (batch, tgt_len))
    return jnp.asarray(src), jnp.asarray(tgt)


@nnx.jit
def _with_weights(model, src, tgt):
    return model(src, tgt, return_weights=True)


@pytest.fixture(scope="module")
def tiny_model():
    # softmax compiles fastest; masking of every normaliser is tested in test_attention.py
    return small_model("softmax")


@pytest.mark.slow
def test_decoder_is_causal_and_padding_is_ignored(tiny_model):
    src, tgt = _random_batch()
    logits, attention = _with_weights(tiny_model, src, tgt)
    changed = tgt.at[:, 4:].set(5)  # future tokens must not change earlier predictions
    np.testing.assert_allclose(
        np.asarray(_with_weights(tiny_model, src, changed)[0][:, :4]), logits[:, :4], atol=1e-5
    )
    longer_src = jnp.pad(src, ((0, 0), (0, 2)))  # more padding changes nothing
    np.testing.assert_allclose(np.asarray(_with_weights(tiny_model, longer_src, tgt)[0]), logits, atol=1e-5)
    assert np.all(np.asarray(attention["encoder_self"])[:, 0, :, :, 5:] == 0)
    assert np.all(np.asarray(attention["context"])[:, 0, :, :, 5:] == 0)
    assert np.all(np.triu(np.asarray(attention["decoder_self"]), k=1) == 0)


def test_greedy_decode_agrees_with_teacher_forcing(tiny_model):
    src, _ = _random_batch()
    bos, eos, max_len = 2, 3, 6
    out = greedy_decode(tiny_model, src, max_len, bos, eos)
    assert out.shape == (3, max_len) and out.dtype == np.int32
    tgt_in = np.concatenate([np.full((3, 1), bos), out[:, :-1]], axis=1)
    argmax = np.asarray(jnp.argmax(_with_weights(tiny_model, src, jnp.asarray(tgt_in))[0], -1))
    for row, pred in zip(out, argmax, strict=True):
        stop = int(np.argmax(row == eos)) + 1 if eos in row else max_len
        np.testing.assert_array_equal(row[:stop], pred[:stop])
        assert np.all(row[stop:] == 0)


@pytest.mark.parametrize(("max_len", "error"), [(0, ValueError), (65, ValueError), (2.0, TypeError)])
def test_greedy_decode_checks_max_len(tiny_model, max_len, error):
    # the positional table has 64 rows: decoding further would read past it
    with pytest.raises(error, match="max_len"):
        greedy_decode(tiny_model, jnp.ones((1, 5), jnp.int32), max_len, 2, 3)


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="vocab_size"):
        Transformer(ModelConfig(), 0)
    with pytest.raises(TypeError, match="ModelConfig"):
        Transformer({"d_model": 16}, 10)
    with pytest.raises(ValueError, match="seed"):
        Transformer(ModelConfig(), 10, seed=-1)
    with pytest.raises(ValueError, match="max_len"):
        small_model("softmax").encode(jnp.ones((1, 70), jnp.int32))


@nnx.jit
def _logits_with_key(model, src, tgt, key):
    return model(src, tgt, True, dropout_key=key)


@pytest.mark.slow
def test_dropout_is_off_without_a_key_and_random_with_one():
    src, tgt = _random_batch()
    rates = {"dropout": 0.3, "attention_dropout": 0.2, "ffn_dropout": 0.4}
    plain, noisy = small_model(num_layers=1), small_model(num_layers=1, **rates)
    reference = np.asarray(_logits_with_key(plain, src, tgt, None)[0])
    # evaluation (no key) is deterministic and ignores the rates
    np.testing.assert_array_equal(np.asarray(_logits_with_key(noisy, src, tgt, None)[0]), reference)
    # rates of 0 ignore the key: a model without dropout trains the same with dropout keys
    np.testing.assert_array_equal(
        np.asarray(_logits_with_key(plain, src, tgt, jax.random.key(0))[0]), reference
    )
    first = np.asarray(_logits_with_key(noisy, src, tgt, jax.random.key(0))[0])
    again = np.asarray(_logits_with_key(noisy, src, tgt, jax.random.key(0))[0])
    other = np.asarray(_logits_with_key(noisy, src, tgt, jax.random.key(1))[0])
    np.testing.assert_array_equal(first, again)
    assert not np.allclose(first, reference, atol=1e-3) and not np.allclose(first, other, atol=1e-3)


@pytest.mark.slow  # three more compilations
def test_each_dropout_acts_on_its_own():
    src, tgt = _random_batch()
    reference = np.asarray(_logits_with_key(small_model(num_layers=1), src, tgt, None)[0])
    # returned weights are those before dropout: rows still sum to 1
    for name, rate in {"dropout": 0.3, "attention_dropout": 0.2, "ffn_dropout": 0.4}.items():
        logits, attention = _logits_with_key(
            small_model(num_layers=1, **{name: rate}), src, tgt, jax.random.key(0)
        )
        assert not np.allclose(np.asarray(logits), reference, atol=1e-3), name
        np.testing.assert_allclose(np.asarray(attention["context"]).sum(-1), 1.0, atol=1e-5)


def test_the_model_alpha_logits_are_found_by_name():
    params = nnx.state(small_model("alpha_entmax", num_layers=1), nnx.Param)
    paths = [path for path, _ in jax.tree_util.tree_leaves_with_path(params)]
    named = [p for p in paths if any(getattr(key, "key", None) == "alpha_logit" for key in p)]
    assert len(named) == 3  # encoder self, decoder self and context attention of the one layer
