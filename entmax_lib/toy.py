"""The "sparse self-attention" toy: attention pooling over informative tokens hidden among noise.

This is the experiment of the book's Chapter 4, after the ``examples/attention_mlp.py`` demo of
the qjax library (https://github.com/kleyt0n/qjax). :data:`ORIGINAL` holds that demo's settings.

**Task.** A sequence holds L tokens x_1 … x_L ∈ R^d. K of them, at random positions, are
*informative*; the other L − K are *distractors*:

    informative:  x_j = μ_y + γ u + σ ε_j,        distractor:  x_j = σ ε_j,        ε_j ~ N(0, I_d),

where y ∈ {0, …, C−1} is the class, μ_y = ρ e_y are class prototypes of norm ρ
(``class_strength``), u is a shared unit "marker" direction scaled by γ (``signal_strength``),
and e_0 … e_{C−1}, u are orthonormal: either the first C + 1 basis axes (``directions="basis"``,
as in the demo) or random orthonormal directions drawn from ``task_seed``.

**Model.** The demo's single-head attention-pooling classifier, with parameters W_k, W_v (d × d),
a query w (d), W_o (d × C) and b_o (C):

    s_j = x_jᵀ W_k w / √d,   a = entmax_α(s),   c = Σ_j a_j W_vᵀ x_j,   logits = W_oᵀ c + b_o,

where entmax_α is :func:`entmax_lib.tsallis_entmax` (α = 1 softmax, 1.5 1.5-entmax, 2 sparsemax;
the demo calls α the entropic index q). A learned α is bounded as in the demo,
α = 1.1 + 1.7 · sigmoid(a) ∈ (1.1, 2.8): above about 4, float32 entmax drops small support
entries, so an unbounded α would be a hazard. Its gradient ∂a/∂α is the library's closed form.

**Training.** For one length L, every variant and every seed is trained by a single compiled
program: ``lax.scan`` over the Adam steps, ``vmap`` over the seeds, the variants side by side
in the same step (each with its own fixed α, so the fixed maps keep their fast paths).
:func:`run_experiment` runs the sweep over lengths and returns plain JSON-serialisable numbers.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from entmax_lib import progress as progress_bars
from entmax_lib.attention import FIXED_ALPHA
from entmax_lib.entmax import tsallis_entmax

__all__ = [
    "VARIANTS",
    "METRICS",
    "Q_MIN",
    "Q_SPAN",
    "DEMO_Q_INIT",
    "ORIGINAL",
    "TaskConfig",
    "Dataset",
    "task_directions",
    "make_dataset",
    "pooling_baselines",
    "learned_alpha",
    "alpha_logit",
    "init_params",
    "scores",
    "forward",
    "bisection_entmax",
    "TrainResult",
    "train",
    "evaluate",
    "run_experiment",
]

#: The four attention variants: a fixed α (a Python float, so that the fast paths of
#: :func:`entmax_lib.tsallis_entmax` are used), or ``None`` for a learned α.
VARIANTS = {**FIXED_ALPHA, "learned_q": None}  # the library's table of fixed maps, and the learned α

#: Bounds of a learned α = Q_MIN + Q_SPAN · sigmoid(a) ∈ (1.1, 2.8), as in the qjax demo.
Q_MIN, Q_SPAN = 1.1, 1.7

#: The demo's initial learned α: a = −1, α = 1.1 + 1.7 · sigmoid(−1) ≈ 1.557.
DEMO_Q_INIT = Q_MIN + Q_SPAN / (1.0 + math.exp(1.0))

#: The qjax demo ``examples/attention_mlp.py``, as :func:`run_experiment` overrides:
#: ``run_experiment(**ORIGINAL)`` is its run (d = 16, C = 4 on basis axes, K = 3, prototype and
#: marker of length 2.5, σ = 1; L ∈ {4, 8, 16, 32}; seeds 0–2, each with its own 512 training
#: sequences as one full batch and 2000 test sequences; 5000 Adam steps at 5e-3; attention
#: maps of 18 sequences at L = 16).
ORIGINAL = {
    "lengths": (4, 8, 16, 32),
    "seeds": (0, 1, 2),
    "steps": 5000,
    "batch_size": None,
    "learning_rate": 5e-3,
    "q_init": DEMO_Q_INIT,
    "n_train": 512,
    "n_test": 2000,
    "data_per_seed": True,
    "attention_length": 16,
    "n_attention_examples": 18,
    "dim": 16,
    "n_classes": 4,
    "n_informative": 3,
    "signal_strength": 2.5,
    "class_strength": 2.5,
    "noise_std": 1.0,
    "directions": "basis",
    "balanced_classes": False,
}


# ----------------------------------------------------------------------------------------
# Argument checks
# ----------------------------------------------------------------------------------------


def _check_count(name, value, minimum):
    """An int ≥ minimum (bool and float rejected), else ValueError/TypeError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}.")
    return int(value)


