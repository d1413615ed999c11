"""Argument checks shared by the maps (:mod:`entmax_lib.entmax`) and their losses
(:mod:`entmax_lib.losses`): one place for the rules, so that both name their arguments alike."""

import operator

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["ALPHA_LIMIT", "prepare_alpha", "prepare_scores"]


def prepare_scores(x, axis, x_name="x"):
    """Validate ``x`` and ``axis``; return (x in compute dtype, moved to last axis), dtype, axis."""
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.floating):
        raise TypeError(
            f"{x_name} must be a floating-point array, got dtype {x.dtype}; "
            f"cast it first, e.g. {x_name}.astype(jnp.float32)."
        )
    if x.ndim == 0:
        raise ValueError(f"{x_name} must have at least one dimension (the axis to normalise over).")
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError(f"axis must be an integer, got {axis!r}.")
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"axis must be an integer, got {axis!r}.") from None
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis={axis} is out of range for {x_name} with {x.ndim} dimensions.")
    axis %= x.ndim
    if x.shape[axis] == 0:
        raise ValueError(
            f"axis={axis} of {x_name} is empty (shape {x.shape}); there is nothing to normalise."
        )
    compute = jnp.promote_types(x.dtype, jnp.float32)
    return jnp.moveaxis(x.astype(compute), axis, -1), x.dtype, axis


def _is_real_dtype(dtype):
    """Floating (bfloat16 and float16 included) or integer, but not bool."""
    return jnp.issubdtype(dtype, jnp.floating) or (jnp.issubdtype(dtype, jnp.integer) and dtype != np.bool_)


#: The largest α the maps accept. Beyond it the threshold search's arithmetic breaks down (in
#: float32 the result turns NaN from α ≈ 5e13), while the map itself is already the argmax
#: indicator for scores more than 1e-6 apart.
ALPHA_LIMIT = 1e6


def _check_alpha_value(alpha_np, name="alpha"):
    if not np.all(np.isfinite(alpha_np)):
        raise ValueError(f"{name} must be finite, got {alpha_np!r}.")
    if np.any(alpha_np < 1):
        raise ValueError(
            f"{name} must be >= 1 ({name} = 1 is softmax, 2 sparsemax), got min {alpha_np.min()!r}."
        )
    if np.any(alpha_np > ALPHA_LIMIT):
        raise ValueError(
            f"{name} must be at most {ALPHA_LIMIT:g} (beyond it entmax is the argmax indicator for "
            f"scores more than 1e-6 apart), got max {float(alpha_np.max())!r}."
        )


def _broadcast_alpha(alpha, x_shape, axis, compute, name="alpha", x_name="x"):
    """Return α with shape x.shape[:-1] + (1,) in moved-axis layout (x's axis moved last)."""
    alpha = jnp.asarray(alpha)
    if not _is_real_dtype(alpha.dtype):
        raise TypeError(f"{name} must be a real number or array, got dtype {alpha.dtype}.")
    ndim = len(x_shape)
    if alpha.ndim > ndim:
        raise ValueError(f"{name} has shape {alpha.shape}, more dimensions than {x_name} {tuple(x_shape)}.")
    padded = (1,) * (ndim - alpha.ndim) + tuple(alpha.shape)
    if padded[axis] != 1:
        raise ValueError(
            f"{name} with shape {alpha.shape} must have size 1 along axis {axis} of {x_name} "
            f"(shape {tuple(x_shape)}): one value per slice, not per entry."
        )
    try:
        broadcast = np.broadcast_shapes(padded, tuple(x_shape))
    except ValueError:
        broadcast = None
    if broadcast != tuple(x_shape):  # α may not add rows that x does not have
        raise ValueError(
            f"{name} with shape {alpha.shape} does not broadcast to {x_name} with shape "
            f"{tuple(x_shape)}: each of its axes must have {x_name}'s size there or size 1."
        )
    alpha = alpha.reshape(padded).astype(compute)
    alpha = jnp.moveaxis(alpha, axis, -1)
    moved = tuple(np.delete(np.array(x_shape), axis)) + (1,)
    return jnp.broadcast_to(alpha, moved)


def prepare_alpha(alpha, x_shape, axis, compute, name="alpha", x_name="x"):
    """Check α and return it as the maps and losses compute with it.

    A Python number comes back as a float (a fixed α, with its fast paths). An array comes back
    with shape x.shape[:-1] + (1,) in the layout with ``axis`` moved last, in the compute dtype;
    its values are checked when concrete, and clamped into [1, ALPHA_LIMIT] when traced (NaN and
    +inf stay, and give NaN). Errors name ``name`` and ``x_name``.
    """
    if isinstance(alpha, (int, float, np.integer, np.floating)) and not isinstance(alpha, (bool, np.bool_)):
        try:
            alpha = float(alpha)
        except OverflowError:  # a Python int beyond float range
            too_big = f"an integer of {len(str(abs(alpha)))} digits"
            raise ValueError(f"{name} must be at most {ALPHA_LIMIT:g}, got {too_big}.") from None
        _check_alpha_value(np.asarray(alpha), name)
        return alpha
    not_numeric = TypeError(f"{name} must be a real number or an array of them, got {alpha!r}.")
    try:
        alpha_np = np.asarray(alpha)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        alpha_np = None  # traced: cannot be checked, clamped below
    except (TypeError, ValueError):
        raise not_numeric from None
    if alpha_np is not None:
        if not _is_real_dtype(alpha_np.dtype):
            raise not_numeric
        _check_alpha_value(alpha_np.astype(np.float64), name)
    a = _broadcast_alpha(alpha, x_shape, axis, compute, name, x_name)
    # Not jnp.maximum/minimum: at a tie they split the derivative in half, and α = 1 is a tie.
    a = jnp.where(a < 1.0, jnp.ones_like(a), a)
    return jnp.where((a > ALPHA_LIMIT) & jnp.isfinite(a), jnp.full_like(a, ALPHA_LIMIT), a)
