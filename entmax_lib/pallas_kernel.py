"""A fused α-entmax forward for GPUs: one Pallas kernel, each row held whole on chip.

The XLA forward (:func:`entmax_lib.threshold.entmax_forward`) reads the score matrix once per
threshold step (plus once for the row max and once to write p). On a GPU, where softmax is
bound by memory traffic, those extra reads are most of the cost. This kernel loads a block
of rows into registers once, runs the same safeguarded Newton–Halley iteration on them
(:func:`entmax_lib.threshold.search_step`), and writes p once: the traffic of a softmax.
What remains is arithmetic: per entry and step one log1p and one exp (three sums share
them through u^{1/β−1} = u^{1/β} / u), or a few multiplies when 1/(α−1) is a small integer
(α = 1.5, 2, …). α may be traced, one value per row.

**The switch.** The kernel is off unless the environment variable ``ENTMAX_LIB_PALLAS`` is
``1`` when a map is traced; then every map of :mod:`entmax_lib.entmax` uses it where it
applies: ``jax.default_backend() == "gpu"``, compute dtype float32 (float32, bfloat16 and
float16 inputs) and at most :data:`MAX_COLS` entries along the normalised axis; everything
else stays on the XLA path. It is off by default because its speed and its agreement with
the XLA path have been checked only in Pallas' interpret mode on a CPU
(``interpret=True``), not on GPU hardware. The kernel is forward only: the derivatives are
the closed-form rules of :mod:`entmax_lib.entmax`. If Pallas is missing or the kernel fails
to compile for a shape (e.g. an older jax), a warning is issued once and the XLA path is used.
"""

from __future__ import annotations

import functools
import math
import os
import warnings

import jax
import jax.numpy as jnp

from entmax_lib import threshold

__all__ = ["MAX_COLS", "block_sums", "enabled", "entmax_rows", "kernel_applies", "maybe_entmax_forward"]

MAX_COLS = 4096  # longest row kept whole on chip (padded to a power of two, as Triton needs)
_BLOCK_ENTRIES = 4096  # rows per program × padded row length


def _pallas():
    """``jax.experimental.pallas``, or None where it cannot be imported."""
    try:
        from jax.experimental import pallas
    except Exception:  # noqa: BLE001 - any import failure means: no kernel
        return None
    return pallas


def _triton_params(pl):
    """Compiler parameters that select the Triton lowering, or None if this jax has none.

    Recent jax lowers ``pallas_call`` on GPU to Mosaic GPU by default, whose copies are
    limited to 256 entries per dimension; this kernel is written for Triton (whole rows
    in registers). The class moved between releases: ``pallas.triton.CompilerParams``
    (jax ≥ 0.6), ``pallas.TritonCompilerParams`` (older).
    """
    try:
        from jax.experimental.pallas import triton as pallas_triton
    except Exception:  # noqa: BLE001
        pallas_triton = None
    params = getattr(pallas_triton, "CompilerParams", None) or getattr(pl, "TritonCompilerParams", None)
    return None if params is None else params(num_warps=4, num_stages=1)


def enabled():
    """Whether the switch is on: the environment variable ``ENTMAX_LIB_PALLAS`` is ``1``."""
    return os.environ.get("ENTMAX_LIB_PALLAS") == "1"


def kernel_applies(z, beta):
    """Whether :func:`maybe_entmax_forward` would try the kernel for ``z`` (compute dtype).

    Args:
      z: the scores, in the compute dtype, normalised along the last axis.
      beta: α − 1 (unused: every α is supported).

    Returns:
      True when the switch is on, the backend is a GPU, ``z`` is float32 and its rows have at
      most :data:`MAX_COLS` entries.
    """
    if not enabled():
        return False
    if jax.default_backend() != "gpu" or z.dtype != jnp.float32:
        return False
    return 1 <= z.shape[-1] <= MAX_COLS and z.size > 0


