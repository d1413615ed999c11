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
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from entmax_book import record, stats
from entmax_book.translation.config import DataConfig, TranslationConfig
from entmax_book.translation.configs import CONDITIONS, condition
from entmax_book.translation.experiment import PreparedData, prepare_data, train_and_evaluate
from entmax_book.translation.model import weights

__all__ = ["EXPERIMENT", "PLATEAU_GAIN", "RUNS", "SEEDS", "config_for", "data_for", "main", "plateaued"]

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


def plateaued(curve) -> bool:
    """Whether a run's validation curve (``history["eval"]``) has reached its plateau.

    >>> plateaued({"step": [100, 200, 300, 400], "valid_accuracy": [0.5, 0.96, 0.97, 0.972]})
    True
    """
    error = 1.0 - np.asarray(curve["valid_accuracy"], np.float64)
    return stats.plateaued(curve["step"], error, tolerance=PLATEAU_GAIN, relative=False)


def config_for(name: str) -> TranslationConfig:
    """The config of run ``name`` as the code defines it today.

    >>> config_for("alpha_frozen_seed2").train.alpha_learning_rate, config_for("alpha_frozen_seed2").seed
    (0.0, 2)
    """
    if name not in RUNS:
        raise ValueError(f"unknown run {name!r}; the runs are {list(RUNS)}.")
    return condition(*RUNS[name])


@functools.cache
def data_for(config: DataConfig) -> PreparedData:
    """The prepared corpus of ``config`` (a run's ``config.data``), prepared once per process."""
    return prepare_data(config)


def _recorder(name):
    def run(done):
        config = config_for(name)
        trained = train_and_evaluate(config, data_for(config.data), desc=name)
        curve = trained.result["history"]["eval"]
        result = {"condition": RUNS[name][0], **trained.result, "plateau": plateaued(curve)}
        return dataclasses.asdict(config), result, weights(trained.model)

    return run


def main(argv=None) -> dict:
    """The command line: record the runs that are missing (see :func:`entmax_book.record.command`)."""
    runs = {name: _recorder(name) for name in RUNS}
    return record.command(EXPERIMENT, runs, __doc__.split("\n")[0], argv)


if __name__ == "__main__":
    main()
