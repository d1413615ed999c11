"""The written exam: 90 minutes, 20 points, its numbers drawn for each term and its key computed.

Each question is a function of a random generator that returns its points, its text and its
key; the numbers in a question come from the generator, so each term's paper (seeded by the
instructor's secret term seed, :func:`tools.course.term_seed`) has its own answers, and the key
exists only in the private bundle. ``course/exam/specimen.md`` is a paper drawn from a public seed,
without its key, so that students see the format.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np
from scipy import stats as scipy_stats

from entmax_book import stats

ROOT = Path(__file__).resolve().parents[1]
SPECIMEN = ROOT / "course" / "exam" / "specimen.md"


class Question(NamedTuple):
    """One exam question: its points, its text (Markdown) and its key (Markdown)."""

    points: int
    text: str
    key: str


def _vector(values, digits=3) -> str:
    return "(" + ", ".join(f"{v:.{digits}g}" if digits else f"{v:g}" for v in values) + ")"


def sparsemax_by_hand(rng: np.random.Generator) -> Question:
    """Sparsemax of four scores: the support, the threshold, the probabilities (Chapter 1)."""
    k = 0
    while k not in (2, 3):  # a support of one token, or of all four, makes the question trivial
        z = np.round(rng.uniform(-1, 1.5, size=4), 1)
        z[rng.integers(4)] = np.round(z.max() + rng.choice([0.2, 0.4, 0.6]), 1)  # a clear top score
        ordered = np.sort(z)[::-1]  # Chapter 1's sort-based threshold
        k = int(np.sum(1 + np.arange(1, 5) * ordered > np.cumsum(ordered)))
    tau = (ordered[:k].sum() - 1) / k
    p = np.clip(z - tau, 0, None)
    support = p > 0
    text = (
        f"For the scores $z = {_vector(z, 0)}$, compute $\\mathrm{{sparsemax}}(z)$ by hand: sort the "
        "scores, find the support size $k$, the threshold $\\tau$, and the probabilities. Which tokens get "
        "exactly zero, and why does softmax never give a zero?"
    )
    key = (
        f"Support size $k = {support.sum()}$, $\\tau = {tau:.4f}$, $p = {_vector(np.round(p, 4), 4)}$. "
        "Zero for every $z_i \\le \\tau$. Softmax's $e^{z_i} > 0$ for every finite score. "
        "(1 pt support, 1 pt τ, 1 pt p, 1 pt why)"
    )
    return Question(4, text, key)


def density_and_diversity(rng: np.random.Generator) -> Question:
    """Two heads' densities and their Jensen–Shannon divergence (Chapter 5, §5.4)."""
    while True:  # two sparse heads whose supports overlap but differ
        heads = []
        for _ in range(2):
            p = np.zeros(4)
            support = rng.choice(4, size=int(rng.choice([2, 3])), replace=False)
            p[support] = np.round(rng.dirichlet(np.ones(len(support)) * 2), 1)
            p[support[-1]] += 1 - p.sum()
            heads.append(np.round(p, 1) + 0.0)  # + 0.0: no "-0" on the paper
        p1, p2 = heads
        valid = min(p1.min(), p2.min()) >= 0 and max(p1.max(), p2.max()) < 1  # rounding can break it
        overlap = np.any((p1 > 0) & (p2 > 0))
        if valid and overlap and not np.array_equal(p1 > 0, p2 > 0):
            break
    mix = (p1 + p2) / 2
    h_mix, h1, h2 = (float(scipy_stats.entropy(p, base=2)) for p in (mix, p1, p2))
    js = h_mix - (h1 + h2) / 2
    text = (
        f"Two heads of one layer attend over the same 4 keys with $p_1 = {_vector(p1, 2)}$ and "
        f"$p_2 = {_vector(p2, 2)}$. (a) What is each head's density (the share of the keys that get "
        "non-zero weight)? (b) Compute their Jensen–Shannon divergence "
        "$\\mathrm{JS} = \\mathcal H(\\tfrac12 (p_1 + p_2)) - \\tfrac12 (\\mathcal H(p_1) + "
        "\\mathcal H(p_2))$, with entropies in base 2. What would it be if the two heads attended "
        "alike, and if they attended to disjoint keys?"
    )
    key = (
        f"(a) densities {int((p1 > 0).sum())}/4 and {int((p2 > 0).sum())}/4. (b) mixture "
        f"${_vector(mix, 3)}$, $\\mathcal H = {h_mix:.4f}$; $\\mathcal H(p_1) = {h1:.4f}$, "
        f"$\\mathcal H(p_2) = {h2:.4f}$; JS $= {js:.4f}$. 0 if alike, 1 if disjoint. "
        "(1 pt densities, 1 pt JS and its range)"
    )
    return Question(2, text, key)


