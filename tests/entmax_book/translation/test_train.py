"""entmax_book.translation.train on the path to the paper's scale, tested at tiny size on the CPU:
token-based batches, bfloat16 passes, and data-parallel training over several devices giving the
same losses. The loop's other options are tested with the experiment (test_experiment.py)."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from entmax_book.translation.config import PAPER_SCALE
from entmax_book.translation.data import token_batches


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
    from entmax_book.translation.config import TranslationConfig
    from entmax_book.translation.model import Transformer
    from entmax_book.translation.train import train

    compute_dtype, batch_tokens = sys.argv[1], None if sys.argv[2] == "none" else int(sys.argv[2])
    config = TranslationConfig(d_model=16, num_heads=2, num_layers=1, d_ff=32, max_src_len=16,
                               max_tgt_len=16, steps=3, batch_size=8, warmup_steps=1, record_every=1,
                               compute_dtype=compute_dtype, batch_tokens=batch_tokens)
    model = Transformer(config, "alpha_entmax", 40, seed=0)
    rng = np.random.default_rng(0)
    arrays = {k: rng.integers(4, 40, (32, 8)).astype(np.int32) for k in ("src", "tgt_in", "tgt_out")}
    history = train(model, arrays)
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
    config = PAPER_SCALE
    assert (config.num_layers, config.num_heads, config.d_model, config.d_ff) == (6, 8, 512, 2048)
    assert config.dropout == config.label_smoothing == 0.1 and config.schedule == "inverse_sqrt"
    assert config.compute_dtype == "bfloat16" and config.batch_tokens == 8192
    assert config.learning_rate == pytest.approx(2 * 512**-0.5 * 20_000**-0.5)
    # each curve point decodes the whole test split: a few dozen of them over the run, not hundreds
    assert 5 <= config.steps // config.eval_every <= 50
