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

The Laplace and pure-DP curves are written as (1/u) log(1 + uεK) with K a sum of positive
terms (the first-order terms of E[(p/q)^u] − 1 cancel exactly on paper, not in floating point),
u = α − 1, and rounded up past a bound on their evaluation error, never to 0 for a positive
divergence. Randomized response's divergence of a finite pair is evaluated as
(1/u) log(1 + Σ_i w_i expm1(u ℓ_i)), w_i the atoms' probabilities and ℓ_i their privacy losses,
which keeps its accuracy as α → 1, and as (1/u) logsumexp(log w_i + uℓ_i) once |uℓ| > 1.

Conversions to (ε, δ): :func:`rdp_epsilon` / :func:`rdp_delta` over given orders, and
:func:`zcdp_epsilon` at its exact optimum over every real α > 1; each is raised past a bound
on its rounding (every libm function taken to be within 4 ulps), and a positive δ is never 0.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from numpy.typing import ArrayLike, NDArray

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
# Rounding unit of the error bounds: the spacing of doubles at 1 (twice the unit roundoff).
_ULP = 2.0**-52

_Floats = NDArray[np.float64]
# One number, or an array that the public functions broadcast over.
_Real = float | _Floats


def _orders(orders: ArrayLike, minimum: float = 1.0) -> _Floats:
    orders = check.real_array("orders", orders)
    if np.any(np.isnan(orders) | (orders < minimum)):
        raise ValueError(f"orders must be real numbers >= {minimum:g} (inf allowed) (got {orders!r})")
    return orders


def _divergence(orders: _Floats, weights: _Floats, log_ratios: _Floats) -> _Floats:
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


def _symmetric_divergence(orders: _Floats, log_other: _Floats, log_ratio: _Floats, rest: _Floats) -> _Floats:
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


def gaussian_rdp(orders: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike = 1.0, compositions: ArrayLike = 1) -> _Real:
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


def gaussian_zcdp(sigma: ArrayLike, sensitivity: ArrayLike = 1.0, compositions: ArrayLike = 1) -> _Real:
    """ρ = kΔ²/(2σ²): k Gaussian releases are ρ-zCDP (Bun & Steinke 2016, Prop. 1.6)."""
    sigma = check.positive("sigma", sigma)
    sensitivity = check.positive("sensitivity", sensitivity)
    compositions = check.integer_at_least("compositions", compositions, 1)
    with np.errstate(over="ignore"):
        rho = compositions * np.square(sensitivity / np.asarray(sigma)) / 2.0
    if not np.all(np.isfinite(rho)):
        raise ValueError("sigma must not be so small against sensitivity that kΔ²/(2σ²) overflows a double")
    return check.scalar_or_array(rho)


def _expm1_excess_over_square(x: _Floats) -> _Floats:
    """(e^x − 1 − x)/x², 1/2 at x = 0, within 40 ulps for every real x <= 1.

    For |x| <= 1/2 its Taylor series Σ_k x^k/(k+2)! (15 terms: the 16th is below 2^-60 of the
    sum, which is at least 0.42 there), so nothing cancels; beyond, expm1(x) − x loses at most
    a factor 8.4 (at x = −1/2) and is divided by x twice so that x² cannot overflow.
    """
    x = np.asarray(x, dtype=float)
    near = np.clip(x, -0.5, 0.5)
    series = np.full_like(near, _EXCESS_SERIES[0])
    for coefficient in _EXCESS_SERIES[1:]:
        series = series * near + coefficient
    with np.errstate(invalid="ignore", divide="ignore"):
        direct = ((np.expm1(x) - x) / x) / x
    return np.where(np.abs(x) <= 0.5, series, direct)


# 1/(k+2)! for k = 14, ..., 0: the Horner coefficients of (e^x − 1 − x)/x².
_EXCESS_SERIES = tuple(1.0 / math.factorial(k + 2) for k in range(14, -1, -1))


