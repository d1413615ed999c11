"""A small encoder–decoder Transformer whose attention heads use softmax, 1.5-entmax or learned α-entmax.

The architecture is the Transformer of Vaswani et al. (2017) in its pre-LN form (layer norm
before each sub-layer, which trains without a long warm-up), shrunk to a few layers, with
sinusoidal positions and one embedding matrix shared by source, target and output (the
vocabulary is a joint BPE). It has the three attention types the Adaptively Sparse
Transformer (Correia, Niculae & Martins, 2019) gives their own α per layer and head:

* ``encoder_self``: source positions attend to source positions (padding masked);
* ``context``: target positions attend to the encoder output (padding masked);
* ``decoder_self``: target positions attend to earlier target positions (causal).

Every attention is an :class:`~entmax_lib.attention.EntmaxMultiHeadAttention`; with
``normaliser="alpha_entmax"`` each owns one learned α per head. The normaliser, sizes and dropout
rates come from a :class:`~entmax_book.translation.config.ModelConfig`.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from entmax_book import checks
from entmax_book.translation.config import ModelConfig
from entmax_book.translation.tokenizer import PAD_ID
from entmax_lib.attention import EntmaxMultiHeadAttention

__all__ = [
    "ATTENTION_TYPES",
    "Transformer",
    "greedy_decode",
    "load_weights",
    "sinusoidal_positions",
    "weights",
]

ATTENTION_TYPES = ("encoder_self", "context", "decoder_self")


def _module_list(items):
    """A list of sub-modules as a Module attribute: ``nnx.List`` where flax has it (≥ 0.12 wants
    it), a plain list on flax 0.11 (Colab's), which has no ``nnx.List``."""
    container = getattr(nnx, "List", None)
    return container(items) if container is not None else list(items)


def sinusoidal_positions(length, d_model):
    """The sinusoidal position table of Vaswani et al. (2017).

    PE[t, 2i] = sin(t / 10000^{2i/d}), PE[t, 2i+1] = cos(t / 10000^{2i/d}).

    Args:
      length: number of positions.
      d_model: width d.

    Returns:
      (length, d_model) float32 array.

    References:
      Vaswani et al. (2017), Attention Is All You Need: https://arxiv.org/abs/1706.03762

    >>> np.round(sinusoidal_positions(2, 4).astype(float), 3).tolist()
    [[0.0, 1.0, 0.0, 1.0], [0.841, 0.54, 0.01, 1.0]]
    """
    position = np.arange(length)[:, None]
    rate = np.exp(-np.log(10000.0) * np.arange(0, d_model, 2) / d_model)
    table = np.zeros((length, d_model), np.float32)
    table[:, 0::2] = np.sin(position * rate)
    table[:, 1::2] = np.cos(position * rate)[:, : d_model // 2]
    return table


class _Noise:
    """Dropout masks for one forward pass: a fresh key per call of :meth:`drop`; no key, no dropout."""

    def __init__(self, key=None):
        self.key_, self.calls = key, 0

    def key(self):
        """A fresh key for one dropout site (the attention layer's own dropout), or None."""
        if self.key_ is None:
            return None
        self.calls += 1
        return jax.random.fold_in(self.key_, self.calls)

    def drop(self, x, rate):
        """Inverted dropout: zero each entry with probability ``rate``, scale the rest by 1/(1 − rate)."""
        if self.key_ is None or rate == 0.0:
            return x
        keep = jax.random.bernoulli(self.key(), 1.0 - rate, x.shape)
        return jnp.where(keep, x / (1.0 - rate), 0.0).astype(x.dtype)


class _FeedForward(nnx.Module):
    def __init__(self, d_model, d_ff, rngs):
        self.hidden = nnx.Linear(d_model, d_ff, rngs=rngs)
        self.output = nnx.Linear(d_ff, d_model, rngs=rngs)

    def __call__(self, x, noise=None, rate=0.0):
        hidden = jax.nn.relu(self.hidden(x))
        return self.output(hidden if noise is None else noise.drop(hidden, rate))


def _attention(config, rngs, alpha_rngs):
    return EntmaxMultiHeadAttention(
        config.num_heads,
        config.d_model,
        config.normaliser,
        rngs=rngs,
        alpha_rngs=alpha_rngs,
        n_iter=config.n_iter,
        dropout_rate=config.attention_dropout,
    )


class _EncoderLayer(nnx.Module):
    def __init__(self, config, rngs, alpha_rngs):
        d = config.d_model
        self.norm_attention = nnx.LayerNorm(d, rngs=rngs)
        self.self_attention = _attention(config, rngs, alpha_rngs)
        self.norm_ff = nnx.LayerNorm(d, rngs=rngs)
        self.feed_forward = _FeedForward(d, config.d_ff, rngs)
        self.rates = (config.dropout, config.ffn_dropout)

    def __call__(self, x, mask, noise=None):
        noise = _Noise() if noise is None else noise
        residual, ffn = self.rates
        h = self.norm_attention(x)
        h, weights = self.self_attention(h, h, mask=mask, return_weights=True, dropout_key=noise.key())
        x = x + noise.drop(h, residual)
        return x + noise.drop(self.feed_forward(self.norm_ff(x), noise, ffn), residual), weights


class _DecoderLayer(nnx.Module):
    def __init__(self, config, rngs, alpha_rngs):
        d = config.d_model
        self.norm_self = nnx.LayerNorm(d, rngs=rngs)
        self.self_attention = _attention(config, rngs, alpha_rngs)
        self.norm_context = nnx.LayerNorm(d, rngs=rngs)
        self.context_attention = _attention(config, rngs, alpha_rngs)
        self.norm_ff = nnx.LayerNorm(d, rngs=rngs)
        self.feed_forward = _FeedForward(d, config.d_ff, rngs)
        self.rates = (config.dropout, config.ffn_dropout)

    def __call__(self, y, memory, self_mask, context_mask, noise=None):
        noise = _Noise() if noise is None else noise
        residual, ffn = self.rates
        h = self.norm_self(y)
        h, self_weights = self.self_attention(
            h, h, mask=self_mask, return_weights=True, dropout_key=noise.key()
        )
        y = y + noise.drop(h, residual)
        h, context_weights = self.context_attention(
            self.norm_context(y), memory, mask=context_mask, return_weights=True, dropout_key=noise.key()
        )
        y = y + noise.drop(h, residual)
        ff = self.feed_forward(self.norm_ff(y), noise, ffn)
        return y + noise.drop(ff, residual), self_weights, context_weights

    def step(self, y, t, cache, memory_kv, context_mask):
        """One decoding position: ``y`` (B, 1, d) at position ``t``, with this layer's cached
        self-attention keys/values ``cache`` = (k, v), each (B, T, H, D). Returns (y, new cache)."""
        h = self.norm_self(y)
        k_t, v_t = self.self_attention.project_kv(h)
        k = jax.lax.dynamic_update_slice_in_dim(cache[0], k_t, t, axis=1)
        v = jax.lax.dynamic_update_slice_in_dim(cache[1], v_t, t, axis=1)
        seen = (jnp.arange(k.shape[1]) <= t)[None, None, None, :]  # keys 0..t
        y = y + self.self_attention.attend(h, k, v, mask=seen)
        y = y + self.context_attention.attend(self.norm_context(y), *memory_kv, mask=context_mask)
        return y + self.feed_forward(self.norm_ff(y)), (k, v)


class Transformer(nnx.Module):
    """Pre-LN encoder–decoder Transformer with pluggable attention normalisers.

    Args:
      config: a :class:`~entmax_book.translation.config.ModelConfig` (the normaliser of every
        head, sizes, dropout rates, ``n_iter``, ``max_len``).
      vocab_size: V, the joint source/target vocabulary of the data's tokenizer (padding id
        :data:`~entmax_book.translation.tokenizer.PAD_ID`).
      seed: initialisation seed. The α logits (learned-α models only) are drawn from a separate
        stream, so that models with different normalisers built from the same seed start from
        identical projection, embedding and feed-forward weights.

    Dropout acts only in a training forward pass, one given a ``dropout_key``; without one (the
    default, and in decoding and analysis) the model is deterministic.

    Shapes: ``src`` (B, S) and ``tgt_in`` (B, T) int token ids padded with ``pad_id``; logits
    (B, T, V). Attention weights come as a dict with keys :data:`ATTENTION_TYPES`, each an
    array (num_layers, B, H, Lq, Lk): (S, S) for ``encoder_self``, (T, S) for ``context``
    and (T, T) for ``decoder_self``.
    """

    def __init__(self, config: ModelConfig, vocab_size: int, seed: int = 0):
        if not isinstance(config, ModelConfig):
            raise TypeError(f"config must be a ModelConfig, got {type(config).__name__}.")
        self.vocab_size = checks.count("vocab_size", vocab_size)
        seed = checks.count("seed", seed, minimum=0, maximum=checks.SEED_MAX - 10_000)
        self.config, self.normaliser, self.pad_id = config, config.normaliser, PAD_ID
        rngs, alpha_rngs = nnx.Rngs(params=seed), nnx.Rngs(params=seed + 10_000)
        self.embed = nnx.Embed(vocab_size, config.d_model, rngs=rngs)
        layers = range(config.num_layers)
        self.encoder_layers = _module_list([_EncoderLayer(config, rngs, alpha_rngs) for _ in layers])
        self.encoder_norm = nnx.LayerNorm(config.d_model, rngs=rngs)
        self.decoder_layers = _module_list([_DecoderLayer(config, rngs, alpha_rngs) for _ in layers])
        self.decoder_norm = nnx.LayerNorm(config.d_model, rngs=rngs)

    def _embed(self, tokens, start=0):
        """Scaled embeddings plus the sinusoidal positions start, start + 1, ... (start may be traced)."""
        length = tokens.shape[-1]
        if length > self.config.max_len:
            raise ValueError(f"sequence length {length} exceeds max_len={self.config.max_len}.")
        table = jnp.asarray(sinusoidal_positions(self.config.max_len, self.config.d_model))
        positions = jax.lax.dynamic_slice_in_dim(table, start, length, axis=0)
        return self.embed(tokens) * jnp.sqrt(float(self.config.d_model)) + positions

    def _key_mask(self, tokens):
        """(B, 1, 1, L): True where the key is a real token."""
        return (tokens != self.pad_id)[:, None, None, :]

    def encode(self, src, dropout_key=None):
        """Encoder output (B, S, d_model) and encoder self-attention weights (layers, B, H, S, S).

        With a ``dropout_key`` (a JAX PRNG key) the config's dropout rates apply.
        """
        noise = _Noise(dropout_key)
        mask = self._key_mask(src)
        x, weights = noise.drop(self._embed(src), self.config.dropout), []
        for layer in self.encoder_layers:
            x, w = layer(x, mask, noise)
            weights.append(w)
        return self.encoder_norm(x), jnp.stack(weights)

    def decode(self, tgt_in, memory, src, dropout_key=None):
        """Logits (B, T, V) and the decoder's (self, context) weights, each (layers, B, H, T, ·).

        With a ``dropout_key`` (a JAX PRNG key) the config's dropout rates apply.
        """
        noise = _Noise(dropout_key)
        length = tgt_in.shape[-1]
        causal = jnp.tril(jnp.ones((length, length), bool))[None, None]
        self_mask = self._key_mask(tgt_in) & causal
        context_mask = self._key_mask(src)
        y, self_weights, context_weights = noise.drop(self._embed(tgt_in), self.config.dropout), [], []
        for layer in self.decoder_layers:
            y, ws, wc = layer(y, memory, self_mask, context_mask, noise)
            self_weights.append(ws)
            context_weights.append(wc)
        logits = self.embed.attend(self.decoder_norm(y))
        return logits, jnp.stack(self_weights), jnp.stack(context_weights)

    def init_cache(self, batch, length, dtype=jnp.float32):
        """Empty self-attention key/value caches for :meth:`decode_step`: one (k, v) per decoder layer."""
        shape = (batch, length, self.config.num_heads, self.config.d_model // self.config.num_heads)
        return [(jnp.zeros(shape, dtype), jnp.zeros(shape, dtype)) for _ in self.decoder_layers]

    def memory_kv(self, memory):
        """Context-attention keys/values of the encoder output, one (k, v) per decoder layer."""
        return [layer.context_attention.project_kv(memory) for layer in self.decoder_layers]

    def decode_step(self, token, t, cache, memory_kv, src):
        """Logits (B, V) for position ``t + 1`` given ``token`` (B,) at position ``t`` and the caches.

        Incremental decoding: each layer appends position t's key/value to its cache, so a step
        costs one position instead of the whole prefix; equal to :meth:`decode` on the prefix.
        """
        y = self._embed(token[:, None], t)
        context_mask = self._key_mask(src)
        new_cache = []
        for layer, layer_cache, kv in zip(self.decoder_layers, cache, memory_kv, strict=True):
            y, layer_cache = layer.step(y, t, layer_cache, kv, context_mask)
            new_cache.append(layer_cache)
        return self.embed.attend(self.decoder_norm(y))[:, 0], new_cache

    def __call__(self, src, tgt_in, return_weights=False, dropout_key=None):
        """Teacher-forced logits (B, T, V); with ``return_weights`` also the attention weights dict.

        ``dropout_key``: a JAX PRNG key for a training pass with dropout; None (the default) is
        deterministic.
        """
        encoder_key = decoder_key = None
        if dropout_key is not None:
            encoder_key, decoder_key = jax.random.split(dropout_key)
        memory, encoder_weights = self.encode(src, encoder_key)
        logits, self_weights, context_weights = self.decode(tgt_in, memory, src, decoder_key)
        if not return_weights:
            return logits
        weights = {"encoder_self": encoder_weights, "context": context_weights, "decoder_self": self_weights}
        return logits, weights

    def alphas(self):
        """α per attention type: dict of (num_layers, H) arrays (1, 1.5 or 2 for fixed normalisers)."""
        return {
            "encoder_self": jnp.stack([layer.self_attention.alpha() for layer in self.encoder_layers]),
            "context": jnp.stack([layer.context_attention.alpha() for layer in self.decoder_layers]),
            "decoder_self": jnp.stack([layer.self_attention.alpha() for layer in self.decoder_layers]),
        }


def _greedy(model, src, max_len, bos_id, eos_id, pad_id):
    memory, _ = model.encode(src)
    memory_kv = model.memory_kv(memory)
    batch = src.shape[0]

    def step(t, carry):
        token, cache, out, done = carry
        logits, cache = model.decode_step(token, t, cache, memory_kv, src)
        token = jnp.where(done, pad_id, jnp.argmax(logits, axis=-1).astype(jnp.int32))
        return token, cache, out.at[:, t].set(token), done | (token == eos_id)

    init = (
        jnp.full((batch,), bos_id, jnp.int32),
        model.init_cache(batch, max_len, memory.dtype),
        jnp.full((batch, max_len), pad_id, jnp.int32),
        jnp.zeros((batch,), bool),
    )
    return jax.lax.fori_loop(0, max_len, step, init)[2]


@functools.partial(jax.jit, static_argnums=(0, 3, 4, 5, 6))
def _greedy_jit(graphdef, state, src, max_len, bos_id, eos_id, pad_id):
    return _greedy(nnx.merge(graphdef, state), src, max_len, bos_id, eos_id, pad_id)


def greedy_decode(model, src, max_len, bos_id, eos_id):
    """Greedy decoding: y_t = argmax_v p(v | y_<t, src), for a fixed ``max_len`` steps (jit-compiled).

    Incremental: the decoder caches each layer's self-attention keys/values, so step t costs one
    position (:meth:`Transformer.decode_step`); the result equals teacher-forced argmax decoding.

    Args:
      model: a :class:`Transformer`.
      src: (B, S) int source ids (padded with ``model.pad_id``).
      max_len: number of target tokens to generate (the output's length), at most the model's
        ``config.max_len`` (the positions it has embeddings for).
      bos_id, eos_id: begin/end-of-sentence ids. After EOS a row is filled with padding.

    Returns:
      (B, max_len) int32 numpy array of generated ids (EOS included, then pad).

    Raises:
      TypeError if ``max_len`` is not an integer, ValueError if it is not in [1,
      ``model.config.max_len``].
    """
    checks.count("max_len", max_len, maximum=model.config.max_len)  # the positional table's length
    graphdef, state = nnx.split(model)
    src = jnp.asarray(src, jnp.int32)
    out = _greedy_jit(graphdef, state, src, int(max_len), int(bos_id), int(eos_id), model.pad_id)
    return np.asarray(out)


def _name(path) -> str:
    """``decoder_layers/0/context_attention/key/bias`` for a parameter's pytree path."""
    parts = []
    for entry in path:
        if isinstance(entry, jax.tree_util.GetAttrKey):  # the Variable's own ``.value``
            continue
        parts.append(str(getattr(entry, "key", getattr(entry, "idx", entry))))
    return "/".join(parts)


def weights(model: Transformer) -> dict:
    """The model's parameters as a flat dict, name → NumPy array: a checkpoint.

    Names are the parameters' paths in the model (``encoder_layers/0/self_attention/key/kernel``),
    so a checkpoint loads only into a model of the same architecture and normaliser. Together with
    :func:`entmax_book.record.save` (``arrays=``) this is how a trained model is recorded.

    >>> small = ModelConfig(normaliser="softmax", d_model=8, num_heads=2, num_layers=1, d_ff=16)
    >>> w = weights(Transformer(small, vocab_size=11))
    >>> w["embed/embedding"].shape
    (11, 8)
    """
    params = nnx.state(model, nnx.Param)
    return {_name(path): np.asarray(leaf) for path, leaf in jax.tree_util.tree_leaves_with_path(params)}


def load_weights(model: Transformer, arrays: dict) -> Transformer:
    """Put a checkpoint of :func:`weights` into ``model`` (in place; returns it).

    Each array is cast to the dtype of the parameter it replaces (a float16 checkpoint loads into
    a float32 model).

    Raises:
      ValueError: naming the missing or unexpected parameters, or a shape that differs, before
        any parameter is changed.
    """
    params = nnx.state(model, nnx.Param)
    current = {_name(p): leaf for p, leaf in jax.tree_util.tree_leaves_with_path(params)}
    missing, unexpected = sorted(set(current) - set(arrays)), sorted(set(arrays) - set(current))
    if missing or unexpected:
        raise ValueError(
            f"the checkpoint does not fit this model: missing {missing[:5]}, unexpected {unexpected[:5]} "
            f"(a model of another normaliser, size or layer count?)."
        )
    for name, leaf in current.items():
        if np.shape(arrays[name]) != leaf.shape:
            raise ValueError(
                f"parameter {name} has shape {leaf.shape}, the checkpoint {np.shape(arrays[name])}."
            )
    loaded = jax.tree_util.tree_map_with_path(
        lambda p, leaf: jnp.asarray(arrays[_name(p)], leaf.dtype), params
    )
    nnx.update(model, loaded)
    return model
