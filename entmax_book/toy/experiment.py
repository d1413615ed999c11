"""The toy's pipeline: train every variant × seed of one length in one compiled program,
evaluate it, sweep the lengths: :func:`train_and_evaluate`.

For one length L, every variant and every seed is trained by a single compiled program
(:func:`training_program`): ``lax.scan`` over the Adam steps, ``vmap`` over the seeds, the
variants side by side in the same step (each with its own fixed α, so the fixed maps keep
their fast paths). :func:`train_and_evaluate` runs the sweep over lengths and returns plain
JSON-serialisable numbers; the recorded runs (:mod:`entmax_book.toy.runs`), the tests and
Chapter 4 all call it. A training whose loss stops being finite raises
:class:`TrainingDiverged`, with the losses it measured.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from entmax_book import checks
from entmax_book import progress as progress_bars
from entmax_book.toy.config import ToyConfig
from entmax_book.toy.model import forward, init_params, scores, variant_alpha
from entmax_book.toy.task import Dataset, make_dataset, pooling_baselines
from entmax_lib.attention import learns_alpha

__all__ = [
    "METRICS",
    "TrainResult",
    "TrainingDiverged",
    "evaluate",
    "train",
    "train_and_evaluate",
    "training_program",
]


class TrainingDiverged(FloatingPointError):
    """A training loss that is not finite: the sweep stops; the losses measured are kept.

    Attributes:
      variant, seed, length: the first model whose loss is not finite (at the earliest step).
      step: the first step (from 1) whose training loss is NaN or infinite; the last step if
        only the weights it left are not finite.
      history: what that length's training measured, as NumPy arrays: ``{"length", "variants",
        "seeds", "loss" (V, S, steps), "alpha" (V, S, steps)}`` (see :class:`TrainResult`);
        every loss before ``step`` is finite.
    """

    def __init__(self, variant, seed, length, step, history):
        super().__init__(
            f"training diverged: variant {variant!r}, seed {seed}, length L = {length}: the training "
            f"loss is not finite at step {step} of {history['loss'].shape[-1]} (the learning rate "
            "may be too high). The sweep stopped; the losses measured are in this error's .history."
        )
        self.variant, self.seed, self.length, self.step, self.history = variant, seed, length, step, history


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
        alpha = variant_alpha(variant, params)
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
            logits, _ = forward(p, x, variant_alpha(variant, p), score_norm, gradient)
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

        loss, grads = jax.value_and_grad(loss_fn)(p)
        updates, opt = tx.update(grads, opt, p)
        p = optax.apply_updates(p, updates)
        return p, opt, loss, jnp.asarray(variant_alpha(variant, p), jnp.float32)

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
        logits, attn = forward(p, tokens, variant_alpha(variant, p), score_norm)
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
    keep_attention = checks.count("keep_attention", keep_attention, 0)
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


#: The test metrics of :func:`evaluate` that :func:`train_and_evaluate` reports per length.
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
    if learns_alpha(variant):
        history = [np.asarray(t.alpha[index])[:, ::every] for _, t in per_length]  # (S, T) per length
        entry["alpha_history"] = [h.mean(0).tolist() for h in history]
        entry["alpha_history_per_seed"] = [np.asarray(h, np.float64).tolist() for h in history]
        final = [np.asarray(t.alpha[index])[:, -1] for _, t in per_length]
        entry.update(_over_seeds("final_alpha", np.stack(final, axis=1)))
    return entry


def _result_dict(config, baselines, per_length, examples) -> dict:
    """The JSON-able result of :func:`train_and_evaluate` from its per-length pieces.

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


def _finite_per_seed(params, n_seeds):
    """(S,): whether every weight of each seed's model is finite."""
    leaves = [np.isfinite(np.asarray(x)).reshape(n_seeds, -1).all(1) for x in jax.tree.leaves(params)]
    return np.all(leaves, axis=0)


