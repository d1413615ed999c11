"""entmax_lib: sparse attention maps (sparsemax, 1.5-entmax, α-entmax) in JAX.

The companion library of *the entmax book*. The maps and their closed-form derivatives
live in :mod:`entmax_lib.entmax`; see the book for derivations.
"""

from entmax_lib.entmax import entmax15, entmax_bisect, softmax, sparsemax, tsallis_entmax

__all__ = ["entmax15", "entmax_bisect", "softmax", "sparsemax", "tsallis_entmax"]
__version__ = "0.1.0"
