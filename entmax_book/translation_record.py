"""Chapter 5's recorded runs, and the command that records them.

Training the chapter's fifteen Transformers, over seeds and conditions, takes about 90 minutes
of CPU time (one run per process uses one core: two processes with different ``--only`` lists
fill a two-core machine): more than a chapter can spend. The runs are recorded once::

    python -m entmax_book.translation_record            # records the runs not recorded yet
    python -m entmax_book.translation_record --only softmax_seed0 entmax15_seed0

into ``entmax_book/records/translation/<run>.json`` with the trained weights beside it
(``<run>.npz``, float16; see :mod:`entmax_book.record`), and Chapter 5 loads them and computes
every analysis from the weights. Every run uses :data:`RECIPE`, the paper's training recipe at
a small size, and differs from the others in one thing:

* ``softmax``, ``entmax15``: a fixed attention map in every head;
* ``alpha_entmax``: every head learns its own α, the α logits in the same optimiser as every
  other weight (as in the paper's code);
* ``alpha_frozen``: the same model with every α frozen at its random initial draw
  (``alpha_learning_rate=0``), the control that separates *learning* α from merely having a
  different α in every head;
* ``alpha_room``: learned α with a ten times higher learning rate for the α logits, to see where
  α goes when it can move farther.

Each condition runs with the seeds :data:`SEEDS` (initial weights, batch order, dropout); the
corpus is the same for all. A run is trained for ``RECIPE.steps`` steps; its validation loss
and token accuracy are measured every :data:`VALID_EVERY` steps, and the accuracy decides
whether it reached its plateau (:func:`plateaued`; the record keeps the answer, and Chapter 5
reports it).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from entmax_book import record, stats
from entmax_book.translation.config import TranslationConfig
from entmax_book.translation.experiment import analyse, prepare_data, split_scores, translate
from entmax_book.translation.model import Transformer, weights
from entmax_book.translation.scoring import corpus_bleu, corpus_chrf
from entmax_book.translation.train import train

__all__ = [
    "CONDITIONS",
    "EXPERIMENT",
    "RECIPE",
    "RUNS",
    "SEEDS",
    "PLATEAU_GAIN",
    "VALID_EVERY",
    "config_for",
    "data_for",
    "evaluate",
    "main",
    "plateaued",
]

#: The records' folder under :data:`entmax_book.record.RECORDS`.
EXPERIMENT = "translation"

#: The paper's recipe (Correia et al., 2019, §4; Vaswani et al., 2017) at a size one CPU core
#: trains in a few minutes: dropout 0.1, label smoothing 0.1, linear warm-up then
#: inverse-square-root decay, Adam (β₂ = 0.98). Eight heads in each of 2 + 2 layers give 16
#: heads per attention type in a model and 48 over three seeds (the paper's models have 48
#: encoder heads each): enough to see whether the learned α fall into groups. 7,000 steps
#: (about 37 passes over the data) are what fifteen runs can afford in about 90 minutes of
#: CPU time; the validation accuracy then rises by about half a point over the last quarter of
#: a run, and the validation loss is still falling.
RECIPE = TranslationConfig(
    n_valid=500,
    n_test=500,
    num_heads=8,
    num_layers=2,
    dropout=0.1,
    label_smoothing=0.1,
    schedule="inverse_sqrt",
    learning_rate=6e-3,
    warmup_steps=300,
    steps=7000,
    record_every=50,
    eval_every=None,
)

#: condition → the fields of :data:`RECIPE` it changes.
CONDITIONS = {
    "softmax": {"normalisers": ("softmax",)},
    "entmax15": {"normalisers": ("entmax15",)},
    "alpha_entmax": {"normalisers": ("alpha_entmax",)},
    "alpha_frozen": {"normalisers": ("alpha_entmax",), "alpha_learning_rate": 0.0},
    "alpha_room": {"normalisers": ("alpha_entmax",), "alpha_learning_rate": 10 * RECIPE.learning_rate},
}

SEEDS = (0, 1, 2)

#: The validation loss is measured every this many steps.
VALID_EVERY = 100

#: A run has reached its plateau when its validation token accuracy rose by less than this
#: (absolute) over the last quarter of the run: its translations have stopped changing. (The
#: validation loss keeps falling slowly for longer, as the model grows more confident in
#: predictions it already gets right; the chapter shows both curves.)
PLATEAU_GAIN = 0.005


def plateaued(curve) -> bool:
    """Whether a run's validation curve (``history["eval"]``) has reached its plateau.

    >>> plateaued({"step": [100, 200, 300, 400], "valid_accuracy": [0.5, 0.96, 0.97, 0.972]})
    True
    """
    error = 1.0 - np.asarray(curve["valid_accuracy"], np.float64)
    return stats.plateaued(curve["step"], error, tolerance=PLATEAU_GAIN, relative=False)


#: run name → (condition, seed), seeds inner so that a sitting finishes whole conditions.
RUNS = {f"{condition}_seed{seed}": (condition, seed) for condition in CONDITIONS for seed in SEEDS}


def config_for(name: str) -> TranslationConfig:
    """The config of run ``name`` as the code defines it today.

    >>> config_for("alpha_frozen_seed2").alpha_learning_rate, config_for("alpha_frozen_seed2").seed
    (0.0, 2)
    """
    if name not in RUNS:
        raise ValueError(f"unknown run {name!r}; the runs are {list(RUNS)}.")
    condition, seed = RUNS[name]
    return dataclasses.replace(RECIPE, seed=seed, **CONDITIONS[condition])


@functools.cache
def _data(config_fields):
    return prepare_data(TranslationConfig(**dict(config_fields)))


def data_for(config: TranslationConfig) -> dict:
    """The prepared corpus of ``config`` (prepared once per process and shared by every run)."""
    corpus = ("n_train", "n_valid", "n_test", "corpus_seed", "vocab_size", "max_src_len", "max_tgt_len")
    return _data(tuple((name, getattr(config, name)) for name in corpus))


def evaluate(model, data) -> dict:
    """A trained model's test scores: teacher-forced loss and accuracies, greedy BLEU and chrF.

    Args:
      model: a :class:`~entmax_book.translation.model.Transformer`.
      data: its prepared corpus (:func:`data_for`).

    Returns:
      {"loss", "accuracy" (see ``experiment.construction_accuracy``), "bleu", "chrf",
      "exact_match"}.
    """
    arrays, examples = data["arrays"]["test"], data["examples"]["test"]
    hyps = translate(model, data["tokenizer"], arrays, model.config.max_tgt_len)
    refs = [e.tgt for e in examples]
    analysis = analyse(model, arrays)[0]
    return {
        "loss": analysis["test_loss"],
        "accuracy": analysis["accuracy"],
        "bleu": round(corpus_bleu(hyps, refs), 2),
        "chrf": round(corpus_chrf(hyps, refs), 2),
        "exact_match": round(float(np.mean([h == r for h, r in zip(hyps, refs, strict=True)])), 4),
    }


def _recorder(name):
    def run(done):
        config = config_for(name)
        data = data_for(config)
        valid = data["arrays"]["valid"]
        model = Transformer(config, config.normalisers[0], data["tokenizer"].vocab_size)
        history = train(
            model,
            data["arrays"]["train"],
            desc=name,
            evaluate=lambda m: {f"valid_{k}": v for k, v in split_scores(m, valid).items()},
            eval_steps=range(VALID_EVERY, config.steps + 1, VALID_EVERY),
        )
        curve = history["eval"]
        result = {
            "condition": RUNS[name][0],
            "history": history,
            "plateau": plateaued(curve),
            "test": evaluate(model, data),
        }
        return dataclasses.asdict(config), result, weights(model)

    return run


def main(argv=None) -> dict:
    """The command line: record the runs that are missing (see :func:`entmax_book.record.command`)."""
    runs = {name: _recorder(name) for name in RUNS}
    return record.command(EXPERIMENT, runs, __doc__.split("\n")[0], argv)


if __name__ == "__main__":
    main()