def _log1p_over_order(order_minus_one: _Floats, epsilon: _Floats, rate: _Floats) -> _Floats:
    """(1/u)·log(1 + uεK) written as εK·log1p(T)/T, T = uεK (u = α − 1 >= 0, K >= 0).

    A divergence whose E[(p/q)^u] − 1 = uεK has been put in this form is a product and a
    quotient of accurate positive factors; its value underflows only where the truth lies
    below the smallest double (the caller then rounds up to it).
    """
    with np.errstate(under="ignore"):
        excess = order_minus_one * epsilon * rate
        ratio = np.where(excess > 0, np.log1p(excess) / np.where(excess > 0, excess, 1.0), 1.0)
        return epsilon * (rate * ratio)


def _round_rdp_up(value: _Floats, epsilon: _Floats, orders: _Floats) -> _Floats:
    """``value`` raised past its evaluation error, capped at ε; exactly ε at α = ∞ and 0 at ε = 0.

    Every curve here is evaluated with a relative error below 200 ulps (4.4e-14: see the callers),
    so a relative raise of 1e-12 covers it; the next double up covers the absolute error (half
    the smallest subnormal) of a result that underflows, so a positive divergence is never 0. An
    ε-DP mechanism has D_α <= D_∞ = ε, hence the cap.
    """
    raised = np.nextafter(value * (1.0 + _SAFETY), np.inf)
    return np.where(np.isinf(orders) | (epsilon == 0) | np.isinf(epsilon), epsilon, np.minimum(raised, epsilon))


def laplace_rdp(orders: ArrayLike, scale: ArrayLike, sensitivity: ArrayLike = 1.0) -> _Real:
    """RDP curve of the Laplace mechanism (Mironov 2017, Prop. 6), with ε = Δ/b, rounded up.

    r(α) = (1/(α−1)) log(α/(2α−1) e^{(α−1)ε} + (α−1)/(2α−1) e^{−αε}); r(1) = e^{−ε} − 1 + ε
    (the KL divergence), r(∞) = ε. With u = α − 1 and E(x) = e^x − 1 − x >= 0, the argument
    of the log is 1 + (αE(uε) + uE(−αε))/(2α−1): the first-order terms cancel exactly, so
    for uε <= 1 it is evaluated as 1 + uεK, K = ε(α/(2α−1))(u e₂(uε) + α e₂(−αε)),
    e₂(x) = E(x)/x² > 0, a sum of positive terms (r ≈ αε²/2 keeps full accuracy at any ε).
    For uε > 1, r = ε + log(α/(2α−1) + (α−1)/(2α−1) e^{−(2α−1)ε})/(α−1), whose correction
    is at most log(2)/(α−1) < 0.7ε. ε is Δ/b rounded up (r increases with ε).

    Error: e₂ within 40 ulps, K, T and log1p(T)/T within 100 ulps in all, the large-uε form
    within 30 ulps of r; the result is raised past that (see :func:`_round_rdp_up`).
    """
    orders = _orders(orders)
    scale = check.positive("scale", scale)
    sensitivity = check.positive("sensitivity", sensitivity)
    with np.errstate(over="ignore", under="ignore"):
        epsilon = np.nextafter(np.asarray(sensitivity) / np.asarray(scale), np.inf)
    orders, epsilon = np.broadcast_arrays(orders, epsilon)
    finite = np.where(np.isinf(orders), 2.0, orders)
    u = finite - 1.0
    near_half = 1.0 / (2.0 - 1.0 / finite)  # α/(2α−1), without forming 2α − 1 (which overflows for α near the largest double)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        scaled = u * epsilon
        small = scaled <= 1.0
        up, down = _expm1_excess_over_square(np.stack([np.where(small, scaled, 0.0), -finite * epsilon]))
        rate = epsilon * near_half * (u * up + finite * down)
        small_value = _log1p_over_order(u, epsilon, np.where(small, rate, 0.0))
        tail = near_half + (1.0 - 1.0 / finite) * near_half * np.exp(-finite * epsilon * (2.0 - 1.0 / finite))
        large_value = epsilon + np.log(tail) / np.where(small, 1.0, u)
        value = np.where(small, small_value, large_value)
    return check.scalar_or_array(_round_rdp_up(value, epsilon, orders))


