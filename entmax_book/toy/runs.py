"""Chapter 4's recorded runs, and the command that records them.

Ten seeds of every variant at every length, in the demo's settings and in the stress setting,
take about 45 minutes of CPU time (28 minutes on two cores): more than a chapter can spend.
They are recorded once::

    python -m entmax_book.toy.runs            # records the runs not recorded yet
    python -m entmax_book.toy.runs --force    # records them all again

into ``entmax_book/toy/records/<run>.json`` (see :mod:`entmax_book.record`), and Chapter 4
loads them. Each run is :func:`entmax_book.toy.experiment.train_and_evaluate` of one config of
:data:`entmax_book.toy.configs.RUNS` (the demo, the stress setting, one condition changed at
a time). A run whose config is read from an earlier record (:data:`~entmax_book.toy.configs.NEEDS`)
is refused before any training when that record is neither there nor recorded in the same
command.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from entmax_book import record
from entmax_book.toy import configs, experiment

__all__ = ["EXPERIMENT", "main"]

#: The experiment's name: its records are in :func:`entmax_book.record.records_folder` (EXPERIMENT).
EXPERIMENT = "toy"


def _recorder(name):
    def run(done):
        config = configs.config_for(name, done)
        result = experiment.train_and_evaluate(config)
        return result["config"], result

    return run


def _check_needs(argv):
    """Refuse, before any training, a run whose needed record will not be there when it runs."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--out", default=str(record.records_folder(EXPERIMENT)))
    parser.add_argument("--only", nargs="+")
    args, _ = parser.parse_known_args(argv)
    wanted = [name for name in configs.RUNS if args.only is None or name in args.only]
    for name in wanted:
        for need in configs.NEEDS.get(name, ()):
            if need not in wanted and not (Path(args.out) / f"{need}.json").is_file():
                raise ValueError(
                    f"run {name!r} reads its config from the record of {need!r}, which is not in "
                    f"{args.out}: record {need!r} first, or add it to --only."
                )


def main(argv=None) -> dict:
    """The command line: record the runs that are missing (see :func:`entmax_book.record.command`).

    Args:
      argv: the arguments (default: ``sys.argv[1:]``): ``--out FOLDER``, ``--only NAME …``,
        ``--force``.

    Returns:
      name → record, for every run recorded when the command ends.

    Raises:
      ValueError: before any training, a run of ``--only`` needs a record that is not there.
    """
    _check_needs(argv)
    runs = {name: _recorder(name) for name in configs.RUNS}
    return record.command(EXPERIMENT, runs, __doc__.split("\n")[0], argv)


if __name__ == "__main__":
    main()
