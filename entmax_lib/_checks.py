"""Argument checks shared by the maps (:mod:`entmax_lib.entmax`) and their losses
(:mod:`entmax_lib.losses`): one place for the rules, so that both name their arguments alike."""

import operator

import jax.numpy as jnp
import numpy as np

__all__ = ["prepare_scores"]


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
