"""Translation quality: corpus BLEU and chrF with sacrebleu, on already tokenised text.

The corpus sentences are tokenised by construction (words and punctuation separated by single
spaces), as are the model's translations, so BLEU is *tokenised* BLEU, the kind Correia et al.
(2019) report: sacrebleu scores the text as it is (``tokenize="none"``) instead of applying its
13a tokeniser meant for detokenised text, and its check for undetokenised input is turned off
(``force=True``), so that no warning is printed. On the generated corpus the 13a tokeniser leaves
every sentence unchanged, so both give the same score.

References:
  Papineni et al. (2002), BLEU: https://aclanthology.org/P02-1040/ ;
  Popović (2015), chrF: https://aclanthology.org/W15-3049/ ;
  Post (2018), sacrebleu: https://aclanthology.org/W18-6319/ .
"""

from __future__ import annotations

import sacrebleu

__all__ = ["corpus_bleu", "corpus_chrf"]


def _check_corpus(hyps, refs) -> tuple[list[str], list[str]]:
    hyps, refs = list(hyps), list(refs)
    if len(hyps) != len(refs):
        raise ValueError(f"{len(hyps)} hypotheses but {len(refs)} references")
    if not hyps:
        raise ValueError("empty corpus")
    return hyps, refs


def corpus_bleu(hyps: list[str], refs: list[str]) -> float:
    """Corpus BLEU (0–100) of tokenised hypotheses against one tokenised reference each.

    BLEU = BP · exp(Σ_{n=1..4} ¼ log p_n), p_n the clipped n-gram precision over the corpus and
    BP = min(1, exp(1 − r/c)) the brevity penalty (c, r: hypothesis and reference lengths in
    tokens). Tokens are the space-separated words as given (sacrebleu, ``tokenize="none"``).

    Args:
      hyps: one translation per sentence.
      refs: one reference per sentence.

    Returns:
      the score, 0–100.

    >>> round(corpus_bleu(["der Hund schläft ."], ["der Hund schläft ."]), 1)
    100.0
    """
    hyps, refs = _check_corpus(hyps, refs)
    return float(sacrebleu.corpus_bleu(hyps, [refs], tokenize="none", force=True).score)


def corpus_chrf(hyps: list[str], refs: list[str]) -> float:
    """Corpus chrF (0–100): character n-gram F-score, sacrebleu's defaults.

    chrF = (1 + β²) · P · R / (β² · P + R) with P and R the character n-gram precision and recall
    averaged over n = 1..6, β = 2; spaces are ignored.

    Args:
      hyps: one translation per sentence.
      refs: one reference per sentence.

    Returns:
      the score, 0–100.

    >>> round(corpus_chrf(["der Hund schläft ."], ["der Hund schläft ."]), 1)
    100.0
    """
    hyps, refs = _check_corpus(hyps, refs)
    return float(sacrebleu.corpus_chrf(hyps, [refs]).score)
