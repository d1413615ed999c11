"""Chapter 5's family of claims, written down before the record that tests them.

Each claim of the Adaptively Sparse Transformer paper that the record can test is one row: a
per-seed effect, oriented so that a positive mean supports the claim, compared over the same
seeds (paired: the conditions of a seed share its corpus, initial weights and batches), and the
whole family corrected together with Holm's method (:mod:`entmax_book.stats`). The family, its
margins and its thresholds are fixed here, in the code, before any run of the record is made;
everything else Chapter 5 shows is exploratory.

The family (Correia, Niculae & Martins, 2019):

1. ``no_loss_cost``: learned α costs no test loss — non-inferiority with a margin of
   :data:`LOSS_MARGIN` (2 %): effect = (1 + margin) · loss(softmax) − loss(learned α).
2. ``no_bleu_cost``: learned α costs no BLEU — non-inferiority with a margin of
   :data:`BLEU_MARGIN` (0.5 BLEU): effect = BLEU(learned α) − BLEU(softmax) + margin.
3. ``more_diverse``: learned-α heads are more diverse than softmax heads: effect = mean JS
   divergence between the heads of a layer (over layers and attention types), learned α minus
   softmax.
4. ``encoder_sparsest``: encoder self-attention learns a larger (sparser) α than context and
   decoder self-attention: effect = mean encoder α − the larger of the mean context α and the
   mean decoder α.
5. ``dip_then_rise``: some heads' α first falls and then rises again: effect = the share of
   heads whose α falls at least :data:`ALPHA_MOVE` below its initial value and then ends at
   least :data:`ALPHA_MOVE` above its lowest value.
6. ``learning_helps``: learning α lowers the test loss compared with the same model with every α
   frozen at its random initial draw (a measure that does not reduce to the mean α):
   effect = loss(frozen α) − loss(learned α).
7. ``two_modes``: encoder self-attention heads fall into a dense and a sparse group: effect =
   the smaller of the counts of encoder heads with α < :data:`DENSE_BELOW` (1.25) and with
   α > :data:`SPARSE_ABOVE` (1.75)
   (:func:`~entmax_book.translation.analysis.alpha_modes`; counts that a pile-up at the clamp
   cannot fake).

Reference: Correia, Niculae & Martins (2019), Adaptively Sparse Transformers, §5,
https://aclanthology.org/D19-1223/
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from entmax_book import stats
from entmax_book.translation.analysis import alpha_modes
from entmax_book.translation.runs import SEEDS, run_name

__all__ = [
    "ALPHA_MOVE",
    "BLEU_MARGIN",
    "DENSE_BELOW",
    "FAMILY",
    "LOSS_MARGIN",
    "SPARSE_ABOVE",
    "Claim",
    "SeedRun",
    "effects",
    "family",
    "seed_runs",
    "verdicts",
]

#: Non-inferiority margins: a test loss at most 2 % above softmax's, a BLEU at most 0.5 below.
LOSS_MARGIN, BLEU_MARGIN = 0.02, 0.5

#: How far α must move to count as a dip, and as a rise after it.
ALPHA_MOVE = 0.05

#: The two groups of ``two_modes``: a head is dense below α = 1.25, sparse above α = 1.75.
DENSE_BELOW, SPARSE_ABOVE = 1.25, 1.75


class SeedRun(NamedTuple):
    """What the claims read of one trained run (one condition, one seed).

    Attributes:
      test: the test scores of ``experiment.evaluate`` ("loss", "bleu", …).
      js: {attention type: [layer] JS divergence between the heads} (``analysis.analyse``).
      alphas: {attention type: (layers, heads) final α}.
      alpha_history: {attention type: (records, layers, heads) α during training, the first
        record the initial draw} (the training history's "alpha").
    """

    test: dict
    js: dict
    alphas: dict
    alpha_history: dict


def _mean_js(run):
    return float(np.mean([np.mean(v) for v in run.js.values()]))


def _mean_alpha(run, kind):
    return float(np.mean(run.alphas[kind]))


def _dip_then_rise(run):
    traces = np.concatenate([np.reshape(v, (len(v), -1)) for v in run.alpha_history.values()], axis=1)
    lowest = traces.min(0)
    dipped = lowest <= traces[0] - ALPHA_MOVE
    rose = traces[-1] >= lowest + ALPHA_MOVE
    return float(np.mean(dipped & rose))


def _two_modes(run):
    counts = alpha_modes({"encoder_self": run.alphas["encoder_self"]}, DENSE_BELOW, SPARSE_ABOVE)
    return float(min(counts["dense"], counts["sparse"]))


class Claim(NamedTuple):
    """One claim of the family: its name, its words, what it is measured on, and its per-seed
    effect from the runs of a seed."""

    name: str
    words: str
    measure: str
    effect: Callable[[dict], float]  # {condition: SeedRun} of one seed -> the effect


#: The pre-registered family (see the module docstring), in the order the chapter reports it.
FAMILY = (
    Claim(
        "no_loss_cost",
        f"learned α's test loss is at most {LOSS_MARGIN:.0%} above softmax's",
        # the effect's unit, so that the table reads without the appendix
        f"test loss: {1 + LOSS_MARGIN:.2f} × softmax's − learned α's",
        lambda r: (1 + LOSS_MARGIN) * r["softmax"].test["loss"] - r["alpha_entmax"].test["loss"],
    ),
    Claim(
        "no_bleu_cost",
        f"learned α's BLEU is at most {BLEU_MARGIN} below softmax's",
        f"BLEU: learned α's − softmax's + {BLEU_MARGIN}",
        lambda r: r["alpha_entmax"].test["bleu"] - r["softmax"].test["bleu"] + BLEU_MARGIN,
    ),
    Claim(
        "more_diverse",
        "learned-α heads are more diverse (JS) than softmax heads",
        "JS between heads",
        lambda r: _mean_js(r["alpha_entmax"]) - _mean_js(r["softmax"]),
    ),
    Claim(
        "encoder_sparsest",
        "encoder self-attention learns a larger α than context and decoder self-attention",
        "mean α",
        lambda r: (
            _mean_alpha(r["alpha_entmax"], "encoder_self")
            - max(_mean_alpha(r["alpha_entmax"], "context"), _mean_alpha(r["alpha_entmax"], "decoder_self"))
        ),
    ),
    Claim(
        "dip_then_rise",
        "some heads' α falls and then rises again",
        "share of heads",
        lambda r: _dip_then_rise(r["alpha_entmax"]),
    ),
    Claim(
        "learning_helps",
        "learning α lowers the test loss compared with α frozen at its random draw",
        "test loss",
        lambda r: r["alpha_frozen"].test["loss"] - r["alpha_entmax"].test["loss"],
    ),
    Claim(
        "two_modes",
        "encoder heads fall into a dense (α < 1.25) and a sparse (α > 1.75) group",
        "encoder heads",
        lambda r: _two_modes(r["alpha_entmax"]),
    ),
)


def effects(seeds: Sequence[dict]) -> dict[str, np.ndarray]:
    """{claim name: its effect in each seed}, the numbers :func:`family` tests.

    Args:
      seeds: one dict per seed, {condition: :class:`SeedRun`}, as for :func:`family`.

    Returns:
      per claim of :data:`FAMILY`, in order, an array with one effect per seed.
    """
    return {claim.name: np.array([claim.effect(runs) for runs in seeds]) for claim in FAMILY}


def family(seeds: Sequence[dict]) -> list[stats.Comparison]:
    """The family's comparisons over seeds.

    Args:
      seeds: one dict per seed, {condition: :class:`SeedRun`}, with the conditions "softmax",
        "alpha_entmax" and "alpha_frozen".

    Returns:
      one :class:`~entmax_book.stats.Comparison` per claim of :data:`FAMILY`, in order.
    """
    if len(seeds) < 2:
        raise ValueError(f"the family needs at least 2 seeds, got {len(seeds)}.")
    per_seed = effects(seeds)
    return [stats.paired(claim.words, claim.measure, per_seed[claim.name]) for claim in FAMILY]


def verdicts(seeds: Sequence[dict]) -> dict[str, stats.Verdict]:
    """{claim name: :class:`~entmax_book.stats.Verdict`}: the family's comparisons, Holm-corrected
    together, with their verdict words."""
    rows = stats.verdicts(family(seeds))
    return {claim.name: row for claim, row in zip(FAMILY, rows, strict=True)}


def seed_runs(results: Mapping, analyses: Mapping, seeds: Sequence[int] = SEEDS) -> list[dict]:
    """What the family reads of the record: one {condition: :class:`SeedRun`} per seed.

    Args:
      results: {run name: ``record.load(...)["result"]``} (test scores, training history).
      analyses: {run name: ``analysis.analyse(...)[0]``} (the heads' JS divergence).
      seeds: the seeds, in order.

    Returns:
      a list, one dict per seed, over the conditions the family compares.
    """

    def seed_run(name):
        history = {kind: np.asarray(v) for kind, v in results[name]["history"]["alpha"].items()}
        final = {kind: v[-1] for kind, v in history.items()}
        return SeedRun(results[name]["test"], analyses[name]["js"], final, history)

    conditions = ("softmax", "alpha_entmax", "alpha_frozen")
    return [{c: seed_run(run_name(c, seed)) for c in conditions} for seed in seeds]
