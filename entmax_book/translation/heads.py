"""The paper's task-specific head scores: positional, subword-merging and interrogation heads, and alignment.

Correia, Niculae & Martins (2019, §5.2) look for heads that specialise: heads that attend to
the previous or next token (positional), heads that join the pieces of a word (BPE merging),
and a head on which interrogative words attend to the question mark. Beyond the paper, context
attention is scored against gold word alignments. The generic measures (density, support,
entropy, head diversity) are the library's (:mod:`entmax_lib.metrics`).

All functions take NumPy (or JAX) arrays of attention weights (..., Lq, Lk) and return floats,
means over every leading axis; for one score per head, call them on ``attn[:, h]``.

Reference: Correia, Niculae & Martins (2019), Adaptively Sparse Transformers, §5,
https://arxiv.org/abs/1909.00015
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "alignment_agreement",
    "interrogation_score",
    "positional_confidence",
    "subword_merging_score",
    "top_key_share",
]


def _mean(values: np.ndarray, what: str) -> float:
    values = np.asarray(values, np.float64)
    if values.size == 0:
        raise ValueError(f"no {what} to average over")
    return float(values.mean())


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
      >>> from entmax_book.translation.heads import positional_confidence
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
      >>> from entmax_book.translation.heads import subword_merging_score
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
      >>> from entmax_book.translation.heads import interrogation_score
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
      >>> from entmax_book.translation.heads import alignment_agreement
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


def top_key_share(attn, query_valid, key_valid=None) -> float:
    """How much a head parks on one key: the weight of a sentence's most-attended key, averaged.

    For each sentence n, the mean weight its valid queries put on each key,
    m_nk = mean_{q valid} attn[n, q, k]; the sentence's top-key share is max_k m_nk; the result
    is the mean over sentences. A head that sends every query to one key (an attention *sink*)
    scores near 1; a head spread evenly over L keys scores about 1/L; a positional head (each
    query on a different key) scores low too. Per sentence, not over the whole split: a maximum
    over every (sentence, key) pair would pick the luckiest sentence, and every head would look
    like a sink.

    Args:
      attn: (N, Lq, Lk) attention weights of one head.
      query_valid: bool (N, Lq), the queries that count.
      key_valid: bool (N, Lk), the keys that count (default: all).

    Returns:
      the mean over sentences with a valid query of the top-key share.

    Example:
      >>> import numpy as np
      >>> sink = np.zeros((1, 3, 3)); sink[..., 2] = 1.0  # every query on the last key
      >>> spread = np.full((1, 3, 3), 1 / 3)
      >>> valid = np.ones((1, 3), bool)
      >>> top_key_share(sink, valid), round(top_key_share(spread, valid), 4)
      (1.0, 0.3333)
    """
    attn = np.asarray(attn, np.float64)
    query_valid = np.asarray(query_valid, bool)
    if key_valid is not None:
        attn = np.where(np.asarray(key_valid, bool)[:, None, :], attn, 0.0)
    counted = query_valid.sum(-1)
    per_key = (attn * query_valid[..., None]).sum(1) / np.maximum(counted, 1)[:, None]  # (N, Lk)
    return _mean(per_key.max(-1)[counted > 0], "sentences with a valid query")
