r"""Rényi DP and zCDP: the curves of the mechanisms that have them, and their conversions to (ε, δ).

Definitions. M is (α, r)-RDP (Mironov 2017) when the Rényi divergence
D_α(M(D) ‖ M(D')) = (1/(α−1)) log E_{M(D)}[(p/q)^{α−1}] is at most r for every
neighbouring pair (in both orders); ρ-zCDP (Bun & Steinke 2016) means r(α) <= ρα
for every α > 1. Both compose additively: the curve of a composition is the sum
of the curves (Mironov 2017, Prop. 1; Bun & Steinke 2016), so arrays
of curves on common orders are simply added.

Curves here (each exact for its mechanism, i.e. the largest D_α over neighbouring pairs):

* Gaussian, noise σ, sensitivity Δ, k releases: r(α) = kαΔ²/(2σ²), ρ = kΔ²/(2σ²) (Mironov 2017, Prop. 7).
* Laplace, scale b, sensitivity Δ, ε = Δ/b: r(α) = ε + log(1 + (α−1)(e^{(1−2α)ε} − 1)/(2α−1))/(α−1)
  (Mironov 2017, Prop. 6; r(1) = ε + e^{−ε} − 1, r(∞) = ε).
* Pure ε-DP: every ε-DP mechanism has r(α) <= (1/(α−1)) log((e^{αε} + e^{(1−α)ε})/(1 + e^ε)),
  the curve of binary randomized response, which attains it (Bun & Steinke 2016, Prop. 3.3,
  whose sinh form equals this); hence ε-DP ⇒ ε²/2-zCDP (Prop. 1.4).
* K-ary randomized response with dp_accounting's ``noise_parameter`` p (output uniform with
  probability p, the truth otherwise): replace-one and replace-special relations, as in
  dp_accounting's ``_compute_randomized_response_rdp``.

Every divergence of a finite pair is evaluated as (1/u) log(1 + Σ_i w_i expm1(u ℓ_i)),
u = α − 1, w_i the atoms' probabilities and ℓ_i their privacy losses, which keeps its
accuracy as α → 1, and as (1/u) logsumexp(log w_i + uℓ_i) once |uℓ| > 1.

Conversions to (ε, δ): :func:`rdp_epsilon` / :func:`rdp_delta` over given orders, and
:func:`zcdp_epsilon` optimised over every real α > 1.
"""

from __future__ import annotations

import math

import numpy as np

from .. import validation as check
from ._logspace import logsumexp

CLASSIC = "classic"
IMPROVED = "improved"
METHODS = (IMPROVED, CLASSIC)
SIMPLE = "simple"
OPTIMAL = "optimal"
REPLACE_ONE = "replace_one"
REPLACE_SPECIAL = "replace_special"
# Bounds are raised by this relative amount, far above their evaluation error (a few ulps
# times the conditioning of log and expm1 here), so rounding never makes them optimistic.
_SAFETY = 1e-12


def _orders(orders, minimum=1.0):
    orders = check.real_array("orders", orders)
    if np.any(np.isnan(orders) | (orders < minimum)):
        raise ValueError(f"orders must be real numbers >= {minimum:g} (inf allowed) (got {orders!r})")
    return orders


def _divergence(orders, weights, log_ratios):
    """(1/(α−1)) log E_P[e^{(α−1)ℓ}] for atoms of P-probability w_i and privacy loss ℓ_i = log(P/Q).

    The last axis indexes the atoms; α = 1 gives KL = Σ w_i ℓ_i and α = ∞ the largest ℓ_i.
    """
    u = (orders - 1.0)[..., None]
    weights, log_ratios = np.broadcast_arrays(weights, log_ratios)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        present = weights > 0
        kl = np.sum(np.where(present, weights * log_ratios, 0.0), axis=-1)
        largest = np.max(np.where(present, log_ratios, -np.inf), axis=-1)
        scaled = u * log_ratios
        small = np.log1p(np.sum(np.where(present, weights * np.expm1(scaled), 0.0), axis=-1))
        large = logsumexp(np.where(present, np.log(weights) + scaled, -np.inf), axis=-1)
        use_large = np.max(np.where(present, np.abs(scaled), 0.0), axis=-1) > 1.0
        u = u[..., 0]
        value = np.where(use_large, large, small) / np.where((u > 0) & np.isfinite(u), u, 1.0)
        return np.where(u == 0, kl, np.where(np.isinf(u), largest, value))


