"""entmax_lib: sparse attention maps (sparsemax, 1.5-entmax, α-entmax) in JAX.

The companion library of *the entmax book*, in six modules: :mod:`entmax_lib.entmax` (the
maps, their argument checks and closed-form derivative rules), :mod:`entmax_lib.losses` (their
Fenchel–Young training losses), :mod:`entmax_lib.threshold` (the threshold search behind the
maps), :mod:`entmax_lib.attention` (attention layers for Flax NNX), :mod:`entmax_lib.metrics`
(attention analyses) and :mod:`entmax_lib.pallas_kernel` (an opt-in fused GPU kernel). The
book's experiments, built on it, are the separate package ``entmax_book``; this package imports
nothing from it.
"""

from entmax_lib.entmax import entmax15, entmax_bisect, softmax, sparsemax
from entmax_lib.losses import entmax15_loss, entmax_bisect_loss, sparsemax_loss

__all__ = [
    "entmax15",
    "entmax15_loss",
    "entmax_bisect",
    "entmax_bisect_loss",
    "softmax",
    "sparsemax",
    "sparsemax_loss",
]
__version__ = "0.1.0"