def pure_dp_rdp(orders: ArrayLike, epsilon: ArrayLike) -> _Real:
    """The RDP curve every ε-DP mechanism satisfies, that of binary randomized response, rounded up.

    r(α) = (1/(α−1)) log((e^{αε} + e^{(1−α)ε})/(1 + e^ε)) (Bun & Steinke 2016, Prop. 3.3);
    it is <= min(ε, αε²/2) and attained by binary RR, so no smaller curve holds for all ε-DP
    mechanisms. With a = e^ε/(1 + e^ε), b = 1 − a, u = α − 1 and E(x) = e^x − 1 − x >= 0 the
    argument of the log is 1 + (a − b)uε + aE(uε) + bE(−uε), a sum of positive terms:
    for uε <= 1 it is 1 + uεK with K = tanh(ε/2) + uε(a e₂(uε) + b e₂(−uε)), e₂(x) = E(x)/x²;
    beyond, r = ε + log(a + b e^{−2uε})/u, whose correction is at most log(2)/u < 0.7ε.
    r(1) = ε tanh(ε/2) (the KL divergence), r(∞) = ε. Error and rounding as :func:`laplace_rdp`.
    """
    orders = _orders(orders)
    epsilon = np.asarray(check.non_negative("epsilon", epsilon))
    orders, epsilon = np.broadcast_arrays(orders, epsilon)
    u = np.where(np.isinf(orders), 1.0, orders - 1.0)
    shrink = np.exp(-epsilon)
    keep, other = 1.0 / (1.0 + shrink), shrink / (1.0 + shrink)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        scaled = u * epsilon
        small = scaled <= 1.0
        near = np.where(small, scaled, 0.0)
        up, down = _expm1_excess_over_square(np.stack([near, -near]))
        rate = np.tanh(epsilon / 2.0) + near * (keep * up + other * down)
        small_value = _log1p_over_order(u, epsilon, np.where(small, rate, 0.0))
        large_value = epsilon + np.log(keep + other * np.exp(-2.0 * scaled)) / np.where(small, 1.0, u)
        value = np.where(small, small_value, large_value)
    return check.scalar_or_array(_round_rdp_up(value, epsilon, orders))


def pure_dp_zcdp(epsilon: ArrayLike) -> _Real:
    """ε-DP implies ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4)."""
    epsilon = check.non_negative("epsilon", epsilon)
    return check.scalar_or_array(np.square(epsilon) / 2.0)


def randomized_response_rdp(orders: ArrayLike, noise_parameter: ArrayLike, num_buckets: ArrayLike, relation: str = REPLACE_ONE) -> _Real:
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


def randomized_response_noise_parameter(epsilon: ArrayLike, num_buckets: ArrayLike) -> _Real:
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


