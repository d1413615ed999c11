"""Check: the fused Pallas kernel against the XLA path, on the same rows.

For each size (rows × columns of standard normal float32 scores) and three settings of
β = α − 1 (fixed α = 1.5 and α = 2, Python floats, so static; and one learned α per row in
[1.01, 2], an array, so traced), it computes α-entmax along the rows twice, both jitted:
with the kernel (:func:`entmax_lib.pallas_kernel.entmax_rows`) and with the public XLA path
(:func:`entmax_lib.threshold.entmax_forward`), and prints the largest absolute difference.
It exits with status 1 if any difference exceeds ``--tolerance`` (or is NaN).

Usage::

    python benchmarks/kernel_check.py                           # on a GPU: the kernel compiled
    python benchmarks/kernel_check.py --interpret --sizes 8x16  # anywhere: Pallas' interpreter

Default sizes: 4096 × 64, 4096 × 1024 and 256 × 4096 (the longest row the kernel takes).
``benchmarks/gpu_check.sh`` runs it on GPU hardware; ``tests/test_benchmarks.py`` runs it in
interpret mode on a CPU.
"""

from __future__ import annotations

import argparse
import functools
import sys

import jax
import jax.numpy as jnp
import numpy as np

from entmax_lib import pallas_kernel, threshold

DEFAULT_SIZES = ((4096, 64), (4096, 1024), (256, 4096))
SETTINGS = (("alpha=1.5", 0.5), ("alpha=2", 1.0), ("learned", None))  # name, β (None: one per row)


def parse_size(text):
    """``"4096x64"`` -> (4096, 64)."""
    try:
        rows, cols = (int(n) for n in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"a size is ROWSxCOLS, e.g. 4096x64, not {text!r}") from None
    if rows < 1 or not 1 <= cols <= pallas_kernel.MAX_COLS:
        raise argparse.ArgumentTypeError(f"rows ≥ 1 and 1 ≤ cols ≤ {pallas_kernel.MAX_COLS}: {text!r}")
    return rows, cols


def inputs(rows, cols, seed):
    """Standard normal float32 scores (rows, cols) and one β = α − 1 per row, α ∈ [1.01, 2]."""
    rng = np.random.default_rng(seed)
    z = jnp.asarray(rng.standard_normal((rows, cols)), jnp.float32)
    beta = jnp.asarray(rng.uniform(0.01, 1.0, (rows, 1)), jnp.float32)
    return z, beta


def max_difference(z, beta, n_iter, interpret):
    """max |kernel − XLA| over all entries, both jitted; β a Python float (static) or an array."""
    kernel = functools.partial(pallas_kernel.entmax_rows, n_iter=n_iter, interpret=interpret)
    xla = functools.partial(threshold.entmax_forward, n_iter=n_iter)
    if isinstance(beta, float):
        got = jax.jit(lambda z: kernel(z, beta))(z)
        want = jax.jit(lambda z: xla(z, beta))(z)
    else:
        got, want = jax.jit(kernel)(z, beta), jax.jit(xla)(z, beta)
    return float(jnp.max(jnp.abs(got - want)))


def check(sizes, n_iter=25, interpret=False, seed=0):
    """[(size, setting, max |kernel − XLA|)] for every size and setting, printed as they come."""
    results = []
    for rows, cols in sizes:
        z, beta_rows = inputs(rows, cols, seed)
        for name, beta in SETTINGS:
            difference = max_difference(z, beta_rows if beta is None else beta, n_iter, interpret)
            print(f"{rows}x{cols} {name:9s} max |kernel - XLA| = {difference:.1e}", flush=True)
            results.append((f"{rows}x{cols}", name, difference))
    return results


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--sizes",
        nargs="+",
        type=parse_size,
        default=list(DEFAULT_SIZES),
        metavar="ROWSxCOLS",
        help="score matrices to check (default: 4096x64 4096x1024 256x4096)",
    )
    p.add_argument(
        "--interpret", action="store_true", help="run the kernel in Pallas' interpreter (works on CPU)"
    )
    p.add_argument("--n-iter", type=int, default=25, help="the most search steps per row (default 25)")
    p.add_argument("--tolerance", type=float, default=1e-5, help="largest difference accepted (1e-5)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if not args.interpret and jax.default_backend() != "gpu":
        p.error(f"compiling the kernel needs a GPU (backend: {jax.default_backend()}); use --interpret")
    return args


def main(argv=None):
    """Run the check; 0 if every difference is within the tolerance, else 1."""
    args = parse_args(argv)
    mode = "interpret mode" if args.interpret else "compiled"
    print(f"jax {jax.__version__}, {jax.devices()}, kernel {mode}, {args.n_iter} steps", flush=True)
    results = check(args.sizes, args.n_iter, args.interpret, args.seed)
    worst = max(d for _, _, d in results)
    failed = [r for r in results if not r[2] <= args.tolerance]  # NaN fails too
    verdict = "FAILED" if failed else "ok"
    print(f"largest difference {worst:.1e} (tolerance {args.tolerance:.0e}): {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