def _block_shape(d):
    """(rows per program, padded row length): powers of two, about _BLOCK_ENTRIES entries."""
    cols = max(16, 1 << (d - 1).bit_length())
    return max(1, min(16, _BLOCK_ENTRIES // cols)), cols


def block_sums(y, theta, beta):
    """F, D, E of :func:`entmax_lib.threshold.threshold_sums` for a block held in registers.

    y = z − max z, shape (rows, cols); theta and a traced beta have shape (rows, 1). The base
    u (or x = u − 1) is the threshold module's own (:func:`~entmax_lib.threshold.tsallis_base`),
    so both paths round alike. Unlike the XLA version there is no memory to save by recomputing:
    u^{1/β−1} and u^{1/β−2} come from u^{1/β} by division, so a step costs one log1p and one exp
    per entry.
    """
    exponent = threshold.integer_exponent(beta)
    u, x = threshold.tsallis_base(y, theta, 0.0, beta)
    if exponent is not None:
        u = jnp.maximum(u, 0.0)
        power = lambda k: jax.lax.integer_pow(u, k) if k >= 1 else jnp.sign(u)
        terms = (power(exponent), power(exponent - 1), power(max(exponent - 2, 0)))
    else:
        t = jnp.maximum(x, -1.0)
        p = jnp.exp(jnp.log1p(t) / threshold.floor_beta(beta))  # 0 off the support (log1p(−1) = −inf)
        inv_u = 1.0 / jnp.maximum(1.0 + t, 1e-30)
        terms = (p, p * inv_u, p * inv_u * inv_u)
    return tuple(jnp.sum(term, axis=1, keepdims=True) for term in terms)


def _make_kernel(beta_static, d, n_iter):
    """The kernel body for one block of rows; ``beta_static`` is a Python float or None."""
    exact = threshold.has_exact_step(beta_static)

    def kernel(*refs):
        if beta_static is None:
            z_ref, beta_ref, out_ref = refs
            beta = beta_ref[...]
        else:
            z_ref, out_ref = refs
            beta = beta_static
        z = z_ref[...]
        row_max = jnp.max(z, axis=1, keepdims=True)
        has_nan = jnp.max(jnp.where(z != z, 1.0, 0.0), axis=1, keepdims=True) > 0.0
        all_masked = row_max == -jnp.inf
        invalid = has_nan | (row_max == jnp.inf)
        if beta_static is None:
            invalid = invalid | (beta != beta)
        y = z - jnp.where(all_masked | invalid, 0.0, row_max)
        eps = float(jnp.finfo(z.dtype).eps)
        rows = threshold.initial_state(beta, d, all_masked | invalid, z.dtype, exact)
        sums = lambda theta: block_sums(y, theta, beta)

        def running(carry):
            i, rows = carry
            not_done = jnp.max(jnp.where(rows.done, 0.0, 1.0)) > 0.0
            return (i < n_iter) & not_done

        def body(carry):
            i, rows = carry
            return i + 1, threshold.search_step(sums, beta, rows, eps, exact)

        _, rows = jax.lax.while_loop(running, body, (0, rows))
        theta = jnp.where(rows.done, rows.theta, rows.best)
        polish = jnp.where(rows.done, rows.polish, rows.best_polish)
        p = threshold.entmax_from_threshold(y, theta, polish, beta)
        # In registers a normalisation is free: it covers rows stopped by n_iter and the
        # non-integer 1/β (the XLA path divides by the sum there too).
        p = p / jnp.sum(p, axis=1, keepdims=True)
        p = jnp.where(all_masked, 0.0, jnp.where(invalid, jnp.nan, p))
        out_ref[...] = p.astype(out_ref.dtype)

    return kernel


def entmax_rows(z, beta, n_iter, *, interpret=False):
    """α-entmax along the last axis of ``z`` with the fused kernel (no checks, no fallback).

    Args:
      z: float32 array (..., d), d ≤ :data:`MAX_COLS`; -inf entries are masked.
      beta: α − 1, a Python float or an array of shape z.shape[:-1] + (1,) (or broadcastable).
      n_iter: the most Newton–Halley steps per row.
      interpret: run Pallas' interpreter instead of compiling (works on CPU, for tests).

    Returns:
      p with the shape and dtype of z, as :func:`entmax_lib.threshold.entmax_forward` computes it.

    Example:
      >>> import jax.numpy as jnp
      >>> from entmax_lib import pallas_kernel
      >>> z = jnp.array([[0.0, 1.0, 1.5]], jnp.float32)
      >>> p = pallas_kernel.entmax_rows(z, 1.0, 25, interpret=True)  # β = 1: sparsemax
      >>> [round(v, 4) for v in p[0].tolist()]
      [0.0, 0.25, 0.75]
    """
    pl = _pallas()
    batch, d = z.shape[:-1], z.shape[-1]
    n_rows = math.prod(batch)
    block_rows, cols = _block_shape(d)
    padded_rows = -(-n_rows // block_rows) * block_rows
    z2 = z.reshape(n_rows, d)
    z2 = jnp.pad(z2, ((0, padded_rows - n_rows), (0, cols - d)), constant_values=-jnp.inf)
    z2 = z2.at[n_rows:, 0].set(0.0)  # padding rows: a harmless one-entry row, not all -inf
    row_spec = pl.BlockSpec((block_rows, cols), lambda i: (i, 0))
    operands, in_specs = [z2], [row_spec]
    beta_static = float(beta) if isinstance(beta, float) else None
    if beta_static is None:
        b = jnp.broadcast_to(beta, batch + (1,)).reshape(n_rows, 1).astype(z.dtype)
        operands.append(jnp.pad(b, ((0, padded_rows - n_rows), (0, 0)), constant_values=0.5))
        in_specs.append(pl.BlockSpec((block_rows, 1), lambda i: (i, 0)))
    out = pl.pallas_call(
        _make_kernel(beta_static, d, n_iter),
        out_shape=jax.ShapeDtypeStruct((padded_rows, cols), z.dtype),
        grid=(padded_rows // block_rows,),
        in_specs=in_specs,
        out_specs=row_spec,
        interpret=interpret,
        **({} if interpret else {"compiler_params": _triton_params(pl)}),
    )(*operands)
    return out[:n_rows, :d].reshape(z.shape)


@functools.cache
def _compiles(d, traced_beta, beta_static, n_iter):
    """Compile the kernel once for this configuration on a small input; warn and say no on failure."""
    block_rows, _ = _block_shape(d)
    z = jax.ShapeDtypeStruct((block_rows, d), jnp.float32)
    args = (z, jax.ShapeDtypeStruct((block_rows, 1), jnp.float32)) if traced_beta else (z,)
    fn = (
        (lambda z, b: entmax_rows(z, b, n_iter))
        if traced_beta
        else (lambda z: entmax_rows(z, beta_static, n_iter))
    )
    try:
        jax.jit(fn).lower(*args).compile()
    except Exception as err:  # noqa: BLE001 - any failure to lower means: use XLA
        warnings.warn(
            f"entmax_lib: the fused Pallas kernel did not compile for rows of length {d} "
            f"({type(err).__name__}: {err}); using the XLA implementation instead.",
            RuntimeWarning,
            stacklevel=3,
        )
        return False
    return True


def maybe_entmax_forward(z, beta, n_iter):
    """p from the fused kernel when the switch is on, it applies and it compiles here, else None."""
    if not kernel_applies(z, beta) or _pallas() is None:
        return None
    traced = not isinstance(beta, float)
    if not _compiles(z.shape[-1], traced, None if traced else float(beta), int(n_iter)):
        return None
    return entmax_rows(z, beta, n_iter)
