r"""The distributed discrete Gaussian: n users each add N_Z(0, σ²) to an integer vector; only the sum is released.

Kairouz, Liu & Steinke, "The Distributed Discrete Gaussian Mechanism for Federated Learning
with Secure Aggregation", ICML 2021 (arXiv:2102.06387). The sum of n discrete Gaussians is not a
discrete Gaussian, so the discrete Gaussian's own profile (:mod:`dpmech.discrete_gaussian_privacy`)
does not apply to it; what is proven:

* Proposition 14 (KLS 2021). Let σ >= 1/2, X_1, ..., X_n independent N_Z(0, σ²)^d and
  Y = X_1 + ... + X_n. With τ = 10·Σ_{k=1}^{n−1} exp(−2π²σ²·k/(k+1)), for every integer shift
  Δ ∈ Z^d and every order α >= 1,
  D_α(Y + Δ ‖ Y) <= α‖Δ‖₂²/(2nσ²) + τ·d.
  (Per coordinate the bound is αk²/(2nσ²) + τ for every integer k, and Rényi divergences of
  independent coordinates add; for n = 1, τ = 0 and this is CKS 2020's zCDP bound.) Y is
  symmetric, so the same bound holds in the other order: the mechanism q(D) + Y is
  (α, r(α))-RDP with r(α) = α·Δ₂²/(2nσ²) + τd for every integer-valued q with
  ‖q(D) − q(D')‖₂ <= Δ₂ over neighbours (the caller's relation), and
  :func:`dpmech.conversions.renyi.rdp_epsilon` turns the curve into (ε, δ)
  (CKS 2020 Prop. 12, minimised over a grid of orders; every order is valid).
  ``tests/dpmech/test_distributed_discrete_gaussian.py`` checks the one-dimensional bound against
  the exact Rényi divergence of the enumerated sum (50 digits), so a wrong constant fails there.
* Honest shares. Shares of dishonest users may be absent or known to the server: only the
  h honest shares count, n = h (post-processing removes the rest).
* Rounding. The users' real vectors f are mapped to the grid γZ^d by rounding to the nearest grid
  point, a deterministic part of the mechanism; each coordinate moves by at most γ/2, so
  ‖round(f(D)/γ) − round(f(D')/γ)‖₂ <= Δ/γ + √d (the bound of
  :func:`dpmech.output_perturbation.rounded_grid_sensitivity`, rounded up). Other users' rounded
  vectors do not depend on the differing record and are post-processing.
* Tail (for a modular range). N_Z(0, σ²) is σ²-subgaussian, E[e^{tX}] <= e^{t²σ²/2}
  (CKS 2020, §2: the discrete Gaussian's moment generating function is at most the continuous
  one's), so P[|X| >= λ] <= 2·exp(−λ²/(2σ²)) and a union bound over d coordinates
  gives :func:`share_noise_bound`.

Every number returned rounds toward more privacy loss: Δ₂²/(nσ²) is computed in rational
arithmetic and rounded up, τ is raised by a relative 1e-9 (far above the rounding of its
terms) and kept positive, and the curve by a relative 1e-12.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import validation as check
from .calibration import calibrate_gaussian
from .conversions.renyi import rdp_epsilon
from .discrete_gaussian import sample_discrete_gaussian, validated_sigma_squared
from .discrete_gaussian_privacy import smallest_grid_variance
from .discrete_laplace import RationalInput, rational
from .events import ApproximateDpEvent, _check_relation
from .random_bits import RngChoice, random_source

# KLS 2021 Prop. 14 needs σ >= 1/2.
MIN_SIGMA_SQUARED = Fraction(1, 4)
# τ sums this many terms exactly; the rest is bounded by the last of them (the terms decrease).
_EXACT_TAU_SHARES = 1 << 20
_ORDERS = 1.0 + np.geomspace(1e-4, 1e5, 3000)
_SMALLEST = 5e-324
# σ² is calibrated on (1/64)·Z below 2**12 and on the integers t·c with t = ⌊√(tc)⌋ above: both keep
# the sampler's acceptance denominator small (dpmech.discrete_gaussian).
_DENOMINATOR = 64
_INTEGER_FROM = 1 << 12


def _validated(
    sigma_squared: RationalInput, num_shares: int, sensitivity: float, dimension: int
) -> tuple[Fraction, int, float, int]:
    sigma_squared = rational("sigma_squared", sigma_squared)
    if sigma_squared < MIN_SIGMA_SQUARED:
        raise ValueError(f"sigma_squared must be >= 1/4 (σ >= 1/2, KLS 2021 Prop. 14; got {sigma_squared})")
    num_shares = check.integer_scalar("num_shares", num_shares, 1)
    sensitivity = check.positive("sensitivity", sensitivity)
    if np.ndim(sensitivity):
        raise ValueError("sensitivity must be a single finite number > 0 in grid units (got an array)")
    dimension = check.integer_scalar("dimension", dimension, 1)
    return sigma_squared, num_shares, float(sensitivity), dimension


def sum_tau(sigma_squared: RationalInput, num_shares: int) -> float:
    """τ = 10·Σ_{k=1}^{n−1} exp(−2π²σ²k/(k+1)) of KLS 2021 (0 for n = 1), rounded up and positive for n >= 2.

    The terms decrease in k; beyond k = 2²⁰ they are bounded by the 2²⁰-th term.
    """
    sigma_squared = rational("sigma_squared", sigma_squared)
    num_shares = check.integer_scalar("num_shares", num_shares, 1)
    if num_shares == 1:
        return 0.0
    scale = 2.0 * math.pi**2 * float(sigma_squared)
    # The terms decrease in k (k/(k+1) grows): past 2²⁰ terms the rest is at most their count times the last.
    exact_terms = min(num_shares - 1, _EXACT_TAU_SHARES)
    k = np.arange(1, exact_terms + 1, dtype=float)
    terms = np.exp(-scale * k / (k + 1.0))
    total = float(np.sum(terms)) + (num_shares - 1 - exact_terms) * float(terms[-1])
    return max(10.0 * total * (1.0 + 1e-9), _SMALLEST)


def distributed_discrete_gaussian_rdp(
    orders: ArrayLike, sigma_squared: RationalInput, num_shares: int, sensitivity: float, dimension: int
) -> float | NDArray[np.float64]:
    """r(α) = α·Δ₂²/(2nσ²) + τd, an upper bound on the Rényi divergence of order α (KLS 2021 Prop. 14).

    Args:
        orders: α >= 1, a number or an array.
        sigma_squared: σ² >= 1/4 of each share, in grid units² (a rational).
        num_shares: n >= 1, the honest shares in the sum.
        sensitivity: Δ₂ > 0, the L2 sensitivity of the summed integer vectors, in grid units.
        dimension: d >= 1.
    """
    orders = check.real_array("orders", orders)
    if np.any(np.isnan(orders) | (orders < 1.0) | np.isinf(orders)):
        raise ValueError("orders must be finite real numbers >= 1")
    sigma_squared, num_shares, sensitivity, dimension = _validated(sigma_squared, num_shares, sensitivity, dimension)
    ratio = Fraction(sensitivity) ** 2 / (num_shares * sigma_squared)
    half_ratio = math.nextafter(float(ratio / 2), math.inf)
    floor = sum_tau(sigma_squared, num_shares) * dimension
    with np.errstate(over="ignore"):
        curve = (orders * half_ratio + floor) * (1.0 + 1e-12)
    return check.scalar_or_array(curve)


def distributed_discrete_gaussian_epsilon(
    delta: float, sigma_squared: RationalInput, num_shares: int, sensitivity: float, dimension: int
) -> float:
    """An upper bound on ε at δ of q(D) + Y, Y the sum of n N_Z(0, σ²)^d (module docstring)."""
    delta = check.open_unit_interval("delta", delta)
    if np.ndim(delta):
        raise ValueError("delta must be a single number in (0, 1) (got an array)")
    curve = distributed_discrete_gaussian_rdp(_ORDERS, sigma_squared, num_shares, sensitivity, dimension)
    return rdp_epsilon(float(delta), _ORDERS, curve)[0]


def calibrate_distributed_discrete_gaussian(
    epsilon: float, delta: float, sensitivity: float, num_shares: int, dimension: int
) -> Fraction:
    """The smallest σ² of each share, on the sampler's grid (see ``_DENOMINATOR``), whose sum of n meets (ε, δ).

    Never under-noised: :func:`distributed_discrete_gaussian_epsilon` of the result is <= ε. The bound
    decreases in σ² (both terms of r(α) do), so the bisection is valid; the result is re-checked.
    """
    epsilon, delta = check.target_epsilon_delta(epsilon, delta)
    _, num_shares, sensitivity, dimension = _validated(1, num_shares, sensitivity, dimension)

    def meets(value: Fraction) -> bool:
        return distributed_discrete_gaussian_epsilon(delta, value, num_shares, sensitivity, dimension) <= epsilon

    # The sum of n shares has variance about nσ²; the continuous Gaussian's σ for the sum is a start.
    start = max(calibrate_gaussian(epsilon, delta, sensitivity) ** 2 / num_shares, 0.25)
    denominator = _DENOMINATOR if start < _INTEGER_FROM else 1
    minimum = denominator // 4 if denominator > 1 else 1  # σ² = 1/4, or 1 on the integers
    # Invariant: σ² = low/denominator fails (or low is below the minimum, never tried); high meets.
    low = max(minimum - 1, math.floor(start * denominator / 4))
    if low >= minimum and meets(Fraction(low, denominator)):
        low = minimum - 1
    result = smallest_grid_variance(
        meets, low, max(low + 1, math.ceil(start * denominator)), denominator,
        too_large=f"epsilon = {epsilon!r} at delta = {delta!r} needs σ² beyond 2**61 grid units² per share; "
                  "use a coarser granularity")
    validated_sigma_squared(result)
    return result


def distributed_discrete_gaussian_event(
    delta: float,
    sigma_squared: RationalInput,
    num_shares: int,
    sensitivity: float,
    dimension: int,
    neighbouring: str | None = None,
    description: str = "",
) -> ApproximateDpEvent:
    """The ledger event of one released sum: (ε, δ) with ε = :func:`distributed_discrete_gaussian_epsilon`."""
    _check_relation(neighbouring)
    epsilon = distributed_discrete_gaussian_epsilon(delta, sigma_squared, num_shares, sensitivity, dimension)
    sigma_squared = rational("sigma_squared", sigma_squared)
    text = (f"distributed discrete Gaussian: sum of {num_shares} honest shares N_Z(0, {sigma_squared})^{dimension} "
            f"against L2 sensitivity {sensitivity!r} grid units (KLS 2021 Prop. 14)")
    return ApproximateDpEvent(epsilon, float(delta), neighbouring=neighbouring,
                              description=f"{text}; {description}" if description else text)


def share_noise_bound(sigma_squared: RationalInput, dimension: int, failure_probability: float) -> int:
    """An integer λ with P[max_i |X_i| > λ] <= p for X ~ N_Z(0, σ²)^d: λ >= σ·√(2 ln(2d/p)) (subgaussian tail).

    Used to choose a modular range that a noisy share leaves with probability at most p.
    """
    sigma_squared = rational("sigma_squared", sigma_squared)
    dimension = check.integer_scalar("dimension", dimension, 1)
    failure = float(check.open_unit_interval("failure_probability", failure_probability))
    needed = math.sqrt(2.0 * float(sigma_squared) * math.log(2.0 * dimension / failure)) * (1.0 + 1e-9)
    return math.ceil(needed)


def grid_share(
    values: ArrayLike, granularity: float, sigma_squared: RationalInput, rng: RngChoice
) -> tuple[NDArray[np.int64], str]:
    """One user's share on the grid: round(values/γ) + N_Z(0, σ²) per coordinate, as int64 grid units.

    Args:
        values: finite array f (any shape), within 2⁵² grid steps of 0.
        granularity: γ > 0.
        sigma_squared: σ² >= 1/4 in grid units² (a rational the sampler accepts).
        rng: ``"os"`` (OS CSPRNG, for real releases), a ``numpy.random.Generator`` or an integer seed.

    Returns:
        (share, randomness): the int64 array and the description of the randomness source.
    """
    array = check.real_array("values", values, "a finite real number or array")
    if not np.all(np.isfinite(array)):
        raise ValueError("values must be finite (got NaN or infinity)")
    granularity = check.positive("granularity", granularity)
    if np.ndim(granularity):
        raise ValueError("granularity must be a single finite number > 0 (got an array)")
    sigma_squared = validated_sigma_squared(sigma_squared)
    if sigma_squared < MIN_SIGMA_SQUARED:
        raise ValueError(f"sigma_squared must be >= 1/4 (got {sigma_squared})")
    grid_values = np.rint(array / float(granularity))
    if not np.all(np.abs(grid_values) < 2.0**52):
        raise ValueError(f"values must be within 2**52 grid steps of 0 (granularity {float(granularity)!r})")
    source = random_source(rng)
    noise = sample_discrete_gaussian(sigma_squared, array.size, source).reshape(array.shape)
    return grid_values.astype(np.int64) + noise, source.description
