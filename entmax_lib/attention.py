"""Multi-head attention with a pluggable normaliser: softmax, 1.5-entmax, sparsemax or learned α-entmax.

Scaled dot-product attention (Vaswani et al., 2017) normalises each row of scores
``s = q kᵀ/√d`` into a probability distribution over the keys. The Adaptively Sparse
Transformer (Correia, Niculae & Martins, 2019) replaces softmax with α-entmax,

    p = entmax_α(s) = argmax_{p ∈ Δ} pᵀs + H_α(p),

and learns one α per head (per layer and attention type) as α = 1 + sigmoid(a), clamped to
[1.01, 2] as in the authors' code. α = 1 is softmax (dense), α = 2 sparsemax (sparsest).

Two ways to use it:

* :func:`make_attention_fn` returns a function with the signature of
  ``flax.nnx.dot_product_attention``, to pass as ``attention_fn`` of
  ``flax.nnx.MultiHeadAttention`` (fixed α: flax owns no α parameter);
* :class:`EntmaxMultiHeadAttention` is a self-contained NNX module (query/key/value/out
  projections laid out as flax's) that owns its α parameters and can return its
  attention weights.

Masked keys (``mask`` False) get the score ``-inf``, which every ``entmax_lib`` map sends to
exactly zero weight (flax's default uses a large negative number instead).
"""

from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp
from flax import nnx

from entmax_lib.entmax import entmax15, entmax_bisect, softmax, sparsemax

__all__ = [
    "ALPHA_MAX",
    "ALPHA_MIN",
    "NORMALISERS",
    "EntmaxMultiHeadAttention",
    "alpha_from_logit",
    "attention_weights",
    "learns_alpha",
    "make_attention_fn",
    "normalise_scores",
]

#: The attention normalisers by name, each with its fixed α; ``None``: α is given per head
#: (learned, as in the Adaptively Sparse Transformer). The one table of names in the book.
NORMALISERS = {"softmax": 1.0, "entmax15": 1.5, "sparsemax": 2.0, "alpha_entmax": None}
ALPHA_MIN, ALPHA_MAX = 1.01, 2.0


def learns_alpha(normaliser: str) -> bool:
    """Whether the normaliser ``normaliser`` learns its α (one per head) rather than fixing it.

    Args:
      normaliser: a name of :data:`NORMALISERS`.

    Returns:
      True for "alpha_entmax", False for the maps with a fixed α.

    Example:
      >>> from entmax_lib.attention import learns_alpha
      >>> learns_alpha("alpha_entmax"), learns_alpha("softmax")
      (True, False)
    """
    _check_normaliser(normaliser)
    return NORMALISERS[normaliser] is None


def _check_normaliser(normaliser, alpha=None):
    if not isinstance(normaliser, str) or normaliser not in NORMALISERS:
        raise ValueError(f"normaliser must be one of {list(NORMALISERS)}, got {normaliser!r}.")
    if NORMALISERS[normaliser] is not None and alpha is not None:
        raise ValueError(
            f"alpha is only for normaliser 'alpha_entmax'; {normaliser!r} has the fixed "
            f"α = {NORMALISERS[normaliser]}, got alpha={alpha!r}."
        )


def _check_count(name, value, minimum=1, allow_none=False):
    if allow_none and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        expected = f"an integer >= {minimum}" + (" or None" if allow_none else "")
        raise ValueError(f"{name} must be {expected}, got {value!r}.")


def _check_mask(mask):
    """A boolean mask as a JAX array; an additive float mask (0 / -inf) is refused, not misread."""
    mask = jnp.asarray(mask)
    if mask.dtype != jnp.bool_:
        raise TypeError(
            f"mask must be boolean (True = may attend), got dtype {mask.dtype}. An additive mask "
            "of 0 and -inf (or -1e9) goes in bias; or pass the boolean mask itself."
        )
    return mask


