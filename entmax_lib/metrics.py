"""Attention analyses any user of sparse attention needs: density, support, entropy, head diversity.

All functions take NumPy (or JAX) arrays and return NumPy values or floats. An attention array
has shape (..., Lq, Lk): row ``[..., q, :]`` holds the weights query q puts on the Lk keys and sums
to 1 over the keys it may attend to. Masks say which (query, key) pairs are allowed (``allowed``)
or which queries are real tokens rather than padding (``query_valid``).

Definitions (Correia, Niculae & Martins, 2019, §5, https://arxiv.org/abs/1909.00015):

- support of a row = #{allowed keys with weight > 0}; density = support / #{allowed keys}
  (softmax: always 1);
- entropy of a row = −Σ_k p_k log p_k (nats), with 0 log 0 = 0;
- head diversity = JS = H(mean_h p_h) − mean_h H(p_h) with Shannon entropy in base H (the number
  of heads), so 0 ≤ JS ≤ 1; averaged over queries.

The paper's task-specific head scores (positional, subword-merging, interrogation heads) and
BLEU/chrF are in the book's translation experiment (``entmax_book.translation.heads`` and
``entmax_book.translation.scoring``).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "attention_density",
    "attention_entropy",
    "head_diversity",
    "support_size",
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


def support_size(attn, allowed=True) -> np.ndarray:
    """Number of allowed keys with non-zero weight, per query row.

    support[..., q] = #{k : allowed[..., q, k] and attn[..., q, k] > 0}.

    Args:
      attn: (..., Lq, Lk) attention weights.
      allowed: bool, broadcastable to ``attn`` (default: every key).

    Returns:
      (..., Lq) integers.

    Example:
      >>> import numpy as np
      >>> from entmax_lib.metrics import support_size
      >>> support_size(np.array([[0.6, 0.4, 0.0], [1.0, 0.0, 0.0]])).tolist()
      [2, 1]
    """
    attn = np.asarray(attn)
    allowed = np.broadcast_to(np.asarray(allowed, bool), attn.shape)
    return (allowed & (attn > 0)).sum(-1)


def attention_entropy(attn, allowed=True) -> np.ndarray:
    """Shannon entropy (nats) of each query row over its allowed keys, with 0 log 0 = 0.

    H[..., q] = −Σ_{k allowed} p_qk log p_qk: log Lk for uniform weights, 0 for one key.

    Args:
      attn: (..., Lq, Lk) attention weights.
      allowed: bool, broadcastable to ``attn`` (default: every key); other keys count as 0.

    Returns:
      (..., Lq) floats.

    Example:
      >>> import numpy as np
      >>> from entmax_lib.metrics import attention_entropy
      >>> np.round(attention_entropy(np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])), 4).tolist()
      [0.6931, 0.0]
    """
    attn = np.asarray(attn, np.float64)
    allowed = np.broadcast_to(np.asarray(allowed, bool), attn.shape)
    return _entropy(np.where(allowed, attn, 0.0), np.e) + 0.0  # + 0.0 turns a one-hot row's −0.0 into 0.0


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
