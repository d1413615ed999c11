"""entmax_lib: sparse attention maps (sparsemax, 1.5-entmax, α-entmax) in JAX.

The companion library of *the entmax book*. The maps and their closed-form derivatives
live in :mod:`entmax_lib.entmax`, their Fenchel–Young training losses in
:mod:`entmax_lib.losses`; see the book for derivations.
"""

from entmax_lib.entmax import entmax15, entmax_bisect, softmax, sparsemax, tsallis_entmax
from entmax_lib.losses import entmax15_loss, entmax_bisect_loss, sparsemax_loss

__all__ = [
    "entmax15",
    "entmax15_loss",
    "entmax_bisect",
    "entmax_bisect_loss",
    "softmax",
    "sparsemax",
    "sparsemax_loss",
    "tsallis_entmax",
]
__version__ = "0.1.0"
