"""The toy's named configurations: the qjax demo, the stress setting, the recorded runs.

* :data:`ORIGINAL`: the qjax demo ``examples/attention_mlp.py`` as it is;
* :data:`STRESS`: the chapter's long-sequence stress setting (the
  :class:`~entmax_book.toy.config.ToyConfig` defaults);
* :data:`RUNS`: the conditions of Chapter 4's recorded runs (:mod:`entmax_book.toy.runs`
  records them), one condition changed at a time; :func:`config_for` builds one of them.

>>> ORIGINAL.lengths, STRESS.lengths
((4, 8, 16, 32), (8, 64, 512))
>>> config_for("stress_query_x3", {}).query_scale
3.0
"""

from __future__ import annotations

import dataclasses

from entmax_book.toy.config import DEMO_ALPHA_INIT, ToyConfig

__all__ = ["DEMO", "NEEDS", "ORIGINAL", "RUNS", "STRESS", "config_for"]

#: The qjax demo ``examples/attention_mlp.py``: ``train_and_evaluate(ORIGINAL)`` is its run
#: (d = 16, C = 4 on basis axes, K = 3, prototype and marker of length 2.5, σ = 1;
#: L ∈ {4, 8, 16, 32}; seeds 0–2, each with its own 512 training sequences as one full batch
#: and 2000 test sequences; 5000 Adam steps at 5e-3; entmax by 25 bisection steps
#: differentiated by autodiff; attention maps of 18 sequences at L = 16).
ORIGINAL = ToyConfig(
    lengths=(4, 8, 16, 32),
    seeds=(0, 1, 2),
    steps=5000,
    batch_size=None,
    learning_rate=5e-3,
    alpha_init=DEMO_ALPHA_INIT,
    gradient="autodiff",
    n_train=512,
    n_test=2000,
    data_per_seed=True,
    attention_length=16,
    n_attention_examples=18,
    dim=16,
    n_classes=4,
    n_informative=3,
    signal_strength=2.5,
    class_strength=2.5,
    noise_std=1.0,
    directions="basis",
    balanced_classes=False,
)

#: The chapter's long-sequence stress setting: d = 8, K = 4 among L ∈ {8, 64, 512}, ten seeds.
STRESS = ToyConfig()

#: The recorded demo: :data:`ORIGINAL` with ten seeds instead of three.
DEMO = dataclasses.replace(ORIGINAL, seeds=tuple(range(10)))


def _fixed_scale(variant):
    """The stress setting with the score scale fixed at the one ``variant`` chose by itself at
    the shortest L in ``stress`` (mean over seeds, to 3 decimals)."""

    def config(done):
        chosen = done["stress"]["result"][variant]
        scale = round(chosen["distractor_score_std"][0], 3)  # κσ at the shortest L, σ = 1
        return dataclasses.replace(STRESS, variants=("softmax", "alpha_entmax"), score_norm=scale)

    return config


#: The recorded runs: name → function of the records made so far → config. In order:
#:
#: * ``demo``: :data:`DEMO`;
#: * ``demo_exact_gradient``: the same, with the library's exact derivatives
#:   (``gradient="closed_form"``) instead of autodiff through the bisection;
#: * ``stress``: :data:`STRESS`;
#: * ``stress_exact_gradient``: the same, with the library's exact derivatives;
#: * ``stress_query_x3``: the stress setting at L = 512 with a three times larger initial query;
#: * ``stress_fixed_scale``: the stress setting with the score scale fixed at the scale softmax
#:   chose by itself at L = 8 in ``stress`` (mean over seeds, to 3 decimals);
#: * ``stress_fixed_scale_small``: the same with the smaller scale that the learned-α model chose
#:   by itself at L = 8 in ``stress``. Added to test the predictions of
#:   :data:`entmax_book.toy.claims.PREDICTIONS`, which were written down before it was recorded.
RUNS = {
    "demo": lambda done: DEMO,
    "demo_exact_gradient": lambda done: dataclasses.replace(DEMO, gradient="closed_form"),
    "stress": lambda done: STRESS,
    "stress_exact_gradient": lambda done: dataclasses.replace(STRESS, gradient="closed_form"),
    "stress_query_x3": lambda done: dataclasses.replace(
        STRESS, lengths=(512,), variants=("softmax", "alpha_entmax"), query_scale=3.0
    ),
    "stress_fixed_scale": _fixed_scale("softmax"),
    "stress_fixed_scale_small": _fixed_scale("alpha_entmax"),
}

#: The runs whose config is read from an earlier record: name → the runs it needs.
NEEDS = {"stress_fixed_scale": ("stress",), "stress_fixed_scale_small": ("stress",)}


def config_for(name: str, done: dict) -> ToyConfig:
    """The config of recorded run ``name`` as the code defines it today.

    Args:
      name: a key of :data:`RUNS`.
      done: the records made so far (name → record); a run of :data:`NEEDS` reads them.

    Returns:
      the :class:`~entmax_book.toy.config.ToyConfig` of the run.

    Raises:
      ValueError: ``name`` is not a run, or a record it needs is not in ``done``.
    """
    if name not in RUNS:
        raise ValueError(f"unknown run {name!r}; the runs are {list(RUNS)}.")
    missing = [need for need in NEEDS.get(name, ()) if need not in done]
    if missing:
        raise ValueError(
            f"run {name!r} reads its config from the record of {missing[0]!r}, which is not recorded: "
            f"record {missing[0]!r} first, or add it to --only."
        )
    return RUNS[name](done)
