"""Chapter 4's family of claims: what the recorded runs are asked, written down in one place.

The qjax demo's page makes three claims about sparse attention: it keeps its accuracy as the
sequences grow while softmax's drops, it puts more of its mass on the informative tokens, and a
learned α converges near sparsemax (α ≈ 2). Chapter 4 checks each of them over ten seeds, in
the demo's settings and in a long-sequence stress setting, each with the demo's numerics and with
the exact gradient (:data:`SETTINGS`), and checks the conditions it changes one at a time. Every
row is a paired comparison over the seeds (within a seed every variant starts from the same
weights and sees the same data), oriented so that a positive mean supports the claim; the whole
family is corrected together with Holm's method and given its verdict by
:mod:`entmax_book.stats`.

The family (:data:`CLAIMS`, in the order :func:`family` returns it):

* in each of the four settings of :data:`SETTINGS`: ``acc_<map>`` (each sparse map is more
  accurate than softmax at the longest L), ``mass_<map>`` (it puts more mass on the informative
  tokens there), ``keeps`` (sparsemax's accuracy drops less than softmax's from the shortest to
  the longest L) and ``alpha`` (the learned α ends above :data:`NEAR_2`, nearer to sparsemax
  than to 1.5-entmax);
* ``drop`` (softmax's accuracy drops from the shortest to the longest L), once per experiment,
  "demo" and "stress": softmax's gradient is exact under both numerics, so its runs are the same
  in the two settings of an experiment and one row each is the test;
* ``exact_<map>``: the exact gradient raises each sparse map's lead over softmax at the demo's
  longest L (the lead with the exact gradient minus the lead with the demo's numerics, paired
  over seeds). These three rows were added after the records were first analysed, to test a
  contrast the chapter had drawn from two separate verdicts; they are corrected with the rest;
* the conditions, in the stress setting: ``query`` (a three times larger initial query lowers
  the final learned α at L = 512), ``dilutes`` (with the score scale fixed, softmax's mass on the
  informative tokens falls from the shortest to the longest L), ``fixed_acc`` (with it fixed,
  softmax is less accurate at the longest L than with a free scale), ``fixed_mass`` (with it
  fixed, the learned α keeps more mass than softmax at the longest L), ``fixed_rises`` (with it
  fixed, the learned α rises from the shortest to the longest L) and ``fixed_lower`` (with it
  fixed, the learned α ends lower at the longest L than with a free scale).

A second, smaller family (:data:`PREDICTIONS`, :func:`prediction_table`) tests two predictions
of Chapter 4's mechanism on a run made for them, with the score scale fixed at a smaller value
(``stress_fixed_scale_small``). Both were written down here before that run was recorded, so its
verdicts confirm or refute; they are corrected together, apart from the post-hoc family:

* ``small_rises``: with the smaller fixed scale too, the learned α rises from the shortest to the
  longest L (the rise with the larger fixed scale is not an artefact of that scale leaving α
  nothing to do at L = 8);
* ``small_higher``: at each L, the learned α ends higher with the smaller fixed scale than with
  the larger one (α and the score scale are two ways to sharpen: less of one, more of the other).

Every function reads the result dicts of :func:`entmax_book.toy.experiment.train_and_evaluate`
(a record's ``"result"``); :func:`family` and :func:`verdict_table` take them by record name
(:data:`entmax_book.toy.configs.RUNS`).

Example, on two made-up seeds of one sparse map and softmax:

>>> result = {
...     "softmax": {"accuracy_per_seed": [[0.95, 0.90], [0.93, 0.89]]},
...     "sparsemax": {"accuracy_per_seed": [[0.96, 0.94], [0.95, 0.92]]},
... }
>>> per_seed(result, "sparsemax", "accuracy")[:, -1].tolist()
[0.94, 0.92]
>>> {v: f.tolist() for v, f in failures(result, variants=("sparsemax",)).items()}
{'sparsemax': [False, False]}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from entmax_book import stats
from entmax_book.display import markdown_table

__all__ = [
    "CLAIMS",
    "CLAIM_GROUPS",
    "FAIL_MARGIN",
    "NAMES",
    "NEAR_2",
    "PREDICTIONS",
    "SETTINGS",
    "SPARSE",
    "claims_table",
    "condition_claims",
    "failures",
    "family",
    "gradient_contrast",
    "effect_text",
    "key_of",
    "per_seed",
    "prediction_claims",
    "prediction_table",
    "seed_table",
    "setting_claims",
    "summary_table",
    "verdict_table",
]

#: The sparse variants, each compared with softmax.
SPARSE = ("entmax15", "sparsemax", "alpha_entmax")

#: The variants' names in tables and claims.
NAMES = {
    "softmax": "softmax",
    "entmax15": "1.5-entmax",
    "sparsemax": "sparsemax",
    "alpha_entmax": "learned α",
}
_NAMES = {**NAMES, "alpha_entmax": "the learned α"}  # inside a sentence

#: "Converges near 2" is read as: ends nearer to sparsemax (α = 2) than to 1.5-entmax, i.e. above
#: their midpoint.
NEAR_2 = 1.75

#: A sparse model *fails* in a seed when it ends more than this (10 points of accuracy) below
#: softmax trained on the same data from the same weights.
FAIL_MARGIN = 0.10

#: The settings in which the demo's claims are checked: setting → the record it reads.
SETTINGS = {
    "demo": "demo",
    "demo, exact gradient": "demo_exact_gradient",
    "stress": "stress",
    "stress, exact gradient": "stress_exact_gradient",
}

#: Every claim of the family: key → its words (the ``claim`` of its comparison).
CLAIMS = {
    "drop": "softmax's accuracy drops from the shortest to the longest L",
    "keeps": "sparsemax's accuracy drops less than softmax's",
    **{f"acc_{v}": f"{_NAMES[v]} is more accurate than softmax (longest L)" for v in SPARSE},
    **{f"mass_{v}": f"{_NAMES[v]} puts more mass on the informative tokens (longest L)" for v in SPARSE},
    "alpha": f"the learned α ends above {NEAR_2} (longest L)",
    **{
        f"exact_{v}": f"the exact gradient raises {_NAMES[v]}'s lead over softmax (longest L)" for v in SPARSE
    },
    "query": "a 3× initial query lowers the final learned α (L = 512)",
    "dilutes": "fixed scale: softmax's mass falls from the shortest to the longest L",
    "fixed_acc": "fixed scale: softmax is less accurate at the longest L than with a free scale",
    "fixed_mass": "fixed scale: the learned α keeps more mass than softmax (longest L)",
    "fixed_rises": "fixed scale: the learned α rises from the shortest to the longest L",
    "fixed_lower": "fixed scale: the learned α ends lower than with a free scale (longest L)",
}

#: The mechanism's two predictions for the smaller fixed score scale (see the module), written
#: down before the run that tests them was recorded: key → words.
PREDICTIONS = {
    "small_rises": "smaller fixed scale: the learned α rises from the shortest to the longest L",
    "small_higher": "the learned α ends higher with the smaller fixed scale than with the larger one",
}

#: The claims of :data:`CLAIMS` by topic, each claim in exactly one group: what the full table of
#: the family is split into (Chapter 4's appendix).
CLAIM_GROUPS = {
    "focus": tuple(f"mass_{v}" for v in SPARSE),
    "accuracy": ("drop", "keeps", *(f"acc_{v}" for v in SPARSE)),
    "alpha": ("alpha",),
    "numerics": tuple(f"exact_{v}" for v in SPARSE),
    "conditions": ("query", "dilutes", "fixed_acc", "fixed_mass", "fixed_rises", "fixed_lower"),
}

_KEY_OF = {words: key for key, words in {**CLAIMS, **PREDICTIONS}.items()}


def per_seed(result: Mapping, variant: str, metric: str) -> np.ndarray:
    """One metric of one variant as a (seeds, lengths) float64 array.

    Args:
      result: a result dict of ``train_and_evaluate``.
      variant: "softmax", "entmax15", "sparsemax" or "alpha_entmax".
      metric: a metric with per-seed values, e.g. "accuracy", "informative_mass", "support",
        "final_alpha".

    Returns:
      ``result[variant][metric + "_per_seed"]`` as an array of shape (seeds, lengths).

    Raises:
      KeyError: the result has no such variant or metric.
    """
    if variant not in result:
        raise KeyError(f"the result has no variant {variant!r}.")
    if f"{metric}_per_seed" not in result[variant]:
        raise KeyError(f"the result has no per-seed metric {metric!r} for {variant!r}.")
    values = np.asarray(result[variant][f"{metric}_per_seed"], np.float64)
    if values.ndim != 2:
        raise ValueError(f"{metric!r} of {variant!r} must be (seeds, lengths), got shape {values.shape}.")
    return values


def _drop(result, variant):
    accuracy = per_seed(result, variant, "accuracy")
    return accuracy[:, 0] - accuracy[:, -1]


def _lead(result, variant):
    """Per seed: the variant's accuracy minus softmax's at the longest L."""
    return per_seed(result, variant, "accuracy")[:, -1] - per_seed(result, "softmax", "accuracy")[:, -1]


def setting_claims(result: Mapping, setting: str, drop: bool = True) -> list[stats.Comparison]:
    """The demo's claims on one result, each a paired comparison over its seeds.

    In order: ``drop`` (if ``drop``), ``keeps``, ``acc_<map>`` and ``mass_<map>`` for each map
    of :data:`SPARSE`, ``alpha`` (see :data:`CLAIMS`). Accuracies and masses are fractions (a
    difference of 0.01 is one point).

    Args:
      result: a result dict of ``train_and_evaluate`` with all four variants, at least two
        lengths and two seeds.
      setting: the setting's name, the ``setting`` of every row.
      drop: include the row ``drop`` (softmax's drop); leave it out where another setting
        already has the same softmax runs.

    Returns:
      the comparisons, a list of :class:`entmax_book.stats.Comparison`.

    Example:
      >>> acc = {"softmax": [[0.9, 0.8]] * 3, "entmax15": [[0.9, 0.85]] * 3,
      ...        "sparsemax": [[0.9, 0.86]] * 3, "alpha_entmax": [[0.9, 0.84]] * 3}
      >>> result = {v: {"accuracy_per_seed": a, "informative_mass_per_seed": [[0.5, 0.3]] * 3,
      ...               "final_alpha_per_seed": [[1.8, 1.9]] * 3} for v, a in acc.items()}
      >>> [round(c.mean, 3) for c in setting_claims(result, "demo")][:3]
      [0.1, 0.06, 0.05]
    """
    rows = [stats.paired(CLAIMS["drop"], setting, _drop(result, "softmax"))] if drop else []
    rows.append(stats.paired(CLAIMS["keeps"], setting, _drop(result, "softmax"), _drop(result, "sparsemax")))
    rows += [stats.paired(CLAIMS[f"acc_{v}"], setting, _lead(result, v)) for v in SPARSE]
    rows += [
        stats.paired(
            CLAIMS[f"mass_{v}"],
            setting,
            per_seed(result, v, "informative_mass")[:, -1],
            per_seed(result, "softmax", "informative_mass")[:, -1],
        )
        for v in SPARSE
    ]
    final = per_seed(result, "alpha_entmax", "final_alpha")[:, -1]
    return rows + [stats.paired(CLAIMS["alpha"], setting, final, NEAR_2)]


def gradient_contrast(demo: Mapping, exact: Mapping, setting: str = "demo") -> list[stats.Comparison]:
    """Whether the exact gradient raises each sparse map's lead over softmax: ``exact_<map>``.

    Per seed, the lead is the map's accuracy minus softmax's at the longest L; the effect is the
    lead with the exact gradient minus the lead with the demo's numerics, paired over the seeds
    (the two records share their seeds' data and initial weights).

    Args:
      demo: the result with the demo's numerics (autodiff through the bisection).
      exact: the same settings with the exact gradient.
      setting: the ``setting`` of the rows.

    Returns:
      one :class:`entmax_book.stats.Comparison` per map of :data:`SPARSE`.

    Raises:
      ValueError: the two results were not run on the same seeds.
    """
    if list(demo.get("seeds", [])) != list(exact.get("seeds", [])):
        raise ValueError(
            f"the two results need the same seeds, got {demo.get('seeds')} and {exact.get('seeds')}."
        )
    return [stats.paired(CLAIMS[f"exact_{v}"], setting, _lead(exact, v), _lead(demo, v)) for v in SPARSE]


def condition_claims(stress: Mapping, query_x3: Mapping, fixed_scale: Mapping) -> list[stats.Comparison]:
    """The claims about the conditions changed one at a time, in the stress setting.

    In order ``query``, ``dilutes``, ``fixed_acc``, ``fixed_mass``, ``fixed_rises``,
    ``fixed_lower`` (see :data:`CLAIMS`); the setting of every row is "stress".

    Args:
      stress: the stress setting's result (free score scale).
      query_x3: the same at L = 512 with a three times larger initial query (one length).
      fixed_scale: the stress setting with the score scale fixed (softmax and the learned α).

    Returns:
      six :class:`entmax_book.stats.Comparison`.
    """
    alpha_free = per_seed(stress, "alpha_entmax", "final_alpha")
    alpha_fixed = per_seed(fixed_scale, "alpha_entmax", "final_alpha")
    mass_fixed = {v: per_seed(fixed_scale, v, "informative_mass") for v in ("softmax", "alpha_entmax")}
    return [
        stats.paired(
            CLAIMS["query"],
            "stress",
            alpha_free[:, -1],
            per_seed(query_x3, "alpha_entmax", "final_alpha")[:, -1],
        ),
        stats.paired(CLAIMS["dilutes"], "stress", mass_fixed["softmax"][:, 0], mass_fixed["softmax"][:, -1]),
        stats.paired(
            CLAIMS["fixed_acc"],
            "stress",
            per_seed(stress, "softmax", "accuracy")[:, -1],
            per_seed(fixed_scale, "softmax", "accuracy")[:, -1],
        ),
        stats.paired(
            CLAIMS["fixed_mass"], "stress", mass_fixed["alpha_entmax"][:, -1], mass_fixed["softmax"][:, -1]
        ),
        stats.paired(CLAIMS["fixed_rises"], "stress", alpha_fixed[:, -1], alpha_fixed[:, 0]),
        stats.paired(CLAIMS["fixed_lower"], "stress", alpha_free[:, -1], alpha_fixed[:, -1]),
    ]


_RECORDS = (*SETTINGS.values(), "stress_query_x3", "stress_fixed_scale")


def family(results: Mapping[str, Mapping]) -> list[stats.Comparison]:
    """The whole family of Chapter 4, in order: the four settings' claims (``drop`` only in
    "demo" and "stress"), the gradient contrast, the conditions.

    Args:
      results: record name → result, for every run of :data:`entmax_book.toy.configs.RUNS`.

    Returns:
      the list of :class:`entmax_book.stats.Comparison` to correct together.

    Raises:
      KeyError: a record the family reads is missing.
    """
    missing = [name for name in _RECORDS if name not in results]
    if missing:
        raise KeyError(f"the family reads the records {list(_RECORDS)}; missing: {missing}.")
    rows = []
    for setting, name in SETTINGS.items():
        rows += setting_claims(results[name], setting, drop="exact" not in setting)
    rows += gradient_contrast(results["demo"], results["demo_exact_gradient"])
    return rows + condition_claims(
        results["stress"], results["stress_query_x3"], results["stress_fixed_scale"]
    )


def prediction_claims(fixed_scale: Mapping, fixed_small: Mapping) -> list[stats.Comparison]:
    """The mechanism's predictions (:data:`PREDICTIONS`), each a paired comparison over the seeds.

    In order: ``small_rises`` (setting "stress"), then ``small_higher`` at each length (setting
    "stress, L = <n>"). The two runs share their seeds' data and initial weights; only the fixed
    score scale differs.

    Args:
      fixed_scale: the stress setting with the larger fixed score scale.
      fixed_small: the same with the smaller one.

    Returns:
      1 + (number of lengths) :class:`entmax_book.stats.Comparison`.

    Raises:
      ValueError: the two runs differ in seeds or lengths, or the second scale is not smaller.

    Example:
      >>> big = {"seeds": [0, 1, 2], "lengths": [8, 512], "config": {"score_norm": 0.4},
      ...        "alpha_entmax": {"final_alpha_per_seed": [[1.2, 1.5], [1.1, 1.4], [1.2, 1.6]]}}
      >>> small = {**big, "config": {"score_norm": 0.1},
      ...          "alpha_entmax": {"final_alpha_per_seed": [[1.9, 2.3], [2.0, 2.2], [1.8, 2.4]]}}
      >>> [(c.setting, round(c.mean, 2)) for c in prediction_claims(big, small)]
      [('stress', 0.4), ('stress, L = 8', 0.73), ('stress, L = 512', 0.8)]
    """
    for field in ("seeds", "lengths"):
        if list(fixed_scale[field]) != list(fixed_small[field]):
            raise ValueError(
                f"the two runs need the same {field}, got {fixed_scale[field]} and {fixed_small[field]}."
            )
    scales = fixed_scale["config"]["score_norm"], fixed_small["config"]["score_norm"]
    if not scales[1] < scales[0]:
        raise ValueError(
            f"fixed_small's score scale must be the smaller one, got {scales[1]} against {scales[0]}."
        )
    small = per_seed(fixed_small, "alpha_entmax", "final_alpha")
    large = per_seed(fixed_scale, "alpha_entmax", "final_alpha")
    rows = [stats.paired(PREDICTIONS["small_rises"], "stress", small[:, -1], small[:, 0])]
    return rows + [
        stats.paired(PREDICTIONS["small_higher"], f"stress, L = {n}", small[:, i], large[:, i])
        for i, n in enumerate(fixed_scale["lengths"])
    ]


def prediction_table(results: Mapping[str, Mapping]) -> dict[tuple[str, str], stats.Verdict]:
    """The predictions Holm-corrected together (their own family), by (key, setting).

    Args:
      results: record name → result, with "stress_fixed_scale" and "stress_fixed_scale_small".

    Returns:
      ``{(key, setting): Verdict}``, e.g. ``table["small_higher", "stress, L = 512"].verdict``.
    """
    rows = prediction_claims(results["stress_fixed_scale"], results["stress_fixed_scale_small"])
    return {(key_of(v.comparison), v.comparison.setting): v for v in stats.verdicts(rows)}


def key_of(comparison: stats.Comparison) -> str:
    """The key of :data:`CLAIMS` or :data:`PREDICTIONS` whose words a comparison carries
    (``"acc_sparsemax"``, …)."""
    try:
        return _KEY_OF[comparison.claim]
    except KeyError:
        raise ValueError(f"{comparison.claim!r} is not a claim of the family.") from None


def verdict_table(results: Mapping[str, Mapping]) -> dict[tuple[str, str], stats.Verdict]:
    """The family Holm-corrected together, each row with its verdict, by (key, setting).

    Args:
      results: record name → result (see :func:`family`).

    Returns:
      ``{(key, setting): Verdict}`` in the order of :func:`family`; e.g.
      ``table["mass_sparsemax", "stress"].verdict``.
    """
    return {(key_of(v.comparison), v.comparison.setting): v for v in stats.verdicts(family(results))}


def failures(
    result: Mapping, margin: float = FAIL_MARGIN, variants: Sequence[str] = SPARSE
) -> dict[str, np.ndarray]:
    """Per sparse map, the seeds in which it fails at the longest L.

    A map fails in a seed when its accuracy at the longest L is more than ``margin`` below
    softmax's in the same seed (same data, same initial weights).

    Args:
      result: a result dict of ``train_and_evaluate`` with "softmax" and ``variants``.
      margin: the accuracy gap that counts as a failure (a fraction; 0.10 is ten points).
      variants: the maps to check.

    Returns:
      ``{variant: boolean array over the seeds}``.
    """
    if not 0.0 <= margin < 1.0:
        raise ValueError(f"margin must be a fraction in [0, 1), got {margin}.")
    softmax = per_seed(result, "softmax", "accuracy")[:, -1]
    return {v: per_seed(result, v, "accuracy")[:, -1] < softmax - margin for v in variants}


#: The claims whose effect is in units of α; the others are fractions, shown in points (× 100).
IN_ALPHA = ("alpha", "query", "fixed_rises", "fixed_lower", *PREDICTIONS)


def effect_text(key: str, comparison: stats.Comparison) -> str:
    """A row's effect and 95 % interval as text: α to 3 decimals, fractions in points.

    >>> effect_text("acc_sparsemax", stats.Comparison("c", "s", 0.0134, 0.0059, 0.0208, 0.003, 10))
    '+1.3 [+0.6, +2.1] points'
    >>> effect_text("alpha", stats.Comparison("c", "s", -0.239, -0.304, -0.174, 1e-5, 10))
    '-0.239 [-0.304, -0.174]'
    """
    c = comparison
    if key in IN_ALPHA:
        return f"{c.mean:+.3f} [{c.low:+.3f}, {c.high:+.3f}]"
    return f"{100 * c.mean:+.1f} [{100 * c.low:+.1f}, {100 * c.high:+.1f}] points"


def seed_table(result: Mapping, variants: Sequence[str] = ("softmax", *SPARSE)) -> str:
    """Every seed at the longest L as a Markdown table: each variant's accuracy and mass on the
    informative tokens (%), and the learned α where the result has one. A sparse map's accuracy
    in a seed where it fails (:func:`failures`) is marked "(failed)".

    Args:
      result: a result dict of ``train_and_evaluate`` (with "softmax", for the failures).
      variants: the variants, in the order of the columns.

    Returns:
      the Markdown text, one line per seed after the header.
    """
    failed = failures(result, variants=[v for v in variants if v in SPARSE])
    columns, header = [], []
    for metric, unit in (("accuracy", "accuracy (%)"), ("informative_mass", "mass (%)")):
        for v in variants:
            values = [f"{100 * x:.2f}" for x in per_seed(result, v, metric)[:, -1]]  # as the family table
            if metric == "accuracy" and v in failed:
                values = [f"{x} (failed)" if f else x for x, f in zip(values, failed[v], strict=True)]
            columns.append(values)
            header.append(f"{NAMES[v]}, {unit}")
    if "alpha_entmax" in variants:
        columns.append([f"{x:.3f}" for x in per_seed(result, "alpha_entmax", "final_alpha")[:, -1]])
        header.append("final learned α")
    rows = [[str(seed), *(column[i] for column in columns)] for i, seed in enumerate(result["seeds"])]
    return markdown_table(["seed", *header], rows)


def summary_table(result: Mapping, variants: Sequence[str] = ("softmax", *SPARSE)) -> str:
    """Every length of a result as a Markdown table: each variant's accuracy and mass on the
    informative tokens (%), and where the learned α ends, as mean ± standard deviation over the
    seeds (the spread of single runs, not an interval for the mean).

    Args:
      result: a result dict of ``train_and_evaluate``.
      variants: the variants, in the order of the rows; those the result lacks are left out.

    Returns:
      the Markdown text: one column per L, one line per measure and variant after the header.
    """
    shown = [v for v in variants if v in result]
    measures = [(f"{NAMES[v]}, accuracy (%)", 100 * per_seed(result, v, "accuracy")) for v in shown]
    measures += [(f"{NAMES[v]}, mass (%)", 100 * per_seed(result, v, "informative_mass")) for v in shown]
    if "alpha_entmax" in shown:
        measures.append(("final learned α", per_seed(result, "alpha_entmax", "final_alpha")))
    rows = []
    for label, values in measures:  # values: (seeds, lengths)
        cells = zip(values.mean(0), values.std(0, ddof=1), strict=True)
        rows.append([label, *(f"{m:.2f} ± {sd:.2f}" for m, sd in cells)])
    return markdown_table(["", *(f"L = {n}" for n in result["lengths"])], rows)


def claims_table(
    table: Mapping[tuple[str, str], stats.Verdict],
    rows: Sequence[tuple[str, str]] | None = None,
    family: str = "post-hoc family",
) -> str:
    """A verdict table as a Markdown table: claim, setting, effect [95 % interval], p, p (Holm), verdict.

    A claim tested in several settings is named once, on the first of its rows; the rows under it
    leave the claim cell empty.

    Args:
      table: the output of :func:`verdict_table` or :func:`prediction_table`.
      rows: the (key, setting) rows to show, in order (default: all of them, grouped by claim
        in the order of :data:`CLAIMS`, then :data:`PREDICTIONS`).
      family: what the verdict column's header says the family is.

    Returns:
      the Markdown text, one line per row after the header.
    """
    if rows is None:
        order = [*CLAIMS, *PREDICTIONS]
        rows = sorted(table, key=lambda ks: order.index(ks[0]))  # stable: settings keep their order
    header = ["claim", "setting", "effect [95 % interval]", "p", "p (Holm)", f"verdict ({family})"]
    cells, previous = [], None
    for key, setting in rows:
        r = table[key, setting]
        c = r.comparison
        claim = "" if c.claim == previous else c.claim
        previous = c.claim
        cells.append(
            [claim, setting, effect_text(key, c), f"{c.p:.2g}", f"{r.p_corrected:.2g}", f"**{r.verdict}**"]
        )
    return markdown_table(header, cells)