def alpha_from_logit(logit):
    """α = clip(1 + sigmoid(a), 1.01, 2): the learned-α parametrisation of Correia et al. (2019).

    sigmoid keeps α in (1, 2); the clamp at 1.01 (from the authors' code) keeps the
    threshold search away from the α → 1 limit. Its gradient is zero only below a ≈ −4.6.

    Args:
      logit: the unconstrained parameter a, any shape.

    Returns:
      α with the shape of ``logit``.

    Example:
      >>> import jax.numpy as jnp
      >>> from entmax_lib.attention import alpha_from_logit
      >>> [round(v, 3) for v in alpha_from_logit(jnp.array([-10.0, 0.0, 10.0])).tolist()]
      [1.01, 1.5, 2.0]

    Reference:
      Correia, Niculae & Martins (2019), §3.3, https://arxiv.org/abs/1909.00015 .
    """
    return jnp.clip(1.0 + jax.nn.sigmoid(logit), ALPHA_MIN, ALPHA_MAX)


def normalise_scores(scores, normaliser, alpha=None, n_iter=None):
    """Normalise attention scores row-wise (last axis) into attention weights.

    Args:
      scores: (..., H, Lq, Lk) scores; ``-inf`` marks keys a query may not attend to
        ("alpha_entmax" needs the head axis: scores with fewer than 3 axes are an error).
      normaliser: "softmax", "entmax15" (exact), "sparsemax" (exact) or "alpha_entmax"
        (``entmax_bisect`` with one α per head, differentiable with respect to α).
      alpha: for "alpha_entmax" only: one α ≥ 1 per head, shape (H,), or a number.
      n_iter: for "alpha_entmax" only: the most steps of the threshold search (default: the
        library's, 25 in float32, 54 in float64).

    Returns:
      (..., H, Lq, Lk) weights, rows summing to 1 over the allowed keys, exactly 0 on
      masked keys; an all-masked row is all zeros.

    Example:
      >>> import jax.numpy as jnp
      >>> from entmax_lib.attention import normalise_scores
      >>> scores = jnp.array([[[[0.0, 1.0, 1.5, -jnp.inf]]]], jnp.float32)  # (1, H=1, 1, 4)
      >>> normalise_scores(scores, "sparsemax").tolist()
      [[[[0.0, 0.25, 0.75, 0.0]]]]
      >>> normalise_scores(scores, "alpha_entmax", alpha=jnp.array([2.0])).tolist()
      [[[[0.0, 0.25, 0.75, 0.0]]]]
    """
    _check_normaliser(normaliser, alpha)
    if normaliser == "softmax":
        return softmax(scores, axis=-1)
    if normaliser == "entmax15":
        return entmax15(scores, axis=-1)
    if normaliser == "sparsemax":
        return sparsemax(scores, axis=-1)
    if alpha is None:
        raise ValueError('normaliser "alpha_entmax" needs alpha: one value per head, shape (H,).')
    if jnp.ndim(scores) < 3:
        raise ValueError(
            'normaliser "alpha_entmax" needs scores of shape (..., H, Lq, Lk) (α is per head, axis -3), '
            f"got scores of shape {jnp.shape(scores)}."
        )
    alpha = jnp.asarray(alpha)
    if alpha.ndim == 0:
        alpha = jnp.broadcast_to(alpha, (scores.shape[-3],))
    if alpha.shape != (scores.shape[-3],):
        raise ValueError(f"alpha must have shape (num_heads,) = ({scores.shape[-3]},), got {alpha.shape}.")
    return entmax_bisect(scores, alpha=alpha[:, None, None], axis=-1, n_iter=n_iter)