def _conversion_epsilon(orders: _Floats, rdp: _Floats, log_delta: float, method: str) -> _Floats:
    """ε(α) of one RDP point, raised past its rounding; a valid ε for every α > 1 (inputs broadcast, validated).

    Rounding (every libm function within 4 ulps): the computed ε is within 8 ulps of the sum of
    its terms' sizes, r + |log(1 − 1/α)| + (1 + |log δ| + log α)/(α − 1) (the 1/(α − 1): rounding
    1/α moves log(1 − 1/α) by ulp/(α − 1)); twice that is added. The Bretagnolle–Huber test is
    decided with a margin of 16 ulps of the size of its sides (r = 0, one law, gives ε = 0).
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        u = orders - 1.0
        log_order = np.log(orders)
        if method == CLASSIC:
            value = rdp - log_delta / u
            size = rdp - log_delta / u
        else:
            log_one_minus = np.log1p(-1.0 / orders)
            value = rdp + log_one_minus - (log_delta + log_order) / u
            size = rdp + np.abs(log_one_minus) + 1.0 / u + (log_order - log_delta) / u
        value = np.where(np.isfinite(value), value + 16.0 * _ULP * size, value)
        value = np.where(u > 0, value, np.inf)
        # α = ∞ is pure DP with ε = r, which holds for every δ.
        value = np.where(np.isinf(orders), rdp, value)
        if method == IMPROVED:
            # Bretagnolle–Huber: TV <= sqrt(1 − e^{−KL}) and KL <= D_α, so δ above it gives ε = 0.
            log_divergence_bound = np.log(-np.expm1(-rdp))
            gap = 2.0 * log_delta - log_divergence_bound
            small = np.isneginf(log_divergence_bound) | (gap > 16.0 * _ULP * (1.0 - 2.0 * log_delta + np.abs(log_divergence_bound)))
            value = np.where(small, 0.0, value)
    return np.maximum(value, 0.0)


def rdp_epsilon(delta: float, orders: ArrayLike, rdp: ArrayLike, method: str = IMPROVED) -> tuple[float, float]:
    """The smallest ε over the given orders with (α, r(α))-RDP ⇒ (ε, δ)-DP; an upper bound on ε.

    * ``"improved"`` (default): ε = r + log(1 − 1/α) − (log δ + log α)/(α − 1), Canonne,
      Kamath & Steinke 2020, "The Discrete Gaussian for Differential Privacy", Prop. 12
      (arXiv:2004.00010v4; the same bound is Balle et al. 2020, Thm. 21, and Asoodeh
      et al. 2021); also ε = 0 where δ >= sqrt(1 − e^{−r}) (Bretagnolle–Huber), as in dp_accounting.
    * ``"classic"``: ε = r + log(1/δ)/(α − 1) (Mironov 2017, Prop. 3).

    Every order gives a valid ε, so the minimum over any set of orders is valid; it is
    the minimum over the orders supplied, not over all α, each raised past a bound on the
    rounding of its evaluation.

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
    return float(epsilons[best]), float(orders[best])


def rdp_delta(epsilon: float, orders: ArrayLike, rdp: ArrayLike) -> tuple[float, float]:
    """The smallest δ over the given orders with (α, r(α))-RDP ⇒ (ε, δ)-DP; an upper bound on δ.

    log δ = (α − 1)(r − ε + log(1 − 1/α)) − log α (Canonne, Kamath & Steinke 2020, Prop. 12),
    and δ <= sqrt(1 − e^{−r}) (Bretagnolle–Huber) at every order, capped at 1. Rounding: each
    log δ is raised by 16 ulps of the sum of its terms' sizes, (α − 1)(r + ε + |log(1 − 1/α)|)
    + 1 + log α + |log δ| (twice the error of its evaluation when every libm function is within
    4 ulps; the Bretagnolle–Huber term likewise by 16 ulps of 1 + its size), exp by 4 ulps; a δ
    in the subnormal range or below is moved one double up, so a positive δ is never 0 (it is the
    smallest positive double, 5e-324, where the bound lies below it). δ = 0 only where it is
    exact: at α = ∞ with ε >= r(∞), or r = 0 (one law).

    Returns:
        (δ, α*) with α* the order that attains it.
    """
    epsilon = check.non_negative("epsilon", epsilon)
    orders, rdp = _curve(orders, rdp)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        u = orders - 1.0
        log_one_minus = np.log1p(-1.0 / orders)
        log_order = np.log(orders)
        log_delta = u * (rdp - epsilon + log_one_minus) - log_order
        size = u * (rdp + epsilon + np.abs(log_one_minus)) + 1.0 + log_order + np.abs(log_delta)
        log_delta = np.where(u > 0, np.where(np.isfinite(log_delta), log_delta + 16.0 * _ULP * size, log_delta), np.inf)
        # α = ∞ is pure DP with ε = r: δ = 0 at ε >= r, nothing below.
        log_delta = np.where(np.isinf(orders), np.where(epsilon >= rdp, -np.inf, np.inf), log_delta)
        log_divergence_bound = 0.5 * np.log(-np.expm1(-rdp))
        # r = 0 gives −inf: both laws are one, δ = 0 exactly.
        log_divergence_bound = np.where(np.isfinite(log_divergence_bound), log_divergence_bound + 16.0 * _ULP * (1.0 + np.abs(log_divergence_bound)), log_divergence_bound)
        log_delta = np.minimum(log_delta, log_divergence_bound)
    best = int(np.argmin(log_delta))
    if log_delta[best] == -math.inf:
        return 0.0, float(orders[best])
    delta = min(math.exp(min(log_delta[best], 0.0)) * (1.0 + 4.0 * _ULP), 1.0)
    if delta < sys.float_info.min:  # subnormal or 0: exp's absolute error there is half a subnormal step
        delta = math.nextafter(delta, math.inf)
    return delta, float(orders[best])


