"""Chapter 5's recorded runs, and the command that records them.

Training the chapter's fifteen Transformers, over seeds and conditions, takes about 90 minutes
of CPU time (one run per process uses one core: two processes with different ``--only`` lists
fill a two-core machine): more than a chapter can spend. The runs are recorded once::

    python -m entmax_book.translation.runs            # records the runs not recorded yet
    python -m entmax_book.translation.runs --only softmax_seed0 entmax15_seed0

into ``entmax_book/translation/records/<run>.json`` with the trained weights beside it
(``<run>.npz``, float16; see :mod:`entmax_book.record`), and Chapter 5 loads them and computes
every analysis from the weights. Every run is made by the experiment's pipeline
(:func:`~entmax_book.translation.experiment.train_and_evaluate`) with the paper's recipe at a
small size (:data:`~entmax_book.translation.configs.RECIPE`) and differs from the others in one
thing, its condition (:data:`~entmax_book.translation.configs.CONDITIONS`), for each of the
seeds :data:`SEEDS` (initial weights, batch order, dropout); the corpus is the same for all.
The validation token accuracy decides whether a run reached its plateau (:func:`plateaued`; the
record keeps the answer, and Chapter 5 reports it).

The **next record** (:data:`NEXT_RUNS`) is made beside it, over several sittings: the harder
task (:data:`~entmax_book.translation.configs.HARDER`: corpus version 3, 1,500 training pairs),
ten seeds, and the four conditions that the family of :mod:`~entmax_book.translation.claims`
compares, all fixed before its first run. The
same command records its runs that are missing, seed by seed (each sitting adds whole seeds, and
every claim is paired within a seed); Chapter 5 moves to it once it is complete.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from entmax_book import record, stats
from entmax_book.translation.config import DataConfig, TranslationConfig
from entmax_book.translation.configs import CONDITIONS, HARDER, condition
from entmax_book.translation.experiment import PreparedData, prepare_data, train_and_evaluate
from entmax_book.translation.model import weights

__all__ = [
    "EXPERIMENT",
    "NEXT_CONDITIONS",
    "NEXT_PLATEAU_LOSS",
    "NEXT_RUNS",
    "NEXT_SEEDS",
    "PLATEAU_GAIN",
    "RUNS",
    "SEEDS",
    "config_for",
    "data_for",
    "main",
    "plateaued",
]

#: The records' folder: ``entmax_book/translation/records``.
EXPERIMENT = "translation"

SEEDS = (0, 1, 2)

#: A run has reached its plateau when its validation token accuracy rose by less than this
#: (absolute) over the last quarter of the run: its translations have stopped changing. (The
#: validation loss keeps falling slowly for longer, as the model grows more confident in
#: predictions it already gets right; the chapter shows both curves.)
PLATEAU_GAIN = 0.005

#: run name → (condition, seed), seeds inner so that a sitting finishes whole conditions.
RUNS = {f"{name}_seed{seed}": (name, seed) for name in CONDITIONS for seed in SEEDS}

#: The next record's seeds and conditions (the 10×-rate condition has given its answer).
NEXT_SEEDS = tuple(range(10))
NEXT_CONDITIONS = ("softmax", "entmax15", "alpha_entmax", "alpha_frozen")

#: The next record's runs, "hard_<condition>_seed<k>" → (condition, seed), seeds outer.
NEXT_RUNS = {f"hard_{name}_seed{seed}": (name, seed) for seed in NEXT_SEEDS for name in NEXT_CONDITIONS}

#: The next record's plateau, chosen before it: the validation loss fell by less than 2 %
#: (relative) over the last quarter of the run. On the current record the loss still fell by
#: several per cent there while the accuracy had stopped moving; in the pilot of the harder task
#: (softmax, seed 0) by 4.9 %, so most runs are expected short of it, and Chapter 5 reports how
#: far each one is.
NEXT_PLATEAU_LOSS = 0.02


def plateaued(curve, next_record: bool = False) -> bool:
    """Whether a run's validation curve (``history["eval"]``) has reached its plateau.

    Args:
      curve: {"step", "valid_accuracy", "valid_loss"}.
      next_record: the next record's criterion (:data:`NEXT_PLATEAU_LOSS`, on the loss) instead
        of the current record's (:data:`PLATEAU_GAIN`, on the accuracy).

    >>> curve = {"step": [100, 200, 300, 400], "valid_accuracy": [0.5, 0.96, 0.97, 0.972],
    ...          "valid_loss": [3.0, 1.2, 1.1, 1.05]}
    >>> plateaued(curve), plateaued(curve, next_record=True)
    (True, False)
    """
    if next_record:
        return stats.plateaued(curve["step"], curve["valid_loss"], tolerance=NEXT_PLATEAU_LOSS)
    error = 1.0 - np.asarray(curve["valid_accuracy"], np.float64)
    return stats.plateaued(curve["step"], error, tolerance=PLATEAU_GAIN, relative=False)


def config_for(name: str) -> TranslationConfig:
    """The config of run ``name`` as the code defines it today.

    >>> config_for("alpha_frozen_seed2").train.alpha_learning_rate, config_for("alpha_frozen_seed2").seed
    (0.0, 2)
    >>> config_for("hard_softmax_seed7").data.corpus_version, config_for("hard_softmax_seed7").seed
    (3, 7)
    """
    if name in RUNS:
        return condition(*RUNS[name])
    if name in NEXT_RUNS:
        return condition(*NEXT_RUNS[name], base=HARDER)
    raise ValueError(f"unknown run {name!r}; the runs are {list(RUNS)} and {list(NEXT_RUNS)}.")


@functools.cache
def data_for(config: DataConfig) -> PreparedData:
    """The prepared corpus of ``config`` (a run's ``config.data``), prepared once per process."""
    return prepare_data(config)


def _recorder(name):
    def run(done):
        config = config_for(name)
        trained = train_and_evaluate(config, data_for(config.data), desc=name)
        curve = trained.result["history"]["eval"]
        is_next = name in NEXT_RUNS
        label = (NEXT_RUNS if is_next else RUNS)[name][0]
        result = {"condition": label, **trained.result, "plateau": plateaued(curve, next_record=is_next)}
        return dataclasses.asdict(config), result, weights(trained.model)

    return run


def main(argv=None) -> dict:
    """The command line: record the runs that are missing (see :func:`entmax_book.record.command`)."""
    runs = {name: _recorder(name) for name in (*RUNS, *NEXT_RUNS)}
    return record.command(EXPERIMENT, runs, __doc__.split("\n")[0], argv)


if __name__ == "__main__":
    main()
