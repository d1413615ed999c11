"""Benchmark: the cost of one training step of Chapter 5's Transformer, by batch size.

At Chapter 5's size (3 + 3 layers, d = 64, at most 16 source and 20 target pieces) one might
expect a step to cost per-operation overhead rather than arithmetic, so that a larger batch
would be almost free. This measures it: for each normaliser and batch size it trains
``--steps`` steps with ``entmax_book.translation.train.train`` (compilation excluded) and
reports the time per step and per 1,000 sentence pairs. When the time per pair stays flat as
the batch grows, the step is arithmetic-bound and a larger batch saves nothing.

Usage::

    python benchmarks/bench_translation_step.py
    python benchmarks/bench_translation_step.py --batch-sizes 32 64 --normalisers softmax

Results are written as JSON to ``benchmarks/results/translation_step_<backend>.json`` unless
``--out`` says otherwise.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
from pathlib import Path

import jax

from entmax_book.translation import experiment
from entmax_book.translation.config import TranslationConfig
from entmax_book.translation.model import Transformer
from entmax_book.translation.train import train


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[32, 64, 128, 256])
    parser.add_argument("--normalisers", nargs="+", default=list(TranslationConfig().normalisers))
    parser.add_argument("--steps", type=int, default=100, help="timed steps after the compiled first one")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    config = TranslationConfig()
    data = experiment.prepare_data(config)
    tokenizer = data["tokenizer"]
    rows = []
    for normaliser in args.normalisers:
        for batch_size in args.batch_sizes:
            timed = dataclasses.replace(config, steps=args.steps + 1, batch_size=batch_size, warmup_steps=1)
            model = Transformer(timed, normaliser, tokenizer.vocab_size, seed=0)
            history = train(model, data["arrays"]["train"])
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
    backend = jax.default_backend()
    out = args.out or Path(__file__).parent / "results" / f"translation_step_{backend}.json"
    meta = {"backend": backend, "jax": jax.__version__, "machine": platform.processor() or platform.machine()}
    out.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n", encoding="utf-8")
    print("written to", out)


if __name__ == "__main__":
    main()
