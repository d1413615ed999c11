"""Tests of the fused GPU kernel (:mod:`entmax_lib.pallas_kernel`) in interpret mode, and of its switch."""

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from references import np_entmax

from entmax_lib import entmax_bisect, pallas_kernel, threshold


def kernel_inputs():
    rng = np.random.default_rng(14)
    z = rng.standard_normal((2, 3, 40)).astype(np.float32)
    z[0, 1, :30] = -np.inf  # masked entries
    z[0, 2] = -np.inf  # an all-masked row
    z[1, 0, 5] = np.nan  # an invalid row
    alpha = np.array([[1.0, 1.3, 1.5], [2.0, 1.01, 1.8]], np.float32)[..., None]
    return jnp.asarray(z), jnp.asarray(alpha)


@pytest.mark.slow
def test_kernel_matches_xla_forward_traced_alpha():
    z, alpha = kernel_inputs()
    got = pallas_kernel.entmax_rows(z, alpha - 1.0, 25, interpret=True)
    want = threshold.entmax_forward(z, alpha - 1.0, 25)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    assert np.all(np.asarray(got[0, 2]) == 0) and np.all(np.isnan(got[1, 0]))
    finite = np.asarray(z, np.float64)
    ok = np.isfinite(finite).any(-1) & ~np.isnan(finite).any(-1)
    np.testing.assert_allclose(np.asarray(got)[ok], np_entmax(finite[ok], np.asarray(alpha)[ok]), atol=1e-6)


@pytest.mark.parametrize("alpha", [1.5])  # integer powers; the log1p/exp path is the traced one
def test_kernel_matches_xla_forward_fixed_alpha(alpha):
    z, _ = kernel_inputs()
    got = pallas_kernel.entmax_rows(z, alpha - 1.0, 25, interpret=True)
    want = threshold.entmax_forward(z, alpha - 1.0, 25)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


def test_kernel_is_never_tried_on_cpu():
    z = jnp.zeros((4, 8), jnp.float32)
    assert jax.default_backend() == "cpu"
    assert not pallas_kernel.kernel_applies(z, 0.5)
    assert pallas_kernel.maybe_entmax_forward(z, 0.5, 25) is None


@pytest.mark.slow
def test_failure_to_compile_the_kernel_falls_back_to_xla_with_a_warning(monkeypatch):
    """Pretend to be on a GPU with the kernel enabled: it cannot compile on this CPU, so XLA must answer."""
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    monkeypatch.setenv("ENTMAX_LIB_PALLAS", "1")  # the kernel is opt-in
    pallas_kernel._compiles.cache_clear()
    z = jnp.asarray(np.random.default_rng(15).standard_normal((4, 24)), jnp.float32)
    with pytest.warns(RuntimeWarning, match="using the XLA implementation"):
        p = entmax_bisect(z, 1.5)
    np.testing.assert_allclose(
        np.asarray(p, np.float64), np_entmax(np.asarray(z, np.float64), 1.5), atol=1e-6
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the failure is remembered: no second warning
        entmax_bisect(z, 1.5)
    pallas_kernel._compiles.cache_clear()


def test_one_switch_turns_the_kernel_on_and_off(monkeypatch):
    """ENTMAX_LIB_PALLAS=1 is the only way in; any other value, or none, keeps XLA."""
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    z = jnp.zeros((4, 8), jnp.float32)
    monkeypatch.delenv("ENTMAX_LIB_PALLAS", raising=False)
    assert not pallas_kernel.enabled() and not pallas_kernel.kernel_applies(z, 0.5)
    for value in ("0", "", "true"):
        monkeypatch.setenv("ENTMAX_LIB_PALLAS", value)
        assert not pallas_kernel.kernel_applies(z, 0.5)
    monkeypatch.setenv("ENTMAX_LIB_PALLAS", "1")
    assert pallas_kernel.enabled() and pallas_kernel.kernel_applies(z, 0.5)
    assert not pallas_kernel.kernel_applies(z.astype(jnp.float64), 0.5)  # float32 only
    assert not pallas_kernel.kernel_applies(jnp.zeros((2, pallas_kernel.MAX_COLS + 1), jnp.float32), 0.5)
