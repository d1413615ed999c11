"""The "sparse self-attention" toy: attention pooling over informative tokens hidden among noise.

This is the experiment of the book's Chapter 4 (the seed experiment "Sparse self-attention").

**Task.** A sequence holds L tokens x_1 … x_L ∈ R^d. K of them, at random positions, are
*informative*; the other L − K are *distractors*:

    informative:  x_j = μ_y + γ u + σ ε_j,        distractor:  x_j = σ ε_j,        ε_j ~ N(0, I_d),

where y ∈ {0, …, C−1} is the class, μ_y = ρ e_y are class prototypes of norm ρ (e_y orthonormal)
(``class_strength``), u is a shared unit "signal" direction scaled by γ (``signal_strength``),
and the prototypes and u are orthonormal directions drawn once from ``task_seed``. The
distractors are pure noise: their distribution does not depend on the class.

**Model.** A single-head attention-pooling classifier (the seed's model):

    k_j = W_k x_j + b_k,  v_j = W_v x_j + b_v,  s_j = k_jᵀ w / √d,
    a = entmax_q(s),      c = Σ_j a_j v_j,      logits = W_o c + b_o,

with a learnable query vector w and entmax_q the Tsallis / α-entmax map
(:func:`entmax_lib.tsallis_entmax`): q = 1 is softmax, q = 1.5 is 1.5-entmax, q = 2 is
sparsemax (Martins & Astudillo 2016; Peters et al. 2019). A learnable q uses
q = 1 + softplus(a) (not capped at 2, unlike the 1 + sigmoid of Correia et al. 2019); the
gradient ∂a/∂q of the attention with respect to q is the closed form of
:func:`entmax_lib.entmax_bisect`.

**Experiment.** For each sequence length L and each variant (softmax, 1.5-entmax, sparsemax,
learned q) a model is trained from scratch for several seeds (a pure, ``lax.scan``-ned train
loop inside one ``jax.jit``, compiled once and reused for every seed), then evaluated on a
fixed test set per L: accuracy, and the attention mass that falls on the K informative tokens.
:func:`run_experiment` runs the whole sweep and returns plain JSON-serialisable numbers.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

from entmax_lib.entmax import tsallis_entmax

__all__ = [
    "TaskConfig",
    "Dataset",
    "VARIANTS",
    "task_directions",
    "make_dataset",
    "pooling_baselines",
    "AttentionPoolingClassifier",
    "make_model",
    "TrainResult",
    "train",
    "evaluate",
    "run_experiment",
]

#: The four attention variants: a fixed entropic index q (a Python float, so the fixed-α fast
#: path of :func:`entmax_lib.tsallis_entmax` is used), or ``None`` for a learnable q.
VARIANTS = {"softmax": 1.0, "entmax15": 1.5, "sparsemax": 2.0, "learned_q": None}


@dataclasses.dataclass(frozen=True)
class TaskConfig:
    """The data distribution of the toy task (see the module docstring for the formulas).

    Attributes:
      dim: token dimension d.
      n_classes: number of classes C (C + 1 ≤ d, since prototypes and u are orthonormal).
      n_informative: K, informative tokens per sequence.
      signal_strength: γ, length of the shared signal direction added to informative tokens.
      class_strength: ρ, norm of each class prototype μ_y.
      noise_std: σ, standard deviation of the isotropic Gaussian noise on every token.
      task_seed: seed of the prototypes and of u (the "world"; shared by train and test).

    The defaults were fixed before comparing the variants, from the oracle (perfect
    attention): the mean of K = 4 informative tokens has noise σ/√K = 0.5 per direction and
    neighbouring prototypes are ρ√2 ≈ 2.8 apart, so the oracle is ≈ 99 % accurate and any
    loss of accuracy comes from the attention; γ = 3σ makes an informative token stand out
    of the noise along u (one-token detection error Φ(−1.5) ≈ 7 %) but not perfectly, so
    thousands of distractors do produce look-alikes. d = 8 keeps the chapter fast on a CPU.
    """

    dim: int = 8
    n_classes: int = 4
    n_informative: int = 4
    signal_strength: float = 3.0
    class_strength: float = 2.0
    noise_std: float = 1.0
    task_seed: int = 0

    def __post_init__(self):
        if self.n_classes < 2:
            raise ValueError(f"n_classes must be >= 2, got {self.n_classes}.")
        if self.n_classes + 1 > self.dim:
            raise ValueError(
                f"dim={self.dim} is too small for {self.n_classes} orthonormal prototypes plus a signal "
                "direction; need dim >= n_classes + 1."
            )
        if self.n_informative < 1:
            raise ValueError(f"n_informative must be >= 1, got {self.n_informative}.")
        if self.noise_std < 0:
            raise ValueError(f"noise_std must be >= 0, got {self.noise_std}.")


class Dataset(NamedTuple):
    """A batch of toy sequences.

    Attributes:
      tokens: (n, L, d) float32 token vectors (NumPy arrays; JAX arrays work as well).
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
    rng = np.random.default_rng(config.task_seed)
    basis, _ = np.linalg.qr(rng.standard_normal((config.dim, config.n_classes + 1)))
    prototypes = (config.class_strength * basis[:, : config.n_classes].T).astype(np.float32)
    signal = (config.signal_strength * basis[:, config.n_classes]).astype(np.float32)
    return prototypes, signal


