"""The library's maps as one table, shared by the unit tests.

name → (the map as a function of the scores and ``axis`` alone, the α it computes). The entries
cover each public function and each code path: softmax, the two exact maps, ``entmax_bisect``
with a Python-float α (compiled exponent) and with an array α above 2 (a traced exponent, and
p^{2−α} with a negative power off the support).
"""

import jax.numpy as jnp

from entmax_lib import entmax15, entmax_bisect, softmax, sparsemax

MAPS = {
    "softmax": (softmax, 1.0),
    "sparsemax": (sparsemax, 2.0),
    "entmax15": (entmax15, 1.5),
    "bisect_fixed_alpha": (lambda z, axis=-1: entmax_bisect(z, 1.7, axis=axis), 1.7),
    "bisect_array_alpha": (lambda z, axis=-1: entmax_bisect(z, jnp.array(2.5), axis=axis), 2.5),
}
