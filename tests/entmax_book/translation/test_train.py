"""entmax_book.translation.train at tiny sizes on the CPU: the loss, the schedules, the optimiser, the
loop's options, and the path to the paper's scale (token-based batches, bfloat16 passes,
data-parallel training over several devices giving the same losses)."""

import json
import math
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from translation_helpers import random_split, small_model

from entmax_book.translation.config import TrainConfig
from entmax_book.translation.configs import PAPER_SCALE
from entmax_book.translation.data import token_batches
from entmax_book.translation.model import weights
from entmax_book.translation.train import (
    TrainingDiverged,
    cross_entropy,
    learning_rate_schedule,
    make_optimizer,
    train,
)


def _pairs(n=64, width=24, seed=0):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, width, n)
    src = np.where(np.arange(width) < lengths[:, None], rng.integers(4, 50, (n, width)), 0)
    tgt = np.where(
        np.arange(width) < (lengths[:, None] + 1).clip(max=width), rng.integers(4, 50, (n, width)), 0
    )
    return {"src": src, "tgt_in": tgt, "tgt_out": tgt, "ids": np.arange(n)}


def test_token_batches_respect_the_budget_and_lose_no_token():
    data = _pairs()
    stream = token_batches(data, max_tokens=96, seed=0, multiple_of=2, bucket_width=8)
    seen, shapes = [], set()
    for _ in range(30):
        batch = next(stream)
        n, length = batch["src"].shape
        shapes.add((n, length))
        assert n * length <= 96 and n % 2 == 0
        ids = batch["ids"]
        # the columns that were cut off held only padding
        assert not data["src"][ids][:, length:].any() and not data["tgt_in"][ids][:, length:].any()
        seen.append(ids)
    assert len(shapes) <= 3  # one shape per length bucket: 8, 16, 24
    first_epoch = np.concatenate(seen[:5])
    assert len(np.unique(first_epoch)) == len(first_epoch)  # no pair twice within an epoch


def test_token_batches_reject_a_budget_that_fits_no_batch():
    with pytest.raises(ValueError, match="max_tokens"):
        next(token_batches(_pairs(n=4), max_tokens=4, seed=0, multiple_of=2, bucket_width=8))
    with pytest.raises(ValueError, match="multiple_of"):
        next(token_batches(_pairs(), max_tokens=64, seed=0, multiple_of=0))


_RUN = textwrap.dedent(
    """
    import json, sys
    import jax
    import numpy as np
    from entmax_book.translation.config import ModelConfig, TrainConfig
    from entmax_book.translation.data import Example, Split
    from entmax_book.translation.model import Transformer
    from entmax_book.translation.train import train

    compute_dtype, batch_tokens = sys.argv[1], None if sys.argv[2] == "none" else int(sys.argv[2])
    model_config = ModelConfig(normaliser="alpha_entmax", d_model=16, num_heads=2, num_layers=1, d_ff=32)
    config = TrainConfig(steps=3, batch_size=8, warmup_steps=1, record_every=1,
                         compute_dtype=compute_dtype, batch_tokens=batch_tokens)
    model = Transformer(model_config, 40, seed=0)
    rng = np.random.default_rng(0)
    ids = {k: rng.integers(4, 40, (32, 8)).astype(np.int32) for k in ("src", "tgt_in", "tgt_out")}
    words = np.zeros((32, 8), np.int32)
    align = np.zeros((32, 8, 8))
    split = Split((Example("a", "b"),) * 32, **ids, src_words=words, tgt_words=words, align=align)
    history = train(model, split, config)
    print(json.dumps({"devices": jax.local_device_count(), "loss": history["loss"]}))
    """
)


def _train_in_a_fresh_process(devices, compute_dtype="float32", batch_tokens=None):
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}", JAX_PLATFORMS="cpu")
    args = [sys.executable, "-c", _RUN, compute_dtype, str(batch_tokens).lower()]
    out = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_data_parallel_training_on_4_devices_gives_the_losses_of_1():
    one, four = _train_in_a_fresh_process(1), _train_in_a_fresh_process(4)
    assert one["devices"] == 1 and four["devices"] == 4
    np.testing.assert_allclose(four["loss"], one["loss"], rtol=1e-5)


@pytest.mark.slow
def test_bfloat16_passes_and_token_batches_train():
    full = _train_in_a_fresh_process(1)
    half = _train_in_a_fresh_process(1, "bfloat16")
    assert np.all(np.isfinite(half["loss"]))
    np.testing.assert_allclose(half["loss"], full["loss"], rtol=5e-2)  # bfloat16 has 8 bits
    tokens = _train_in_a_fresh_process(2, batch_tokens=32)
    assert tokens["devices"] == 2 and np.all(np.isfinite(tokens["loss"]))