def attention_weights(query, key, normaliser, alpha=None, mask=None, bias=None, precision=None, n_iter=None):
    """Attention weights p = normalise(q kᵀ/√d + bias) with masked keys at −inf.

    Args:
      query: (..., Lq, H, D).
      key: (..., Lk, H, D).
      normaliser, alpha, n_iter: see :func:`normalise_scores`.
      mask: boolean, broadcastable to (..., H, Lq, Lk); False = may not attend (a float
        mask is a ``TypeError``: an additive mask goes in ``bias``).
      bias: added to the scores, broadcastable to (..., H, Lq, Lk).
      precision: passed to the einsum.

    Returns:
      (..., H, Lq, Lk) weights in the query's dtype (computed in at least float32).

    Example:
      >>> import jax.numpy as jnp
      >>> from entmax_lib.attention import attention_weights
      >>> q = k = jnp.ones((3, 2, 4), jnp.float32)  # (L, H, D): every score is equal
      >>> causal = jnp.tril(jnp.ones((3, 3), bool))
      >>> weights = attention_weights(q, k, "entmax15", mask=causal)  # (H, Lq, Lk)
      >>> [[round(w, 3) for w in row] for row in weights[0].tolist()]  # head 0
      [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.333, 0.333, 0.333]]
    """
    if query.shape[-1] != key.shape[-1] or query.shape[-2] != key.shape[-2]:
        raise ValueError(f"query {query.shape} and key {key.shape} must agree on heads and depth.")
    depth = query.shape[-1]
    compute = jnp.promote_types(query.dtype, jnp.float32)
    scores = jnp.einsum("...qhd,...khd->...hqk", query, key, precision=precision).astype(compute)
    scores = scores / jnp.sqrt(jnp.asarray(depth, compute))
    if bias is not None:
        scores = scores + bias
    if mask is not None:
        scores = jnp.where(_check_mask(mask), scores, -jnp.inf)
    return normalise_scores(scores, normaliser, alpha, n_iter).astype(query.dtype)


def _dropout(weights, rate, key, broadcast=False):
    """Inverted dropout on attention weights: drop each with probability ``rate``, scale the rest
    by 1/(1 − rate). With ``broadcast`` one mask is shared over the leading (batch, head) axes."""
    keep_prob = 1.0 - rate
    shape = (1,) * (weights.ndim - 2) + weights.shape[-2:] if broadcast else weights.shape
    keep = jax.random.bernoulli(key, keep_prob, shape)
    return jnp.where(keep, weights / keep_prob, 0.0).astype(weights.dtype)


def make_attention_fn(normaliser, alpha=None, n_iter=None):
    """An ``attention_fn`` for ``flax.nnx.MultiHeadAttention`` with the given normaliser.

    The returned function has the signature of ``flax.nnx.dot_product_attention``
    (``query, key, value, bias=None, mask=None, broadcast_dropout=True, dropout_rng=None,
    dropout_rate=0.0, deterministic=False, dtype=None, precision=None, module=None,
    **kwargs``; flax ≥ 0.12 also passes ``is_causal``). Shapes: query (..., Lq, H, D),
    key/value (..., Lk, H, D) → output (..., Lq, H, D). As flax does, it sows the weights
    into ``nnx.Intermediate`` "attention_weights" when ``module`` is given
    (``sow_weights=True``) and applies dropout to the weights when not deterministic.

    Args:
      normaliser: one of :data:`NORMALISERS`.
      alpha: for "alpha_entmax": fixed α per head, shape (H,), or a number. flax's module
        owns no α, so it is a constant here; to *learn* α use
        :class:`EntmaxMultiHeadAttention`.
      n_iter: threshold-search iterations for "alpha_entmax" (see :func:`normalise_scores`).

    Returns:
      The attention function.

    Example:
      >>> import jax
      >>> from flax import nnx
      >>> from entmax_lib.attention import make_attention_fn
      >>> mha = nnx.MultiHeadAttention(2, 8, attention_fn=make_attention_fn("sparsemax"),
      ...                              decode=False, rngs=nnx.Rngs(0))
      >>> mha(jax.random.normal(jax.random.key(0), (1, 5, 8))).shape
      (1, 5, 8)
    """
    _check_normaliser(normaliser, alpha)
    if learns_alpha(normaliser) and alpha is None:
        raise ValueError('normaliser "alpha_entmax" needs alpha (one value per head).')
    _check_count("n_iter", n_iter, allow_none=True)

    def attention_fn(
        query,
        key,
        value,
        bias=None,
        mask=None,
        broadcast_dropout=True,
        dropout_rng=None,
        dropout_rate=0.0,
        deterministic=False,
        dtype=None,
        precision=None,
        module=None,
        is_causal=False,
        **kwargs,
    ):
        if dtype is not None:
            query, key, value = (x.astype(dtype) for x in (query, key, value))
        if is_causal:
            lq, lk = query.shape[-3], key.shape[-3]
            causal = jnp.tril(jnp.ones((lq, lk), bool))
            mask = causal if mask is None else jnp.logical_and(_check_mask(mask), causal)
        weights = attention_weights(query, key, normaliser, alpha, mask, bias, precision, n_iter)
        if module is not None:
            module.sow(nnx.Intermediate, "attention_weights", weights)
        if not deterministic and dropout_rate > 0.0:
            weights = _dropout(weights, dropout_rate, dropout_rng, broadcast_dropout)
        return jnp.einsum("...hqk,...khd->...qhd", weights, value, precision=precision)

    attention_fn.__name__ = f"{normaliser}_attention"
    return attention_fn


