"""Property-based tests (hypothesis) of entmax_lib's maps, in float64.

Every example goes through one jitted function per row length, so hypothesis pays for a
few compilations, not one per example. α is drawn in [1, 4] and passed traced (the
learned-α path); the Python-float path runs at α = 1 and 2, the sort-based maps at 1.5 and 2.
"""

import jax
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from entmax_lib import entmax15, entmax_bisect, softmax, sparsemax

SETTINGS = settings(max_examples=40, deadline=None)
LENGTHS = (1, 2, 8)

scores = st.sampled_from(LENGTHS).flatmap(
    lambda n: hnp.arrays(np.float64, n, elements=st.floats(-10, 10, allow_subnormal=False))
)
alphas = st.floats(1.0, 4.0)


@jax.jit
def all_maps(z, alpha):
    """Every map on one row, with α (traced) for the bisection; the map's α alongside."""
    return {
        "softmax": (softmax(z), 1.0),
        "sparsemax": (sparsemax(z), 2.0),
        "entmax15": (entmax15(z), 1.5),
        "entmax_bisect(2.0)": (entmax_bisect(z, 2.0), 2.0),
        "entmax_bisect(α)": (entmax_bisect(z, alpha), alpha),
    }


python_alpha_one = jax.jit(lambda z: entmax_bisect(z, 1.0))


def hoelder_tolerance(perturbation, alpha):
    """How much p can move when the scores move by ``perturbation``.

    p_i = [(α−1) z_i − τ]_+^{1/(α−1)} is Lipschitz for α ≤ 2 but only Hölder with
    exponent 1/(α−1) for α > 2 (a root of the distance to the threshold).
    """
    exponent = min(1.0, 1.0 / (alpha - 1.0)) if alpha > 1 else 1.0
    return 1e-10 + 10 * perturbation**exponent


@SETTINGS
@given(z=scores, alpha=alphas)
def test_simplex_and_order_preserving(z, alpha):
    for name, (p, _) in all_maps(z, alpha).items():
        p = np.asarray(p)
        assert np.all(p >= 0), name
        assert abs(p.sum() - 1.0) < 1e-12, name
        # z_i > z_j ⇒ p_i ≥ p_j: every step of the maps is monotone, even in floating point.
        larger = z[:, None] > z[None, :]
        assert np.all((p[:, None] >= p[None, :])[larger]), name


@SETTINGS
@given(z=scores, alpha=alphas, shift=st.floats(-100, 100))
def test_invariant_to_adding_a_constant(z, alpha, shift):
    shifted = z + shift
    rounding = np.max(np.abs((shifted - shift) - z)) + 1e-15 * (np.max(np.abs(shifted)) + 1.0)
    base, moved = all_maps(z, alpha), all_maps(shifted, alpha)
    for name, (p, map_alpha) in base.items():
        tolerance = hoelder_tolerance(rounding, float(map_alpha))
        np.testing.assert_allclose(moved[name][0], p, atol=tolerance, err_msg=name)


@SETTINGS
@given(z=scores, alpha_pair=st.tuples(st.floats(1.0, 3.0), st.floats(1.0, 3.0)).map(sorted))
def test_support_shrinks_as_alpha_grows(z, alpha_pair):
    small, large = alpha_pair
    p_small = np.asarray(all_maps(z, small)["entmax_bisect(α)"][0])
    p_large = np.asarray(all_maps(z, large)["entmax_bisect(α)"][0])
    # An entry clearly in the sparser support is in the denser one.
    assert np.all(p_small[p_large > 1e-4] > 0), (p_small, p_large)
    assert np.count_nonzero(p_large > 1e-4) <= np.count_nonzero(p_small)


@SETTINGS
@given(z=scores, alpha=st.floats(1.0, 4.0, exclude_min=True))
def test_closed_form_optimality_conditions(z, alpha):
    """p_i = [(α−1) z_i − τ]_+^{1/(α−1)} with one τ: (α−1) z_i − p_i^{α−1} is the same τ on the
    support, and (α−1) z_j ≤ τ off it (the KKT conditions of entmax's argmax)."""
    p = np.asarray(all_maps(z, alpha)["entmax_bisect(α)"][0])
    beta = alpha - 1.0
    x = beta * (z - z.max())
    on = p > 0
    taus = x[on] - p[on] ** beta
    scale = 1e-9 * (1.0 + np.max(np.abs(x)))
    assert taus.max() - taus.min() <= scale, taus
    assert np.all(x[~on] <= taus.mean() + scale)


@SETTINGS
@given(z=scores)
def test_alpha_one_is_softmax(z):
    expected = np.asarray(jax.nn.softmax(z))
    np.testing.assert_allclose(all_maps(z, 1.0)["entmax_bisect(α)"][0], expected, atol=1e-14)  # traced α = 1
    np.testing.assert_allclose(all_maps(z, 1.0)["softmax"][0], expected, atol=1e-14)
    np.testing.assert_allclose(python_alpha_one(z), expected, atol=1e-14)  # Python α = 1


@SETTINGS
@given(z=scores)
def test_sparsemax_is_the_euclidean_projection_onto_the_simplex(z):
    """p = argmin_{q ∈ Δ} ‖q − z‖² iff p ∈ Δ and (z − p)ᵀ(q − p) ≤ 0 for all q ∈ Δ; the vertices
    q = e_j suffice: max_j (z − p)_j ≤ pᵀ(z − p)."""
    maps = all_maps(z, 2.0)
    for name in ("sparsemax", "entmax_bisect(2.0)", "entmax_bisect(α)"):
        p = np.asarray(maps[name][0])
        residual = z - p
        assert np.all(p >= 0) and abs(p.sum() - 1.0) < 1e-12, name
        assert residual.max() <= p @ residual + 1e-12 * (1.0 + np.abs(z).max()), name