def test_paper_scale_settings_are_valid_and_transformer_base():
    model, config = PAPER_SCALE.model, PAPER_SCALE.train
    assert (model.num_layers, model.num_heads, model.d_model, model.d_ff) == (6, 8, 512, 2048)
    assert model.dropout == config.label_smoothing == 0.1 and config.schedule == "inverse_sqrt"
    assert config.compute_dtype == "bfloat16" and config.batch_tokens == 8192
    assert config.learning_rate == pytest.approx(2 * 512**-0.5 * 20_000**-0.5)
    # a few dozen learning-curve points over the run, not hundreds
    assert 5 <= config.steps // config.eval_every <= 50


def _train_config(**settings):
    return TrainConfig(**{"steps": 4, "batch_size": 8, "warmup_steps": 2, "record_every": 2, **settings})


def test_cross_entropy_matches_numpy():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((2, 4, 5))
    targets = np.array([[1, 2, 0, 0], [4, 3, 2, 1]])
    log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = -np.take_along_axis(log_p, targets[..., None], -1)[..., 0]
    expected = nll[targets != 0].mean()
    np.testing.assert_allclose(
        float(cross_entropy(jnp.asarray(logits), jnp.asarray(targets))), expected, rtol=1e-5
    )
    smooth = 0.9 * nll - 0.1 * log_p.mean(-1)
    got = float(cross_entropy(jnp.asarray(logits), jnp.asarray(targets), label_smoothing=0.1))
    np.testing.assert_allclose(got, smooth[targets != 0].mean(), rtol=1e-5)


def test_label_smoothing_by_hand():
    # two classes, p = (1/4, 3/4), target 1, ε = 0.2:
    # (1 − ε)·(−log 3/4) + ε·mean(−log 1/4, −log 3/4)
    logits = jnp.log(jnp.array([[[1.0, 3.0]]]))
    expected = 0.8 * math.log(4 / 3) + 0.2 * (math.log(4) + math.log(4 / 3)) / 2
    got = float(cross_entropy(logits, jnp.array([[1]]), pad_id=0, label_smoothing=0.2))
    assert got == pytest.approx(expected, rel=1e-6)
    assert expected == pytest.approx(0.397543, abs=1e-6)


def test_schedules_at_a_few_steps():
    inverse = learning_rate_schedule(
        TrainConfig(steps=1000, learning_rate=2e-3, warmup_steps=100, schedule="inverse_sqrt")
    )
    # step s = count + 1: 2e-3 · min(s/100, √(100/s))
    for count, value in [(0, 2e-5), (49, 1e-3), (99, 2e-3), (399, 1e-3), (899, 2e-3 / 3)]:
        assert float(inverse(count)) == pytest.approx(value, rel=1e-5)
    cosine = learning_rate_schedule(TrainConfig(steps=300, learning_rate=1.0, warmup_steps=100))
    for count, value in [(0, 0.0), (50, 0.5), (100, 1.0), (200, 0.55), (300, 0.1)]:
        assert float(cosine(count)) == pytest.approx(value, abs=1e-6)
    # the warm-up is at most half the run
    short = learning_rate_schedule(TrainConfig(steps=10, learning_rate=1.0, warmup_steps=100))
    assert float(short(5)) == pytest.approx(1.0)


@pytest.mark.slow
@pytest.mark.parametrize("schedule", ["inverse_sqrt", "cosine"])
def test_a_run_of_one_step_trains(schedule):
    # inverse_sqrt used to take its warm-up as min(warmup, steps // 2) = 0 for one step: rate 0
    assert float(learning_rate_schedule(TrainConfig(steps=1, schedule=schedule, warmup_steps=5))(0)) > 0
    model = small_model(num_layers=1)
    before = weights(model)
    train(model, random_split(), _train_config(steps=1, schedule=schedule, warmup_steps=5, record_every=1))
    after = weights(model)
    assert any(not np.array_equal(before[name], after[name]) for name in before)


@pytest.mark.parametrize("alpha_lr", [0.0, 3e-2])
def test_separate_alpha_learning_rate(alpha_lr):
    # a parameter tree shaped like the model's: the α logits are the leaves named alpha_logit
    params = {"layer": {"attention": {"alpha_logit": jnp.zeros(2), "query": {"kernel": jnp.zeros((3, 2))}}}}
    config = TrainConfig(
        steps=10, learning_rate=1e-2, warmup_steps=1, schedule="inverse_sqrt", alpha_learning_rate=alpha_lr
    )
    optimizer = make_optimizer(config)
    grads = jax.tree_util.tree_map(jnp.ones_like, params)
    updates, _ = optimizer.update(grads, optimizer.init(params), params)
    # Adam's first update is −lr · g / |g| (up to ε): −α lr for the α logits, −lr for the rest
    attention = updates["layer"]["attention"]
    np.testing.assert_allclose(attention["alpha_logit"], -alpha_lr, rtol=1e-4, atol=1e-9)
    np.testing.assert_allclose(attention["query"]["kernel"], -1e-2, rtol=1e-4)