def _check_positive_float(name, value, allow_zero=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}.")
    value = float(value)
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {bound}, got {value}.")
    return value


def _check_int_list(name, values, minimum):
    """A non-empty list of distinct ints ≥ minimum; a bare int is accepted as [int]."""
    if isinstance(values, numbers.Integral) and not isinstance(values, bool):
        values = [values]
    try:
        values = list(values)
    except TypeError:
        raise TypeError(f"{name} must be an integer or a sequence of integers, got {values!r}.") from None
    if not values:
        raise ValueError(f"{name} must not be empty.")
    out = [_check_count(f"each entry of {name}", v, minimum) for v in values]
    if len(set(out)) != len(out):
        raise ValueError(f"{name} has duplicate entries: {out}.")
    return out


# ----------------------------------------------------------------------------------------
# Task
# ----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TaskConfig:
    """The data distribution of the toy task (see the module docstring for the formulas).

    Attributes:
      dim: token dimension d.
      n_classes: number of classes C (C + 1 ≤ d: prototypes and u are orthonormal).
      n_informative: K, informative tokens per sequence.
      signal_strength: γ, length of the shared marker direction added to informative tokens.
      class_strength: ρ, norm of each class prototype μ_y.
      noise_std: σ, standard deviation of the isotropic Gaussian noise on every token.
      task_seed: seed of random directions (unused with ``directions="basis"``).
      directions: ``"random"`` (orthonormal directions from ``task_seed``) or ``"basis"``
        (prototypes on axes 0 … C−1 and u on axis C, as in the demo).
      balanced_classes: True draws every class ⌊n/C⌋ or ⌈n/C⌉ times; False draws labels
        i.i.d. uniformly (as the demo does).

    The chapter's defaults make the task easy once the informative tokens are found: their
    mean has noise σ/√K = 0.5 per direction while neighbouring prototypes are ρ√2 ≈ 2.8
    apart (≈ 99 % accuracy); an informative token stands γ = 3σ above the noise along u, so
    among hundreds of distractors some look alike. d = 8 keeps long sequences cheap on a CPU.
    """

    dim: int = 8
    n_classes: int = 4
    n_informative: int = 4
    signal_strength: float = 3.0
    class_strength: float = 2.0
    noise_std: float = 1.0
    task_seed: int = 0
    directions: str = "random"
    balanced_classes: bool = True

    def __post_init__(self):
        _check_count("dim", self.dim, 1)
        _check_count("n_classes", self.n_classes, 2)
        _check_count("n_informative", self.n_informative, 1)
        if self.n_classes + 1 > self.dim:
            raise ValueError(
                f"dim={self.dim} is too small for {self.n_classes} orthonormal prototypes plus a marker "
                "direction; need dim >= n_classes + 1."
            )
        _check_positive_float("noise_std", self.noise_std, allow_zero=True)
        _check_positive_float("signal_strength", self.signal_strength, allow_zero=True)
        _check_positive_float("class_strength", self.class_strength, allow_zero=True)
        if self.directions not in ("random", "basis"):
            raise ValueError(f"directions must be 'random' or 'basis', got {self.directions!r}.")


class Dataset(NamedTuple):
    """A batch of toy sequences.

    Attributes:
      tokens: (n, L, d) float32 token vectors.
      labels: (n,) int32 class labels.
      informative: (n, L) bool, True at the K informative positions.
      positions: (n, K) int32, the informative positions of each sequence in increasing order.
    """

    tokens: np.ndarray
    labels: np.ndarray
    informative: np.ndarray
    positions: np.ndarray


@functools.lru_cache(maxsize=32)
def _directions(config: TaskConfig):
    if config.directions == "basis":
        basis = np.eye(config.dim, config.n_classes + 1)
    else:
        rng = np.random.default_rng(config.task_seed)
        basis, _ = np.linalg.qr(rng.standard_normal((config.dim, config.n_classes + 1)))
    prototypes = (config.class_strength * basis[:, : config.n_classes].T).astype(np.float32)
    signal = (config.signal_strength * basis[:, config.n_classes]).astype(np.float32)
    return prototypes, signal


