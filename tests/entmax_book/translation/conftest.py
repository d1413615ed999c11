"""Fixtures shared by the translation tests: one generated corpus and its tokenizer."""

import pytest

from entmax_book.translation.corpus import generate_corpus
from entmax_book.translation.tokenizer import train_tokenizer


@pytest.fixture(scope="session")
def examples():
    """400 generated sentence pairs (seed 1)."""
    return generate_corpus(400, seed=1)


@pytest.fixture(scope="session")
def texts(examples):
    """Both sides of every pair, the tokenizer's training text."""
    return [e.src for e in examples] + [e.tgt for e in examples]


@pytest.fixture(scope="session")
def tokenizer(texts):
    """A 300-piece joint BPE tokenizer of ``texts``."""
    return train_tokenizer(texts, vocab_size=300)