def _curve(orders: ArrayLike, rdp: ArrayLike) -> tuple[_Floats, _Floats]:
    orders = np.atleast_1d(_orders(orders))
    rdp = np.atleast_1d(check.real_array("rdp", rdp))
    if orders.ndim != 1 or orders.shape != rdp.shape or orders.size == 0:
        raise ValueError(f"orders and rdp must be non-empty 1-D arrays of one length (got {orders.shape} and {rdp.shape})")
    if np.any(np.isnan(rdp) | (rdp < 0)):
        raise ValueError("rdp must be >= 0 (inf allowed)")
    return orders, rdp


def zcdp_epsilon(rho: ArrayLike, delta: ArrayLike, method: str = OPTIMAL) -> _Real:
    """An ε with ρ-zCDP ⇒ (ε, δ)-DP, never below the exact value of the bound used.

    * ``"optimal"`` (default): the infimum over every real α > 1 of the bound of :func:`rdp_epsilon`
      applied to r(α) = ρα (Canonne, Kamath & Steinke 2020, Prop. 12 with Cor. 13; Asoodeh et
      al. 2021), rounded up. With u = α − 1 and L = log(1/δ) that bound is
      g(u) = ρ(1 + u) + log(u/(1 + u)) + (L − log(1 + u))/u, and
      g'(u) = ρ + (log(1 + u) − L)/u², negative below and positive above the one root u* of
      ρu² + log(1 + u) = L (its left side increases from 0 to ∞): g is unimodal and
      min g = g(u*) = ρ(1 + 2u*) − log(1 + 1/u*), where u* <= min(√(L/ρ), e^L − 1) is of order
      √(L/ρ) unless ρ < e^{−2L} (the search range adapts to ρ and δ). u* is found by Newton's
      method in log u from the right (ρe^{2t} + log(1 + e^t) − L is convex and increasing in t,
      so the iterates fall monotonically onto the root) and g is evaluated at the û found — a
      valid ε whatever û is, and optimal to second order — plus a proven bound on its rounding.
      ε = 0 where δ > √(1 − e^{−ρ}) (Bretagnolle–Huber, KL <= ρ) or g(u*) <= 0.
    * ``"simple"``: ρ + 2 sqrt(ρ log(1/δ)) (Bun & Steinke 2016, Prop. 1.3), raised by a relative 1e-12.

    Broadcasts over ``rho`` and ``delta``.
    """
    rho = check.non_negative("rho", rho)
    delta = check.open_unit_interval("delta", delta)
    method = check.choice("method", method, (OPTIMAL, SIMPLE))
    rho, log_delta = np.broadcast_arrays(np.asarray(rho, dtype=float), np.log(delta))
    if method == SIMPLE:
        return check.scalar_or_array((rho + 2.0 * np.sqrt(rho * -log_delta)) * (1.0 + _SAFETY))
    return check.scalar_or_array(_optimal_zcdp_epsilon(rho, -log_delta))


