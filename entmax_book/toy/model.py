"""The toy's model: the qjax demo's single-head attention-pooling classifier.

Parameters W_k, W_v (d × d), a query w (d), W_o (d × C) and b_o (C):

    s_j = x_jᵀ W_k w / √d,   a = entmax_α(s),   c = Σ_j a_j W_vᵀ x_j,   logits = W_oᵀ c + b_o,

where entmax_α is :func:`entmax_lib.entmax_bisect` (α = 1 softmax, 1.5 1.5-entmax, 2
sparsemax). The four variants are the library's normalisers
(:data:`entmax_lib.attention.NORMALISERS`): three fixed α and "alpha_entmax", whose α is
learned, α = 1.1 + 1.7 · sigmoid(a) ∈ (1.1, 2.8) (:func:`learned_alpha`).

**Numerics.** With ``gradient="autodiff"`` (the default of
:class:`~entmax_book.toy.config.ToyConfig`) every map with α ≠ 1 is computed as the demo
computes it, by 25 bisection steps (:func:`bisection_entmax`), and differentiated by autodiff
through the loop, for the scores and for α alike. ``gradient="closed_form"`` uses
:func:`entmax_lib.entmax_bisect` and its exact derivative rules instead.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp

from entmax_book.toy.config import LEARNED_ALPHA_MIN, LEARNED_ALPHA_SPAN, ToyConfig, logit_for_alpha
from entmax_lib import entmax_bisect
from entmax_lib.attention import NORMALISERS, learns_alpha

__all__ = ["bisection_entmax", "forward", "init_params", "learned_alpha", "scores", "variant_alpha"]


def learned_alpha(logit):
    """The learned α of a logit a: α = 1.1 + 1.7 · sigmoid(a) ∈ (1.1, 2.8).

    >>> round(float(learned_alpha(-1.0)), 4)
    1.5572
    """
    return LEARNED_ALPHA_MIN + LEARNED_ALPHA_SPAN * jax.nn.sigmoid(logit)


def init_params(seed: int, config: ToyConfig = ToyConfig()) -> dict:
    """Initial parameters of one model, as in the demo: every weight N(0, 1)/√d, b_o = 0.

    The query is additionally multiplied by ``config.query_scale`` (the initial score scale);
    the α logit starts at ``config.alpha_init``.

    Returns:
      {"keys": (d, d), "values": (d, d), "query": (d,), "readout": (d, C),
      "readout_bias": (C,), "alpha_logit": ()} float32 JAX arrays; ``alpha_logit`` is used
      only by the learned variant (:func:`learned_alpha`).

    >>> init_params(0)["keys"].shape
    (8, 8)
    """
    d, c = config.dim, config.n_classes
    k_keys, k_values, k_query, k_out = jax.random.split(jax.random.key(seed), 4)
    scale = 1.0 / math.sqrt(d)
    normal = functools.partial(jax.random.normal, dtype=jnp.float32)
    return {
        "keys": normal(k_keys, (d, d)) * scale,
        "values": normal(k_values, (d, d)) * scale,
        "query": normal(k_query, (d,)) * (scale * config.query_scale),
        "readout": normal(k_out, (d, c)) * scale,
        "readout_bias": jnp.zeros((c,), jnp.float32),
        "alpha_logit": jnp.asarray(logit_for_alpha(config.alpha_init), jnp.float32),
    }


def scores(params, tokens, score_norm=None):
    """Attention scores z = X w̃, shape (…, L) for tokens (…, L, d), with the effective query
    w̃ = W_k w / √d.

    With ``score_norm``, w̃ is rescaled to that norm, so the score scale is fixed and only its
    direction is learned (fixing |w| alone would not fix it: W_k could grow).
    """
    effective_query = params["keys"] @ params["query"] / math.sqrt(params["query"].shape[-1])
    if score_norm is not None:
        effective_query = score_norm * effective_query / jnp.linalg.norm(effective_query)
    return tokens @ effective_query


def bisection_entmax(z, alpha, n_iter: int = 25):
    """entmax_α along the last axis by ``n_iter`` halvings, differentiated by autodiff (α > 1).

    The demo's way: τ is bisected in [max(x) − 1, max(x)], x = (α − 1) z, then
    p = [x − τ]_+^{1/(α−1)} is renormalised. Reverse-mode autodiff goes through the loop, so
    its ∂p/∂α is not the implicit derivative (the comparisons carry no gradient); kept to check
    what that changes against the library's closed form.
    """
    x = (alpha - 1.0) * z
    top = jnp.max(x, axis=-1, keepdims=True)

    def unnormalised(tau):
        base = x - tau
        on = base > 0
        return jnp.where(on, jnp.where(on, base, 1.0) ** (1.0 / (alpha - 1.0)), 0.0)

    def halve(_, bracket):
        lo, hi = bracket
        mid = 0.5 * (lo + hi)
        too_much = jnp.sum(unnormalised(mid), axis=-1, keepdims=True) > 1.0
        return jnp.where(too_much, mid, lo), jnp.where(too_much, hi, mid)

    lo, hi = jax.lax.fori_loop(0, n_iter, halve, (top - 1.0, top))
    p = unnormalised(0.5 * (lo + hi))
    return p / jnp.sum(p, axis=-1, keepdims=True)


def _attention_map(s, alpha, gradient):
    if gradient == "autodiff" and not (isinstance(alpha, float) and alpha == 1.0):
        return bisection_entmax(s, alpha)
    return entmax_bisect(s, alpha, axis=-1)


def forward(params, tokens, alpha, score_norm=None, gradient="closed_form"):
    """Class logits (…, C) and attention (…, L) of one model for tokens (…, L, d).

    Args:
      params: a dict of :func:`init_params`.
      tokens: (…, L, d).
      alpha: the α of the attention map (a Python float, or a traced scalar).
      score_norm: see :func:`scores`.
      gradient: ``"closed_form"`` (:func:`entmax_lib.entmax_bisect`) or ``"autodiff"``
        (:func:`bisection_entmax` for α ≠ 1).
    """
    attn = _attention_map(scores(params, tokens, score_norm), alpha, gradient)
    context = jnp.einsum("...l,...ld->...d", attn, tokens) @ params["values"]
    return context @ params["readout"] + params["readout_bias"], attn


def variant_alpha(variant: str, params):
    """The α of ``variant``'s attention map: its fixed α, or the learned α of ``params``.

    Args:
      variant: a name of :data:`entmax_lib.attention.NORMALISERS`.
      params: a dict of :func:`init_params` (its ``alpha_logit`` is read for "alpha_entmax").

    Returns:
      a Python float for a fixed map, a JAX scalar for the learned one.

    >>> variant_alpha("sparsemax", {}), round(float(variant_alpha("alpha_entmax", init_params(0))), 4)
    (2.0, 1.5572)
    """
    if learns_alpha(variant):
        return learned_alpha(params["alpha_logit"])
    return NORMALISERS[variant]
