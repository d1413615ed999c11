"""Benchmark: the cost of one training step of Chapter 5's Transformer.

Two measurements:

* by batch size (the default): for each normaliser and batch size it trains ``--steps`` steps
  with ``entmax_book.translation.train.train`` (compilation excluded) and reports the time per
  step and per 1,000 sentence pairs. One might expect a step at this size to cost per-operation
  overhead rather than arithmetic, so that a larger batch would be almost free; when the time
  per pair stays flat as the batch grows, the step is arithmetic-bound and it is not.
* ``--compare``: the normalisers against each other at the size of Chapter 5's recorded runs
  (``RECIPE``: dropout on, 8 heads, 2 + 2 layers, batch 32). Each normaliser's training step
  (forward, backward, Adam) is compiled once; then every round times ``--steps`` steps of each
  in turn on the same batches, so that load from other processes affects all of them alike, and
  the report gives the median time per step over ``--rounds`` rounds and the median per-round
  ratio to softmax, in wall time and in the process's CPU time (less sensitive to other
  processes on a shared machine; with ``XLA_FLAGS=--xla_cpu_multi_thread_eigen=false`` one
  core, as the recorded runs use). ``--max-src-len`` sets the longest source (rows of that many keys in the
  encoder and in the decoder's cross-attention).

Usage::

    python benchmarks/bench_translation_step.py
    python benchmarks/bench_translation_step.py --batch-sizes 32 64 --normalisers softmax
    python benchmarks/bench_translation_step.py --compare --rounds 7 --steps 30

Results are written as JSON to ``benchmarks/results/translation_step_<backend>.json``
(``translation_step_compare_<backend>.json`` with ``--compare``) unless ``--out`` says otherwise.
"""

from __future__ import annotations

import argparse
import itertools
import json
import platform
import statistics
import time
from pathlib import Path

import jax
import optax
from flax import nnx

from entmax_book.translation import experiment
from entmax_book.translation.config import TranslationConfig
from entmax_book.translation.configs import HARDER, RECIPE
from entmax_book.translation.data import batches
from entmax_book.translation.model import Transformer
from entmax_book.translation.train import cross_entropy, make_optimizer, train

NORMALISERS = ("softmax", "entmax15", "alpha_entmax")
#: --config: the recipe on corpus version 1, or Chapter 5's recorded runs (corpus version 3).
CONFIGS = {"recipe": RECIPE, "harder": HARDER}


def by_batch_size(args):
    """Rows of ms per step and s per 1,000 pairs, per normaliser and batch size."""
    config = TranslationConfig()
    data = experiment.prepare_data(config.data)
    rows = []
    for normaliser in args.normalisers:
        for batch_size in args.batch_sizes:
            timed = config.replace(
                normaliser=normaliser, steps=args.steps + 1, batch_size=batch_size, warmup_steps=1
            )
            model = Transformer(timed.model, data.tokenizer.vocab_size, seed=0)
            history = train(model, data.train, timed.train)
            per_step = (history["seconds"] - history["compile_seconds"]) / args.steps
            row = {
                "normaliser": normaliser,
                "batch_size": batch_size,
                "ms_per_step": round(1000 * per_step, 1),
                "s_per_1000_pairs": round(1000 * per_step / batch_size, 3),
                "compile_s": round(history["compile_seconds"], 1),
            }
            rows.append(row)
            print(row, flush=True)
    return rows


def _stepper(config, normaliser, vocab_size):
    """A compiled training step of a fresh model (the step of ``train``: loss, gradient, Adam)."""
    model = Transformer(config.replace(normaliser=normaliser).model, vocab_size, seed=0)
    optimizer = make_optimizer(config.train)
    graphdef, params, rest = nnx.split(model, nnx.Param, ...)
    state = [params, optimizer.init(params)]

    @jax.jit
    def step(params, opt_state, batch, key):
        def loss_fn(params):
            logits = nnx.merge(graphdef, params, rest)(batch["src"], batch["tgt_in"], dropout_key=key)
            return cross_entropy(logits, batch["tgt_out"], model.pad_id, config.train.label_smoothing)

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    def run(batch, key):
        state[0], state[1], loss = step(state[0], state[1], batch, key)
        return loss

    return run