_NEWTON_STEPS = 100


def _optimal_zcdp_order_minus_one(rho: _Floats, log_inverse_delta: _Floats) -> _Floats:
    """An approximation û of the root u* > 0 of ρu² + log(1 + u) = L (ρ > 0), by Newton from the right.

    The start t = min(½ log(L/ρ), log(e^L − 1)) has each term alone reach L, so it lies right of the
    root, within a few units of it in t (where one term dominates the other is small there).
    """
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_expm1 = log_inverse_delta + np.log(-np.expm1(-log_inverse_delta))
        log_u = np.minimum(0.5 * (np.log(log_inverse_delta) - np.log(rho)), log_expm1)
        for _ in range(_NEWTON_STEPS):
            u = np.exp(log_u)
            quadratic = (rho * u) * u  # ρu² in this order: u² alone may overflow
            step = (quadratic + np.log1p(u) - log_inverse_delta) / (2.0 * quadratic + u / (1.0 + u))
            log_u = log_u - step
            if np.all(np.abs(step) <= 1e-15 * np.maximum(np.abs(log_u), 1.0)):
                break
    return np.exp(log_u)


def _optimal_zcdp_epsilon(rho: _Floats, log_inverse_delta: _Floats) -> _Floats:
    """max(0, g(û)) + its rounding bound, or 0 under Bretagnolle–Huber (see :func:`zcdp_epsilon`).

    Rounding (every libm function within 4 ulps, as numpy's are): with A = ρ(1 + û), l = log(1 + û),
    B = (L − l)/û and C = log(1 + 1/û), the computed A + B − C is within
    8 ulp (A + (L + l)/û + C) of g(û) (L itself carries 4 ulps of log δ; C's argument 1/û one
    rounding, which moves C by at most ulp·min(1, 1/û) <= 1.45 ulp·C). Twice that is added.
    The Bretagnolle–Huber test 2 log δ > log(1 − e^{−ρ}) is decided only with a margin of
    16 ulp (L + |log(1 − e^{−ρ})| + 1) over its own rounding.
    """
    zero_rho = rho == 0
    safe_rho = np.where(zero_rho, 1.0, rho)
    u = _optimal_zcdp_order_minus_one(safe_rho, log_inverse_delta)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        log1p_u = np.log1p(u)
        first = safe_rho * (1.0 + u)
        second = (log_inverse_delta - log1p_u) / u
        third = np.log1p(1.0 / u)
        bound = first + second - third + 16.0 * _ULP * (first + (log_inverse_delta + log1p_u) / u + third)
        log_divergence_bound = np.log(-np.expm1(-safe_rho))
        gap = log_divergence_bound + 2.0 * log_inverse_delta  # log(1 − e^{−ρ}) − 2 log δ
        divergence_small = -gap > 16.0 * _ULP * (log_inverse_delta + np.abs(log_divergence_bound) + 1.0)
    # 0-zCDP: both outputs have one law, ε = 0 at every δ.
    return np.where(zero_rho | divergence_small, 0.0, np.maximum(bound, 0.0))


def gaussian_rdp_epsilon(delta: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike = 1.0, compositions: ArrayLike = 1) -> _Real:
    """The RDP-route ε of k Gaussian releases: :func:`zcdp_epsilon` at ρ = kΔ²/(2σ²).

    An upper bound on ε, never below the exact Gaussian ε (:func:`dpmech.gaussian_epsilon`),
    which is what accountants built on RDP report for the Gaussian.
    """
    return zcdp_epsilon(gaussian_zcdp(sigma, sensitivity, compositions), delta)