def task_directions(config: TaskConfig):
    """The task's fixed directions: prototypes μ (C, d) of norm ρ and the signal u (d,) of norm γ.

    μ_0 … μ_{C−1} and u are scaled columns of one random orthonormal d × (C + 1) matrix
    (QR of a Gaussian matrix from ``numpy.random.default_rng(config.task_seed)``), so no
    prototype has a component along u and the prototypes are pairwise orthogonal.
    Computed once per config in NumPy, so that compiled code sees them as constants.

    Returns:
      (prototypes, signal): float32 NumPy arrays of shapes (C, d) and (d,).
    """
    prototypes, signal = _directions(config)
    return prototypes.copy(), signal.copy()


def make_dataset(seed, n_examples: int, length: int, config: TaskConfig = TaskConfig()) -> Dataset:
    """Draw ``n_examples`` sequences of ``length`` tokens with NumPy's ``default_rng(seed)``.

    Each sequence gets exactly K = ``config.n_informative`` informative positions, chosen
    uniformly without replacement; labels are ``arange(n) mod C`` shuffled, so every class
    appears ⌊n/C⌋ or ⌈n/C⌉ times (exactly n/C when C divides n). Tokens follow the module
    docstring: μ_y + γu + σε at informative positions, σε elsewhere.

    Args:
      seed: anything ``numpy.random.default_rng`` accepts (an int, or a list of ints such as
        ``[test_seed, L]``); the same seed gives the same data.
      n_examples: n, number of sequences.
      length: L, tokens per sequence; must be ≥ K.
      config: the :class:`TaskConfig`.

    Returns:
      A :class:`Dataset` of NumPy arrays: tokens (n, L, d) float32, labels (n,) int32,
      informative (n, L) bool, positions (n, K) int32.
    """
    n_inf = config.n_informative
    if length < n_inf:
        raise ValueError(f"length={length} must be >= n_informative={n_inf}.")
    if n_examples < 1:
        raise ValueError(f"n_examples must be >= 1, got {n_examples}.")
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n_examples, dtype=np.int32) % config.n_classes)
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
    """Accuracy of two fixed attention patterns with the ideal read-out, for reference.

    Both pool the tokens with fixed weights and predict argmax_c μ_cᵀ c (nearest prototype:
    the prototypes have equal norms and are orthogonal to u, so this is the Bayes rule for
    the pooled Gaussian vector):

    * ``oracle``: c = mean of the K informative tokens (perfect attention, a_j = 1/K on them);
    * ``uniform``: c = mean of all L tokens (a_j = 1/L: what softmax gives when all scores tie).

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


def _softplus_inverse(y: float) -> float:
    """a with softplus(a) = y > 0."""
    return y + math.log(-math.expm1(-y))


class AttentionPoolingClassifier(nnx.Module):
    """Single-head attention pooling with a learnable query and an entmax_q attention map.

        s = (X W_k + b_k) w / √d   (n, L),     a = entmax_q(s) along L,
        c = Σ_j a_j (W_v x_j + b_v)   (n, d),   logits = W_o c + b_o   (n, C).

    Args:
      dim: token dimension d.
      n_classes: number of classes C.
      q: the entropic index. A Python float ≥ 1 fixes it (1: softmax, 1.5: 1.5-entmax,
        2: sparsemax). ``None`` makes it learnable as q = 1 + softplus(a), starting at ``q_init``.
      q_init: initial q of a learnable q (must be > 1).
      rngs: ``nnx.Rngs`` for the parameters (keys, values, read-out, query w ~ N(0, I)).
    """

    def __init__(self, dim: int, n_classes: int, q: float | None = 1.0, q_init: float = 1.5, *, rngs):
        self.dim = dim
        self.keys = nnx.Linear(dim, dim, rngs=rngs)
        self.values = nnx.Linear(dim, dim, rngs=rngs)
        self.readout = nnx.Linear(dim, n_classes, rngs=rngs)
        self.query = nnx.Param(jax.random.normal(rngs.params(), (dim,), jnp.float32))
        if q is None:
            if not q_init > 1.0:
                raise ValueError(f"q_init must be > 1 for q = 1 + softplus(a), got {q_init}.")
            self.fixed_q = None
            self.q_logit = nnx.Param(jnp.asarray(_softplus_inverse(q_init - 1.0), jnp.float32))
        else:
            if not (isinstance(q, (int, float)) and q >= 1.0):
                raise ValueError(f"q must be a Python number >= 1 or None (learnable), got {q!r}.")
            self.fixed_q = float(q)

    @property
    def q(self):
        """The entropic index: a Python float if fixed, else the array 1 + softplus(a)."""
        if self.fixed_q is not None:
            return self.fixed_q
        return 1.0 + jax.nn.softplus(self.q_logit[...])

    def scores(self, tokens):
        """Attention scores s = keys · w / √d, shape (n, L) for tokens (n, L, d)."""
        return self.keys(tokens) @ self.query[...] / math.sqrt(self.dim)

    def attention(self, tokens):
        """Attention weights a = entmax_q(s) over the L positions, shape (n, L); rows sum to 1."""
        return tsallis_entmax(self.scores(tokens), q=self.q, axis=-1)

    def __call__(self, tokens):
        """Class logits (n, C) and attention weights (n, L) for tokens (n, L, d)."""
        attn = self.attention(tokens)
        context = jnp.einsum("nl,nld->nd", attn, self.values(tokens))
        return self.readout(context), attn


def make_model(variant: str, config: TaskConfig, seed: int, q_init: float = 1.5):
    """A fresh :class:`AttentionPoolingClassifier` for one of :data:`VARIANTS`."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; choose from {list(VARIANTS)}.")
    return AttentionPoolingClassifier(
        config.dim, config.n_classes, q=VARIANTS[variant], q_init=q_init, rngs=nnx.Rngs(seed)
    )


