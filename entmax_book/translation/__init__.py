"""English→German translation with adaptively sparse attention: the book's Chapter 5 experiment.

The house, from the bottom up (each module imports only those above it in this list):

- :mod:`~entmax_book.translation.tokenizer`: the joint BPE tokenizer;
- :mod:`~entmax_book.translation.config`: the settings, one config per consumer (data, model,
  training, analysis) composed in :class:`~entmax_book.translation.config.TranslationConfig`;
  :mod:`~entmax_book.translation.configs`: the named configurations (the paper's recipe, the
  paper's scale, the record's conditions);
- :mod:`~entmax_book.translation.data`: the generic data path (sentence pairs → a padded
  :class:`~entmax_book.translation.data.Split`, minibatches), for any corpus;
- :mod:`~entmax_book.translation.corpus`: the generated corpus (lexicon, grammar, generator
  and its tagger) and TSV files;
- :mod:`~entmax_book.translation.model`: the Transformer;
- :mod:`~entmax_book.translation.train`: the loss, the optimiser and the training loop;
- :mod:`~entmax_book.translation.heads`, :mod:`~entmax_book.translation.analysis`: the paper's
  head scores and the analyses of a trained model;
- :mod:`~entmax_book.translation.scoring`: BLEU and chrF;
- :mod:`~entmax_book.translation.experiment`: the pipeline,
  :func:`~entmax_book.translation.experiment.train_and_evaluate`;
- :mod:`~entmax_book.translation.runs`: Chapter 5's recorded runs (``records/``) and the command
  that records them.
- :mod:`~entmax_book.translation.claims`: the pre-registered family of claims for the next
  record;
- :mod:`~entmax_book.translation.measures`, :mod:`~entmax_book.translation.report`: the per-seed
  measures of the recorded runs, and the tables, the family of claims and the provenance that
  Chapter 5 shows of them.
"""

from entmax_book.translation.config import TranslationConfig
from entmax_book.translation.experiment import Run, prepare_data, train_and_evaluate

__all__ = ["Run", "TranslationConfig", "prepare_data", "train_and_evaluate"]
