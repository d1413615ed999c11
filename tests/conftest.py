"""Shared test setup.

float64 is enabled for the whole test session so that gradients can be checked against
finite differences; tests that are about float32 build their inputs with an explicit dtype.
The independent NumPy references are in ``references.py`` beside this file.
"""

import os

# The unit tests compile hundreds of tiny programs and run each once: compile time is most of
# their cost. Skipping LLVM's expensive optimisations cuts the suite by about a quarter (results
# can differ in the last bits: the order of additions in vectorised reductions changes, within
# every test's tolerance; there is no fast-math). XLA reads XLA_FLAGS when its backend starts,
# so the flags are set for that moment only: the notebooks that nbval runs in the same pytest
# session are child processes, would inherit them, and must run as readers run them (their
# training results depend on float rounding). An XLA_FLAGS given by the caller is left alone.
_CALLER_FLAGS = os.environ.get("XLA_FLAGS")
if _CALLER_FLAGS is None:
    os.environ["XLA_FLAGS"] = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"

import jax  # noqa: E402

jax.devices()  # start the backend now, while the flags are set
if _CALLER_FLAGS is None:
    del os.environ["XLA_FLAGS"]

jax.config.update("jax_enable_x64", True)