def jacobian(rng: np.random.Generator) -> Question:
    """The Jacobian of α-entmax at a sparse point (Chapter 2)."""
    alpha = float(rng.choice([1.5, 2.0]))
    p = np.zeros(4)
    p[rng.choice(4, size=3, replace=False)] = np.round(rng.dirichlet(np.ones(3) * 3), 2)
    p[np.flatnonzero(p)[-1]] += 1 - p.sum()
    s = np.where(p > 0, p ** (2 - alpha), 0.0)
    J = np.diag(s) - np.outer(s, s) / s.sum()
    rows = " \\\\ ".join(" & ".join(f"{v:.3f}" for v in row) for row in J)
    text = (
        f"At $p = \\alpha\\text{{-entmax}}(z) = {_vector(p, 2)}$ with $\\alpha = {alpha:g}$, write the "
        "Jacobian $\\partial p / \\partial z$ in closed form and evaluate it. What are its row sums, and "
        "why are the row and the column of a token outside the support zero?"
    )
    key = (
        f"$J = \\mathrm{{diag}}(s) - s s^\\top / \\sum_j s_j$ with $s_i = p_i^{{2-\\alpha}}$ on the support, "
        f"0 off it: $J = \\begin{{pmatrix}} {rows} \\end{{pmatrix}}$. Row sums 0 "
        "(p stays on the simplex); "
        "a token outside the support stays at 0 for small changes of z. "
        "(1 pt formula, 1 pt values, 1 pt why)"
    )
    return Question(3, text, key)


def dilution(rng: np.random.Generator) -> Question:
    """How softmax's attention on the informative tokens shrinks with the length (Chapter 4)."""
    K, s = int(rng.choice([1, 2, 4])), float(rng.choice([1.0, 1.5, 2.0, 2.5]))
    L, target = int(rng.choice([16, 32, 64])), float(rng.choice([0.25, 0.5]))
    mass = K * np.exp(s) / (K * np.exp(s) + L - K)
    first = K + 1
    while K * np.exp(s) / (K * np.exp(s) + first - K) >= target:
        first += 1
    text = (
        f"A sequence of $L$ tokens has $K = {K}$ informative {'token' if K == 1 else 'tokens'} with score "
        f"$s = {s:g}$ and $L - K$ "
        f"distractors with score 0. What attention mass does softmax put "
        f"on the informative tokens at "
        f"$L = {L}$? From which $L$ on is it below {target:g}? "
        "What does sparsemax put on them when $s \\ge 1/K$, and why?"
    )
    key = (
        f"$K e^s / (K e^s + L - K) = {mass:.4f}$; below {target:g} from $L = {first}$ on; sparsemax puts all "
        f"of it (1) on them: with the $K$ tied top scores $s$ in the support, their probabilities "
        f"$s - \\tau$ add up to 1, so $\\tau = s - 1/K$ (here ${s:g} - 1/{K} = {s - 1 / K:g}$); a "
        f"distractor gets zero iff its score is $\\le \\tau$, i.e. at least $1/K$ below $s$: "
        f"$0 \\le s - 1/K$ holds for $s = {s:g} \\ge 1/{K}$. (1 pt each)"
    )
    return Question(3, text, key)


def paired_claims(rng: np.random.Generator) -> Question:
    """A paired interval over seeds, Holm's correction, 'not shown' is not 'equal' (Chapters 4, 5)."""
    n = 5
    base = np.round(rng.uniform(0.6, 0.8, size=n), 3)
    a = np.round(base + rng.normal(float(rng.choice([0.005, 0.02, 0.04])), 0.01, size=n), 3)
    c = stats.paired("A beats B", "exam", a, base)
    others = np.round([rng.uniform(0.015, 0.024), rng.uniform(0.026, 0.12)], 3)
    p_printed = float(f"{c.p:.2g}")  # Holm on the p the student reads, not on unrounded digits
    adjusted = stats.holm([p_printed, *others])
    t = scipy_stats.t.ppf(0.975, n - 1)
    text = (
        f"Models A and B were trained with the same {n} seeds. Accuracy of A: {_vector(a, 3)}; of B: "
        f"{_vector(base, 3)}. (a) Compute the per-seed differences, their mean and the 95 % t-interval "
        f"($t_{{0.975,{n - 1}}} = {t:.3f}$). (b) This comparison (claim 1) has the uncorrected p-value "
        f"{p_printed:g} and is tested together with claims 2 and 3, whose p-values are {others[0]:g} and "
        f"{others[1]:g} (both with effects in the claimed direction). "
        "Which claims hold at the 0.05 level after Holm's correction? (c) A colleague reads a claim that "
        "is not shown as 'the two models are equal'. What would you answer?"
    )
    signs = [c.mean > 0, True, True]  # a claim holds only with its effect in the claimed direction
    held = ", ".join(f"claim {i + 1}" for i, p in enumerate(adjusted) if p < 0.05 and signs[i]) or "none"
    if adjusted[0] < 0.05 and c.mean < 0:
        held += " (claim 1 is reversed: A is worse than B)"
    key = (
        f"(a) differences {_vector(np.round(a - base, 3), 3)}, mean {c.mean:.4f}, interval "
        f"[{c.low:.4f}, {c.high:.4f}] (1 pt). (b) Holm-adjusted p of claims 1–3: "
        f"{_vector(adjusted, 2)}; hold: {held} (2 pts). (c) Not shown only means the seeds cannot tell: "
        "the Holm-corrected p is not below 0.05 (the comparison's own interval may contain 0, or even "
        "exclude it before the correction); the interval still allows differences that matter; more "
        "seeds narrow it (1 pt)."
    )
    return Question(4, text, key)