def compare(args):
    """Rows of median ms per step and median ratio to softmax, normalisers timed in turn."""
    base = CONFIGS[args.config]
    longest = max(args.max_src_len, base.model.max_len)
    config = base.replace(batch_size=args.batch_sizes[0], max_src_len=args.max_src_len, max_len=longest)
    data = experiment.prepare_data(config.data)
    fixed = list(itertools.islice(batches(data.train.columns(), config.train.batch_size, seed=0), args.steps))
    fixed = [jax.device_put(b) for b in fixed]
    keys = [jax.random.key(i) for i in range(args.steps)]
    steppers = {n: _stepper(config, n, data.tokenizer.vocab_size) for n in args.normalisers}
    compile_s = {}
    for name, run in steppers.items():
        start = time.perf_counter()
        for batch, key in zip(fixed, keys, strict=True):  # compile and warm up: one pass over the batches
            run(batch, key).block_until_ready()
        compile_s[name] = time.perf_counter() - start
    wall, cpu = {n: [] for n in steppers}, {n: [] for n in steppers}
    for _ in range(args.rounds):
        for name, run in steppers.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            for batch, key in zip(fixed, keys, strict=True):
                loss = run(batch, key)
            loss.block_until_ready()
            wall[name].append((time.perf_counter() - start) / args.steps)
            cpu[name].append((time.process_time() - start_cpu) / args.steps)
    ratio = lambda t, base: round(statistics.median(a / b for a, b in zip(t, base, strict=True)), 3)
    rows = []
    for name in steppers:
        row = {
            "normaliser": name,
            "batch_size": config.train.batch_size,
            "max_src_len": config.data.max_src_len,
            "ms_per_step": round(1000 * statistics.median(wall[name]), 2),
            "ms_per_step_min": round(1000 * min(wall[name]), 2),
            "cpu_ms_per_step": round(1000 * statistics.median(cpu[name]), 2),
            "warmup_s": round(compile_s[name], 1),
        }
        if "softmax" in steppers:
            row["ratio_to_softmax"] = ratio(wall[name], wall["softmax"])
            row["cpu_ratio_to_softmax"] = ratio(cpu[name], cpu["softmax"])
        rows.append(row)
        print(row, flush=True)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--compare", action="store_true", help="normalisers against each other at RECIPE's size"
    )
    parser.add_argument(
        "--batch-sizes", type=int, nargs="+", default=None, help="default 32 64 128 256 (--compare: 32)"
    )
    parser.add_argument("--normalisers", nargs="+", default=list(NORMALISERS))
    parser.add_argument(
        "--steps", type=int, default=None, help="timed steps (per round with --compare; default 100, 20)"
    )
    parser.add_argument("--rounds", type=int, default=7, help="--compare: rounds of interleaved timings")
    parser.add_argument(
        "--config",
        choices=sorted(CONFIGS),
        default="recipe",
        help="--compare: RECIPE or HARDER (Chapter 5's record)",
    )
    parser.add_argument(
        "--max-src-len", type=int, default=RECIPE.data.max_src_len, help="--compare: longest source"
    )
    parser.add_argument(
        "--note", default="", help="a remark stored with the results (e.g. the machine's load)"
    )
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    args.batch_sizes = args.batch_sizes or ([32] if args.compare else [32, 64, 128, 256])
    args.steps = args.steps or (20 if args.compare else 100)

    rows = compare(args) if args.compare else by_batch_size(args)
    backend = jax.default_backend()
    name = f"translation_step_{'compare_' if args.compare else ''}{backend}.json"
    out = args.out or Path(__file__).parent / "results" / name
    meta = {"backend": backend, "jax": jax.__version__, "machine": platform.processor() or platform.machine()}
    if args.compare:
        meta.update(rounds=args.rounds, steps_per_round=args.steps, config=args.config)
    if args.note:
        meta["note"] = args.note
    out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n", encoding="utf-8")
    print("written to", out)


if __name__ == "__main__":
    main()
