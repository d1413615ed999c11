"""Training of the translation :class:`~entmax_book.translation.model.Transformer`: loss, optimiser, loop.

The loss is the token-level cross-entropy of teacher-forced decoding,

    L = − (1/N) Σ_{b,t: y_bt ≠ pad} log p(y_bt | y_b,<t, x_b),

optionally label-smoothed. The optimiser is Adam with global-norm gradient clipping and a
linear warm-up followed by cosine decay (default) or inverse-square-root decay; the α logits
can have their own learning rate. Dropout (rates in the model's config) draws fresh masks
every step from ``seed``. The train step is one ``jax.jit``-compiled pure function of
the parameters (the model is split with ``nnx.split`` once, merged back at the end), so it
runs unchanged on CPU, GPU or TPU.

For learned-α models the loop records every head's α every ``record_every`` steps: the
trajectories Correia, Niculae & Martins (2019) plot in their Figure 2.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

from entmax_book import progress as progress_bars
from entmax_book.translation.data import batches, token_batches

__all__ = ["TrainConfig", "cross_entropy", "learning_rate_schedule", "make_optimizer", "train"]

SCHEDULES = ("cosine", "inverse_sqrt")
COMPUTE_DTYPES = ("float32", "bfloat16")


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """Schedule of :func:`train`.

    >>> TrainConfig(steps=100, batch_size=16).learning_rate
    0.003

    Attributes:
      steps: number of optimiser steps.
      batch_size: sentence pairs per step (every batch has exactly this size: fixed shapes).
      learning_rate: peak learning rate after warm-up.
      warmup_steps: linear warm-up length (≥ 1 for "inverse_sqrt").
      clip_norm: global gradient-norm clipping threshold.
      label_smoothing: ε of label smoothing (0 = plain cross-entropy).
      seed: seed of the batch order and of the dropout masks.
      record_every: record the loss and α every this many steps.
      schedule: after the warm-up, "cosine" decay to 10 % of the peak at the last step, or
        "inverse_sqrt" decay ∝ 1/√step (see :func:`learning_rate_schedule`).
      alpha_learning_rate: peak learning rate of the α logits (learned-α models), following the
        same schedule shape; None: ``learning_rate``; 0 freezes α.
      batch_tokens: if set, batch by tokens instead of sentences: batches of about this many
        tokens, sentences grouped by length (:func:`~entmax_book.translation.data.token_batches`);
        ``batch_size`` is then unused.
      compute_dtype: "float32", or "bfloat16" to run the forward and backward passes in
        bfloat16 (the weights, the optimiser and the loss stay float32): for GPUs and TPUs.
    """

    steps: int = 1000
    batch_size: int = 64
    learning_rate: float = 3e-3
    warmup_steps: int = 50
    clip_norm: float = 1.0
    label_smoothing: float = 0.0
    seed: int = 0
    record_every: int = 10
    schedule: str = "cosine"
    alpha_learning_rate: float | None = None
    batch_tokens: int | None = None
    compute_dtype: str = "float32"

    def __post_init__(self):
        for name in ("steps", "batch_size", "record_every", "warmup_steps", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise ValueError(f"{name} must be an integer, got {value!r}.")
        for name in ("steps", "batch_size", "record_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive count, got {getattr(self, name)}.")
        if not 0 <= self.warmup_steps < self.steps:
            raise ValueError(f"warmup_steps must be in [0, steps), got {self.warmup_steps}.")
        for name in ("learning_rate", "clip_norm"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < math.inf:
                raise ValueError(f"{name} must be a positive finite number, got {value!r}.")
        if not 0.0 <= self.label_smoothing < 1.0:
            raise ValueError(f"label_smoothing must be in [0, 1), got {self.label_smoothing}.")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}.")
        if self.schedule == "inverse_sqrt" and self.warmup_steps < 1:
            raise ValueError("the inverse_sqrt schedule needs warmup_steps ≥ 1.")
        tokens = self.batch_tokens
        if tokens is not None and (
            isinstance(tokens, bool) or not isinstance(tokens, numbers.Integral) or tokens < 1
        ):
            raise ValueError(f"batch_tokens must be None or a positive integer, got {tokens!r}.")
        if self.compute_dtype not in COMPUTE_DTYPES:
            raise ValueError(f"compute_dtype must be one of {COMPUTE_DTYPES}, got {self.compute_dtype!r}.")
        lr = self.alpha_learning_rate
        if lr is not None and (
            isinstance(lr, bool) or not isinstance(lr, numbers.Real) or not 0 <= lr < math.inf
        ):
            raise ValueError(f"alpha_learning_rate must be None or a finite number ≥ 0, got {lr!r}.")


def cross_entropy(logits, targets, pad_id=0, label_smoothing=0.0):
    """Mean cross-entropy over non-padding targets.

    Args:
      logits: (B, T, V).
      targets: (B, T) int ids; positions equal to ``pad_id`` are ignored.
      label_smoothing: ε; the target distribution is (1 − ε) one-hot + ε/V uniform.

    Returns:
      scalar: − Σ_{non-pad} Σ_v q_v log softmax(logits)_v / #non-pad.

    >>> round(float(cross_entropy(jnp.zeros((1, 2, 4)), jnp.array([[1, 0]]))), 4)  # log 4
    1.3863
    """
    log_probs = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
    nll = -jnp.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    if label_smoothing:
        nll = (1.0 - label_smoothing) * nll - label_smoothing * jnp.mean(log_probs, axis=-1)
    weight = (targets != pad_id).astype(jnp.float32)
    return jnp.sum(nll * weight) / jnp.maximum(jnp.sum(weight), 1.0)


def learning_rate_schedule(config):
    """The learning rate as a function of the update count c (0 for the first update).

    "cosine" (optax's warm-up cosine decay): lr(c) = peak · c / w for c < w, then
    peak · (0.1 + 0.9 · ½ (1 + cos(π (c − w) / (steps − w)))), 10 % of the peak at c = steps.

    "inverse_sqrt" (Vaswani et al., 2017, §5.3, scaled to peak at step w): with s = c + 1 the
    step being taken, lr(s) = peak · min(s / w, √(w / s)).

    Args:
      config: a :class:`TrainConfig` (``learning_rate`` = peak, ``warmup_steps`` = w).

    Returns:
      a function of the (integer or traced) count, an optax schedule.

    References:
      Loshchilov & Hutter (2017), SGDR: https://arxiv.org/abs/1608.03983 ;
      Vaswani et al. (2017), Attention Is All You Need: https://arxiv.org/abs/1706.03762

    >>> schedule = learning_rate_schedule(TrainConfig(steps=100, learning_rate=1.0, warmup_steps=4,
    ...                                               schedule="inverse_sqrt"))
    >>> [round(float(schedule(c)), 3) for c in (0, 3, 15, 99)]
    [0.25, 1.0, 0.5, 0.2]
    """
    peak, warmup = config.learning_rate, config.warmup_steps
    if config.schedule == "inverse_sqrt":

        def inverse_sqrt(count):
            step = jnp.asarray(count, jnp.float32) + 1.0
            return peak * jnp.minimum(step / warmup, jnp.sqrt(warmup / step))

        return inverse_sqrt
    return optax.warmup_cosine_decay_schedule(
        init_value=0.0, peak_value=peak, warmup_steps=warmup, decay_steps=config.steps, end_value=0.1 * peak
    )


def _is_alpha(path):
    return any(getattr(key, "key", None) == "alpha_logit" for key in path)


def make_optimizer(config):
    """Adam(β₂ = 0.98) with gradient clipping and the schedule of :func:`learning_rate_schedule`.

    The global gradient norm is clipped to ``clip_norm`` first. With ``alpha_learning_rate``
    the α logits (parameters named ``alpha_logit``) get their own Adam whose learning rate is the
    same schedule scaled by ``alpha_learning_rate / learning_rate``.

    Args:
      config: a :class:`TrainConfig`.

    Returns:
      an ``optax.GradientTransformation``.

    References:
      Kingma & Ba (2015), Adam: https://arxiv.org/abs/1412.6980

    >>> optimizer = make_optimizer(TrainConfig(steps=10, warmup_steps=2))
    >>> state = optimizer.init({"w": jnp.zeros(3)})
    """
    schedule = learning_rate_schedule(config)
    clip = optax.clip_by_global_norm(config.clip_norm)
    if config.alpha_learning_rate is None:
        return optax.chain(clip, optax.adam(schedule, b2=0.98))
    scale = config.alpha_learning_rate / config.learning_rate
    adams = {
        "alpha": optax.adam(lambda count: scale * schedule(count), b2=0.98),
        "rest": optax.adam(schedule, b2=0.98),
    }

    def labels(params):
        return jax.tree_util.tree_map_with_path(
            lambda path, _: "alpha" if _is_alpha(path) else "rest", params
        )

    return optax.chain(clip, optax.multi_transform(adams, labels))


def _cast_floats(tree, dtype):
    return jax.tree.map(lambda a: a.astype(dtype) if jnp.issubdtype(a.dtype, jnp.floating) else a, tree)


@functools.partial(jax.jit, static_argnums=(0, 1, 2, 3, 4))
def _train_step(
    graphdef, optimizer, pad_id, label_smoothing, compute_dtype, params, rest, opt_state, batch, dropout_key
):
    def loss_fn(params):
        if compute_dtype != "float32":  # mixed precision: float32 weights, low-precision passes
            params, rest_ = _cast_floats(params, compute_dtype), _cast_floats(rest, compute_dtype)
        else:
            rest_ = rest
        model = nnx.merge(graphdef, params, rest_)
        logits = model(batch["src"], batch["tgt_in"], dropout_key=dropout_key)
        return cross_entropy(logits, batch["tgt_out"], pad_id, label_smoothing)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def train(model, arrays, config, progress=None, desc="train", evaluate=None, eval_steps=()):
    """Train ``model`` in place on teacher-forced batches of ``arrays``.

    Shows a progress bar with the step, the loss and (for learned α) the mean α where someone
    is watching (a terminal, Jupyter or Colab; never in the built book or the tests, see
    :mod:`entmax_book.progress`).

    Data-parallel over every local device: with more than one (several GPUs, or CPU devices
    forced by ``XLA_FLAGS=--xla_force_host_platform_device_count=N``), the weights and the
    optimiser state are replicated on a one-axis device mesh and every batch is split along
    it (``jax.sharding``); XLA adds the gradient all-reduce. The same code runs unchanged on one
    device. Batch sizes must then be a multiple of the device count.

    Args:
      model: a :class:`~entmax_book.translation.model.Transformer`.
      arrays: dict with "src" (N, S), "tgt_in" (N, T), "tgt_out" (N, T) int arrays
        (as made by ``entmax_book.translation.data.encode_examples``).
      config: a :class:`TrainConfig`.
      progress: optional callable ``progress(step, loss)`` called at every record.
      desc: the progress bar's label.
      evaluate: optional callable ``evaluate(model) -> dict of numbers`` (e.g. the test loss
        and BLEU), called with the model's current weights after each step in ``eval_steps``;
        its time is not counted in "seconds".
      eval_steps: the steps (1 … ``steps``) after which ``evaluate`` runs.

    Returns:
      History dict (JSON-serialisable): "step" and "loss" (mean loss since the previous
      record), "alpha" (attention type → list over records of [layer][head] α, only for
      learned-α models; the first record is the initial α at step 0), "alpha_step",
      "seconds" (training wall time, compilation included) and "compile_seconds"
      (the first step).
    """
    columns = {k: np.asarray(arrays[k], np.int32) for k in ("src", "tgt_in", "tgt_out")}
    devices = jax.local_devices()
    if config.batch_tokens is None and config.batch_size % len(devices):
        raise ValueError(
            f"batch_size={config.batch_size} must be a multiple of the {len(devices)} local devices "
            "(the batch is split across them)."
        )
    if config.batch_tokens is None and len(columns["src"]) < config.batch_size:
        raise ValueError(
            f"the training set ({len(columns['src'])} pairs) is smaller than batch_size={config.batch_size}."
        )
    eval_steps = list(eval_steps)
    if not all(
        isinstance(s, numbers.Integral) and not isinstance(s, bool) and 1 <= s <= config.steps
        for s in eval_steps
    ):
        raise ValueError(f"eval_steps must be steps in 1 … {config.steps}, got {eval_steps}.")
    eval_steps = set(eval_steps)
    if eval_steps and evaluate is None:
        raise ValueError("eval_steps given without an evaluate function.")
    learned = model.config.normaliser == "alpha_entmax"
    optimizer = make_optimizer(config)
    graphdef, params, rest = nnx.split(model, nnx.Param, ...)
    opt_state = optimizer.init(params)
    history = {"step": [], "loss": [], "alpha_step": [], "alpha": {}}

    def record_alpha(step):
        nnx.update(model, params)
        history["alpha_step"].append(step)
        for kind, value in model.alphas().items():
            history["alpha"].setdefault(kind, []).append(np.asarray(value).round(5).tolist())

    if learned:
        record_alpha(0)
    if config.batch_tokens is None:
        # full-size batches, a fresh permutation every epoch: one shape, one compilation
        minibatches = batches(columns, config.batch_size, config.seed)
    else:  # one shape (and compilation) per length bucket
        minibatches = token_batches(
            columns, config.batch_tokens, config.seed, pad_id=model.config.pad_id, multiple_of=len(devices)
        )
    place = lambda tree: tree  # noqa: E731
    if len(devices) > 1:
        mesh = jax.sharding.Mesh(np.asarray(devices), ("data",))
        replicated = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
        params, rest, opt_state = jax.device_put((params, rest, opt_state), replicated)
        split = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("data"))
        place = lambda tree: jax.device_put(tree, split)  # noqa: E731
    rates = (model.config.dropout, model.config.attention_dropout, model.config.ffn_dropout)
    dropout_key = jax.random.key(config.seed) if any(rates) else None
    start = time.perf_counter()
    running = []
    bar = progress_bars.progress(config.steps, desc=desc)
    for step in range(1, config.steps + 1):
        batch = place(next(minibatches))
        step_key = None if dropout_key is None else jax.random.fold_in(dropout_key, step)
        params, opt_state, loss = _train_step(
            graphdef,
            optimizer,
            model.config.pad_id,
            config.label_smoothing,
            config.compute_dtype,
            params,
            rest,
            opt_state,
            batch,
            step_key,
        )
        running.append(loss)
        if step == 1:
            loss.block_until_ready()
            history["compile_seconds"] = time.perf_counter() - start
        if step % config.record_every == 0 or step == config.steps:
            mean_loss = float(np.mean(jax.device_get(running)))
            running = []
            history["step"].append(step)
            history["loss"].append(round(mean_loss, 5))
            if learned:
                record_alpha(step)
            if progress is not None:
                progress(step, mean_loss)
            # the α just recorded, averaged over heads, layers and attention types
            mean_alpha = float(np.mean([a[-1] for a in history["alpha"].values()])) if learned else None
            progress_bars.report(bar, step=step, loss=mean_loss, alpha=mean_alpha)
            bar.update(step - bar.n)
        if step in eval_steps:
            jax.block_until_ready(params)
            paused = time.perf_counter()
            nnx.update(model, params)
            scores = history.setdefault("eval", {"step": []})
            scores["step"].append(step)
            for key, value in evaluate(model).items():
                scores.setdefault(key, []).append(round(float(value), 5))
            start += time.perf_counter() - paused  # evaluation is not training time
    bar.close()
    jax.block_until_ready(params)
    history["seconds"] = time.perf_counter() - start
    nnx.update(model, params)
    return history
