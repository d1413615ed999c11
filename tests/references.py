"""Independent float64 NumPy references for entmax_lib's maps and their derivatives.

Deliberately naive: plain NumPy, float64, written from the formulas of the papers, sharing
no code with the library. Used by the unit tests (``from references import ...``: pytest puts
this directory on ``sys.path``) and by ``benchmarks/bench_entmax.py`` for its error column.

* :func:`np_entmax` — α-entmax for any α ≥ 1 by plain bisection on τ (200 halvings);
* :func:`np_sparsemax_sort`, :func:`np_entmax15_sort` — the sort-based exact algorithms
  (Martins & Astudillo 2016; Peters, Niculae & Martins 2019, Algorithm 2);
* :func:`np_jacobian`, :func:`np_alpha_grad` — ∂p/∂z and ∂p/∂α (Proposition 1 of
  Correia, Niculae & Martins 2019), verbatim;
* :func:`threshold_margin`, :func:`well_separated` — inputs on which finite differences
  are valid (no entry within a margin of a support change).
"""

import numpy as np


def np_entmax(z, alpha, n_iter=200):
    """entmax_α along the last axis by plain bisection on τ, in float64.

    p_i = [(α−1) z_i − τ]_+^{1/(α−1)} with τ bisected in [max(x) − 1, max(x) − d^{1−α}],
    x = (α−1) z . α = 1 is softmax. ``alpha`` is a scalar or broadcasts
    against ``z[..., :1]``. -inf entries get 0.
    """
    z = np.asarray(z, np.float64)
    alpha = np.broadcast_to(np.asarray(alpha, np.float64), z.shape[:-1] + (1,))
    z = z - np.max(z, axis=-1, keepdims=True)
    softmax = np.exp(z) / np.sum(np.exp(z), axis=-1, keepdims=True)
    beta = np.where(alpha > 1, alpha - 1, 1.0)
    x = beta * z
    d = z.shape[-1]
    lo = np.full(alpha.shape, -1.0)
    hi = -((1.0 / d) ** beta)
    for _ in range(n_iter):
        mid = 0.5 * (lo + hi)
        mass = np.sum(np.maximum(x - mid, 0.0) ** (1.0 / beta), axis=-1, keepdims=True)
        lo, hi = np.where(mass >= 1, mid, lo), np.where(mass >= 1, hi, mid)
    p = np.maximum(x - lo, 0.0) ** (1.0 / beta)
    p = p / np.sum(p, axis=-1, keepdims=True)
    return np.where(alpha > 1, p, softmax)


def np_sparsemax_sort(z):
    """Sparsemax along the last axis by sorting (Martins & Astudillo 2016), in float64.

    k* = max{k : 1 + k z_(k) > Σ_{j≤k} z_(j)} for z sorted decreasingly, τ = (Σ_{j≤k*} z_(j) − 1)/k*.
    """
    z = np.asarray(z, np.float64)
    z_sorted = -np.sort(-z, axis=-1)
    cumsum = np.cumsum(z_sorted, axis=-1)
    k = np.arange(1, z.shape[-1] + 1)
    support = np.sum(1 + k * z_sorted > cumsum, axis=-1, keepdims=True)
    tau = (np.take_along_axis(cumsum, support - 1, axis=-1) - 1) / support
    return np.maximum(z - tau, 0.0)


def np_entmax15_sort(z):
    """1.5-entmax along the last axis by sorting (Peters et al. 2019, Algorithm 2), in float64."""
    z = np.asarray(z, np.float64) / 2
    z = z - z.max(axis=-1, keepdims=True)
    z_sorted = -np.sort(-z, axis=-1)
    k = np.arange(1, z.shape[-1] + 1)
    mean = np.cumsum(z_sorted, axis=-1) / k
    mean_sq = np.cumsum(z_sorted**2, axis=-1) / k
    delta = np.maximum((1 - k * (mean_sq - mean**2)) / k, 0.0)
    tau = mean - np.sqrt(delta)
    support = np.sum(tau <= z_sorted, axis=-1, keepdims=True)
    return np.maximum(z - np.take_along_axis(tau, support - 1, axis=-1), 0.0) ** 2


def np_support_weights(p, alpha):
    """s_i = p_i^{2−α} on the support, 0 off it."""
    p = np.asarray(p, np.float64)
    on = p > 0
    return np.where(on, np.where(on, p, 1.0) ** (2.0 - alpha), 0.0)


def np_jacobian(p, alpha):
    """∂p/∂z = diag(s) − s sᵀ / Σ s for one vector p."""
    s = np_support_weights(p, alpha)
    return np.diag(s) - np.outer(s, s) / s.sum()


def np_alpha_grad(p, alpha):
    """∂p/∂α by Proposition 1 of Correia et al. (2019), verbatim, along the last axis.

    α > 1: g = (p − p̃)/(α−1)² + (h − p̃ Σh)/(α−1), p̃ = s/Σs, h = −p log p (0 log 0 = 0).
    α = 1: g = (h log p − p Σ h log p)/2.
    """
    p = np.asarray(p, np.float64)
    on = p > 0
    log_p = np.log(np.where(on, p, 1.0))
    h = np.where(on, -p * log_p, 0.0)
    if alpha == 1:
        hl = h * log_p
        return np.where(on, (hl - p * hl.sum(-1, keepdims=True)) / 2, 0.0)
    s = np_support_weights(p, alpha)
    p_tilde = s / s.sum(-1, keepdims=True)
    beta = alpha - 1.0
    g = (p - p_tilde) / beta**2 + (h - p_tilde * h.sum(-1, keepdims=True)) / beta
    return np.where(on, g, 0.0)


def threshold_margin(z, alpha):
    """Smallest |(α−1)(z_i − max z) − τ| over a row: how far every entry is from a support change.

    Finite differences are only valid when no entry crosses the threshold within ±eps,
    because the maps are not differentiable where the support changes.
    """
    z = np.asarray(z, np.float64)
    z = z - z.max(-1, keepdims=True)
    p = np_entmax(z, alpha)
    beta = alpha - 1.0
    # On the support (α−1) z_i − τ = p_i^{α−1}; recover τ from the largest entry.
    tau = beta * z.max(-1, keepdims=True) - p.max(-1, keepdims=True) ** beta
    return np.min(np.abs(beta * z - tau))


def well_separated(rng, shape, alpha, margin=0.05):
    """Random scores whose every row has ≥ 2 entries on the support and keeps ``margin`` from a change.

    The scale 0.7/(α−1) (at most 1.5) keeps supports of intermediate size at every α.
    """
    scale = min(1.5, 0.7 / (alpha - 1.0))
    while True:
        z = scale * rng.standard_normal(shape)
        rows = z.reshape(-1, shape[-1])
        support = (np_entmax(rows, alpha) > 0).sum(-1)
        if support.min() >= 2 and min(threshold_margin(r, alpha) for r in rows) > margin:
            return z
