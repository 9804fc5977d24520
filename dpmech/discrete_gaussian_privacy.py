r"""Privacy profile δ(ε) of the discrete Gaussian mechanism, and σ² calibrated to a target (ε, δ).

Mechanism: q(D) ∈ Z^d plus independent N_Z(0, σ²) noise per coordinate
(Canonne, Kamath & Steinke, NeurIPS 2020). Sensitivities are in grid
units: for neighbouring datasets (under the caller's relation) q(D) − q(D')
is an integer vector.

* d = 1, |q(D) − q(D')| <= Δ (an integer): CKS Theorem 7, tight,
  δ(ε) = P[X > εσ²/Δ − Δ/2] − e^ε·P[X > εσ²/Δ + Δ/2], X ~ N_Z(0, σ²).
  The first integers above the thresholds come from ⌊εσ²/Δ − Δ/2⌋ in
  exact rational arithmetic (a double threshold can round across an
  integer). The tails are sums of exp(−x²/(2σ²)) over the integers, computed in
  double precision for all ε at once from one cumulative sum over
  |x| <= N = ⌈max threshold + 40σ⌉ + 1 (the rest is below e^{−800} of
  the mass). Returned as a proven upper bound: every relative rounding
  error (each weight within |x²/(2σ²)|·2⁻⁵² + 2⁻⁵², each sum of n terms
  within n·2⁻⁵³) is covered by a relative margin η = 10⁻⁹ applied to push
  the positive term up and the subtracted term down. δ > 0 for every
  finite ε, so a result that rounds to 0 or below is replaced by the
  upper bound P[X > εσ²/Δ − Δ/2] itself, and that by 2⁻¹⁰⁷⁴ if it
  underflows.
* d >= 1, ‖q(D) − q(D')‖₂ <= Δ₂ (any real): the d-dimensional discrete
  Gaussian is ρ-zCDP with ρ = Δ₂²/(2σ²) (CKS Thm 4, per-coordinate Rényi
  divergence α·Δ_i²/(2σ²), summed over independent coordinates), and
  ρ-zCDP gives (ε, δ) with log δ = (α−1)(αρ − ε + log(1 − 1/α)) − log α
  for every α > 1 (CKS Prop. 12); the minimum over a grid of α is taken.
  Valid but not tight; the 1-D formula is not valid for d > 1 (CKS §4).

This is the discrete Gaussian's own profile, not the continuous formula:
at small σ the two differ (the discrete one is not simply the continuous
one evaluated at σ).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import validation as check
from .calibration import calibrate_gaussian
from .discrete_laplace import RationalInput, rational

_MARGIN = 1e-9
_TAIL_WIDTH = 40.0
_SMALLEST = 5e-324
# The tails are exact sums over about 80σ + c integers; σ² above this would need gigabytes.
MAX_SIGMA_SQUARED = 1 << 32
# σ² is calibrated on a grid of 1/64 below 2**12 and on the integers of the form t·c,
# t = ⌊√(tc)⌋, above: both keep the sampler's integers small (see dpmech.discrete_gaussian).
SIGMA_SQUARED_DENOMINATOR = 64
_INTEGER_FROM = 2**12


def _validated_epsilon(epsilon: ArrayLike) -> NDArray[np.float64]:
    return np.asarray(check.non_negative("epsilon", epsilon), dtype=float)


def _one_dimensional_delta(epsilon: NDArray[np.float64], sigma_squared: Fraction, sensitivity: int) -> NDArray[np.float64]:
    # ⌊c⌋ for c = εσ²/Δ − Δ/2 in exact rational arithmetic (a double c can round across an integer,
    # e.g. 1 − 2⁻⁵⁴ to 1); then P[X > c] = P[X >= ⌊c⌋ + 1] and P[X > c + Δ] = P[X >= ⌊c⌋ + Δ + 1].
    floor_low = [math.floor(Fraction(value) * sigma_squared / sensitivity - Fraction(sensitivity, 2))
                 for value in epsilon.tolist()]
    variance = float(sigma_squared)
    # Past 40σ the tail is below e^-790 of the total mass (Σ_{x>=k} e^{-x²/2σ²} <= e^{-k²/2σ²}/(1 − e^{-k/σ²})
    # against a normaliser >= max(1, σ√(2π) − 1)), under the smallest double: an index beyond the grid
    # reads a tail of 0 and δ is then reported as the smallest positive double, an upper bound.
    # Compared as exact integers first: εσ²/Δ may pass the largest double.
    reach = float(min(max(max(floor_low, default=0) + sensitivity, 0), math.ceil(_TAIL_WIDTH * math.sqrt(variance) + 1.0)))
    width = math.ceil(reach + _TAIL_WIDTH * math.sqrt(variance)) + 2
    support = np.arange(-width, width + 1, dtype=float)
    weights = np.exp(-(support * support) / (2.0 * variance))
    total = weights.sum()
    # tail[i] = Σ_{x >= support[i]} w(x): a reversed cumulative sum, with 0 past the end.
    tail = np.append(np.cumsum(weights[::-1])[::-1], 0.0)

    def at_least(first_integers: Sequence[int]) -> NDArray[np.float64]:
        # Exact Python integers (Δ may pass 2⁶³), clipped to the grid before indexing: below it the whole
        # mass, above it none.
        positions = [min(max(first + width, 0), support.size) for first in first_integers]
        fractions: NDArray[np.float64] = tail[np.array(positions, dtype=np.int64).reshape(epsilon.shape)] / total
        return fractions

    upper = at_least([low + 1 for low in floor_low]) * (1.0 + 3 * _MARGIN)
    lower = at_least([low + sensitivity + 1 for low in floor_low]) * (1.0 - 3 * _MARGIN)
    with np.errstate(over="ignore", invalid="ignore"):
        delta = upper - np.where(lower > 0.0, np.exp(epsilon) * (1.0 - _MARGIN) * lower, 0.0)
    delta = np.where(delta > 0.0, delta, upper)
    return np.minimum(np.maximum(delta, _SMALLEST), 1.0)


def _zcdp_delta(epsilon: NDArray[np.float64], rho: float) -> NDArray[np.float64]:
    orders = 1.0 + np.geomspace(1e-3, 1e5, 2000)
    log_delta = (orders[None, :] - 1.0) * (orders[None, :] * rho - epsilon[:, None] + np.log1p(-1.0 / orders[None, :]))
    log_delta -= np.log(orders)[None, :]
    best = log_delta.min(axis=1)
    # Rounding of the few operations above: a relative 1e-12 of the terms' size, pushed upward.
    best += 1e-12 * (np.abs(best) + orders.max() * (rho + epsilon))
    delta: NDArray[np.float64] = np.minimum(np.maximum(np.exp(best), _SMALLEST), 1.0)
    return delta


def discrete_gaussian_delta(
    epsilon: ArrayLike, sigma_squared: RationalInput, sensitivity: float, dimension: int = 1
) -> float | NDArray[np.float64]:
    """Upper bound on δ(ε) of q(D) + N_Z(0, σ²)^d (see the module docstring).

    For d = 1 the bound exceeds the exact δ by at most 1e-8·(P[X > c] + e^ε P[X > c + Δ]),
    c = εσ²/Δ − Δ/2: a relative 1e-8 unless the two tails cancel.

    Args:
        epsilon: ε >= 0, a number or an array.
        sigma_squared: σ² > 0 of each coordinate, in grid units² (a rational,
            as for :func:`dpmech.discrete_gaussian.discrete_gaussian`).
        sensitivity: for ``dimension == 1`` an integer Δ >= 1 bounding
            |q(D) − q(D')|; for ``dimension > 1`` the L2 sensitivity Δ₂ > 0.
        dimension: d >= 1.

    Returns:
        δ as a float, or an array of the shape of ``epsilon``.
    """
    epsilon_array = _validated_epsilon(epsilon)
    sigma_squared = rational("sigma_squared", sigma_squared)
    dimension = check.integer_scalar("dimension", dimension, 1)
    if dimension == 1:
        sensitivity = check.integer_scalar("sensitivity", sensitivity, 1)
        if sigma_squared > MAX_SIGMA_SQUARED:
            raise ValueError(f"sigma_squared must be <= 2**32 for dimension 1 (exact tail sums; got {float(sigma_squared):g})")
        delta = _one_dimensional_delta(epsilon_array.ravel(), sigma_squared, sensitivity)
    else:
        sensitivity = check.positive("sensitivity", sensitivity)
        if np.ndim(sensitivity):
            raise ValueError("sensitivity must be a single number > 0 (got an array)")
        delta = _zcdp_delta(epsilon_array.ravel(), float(sensitivity) ** 2 / (2.0 * float(sigma_squared)))
    return check.scalar_or_array(delta.reshape(epsilon_array.shape))


def calibrate_discrete_gaussian(epsilon: float, delta: float, sensitivity: float, dimension: int = 1) -> Fraction:
    """The smallest σ² on the grid (1/64)·Z (σ² < 2¹², else on the integers t·c with t = ⌊√(tc)⌋) that meets δ.

    Never under-noised: the returned σ² satisfies :func:`discrete_gaussian_delta` <= δ.

    Bisection between a σ² that fails and one that meets δ, both multiples
    of 1/64, starting from the continuous Gaussian's analytic σ for the same
    sensitivity; the returned σ² meets δ by the proven upper bound.
    """
    epsilon, delta = check.target_epsilon_delta(epsilon, delta)
    dimension = check.integer_scalar("dimension", dimension, 1)
    continuous_sensitivity = (
        check.integer_scalar("sensitivity", sensitivity, 1) if dimension == 1 else check.positive("sensitivity", sensitivity)
    )
    if isinstance(continuous_sensitivity, int) and continuous_sensitivity > sys.float_info.max:
        # Only an integer Δ can pass the largest double (a float one is finite). Even at ε = 1.8e308 such a sensitivity needs σ² far above the 2**31 grid units supported.
        raise ValueError(f"sensitivity must be at most {sys.float_info.max:.17g} here (got an integer of "
                         f"{continuous_sensitivity.bit_length()} bits)")
    start = calibrate_gaussian(epsilon, delta, float(continuous_sensitivity)) ** 2
    if dimension == 1 and start > MAX_SIGMA_SQUARED / 2:
        raise ValueError(
            f"epsilon, delta and sensitivity need σ² of about {start:.3g} grid units², above the 2**31 this "
            "calibration supports in one dimension; use a coarser granularity or a larger epsilon"
        )

    denominator = SIGMA_SQUARED_DENOMINATOR if start < _INTEGER_FROM else 1

    def meets(value: Fraction) -> bool:
        return bool(discrete_gaussian_delta(epsilon, value, sensitivity, dimension) <= delta)

    low = max(1, math.floor(start * denominator / 4))
    while low > 1 and meets(Fraction(low, denominator)):
        low //= 2
    return smallest_grid_variance(meets, low, max(low + 1, math.ceil(start * denominator)), denominator)


def smallest_grid_variance(
    meets: Callable[[Fraction], bool], low: int, high: int, denominator: int, too_large: str = ""
) -> Fraction:
    """The smallest σ² = u/denominator (u > ``low``) for which ``meets(σ²)`` holds, ``meets`` monotone in σ².

    ``low`` fails (or lies below the grid's smallest value); ``high`` is the first guess, doubled until
    it meets (past 2⁶¹ units a ValueError with the message ``too_large``, when given), then bisection.
    On the integers (denominator 1) the result is raised to the sampler's exact form t·c with
    t = ⌊√(tc)⌋ (at most a relative 1/√n more) and re-checked rather than assumed monotone there.
    """
    while not meets(Fraction(high, denominator)):
        low, high = high, high * 2
        if too_large and high > 1 << 61:
            raise ValueError(too_large)
    while high - low > 1:
        middle = (low + high) // 2
        if meets(Fraction(middle, denominator)):
            high = middle
        else:
            low = middle
    if denominator == 1:
        while True:
            root = math.isqrt(high)
            high = root * -(-high // root)
            if meets(Fraction(high)):
                break
            high += 1
    return Fraction(high, denominator)
