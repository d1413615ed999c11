"""Benchmark: entmax_lib's maps against ``jax.nn.softmax`` at the same shape, side by side.

For each map and dtype it reports the median time of the forward pass and of forward +
backward (the gradient of a scalar loss; with a learned α the α-gradient is on too), as a
ratio to ``jax.nn.softmax`` measured in the same rounds (each round times softmax, then the
candidate, so that load from other processes affects both), and the largest absolute error
against a float64 NumPy reference (plain bisection, 200 halvings, on a subset of rows; the
benchmark's own, the same as the unit tests').

Maps: ``sparsemax``, ``entmax15``, ``entmax_bisect`` with α = 1.5 (a Python float) and
``entmax_bisect`` with one learned α per row (an array argument of the jitted function,
so traced; α = 1 + sigmoid(a), a ~ N(0, 1), clipped to [1.01, 2] as in the paper's code).

Usage::

    python benchmarks/bench_entmax.py                      # default shape for the backend
    python benchmarks/bench_entmax.py --rows 2048 --cols 256 --repeats 5 --out /tmp/r.json

Default shapes: 8192 × 512 on CPU, 65536 × 1024 on GPU. On GPU, ``--pallas`` lets
``entmax_bisect`` use the fused Pallas kernel where it applies (it is off unless
``ENTMAX_LIB_PALLAS=1``, see ``entmax_lib.pallas_kernel``); run with and without it to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import entmax_lib
from entmax_book.progress import progress, report
from entmax_lib import entmax15, entmax_bisect, sparsemax

DEFAULT_SHAPES = {"cpu": (8192, 512), "gpu": (65536, 1024)}


# ----------------------------------------------------------------------------------------
# The maps, as (scores, alpha) -> probabilities; alpha is ignored by the fixed maps
# ----------------------------------------------------------------------------------------


def _softmax(x, alpha):
    return jax.nn.softmax(x, axis=-1)


def _sparsemax(x, alpha):
    return sparsemax(x, axis=-1)


def _entmax15(x, alpha):
    return entmax15(x, axis=-1)


def _bisect_15(x, alpha):
    return entmax_bisect(x, alpha=1.5, axis=-1)


def _bisect_learned(x, alpha):
    return entmax_bisect(x, alpha=alpha, axis=-1)


MAPS = {
    "sparsemax": (_sparsemax, 2.0, False),
    "entmax15": (_entmax15, 1.5, False),
    "entmax_bisect(1.5)": (_bisect_15, 1.5, False),
    "entmax_bisect(learned α)": (_bisect_learned, None, True),
}


def forward_fn(fn):
    return jax.jit(fn)


def forward_backward_fn(fn, learned):
    """jit(grad) of the scalar loss Σ w ⊙ p (w fixed, so the gradient is not trivially 0)."""

    def loss(x, alpha, w):
        return jnp.sum(fn(x, alpha).astype(jnp.float32) * w)

    argnums = (0, 1) if learned else 0
    return jax.jit(jax.grad(loss, argnums=argnums))


# ----------------------------------------------------------------------------------------
# Timing
# ----------------------------------------------------------------------------------------


def _run(fn, args, number):
    t0 = time.perf_counter()
    for _ in range(number):
        out = fn(*args)
    jax.block_until_ready(out)
    return (time.perf_counter() - t0) / number


def calls_per_measure(fn, args, target_s):
    """How many back-to-back calls make one measurement last about ``target_s``."""
    once = _run(fn, args, 1)
    return int(min(50, max(1, round(target_s / max(once, 1e-9)))))


def time_against_softmax(candidate, reference, args, ref_args, repeats, target_s):
    """Interleaved medians: returns (candidate s, softmax s, median of per-round ratios)."""
    jax.block_until_ready(candidate(*args))  # compile
    jax.block_until_ready(reference(*ref_args))
    n_cand = calls_per_measure(candidate, args, target_s)
    n_ref = calls_per_measure(reference, ref_args, target_s)
    cand, ref, ratios = [], [], []
    for _ in range(repeats):
        t_ref = _run(reference, ref_args, n_ref)
        t_cand = _run(candidate, args, n_cand)
        cand.append(t_cand)
        ref.append(t_ref)
        ratios.append(t_cand / t_ref)
    return statistics.median(cand), statistics.median(ref), statistics.median(ratios)


# ----------------------------------------------------------------------------------------
# Accuracy: a float64 NumPy reference, independent of the library (the same plain bisection
# as the unit tests' reference; the benchmark keeps its own copy, not the test code)
# ----------------------------------------------------------------------------------------


def reference_entmax(z, alpha, n_iter=200):
    """entmax_α along the last axis by plain bisection on τ in float64 (α scalar or per row, > 1).

    p_i = [(α−1) z_i − τ]_+^{1/(α−1)}, τ bisected in [max(x) − 1, max(x) − d^{1−α}], x = (α−1) z.
    """
    z = np.asarray(z, np.float64)
    beta = np.broadcast_to(np.asarray(alpha, np.float64), z.shape[:-1] + (1,)) - 1.0
    x = beta * (z - np.max(z, axis=-1, keepdims=True))
    lo, hi = np.full(beta.shape, -1.0), -((1.0 / z.shape[-1]) ** beta)
    for _ in range(n_iter):
        mid = 0.5 * (lo + hi)
        mass = np.sum(np.maximum(x - mid, 0.0) ** (1.0 / beta), axis=-1, keepdims=True)
        lo, hi = np.where(mass >= 1, mid, lo), np.where(mass >= 1, hi, mid)
    p = np.maximum(x - lo, 0.0) ** (1.0 / beta)
    return p / np.sum(p, axis=-1, keepdims=True)


def max_abs_error(fn, x, alpha, learned, ref_rows):
    rows = slice(0, ref_rows)
    xs = x[rows]
    a = alpha[rows] if learned else None
    got = np.asarray(jax.jit(fn)(xs, a).astype(jnp.float32), np.float64)
    exact_alpha = np.asarray(alpha[rows], np.float64) if learned else MAPS_ALPHA[fn]
    want = reference_entmax(np.asarray(xs.astype(jnp.float32), np.float64), exact_alpha)
    return float(np.max(np.abs(got - want)))


MAPS_ALPHA = {fn: a for fn, a, _ in MAPS.values()}


# ----------------------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------------------


def make_inputs(rows, cols, dtype, scale, seed=0):
    rng = np.random.default_rng(seed)
    x = jnp.asarray(scale * rng.standard_normal((rows, cols)), dtype)
    a = rng.standard_normal((rows, 1))
    alpha = jnp.asarray(np.clip(1.0 + 1.0 / (1.0 + np.exp(-a)), 1.01, 2.0), jnp.float32)
    w = jnp.asarray(rng.standard_normal((rows, cols)), jnp.float32)
    return x, alpha, w


def run(args):
    backend = jax.default_backend()
    rows, cols = args.rows, args.cols
    if rows is None or cols is None:
        d_rows, d_cols = DEFAULT_SHAPES.get(backend, DEFAULT_SHAPES["cpu"])
        rows, cols = rows or d_rows, cols or d_cols
    if args.pallas:
        os.environ["ENTMAX_LIB_PALLAS"] = "1"
    else:
        os.environ.pop("ENTMAX_LIB_PALLAS", None)
    names = [n for n in MAPS if not args.maps or any(m in n for m in args.maps)]
    results = []
    header = (
        f"{'map':<26}{'dtype':<10}{'fwd ms':>9}{'×softmax':>10}{'f+b ms':>9}{'×softmax':>10}{'max err':>10}"
    )
    print(
        f"backend={backend} device={jax.devices()[0].device_kind} shape={rows}x{cols} jax={jax.__version__}"
    )
    print(header)
    print("-" * len(header))
    # The table goes to stdout through bar.write, so that a bar on the terminal does not tear it.
    bar = progress(len(args.dtypes) * len(names), desc="benchmark", leave=False)
    for dtype_name in args.dtypes:
        dtype = jnp.dtype(dtype_name)
        x, alpha, w = make_inputs(rows, cols, dtype, args.scale)
        soft_fwd = forward_fn(_softmax)
        soft_fb = forward_backward_fn(_softmax, learned=False)
        for name in names:
            report(bar, force=True, map=name, dtype=dtype_name)
            fn, _, learned = MAPS[name]
            fwd = time_against_softmax(
                forward_fn(fn), soft_fwd, (x, alpha), (x, alpha), args.repeats, args.target_s
            )
            fb = time_against_softmax(
                forward_backward_fn(fn, learned),
                soft_fb,
                (x, alpha, w),
                (x, alpha, w),
                args.repeats,
                args.target_s,
            )
            err = max_abs_error(fn, x, alpha, learned, args.ref_rows)
            row = {
                "map": name,
                "dtype": dtype_name,
                "fwd_ms": 1e3 * fwd[0],
                "softmax_fwd_ms": 1e3 * fwd[1],
                "fwd_ratio": fwd[2],
                "fwd_bwd_ms": 1e3 * fb[0],
                "softmax_fwd_bwd_ms": 1e3 * fb[1],
                "fwd_bwd_ratio": fb[2],
                "max_abs_err": err,
            }
            results.append(row)
            bar.write(
                f"{name:<26}{dtype_name:<10}{row['fwd_ms']:9.2f}{row['fwd_ratio']:9.1f}×"
                f"{row['fwd_bwd_ms']:9.2f}{row['fwd_bwd_ratio']:9.1f}×{err:10.1e}",
                file=sys.stdout,
            )
            bar.update()
    bar.close()
    return {
        "backend": backend,
        "device": jax.devices()[0].device_kind,
        "jax": jax.__version__,
        "entmax_lib": entmax_lib.__version__,
        "python": platform.python_version(),
        "shape": [rows, cols],
        "scale": args.scale,
        "repeats": args.repeats,
        "pallas": bool(args.pallas),
        "note": args.note,
        "results": results,
    }


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=None, help="rows of the score matrix (default: by backend)")
    p.add_argument(
        "--cols", type=int, default=None, help="length of the normalised axis (default: by backend)"
    )
    p.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16"])
    p.add_argument("--maps", nargs="*", default=None, help="substrings selecting maps (default: all)")
    p.add_argument("--repeats", type=int, default=9, help="interleaved rounds per measurement")
    p.add_argument("--target-s", type=float, default=0.03, help="seconds per measurement (calls are batched)")
    p.add_argument("--scale", type=float, default=1.0, help="standard deviation of the random scores")
    p.add_argument("--ref-rows", type=int, default=256, help="rows checked against the float64 reference")
    p.add_argument("--pallas", action="store_true", help="on GPU, use the fused Pallas kernel (opt-in)")
    p.add_argument("--note", default="", help="free text stored in the JSON")
    p.add_argument("--out", default=None, help="JSON path (default benchmarks/results/<backend>.json)")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    t0 = time.perf_counter()
    report = run(args)
    report["wall_s"] = time.perf_counter() - t0
    out = args.out or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "results", f"{report['backend']}.json"
    )
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(report, f, indent=2)
    print(f"wrote {out} ({report['wall_s']:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
