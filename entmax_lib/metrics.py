"""Attention analyses of Correia, Niculae & Martins (2019, §5).

All functions take NumPy (or JAX) arrays and return NumPy values or floats. An attention array
has shape (..., Lq, Lk): row ``[..., q, :]`` holds the weights query q puts on the Lk keys and sums
to 1 over the keys it may attend to. Masks say which (query, key) pairs are allowed (``allowed``)
or which queries/keys are real tokens rather than padding (``query_valid``, ``key_valid``).

Head-level scores (positional, subword-merging, interrogation) are means over every leading axis;
for one score per head, call them on ``attn[:, h]``.

Definitions (Correia, Niculae & Martins, 2019, §5, https://arxiv.org/abs/1909.00015):

- density of a row = #{allowed keys with weight > 0} / #{allowed keys} (softmax: always 1);
- head diversity = JS = H(mean_h p_h) − mean_h H(p_h) with Shannon entropy in base H (the number
  of heads), so 0 ≤ JS ≤ 1; averaged over queries;
- positional confidence = mean weight on key q + offset (offset −1: previous token, +1: next);
- subword-merging score of a word's cluster C of pieces: max_{i∈C} Σ_{j∈C, j≠i} p_ij if |C| > 1,
  p_ii if |C| = 1; averaged over clusters;
- interrogation score = mean weight that interrogative words put on "?";
- (beyond the paper) agreement of context attention with gold word alignments.

BLEU and chrF, which score translations rather than attention, are in the book's experiment
package (``entmax_book.translation.scoring``).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "alignment_agreement",
    "attention_density",
    "head_diversity",
    "interrogation_score",
    "positional_confidence",
    "subword_merging_score",
]


def _mean(values: np.ndarray, what: str) -> float:
    values = np.asarray(values, np.float64)
    if values.size == 0:
        raise ValueError(f"no {what} to average over")
    return float(values.mean())


def attention_density(attn, allowed, threshold: float = 0.0) -> np.ndarray:
    """Fraction of allowed keys that receive weight, per query row.

    density[..., q] = #{k : allowed[..., q, k] and attn[..., q, k] > threshold} / #{k : allowed[..., q, k]}

    ``attn`` (..., Lq, Lk); ``allowed`` bool, broadcastable to it (e.g. the source padding mask for
    encoder self-attention and context attention, the causal mask for decoder self-attention).
    With the default threshold 0, softmax gives 1 unless a weight underflows to exactly 0 in
    floating point; entmax gives < 1 when it zeroes keys out.

    Args:
      attn: (..., Lq, Lk) attention weights.
      allowed: bool, broadcastable to ``attn``: which keys each query may attend to.
      threshold: weights at or below it count as zero.

    Returns:
      (..., Lq) floats, NaN for rows with no allowed key (padding queries): average with
      ``np.nanmean``.

    Example:
      >>> import numpy as np
      >>> from entmax_lib.metrics import attention_density
      >>> row = np.array([[0.6, 0.3, 0.1, 0.0, 0.0, 0.0]])
      >>> attention_density(row, np.arange(6) < 5).tolist()  # 3 of 5 allowed keys
      [0.6]
    """
    attn = np.asarray(attn)
    allowed = np.broadcast_to(np.asarray(allowed, bool), attn.shape)
    n_allowed = allowed.sum(-1)
    n_nonzero = (allowed & (attn > threshold)).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n_allowed > 0, n_nonzero / np.maximum(n_allowed, 1), np.nan)


def _entropy(p: np.ndarray, base: float) -> np.ndarray:
    """Shannon entropy along the last axis, with 0 log 0 = 0, in the given log base."""
    positive = p > 0
    logs = np.log(np.where(positive, p, 1.0))
    return -(np.where(positive, p * logs, 0.0)).sum(-1) / np.log(base)


def head_diversity(attn_heads, allowed=None, query_valid=None) -> float:
    """Jensen-Shannon divergence between the H heads of one attention layer, averaged over queries.

    JS(q) = H(p̄_q) − (1/H) Σ_h H(p_{h,q}),  p̄_q = (1/H) Σ_h p_{h,q},  entropies in log base H,

    so 0 ≤ JS ≤ 1: 0 when all heads agree, 1 when H heads put all their weight on H different keys.
    ``attn_heads`` (..., H, Lq, Lk), heads on axis −3 (e.g. (B, H, Lq, Lk)). A query counts if it
    has an allowed key (``allowed``: (..., Lq, Lk) or (..., H, Lq, Lk), default all) and, if given,
    ``query_valid`` (..., Lq) is True there. Weights on disallowed keys are treated as 0.

    Args:
      attn_heads: (..., H, Lq, Lk) attention weights of the H heads of one layer.
      allowed: bool, (..., Lq, Lk) or (..., H, Lq, Lk); default all keys.
      query_valid: bool (..., Lq), optional.

    Returns:
      The mean JS over counted queries, in [0, 1].

    Example:
      >>> import numpy as np
      >>> from entmax_lib.metrics import head_diversity
      >>> apart = np.array([[[1.0, 0.0]], [[0.0, 1.0]]])  # (H=2, Lq=1, Lk=2)
      >>> head_diversity(apart), head_diversity(np.full((2, 1, 2), 0.5))
      (1.0, 0.0)
    """
    attn = np.asarray(attn_heads, np.float64)
    if attn.ndim < 3:
        raise ValueError(f"attn_heads must have shape (..., H, Lq, Lk), got {attn.shape}")
    n_heads = attn.shape[-3]
    if n_heads < 2:
        raise ValueError("head diversity needs at least 2 heads")
    if allowed is None:
        allowed = np.ones(attn.shape[-2:], bool)
    allowed = np.asarray(allowed, bool)
    if allowed.ndim < attn.ndim:
        allowed = np.expand_dims(allowed, -3)
    allowed = np.broadcast_to(allowed, attn.shape)
    attn = np.where(allowed, attn, 0.0)
    js = _entropy(attn.mean(-3), n_heads) - _entropy(attn, n_heads).mean(-2)  # (..., Lq)
    counted = allowed.any(-1).any(-2)
    if query_valid is not None:
        counted = counted & np.asarray(query_valid, bool)
    return _mean(js[np.broadcast_to(counted, js.shape)], "valid queries")


def positional_confidence(attn, offset: int, query_valid, key_valid=None) -> float:
    """Mean attention weight a query puts on the token ``offset`` positions away.

    confidence = mean over counted queries q of attn[..., q, q + offset]; offset −1 is the previous
    token, +1 the next. Self-attention only (queries and keys index the same sequence).
    ``attn`` (..., L, L); ``query_valid`` (..., L) bool. A query counts if it is valid, q + offset
    lies inside [0, L) and, if ``key_valid`` (..., L) is given, the key q + offset is valid.
    The paper calls a head positional when this is high (median 93.5–95.9 % over such heads).

    Args:
      attn: (..., L, L) self-attention weights.
      offset: −1 for the previous token, +1 for the next.
      query_valid: bool (..., L).
      key_valid: bool (..., L), optional.

    Returns:
      The mean weight on the key at ``offset``.

    Example:
      >>> import numpy as np
      >>> from entmax_lib.metrics import positional_confidence
      >>> previous = np.eye(4, k=-1)  # each token attends to the one before it
      >>> positional_confidence(previous, -1, np.ones(4, bool))
      1.0
    """
    attn = np.asarray(attn, np.float64)
    length = attn.shape[-1]
    if attn.shape[-2] != length:
        raise ValueError(f"positional confidence needs self-attention (L, L), got {attn.shape[-2:]}")
    query_valid = np.broadcast_to(np.asarray(query_valid, bool), attn.shape[:-1])
    queries = np.arange(length)
    keys = np.clip(queries + offset, 0, length - 1)
    weights = attn[..., queries, keys]  # (..., L): weight of query q on key q + offset
    counted = query_valid & (queries + offset >= 0) & (queries + offset < length)
    if key_valid is not None:
        key_valid = np.broadcast_to(np.asarray(key_valid, bool), attn.shape[:-1])
        counted = counted & key_valid[..., keys]
    return _mean(weights[counted], "valid queries")


def subword_merging_score(attn, word_ids, include_single: bool = True) -> float:
    """How much a head joins the pieces of a word: the paper's BPE-merging score.

    For each word split into the cluster C of pieces,
        score(C) = max_{i∈C} Σ_{j∈C, j≠i} p_ij   if |C| > 1,     score(C) = p_ii   if |C| = 1,
    and the result is the mean of score(C) over all clusters (of all sentences and leading axes).
    ``attn`` (..., L, L) self-attention; ``word_ids`` (..., L) word index of each position,
    negative for positions outside any word (EOS, padding). With ``include_single=False`` only
    clusters of ≥ 2 pieces count.

    Args:
      attn: (..., L, L) self-attention weights.
      word_ids: int (..., L), the word of each piece (negative: none).
      include_single: also average in single-piece words (score p_ii), as the paper does.

    Returns:
      The mean cluster score.

    Example:
      >>> import numpy as np
      >>> from entmax_lib.metrics import subword_merging_score
      >>> attn = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
      >>> subword_merging_score(attn, np.array([0, 0, 1]))  # pieces 0-1 look at each other
      1.0
    """
    attn = np.asarray(attn, np.float64)
    length = attn.shape[-1]
    if attn.shape[-2] != length:
        raise ValueError(f"subword merging needs self-attention (L, L), got {attn.shape[-2:]}")
    word_ids = np.broadcast_to(np.asarray(word_ids), attn.shape[:-1])
    same = (word_ids[..., :, None] == word_ids[..., None, :]) & (word_ids[..., :, None] >= 0)
    eye = np.eye(length, dtype=bool)
    size = same.sum(-1)  # |C| of each position's cluster
    to_others = np.where(same & ~eye, attn, 0.0).sum(-1)
    to_self = np.diagonal(attn, axis1=-2, axis2=-1)
    per_piece = np.where(size > 1, to_others, to_self)  # (..., L)
    scores = []
    n_words = int(word_ids.max(initial=-1)) + 1
    for word in range(n_words):
        member = word_ids == word
        present = member.any(-1)
        cluster_score = np.where(member, per_piece, -np.inf).max(-1)
        keep = present & (include_single | (member.sum(-1) > 1))
        scores.append(cluster_score[keep])
    return _mean(np.concatenate(scores) if scores else np.zeros(0), "word clusters")


def interrogation_score(attn, question_mask, interrogative_mask) -> float:
    """Mean attention weight interrogative words put on the question mark.

    score = mean over query positions q with interrogative_mask[..., q] of
            Σ_k attn[..., q, k] · question_mask[..., k].
    ``attn`` (..., L, L) encoder self-attention; ``question_mask`` (..., L) True at "?" pieces;
    ``interrogative_mask`` (..., L) True at pieces of interrogative words (what, who, where, ...).
    The paper's interrogation head scores 98.5 % (softmax) to 99.5 % (α-entmax).

    Args:
      attn: (..., L, L) encoder self-attention weights.
      question_mask: bool (..., L), True at "?".
      interrogative_mask: bool (..., L), True at interrogative words.

    Returns:
      The mean weight on "?".

    Example:
      >>> import numpy as np
      >>> from entmax_lib.metrics import interrogation_score
      >>> attn = np.array([[0.2, 0.0, 0.8], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])  # "what is ?"
      >>> interrogation_score(attn, np.array([0, 0, 1], bool), np.array([1, 0, 0], bool))
      0.8
    """
    attn = np.asarray(attn, np.float64)
    question = np.broadcast_to(np.asarray(question_mask, bool), attn.shape[:-1])
    queries = np.broadcast_to(np.asarray(interrogative_mask, bool), attn.shape[:-1])
    on_question = (attn * question[..., None, :]).sum(-1)
    return _mean(on_question[queries], "interrogative queries")


def alignment_agreement(cross_attn, gold_align) -> dict[str, float]:
    """How well context (encoder-decoder) attention matches gold word alignments.

    ``cross_attn`` (..., T, S): one head, or an average over heads; ``gold_align`` (..., T, S) 0/1
    (e.g. gold word alignments expanded to subword pieces). Only target rows
    with at least one gold link count (unaligned words, EOS and padding are ignored). Returns

    - ``gold_mass``: mean over counted rows of Σ_s p_ts·gold_ts, the attention on aligned pieces;
    - ``precision``, ``recall``: of the argmax alignment A = {(t, argmax_s p_ts)} against the gold
      links G over counted rows: |A∩G| / |A| and |A∩G| / |G|;
    - ``aer``: alignment error rate 1 − 2|A∩G| / (|A| + |G|) (Och & Ney, 2003, with every gold
      link "sure");
    - ``rows``: the number of counted rows.

    Example:
      >>> import numpy as np
      >>> from entmax_lib.metrics import alignment_agreement
      >>> gold = np.eye(3)  # word t of the target is aligned to word t of the source
      >>> alignment_agreement(0.9 * gold + 0.05 * (1 - gold), gold)["aer"]
      0.0
    """
    attn = np.asarray(cross_attn, np.float64)
    gold = np.broadcast_to(np.asarray(gold_align) > 0, attn.shape)
    rows = gold.any(-1)
    n_rows = int(rows.sum())
    if n_rows == 0:
        raise ValueError("no target position has a gold alignment")
    mass = (attn * gold).sum(-1)[rows]
    best = attn.argmax(-1)
    hit = np.take_along_axis(gold, best[..., None], -1)[..., 0][rows]
    n_hits, n_gold = float(hit.sum()), float(gold[rows].sum())
    return {
        "gold_mass": float(mass.mean()),
        "precision": n_hits / n_rows,
        "recall": n_hits / n_gold,
        "aer": 1.0 - 2.0 * n_hits / (n_rows + n_gold),
        "rows": n_rows,
    }