class TrainResult(NamedTuple):
    """Trained models for several seeds.

    Attributes:
      graphdef: the ``nnx`` graph definition shared by all seeds (model and optimizer).
      states: one ``nnx.State`` of (model, optimizer) per seed.
      loss: (S, steps) training cross-entropy per step.
      q: (S, steps) the entropic index after each step (constant for fixed-q variants).
      seeds: the S seeds.
    """

    graphdef: object
    states: list
    loss: np.ndarray
    q: np.ndarray
    seeds: tuple

    def model(self, index: int = 0):
        """The trained model of seed number ``index`` (an ``nnx.Module``)."""
        model, _ = nnx.merge(self.graphdef, self.states[index])
        return model


def _cross_entropy(model, tokens, labels):
    logits, _ = model(tokens)
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


@functools.cache
def _adam(learning_rate: float):
    # One optimizer object per learning rate: it is part of the (hashable) graphdef, so reusing
    # it lets every run with the same variant and shapes reuse the compiled training loop.
    return optax.adam(learning_rate)


@functools.partial(jax.jit, static_argnames="graphdef")
def _training_loop(state, tokens, labels, batches, *, graphdef):
    """``lax.scan`` of Adam steps over minibatch indices ``batches`` (steps, batch_size).

    The data are arguments, not closed-over constants: XLA would otherwise embed (and try to
    constant-fold through) megabytes of tokens at compile time. Compiled once per graphdef
    (variant, optimizer) and shapes, and reused across seeds and calls.
    """

    def one_step(state, index):
        model, optimizer = nnx.merge(graphdef, state)
        loss, grads = nnx.value_and_grad(_cross_entropy)(model, tokens[index], labels[index])
        optimizer.update(model, grads)
        q_now = jnp.asarray(model.q, jnp.float32)
        return nnx.split((model, optimizer))[1], (loss, q_now)

    return jax.lax.scan(one_step, state, batches)


