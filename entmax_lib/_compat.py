"""Small shims so that the same code runs on Colab's flax 0.11.2 and on flax 0.12+."""

from flax import nnx

__all__ = ["module_list"]


def module_list(items):
    """A list of sub-modules as a Module attribute.

    flax ≥ 0.12 wants ``nnx.List`` for a list of Modules; flax 0.11.2 has no ``nnx.List``
    and accepts a plain list.
    """
    container = getattr(nnx, "List", None)
    return container(items) if container is not None else list(items)