class EntmaxMultiHeadAttention(nnx.Module):
    """Multi-head attention whose normaliser is softmax, 1.5-entmax, sparsemax or learned α-entmax.

        head_h = normalise_h(Q_h K_hᵀ/√d) V_h,   out = Σ_h head_h W^O_h,

    with Q_h = x_q W^Q_h, K_h = x_kv W^K_h, V_h = x_kv W^V_h. Parameter names and shapes
    match ``flax.nnx.MultiHeadAttention`` (``query``, ``key``, ``value``: (in, H, D);
    ``out``: (H, D, out)), so weights can be copied between the two.

    With ``normaliser="alpha_entmax"`` the module owns one logit a_h per head
    (``alpha_logit``, an ``nnx.Param`` of shape (H,), a ~ N(0, 1) as in the authors'
    code) and α_h = clip(1 + sigmoid(a_h), 1.01, 2) (Correia et al., 2019).

    Args:
      num_heads: H, a positive integer.
      in_features: size of the inputs' last axis, a positive integer.
      normaliser: one of :data:`NORMALISERS`.
      qkv_features: H·D (default ``in_features``); must be divisible by H.
      out_features: output size (default ``in_features``).
      rngs: ``nnx.Rngs`` for the projections.
      alpha_rngs: ``nnx.Rngs`` for the α logits (default ``rngs``). A separate stream keeps
        every other weight identical to a softmax model built from the same ``rngs``.
      n_iter: threshold-search iterations for "alpha_entmax" (see :func:`normalise_scores`).
      dropout_rate: dropout on the attention weights in a call given a ``dropout_key``
        (training); without a key the layer is deterministic.

    Example:
      >>> import jax
      >>> from flax import nnx
      >>> from entmax_lib.attention import EntmaxMultiHeadAttention
      >>> layer = EntmaxMultiHeadAttention(2, 8, "alpha_entmax", rngs=nnx.Rngs(0))
      >>> out, weights = layer(jax.numpy.ones((1, 5, 8)), return_weights=True)
      >>> out.shape, weights.shape, layer.alpha().shape
      ((1, 5, 8), (1, 2, 5, 5), (2,))
    """

    def __init__(
        self,
        num_heads,
        in_features,
        normaliser="softmax",
        *,
        qkv_features=None,
        out_features=None,
        rngs,
        alpha_rngs=None,
        n_iter=None,
        dropout_rate=0.0,
    ):
        _check_normaliser(normaliser)
        _check_count("num_heads", num_heads)
        _check_count("in_features", in_features)
        _check_count("n_iter", n_iter, allow_none=True)
        qkv_features = in_features if qkv_features is None else qkv_features
        out_features = in_features if out_features is None else out_features
        _check_count("qkv_features", qkv_features)
        _check_count("out_features", out_features)
        if qkv_features % num_heads:
            raise ValueError(f"qkv_features={qkv_features} is not divisible by num_heads={num_heads}.")
        if isinstance(dropout_rate, bool) or not isinstance(dropout_rate, numbers.Real):
            raise ValueError(f"dropout_rate must be a number in [0, 1), got {dropout_rate!r}.")
        if not 0.0 <= dropout_rate < 1.0:
            raise ValueError(f"dropout_rate must be in [0, 1), got {dropout_rate!r}.")
        self.num_heads = num_heads
        self.head_dim = qkv_features // num_heads
        self.normaliser = normaliser
        self.n_iter = n_iter
        self.dropout_rate = float(dropout_rate)
        shape = (num_heads, self.head_dim)
        self.query = nnx.LinearGeneral(in_features, shape, rngs=rngs)
        self.key = nnx.LinearGeneral(in_features, shape, rngs=rngs)
        self.value = nnx.LinearGeneral(in_features, shape, rngs=rngs)
        self.out = nnx.LinearGeneral(shape, out_features, axis=(-2, -1), rngs=rngs)
        if learns_alpha(normaliser):
            key = (alpha_rngs or rngs).params()
            self.alpha_logit = nnx.Param(jax.random.normal(key, (num_heads,), jnp.float32))

    def alpha(self):
        """α per head, shape (H,): learned for "alpha_entmax", else 1, 1.5 or 2."""
        fixed = NORMALISERS[self.normaliser]
        if fixed is None:
            return alpha_from_logit(self.alpha_logit[...])
        return jnp.full((self.num_heads,), fixed, jnp.float32)

    def project_kv(self, inputs_kv):
        """Keys and values (..., Lk, H, D) of ``inputs_kv`` (..., Lk, F): cacheable for decoding."""
        return self.key(inputs_kv), self.value(inputs_kv)

    def attend(self, inputs_q, key, value, mask=None, return_weights=False, dropout_key=None):
        """Attention of ``inputs_q`` (..., Lq, F) over precomputed ``key``/``value`` (..., Lk, H, D).

        With a ``dropout_key`` the weights that mix the values are dropped out at
        ``dropout_rate``; the weights returned are those before dropout (what analyses measure).
        """
        alpha = self.alpha() if learns_alpha(self.normaliser) else None
        weights = attention_weights(
            self.query(inputs_q), key, self.normaliser, alpha, mask, n_iter=self.n_iter
        )
        mixing = weights
        if dropout_key is not None and self.dropout_rate > 0.0:
            mixing = _dropout(weights, self.dropout_rate, dropout_key)
        out = self.out(jnp.einsum("...hqk,...khd->...qhd", mixing, value))
        return (out, weights) if return_weights else out

    def __call__(self, inputs_q, inputs_kv=None, mask=None, return_weights=False, dropout_key=None):
        """Attend from ``inputs_q`` (..., Lq, F) to ``inputs_kv`` (..., Lk, F) (default: self-attention).

        Args:
          mask: boolean, broadcastable to (..., H, Lq, Lk); False = may not attend
            (padding, future tokens). Masked keys get exactly zero weight.
          return_weights: also return the attention weights (..., H, Lq, Lk).
          dropout_key: a JAX PRNG key for a training pass with dropout on the weights
            (``dropout_rate``); None (default): deterministic.

        Returns:
          (..., Lq, out_features), and the weights if ``return_weights``.
        """
        key, value = self.project_kv(inputs_q if inputs_kv is None else inputs_kv)
        return self.attend(inputs_q, key, value, mask, return_weights, dropout_key)
