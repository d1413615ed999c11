"""Chapter 5's head ablations of every recorded run, recorded once, and the command that records them.

Switching off one head at a time (:func:`~entmax_book.translation.analysis.head_ablations`) in
each of the forty recorded models costs about eight minutes of CPU time: more than the chapter
can spend, so it is recorded once from the recorded weights::

    python -m entmax_book.translation.ablations

into ``entmax_book/translation/records/ablations.json`` (with its provenance), and Chapter 5
loads it with :func:`load`, recomputes one model's ablations live, and checks that they agree.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

from entmax_book import record
from entmax_book.translation.configs import HARDER
from entmax_book.translation.model import Transformer, load_weights
from entmax_book.translation.runs import EXPERIMENT, RUNS, config_for, data_for

__all__ = ["NAME", "ablate_run", "load", "main"]

#: The record's name in the translation records' folder.
NAME = "ablations"


def ablate_run(name: str, folder=None) -> dict:
    """The head ablations of recorded run ``name``, on the test split of its corpus.

    Args:
      name: a run of :data:`~entmax_book.translation.runs.RUNS`.
      folder: where the run's record is (default: the shipped records).

    Returns:
      :func:`~entmax_book.translation.analysis.head_ablations` of the run's trained model.
    """
    from entmax_book.translation.analysis import head_ablations  # deferred: jax

    config = config_for(name)
    data = data_for(config.data)
    model = Transformer(config.model, data.tokenizer.vocab_size, seed=config.seed)
    load_weights(model, record.load_arrays(EXPERIMENT, name, folder))
    return head_ablations(model, data.test)


def load(folder=None) -> dict:
    """The recorded ablations, {run name: ``head_ablations`` of the run}."""
    return record.load(EXPERIMENT, NAME, folder)["result"]


def main(argv=None) -> dict:
    """The command line: ablate every recorded run and record the result (``--out`` another folder)."""
    parser = argparse.ArgumentParser(
        prog="python -m entmax_book.translation.ablations", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--out", default=str(record.records_folder(EXPERIMENT)), help="folder of the records")
    args = parser.parse_args(argv)
    wall, cpu = time.perf_counter(), time.process_time()
    result = {name: ablate_run(name) for name in RUNS}
    config = {"runs": list(RUNS), "split": "test", "data": dataclasses.asdict(HARDER.data)}
    provenance = record.provenance(config, time.perf_counter() - wall, time.process_time() - cpu)
    record.save(f"{args.out}/{NAME}.json", result, provenance)
    return result


if __name__ == "__main__":
    main()