def _stop_if_diverged(result: TrainResult, length: int):
    """Raise :class:`TrainingDiverged` at the first non-finite loss, or non-finite final weights.

    ``lax.scan`` runs every step in one program, so the check comes after it: the steps after
    the first non-finite loss ran on NaN weights and are reported, not used.
    """
    config = result.config
    loss = np.asarray(result.loss)  # (V, S, steps): column t is the loss computed in step t + 1
    weights_ok = np.stack([_finite_per_seed(p, len(config.seeds)) for p in result.params])  # (V, S)
    bad = np.concatenate([~np.isfinite(loss), ~weights_ok[..., None]], axis=-1)
    if not bad.any():
        return
    first = np.where(bad.any(-1), bad.argmax(-1), bad.shape[-1])  # (V, S): earliest bad column
    v, s = np.unravel_index(np.argmin(first), first.shape)
    history = {
        "length": length,
        "variants": config.variants,
        "seeds": config.seeds,
        "loss": loss,
        "alpha": np.asarray(result.alpha),
    }
    step = min(int(first[v, s]) + 1, config.steps)
    raise TrainingDiverged(config.variants[v], config.seeds[s], length, step, history)


def _evaluate_lengths(config, trained):
    """Wait for each length's training in turn and evaluate it, with a progress bar."""
    per_length = []
    bar = progress_bars.progress(len(trained), desc="toy grid (lengths)")
    for length, test_data, result in trained:
        _stop_if_diverged(result, length)
        keep = config.n_attention_examples if length == _attention_length(config) else 0
        per_length.append((evaluate(result, test_data, keep_attention=keep), result))
        shown = {"L": length, "final loss": jnp.mean(result.loss[:, :, -1])}
        learned = [i for i, v in enumerate(config.variants) if learns_alpha(v)]
        if learned:  # the learned α at the end, averaged over seeds
            shown["alpha"] = jnp.mean(result.alpha[learned[0], :, -1])
        progress_bars.report(bar, force=True, **shown)
        bar.update()
    bar.close()
    return per_length


def train_and_evaluate(config: ToyConfig = ToyConfig(), **changes) -> dict:
    """The toy's pipeline: every variant, trained from scratch for every length and seed, evaluated.

    ``train_and_evaluate()`` is the chapter's long-sequence stress setting and
    ``train_and_evaluate(ORIGINAL)`` the qjax demo (:data:`entmax_book.toy.configs.ORIGINAL`);
    ``**changes`` replace fields of ``config`` (``train_and_evaluate(ORIGINAL, steps=500)``).
    For length L the data are ``make_dataset([train_seed, L], n_train, L)`` and
    ``make_dataset([test_seed, L], n_test, L)`` shared by all seeds, or with ``data_per_seed``
    ``[train_seed, L, s]`` / ``[test_seed, L, s]`` for seed s (the demo draws fresh data per
    seed). Every setting is checked before any work; a training whose loss stops being finite
    raises :class:`TrainingDiverged` (naming the variant, seed, length and step) with the
    losses it measured, instead of returning NaN.

    Args:
      config: a :class:`~entmax_book.toy.config.ToyConfig`.
      **changes: fields of the config to replace.

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

    Raises:
      TrainingDiverged: a training loss (or a trained weight) is not finite.

    >>> result = train_and_evaluate(lengths=(6,), seeds=(0,), steps=3, n_train=8, n_test=8, batch_size=8)
    >>> result["lengths"], len(result["softmax"]["accuracy_per_seed"])
    ([6], 1)
    """
    if not isinstance(config, ToyConfig):
        raise TypeError(f"config must be a ToyConfig, got {type(config).__name__}.")
    config = dataclasses.replace(config, **changes)
    progress_bars.interactive()  # a bad ENTMAX_PROGRESS fails now, not after the training
    baselines, trained, examples = _dispatch_training(config)
    per_length = _evaluate_lengths(config, trained)
    return _result_dict(config, baselines, per_length, examples)