def train(
    variant: str,
    data: Dataset,
    seeds=(0, 1, 2),
    *,
    config: TaskConfig = TaskConfig(),
    steps: int = 300,
    batch_size: int = 64,
    learning_rate: float = 1e-2,
    q_init: float = 1.5,
) -> TrainResult:
    """Train one model per seed with Adam on minibatches of ``data``; all seeds share one compile.

    Seed ``s`` initialises the model with ``nnx.Rngs(s)`` and draws its minibatches (with
    replacement) from ``numpy.random.default_rng(s)``. The loss is the mean cross-entropy.
    The whole run is a pure function of the split ``(graphdef, state)`` of
    (model, ``nnx.Optimizer``): ``lax.scan`` over the steps inside one ``jax.jit``, compiled
    once per variant and shapes (cached across calls) and called once per seed. (On a 2-core
    CPU this beat ``jax.vmap`` over seeds.)

    Args:
      variant: one of :data:`VARIANTS`.
      data: the training :class:`Dataset` (n, L, d); shared by all seeds.
      seeds: the S seeds.
      config: the :class:`TaskConfig` (for d and C).
      steps, batch_size, learning_rate: Adam settings; ``steps=0`` returns the untrained models.
      q_init: initial q of the ``learned_q`` variant.

    Returns:
      A :class:`TrainResult` (a state per seed; loss and q per step, per seed).
    """
    if steps < 0 or batch_size < 1:
        raise ValueError(f"steps must be >= 0 and batch_size >= 1, got {steps}, {batch_size}.")
    if data.tokens.shape[-1] != config.dim:
        raise ValueError(f"data has token dimension {data.tokens.shape[-1]}, config.dim is {config.dim}.")
    seeds = tuple(int(s) for s in seeds)
    if not seeds:
        raise ValueError("seeds must not be empty.")
    tx = _adam(float(learning_rate))
    n_examples = data.tokens.shape[0]
    tokens, labels = jnp.asarray(data.tokens), jnp.asarray(data.labels)

    def init(seed):
        model = make_model(variant, config, seed, q_init)
        return nnx.split((model, nnx.Optimizer(model, tx, wrt=nnx.Param)))

    graphdef, _ = init(seeds[0])
    if steps == 0:  # the untrained models
        empty = np.zeros((len(seeds), 0), np.float32)
        return TrainResult(graphdef, [init(seed)[1] for seed in seeds], empty, empty, seeds)
    states, losses, qs = [], [], []
    for seed in seeds:
        batches = np.random.default_rng(seed).integers(0, n_examples, (steps, batch_size))
        state, (loss, q_hist) = _training_loop(init(seed)[1], tokens, labels, batches, graphdef=graphdef)
        states.append(state)
        losses.append(np.asarray(loss))
        qs.append(np.asarray(q_hist))
    return TrainResult(graphdef, states, np.stack(losses), np.stack(qs), seeds)


def evaluate(result: TrainResult, data: Dataset, keep_attention: int = 0) -> dict:
    """Test metrics of every seed's model on one dataset (one cached compile, called per seed).

    * accuracy: fraction of argmax logits equal to the label;
    * informative_mass: mean over sequences of Σ_{j informative} a_j (1 = all attention on
      the K informative tokens; uniform attention gives K/L);
    * support: mean number of positions with a_j > 0 (L for softmax);
    * support_hits: fraction of sequences whose support contains at least one informative token;
    * score_gap: mean score of informative tokens minus mean score of distractors;
      distractor_score_std and informative_score_std: the standard deviations of the scores
      of distractors and of informative tokens.

    Args:
      result: a :class:`TrainResult`.
      data: a :class:`Dataset` (n, L, d).
      keep_attention: also return the attention rows (S, keep_attention, L) of the first
        ``keep_attention`` sequences.

    Returns:
      A dict of NumPy arrays with a leading seed axis S.
    """
    data_args = (jnp.asarray(data.tokens), jnp.asarray(data.labels), jnp.asarray(data.informative))
    per_seed = [_test_metrics(state, *data_args, graphdef=result.graphdef) for state in result.states]
    out = {k: np.stack([np.asarray(m[k]) for m in per_seed]) for k in per_seed[0]}
    # Sliced here rather than inside the compiled function, so that every call with the same
    # model and shapes reuses one compile.
    out["attention"] = out["attention"][:, :keep_attention]
    return out


