"""Chapter 4's recorded runs, and the command that records them.

Ten seeds of every variant at every length, in the demo's settings and in the stress setting,
take about 45 minutes of CPU time (28 minutes on two cores): more than a chapter can spend.
They are recorded once::

    python -m entmax_book.toy_record            # records the runs not recorded yet
    python -m entmax_book.toy_record --force    # records them all again

into ``entmax_book/records/toy/<run>.json`` (see :mod:`entmax_book.record`), and Chapter 4
loads them. The runs, one condition changed at a time:

* ``demo``: the demo (:data:`entmax_book.toy.ORIGINAL`) with ten seeds instead of three;
* ``demo_exact_gradient``: the same, with the library's exact derivatives
  (``gradient="closed_form"``) instead of autodiff through the bisection;
* ``stress``: the stress setting (:class:`entmax_book.toy.ToyConfig` defaults);
* ``stress_exact_gradient``: the same, with the library's exact derivatives;
* ``stress_query_x3``: the stress setting at L = 512 with a three times larger initial query;
* ``stress_fixed_scale``: the stress setting with the score scale fixed at the scale softmax
  chose by itself at L = 8 in ``stress`` (mean over seeds, to 3 decimals).
"""

from __future__ import annotations

import dataclasses

from entmax_book import record, toy

__all__ = ["EXPERIMENT", "RUNS", "config_for", "main"]

#: The records' folder under :data:`entmax_book.record.RECORDS`.
EXPERIMENT = "toy"

DEMO = dataclasses.replace(toy.ORIGINAL, seeds=tuple(range(10)))
STRESS = toy.ToyConfig()


def _fixed_scale(done):
    softmax = done["stress"]["result"]["softmax"]
    scale = round(softmax["distractor_score_std"][0], 3)  # κσ at the shortest L, σ = 1
    return dataclasses.replace(STRESS, variants=("softmax", "alpha_entmax"), score_norm=scale)


#: name → function of the records made so far → :class:`~entmax_book.toy.ToyConfig`.
RUNS = {
    "demo": lambda done: DEMO,
    "demo_exact_gradient": lambda done: dataclasses.replace(DEMO, gradient="closed_form"),
    "stress": lambda done: STRESS,
    "stress_exact_gradient": lambda done: dataclasses.replace(STRESS, gradient="closed_form"),
    "stress_query_x3": lambda done: dataclasses.replace(
        STRESS, lengths=(512,), variants=("softmax", "alpha_entmax"), query_scale=3.0
    ),
    "stress_fixed_scale": _fixed_scale,
}


def config_for(name: str, done: dict) -> toy.ToyConfig:
    """The config of run ``name`` as the code defines it today (``done``: earlier records)."""
    if name not in RUNS:
        raise ValueError(f"unknown run {name!r}; the runs are {list(RUNS)}.")
    return RUNS[name](done)


def _recorder(name):
    def run(done):
        config = config_for(name, done)
        result = toy.run_experiment(config)
        return result["config"], result

    return run


def main(argv=None) -> dict:
    """The command line: record the runs that are missing (see :func:`entmax_book.record.command`)."""
    runs = {name: _recorder(name) for name in RUNS}
    return record.command(EXPERIMENT, runs, __doc__.split("\n")[0], argv)


if __name__ == "__main__":
    main()