def no_cost(rng: np.random.Generator) -> Question:
    """'No cost' as non-inferiority with a margin, and what the frozen-α control is for (Chapter 5)."""
    n, margin = 6, 0.5
    c = None
    while c is None or abs(c.low + margin) < 0.02:  # a verdict that rounding could flip is unfair
        d = np.round(rng.normal(float(rng.choice([-0.5, -0.2, 0.1])), 0.25, size=n), 2)
        c = stats.paired("no BLEU cost", "exam", d)
    t = scipy_stats.t.ppf(0.975, n - 1)
    text = (
        "A paper reports that learning α in every attention head costs no BLEU. Over "
        f"{n} seeds, the per-seed BLEU differences, learned α minus softmax, are $d = {_vector(d, 3)}$ "
        f"($t_{{0.975,{n - 1}}} = {t:.3f}$). (a) With a margin of {margin:g} BLEU fixed beforehand, is "
        "'no cost' shown? (b) The experiment also trains every model with each head's α frozen at its "
        "random start. What does comparing learned α with that control tell you that comparing it "
        "with softmax cannot?"
    )
    shown = c.low > -margin
    key = (
        f"(a) Mean {c.mean:.4f}, 95 % interval [{c.low:.4f}, {c.high:.4f}]; 'no cost' is shown iff "
        f"the whole interval lies above $-{margin:g}$: {'shown' if shown else 'not shown'} "
        f"(a non-significant difference would not be enough) (1 pt). (b) Whether *learning* α "
        "matters: a difference from softmax could come from sparse heads with varied α alone, "
        "which the frozen heads have too (1 pt)."
    )
    return Question(2, text, key)


def concepts(rng: np.random.Generator) -> Question:
    """Two short explanations (Chapters 2 and 3); the order of the pair is drawn."""
    pair = [
        (
            "Why does a key masked with a score of −∞ get exactly zero weight and zero gradient under "
            "α-entmax? What goes wrong if the mask instead adds a large negative number such as "
            "−10⁹ and every key of a row is masked (a padding query)?",
            "−∞ lies below every finite threshold τ, so p = 0, and p stays 0 for small changes of the "
            "scores, so its gradient is 0; with −10⁹ a fully masked row has equal scores, so it "
            "spreads its weight uniformly over keys that should get none (the library returns a "
            "row of zeros for a fully masked row, §3 masking)",
        ),
        (
            "Why can α be learned by gradient descent, although the support of α-entmax changes with α?",
            "the map is continuous in α and differentiable almost everywhere; "
            "Proposition 1 gives ∂p/∂α (§2.4)",
        ),
    ]
    pair = [pair[i] for i in rng.permutation(2)]
    text = " ".join(f"({'ab'[i]}) {q}" for i, (q, _) in enumerate(pair))
    key = " ".join(f"({'ab'[i]}) {k}." for i, (_, k) in enumerate(pair)) + " (1 pt each)"
    return Question(2, text, key)


QUESTIONS: list[Callable[[np.random.Generator], Question]] = [
    sparsemax_by_hand,
    density_and_diversity,
    jacobian,
    dilution,
    paired_claims,
    no_cost,
    concepts,
]


def paper(seed: int) -> list[Question]:
    """One paper: every question with its numbers drawn from ``seed``.

    Args:
        seed: the generator's seed (for a term: ``term_seed(term, "exam")``).

    Returns:
        The questions in order; their points add up to 20.

    Example:
        >>> sum(q.points for q in paper(0))
        20
    """
    rng = np.random.default_rng(seed)
    return [make(rng) for make in QUESTIONS]


def markdown(questions: list[Question], title: str, with_key: bool) -> str:
    """A paper (or its key) as Markdown.

    Args:
        questions: from :func:`paper`.
        title: the first heading.
        with_key: add each question's key under it.

    Returns:
        The Markdown text.
    """
    total = sum(q.points for q in questions)
    lines = [f"# {title}", "", f"90 minutes, {total} points, no notes; a calculator is allowed.", ""]
    for i, q in enumerate(questions, start=1):
        lines += [f"**Question {i}** ({q.points} points). {q.text}", ""]
        if with_key:
            lines += [f"> **Key.** {q.key}", ""]
    return "\n".join(lines)


def specimen() -> str:
    """The specimen paper of ``course/exam/specimen.md``: the format, from a public seed, no key."""
    note = (
        "*A specimen: the format of the written exam. Each term's paper has its own "
        "numbers, drawn from "
        "the instructor's term seed; its key is in the instructor's private bundle. "
        "Generated by `make course`.*"
    )
    text = markdown(paper(0), "The written exam (specimen)", with_key=False)
    return text.replace("\n\n", f"\n\n{note}\n\n", 1)