@functools.partial(jax.jit, static_argnames="graphdef")
def _test_metrics(state, tokens, labels, informative, *, graphdef):
    """The metrics of :func:`evaluate` for one seed's (model, optimizer) state."""
    model, _ = nnx.merge(graphdef, state)
    scores = model.scores(tokens)
    attn = tsallis_entmax(scores, q=model.q, axis=-1)
    logits = model.readout(jnp.einsum("nl,nld->nd", attn, model.values(tokens)))
    inf = informative
    n_inf = inf.sum()
    n_dis = (~inf).sum()
    mean_inf = jnp.where(inf, scores, 0.0).sum() / n_inf
    mean_dis = jnp.where(inf, 0.0, scores).sum() / n_dis
    var_dis = jnp.where(inf, 0.0, (scores - mean_dis) ** 2).sum() / jnp.maximum(n_dis - 1, 1)
    var_inf = jnp.where(inf, (scores - mean_inf) ** 2, 0.0).sum() / jnp.maximum(n_inf - 1, 1)
    return {
        "accuracy": jnp.mean(jnp.argmax(logits, -1) == labels),
        "informative_mass": jnp.mean(jnp.sum(jnp.where(inf, attn, 0.0), -1)),
        "support": jnp.mean(jnp.sum(attn > 0, -1)),
        "support_hits": jnp.mean(jnp.any((attn > 0) & inf, -1)),
        "score_gap": mean_inf - mean_dis,
        "distractor_score_std": jnp.sqrt(var_dis),
        "informative_score_std": jnp.sqrt(var_inf),
        "attention": attn,
    }


def _stats(values):
    """Mean, std, min, max and per-seed list of an (S, n_lengths) array, as plain floats."""
    values = np.asarray(values, np.float64)
    return {
        "": values.mean(0).tolist(),
        "_std": values.std(0).tolist(),
        "_min": values.min(0).tolist(),
        "_max": values.max(0).tolist(),
        "_per_seed": values.tolist(),
    }