def _symmetric_divergence(orders, log_other, log_ratio, rest):
    """D_α for P with atoms (b e^L, b, rest) and Q with (b, b e^L, rest): losses +L, −L and 0.

    E_P[e^{uℓ}] − 1 = b·expm1(uL)·e^{−uL}·expm1((u+1)L), a product of accurate factors (taken
    in logs), so the first-order terms that cancel in the plain sum (size uL each, for a result
    of size uL²) never appear. Once uL > 1 the divergence is L + log(a + b e^{−2uL} + rest·e^{−uL})/u,
    which cannot overflow. ``log_other`` is log b, so that b far below the smallest double is kept.
    """
    u = orders - 1.0
    other = np.exp(log_other)
    log_keep = log_other + log_ratio
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        scaled = u * log_ratio
        finite_u = np.where(np.isfinite(u) & (u > 0), u, 1.0)
        small_scaled = np.minimum(scaled, 1.0)
        whole = small_scaled + log_ratio  # (u + 1)L
        log_expm1_whole = np.where(whole < 30.0, np.log(np.expm1(np.minimum(whole, 30.0))), whole + np.log1p(-np.exp(-whole)))
        log_product = log_other + np.log(np.expm1(small_scaled)) - small_scaled + log_expm1_whole
        small = np.log1p(np.exp(log_product)) / finite_u
        terms = np.broadcast_arrays(log_keep, log_other - 2.0 * scaled, np.log(rest) - scaled)
        tail = logsumexp(np.stack(terms, axis=-1))
        large = log_ratio + tail / finite_u
        value = np.where(scaled > 1.0, large, small)
        # KL = (a − b)L with a − b = b·expm1(L), or 1 − rest − 2b where expm1 would overflow.
        kl = np.where(log_ratio < 1.0, other * np.expm1(np.minimum(log_ratio, 1.0)), 1.0 - rest - 2.0 * other) * log_ratio
        return np.where(u == 0, kl, np.where(np.isinf(u), log_ratio, np.where(log_ratio == 0, 0.0, value)))


def gaussian_rdp(orders, sigma, sensitivity=1.0, compositions=1):
    """kαΔ²/(2σ²), the RDP curve of k Gaussian releases (Mironov 2017, Prop. 7). Broadcasts.

    Orders must be finite: the Gaussian is not pure DP, its D_∞ is infinite.
    """
    orders = _orders(orders)
    if np.any(np.isinf(orders)):
        raise ValueError("orders must be finite for the Gaussian (its order-infinity divergence is infinite)")
    with np.errstate(over="ignore"):
        rdp = orders * gaussian_zcdp(sigma, sensitivity, compositions)
    if not np.all(np.isfinite(rdp)):
        raise ValueError("orders times kΔ²/(2σ²) overflows a double; use smaller orders or a larger sigma")
    return check.scalar_or_array(rdp)


def gaussian_zcdp(sigma, sensitivity=1.0, compositions=1):
    """ρ = kΔ²/(2σ²): k Gaussian releases are ρ-zCDP (Bun & Steinke 2016, Prop. 1.6)."""
    sigma = check.positive("sigma", sigma)
    sensitivity = check.positive("sensitivity", sensitivity)
    compositions = check.integer_at_least("compositions", compositions, 1)
    with np.errstate(over="ignore"):
        rho = compositions * np.square(sensitivity / np.asarray(sigma)) / 2.0
    if not np.all(np.isfinite(rho)):
        raise ValueError("sigma must not be so small against sensitivity that kΔ²/(2σ²) overflows a double")
    return check.scalar_or_array(rho)