def task_directions(config: TaskConfig):
    """The task's fixed directions: prototypes μ (C, d) of norm ρ and the marker γu (d,).

    The columns of the first C + 1 basis axes, or of one random orthonormal d × (C + 1) matrix
    (QR of a Gaussian matrix from ``numpy.random.default_rng(config.task_seed)``), scaled.

    Returns:
      (prototypes, signal): float32 NumPy arrays of shapes (C, d) and (d,).

    >>> mu, u = task_directions(TaskConfig(directions="basis"))
    >>> mu[1].tolist()[:3], float(u[4])
    ([0.0, 2.0, 0.0], 3.0)
    """
    prototypes, signal = _directions(config)
    return prototypes.copy(), signal.copy()


def make_dataset(seed, n_examples: int, length: int, config: TaskConfig = TaskConfig()) -> Dataset:
    """Draw ``n_examples`` sequences of ``length`` tokens with NumPy's ``default_rng(seed)``.

    Each sequence gets exactly K informative positions, uniform without replacement. Labels
    are balanced (``arange(n) mod C`` shuffled) or i.i.d. uniform, per ``config.balanced_classes``.

    Args:
      seed: anything ``numpy.random.default_rng`` accepts (e.g. ``[test_seed, L]``).
      n_examples: n, number of sequences (≥ 1).
      length: L, tokens per sequence (≥ K).
      config: the :class:`TaskConfig`.

    Returns:
      A :class:`Dataset` of NumPy arrays.

    >>> make_dataset(0, 5, 10).informative.sum(-1).tolist()
    [4, 4, 4, 4, 4]
    """
    n_examples = _check_count("n_examples", n_examples, 1)
    length = _check_count("length", length, config.n_informative)
    n_inf = config.n_informative
    rng = np.random.default_rng(seed)
    if config.balanced_classes:
        labels = rng.permutation(np.arange(n_examples, dtype=np.int32) % config.n_classes)
    else:
        labels = rng.integers(0, config.n_classes, n_examples).astype(np.int32)
    # K distinct positions per row: the K smallest of L i.i.d. uniforms.
    order = np.argsort(rng.random((n_examples, length)), axis=-1)
    positions = np.sort(order[:, :n_inf], axis=-1).astype(np.int32)
    informative = np.zeros((n_examples, length), bool)
    np.put_along_axis(informative, positions, True, axis=-1)
    prototypes, signal = _directions(config)
    content = prototypes[labels] + signal  # (n, d)
    tokens = config.noise_std * rng.standard_normal((n_examples, length, config.dim), dtype=np.float32)
    tokens[informative] += np.repeat(content, n_inf, axis=0)
    return Dataset(tokens, labels, informative, positions)


def pooling_baselines(data: Dataset, config: TaskConfig = TaskConfig()) -> dict:
    """Accuracy of two fixed poolings with the ideal read-out argmax_c μ_cᵀ c, for reference.

    * ``oracle``: c = mean of the K informative tokens (perfect attention);
    * ``uniform``: c = mean of all L tokens (what softmax gives when all scores tie).

    Returns:
      {"oracle": float, "uniform": float}.
    """
    prototypes, _ = _directions(config)
    inf = np.asarray(data.informative, np.float32)
    tokens = np.asarray(data.tokens)
    pooled_oracle = np.einsum("nl,nld->nd", inf, tokens) / inf.sum(-1, keepdims=True)
    pooled_uniform = tokens.mean(1)
    labels = np.asarray(data.labels)
    return {
        "oracle": float(np.mean(np.argmax(pooled_oracle @ prototypes.T, -1) == labels)),
        "uniform": float(np.mean(np.argmax(pooled_uniform @ prototypes.T, -1) == labels)),
    }


# ----------------------------------------------------------------------------------------
# Model
# ----------------------------------------------------------------------------------------


def learned_alpha(logit):
    """The learned α of a logit a: α = 1.1 + 1.7 · sigmoid(a) ∈ (1.1, 2.8).

    >>> round(float(learned_alpha(-1.0)), 4)
    1.5572
    """
    return Q_MIN + Q_SPAN * jax.nn.sigmoid(logit)


def alpha_logit(alpha: float) -> float:
    """The logit a with :func:`learned_alpha` (a) = α, for 1.1 < α < 2.8.

    >>> round(alpha_logit(DEMO_Q_INIT), 6)
    -1.0
    """
    alpha = _check_positive_float("q_init", alpha)
    if not Q_MIN < alpha < Q_MIN + Q_SPAN:
        raise ValueError(
            f"q_init must lie in ({Q_MIN}, {Q_MIN + Q_SPAN}) for α = 1.1 + 1.7·sigmoid(a), got {alpha}."
        )
    t = (alpha - Q_MIN) / Q_SPAN
    return math.log(t / (1.0 - t))


