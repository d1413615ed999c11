"""English→German translation with adaptively sparse attention: the book's Chapter 5 experiment.

Submodules: :mod:`~entmax_lib.translation.corpus` (generated sentence pairs with gold
alignments), :mod:`~entmax_lib.translation.tokenizer` (joint BPE),
:mod:`~entmax_lib.translation.data` (padded arrays), :mod:`~entmax_lib.translation.model`
(the Transformer), :mod:`~entmax_lib.translation.train` (the training loop) and
:mod:`~entmax_lib.translation.experiment` (:func:`run_experiment`).
"""

from entmax_lib.translation import corpus, data, experiment, model, tokenizer, train
from entmax_lib.translation.experiment import run_experiment

__all__ = ["corpus", "data", "experiment", "model", "run_experiment", "tokenizer", "train"]