def laplace_rdp(orders, scale, sensitivity=1.0):
    """RDP curve of the Laplace mechanism (Mironov 2017, Prop. 6), with ε = Δ/b.

    r(α) = ε + c·log1p(x)/x with c = expm1((1−2α)ε)/(2α−1) and x = (α−1)c, which is the
    proposition's formula rearranged so that α → 1 (where r → ε + e^{−ε} − 1) loses nothing.
    """
    orders = _orders(orders)
    scale = check.positive("scale", scale)
    sensitivity = check.positive("sensitivity", sensitivity)
    epsilon = np.asarray(sensitivity / np.asarray(scale))
    orders, epsilon = np.broadcast_arrays(orders, epsilon)
    finite = np.where(np.isinf(orders), 2.0, orders)
    with np.errstate(over="ignore"):  # (1 − 2α)ε may reach −inf, where expm1 gives −1 as it should
        c = np.expm1((1.0 - 2.0 * finite) * epsilon) / (2.0 * finite - 1.0)
    x = (finite - 1.0) * c
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(np.abs(x) < 1e-10, 1.0 - 0.5 * x, np.log1p(x) / np.where(x == 0, 1.0, x))
    return check.scalar_or_array(np.where(np.isinf(orders), epsilon, epsilon + c * ratio))


def pure_dp_rdp(orders, epsilon):
    """The RDP curve every ε-DP mechanism satisfies, that of binary randomized response.

    r(α) = (1/(α−1)) log((e^{αε} + e^{(1−α)ε})/(1 + e^ε)) (Bun & Steinke 2016, Prop. 3.3);
    it is <= min(ε, αε²/2) and attained by binary RR, so no smaller curve holds for all ε-DP
    mechanisms.
    """
    orders = _orders(orders)
    epsilon = np.asarray(check.non_negative("epsilon", epsilon))
    return check.scalar_or_array(_symmetric_divergence(orders, -np.logaddexp(0.0, epsilon), epsilon, 0.0))


def pure_dp_zcdp(epsilon):
    """ε-DP implies ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4)."""
    epsilon = check.non_negative("epsilon", epsilon)
    return check.scalar_or_array(np.square(epsilon) / 2.0)


def randomized_response_rdp(orders, noise_parameter, num_buckets, relation=REPLACE_ONE):
    """RDP curve of K-ary randomized response in dp_accounting's parametrisation.

    The mechanism outputs a uniformly random bucket with probability p (``noise_parameter``)
    and the true bucket otherwise: the truth has probability a = 1 − p + p/K.

    * ``"replace_one"``: D_α between R(x) and R(x') for x ≠ x' (symmetric).
    * ``"replace_special"``: the max of D_α(R(x) ‖ U) and D_α(U ‖ R(x)), U uniform
      (the "special" input of dp_accounting's REPLACE_SPECIAL relation).

    Args:
        orders: α >= 1 (inf allowed).
        noise_parameter: p in (0, 1]; p = 0 is not DP at all.
        num_buckets: K >= 1 (K = 1 releases nothing: the curve is 0).
        relation: ``"replace_one"`` or ``"replace_special"``.
    """
    orders = _orders(orders)
    p = np.asarray(check.in_interval("noise_parameter", noise_parameter, 0.0, 1.0, low_open=True, high_open=False))
    k = np.asarray(check.integer_at_least("num_buckets", num_buckets, 1), dtype=float)
    relation = check.choice("relation", relation, (REPLACE_ONE, REPLACE_SPECIAL))
    if relation == REPLACE_ONE:
        log_ratio = np.log1p(k * (1.0 - p) / p)  # log(a/b), a = 1 − p + p/K, b = p/K
        result = _symmetric_divergence(orders, np.log(p / k), log_ratio, np.maximum(k - 2.0, 0.0) * p / k)
        return check.scalar_or_array(np.where(k == 1, 0.0, result))
    p, k = p[..., None], k[..., None]
    other = p / k
    keep = 1.0 - p + other
    log_keep, log_other = np.log(k * keep), np.log(p)
    forward = _divergence(orders, np.concatenate([keep, 1.0 - keep], axis=-1), np.concatenate([log_keep, log_other], axis=-1))
    uniform = np.concatenate([1.0 / k, 1.0 - 1.0 / k], axis=-1)
    backward = _divergence(orders, uniform, np.concatenate([-log_keep, -log_other], axis=-1))
    return check.scalar_or_array(np.maximum(forward, backward))


