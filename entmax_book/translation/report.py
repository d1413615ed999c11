"""Chapter 5's tables and verdicts, built from the recorded runs and their analyses.

What the chapter prints about the record, as public functions: the paper's reported numbers
(:data:`PAPER`), the accuracy table and the specialised-heads table of the conditions
(:func:`accuracy_table`, :func:`heads_table`), the table of the family's verdicts
(:func:`claims_table`; the family itself is :mod:`~entmax_book.translation.claims`), each
seed's effects (:func:`effects_table`) and the
runs' provenance (:func:`provenance_summary`). The per-seed measures they read are in
:mod:`~entmax_book.translation.measures`.

Inputs, as everywhere in Chapter 5: ``results`` = {run name: ``record.load(...)["result"]``}
and ``analyses`` = {run name: ``analysis.analyse(...)[0]``}, run names
:func:`~entmax_book.translation.runs.run_name`.

Example:
  >>> print(paper_table().splitlines()[0].split())
  ['softmax', '1.5-entmax', 'α-entmax']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from entmax_book import stats
from entmax_book.display import map_style, markdown_table
from entmax_book.translation import claims, measures
from entmax_book.translation.runs import CONDITIONS, RUNS

__all__ = [
    "HEAD_SCORES",
    "LABELS",
    "PAPER",
    "PAPER_MODELS",
    "STYLE",
    "TYPE_LABELS",
    "accuracy_columns",
    "accuracy_differences",
    "accuracy_table",
    "alpha_table",
    "claims_table",
    "effects_table",
    "heads_table",
    "paper_span",
    "paper_table",
    "plateau_table",
    "provenance_summary",
]

#: The conditions' names in the text.
LABELS = {
    "softmax": "softmax",
    "entmax15": "1.5-entmax",
    "alpha_entmax": "learned α",
    "alpha_frozen": "frozen random α",
}

#: Line colour and style of each condition: the book's colour per map;
#: the control (α frozen, not learned) is grey and dotted.
STYLE = {
    "softmax": {"color": map_style("softmax")["color"], "linestyle": "-"},
    "entmax15": {"color": map_style("entmax15")["color"], "linestyle": "-"},
    "alpha_entmax": {"color": map_style("alpha_entmax")["color"], "linestyle": "-"},
    "alpha_frozen": {"color": "0.45", "linestyle": ":"},
}

#: The attention types' names in the text.
TYPE_LABELS = {"encoder_self": "encoder self", "context": "context", "decoder_self": "decoder self"}

#: The specialised-head scores of the encoder (keys of ``analysis.analyse``) and their names.
HEAD_SCORES = {
    "positional_compound": "previous token (two-word nouns)",
    "merging_multi": "subword merging",
    "marker": "marker on '?'",
}

PAPER_MODELS = ("softmax", "1.5-entmax", "α-entmax")

#: Reported by Correia et al. (2019): BLEU on four tasks (their Table 2) and, from their
#: analyses, as shares of attention weight (0 to 1, where the paper gives per cent): the
#: previous-token heads' median confidence, the best subword-merging head (the paper's
#: "BPE-merging" head; softmax: none above 0.8, None here) and the marker head's weight on the
#: final "?" (the paper's "interrogation head").
PAPER = {
    "BLEU, IWSLT17 de→en": (29.79, 29.83, 29.90),
    "BLEU, KFTT ja→en": (21.57, 22.13, 21.74),
    "BLEU, WMT16 ro→en": (32.70, 33.10, 32.89),
    "BLEU, WMT14 en→de": (26.02, 25.89, 26.93),
    "previous-token heads": (0.935, 0.944, 0.959),
    "best subword-merging head": (None, 0.856, 0.898),
    "marker head": (0.985, 0.970, 0.995),
}


def paper_table() -> str:
    """:data:`PAPER` as fixed-width text, one row per measure, one column per model: BLEU with two
    decimals, the heads' shares of attention weight with three."""
    lines = [f"{'':26s}" + "".join(f"{m:>12s}" for m in PAPER_MODELS)]
    for row, values in PAPER.items():
        digits = 2 if row.startswith("BLEU") else 3
        cells = ("< 0.8" if v is None else f"{v:.{digits}f}" for v in values)
        lines.append(f"{row:26s}" + "".join(f"{c:>12s}" for c in cells))
    return "\n".join(lines)


def paper_span(row: str) -> str:
    """The paper's scores of one row of :data:`PAPER` as a range.

    >>> paper_span("marker head")
    '0.97–0.995'
    """
    reported = [v for v in PAPER[row] if v is not None]
    return f"{min(reported):.3g}–{max(reported):.3g}"


