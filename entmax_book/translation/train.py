"""Training of the translation :class:`~entmax_book.translation.model.Transformer`: loss, optimiser, loop.

The loss is the token-level cross-entropy of teacher-forced decoding,

    L = − (1/N) Σ_{b,t: y_bt ≠ pad} log p(y_bt | y_b,<t, x_b),

optionally label-smoothed. The optimiser is Adam with global-norm gradient clipping and a
linear warm-up followed by cosine decay (default) or inverse-square-root decay; the α logits
can have their own learning rate. Dropout (the model's own rates) draws fresh masks every step
from ``seed``. Every training setting comes from a
:class:`~entmax_book.translation.config.TrainConfig`. The train step is one
``jax.jit``-compiled pure function of the parameters (the model is split with ``nnx.split``
once, merged back at the end), so it runs unchanged on CPU, GPU or TPU.

For learned-α models the loop records every head's α every ``record_every`` steps: the
trajectories Correia, Niculae & Martins (2019) plot in their Figure 2.
"""

from __future__ import annotations

import functools
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx

from entmax_book import checks
from entmax_book import progress as progress_bars
from entmax_book.translation.config import TrainConfig
from entmax_book.translation.data import Split, batches, token_batches
from entmax_lib.attention import learns_alpha

__all__ = ["TrainingDiverged", "cross_entropy", "learning_rate_schedule", "make_optimizer", "train"]


class TrainingDiverged(FloatingPointError):
    """Training stopped at a loss that is not finite; ``history`` holds what was measured before.

    Attributes:
      step: the first step whose loss was NaN or infinite.
      history: the history dict of :func:`train` up to the last finite record.
    """

    def __init__(self, step, history):
        super().__init__(
            f"the training loss is not finite at step {step}: training stopped (the learning rate "
            "may be too high). The history up to the last finite record is in this error's .history."
        )
        self.step, self.history = step, history


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


