"""The "sparse self-attention" toy: attention pooling over informative tokens hidden among noise.

This is the experiment of the book's Chapter 4, after the ``examples/attention_mlp.py`` demo of
the qjax library (https://github.com/kleyt0n/qjax). Every setting lives in one
:class:`ToyConfig`; its defaults are the chapter's long-sequence stress setting, and
:data:`ORIGINAL` holds the demo's settings.

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

where entmax_α is :func:`entmax_lib.entmax_bisect` (α = 1 softmax, 1.5 1.5-entmax, 2 sparsemax).
The four variants are the library's normalisers (:data:`entmax_lib.attention.NORMALISERS`):
three fixed α and "alpha_entmax", whose α is learned and bounded as in the demo,
α = 1.1 + 1.7 · sigmoid(a) ∈ (1.1, 2.8): above about 4, float32 entmax drops small support
entries, so an unbounded α would be a hazard.

**Numerics.** By default (``gradient="autodiff"``) every map with α ≠ 1 is computed as the demo
computes it, by 25 bisection steps (:func:`bisection_entmax`), and differentiated by autodiff
through the loop, for the scores and for α alike. ``gradient="closed_form"`` uses
:func:`entmax_lib.entmax_bisect` and its exact derivative rules instead.

**Training.** For one length L, every variant and every seed is trained by a single compiled
program (:func:`training_program`): ``lax.scan`` over the Adam steps, ``vmap`` over the seeds,
the variants side by side in the same step (each with its own fixed α, so the fixed maps keep
their fast paths). :func:`run_experiment` runs the sweep over lengths and returns plain
JSON-serialisable numbers.
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

from entmax_book import progress as progress_bars
from entmax_lib import entmax_bisect
from entmax_lib.attention import NORMALISERS

__all__ = [
    "METRICS",
    "LEARNED_ALPHA_MIN",
    "LEARNED_ALPHA_SPAN",
    "DEMO_ALPHA_INIT",
    "ORIGINAL",
    "ToyConfig",
    "Dataset",
    "task_directions",
    "make_dataset",
    "pooling_baselines",
    "learned_alpha",
    "logit_for_alpha",
    "init_params",
    "scores",
    "forward",
    "bisection_entmax",
    "TrainResult",
    "training_program",
    "train",
    "evaluate",
    "run_experiment",
]

#: Bounds of a learned α = LEARNED_ALPHA_MIN + LEARNED_ALPHA_SPAN · sigmoid(a) ∈ (1.1, 2.8),
#: as in the qjax demo.
LEARNED_ALPHA_MIN, LEARNED_ALPHA_SPAN = 1.1, 1.7

#: The demo's initial learned α: a = −1, α = 1.1 + 1.7 · sigmoid(−1) ≈ 1.557.
DEMO_ALPHA_INIT = LEARNED_ALPHA_MIN + LEARNED_ALPHA_SPAN / (1.0 + math.exp(1.0))

_GRADIENTS = ("closed_form", "autodiff")


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


def _check_bool(name, value):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}.")
    return bool(value)


def _check_int_list(name, values, minimum):
    """A non-empty tuple of distinct ints ≥ minimum; a bare int is accepted as (int,)."""
    if isinstance(values, numbers.Integral) and not isinstance(values, bool):
        values = [values]
    if isinstance(values, str):
        raise TypeError(f"{name} must be an integer or a sequence of integers, got {values!r}.")
    try:
        values = list(values)
    except TypeError:
        raise TypeError(f"{name} must be an integer or a sequence of integers, got {values!r}.") from None
    if not values:
        raise ValueError(f"{name} must not be empty.")
    out = [_check_count(f"each entry of {name}", v, minimum) for v in values]
    if len(set(out)) != len(out):
        raise ValueError(f"{name} has duplicate entries: {out}.")
    return tuple(out)


def _check_variants(variants):
    if isinstance(variants, str):
        variants = [variants]
    variants = list(variants)
    if not variants:
        raise ValueError("variants must not be empty.")
    unknown = [v for v in variants if v not in NORMALISERS]
    if unknown:
        raise ValueError(f"variants: unknown {unknown}; choose from {list(NORMALISERS)}.")
    if len(set(variants)) != len(variants):
        raise ValueError(f"variants has duplicate entries: {variants}.")
    return tuple(variants)


# ----------------------------------------------------------------------------------------
# The learned α
# ----------------------------------------------------------------------------------------


def learned_alpha(logit):
    """The learned α of a logit a: α = 1.1 + 1.7 · sigmoid(a) ∈ (1.1, 2.8).

    >>> round(float(learned_alpha(-1.0)), 4)
    1.5572
    """
    return LEARNED_ALPHA_MIN + LEARNED_ALPHA_SPAN * jax.nn.sigmoid(logit)


def logit_for_alpha(alpha: float) -> float:
    """The logit a with :func:`learned_alpha` (a) = α, for 1.1 < α < 2.8.

    >>> round(logit_for_alpha(DEMO_ALPHA_INIT), 6)
    -1.0
    """
    alpha = _check_positive_float("alpha_init", alpha)
    high = LEARNED_ALPHA_MIN + LEARNED_ALPHA_SPAN
    if not LEARNED_ALPHA_MIN < alpha < high:
        raise ValueError(
            f"alpha_init must lie in ({LEARNED_ALPHA_MIN}, {high}) for α = 1.1 + 1.7·sigmoid(a), got {alpha}."
        )
    t = (alpha - LEARNED_ALPHA_MIN) / LEARNED_ALPHA_SPAN
    return math.log(t / (1.0 - t))


# ----------------------------------------------------------------------------------------
# The one config
# ----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ToyConfig:
    """Every setting of the toy experiment (see the module docstring for the formulas).

    The defaults are the chapter's long-sequence stress setting; :data:`ORIGINAL` is the qjax
    demo. Change one setting with ``dataclasses.replace(config, steps=500)``. Every value is
    checked when the config is made, before any data are drawn or any model is trained.

    Attributes (the task):
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

    Attributes (the sweep and the training):
      lengths: the sequence lengths L (distinct integers > K; an int is one length).
      seeds: the seeds S (distinct integers ≥ 0): initial weights and minibatch order.
      variants: names from :data:`entmax_lib.attention.NORMALISERS`.
      steps: Adam steps.
      batch_size: minibatch size, or None for full-batch steps.
      learning_rate: Adam's learning rate (β = 0.9, 0.999, ε = 1e-8).
      alpha_init: initial α of the learned variant, in (1.1, 2.8).
      n_train, n_test: training and test sequences per length (and per seed).
      train_seed, test_seed: seeds of the data (integers ≥ 0).
      data_per_seed: fresh training and test data for every seed (as the demo draws them).
      query_scale: multiplies the initial query (the initial score scale).
      score_norm: if given, the scoring vector has this fixed norm (see :func:`scores`).
      gradient: ``"closed_form"`` (the library's derivative rules) or ``"autodiff"``
        (autodiff through :func:`bisection_entmax`, the demo's numerics).
      n_attention_examples: attention rows kept at ``attention_length`` (at most ``n_test``).
      attention_length: where attention rows are kept (default: the largest L).
      history_every: keep the training loss and the learned α every this many steps.

    The defaults make the task easy once the informative tokens are found: their mean has
    noise σ/√K = 0.5 per direction while neighbouring prototypes are ρ√2 ≈ 2.8 apart
    (≈ 99 % accuracy); an informative token stands γ = 3σ above the noise along u, so among
    hundreds of distractors some look alike. d = 8 keeps long sequences cheap on a CPU.

    >>> ToyConfig(steps=10).lengths
    (8, 64, 512)
    >>> ToyConfig(lengths=(4,))
    Traceback (most recent call last):
    ...
    ValueError: each entry of lengths must be >= 5, got 4.
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
    lengths: tuple = (8, 64, 512)
    seeds: tuple = tuple(range(10))
    variants: tuple = tuple(NORMALISERS)
    steps: int = 3000
    batch_size: int | None = 64
    learning_rate: float = 5e-3
    alpha_init: float = DEMO_ALPHA_INIT
    n_train: int = 2048
    n_test: int = 1024
    train_seed: int = 0
    test_seed: int = 1234
    data_per_seed: bool = True
    query_scale: float = 1.0
    score_norm: float | None = None
    gradient: str = "autodiff"
    n_attention_examples: int = 0
    attention_length: int | None = None
    history_every: int = 50

    def __post_init__(self):
        self._check_task()
        self._check_training()
        self._check_sweep()

    def _set(self, name, value):
        object.__setattr__(self, name, value)  # normalise a field of the frozen dataclass

    def _check_task(self):
        for name, minimum in (("dim", 1), ("n_classes", 2), ("n_informative", 1), ("task_seed", 0)):
            _check_count(name, getattr(self, name), minimum)
        if self.n_classes + 1 > self.dim:
            raise ValueError(
                f"dim={self.dim} is too small for {self.n_classes} orthonormal prototypes plus a marker "
                "direction; need dim >= n_classes + 1."
            )
        for name in ("noise_std", "signal_strength", "class_strength"):
            self._set(name, _check_positive_float(name, getattr(self, name), allow_zero=True))
        if self.directions not in ("random", "basis"):
            raise ValueError(f"directions must be 'random' or 'basis', got {self.directions!r}.")
        self._set("balanced_classes", _check_bool("balanced_classes", self.balanced_classes))

    def _check_training(self):
        _check_count("steps", self.steps, 1)
        if self.batch_size is not None:
            _check_count("batch_size", self.batch_size, 1)
        self._set("learning_rate", _check_positive_float("learning_rate", self.learning_rate))
        self._set("query_scale", _check_positive_float("query_scale", self.query_scale))
        if self.score_norm is not None:
            self._set("score_norm", _check_positive_float("score_norm", self.score_norm))
        if self.gradient not in _GRADIENTS:
            raise ValueError(f"gradient must be one of {_GRADIENTS}, got {self.gradient!r}.")
        logit_for_alpha(self.alpha_init)
        self._set("variants", _check_variants(self.variants))
        self._set("seeds", _check_int_list("seeds", self.seeds, 0))

    def _check_sweep(self):
        # L = K would leave no distractor: the score gap and its spread would be undefined.
        self._set("lengths", _check_int_list("lengths", self.lengths, self.n_informative + 1))
        for name, minimum in (("n_train", 1), ("n_test", 1), ("train_seed", 0), ("test_seed", 0)):
            _check_count(name, getattr(self, name), minimum)
        _check_count("n_attention_examples", self.n_attention_examples, 0)
        if self.n_attention_examples > self.n_test:
            raise ValueError(
                f"n_attention_examples={self.n_attention_examples} exceeds n_test={self.n_test}: "
                "the attention rows shown are test sequences."
            )
        _check_count("history_every", self.history_every, 1)
        self._set("data_per_seed", _check_bool("data_per_seed", self.data_per_seed))
        if self.batch_size is not None and self.batch_size > self.n_train:
            raise ValueError(f"batch_size={self.batch_size} exceeds n_train={self.n_train}.")
        if self.attention_length is not None and self.attention_length not in self.lengths:
            raise ValueError(
                f"attention_length={self.attention_length} is not one of lengths {self.lengths}."
            )


#: The qjax demo ``examples/attention_mlp.py``: ``run_experiment(ORIGINAL)`` is its run (d = 16,
#: C = 4 on basis axes, K = 3, prototype and marker of length 2.5, σ = 1; L ∈ {4, 8, 16, 32};
#: seeds 0–2, each with its own 512 training sequences as one full batch and 2000 test
#: sequences; 5000 Adam steps at 5e-3; entmax by 25 bisection steps differentiated by autodiff;
#: attention maps of 18 sequences at L = 16).
ORIGINAL = ToyConfig(
    lengths=(4, 8, 16, 32),
    seeds=(0, 1, 2),
    steps=5000,
    batch_size=None,
    learning_rate=5e-3,
    alpha_init=DEMO_ALPHA_INIT,
    gradient="autodiff",
    n_train=512,
    n_test=2000,
    data_per_seed=True,
    attention_length=16,
    n_attention_examples=18,
    dim=16,
    n_classes=4,
    n_informative=3,
    signal_strength=2.5,
    class_strength=2.5,
    noise_std=1.0,
    directions="basis",
    balanced_classes=False,
)


# ----------------------------------------------------------------------------------------
# Task
# ----------------------------------------------------------------------------------------


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
def _directions(config: ToyConfig):
    if config.directions == "basis":
        basis = np.eye(config.dim, config.n_classes + 1)
    else:
        rng = np.random.default_rng(config.task_seed)
        basis, _ = np.linalg.qr(rng.standard_normal((config.dim, config.n_classes + 1)))
    prototypes = (config.class_strength * basis[:, : config.n_classes].T).astype(np.float32)
    signal = (config.signal_strength * basis[:, config.n_classes]).astype(np.float32)
    return prototypes, signal


def task_directions(config: ToyConfig):
    """The task's fixed directions: prototypes μ (C, d) of norm ρ and the marker γu (d,).

    The columns of the first C + 1 basis axes, or of one random orthonormal d × (C + 1) matrix
    (QR of a Gaussian matrix from ``numpy.random.default_rng(config.task_seed)``), scaled.

    Returns:
      (prototypes, signal): float32 NumPy arrays of shapes (C, d) and (d,).

    >>> mu, u = task_directions(ToyConfig(directions="basis"))
    >>> mu[1].tolist()[:3], float(u[4])
    ([0.0, 2.0, 0.0], 3.0)
    """
    prototypes, signal = _directions(config)
    return prototypes.copy(), signal.copy()


def make_dataset(seed, n_examples: int, length: int, config: ToyConfig = ToyConfig()) -> Dataset:
    """Draw ``n_examples`` sequences of ``length`` tokens with NumPy's ``default_rng(seed)``.

    Each sequence gets exactly K informative positions, uniform without replacement. Labels
    are balanced (``arange(n) mod C`` shuffled) or i.i.d. uniform, per ``config.balanced_classes``.

    Args:
      seed: anything ``numpy.random.default_rng`` accepts (e.g. ``[test_seed, L]``).
      n_examples: n, number of sequences (≥ 1).
      length: L, tokens per sequence (> K).
      config: the :class:`ToyConfig` (its task fields).

    Returns:
      A :class:`Dataset` of NumPy arrays.

    >>> make_dataset(0, 5, 10).informative.sum(-1).tolist()
    [4, 4, 4, 4, 4]
    """
    n_examples = _check_count("n_examples", n_examples, 1)
    length = _check_count("length", length, config.n_informative + 1)
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


def pooling_baselines(data: Dataset, config: ToyConfig = ToyConfig()) -> dict:
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


def _alpha_of(variant, params):
    fixed = NORMALISERS[variant]
    return fixed if fixed is not None else learned_alpha(params["alpha_logit"])


# ----------------------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------------------


class TrainResult(NamedTuple):
    """Trained models: every variant × seed of one length.

    Attributes:
      config: the :class:`ToyConfig` they were trained with (variants, seeds, score_norm, …).
      params: per variant, a parameter dict whose arrays have a leading seed axis S.
      loss: (V, S, steps) training cross-entropy before each step (a JAX array).
      alpha: (V, S, steps) the α after each step, constant for a fixed variant (a JAX array).
    """

    config: ToyConfig
    params: tuple
    loss: jax.Array
    alpha: jax.Array

    def model(self, variant: str, index: int = 0):
        """(params, α) of one trained model: seed number ``index`` of ``variant``."""
        params = jax.tree.map(lambda x: x[index], self.params[self.config.variants.index(variant)])
        alpha = _alpha_of(variant, params)
        return params, (alpha if isinstance(alpha, float) else float(alpha))


@functools.partial(
    jax.jit,
    static_argnames=("variants", "tx", "steps", "score_norm", "gradient", "shared_data"),
)
def training_program(
    params, tokens, labels, batches, *, variants, tx, steps, score_norm, gradient, shared_data
):
    """All variants × seeds of one length: ``lax.scan`` over steps, ``vmap`` over seeds.

    ``params``: per variant a dict with a leading seed axis. ``batches``: (steps, S, B)
    minibatch indices, or None for full-batch training. The data are arguments, not constants,
    so that XLA does not embed (and constant-fold through) them at compile time.

    Returns:
      (trained params per variant, loss (V, S, steps), α (V, S, steps)).
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
        new_carry, losses, alphas = [], [], []
        for variant, (p, opt) in zip(variants, carry, strict=True):
            index_axis = None if index is None else 0
            p, opt, loss, alpha = jax.vmap(
                functools.partial(step_one, variant), in_axes=(0, 0, data_axis, data_axis, index_axis)
            )(p, opt, tokens, labels, index)
            new_carry.append((p, opt))
            losses.append(loss)
            alphas.append(jnp.broadcast_to(alpha, loss.shape))
        return tuple(new_carry), (jnp.stack(losses), jnp.stack(alphas))

    opt_states = tuple(jax.vmap(tx.init)(p) for p in params)
    carry, (loss, alpha) = jax.lax.scan(
        step, tuple(zip(params, opt_states, strict=True)), batches, length=steps
    )
    return tuple(p for p, _ in carry), jnp.moveaxis(loss, 0, -1), jnp.moveaxis(alpha, 0, -1)


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


def _check_data(data, config, what="data"):
    """One Dataset shared by the seeds, or a list of one per seed, of the config's dimension."""
    parts = [data] if isinstance(data, Dataset) else list(data)
    if not parts or not all(isinstance(d, Dataset) for d in parts):
        raise TypeError(f"{what} must be a Dataset or a list of one Dataset per seed.")
    if not isinstance(data, Dataset) and len(parts) != len(config.seeds):
        raise ValueError(f"{what} has {len(parts)} per-seed datasets for {len(config.seeds)} seeds.")
    if parts[0].tokens.shape[-1] != config.dim:
        raise ValueError(
            f"{what} has token dimension {parts[0].tokens.shape[-1]}, config.dim is {config.dim}."
        )


def train(data, config: ToyConfig = ToyConfig()) -> TrainResult:
    """Train every variant for every seed of ``config`` with Adam, in one compiled program.

    Seed ``s`` initialises the model with :func:`init_params` (s) — the same initial weights
    for every variant — and draws its minibatches (with replacement) from
    ``numpy.random.default_rng(s)``. The loss is the mean cross-entropy.

    Args:
      data: one training :class:`Dataset` shared by all seeds, or a list of one per seed.
      config: the :class:`ToyConfig` (variants, seeds, steps, batch_size, learning_rate,
        alpha_init, query_scale, score_norm, gradient).

    Returns:
      A :class:`TrainResult`. Its loss and α stay JAX arrays: training runs asynchronously
      until they are read, so a caller can compile and dispatch the next length meanwhile.
    """
    _check_data(data, config)
    tokens, labels, shared, n_examples = _as_seed_batch(data)
    initial = [init_params(s, config) for s in config.seeds]
    stacked = jax.tree.map(lambda *x: jnp.stack(x), *initial)
    batches = None
    if config.batch_size is not None:
        draws = [
            np.random.default_rng(s).integers(0, n_examples, (config.steps, config.batch_size))
            for s in config.seeds
        ]
        batches = np.stack(draws, axis=1).astype(np.int32)
    params, loss, alpha = training_program(
        (stacked,) * len(config.variants),
        tokens,
        labels,
        batches,
        variants=config.variants,
        tx=_adam(config.learning_rate),
        steps=config.steps,
        score_norm=config.score_norm,
        gradient=config.gradient,
        shared_data=shared,
    )
    return TrainResult(config, params, loss, alpha)


# ----------------------------------------------------------------------------------------
# Evaluation
# ----------------------------------------------------------------------------------------


def _score_statistics(s, informative):
    """Mean gap between informative and distractor scores, and each kind's spread."""
    inf = informative
    n_inf, n_dis = inf.sum(), (~inf).sum()
    mean_inf = jnp.where(inf, s, 0.0).sum() / n_inf
    mean_dis = jnp.where(inf, 0.0, s).sum() / n_dis
    var_dis = jnp.where(inf, 0.0, (s - mean_dis) ** 2).sum() / jnp.maximum(n_dis - 1, 1)
    var_inf = jnp.where(inf, (s - mean_inf) ** 2, 0.0).sum() / jnp.maximum(n_inf - 1, 1)
    return {
        "score_gap": mean_inf - mean_dis,
        "distractor_score_std": jnp.sqrt(var_dis),
        "informative_score_std": jnp.sqrt(var_inf),
    }


@functools.partial(jax.jit, static_argnames=("variants", "score_norm", "keep", "shared_data"))
def _test_metrics(params, tokens, labels, informative, *, variants, score_norm, keep, shared_data):
    """Test metrics of every variant, vmapped over its seeds (one compile for all)."""

    def one(variant, p, tokens, labels, informative):
        logits, attn = forward(p, tokens, _alpha_of(variant, p), score_norm)
        return {
            "accuracy": jnp.mean(jnp.argmax(logits, -1) == labels),
            "informative_mass": jnp.mean(jnp.sum(jnp.where(informative, attn, 0.0), -1)),
            "support": jnp.mean(jnp.sum(attn > 0, -1)),
            "support_hits": jnp.mean(jnp.any((attn > 0) & informative, -1)),
            **_score_statistics(scores(p, tokens, score_norm), informative),
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
    _check_data(data, result.config)
    shared = isinstance(data, Dataset)
    parts = [data] if shared else list(data)
    arrays = []
    for field in ("tokens", "labels", "informative"):
        stacked = np.stack([getattr(d, field) for d in parts])
        arrays.append(jnp.asarray(stacked[0] if shared else stacked))
    metrics = _test_metrics(
        result.params,
        *arrays,
        variants=result.config.variants,
        score_norm=result.config.score_norm,
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


def _variant_entry(variant, index, per_length, every):
    """One variant's metrics over lengths and seeds, its training loss and (learned) α history."""
    entry = {}
    for name in METRICS:
        entry.update(_over_seeds(name, np.stack([m[variant][name] for m, _ in per_length], axis=1)))
    entry["train_loss"] = [float(np.asarray(t.loss[index])[:, -20:].mean()) for _, t in per_length]
    entry["loss_history_per_seed"] = [
        np.asarray(t.loss[index][:, ::every], np.float64).tolist() for _, t in per_length
    ]
    shown = [m[variant]["attention"] for m, _ in per_length if m[variant]["attention"].shape[1]]
    entry["attention_per_seed"] = np.asarray(shown[0], np.float64).tolist() if shown else []
    if NORMALISERS[variant] is None:
        history = [np.asarray(t.alpha[index])[:, ::every] for _, t in per_length]  # (S, T) per length
        entry["alpha_history"] = [h.mean(0).tolist() for h in history]
        entry["alpha_history_per_seed"] = [np.asarray(h, np.float64).tolist() for h in history]
        final = [np.asarray(t.alpha[index])[:, -1] for _, t in per_length]
        entry.update(_over_seeds("final_alpha", np.stack(final, axis=1)))
    return entry


def _result_dict(config, baselines, per_length, examples) -> dict:
    """The JSON-able result of :func:`run_experiment` from its per-length pieces.

    ``per_length``: per length, ``(metrics, train)`` with ``metrics[variant][name]`` of shape
    (S,) (``attention`` (S, n_keep, L)) and ``train`` the :class:`TrainResult`.
    """
    settings = {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(config).items()}
    out = {
        "lengths": list(config.lengths),
        "seeds": list(config.seeds),
        "steps": config.steps,
        "history_steps": list(range(1, config.steps + 1, config.history_every)),
        "chance": 1.0 / config.n_classes,
        "config": settings,
        "baselines": {
            "oracle_accuracy": [b["oracle"] for b in baselines],
            "uniform_accuracy": [b["uniform"] for b in baselines],
        },
        "examples": examples,
    }
    for index, variant in enumerate(config.variants):
        out[variant] = _variant_entry(variant, index, per_length, config.history_every)
    return out


def _attention_length(config):
    return max(config.lengths) if config.attention_length is None else config.attention_length


def _draw(config, seed, n, length):
    """Data of one length: shared by the seeds, or one dataset per seed."""
    if config.data_per_seed:
        return [make_dataset([seed, length, s], n, length, config) for s in config.seeds]
    return make_dataset([seed, length], n, length, config)


def _dispatch_training(config):
    """Draw every length's data and dispatch its training.

    JAX runs each training asynchronously, so the next length compiles while the previous one
    trains; nothing here waits for a result.
    """
    baselines, trained, examples = [], [], {}
    for length in config.lengths:
        train_data = _draw(config, config.train_seed, config.n_train, length)
        test_data = _draw(config, config.test_seed, config.n_test, length)
        first_test = test_data[0] if config.data_per_seed else test_data
        baselines.append(pooling_baselines(first_test, config))
        trained.append((length, test_data, train(train_data, config)))
        if length == _attention_length(config):
            keep = config.n_attention_examples
            examples = {
                "positions": first_test.positions[:keep].tolist(),
                "labels": first_test.labels[:keep].tolist(),
            }
    return baselines, trained, examples


def _evaluate_lengths(config, trained):
    """Wait for each length's training in turn and evaluate it, with a progress bar."""
    per_length = []
    bar = progress_bars.progress(len(trained), desc="toy grid (lengths)")
    for length, test_data, result in trained:
        keep = config.n_attention_examples if length == _attention_length(config) else 0
        per_length.append((evaluate(result, test_data, keep_attention=keep), result))
        shown = {"L": length, "final loss": jnp.mean(result.loss[:, :, -1])}
        learned = [i for i, v in enumerate(config.variants) if NORMALISERS[v] is None]
        if learned:  # the learned α at the end, averaged over seeds
            shown["alpha"] = jnp.mean(result.alpha[learned[0], :, -1])
        progress_bars.report(bar, force=True, **shown)
        bar.update()
    bar.close()
    return per_length


def run_experiment(config: ToyConfig = ToyConfig(), **changes) -> dict:
    """Run the sweep: every variant, trained from scratch for every length and seed.

    ``run_experiment()`` is the chapter's long-sequence stress setting and
    ``run_experiment(ORIGINAL)`` the qjax demo; ``**changes`` replace fields of ``config``
    (``run_experiment(ORIGINAL, steps=500)``). For length L the data are
    ``make_dataset([train_seed, L], n_train, L)`` and ``make_dataset([test_seed, L], n_test, L)``
    shared by all seeds, or with ``data_per_seed`` ``[train_seed, L, s]`` / ``[test_seed, L, s]``
    for seed s (the demo draws fresh data per seed). Every setting is checked before any work.

    Args:
      config: a :class:`ToyConfig`.
      **changes: fields of :class:`ToyConfig` to replace.

    Returns:
      A JSON-serialisable dict:

      * ``lengths``, ``seeds``, ``steps``, ``chance`` (1/C), ``config`` (all settings),
        ``history_steps`` (1, 1 + every, … with every = ``history_every``: the steps at which
        the histories below are kept);
      * ``baselines``: ``oracle_accuracy`` and ``uniform_accuracy`` per length;
      * per variant: ``accuracy``, ``informative_mass``, ``support``, ``support_hits``,
        ``score_gap``, ``distractor_score_std``, ``informative_score_std`` (means over seeds
        per length), each with ``_std`` (sample standard deviation over seeds), ``_min``,
        ``_max`` and ``_per_seed`` (seed × length); ``train_loss`` (last 20 steps, per
        length); ``loss_history_per_seed`` (length × seed × time, the training loss before
        each of ``history_steps``); ``attention_per_seed`` (seed × n_attention_examples × L at
        ``attention_length``);
      * ``alpha_entmax`` also: ``alpha_history`` (per length, mean over seeds, the α after
        each of ``history_steps``), ``alpha_history_per_seed`` (length × seed × time),
        ``final_alpha`` (with ``_std`` … ``_per_seed``);
      * ``examples``: ``positions`` and ``labels`` of the sequences shown in the attention
        rows (seed 0's test set).
    """
    if not isinstance(config, ToyConfig):
        raise TypeError(f"config must be a ToyConfig, got {type(config).__name__}.")
    config = dataclasses.replace(config, **changes)
    progress_bars.interactive()  # a bad ENTMAX_PROGRESS fails now, not after the training
    baselines, trained, examples = _dispatch_training(config)
    per_length = _evaluate_lengths(config, trained)
    return _result_dict(config, baselines, per_length, examples)