def _number(x: float, spec: str) -> str:
    """``x`` formatted by ``spec`` (e.g. "+.3f"), without a "-0.000" for a value that rounds to 0."""
    digits = int(spec.rsplit(".", 1)[1].rstrip("f"))
    return f"{0.0 if round(x, digits) == 0 else x:{spec}}"


#: Decimals of the accuracy columns other than the percentages (one decimal): BLEU to two, so
#: that a difference quoted in the text is the table's.
_DIGITS = {"test loss": 3, "BLEU": 2}
#: A difference of test losses is about a hundredth of a loss: four decimals keep its interval's
#: ends apart from zero.
_DIFFERENCE_DIGITS = {**_DIGITS, "test loss": 4}


def _cell(values, digits, cap=None, signed=False):
    mean, low, high = measures.interval(values)
    high = high if cap is None else min(high, cap)
    spec = f"{'+' if signed else ''}.{digits}f"
    mean, low, high = (_number(v, spec) for v in (mean, low, high))
    return f"{mean} [{low}, {high}]"


def accuracy_columns(results: Mapping, analyses: Mapping, condition: str, seeds=measures.SEEDS) -> dict:
    """Per seed, one condition's test scores: {column: array over seeds}.

    "test loss" (teacher-forced cross-entropy, from the record: the loss the claims read),
    "tokens" (token accuracy, %), the accuracy on each planted construction (%: "two-word nouns",
    "multi-piece words", "marker questions", from ``analysis["accuracy"]``) and "BLEU" of greedy
    translations (from the record).
    """

    def analysed(fn):
        return measures.per_seed(analyses, condition, fn, seeds)

    return {
        "test loss": measures.per_seed(results, condition, lambda r: r["test"]["loss"], seeds),
        "tokens": analysed(lambda a: 100 * a["accuracy"]["tokens"]),
        "two-word nouns": analysed(lambda a: 100 * a["accuracy"]["tgt_compound"]),
        "multi-piece words": analysed(lambda a: 100 * a["accuracy"]["tgt_multi_piece"]),
        "marker questions": analysed(lambda a: 100 * a["accuracy"]["tgt_marker"]),
        "BLEU": measures.per_seed(results, condition, lambda r: r["test"]["bleu"], seeds),
    }


def accuracy_table(results: Mapping, analyses: Mapping, conditions=CONDITIONS, seeds=measures.SEEDS) -> str:
    """A markdown table: per condition, each column of :func:`accuracy_columns` as
    "mean [95 % interval]" over the seeds (a share's interval capped at 100)."""
    rows = []
    for condition in conditions:
        columns = accuracy_columns(results, analyses, condition, seeds)
        cells = []
        for name, values in columns.items():
            cap = None if name in ("test loss", "BLEU") else 100.0
            cells.append(_cell(values, _DIGITS.get(name, 1), cap))
        rows.append([LABELS[condition], *cells])
    return markdown_table(["condition", *columns], rows)


def accuracy_differences(
    results: Mapping,
    analyses: Mapping,
    baseline: str = "softmax",
    conditions=CONDITIONS,
    seeds=measures.SEEDS,
) -> str:
    """A markdown table: per condition, each column of :func:`accuracy_columns` minus the
    baseline's, seed by seed, as "mean [95 % interval]" of the paired differences.

    The runs of a seed share their initial weights and batches, so the paired difference is the
    comparison to read; the intervals of :func:`accuracy_table` are each condition's own, and
    two of them can overlap where the paired difference is clear. Accuracies are in points, the
    test loss in its own units, BLEU in BLEU points.
    """
    reference = accuracy_columns(results, analyses, baseline, seeds)
    rows = []
    for condition in (c for c in conditions if c != baseline):
        columns = accuracy_columns(results, analyses, condition, seeds)
        cells = [
            _cell(values - reference[name], _DIFFERENCE_DIGITS.get(name, 1), signed=True)
            for name, values in columns.items()
        ]
        rows.append([f"{LABELS[condition]} − {LABELS[baseline]}", *cells])
    return markdown_table(["paired difference", *reference], rows)