def init_params(seed: int, config: TaskConfig = TaskConfig(), *, query_scale=1.0, q_init=DEMO_Q_INIT) -> dict:
    """Initial parameters of one model, as in the demo: every weight N(0, 1)/√d, b_o = 0.

    The query is additionally multiplied by ``query_scale`` (the initial score scale).

    Returns:
      {"keys": (d, d), "values": (d, d), "query": (d,), "readout": (d, C),
      "readout_bias": (C,), "q_logit": ()} float32 JAX arrays; ``q_logit`` is used only by a
      learned α (:func:`learned_alpha`).

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
        "query": normal(k_query, (d,)) * (scale * query_scale),
        "readout": normal(k_out, (d, c)) * scale,
        "readout_bias": jnp.zeros((c,), jnp.float32),
        "q_logit": jnp.asarray(alpha_logit(q_init), jnp.float32),
    }


def scores(params, tokens, score_norm=None):
    """Attention scores s = X W_k w / √d, shape (…, L) for tokens (…, L, d).

    With ``score_norm`` the scoring vector v = W_k w / √d is rescaled to that norm, so the
    score scale is fixed and only its direction is learned (fixing |w| alone would not fix it:
    W_k could grow).
    """
    v = params["keys"] @ params["query"] / math.sqrt(params["query"].shape[-1])
    if score_norm is not None:
        v = score_norm * v / jnp.linalg.norm(v)
    return tokens @ v


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
    return tsallis_entmax(s, q=alpha, axis=-1)


def forward(params, tokens, alpha, score_norm=None, gradient="closed_form"):
    """Class logits (…, C) and attention (…, L) of one model for tokens (…, L, d).

    Args:
      params: a dict of :func:`init_params`.
      tokens: (…, L, d).
      alpha: the α of the attention map (a Python float, or a traced scalar).
      score_norm: see :func:`scores`.
      gradient: ``"closed_form"`` (:func:`entmax_lib.tsallis_entmax`) or ``"autodiff"``
        (:func:`bisection_entmax` for α ≠ 1).
    """
    attn = _attention_map(scores(params, tokens, score_norm), alpha, gradient)
    context = jnp.einsum("...l,...ld->...d", attn, tokens) @ params["values"]
    return context @ params["readout"] + params["readout_bias"], attn


def _alpha_of(variant, params):
    fixed = VARIANTS[variant]
    return fixed if fixed is not None else learned_alpha(params["q_logit"])


# ----------------------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------------------


class TrainResult(NamedTuple):
    """Trained models: every variant × seed of one length.

    Attributes:
      variants: the V variant names.
      seeds: the S seeds.
      params: per variant, a parameter dict whose arrays have a leading seed axis S.
      loss: (V, S, steps) training cross-entropy before each step (a JAX array).
      q: (V, S, steps) the α after each step, constant for a fixed variant (a JAX array).
      settings: the model settings (``score_norm``, ``gradient``) that evaluation reuses.
    """

    variants: tuple
    seeds: tuple
    params: tuple
    loss: jax.Array
    q: jax.Array
    settings: dict

    def model(self, variant: str, index: int = 0):
        """(params, α) of one trained model: seed number ``index`` of ``variant``."""
        params = jax.tree.map(lambda x: x[index], self.params[self.variants.index(variant)])
        alpha = _alpha_of(variant, params)
        return params, (alpha if isinstance(alpha, float) else float(alpha))


@functools.partial(
    jax.jit,
    static_argnames=("variants", "tx", "steps", "score_norm", "gradient", "shared_data"),
)
def _training_program(
    params, tokens, labels, batches, *, variants, tx, steps, score_norm, gradient, shared_data
):
    """All variants × seeds of one length: ``lax.scan`` over steps, ``vmap`` over seeds.

    ``params``: per variant a dict with a leading seed axis. ``batches``: (steps, S, B)
    minibatch indices, or None for full-batch training. The data are arguments, not constants,
    so that XLA does not embed (and constant-fold through) them at compile time.
    """
    data_axis = None if shared_data else 0

    def step_one(variant, p, opt, x, y, index):
        if index is not None:
            x, y = x[index], y[index]

        def loss_fn(p):
            logits, _ = forward(p, x, _alpha_of(variant, p), score_norm, gradient)
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

        loss, grads = jax.value_and_grad(loss_fn)(p)
        updates, opt = tx.update(grads, opt, p)
        p = optax.apply_updates(p, updates)
        return p, opt, loss, jnp.asarray(_alpha_of(variant, p), jnp.float32)

    def step(carry, index):
        new_carry, losses, qs = [], [], []
        for variant, (p, opt) in zip(variants, carry, strict=True):
            index_axis = None if index is None else 0
            p, opt, loss, q = jax.vmap(
                functools.partial(step_one, variant), in_axes=(0, 0, data_axis, data_axis, index_axis)
            )(p, opt, tokens, labels, index)
            new_carry.append((p, opt))
            losses.append(loss)
            qs.append(jnp.broadcast_to(q, loss.shape))
        return tuple(new_carry), (jnp.stack(losses), jnp.stack(qs))

    opt_states = tuple(jax.vmap(tx.init)(p) for p in params)
    carry, (loss, q) = jax.lax.scan(step, tuple(zip(params, opt_states, strict=True)), batches, length=steps)
    return tuple(p for p, _ in carry), jnp.moveaxis(loss, 0, -1), jnp.moveaxis(q, 0, -1)


@functools.cache
def _adam(learning_rate: float):
    # One object per learning rate: it is a static argument, so equal settings reuse a compile.
    return optax.adam(learning_rate)


def _as_seed_batch(data):
    """Stack a list of per-seed Datasets, or pass one shared Dataset through."""
    if isinstance(data, Dataset):
        return jnp.asarray(data.tokens), jnp.asarray(data.labels), True, data.tokens.shape[0]
    tokens = jnp.asarray(np.stack([d.tokens for d in data]))
    labels = jnp.asarray(np.stack([d.labels for d in data]))
    return tokens, labels, False, tokens.shape[1]


def _check_variants(variants):
    if isinstance(variants, str):
        variants = [variants]
    variants = list(variants)
    if not variants:
        raise ValueError("variants must not be empty.")
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise ValueError(f"variants: unknown {unknown}; choose from {list(VARIANTS)}.")
    if len(set(variants)) != len(variants):
        raise ValueError(f"variants has duplicate entries: {variants}.")
    return tuple(variants)


def _check_train_settings(steps, batch_size, learning_rate, score_norm, gradient):
    steps = _check_count("steps", steps, 1)
    if batch_size is not None:
        batch_size = _check_count("batch_size", batch_size, 1)
    learning_rate = _check_positive_float("learning_rate", learning_rate)
    if score_norm is not None:
        score_norm = _check_positive_float("score_norm", score_norm)
    if gradient not in ("closed_form", "autodiff"):
        raise ValueError(f"gradient must be 'closed_form' or 'autodiff', got {gradient!r}.")
    return steps, batch_size, learning_rate, score_norm


def train(
    variants,
    data,
    seeds=(0, 1, 2),
    *,
    config: TaskConfig = TaskConfig(),
    steps: int = 5000,
    batch_size: int | None = None,
    learning_rate: float = 5e-3,
    q_init: float = DEMO_Q_INIT,
    query_scale: float = 1.0,
    score_norm: float | None = None,
    gradient: str = "closed_form",
) -> TrainResult:
    """Train every variant for every seed with Adam, in one compiled program.

    Seed ``s`` initialises the model with :func:`init_params` (s) — the same initial weights
    for every variant — and draws its minibatches (with replacement) from
    ``numpy.random.default_rng(s)``. The loss is the mean cross-entropy.

    Args:
      variants: names from :data:`VARIANTS` (distinct; a single name is accepted).
      data: one training :class:`Dataset` shared by all seeds, or a list of one per seed.
      seeds: the S seeds (distinct integers).
      config: the :class:`TaskConfig` (for d and C).
      steps: number of Adam steps (≥ 1; evaluate :func:`init_params` for untrained models).
      batch_size: minibatch size, or None for full-batch steps.
      learning_rate: Adam's learning rate (β = 0.9, 0.999, ε = 1e-8).
      q_init: initial α of ``learned_q``, in (1.1, 2.8).
      query_scale: multiplies the initial query (the initial score scale).
      score_norm: if given, the scoring vector has this fixed norm (see :func:`scores`).
      gradient: ``"closed_form"`` or ``"autodiff"`` (see :func:`forward`).

    Returns:
      A :class:`TrainResult`.
    """
    variants = _check_variants(variants)
    seeds = tuple(_check_int_list("seeds", seeds, 0))
    steps, batch_size, learning_rate, score_norm = _check_train_settings(
        steps, batch_size, learning_rate, score_norm, gradient
    )
    _check_positive_float("query_scale", query_scale)
    alpha_logit(q_init)
    tokens, labels, shared, n_examples = _as_seed_batch(data)
    if not shared and len(data) != len(seeds):
        raise ValueError(f"data has {len(data)} per-seed datasets for {len(seeds)} seeds.")
    if tokens.shape[-1] != config.dim:
        raise ValueError(f"data has token dimension {tokens.shape[-1]}, config.dim is {config.dim}.")
    initial = [init_params(s, config, query_scale=query_scale, q_init=q_init) for s in seeds]
    stacked = jax.tree.map(lambda *x: jnp.stack(x), *initial)
    batches = None
    if batch_size is not None:
        batches = np.stack(
            [np.random.default_rng(s).integers(0, n_examples, (steps, batch_size)) for s in seeds], axis=1
        ).astype(np.int32)
    params, loss, q = _training_program(
        (stacked,) * len(variants),
        tokens,
        labels,
        batches,
        variants=variants,
        tx=_adam(learning_rate),
        steps=steps,
        score_norm=score_norm,
        gradient=gradient,
        shared_data=shared,
    )
    settings = {"score_norm": score_norm, "gradient": gradient}
    # loss and q stay JAX arrays: training runs asynchronously until they are read, so a caller
    # can compile and dispatch the next length meanwhile.
    return TrainResult(variants, seeds, params, loss, q, settings)


@functools.partial(jax.jit, static_argnames=("variants", "score_norm", "keep", "shared_data"))
def _test_metrics(params, tokens, labels, informative, *, variants, score_norm, keep, shared_data):
    """Test metrics of every variant, vmapped over its seeds (one compile for all)."""

    def one(variant, p, tokens, labels, informative):
        s = scores(p, tokens, score_norm)
        attn = tsallis_entmax(s, q=_alpha_of(variant, p), axis=-1)
        logits = (jnp.einsum("nl,nld->nd", attn, tokens) @ p["values"]) @ p["readout"] + p["readout_bias"]
        inf = informative
        n_inf, n_dis = inf.sum(), (~inf).sum()
        mean_inf = jnp.where(inf, s, 0.0).sum() / n_inf
        mean_dis = jnp.where(inf, 0.0, s).sum() / n_dis
        var_dis = jnp.where(inf, 0.0, (s - mean_dis) ** 2).sum() / jnp.maximum(n_dis - 1, 1)
        var_inf = jnp.where(inf, (s - mean_inf) ** 2, 0.0).sum() / jnp.maximum(n_inf - 1, 1)
        return {
            "accuracy": jnp.mean(jnp.argmax(logits, -1) == labels),
            "informative_mass": jnp.mean(jnp.sum(jnp.where(inf, attn, 0.0), -1)),
            "support": jnp.mean(jnp.sum(attn > 0, -1)),
            "support_hits": jnp.mean(jnp.any((attn > 0) & inf, -1)),
            "score_gap": mean_inf - mean_dis,
            "distractor_score_std": jnp.sqrt(var_dis),
            "informative_score_std": jnp.sqrt(var_inf),
            "attention": attn[:keep],
        }

    axis = None if shared_data else 0
    return {
        variant: jax.vmap(functools.partial(one, variant), in_axes=(0, axis, axis, axis))(
            p, tokens, labels, informative
        )
        for variant, p in zip(variants, params, strict=True)
    }


def evaluate(result: TrainResult, data, keep_attention: int = 0) -> dict:
    """Test metrics of every trained model (with the evaluation map's closed form).

    * accuracy: fraction of argmax logits equal to the label;
    * informative_mass: mean over sequences of Σ_{j informative} a_j (uniform gives K/L);
    * support: mean number of positions with a_j > 0;
    * support_hits: fraction of sequences whose support holds at least one informative token;
    * score_gap: mean score of informative tokens minus that of distractors;
      distractor_score_std, informative_score_std: the spreads of the two kinds of scores.

    Args:
      result: a :class:`TrainResult`.
      data: a test :class:`Dataset` shared by all seeds, or a list of one per seed.
      keep_attention: also return the attention rows of the first ``keep_attention`` sequences.

    Returns:
      ``{variant: {metric: NumPy array with a leading seed axis S}}``.
    """
    keep_attention = _check_count("keep_attention", keep_attention, 0)
    shared = isinstance(data, Dataset)
    parts = [data] if shared else list(data)
    if not shared and len(parts) != len(result.seeds):
        raise ValueError(f"data has {len(parts)} per-seed datasets for {len(result.seeds)} seeds.")
    arrays = []
    for field in ("tokens", "labels", "informative"):
        stacked = np.stack([getattr(d, field) for d in parts])
        arrays.append(jnp.asarray(stacked[0] if shared else stacked))
    metrics = _test_metrics(
        result.params,
        *arrays,
        variants=result.variants,
        score_norm=result.settings["score_norm"],
        keep=keep_attention,
        shared_data=shared,
    )
    return {v: {k: np.asarray(x) for k, x in m.items()} for v, m in metrics.items()}


# ----------------------------------------------------------------------------------------
# The sweep
# ----------------------------------------------------------------------------------------

#: The test metrics of :func:`evaluate` that :func:`run_experiment` reports per length.
METRICS = (
    "accuracy",
    "informative_mass",
    "support",
    "support_hits",
    "score_gap",
    "distractor_score_std",
    "informative_score_std",
)


def _over_seeds(name, per_seed):
    """``name`` and its spread over seeds, for an (S, n_lengths) array, as plain floats."""
    per_seed = np.asarray(per_seed, np.float64)
    spread = per_seed.std(0, ddof=1) if per_seed.shape[0] > 1 else np.zeros(per_seed.shape[1])
    return {
        name: per_seed.mean(0).tolist(),
        f"{name}_std": spread.tolist(),
        f"{name}_min": per_seed.min(0).tolist(),
        f"{name}_max": per_seed.max(0).tolist(),
        f"{name}_per_seed": per_seed.tolist(),
    }


def _result_dict(settings, lengths, seeds, chance, baselines, per_length, examples, every) -> dict:
    """The JSON-able result of :func:`run_experiment` from its per-length pieces.

    ``per_length``: per length, ``(metrics, train)`` with ``metrics[variant][name]`` of shape
    (S,) (``attention`` (S, n_keep, L)) and ``train`` the :class:`TrainResult`.
    """
    out = {
        "lengths": lengths,
        "seeds": seeds,
        "steps": settings["steps"],
        "chance": chance,
        "config": settings,
        "baselines": {
            "oracle_accuracy": [b["oracle"] for b in baselines],
            "uniform_accuracy": [b["uniform"] for b in baselines],
        },
        "examples": examples,
    }
    variants = per_length[0][1].variants
    for i, variant in enumerate(variants):
        entry = {}
        for name in METRICS:
            entry.update(_over_seeds(name, np.stack([m[variant][name] for m, _ in per_length], axis=1)))
        entry["train_loss"] = [float(np.asarray(t.loss[i])[:, -20:].mean()) for _, t in per_length]
        shown = [m[variant]["attention"] for m, _ in per_length if m[variant]["attention"].shape[1]]
        entry["attention_per_seed"] = np.asarray(shown[0], np.float64).tolist() if shown else []
        entry["attention"] = entry["attention_per_seed"][0] if shown else []
        if VARIANTS[variant] is None:
            history = [np.asarray(t.q[i])[:, ::every] for _, t in per_length]  # (S, T) per length
            entry["q_history"] = [h.mean(0).tolist() for h in history]
            entry["q_history_per_seed"] = [np.asarray(h, np.float64).tolist() for h in history]
            entry["q_history_steps"] = list(range(1, settings["steps"] + 1, every))
            final = [np.asarray(t.q[i])[:, -1] for _, t in per_length]
            entry.update(_over_seeds("final_q", np.stack(final, axis=1)))
        out[variant] = entry
    return out


def run_experiment(
    lengths=(8, 64, 512),
    seeds=(0, 1, 2),
    variants=tuple(VARIANTS),
    steps: int = 3000,
    batch_size: int | None = 64,
    learning_rate: float = 5e-3,
    q_init: float = DEMO_Q_INIT,
    n_train: int = 2048,
    n_test: int = 1024,
    train_seed: int = 0,
    test_seed: int = 1234,
    data_per_seed: bool = False,
    query_scale: float = 1.0,
    score_norm: float | None = None,
    gradient: str = "closed_form",
    n_attention_examples: int = 8,
    attention_length: int | None = None,
    q_history_every: int = 10,
    **task,
) -> dict:
    """Run the sweep: every variant, trained from scratch for every length and seed.

    Defaults are the chapter's long-sequence stress setting; ``run_experiment(**ORIGINAL)`` is
    the qjax demo. ``**task`` overrides :class:`TaskConfig` fields. For length L the data are
    ``make_dataset([train_seed, L], n_train, L)`` and ``make_dataset([test_seed, L], n_test, L)``
    shared by all seeds, or with ``data_per_seed`` ``[train_seed, L, s]`` / ``[test_seed, L, s]``
    for seed s (the demo draws fresh data per seed). All arguments are checked before training.

    Args:
      lengths: the sequence lengths L (distinct integers ≥ K; an int is one length).
      seeds, variants: see :func:`train`.
      steps, batch_size, learning_rate, q_init, query_scale, score_norm, gradient: see :func:`train`.
      n_train, n_test: training and test sequences per length (and per seed).
      train_seed, test_seed: seeds of the data.
      data_per_seed: fresh data for every seed.
      n_attention_examples: attention rows kept at ``attention_length``.
      attention_length: where attention rows are kept (default: the largest L).
      q_history_every: keep the learned α every this many steps.

    Returns:
      A JSON-serialisable dict:

      * ``lengths``, ``seeds``, ``steps``, ``chance`` (1/C), ``config`` (all settings);
      * ``baselines``: ``oracle_accuracy`` and ``uniform_accuracy`` per length;
      * per variant: ``accuracy``, ``informative_mass``, ``support``, ``support_hits``,
        ``score_gap``, ``distractor_score_std``, ``informative_score_std`` (means over seeds
        per length), each with ``_std`` (sample
        standard deviation over seeds), ``_min``, ``_max`` and ``_per_seed`` (seed × length);
        ``train_loss`` (last 20 steps, per length); ``attention`` (n_attention_examples × L,
        seed 0) and ``attention_per_seed``;
      * ``learned_q`` also: ``q_history`` (per length, mean over seeds every
        ``q_history_every`` steps), ``q_history_per_seed`` (length × seed × time),
        ``q_history_steps`` (1, 1 + every, …), ``final_q`` (with ``_std`` … ``_per_seed``);
      * ``examples``: ``positions`` and ``labels`` of the sequences shown in ``attention``
        (seed 0's test set).
    """
    config = TaskConfig(**task)
    lengths = _check_int_list("lengths", lengths, config.n_informative)
    seeds = _check_int_list("seeds", seeds, 0)
    variants = _check_variants(variants)
    steps, batch_size, learning_rate, score_norm = _check_train_settings(
        steps, batch_size, learning_rate, score_norm, gradient
    )
    _check_positive_float("query_scale", query_scale)
    alpha_logit(q_init)
    n_train = _check_count("n_train", n_train, 1)
    n_test = _check_count("n_test", n_test, 1)
    n_keep = _check_count("n_attention_examples", n_attention_examples, 0)
    every = _check_count("q_history_every", q_history_every, 1)
    if attention_length is None:
        attention_length = max(lengths)
    if attention_length not in lengths:
        raise ValueError(f"attention_length={attention_length} is not one of lengths {lengths}.")
    settings = {
        **dataclasses.asdict(config),
        "steps": steps,
        "batch_size": batch_size,
        "learning_rate": learning_rate,
        "q_init": q_init,
        "n_train": n_train,
        "n_test": n_test,
        "train_seed": train_seed,
        "test_seed": test_seed,
        "data_per_seed": data_per_seed,
        "query_scale": query_scale,
        "score_norm": score_norm,
        "gradient": gradient,
        "attention_length": attention_length,
    }

    def draw(seed, n, length):
        if data_per_seed:
            return [make_dataset([seed, length, s], n, length, config) for s in seeds]
        return make_dataset([seed, length], n, length, config)

    # Every length's training is dispatched first (JAX runs it asynchronously), so the next
    # length compiles while the previous one trains; evaluation then waits for each in turn.
    baselines, trained, examples = [], [], {}
    for length in lengths:
        train_data, test_data = draw(train_seed, n_train, length), draw(test_seed, n_test, length)
        first_test = test_data[0] if data_per_seed else test_data
        baselines.append(pooling_baselines(first_test, config))
        result = train(
            variants,
            train_data,
            seeds,
            config=config,
            steps=steps,
            batch_size=batch_size,
            learning_rate=learning_rate,
            q_init=q_init,
            query_scale=query_scale,
            score_norm=score_norm,
            gradient=gradient,
        )
        trained.append((test_data, result))
        if length == attention_length:
            examples = {
                "positions": first_test.positions[:n_keep].tolist(),
                "labels": first_test.labels[:n_keep].tolist(),
            }
    per_length = []
    bar = progress_bars.progress(len(lengths), desc="toy grid (lengths)")
    for length, (test_data, result) in zip(lengths, trained, strict=True):
        keep = n_keep if length == attention_length else 0
        per_length.append((evaluate(result, test_data, keep_attention=keep), result))
        shown = {"L": length, "final loss": jnp.mean(result.loss[:, :, -1])}
        if "learned_q" in result.variants:  # the learned α at the end, averaged over seeds
            shown["alpha"] = jnp.mean(result.q[result.variants.index("learned_q"), :, -1])
        progress_bars.report(bar, force=True, **shown)
        bar.update()
    bar.close()
    return _result_dict(
        settings, lengths, seeds, 1.0 / config.n_classes, baselines, per_length, examples, every
    )
