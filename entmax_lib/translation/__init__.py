"""English→German translation with adaptively sparse attention: the book's Chapter 5 experiment.

Submodules: :mod:`~entmax_lib.translation.corpus` (generated sentence pairs with gold
alignments, built from :mod:`~entmax_lib.translation.lexicon` and
:mod:`~entmax_lib.translation.grammar`; TSV files through :mod:`~entmax_lib.translation.tsv`),
:mod:`~entmax_lib.translation.tokenizer` (joint BPE), :mod:`~entmax_lib.translation.data`
(padded arrays and minibatches), :mod:`~entmax_lib.translation.model` (the Transformer),
:mod:`~entmax_lib.translation.train` (the training loop),
:mod:`~entmax_lib.translation.scoring` (BLEU, chrF) and
:mod:`~entmax_lib.translation.experiment` (:func:`run_experiment`).
"""

from entmax_lib.translation import (
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
from entmax_lib.translation.experiment import run_experiment

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
