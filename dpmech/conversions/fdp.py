r"""f-DP: trade-off curves, μ-GDP, and the conversions between a privacy profile and its trade-off curve.

Definitions (Dong, Roth & Su 2019/2022, "Gaussian Differential Privacy", JRSS-B).
For output distributions P = M(D), Q = M(D') of neighbouring datasets, the
trade-off function T(P, Q)(α) is the smallest type-II error β of a test of P
against Q whose type-I error is at most α. A mechanism is f-DP when
T(M(D), M(D')) >= f for every neighbouring pair (under whatever relation the
caller's parameters, Δ for instance, were computed for). Larger f = more private.

Closed forms used here (each a theorem of that paper):

* μ-GDP: G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) = T(N(0, 1), N(μ, 1)); the Gaussian mechanism
  with sensitivity Δ and noise σ is (Δ/σ)-GDP, k-fold composition is (√k μ)-GDP.
* (ε, δ)-DP: f_{ε,δ}(α) = max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)) (Dong, Roth & Su 2019; Wasserman & Zhou 2010).
* Laplace with scale b and sensitivity Δ, μ = Δ/b: T(Lap(0,1), Lap(μ,1))(α) = 1 − e^μ α for
  α < e^{−μ}/2, e^{−μ}/(4α) for e^{−μ}/2 <= α <= 1/2, e^{−μ}(1 − α) beyond (derived from
  the Neyman–Pearson threshold test, as in Dong, Roth & Su 2019).
* K-ary randomized response keeping the true label with probability e^ε/(e^ε + K − 1):
  the Neyman–Pearson test of R(x) against R(x'), three linear pieces.
* Profile → trade-off (Prop. 2.12): a mechanism that is (ε, δ(ε))-DP for every ε >= 0 (both
  directions) is f-DP with f(α) = sup_ε f_{ε,δ(ε)}(α); the sup over any finite grid of ε is a
  smaller, hence still valid, f.
* Trade-off → profile (Prop. 2.12, converse): an f-DP mechanism is (ε, δ(ε))-DP with
  δ(ε) = 1 + f*(−e^ε) = sup_α [1 − f(α) − e^ε α].
* μ-GDP ↔ (ε, δ) (Cor. 2.13): μ-GDP is exactly (ε, δ(ε))-DP with the Gaussian profile
  δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), :func:`dpmech.gaussian_delta` with σ = 1, Δ = μ.

The closed-form curves (GDP, Laplace, randomized response) are rounded down past a bound on
their evaluation error: a trade-off curve used as a guarantee must never lie above the exact one
(a higher curve claims more privacy). All functions broadcast over numpy arrays.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from .. import validation as check
from ..calibration import calibrate_gaussian
from ..gaussian import _validated_mu, gaussian_delta, gaussian_epsilon


_Floats = NDArray[np.float64]
# One number, or an array that the functions broadcast over.
_Real = float | _Floats


def _alpha(alpha: ArrayLike) -> _Floats:
    return check.in_interval("alpha", alpha, 0.0, 1.0, low_open=False, high_open=False)


# Rounding unit of the error bounds below: the spacing of doubles at 1 (twice the unit roundoff).
_ULP = 2.0**-52
# scipy's ndtri and ndtr (Cephes) are taken to be within this many ulps (relative), ndtr's
# times 1 + z² at z < 0 (its erfc rounds z²/2 in exp(−z²/2)). A premise, not a proof: the worst
# errors an arb scan of 10⁴ points found are 3.1 ulps (ndtri) and 1.6 (1 + z²) ulps (ndtr).
_SPECIAL_ULPS = 16.0


def gdp_tradeoff(alpha: ArrayLike, mu: ArrayLike) -> _Real:
    """G_μ(α) = Φ(Φ⁻¹(1 − α) − μ), the trade-off curve of μ-GDP (Dong, Roth & Su 2019), rounded down.

    Φ⁻¹(1 − α) is evaluated as −Φ⁻¹(α), which keeps full relative accuracy for α near 0. A lower
    trade-off curve claims less privacy, so the value is lowered past its rounding: with
    q = Φ⁻¹(α) and z = −q − μ, the computed z is within D = 16 ulp |q| + ulp (|q| + μ) of the
    exact one, which moves log Φ(z) by at most D (1 + max(−z, 0) + D) (the inverse Mills ratio
    φ/Φ is below 1 + max(−z, 0)), and Φ itself is within 16 (1 + min(z, 0)²) ulps (the premise
    on scipy's ndtri and ndtr stated at ``_SPECIAL_ULPS``); the relative sum of both is
    subtracted, then one more ulp (for a result in the subnormal range).

    Args:
        alpha: type-I error in [0, 1].
        mu: μ >= 0 (Δ√k/σ for k Gaussian releases).
    """
    alpha = _alpha(alpha)
    mu = check.non_negative("mu", mu)
    alpha, mu = np.broadcast_arrays(alpha, mu)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        quantile = special.ndtri(alpha)
        z = -quantile - mu
        value = special.ndtr(z)
        shift = _SPECIAL_ULPS * _ULP * np.abs(quantile) + _ULP * (np.abs(quantile) + mu)
        relative = shift * (1.0 + np.maximum(-z, 0.0) + shift) + _SPECIAL_ULPS * _ULP * (1.0 + np.square(np.minimum(z, 0.0)))
        lowered = np.nextafter(value * np.maximum(1.0 - relative, 0.0), 0.0)
    return check.scalar_or_array(np.where(alpha == 0, 1.0, np.where(value > 0, lowered, 0.0)))


def approximate_dp_tradeoff(alpha: ArrayLike, epsilon: ArrayLike, delta: ArrayLike) -> _Real:
    """f_{ε,δ}(α) = max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)) (Dong, Roth & Su 2019; Wasserman & Zhou 2010).

    Args:
        alpha: type-I error in [0, 1].
        epsilon: ε >= 0.
        delta: δ in [0, 1].
    """
    alpha = _alpha(alpha)
    epsilon = check.non_negative("epsilon", epsilon)
    delta = check.in_interval("delta", delta, 0.0, 1.0, low_open=False, high_open=False)
    return check.scalar_or_array(_approximate_dp_tradeoff(alpha, epsilon, delta))


def _approximate_dp_tradeoff(alpha: _Floats, epsilon: _Real, delta: _Floats) -> _Floats:
    with np.errstate(over="ignore", invalid="ignore"):
        steep = np.where(alpha == 0, 1.0 - delta, 1.0 - delta - np.exp(epsilon) * alpha)
        return np.maximum(np.maximum(0.0, steep), np.exp(-epsilon) * (1.0 - delta - alpha))


def _exp_with_error(x: _Floats) -> tuple[_Floats, _Floats]:
    """e^x and a bound on the absolute error of numpy's value (4 ulps relative, plus the
    spacing of subnormals once it underflows)."""
    with np.errstate(over="ignore", under="ignore"):
        value = np.exp(x)
    return value, 4.0 * _ULP * value + 2.0**-1074


def laplace_tradeoff(alpha: ArrayLike, mu: ArrayLike) -> _Real:
    """T(Lap(0, 1), Lap(μ, 1))(α), the trade-off curve of the Laplace mechanism with μ = Δ/b, rounded down.

    1 − e^μ α for α < e^{−μ}/2; e^{−μ}/(4α) for e^{−μ}/2 <= α <= 1/2; e^{−μ}(1 − α) for α > 1/2
    (Dong, Roth & Su 2019; the likelihood-ratio test rejects for large outputs).

    Each piece is lowered by a bound on its rounding error (e^{±μ} within 4 ulps and each
    product, quotient and difference within one: 8 ulps of 1 + e^μα on the first piece, 8
    ulps of the value on the others, plus the absolute error of an e^{−μ} in the subnormal
    range); a lower curve claims less privacy. Near the corner e^{−μ}/2, where the rounded
    corner may pick the neighbouring piece, the two differ by second-order terms (the line is
    the hyperbola's tangent there), far below that margin.

    Args:
        alpha: type-I error in [0, 1].
        mu: Δ/b >= 0, sensitivity over Laplace scale.
    """
    alpha = _alpha(alpha)
    mu = check.non_negative("mu", mu)
    alpha, mu = np.broadcast_arrays(alpha, mu)
    grow, _ = _exp_with_error(mu)
    shrink, shrink_error = _exp_with_error(-mu)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        steep = grow * alpha
        small = 1.0 - steep - 8.0 * _ULP * (1.0 + steep)
        middle = shrink / (4.0 * alpha)
        middle = middle - 8.0 * _ULP * middle - shrink_error / (4.0 * alpha)
        large = shrink * (1.0 - alpha)
        large = large - 8.0 * _ULP * large - shrink_error
        corner = 0.5 * shrink
        result = np.where(alpha < corner, small, np.where(alpha <= 0.5, middle, large))
    return check.scalar_or_array(np.where(alpha == 0, 1.0, np.maximum(result, 0.0)))


def randomized_response_tradeoff(alpha: ArrayLike, epsilon: ArrayLike, num_buckets: ArrayLike) -> _Real:
    """Trade-off curve of K-ary randomized response between two different true labels, rounded down.

    R(x) outputs x with probability a = e^ε/(e^ε + K − 1) and each other label with
    b = 1/(e^ε + K − 1) (:mod:`dpmech.randomized_response`). The Neyman–Pearson test of
    R(x) against R(x') rejects on x' first (likelihood ratio e^ε), then on the K − 2 other
    labels (ratio 1), then on x (ratio e^{−ε}), so
    T(α) = max(0, 1 − e^ε α, 1 − a + b − α, e^{−ε}(1 − α)). With K = 2 this is f_{ε,0}.

    Each piece is lowered by a bound on its rounding error (e^{±ε} within 4 ulps; a and b within
    8 ulps each; each further operation one ulp: 8 ulps of 1 + e^εα, 16 ulps of 1 + a + b + α,
    and 8 ulps of e^{−ε}(1 − α) plus e^{−ε}'s subnormal spacing); a lower curve claims less privacy.

    Args:
        alpha: type-I error in [0, 1].
        epsilon: ε >= 0.
        num_buckets: K >= 2, the number of labels.
    """
    alpha = _alpha(alpha)
    epsilon = check.non_negative("epsilon", epsilon)
    k = check.integer_at_least("num_buckets", num_buckets, 2)
    alpha, epsilon, k = np.broadcast_arrays(alpha, np.asarray(epsilon, dtype=float), np.asarray(k, dtype=float))
    shrink, shrink_error = _exp_with_error(-epsilon)
    grow, _ = _exp_with_error(epsilon)
    keep = 1.0 / (1.0 + (k - 1.0) * shrink)
    other = keep * shrink
    with np.errstate(over="ignore", invalid="ignore"):
        steep_product = grow * alpha
        steep = np.where(alpha == 0, 1.0, 1.0 - steep_product - 8.0 * _ULP * (1.0 + steep_product))
        flat = 1.0 - keep + other - alpha - 16.0 * _ULP * (1.0 + keep + other + alpha)
        shallow = shrink * (1.0 - alpha)
        shallow = shallow - 8.0 * _ULP * shallow - shrink_error
    result = np.maximum.reduce([np.zeros_like(steep), steep, flat, shallow])
    return check.scalar_or_array(result)


def tradeoff_from_profile(alpha: ArrayLike, epsilons: ArrayLike, deltas: ArrayLike) -> _Real:
    """A valid trade-off curve from points (ε_i, δ_i) of a privacy profile (Dong, Roth & Su 2019, Prop. 2.12).

    f(α) = max_i f_{ε_i, δ_i}(α). Each term is a trade-off curve the mechanism satisfies when
    it is (ε_i, δ_i)-DP for both directions of every neighbouring pair (a symmetric profile,
    as for the Gaussian, Laplace and RR mechanisms under replace-one, or the max of both
    directions under add/remove-one); the maximum of valid lower bounds is valid. With a
    finite grid the result lies below the exact curve sup_ε f_{ε,δ(ε)}, never above it.

    Args:
        alpha: type-I errors in [0, 1], any shape.
        epsilons: 1-D array of ε_i >= 0.
        deltas: 1-D array of δ_i in [0, 1], the same length (upper bounds on the true δ(ε_i)).

    Returns:
        f(α), convex and non-increasing, of the shape of ``alpha``.
    """
    alpha = _alpha(alpha)
    epsilons, deltas = _profile_points(epsilons, deltas)
    curves = _approximate_dp_tradeoff(np.asarray(alpha)[..., None], epsilons, deltas)
    # Lowered by a relative 1e-12 so that rounding cannot lift it above the valid curve.
    return check.scalar_or_array(curves.max(axis=-1) * (1.0 - 1e-12))


def _profile_points(epsilons: ArrayLike, deltas: ArrayLike) -> tuple[_Floats, _Floats]:
    epsilons = np.atleast_1d(check.non_negative("epsilons", epsilons))
    deltas = np.atleast_1d(check.in_interval("deltas", deltas, 0.0, 1.0, low_open=False, high_open=False))
    if epsilons.ndim != 1 or epsilons.shape != deltas.shape:
        raise ValueError(f"epsilons and deltas must be 1-D arrays of one length (got shapes {epsilons.shape} and {deltas.shape})")
    return epsilons, deltas


def profile_from_tradeoff(epsilon: ArrayLike, alpha_grid: ArrayLike, tradeoff_values: ArrayLike) -> _Real:
    """An upper bound on δ(ε) = sup_α [1 − f(α) − e^ε α] from samples of a convex trade-off curve f.

    Dong, Roth & Su 2019, Prop. 2.12: an f-DP mechanism is (ε, 1 + f*(−e^ε))-DP. The function
    g(α) = 1 − f(α) − e^ε α is concave, so on each grid interval it lies below both
    neighbouring chords extended into it; the largest value of the lower of those two lines
    bounds g there. The returned δ, raised by 1e-12 to cover rounding, is therefore >= the
    exact δ(ε) of f whatever the grid; a finer grid makes it tighter.

    Args:
        epsilon: ε values (any real; a negative ε gives δ >= 1 − e^ε), any shape.
        alpha_grid: strictly increasing 1-D grid on [0, 1] with at least 3 points, starting at 0
            and ending at 1.
        tradeoff_values: f at the grid, in [0, 1]; f must be convex and non-increasing.

    Returns:
        δ(ε) in [0, 1], of the shape of ``epsilon``.
    """
    epsilon = check.real_array("epsilon", epsilon)
    if np.any(~np.isfinite(epsilon)):
        raise ValueError("epsilon must be finite")
    alpha = np.atleast_1d(_alpha(alpha_grid))
    f = np.atleast_1d(check.in_interval("tradeoff_values", tradeoff_values, 0.0, 1.0, low_open=False, high_open=False))
    if alpha.ndim != 1 or alpha.shape != f.shape or alpha.size < 3:
        raise ValueError("alpha_grid and tradeoff_values must be 1-D arrays of one length >= 3")
    if alpha[0] != 0.0 or alpha[-1] != 1.0 or np.any(np.diff(alpha) <= 0):
        raise ValueError("alpha_grid must increase strictly from 0 to 1")
    # The bound below is a theorem only for convex, non-increasing f: refuse anything else
    # (beyond rounding), rather than return a δ that could be too small.
    weight = (alpha[2:] - alpha[1:-1]) / (alpha[2:] - alpha[:-2])
    chord = weight * f[:-2] + (1.0 - weight) * f[2:]
    if np.any(np.diff(f) > 1e-12) or np.any(f[1:-1] > chord + 1e-12):
        raise ValueError("tradeoff_values must be a convex, non-increasing function of alpha_grid (a trade-off curve)")
    g = 1.0 - f - np.exp(epsilon)[..., None] * alpha
    h = np.diff(alpha)
    slope = np.diff(g, axis=-1) / h
    g_left, g_right = g[..., :-1], g[..., 1:]
    # Interior intervals: the chord on the left (slope s_{i−1}) and on the right (s_{i+1}) cross
    # at t = h(s_i − s_{i+1})/(s_{i−1} − s_{i+1}) from the interval's left end.
    s_before, s_here, s_after = slope[..., :-2], slope[..., 1:-1], slope[..., 2:]
    spread = s_before - s_after
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(spread > 0, h[1:-1] * (s_here - s_after) / spread, 0.0)
    t = np.clip(t, 0.0, h[1:-1])  # the crossing lies in the interval; guard against rounding only
    crossing = g_left[..., 1:-1] + s_before * t
    interior = np.maximum(crossing, np.maximum(g_left[..., 1:-1], g_right[..., 1:-1]))
    # End intervals have one neighbouring chord each.
    first = np.maximum(g_right[..., 0] - slope[..., 1] * h[0], g_right[..., 0])
    last = np.maximum(g_left[..., -1] + slope[..., -2] * h[-1], g_left[..., -1])
    bound = np.maximum(np.maximum(first, last), interior.max(axis=-1, initial=-np.inf))
    # f >= 0 caps g at 1 − e^ε α <= 1 everywhere.
    # Raised by 1e-12 (absolute: the chords are differences of values of order 1) to cover rounding.
    return check.scalar_or_array(np.clip(bound + 1e-12, 0.0, 1.0))


def gaussian_gdp_mu(sigma: ArrayLike, sensitivity: ArrayLike = 1.0, compositions: ArrayLike = 1) -> _Real:
    """μ = Δ√k/σ: k Gaussian releases with noise σ and sensitivity Δ are exactly μ-GDP.

    Dong, Roth & Su 2019: the Gaussian mechanism is (Δ/σ)-GDP and μ-GDP composes to
    √(Σ μ_i²)-GDP, with no loss. Broadcasts.
    """
    with np.errstate(over="ignore"):
        mu = _validated_mu(sigma, sensitivity, compositions)
    if not np.all(np.isfinite(mu)):
        raise ValueError("sigma must not be so small against sensitivity that Δ√k/σ overflows a double")
    return check.scalar_or_array(mu)


def gdp_delta(epsilon: ArrayLike, mu: ArrayLike) -> _Real:
    """The exact δ(ε) of μ-GDP, Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Dong, Roth & Su 2019, Cor. 2.13).

    :func:`dpmech.gaussian_delta` with σ = 1 and Δ = μ: a proven upper bound (relative error about 1e-13
    near δ = 1e-5, growing like 16u·a² in log δ, a = μ/2 − ε/μ, in the far tail).
    """
    epsilon = check.non_negative("epsilon", epsilon)
    mu = check.positive("mu", mu)
    return gaussian_delta(epsilon, 1.0, mu)


def gdp_epsilon(delta: ArrayLike, mu: ArrayLike) -> _Real:
    """The smallest ε with μ-GDP ⇒ (ε, δ)-DP, never below the exact one (:func:`dpmech.gaussian_epsilon`)."""
    delta = check.open_unit_interval("delta", delta)
    mu = check.positive("mu", mu)
    return gaussian_epsilon(delta, 1.0, mu)


def gdp_mu(epsilon: ArrayLike, delta: ArrayLike) -> _Real:
    """The largest μ such that μ-GDP implies (ε, δ)-DP, rounded down (never above the exact μ).

    μ = 1/σ for the smallest σ of a sensitivity-1 Gaussian that is (ε, δ)-DP
    (:func:`dpmech.calibrate_gaussian`, whose σ is never below the exact one), taken
    one ulp down so that the division's rounding cannot raise it.

    Args:
        epsilon: ε > 0.
        delta: δ in (0, 1).
    """
    sigma = calibrate_gaussian(epsilon, delta, 1.0)
    mu = np.nextafter(1.0 / np.asarray(sigma), 0.0)
    return check.scalar_or_array(mu)


__all__ = (
    "approximate_dp_tradeoff",
    "gaussian_gdp_mu",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu",
    "gdp_tradeoff",
    "laplace_tradeoff",
    "profile_from_tradeoff",
    "randomized_response_tradeoff",
    "tradeoff_from_profile",
)