def seed_table(results: Mapping, analyses: Mapping, conditions=CONDITIONS, seeds=measures.SEEDS) -> str:
    """A markdown table of every run: per condition and seed, the test loss, the token accuracy
    (%), the BLEU (the columns of :func:`accuracy_columns`) and the mean JS divergence between
    the heads of a layer (:func:`~entmax_book.translation.measures.diversity`)."""
    rows = []
    for condition in conditions:
        columns = accuracy_columns(results, analyses, condition, seeds)
        js = measures.diversity(analyses, condition, seeds=seeds)
        for i, seed in enumerate(seeds):
            loss, tokens, bleu = columns["test loss"][i], columns["tokens"][i], columns["BLEU"][i]
            scores = [f"{loss:.3f}", f"{tokens:.1f}", f"{bleu:.2f}", f"{js[i]:.3f}"]
            rows.append([LABELS[condition], str(seed), *scores])
    return markdown_table(["condition", "seed", "test loss", "tokens", "BLEU", "JS between heads"], rows)


def heads_table(analyses: Mapping, conditions=CONDITIONS, seeds=measures.SEEDS) -> str:
    """A markdown table: per condition, the best encoder head's score for each of
    :data:`HEAD_SCORES` and the best marker head's "?" − "." gap
    (:func:`~entmax_book.translation.measures.marker_vs_sink`), "mean [95 % interval]"."""
    rows = []
    for condition in conditions:
        cells = [measures.best_head(analyses, condition, key, seeds) for key in HEAD_SCORES]
        cells.append(measures.marker_vs_sink(analyses, condition, seeds))
        rows.append([LABELS[condition], *(_cell(v, 2) for v in cells)])
    return markdown_table(["condition", *HEAD_SCORES.values(), "marker − sink"], rows)


def claims_table(verdicts: Mapping[str, stats.Verdict], keys: Sequence[str] | None = None) -> str:
    """A markdown table of verdicts: claim, measure, effect [95 % interval], p, Holm-corrected p,
    verdict; the rows of ``keys`` in that order (all of them by default). A claim of the family
    is named by its short name in :data:`EFFECT_COLUMNS`, then its words, and has its effect
    written as there (e.g. the loss row to four decimals); any other claim has its words only and
    its effect with three decimals, signed. An effect equal in every seed has no spread to test:
    its row says so and leaves p blank (its p of 1 is a convention, still counted by Holm).

    >>> row = stats.verdicts([stats.paired("up", "s", [1.0, 1.2, 0.9])])[0]
    >>> claims_table({"up": row}).splitlines()[-1]
    '| up | s | +1.033 [+0.654, +1.413] | 0.0072 | 0.0072 | **holds** |'
    >>> flat = stats.verdicts([stats.paired("none", "s", [0.0, 0.0, 0.0])])[0]
    >>> claims_table({"none": flat}).splitlines()[-1]
    '| none | s | 0.000 in every seed | — | — | **not shown** |'
    """
    rows = []
    for key in verdicts if keys is None else keys:
        r = verdicts[key]
        c = r.comparison
        spec = "+" + EFFECT_COLUMNS[key][1].lstrip("+") if key in EFFECT_COLUMNS else "+.3f"
        effect = f"{_number(c.mean, spec)} [{_number(c.low, spec)}, {_number(c.high, spec)}]"
        p_cells = [f"{c.p:.2g}", f"{r.p_corrected:.2g}"]
        if c.low == c.high:  # every seed the same: no spread to test, and p = 1 by convention
            effect, p_cells = f"{_number(c.mean, spec.lstrip('+'))} in every seed", ["—", "—"]
        # the short name first, so that the row matches its column in effects_table and the text
        claim = f"**{EFFECT_COLUMNS[key][0]}**: {c.claim}" if key in EFFECT_COLUMNS else c.claim
        rows.append([claim, c.setting, effect, *p_cells, f"**{r.verdict}**"])
    header = ["claim", "measured on", "effect [95 % interval]", "p", "p (Holm)", "verdict"]
    return markdown_table(header, rows)


#: Each claim's column in :func:`effects_table`: its name in Chapter 5's list, and the format of
#: its per-seed effect (its unit sets the digits).
EFFECT_COLUMNS = {
    "no_loss_cost": ("no loss cost", "+.4f"),
    "no_bleu_cost": ("no BLEU cost", "+.2f"),
    "more_diverse": ("more diverse", "+.3f"),
    "encoder_sparsest": ("encoder keeps the largest α", "+.3f"),
    "dip_then_rise": ("dip, then rise", ".3f"),
    "learning_helps": ("learning helps", "+.4f"),
    "two_modes": ("two modes", ".0f"),
}