def run_experiment(
    lengths=(8, 64, 512),
    seeds=(0, 1, 2),
    variants=tuple(VARIANTS),
    steps: int = 300,
    batch_size: int = 64,
    learning_rate: float = 1e-2,
    q_init: float = 1.5,
    n_train: int = 2048,
    n_test: int = 1024,
    train_seed: int = 0,
    test_seed: int = 1234,
    n_attention_examples: int = 8,
    q_history_every: int = 5,
    **task,
) -> dict:
    """Run the Chapter 4 sweep: every variant, trained from scratch for every length and seed.

    Defaults are the chapter's. ``**task`` overrides :class:`TaskConfig` fields (``dim``,
    ``n_classes``, ``n_informative``, ``signal_strength``, ``class_strength``, ``noise_std``,
    ``task_seed``). For each length L the training set is
    ``make_dataset([train_seed, L], n_train, L)`` and the test set
    ``make_dataset([test_seed, L], n_test, L)``; both are shared by every
    variant and seed, so the only randomness that differs between seeds is the
    initialisation and the minibatch order. Everything is deterministic given the seeds.

    Returns:
      A JSON-serialisable dict (plain lists and floats):

      * ``lengths``, ``seeds``, ``steps``, ``chance`` (1/C), ``config`` (all settings);
      * ``baselines``: ``oracle_accuracy`` and ``uniform_accuracy`` per length
        (:func:`pooling_baselines` on the test set);
      * for each variant: ``accuracy``, ``informative_mass``, ``support``, ``support_hits``, ``score_gap``,
        ``distractor_score_std``, ``informative_score_std`` (test-set means over seeds,
        aligned with ``lengths``), each also with ``_std``, ``_min``, ``_max`` and
        ``_per_seed`` (seed × length) suffixes;
        ``train_loss`` (mean over seeds of the last 20 steps' loss, per length);
        ``attention`` (n_attention_examples × L_max: seed 0's attention at the largest L) and
        ``attention_per_seed`` (S × n_attention_examples × L_max);
      * ``learned_q`` additionally: ``q_history`` (per length, the mean over seeds of q every
        ``q_history_every`` steps), ``q_history_per_seed`` (length × seed × time),
        ``q_history_steps`` (updates done at each entry: 1, 1 + every, …), ``final_q``
        (q after the last step, per length) with ``_std/_min/_max/_per_seed``;
      * ``examples``: ``positions`` (n_attention_examples × K informative positions) and
        ``labels`` of the first test sequences at the largest L (the rows of ``attention``).
    """
    config = TaskConfig(**task)
    lengths = [int(n) for n in lengths]
    seeds = [int(s) for s in seeds]
    variants = list(variants)
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise ValueError(f"unknown variants {unknown}; choose from {list(VARIANTS)}.")
    if not lengths or not seeds or not variants:
        raise ValueError("lengths, seeds and variants must not be empty.")
    metric_names = [
        "accuracy",
        "informative_mass",
        "support",
        "support_hits",
        "score_gap",
        "distractor_score_std",
        "informative_score_std",
    ]
    longest = max(lengths)
    collected = {
        v: {"metrics": {m: [] for m in metric_names}, "q": [], "final_q": [], "loss": []} for v in variants
    }
    out = {
        "lengths": lengths,
        "seeds": seeds,
        "steps": steps,
        "chance": 1.0 / config.n_classes,
        "config": {
            **dataclasses.asdict(config),
            "batch_size": batch_size,
            "learning_rate": learning_rate,
            "q_init": q_init,
            "n_train": n_train,
            "n_test": n_test,
            "train_seed": train_seed,
            "test_seed": test_seed,
        },
        "baselines": {"oracle_accuracy": [], "uniform_accuracy": []},
    }
    for n in lengths:
        train_data = make_dataset([train_seed, n], n_train, n, config)
        test_data = make_dataset([test_seed, n], n_test, n, config)
        keep = n_attention_examples if n == longest else 0
        baselines = pooling_baselines(test_data, config)
        out["baselines"]["oracle_accuracy"].append(baselines["oracle"])
        out["baselines"]["uniform_accuracy"].append(baselines["uniform"])
        for variant in variants:
            result = train(
                variant,
                train_data,
                seeds,
                config=config,
                steps=steps,
                batch_size=batch_size,
                learning_rate=learning_rate,
                q_init=q_init,
            )
            m = evaluate(result, test_data, keep_attention=keep)
            c = collected[variant]
            for name in metric_names:
                c["metrics"][name].append(m[name])
            if n == longest:
                c["attention"] = np.asarray(m["attention"], np.float64).tolist()
            q = np.asarray(result.q, np.float64)
            c["q"].append(q[:, ::q_history_every])
            c["final_q"].append(q[:, -1])
            c["loss"].append(float(np.asarray(result.loss)[:, -20:].mean()))
        if n == longest:
            out["examples"] = {
                "positions": np.asarray(test_data.positions[:n_attention_examples]).tolist(),
                "labels": np.asarray(test_data.labels[:n_attention_examples]).tolist(),
            }
    for variant in variants:
        c = collected[variant]
        entry = {}
        for name in metric_names:
            for suffix, value in _stats(np.stack(c["metrics"][name], axis=1)).items():
                entry[name + suffix] = value
        entry["train_loss"] = c["loss"]
        entry["attention"] = c["attention"][0]
        entry["attention_per_seed"] = c["attention"]
        if VARIANTS[variant] is None:
            entry["q_history"] = [h.mean(0).tolist() for h in c["q"]]
            entry["q_history_per_seed"] = [h.tolist() for h in c["q"]]
            entry["q_history_steps"] = list(range(1, steps + 1, q_history_every))
            for suffix, value in _stats(np.stack(c["final_q"], axis=1)).items():
                entry["final_q" + suffix] = value
        out[variant] = entry
    return out
