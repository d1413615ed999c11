"""Small configs, models and splits shared by the translation tests."""

import numpy as np

from entmax_book.translation.config import DataConfig, ModelConfig, TrainConfig, TranslationConfig
from entmax_book.translation.data import Example, Split
from entmax_book.translation.model import Transformer

#: A run small enough for a unit test: 160 training pairs, one layer of two heads, 40 steps.
TINY = TranslationConfig(
    data=DataConfig(n_train=160, n_valid=8, n_test=48, vocab_size=160),
    model=ModelConfig(d_model=16, num_heads=2, num_layers=1, d_ff=32),
    train=TrainConfig(
        steps=40, batch_size=16, learning_rate=1e-2, warmup_steps=5, record_every=10, eval_every=20
    ),
)

#: The small model of the unit tests, with room for 64 positions.
SMALL = ModelConfig(d_model=16, num_heads=2, num_layers=2, d_ff=32, max_len=64)


def small_model(normaliser="softmax", vocab=30, **settings):
    """A small model (SMALL with ``settings``) of ``normaliser``, seed 1."""
    return Transformer(ModelConfig(**{**SMALL.__dict__, "normaliser": normaliser, **settings}), vocab, seed=1)


def random_split(n=16, length=6, vocab=30, seed=0):
    """A split of random ids (no padding), enough for a training loop."""
    rng = np.random.default_rng(seed)
    ids = {k: rng.integers(4, vocab, (n, length)).astype(np.int32) for k in ("src", "tgt_in", "tgt_out")}
    words = np.tile(np.arange(length, dtype=np.int32), (n, 1))
    examples = tuple(Example("a", "b") for _ in range(n))
    return Split(
        examples, **ids, src_words=words, tgt_words=words, align=np.zeros((n, length, length), np.float32)
    )