def effects_table(seed_runs: Sequence[dict], seeds: Sequence[int] = measures.SEEDS) -> str:
    """A markdown table of every claim's effect in every seed: one row per seed, one column per
    claim of :data:`~entmax_book.translation.claims.FAMILY` (the numbers its t-test reads).

    Args:
      seed_runs: :func:`~entmax_book.translation.claims.seed_runs` of the record.
      seeds: the seeds of ``seed_runs``, in order.
    """
    per_seed = claims.effects(seed_runs)
    rows = [
        [str(seed), *(_number(values[i], EFFECT_COLUMNS[name][1]) for name, values in per_seed.items())]
        for i, seed in enumerate(seeds)
    ]
    return markdown_table(["seed", *(EFFECT_COLUMNS[name][0] for name in per_seed)], rows)


def alpha_table(results: Mapping, condition: str = "alpha_entmax", seeds=measures.SEEDS) -> str:
    """A markdown table: per seed, the mean final α of the heads of each attention type (what
    the claim that the encoder keeps the largest α compares).

    >>> alpha = {k: [[[1.5, 1.5]], [[1.4, 1.2]]] for k in TYPE_LABELS}
    >>> alpha_table({"hard_alpha_entmax_seed0": {"history": {"alpha": alpha}}}, seeds=(0,)).splitlines()[-1]
    '| 0 | 1.300 | 1.300 | 1.300 |'
    """
    means = [measures.final_alpha(results, condition, kind, seeds).mean(1) for kind in TYPE_LABELS]
    rows = [[str(seed), *(f"{m[i]:.3f}" for m in means)] for i, seed in enumerate(seeds)]
    return markdown_table(["seed", *(f"{label}, mean α" for label in TYPE_LABELS.values())], rows)


def plateau_table(results: Mapping) -> str:
    """A markdown table: per run, its validation loss at the start of its last quarter, the best
    loss after it, the relative fall (%, :func:`~entmax_book.translation.measures.last_quarter_change`)
    and whether it reached its plateau (``result["plateau"]``). Rows go condition by condition, each
    condition's runs from the smallest fall (the nearest to its plateau) to the largest.

    >>> curve = {"step": [100, 200, 300, 400], "valid_loss": [3.0, 1.2, 1.01, 1.0]}
    >>> results = {"hard_softmax_seed0": {"history": {"eval": curve}, "plateau": True}}
    >>> plateau_table(results).splitlines()[-1]
    '| softmax | 0 | 1.010 | 1.000 | 1.0 | yes |'
    """
    keyed = []
    for name, result in results.items():
        at, best = measures.last_quarter_change(result["history"]["eval"], "valid_loss")
        condition, seed = RUNS[name]
        fall = 100 * (at - best) / at
        plateau = "yes" if result["plateau"] else "no"
        row = [LABELS[condition], str(seed), f"{at:.3f}", f"{best:.3f}", f"{fall:.1f}", plateau]
        keyed.append(((list(LABELS).index(condition), fall), row))
    rows = [row for _, row in sorted(keyed, key=lambda k: k[0])]
    header = ["condition", "seed", "loss, last quarter's start", "best after", "fall (%)", "plateau"]
    return markdown_table(header, rows)


def provenance_summary(records: Mapping) -> dict[str, str]:
    """The provenance of a set of records, in words, for the chapter's "About these runs" box.

    Args:
      records: {run name: ``record.load(...)``}, each with its "provenance".

    Returns:
      {"runs": how many, "commits": the distinct commits (10 characters, comma-separated; more
      than three as their number, the first and the last recorded),
      "versions": python, jax, flax, optax, entmax_lib (each version seen), "cpu_minutes": the
      total CPU time, "machine": the CPU model, its cores and JAX backend, "recorded": the
      dates}, every value a string.
    """
    provenances = [r["provenance"] for r in records.values()]

    def distinct(fn):
        return ", ".join(sorted({str(fn(p)) for p in provenances}))

    versions = "; ".join(
        f"{name} {distinct(lambda p, name=name: p['versions'][name])}"
        for name in ("python", "jax", "flax", "optax", "entmax_lib")
    )
    machine = distinct(
        lambda p: (
            f"{p['machine']['cpu']}, {p['machine']['cores']} cores, JAX on {p['machine']['jax_backend']}"
        )
    )
    by_time = sorted(provenances, key=lambda p: p["recorded"])
    commits = list(dict.fromkeys(str(p["commit"])[:10] for p in by_time))
    if len(commits) > 3:
        commits = [f"{len(commits)}, from {commits[0]} to {commits[-1]}"]
    return {
        "runs": str(len(provenances)),
        "commits": ", ".join(sorted(commits)),
        "versions": versions,
        "cpu_minutes": f"{sum(p['cpu_seconds'] for p in provenances) / 60:.0f}",
        "machine": machine,
        "recorded": distinct(lambda p: p["recorded"][:10]),
    }
