"""English→German translation with adaptively sparse attention: the book's Chapter 5 experiment.

Submodules: :mod:`~entmax_book.translation.corpus` (generated sentence pairs with gold
alignments, built from :mod:`~entmax_book.translation.lexicon` and
:mod:`~entmax_book.translation.grammar`; TSV files through :mod:`~entmax_book.translation.tsv`),
:mod:`~entmax_book.translation.tokenizer` (joint BPE), :mod:`~entmax_book.translation.data`
(padded arrays and minibatches), :mod:`~entmax_book.translation.model` (the Transformer),
:mod:`~entmax_book.translation.train` (the training loop),
:mod:`~entmax_book.translation.scoring` (BLEU, chrF) and
:mod:`~entmax_book.translation.experiment` (:func:`run_experiment`).
"""

from entmax_book.translation import (
    corpus,
    data,
    experiment,
    grammar,
    lexicon,
    model,
    scoring,
    tokenizer,
    train,
    tsv,
)
from entmax_book.translation.experiment import run_experiment

__all__ = [
    "corpus",
    "data",
    "experiment",
    "grammar",
    "lexicon",
    "model",
    "run_experiment",
    "scoring",
    "tokenizer",
    "train",
    "tsv",
]