def test_train_checks_its_arguments():
    split = random_split(n=4)
    with pytest.raises(ValueError, match="smaller than batch_size"):
        train(small_model(), split, _train_config(steps=2, batch_size=8, warmup_steps=0))
    with pytest.raises(TypeError, match="config must be a TrainConfig"):
        train(small_model(), split, {"steps": 2})
    with pytest.raises(TypeError, match="split must be a data.Split"):
        train(small_model(), split.columns(), _train_config())


@pytest.mark.slow
def test_training_with_dropout_and_options_runs():
    model = small_model("alpha_entmax", num_layers=1, dropout=0.1, attention_dropout=0.1, ffn_dropout=0.1)
    config = _train_config(label_smoothing=0.1, schedule="inverse_sqrt", alpha_learning_rate=1e-2)
    history = train(model, random_split(), config)
    assert len(history["loss"]) == 2 and np.all(np.isfinite(history["loss"]))


@pytest.mark.slow
def test_evaluation_during_training_sees_the_current_weights_and_changes_nothing():
    split = random_split(seed=2)
    config = _train_config(steps=6, warmup_steps=1, record_every=1)
    probe = jnp.asarray(split.src[:2]), jnp.asarray(split.tgt_in[:2])

    def evaluate(model):
        return {"logit_sum": jnp.sum(model(*probe))}

    plain = small_model("alpha_entmax", num_layers=1)
    plain_history = train(plain, split, config)
    watched = small_model("alpha_entmax", num_layers=1)
    history = train(watched, split, config, evaluate=evaluate, eval_steps=[3, 6])
    assert history["eval"]["step"] == [3, 6]
    assert history["loss"] == plain_history["loss"]  # evaluating does not change training
    final = float(evaluate(plain)["logit_sum"])
    assert history["eval"]["logit_sum"][1] == pytest.approx(final, rel=1e-5)
    assert history["eval"]["logit_sum"][0] != pytest.approx(final, rel=1e-3)
    for bad in ([0], [7], [2.5], ["3"], [True]):
        with pytest.raises(ValueError, match="eval_steps"):
            train(watched, split, config, evaluate=evaluate, eval_steps=bad)
    with pytest.raises(ValueError, match="evaluate"):
        train(watched, split, config, eval_steps=[2])


@pytest.mark.slow
def test_training_shows_step_loss_and_alpha_when_someone_watches(monkeypatch, capsys):
    model = small_model("alpha_entmax", num_layers=1)
    split, config = random_split(seed=1), _train_config()
    monkeypatch.setenv("ENTMAX_PROGRESS", "0")
    train(model, split, config, desc="quiet")
    assert "quiet" not in capsys.readouterr().err
    monkeypatch.setenv("ENTMAX_PROGRESS", "1")
    train(model, split, config, desc="watched")
    err = capsys.readouterr().err
    assert "watched" in err and "4/4" in err and "step=" in err and "loss=" in err and "alpha=" in err


@pytest.mark.slow
def test_training_stops_at_the_first_non_finite_loss_and_keeps_the_history():
    config = _train_config(steps=50, warmup_steps=1, learning_rate=1e30)
    with pytest.raises(TrainingDiverged, match="not finite at step") as info:
        train(small_model(num_layers=1), random_split(seed=3), config)
    error = info.value
    assert 1 <= error.step < 50  # stopped early, not after the whole run
    assert all(np.isfinite(error.history["loss"])) and len(error.history["step"]) < error.step
    json.dumps(error.history)  # what was measured stays usable


@pytest.mark.slow
def test_stop_after_runs_the_start_of_the_same_schedule():
    """Stopping after 4 of 8 steps gives the first records of the whole run, and is checked."""
    split, config = random_split(seed=3), _train_config(steps=8, warmup_steps=4)
    start = train(small_model(), split, config, stop_after=4)
    whole = train(small_model(), split, config)
    assert start["step"] == [2, 4] and whole["step"] == [2, 4, 6, 8]
    np.testing.assert_allclose(start["loss"], whole["loss"][:2], rtol=1e-6)
    with pytest.raises(ValueError, match="stop_after"):
        train(small_model(), split, config, stop_after=9)