def randomized_response_noise_parameter(epsilon, num_buckets):
    """dp_accounting's noise parameter p of the K-ary randomized response that is exactly ε-DP.

    :mod:`dpmech.randomized_response` keeps the label with probability e^ε/(e^ε + K − 1), which is
    p = K/(e^ε + K − 1) (written with e^{−ε} so large ε cannot overflow); its replace-one privacy
    loss is then ln(1 + K(1 − p)/p) = ε. Broadcasts.

    Args:
        epsilon: ε >= 0.
        num_buckets: K >= 2.
    """
    epsilon = check.non_negative("epsilon", epsilon)
    k = np.asarray(check.integer_at_least("num_buckets", num_buckets, 2), dtype=float)
    shrink = np.exp(-np.asarray(epsilon, dtype=float))
    return check.scalar_or_array(k * shrink / (1.0 + (k - 1.0) * shrink))


def _conversion_epsilon(orders, rdp, log_delta, method):
    """ε(α) of one RDP point; a valid ε for every α > 1 (inputs broadcast, already validated)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        u = orders - 1.0
        if method == CLASSIC:
            value = rdp - log_delta / u
        else:
            value = rdp + np.log1p(-1.0 / orders) - (log_delta + np.log(orders)) / u
        value = np.where(u > 0, value, np.inf)
        # α = ∞ is pure DP with ε = r, which holds for every δ.
        value = np.where(np.isinf(orders), rdp, value)
        if method == IMPROVED:
            # Bretagnolle–Huber: TV <= sqrt(1 − e^{−KL}) and KL <= D_α, so δ above it gives ε = 0.
            value = np.where(2.0 * log_delta > np.log(-np.expm1(-rdp)), 0.0, value)
    return np.maximum(value, 0.0)


def rdp_epsilon(delta, orders, rdp, method=IMPROVED):
    """The smallest ε over the given orders with (α, r(α))-RDP ⇒ (ε, δ)-DP; an upper bound on ε.

    * ``"improved"`` (default): ε = r + log(1 − 1/α) − (log δ + log α)/(α − 1), Canonne,
      Kamath & Steinke 2020, "The Discrete Gaussian for Differential Privacy", Prop. 12
      (arXiv:2004.00010v4; the same bound is Balle et al. 2020, Thm. 21, and Asoodeh
      et al. 2021); also ε = 0 where δ >= sqrt(1 − e^{−r}) (Bretagnolle–Huber), as in dp_accounting.
    * ``"classic"``: ε = r + log(1/δ)/(α − 1) (Mironov 2017, Prop. 3).

    Every order gives a valid ε, so the minimum over any set of orders is valid; it is
    the minimum over the orders supplied, not over all α, raised by a relative 1e-12 to
    cover the rounding of its evaluation.

    Args:
        delta: δ in (0, 1).
        orders: 1-D array of orders α >= 1 (α = 1 contributes only the KL rule).
        rdp: 1-D array of r(α) >= 0 on those orders (inf allowed).
        method: ``"improved"`` or ``"classic"``.

    Returns:
        (ε, α*) with α* the order that attains it.
    """
    delta = check.open_unit_interval("delta", delta)
    orders, rdp = _curve(orders, rdp)
    method = check.choice("method", method, METHODS)
    epsilons = _conversion_epsilon(orders, rdp, math.log(delta), method)
    best = int(np.argmin(epsilons))
    return float(epsilons[best]) * (1.0 + _SAFETY), float(orders[best])


def rdp_delta(epsilon, orders, rdp):
    """The smallest δ over the given orders with (α, r(α))-RDP ⇒ (ε, δ)-DP; an upper bound on δ.

    log δ = (α − 1)(r − ε + log(1 − 1/α)) − log α (Canonne, Kamath & Steinke 2020, Prop. 12),
    and δ <= sqrt(1 − e^{−r}) (Bretagnolle–Huber) at every order, capped at 1; raised by a
    relative 1e-12 to cover rounding.

    Returns:
        (δ, α*) with α* the order that attains it.
    """
    epsilon = check.non_negative("epsilon", epsilon)
    orders, rdp = _curve(orders, rdp)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = orders - 1.0
        log_delta = np.where(u > 0, u * (rdp - epsilon + np.log1p(-1.0 / orders)) - np.log(orders), np.inf)
        # α = ∞ is pure DP with ε = r: δ = 0 at ε >= r, nothing below.
        log_delta = np.where(np.isinf(orders), np.where(epsilon >= rdp, -np.inf, np.inf), log_delta)
        log_delta = np.minimum(log_delta, 0.5 * np.log(-np.expm1(-rdp)))
    best = int(np.argmin(log_delta))
    return float(min(math.exp(log_delta[best]) * (1.0 + _SAFETY), 1.0)), float(orders[best])


def _curve(orders, rdp):
    orders = np.atleast_1d(_orders(orders))
    rdp = np.atleast_1d(check.real_array("rdp", rdp))
    if orders.ndim != 1 or orders.shape != rdp.shape or orders.size == 0:
        raise ValueError(f"orders and rdp must be non-empty 1-D arrays of one length (got {orders.shape} and {rdp.shape})")
    if np.any(np.isnan(rdp) | (rdp < 0)):
        raise ValueError("rdp must be >= 0 (inf allowed)")
    return orders, rdp


def zcdp_epsilon(rho, delta, method=OPTIMAL):
    """An ε with ρ-zCDP ⇒ (ε, δ)-DP, never below the exact value of the bound used.

    * ``"optimal"`` (default): inf over every real α > 1 of the bound of :func:`rdp_epsilon`
      applied to r(α) = ρα (Canonne, Kamath & Steinke 2020, Prop. 12 with Cor. 13). The
      minimiser is found by a grid of 64 points in log(α − 1) and 40 golden-section steps;
      every α tried is a valid ε, so the value returned is a valid upper bound whatever the
      optimiser's accuracy.
    * ``"simple"``: ρ + 2 sqrt(ρ log(1/δ)) (Bun & Steinke 2016, Prop. 1.3).

    Broadcasts over ``rho`` and ``delta``. Results are raised by a relative 1e-12 to cover rounding.
    """
    rho = check.non_negative("rho", rho)
    delta = check.open_unit_interval("delta", delta)
    method = check.choice("method", method, (OPTIMAL, SIMPLE))
    rho, log_delta = np.broadcast_arrays(np.asarray(rho, dtype=float), np.log(delta))
    if method == SIMPLE:
        return check.scalar_or_array((rho + 2.0 * np.sqrt(rho * -log_delta)) * (1.0 + _SAFETY))
    best = _minimise_over_orders(
        lambda orders: _conversion_epsilon(orders, rho[..., None] * orders, log_delta[..., None], IMPROVED), rho.shape
    )
    return check.scalar_or_array(best * (1.0 + _SAFETY))


def gaussian_rdp_epsilon(delta, sigma, sensitivity=1.0, compositions=1):
    """The RDP-route ε of k Gaussian releases: :func:`zcdp_epsilon` at ρ = kΔ²/(2σ²).

    An upper bound on ε, never below the exact Gaussian ε (:func:`dpmech.gaussian_epsilon`),
    which is what accountants built on RDP report for the Gaussian.
    """
    return zcdp_epsilon(gaussian_zcdp(sigma, sensitivity, compositions), delta)


def _minimise_over_orders(objective, shape):
    """min over α > 1 of objective(α) (last axis = candidate orders), by grid then golden section in log(α − 1)."""
    grid = np.linspace(-12.0, 14.0, 64)
    values = objective(1.0 + np.exp(grid))
    best_value = values.min(axis=-1)
    index = values.argmin(axis=-1)
    step = grid[1] - grid[0]
    low, high = grid[index] - step, grid[index] + step
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(40):  # the bracket shrinks to 1e-8 of its width; ε is flat to second order there
        a = high - ratio * (high - low)
        b = low + ratio * (high - low)
        fa = objective(1.0 + np.exp(np.stack([a, b], axis=-1)))
        best_value = np.minimum(best_value, fa.min(axis=-1))
        left = fa[..., 0] < fa[..., 1]
        high = np.where(left, b, high)
        low = np.where(left, low, a)
    return best_value.reshape(shape)