def learning_rate_schedule(config: TrainConfig):
    """The learning rate as a function of the update count c (0 for the first update).

    "cosine" (optax's warm-up cosine decay): lr(c) = peak · c / w for c < w, then
    peak · (0.1 + 0.9 · ½ (1 + cos(π (c − w) / (steps − w)))), 10 % of the peak at c = steps.

    "inverse_sqrt" (Vaswani et al., 2017, §5.3, scaled to peak at step w): with s = c + 1 the
    step being taken, lr(s) = peak · min(s / w, √(w / s)), w ≥ 1 (a run of one step takes it
    at the peak).

    Args:
      config: a :class:`~entmax_book.translation.config.TrainConfig` (``learning_rate`` =
        peak; w = ``warmup_steps``, at most half the run: min(warmup_steps, steps // 2)).

    Returns:
      a function of the (integer or traced) count, an optax schedule.

    References:
      Loshchilov & Hutter (2017), SGDR: https://arxiv.org/abs/1608.03983 ;
      Vaswani et al. (2017), Attention Is All You Need: https://arxiv.org/abs/1706.03762

    >>> config = TrainConfig(steps=100, learning_rate=1.0, warmup_steps=4, schedule="inverse_sqrt")
    >>> schedule = learning_rate_schedule(config)
    >>> [round(float(schedule(c)), 3) for c in (0, 3, 15, 99)]
    [0.25, 1.0, 0.5, 0.2]
    """
    peak, warmup = config.learning_rate, min(config.warmup_steps, config.steps // 2)
    if config.schedule == "inverse_sqrt":
        warmup = max(warmup, 1)  # min(…, steps // 2) is 0 for one step: it would train at rate 0

        def inverse_sqrt(count):
            step = jnp.asarray(count, jnp.float32) + 1.0
            return peak * jnp.minimum(step / warmup, jnp.sqrt(warmup / step))

        return inverse_sqrt
    return optax.warmup_cosine_decay_schedule(
        init_value=0.0, peak_value=peak, warmup_steps=warmup, decay_steps=config.steps, end_value=0.1 * peak
    )


def _is_alpha(path):
    return any(getattr(key, "key", None) == "alpha_logit" for key in path)


def make_optimizer(config: TrainConfig):
    """Adam(β₂ = 0.98) with gradient clipping and the schedule of :func:`learning_rate_schedule`.

    The global gradient norm is clipped to ``clip_norm`` first. With ``alpha_learning_rate``
    the α logits (parameters named ``alpha_logit``) get their own Adam whose learning rate is the
    same schedule scaled by ``alpha_learning_rate / learning_rate``.

    Args:
      config: a :class:`~entmax_book.translation.config.TrainConfig`.

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


def _eval_steps(evaluate, eval_steps, steps):
    """The checked set of steps after which ``evaluate`` runs."""
    eval_steps = list(eval_steps)
    if not all(checks.is_int(s) and 1 <= s <= steps for s in eval_steps):
        raise ValueError(f"eval_steps must be steps in 1 … {steps}, got {eval_steps}.")
    if eval_steps and evaluate is None:
        raise ValueError("eval_steps given without an evaluate function.")
    return set(eval_steps)


def _minibatches(columns, config, seed, pad_id, devices):
    """Fixed-size batches with a fresh permutation every epoch (one shape, one compilation), or
    token batches (one shape and compilation per length bucket)."""
    if config.batch_tokens is not None:
        return token_batches(columns, config.batch_tokens, seed, pad_id=pad_id, multiple_of=len(devices))
    if config.batch_size % len(devices):
        raise ValueError(
            f"batch_size={config.batch_size} must be a multiple of the {len(devices)} local devices "
            "(the batch is split across them)."
        )
    if len(columns["src"]) < config.batch_size:
        raise ValueError(
            f"the training set ({len(columns['src'])} pairs) is smaller than batch_size={config.batch_size}."
        )
    return batches(columns, config.batch_size, seed)


def _replicate(devices, tree):
    """Replicate ``tree`` over a one-axis mesh of the local devices; return it and a function that
    splits a batch along the mesh. On one device both are the identity."""
    if len(devices) == 1:
        return tree, lambda batch: batch
    mesh = jax.sharding.Mesh(np.asarray(devices), ("data",))
    replicated = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
    split = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("data"))
    return jax.device_put(tree, replicated), lambda batch: jax.device_put(batch, split)


def _record_alpha(history, model, params, step):
    nnx.update(model, params)
    history["alpha_step"].append(step)
    for kind, value in model.alphas().items():
        history["alpha"].setdefault(kind, []).append(np.asarray(value).round(5).tolist())


def _record(history, losses, step, model, params, bar):
    """Record the mean loss since the previous record (and α); stop at a loss that is not finite."""
    losses = np.asarray(jax.device_get(losses), np.float64)
    if not np.all(np.isfinite(losses)):
        first = step - len(losses) + 1 + int(np.argmin(np.isfinite(losses)))
        raise TrainingDiverged(first, history)
    history["step"].append(step)
    history["loss"].append(round(float(losses.mean()), 5))
    mean_alpha = None
    if learns_alpha(model.normaliser):
        _record_alpha(history, model, params, step)
        mean_alpha = float(np.mean([a[-1] for a in history["alpha"].values()]))
    progress_bars.report(bar, step=step, loss=history["loss"][-1], alpha=mean_alpha)
    bar.update(step - bar.n)


def _evaluate(history, model, params, evaluate, step):
    """Run ``evaluate`` on the current weights; return the seconds it took (not training time)."""
    jax.block_until_ready(params)
    start = time.perf_counter()
    nnx.update(model, params)
    scores = history.setdefault("eval", {"step": []})
    scores["step"].append(step)
    for key, value in evaluate(model).items():
        scores.setdefault(key, []).append(round(float(value), 5))
    return time.perf_counter() - start


def train(
    model,
    split: Split,
    config: TrainConfig,
    *,
    seed=0,
    desc="train",
    evaluate=None,
    eval_steps=(),
    stop_after=None,
):
    """Train ``model`` in place on teacher-forced batches of ``split``, with ``config``.

    Shows a progress bar with the step, the loss and (for learned α) the mean α where someone
    is watching (a terminal, Jupyter or Colab; never in the built book or the tests, see
    :mod:`entmax_book.progress`). Stops with :class:`TrainingDiverged` at the first record
    whose losses are not all finite.

    Data-parallel over every local device: with more than one (several GPUs, or CPU devices
    forced by ``XLA_FLAGS=--xla_force_host_platform_device_count=N``), the weights and the
    optimiser state are replicated on a one-axis device mesh and every batch is split along
    it (``jax.sharding``); XLA adds the gradient all-reduce. The same code runs unchanged on one
    device. Batch sizes must then be a multiple of the device count.

    Args:
      model: a :class:`~entmax_book.translation.model.Transformer`.
      split: the training :class:`~entmax_book.translation.data.Split`.
      config: a :class:`~entmax_book.translation.config.TrainConfig`.
      seed: the batch order and the dropout masks.
      desc: the progress bar's label.
      evaluate: optional callable ``evaluate(model) -> dict of numbers`` (e.g. the validation
        loss), called with the model's current weights after each step in ``eval_steps``; its
        time is not counted in "seconds".
      eval_steps: the steps (1 … ``steps``) after which ``evaluate`` runs.
      stop_after: stop after this many steps of the config's schedule (default: all
        ``config.steps``), e.g. to rerun the start of a longer run.

    Returns:
      History dict (JSON-serialisable): "step" and "loss" (mean loss since the previous
      record), "alpha" (attention type → list over records of [layer][head] α, only for
      learned-α models; the first record is the initial α at step 0), "alpha_step",
      "seconds" (training wall time, compilation included), "compile_seconds" (the first
      step) and, with ``evaluate``, "eval" (its numbers by step).
    """
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}.")
    if not isinstance(split, Split):
        raise TypeError(
            f"split must be a data.Split (see experiment.prepare_data), got {type(split).__name__}."
        )
    last = (
        config.steps if stop_after is None else checks.count("stop_after", stop_after, maximum=config.steps)
    )
    seed = checks.count("seed", seed, minimum=0)
    columns = {k: np.asarray(v, np.int32) for k, v in split.columns().items()}
    devices = jax.local_devices()
    eval_steps = _eval_steps(evaluate, eval_steps, last)
    minibatches = _minibatches(columns, config, seed, model.pad_id, devices)
    optimizer = make_optimizer(config)
    graphdef, params, rest = nnx.split(model, nnx.Param, ...)
    (params, rest, opt_state), place = _replicate(devices, (params, rest, optimizer.init(params)))
    step_fn = functools.partial(
        _train_step, graphdef, optimizer, model.pad_id, config.label_smoothing, config.compute_dtype
    )
    history = {"step": [], "loss": [], "alpha_step": [], "alpha": {}}
    if learns_alpha(model.normaliser):
        _record_alpha(history, model, params, 0)
    dropout_key = jax.random.key(seed)  # used only where the model has a dropout rate above 0
    start, running = time.perf_counter(), []
    with progress_bars.progress(last, desc=desc) as bar:
        for step in range(1, last + 1):
            key = jax.random.fold_in(dropout_key, step)
            params, opt_state, loss = step_fn(params, rest, opt_state, place(next(minibatches)), key)
            running.append(loss)
            if step == 1:
                loss.block_until_ready()
                history["compile_seconds"] = time.perf_counter() - start
            if step % config.record_every == 0 or step == last:
                _record(history, running, step, model, params, bar)
                running = []
            if step in eval_steps:
                start += _evaluate(history, model, params, evaluate, step)
    jax.block_until_ready(params)
    history["seconds"] = time.perf_counter() - start
    nnx.update(model, params)
    return history
