"""The distributed discrete Gaussian's accounting against the exact law of the enumerated sum."""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.special import logsumexp

from dpmech.discrete_gaussian_privacy import discrete_gaussian_delta
from dpmech.distributed_discrete_gaussian import (
    calibrate_distributed_discrete_gaussian,
    distributed_discrete_gaussian_epsilon,
    distributed_discrete_gaussian_event,
    distributed_discrete_gaussian_rdp,
    grid_share,
    share_noise_bound,
    sum_tau,
)
from tests.profiles import examples


def sum_pmf(sigma_squared: float, num_shares: int) -> np.ndarray:
    """P(Y = y) for y = −W..W of Y the sum of n N_Z(0, σ²), by convolving the enumerated pmf (float64)."""
    width = math.ceil(40 * math.sqrt(sigma_squared)) + 3
    support = np.arange(-width, width + 1, dtype=float)
    weights = np.exp(-support * support / (2 * sigma_squared))
    weights /= weights.sum()
    pmf = weights
    for _ in range(num_shares - 1):
        pmf = np.convolve(pmf, weights)
    return pmf


def float_renyi(pmf: np.ndarray, shift: int, order: float) -> float:
    """D_α(Y + k ‖ Y) = (1/(α−1)) log Σ_y P(y − k)^α P(y)^{1−α} (float64, log domain)."""
    shifted = np.concatenate([np.zeros(shift), pmf[:-shift]])
    mask = (pmf > 0) & (shifted > 0)
    return float(logsumexp(order * np.log(shifted[mask]) + (1 - order) * np.log(pmf[mask])) / (order - 1))


def exact_renyi(sigma_squared: Fraction, num_shares: int, shift: int, order: Fraction) -> mpmath.mpf:
    """The same divergence with 50 digits: the sum's pmf by exact convolution in mpmath."""
    with mpmath.workdps(50):
        width = math.ceil(40 * math.sqrt(sigma_squared)) + 3
        variance = mpmath.mpf(sigma_squared.numerator) / sigma_squared.denominator
        weights = [mpmath.exp(-mpmath.mpf(x * x) / (2 * variance)) for x in range(-width, width + 1)]
        total = mpmath.fsum(weights)
        weights = [w / total for w in weights]
        pmf = weights
        for _ in range(num_shares - 1):
            result = [mpmath.mpf(0)] * (len(pmf) + len(weights) - 1)
            for i, a in enumerate(pmf):
                for j, b in enumerate(weights):
                    result[i + j] += a * b
            pmf = result
        alpha = mpmath.mpf(order.numerator) / order.denominator
        terms = [pmf[y - shift] ** alpha * pmf[y] ** (1 - alpha) for y in range(shift, len(pmf))]
        return mpmath.log(mpmath.fsum(terms)) / (alpha - 1)


@pytest.mark.parametrize("sigma_squared, num_shares, shift, order", [
    (Fraction(1, 4), 1, 1, Fraction(2)),     # one discrete Gaussian: the bound is attained (CKS 2020)
    (Fraction(1, 4), 2, 1, Fraction(3, 2)),  # σ = 1/2, the smallest allowed: τ ≈ 2.9 matters
    (Fraction(1, 4), 3, 2, Fraction(4)),
    (Fraction(1, 2), 3, 1, Fraction(8)),
    (Fraction(3, 4), 2, 3, Fraction(11, 10)),
])
def test_rdp_bound_holds_against_the_50_digit_divergence_of_the_sum(sigma_squared, num_shares, shift, order):
    exact = exact_renyi(sigma_squared, num_shares, shift, order)
    bound = distributed_discrete_gaussian_rdp(float(order), sigma_squared, num_shares, shift, 1)
    assert exact <= mpmath.mpf(bound)


@examples(0.3)
@given(st.integers(16, 256), st.integers(1, 6), st.integers(1, 4), st.floats(1.01, 20.0))
def test_rdp_bound_holds_for_every_shift_share_count_and_order(units, num_shares, shift, order):
    # σ² = units/64 in [1/4, 4]; float64 reference, allowed 1e-12 of its own rounding (one share attains the bound).
    sigma_squared = Fraction(units, 64)
    # The divergence's mass sits near y = αk; the float reference needs the pmf there (and 4 std beyond)
    # above the subnormal doubles, whose lost digits would be raised to the power 1 − α.
    variance = num_shares * float(sigma_squared)
    assume((order * shift + 4 * math.sqrt(variance)) ** 2 / (2 * variance) < 650)
    divergence = float_renyi(sum_pmf(float(sigma_squared), num_shares), shift, order)
    assert divergence <= distributed_discrete_gaussian_rdp(order, sigma_squared, num_shares, shift, 1) + 1e-12


def test_multidimensional_curve_adds_tau_per_coordinate():
    one = distributed_discrete_gaussian_rdp(2.0, Fraction(1, 4), 3, 1.0, 1)
    many = distributed_discrete_gaussian_rdp(2.0, Fraction(1, 4), 3, 1.0, 10)
    assert many - one == pytest.approx(9 * sum_tau(Fraction(1, 4), 3), rel=1e-9)


def test_one_share_is_never_below_the_discrete_gaussians_tight_profile():
    # With n = 1 the sum is one discrete Gaussian, whose exact δ(ε) (CKS Thm 7) must be met at the RDP ε.
    for sigma_squared in (Fraction(1, 2), Fraction(9, 4), Fraction(40)):
        for delta in (1e-3, 1e-6):
            epsilon = distributed_discrete_gaussian_epsilon(delta, sigma_squared, 1, 1, 1)
            assert discrete_gaussian_delta(epsilon, sigma_squared, 1) <= delta


@given(st.integers(1, 20), st.floats(1.0, 1e4), st.integers(1, 1000), st.floats(1e-10, 1e-2), st.floats(3.0, 50.0))
def test_with_wide_shares_it_is_the_rdp_route_gaussian_of_the_summed_variance(num_shares, sensitivity, dimension,
                                                                             delta, noise_multiple):
    # For σ >= 3 τ is below e^-88: the sum behaves as a Gaussian of variance nσ², whose RDP-route ε
    # (optimised over every order) it may not beat and should match to the order grid's resolution.
    from dpmech.conversions.renyi import gaussian_rdp_epsilon

    sigma_squared = Fraction(max(9, math.ceil((noise_multiple * sensitivity) ** 2 / num_shares)))
    ours = distributed_discrete_gaussian_epsilon(delta, sigma_squared, num_shares, sensitivity, dimension)
    gaussian = gaussian_rdp_epsilon(delta, math.sqrt(num_shares * sigma_squared), sensitivity)
    assert gaussian * (1 - 1e-9) <= ours <= gaussian * 1.001 + 1e-12


def test_tau_is_the_sum_of_its_terms_and_bounded_for_many_shares():
    sigma_squared = Fraction(1, 2)
    expected = 10 * sum(math.exp(-2 * math.pi**2 * 0.5 * k / (k + 1)) for k in range(1, 7))
    assert sum_tau(sigma_squared, 7) == pytest.approx(expected, rel=2e-9)
    assert sum_tau(sigma_squared, 7) >= expected
    assert sum_tau(sigma_squared, 1) == 0.0
    assert sum_tau(Fraction(10**6), 3) > 0.0  # underflowing terms still give a positive τ
    # Past 2**20 terms the rest is bounded, never dropped: every term is at least exp(−2π²σ²).
    many = 2**21
    assert sum_tau(sigma_squared, many) >= 10 * (many - 1) * math.exp(-2 * math.pi**2 * 0.5)


@pytest.mark.parametrize("epsilon, delta, sensitivity, num_shares, dimension", [
    (1.0, 1e-5, 3.0, 4, 5),
    (0.5, 1e-6, 1.0, 1, 1),
    (2.0, 1e-5, 5000.0, 5, 650),
])
def test_calibration_meets_the_target_and_is_the_smallest_on_its_grid(epsilon, delta, sensitivity, num_shares,
                                                                      dimension):
    sigma_squared = calibrate_distributed_discrete_gaussian(epsilon, delta, sensitivity, num_shares, dimension)
    assert distributed_discrete_gaussian_epsilon(delta, sigma_squared, num_shares, sensitivity, dimension) <= epsilon
    if sigma_squared.denominator == 64:
        smaller = sigma_squared - Fraction(1, 64)
        assert smaller < Fraction(1, 4) or distributed_discrete_gaussian_epsilon(
            delta, smaller, num_shares, sensitivity, dimension) > epsilon
    else:
        assert distributed_discrete_gaussian_epsilon(
            delta, sigma_squared * Fraction(999, 1000), num_shares, sensitivity, dimension) > epsilon


def test_fewer_honest_shares_cost_more_epsilon():
    sigma_squared = calibrate_distributed_discrete_gaussian(1.0, 1e-5, 5000.0, 5, 650)
    epsilons = [distributed_discrete_gaussian_epsilon(1e-5, sigma_squared, h, 5000.0, 650) for h in (5, 4, 3, 2, 1)]
    assert epsilons[0] <= 1.0
    assert all(a < b for a, b in zip(epsilons, epsilons[1:]))


def test_share_noise_bound_covers_the_exact_tail():
    for sigma_squared, dimension, failure in ((Fraction(1, 4), 1, 1e-3), (Fraction(9), 100, 1e-6), (Fraction(400), 7, 1e-9)):
        bound = share_noise_bound(sigma_squared, dimension, failure)
        pmf = sum_pmf(float(sigma_squared), 1)
        centre = (pmf.size - 1) // 2
        outside = 2 * pmf[centre + bound + 1:].sum()
        assert dimension * outside <= failure
        assert bound >= 1


@given(st.integers(16, 6400), st.floats(0.5, 12.0))
def test_the_discrete_gaussian_tail_is_subgaussian(units, multiple):
    # P[|X| >= λ] <= 2·exp(−λ²/(2σ²)), the bound share_noise_bound rests on, against the enumerated law.
    sigma_squared = units / 64
    pmf = sum_pmf(sigma_squared, 1)
    centre = (pmf.size - 1) // 2
    threshold = math.ceil(multiple * math.sqrt(sigma_squared))
    tail = 2 * pmf[centre + threshold:].sum()
    assert tail <= 2 * math.exp(-threshold**2 / (2 * sigma_squared)) * (1 + 1e-9)


def test_grid_share_rounds_to_nearest_and_adds_integer_noise():
    values = np.array([0.26, -0.74, 1.0, 0.0])
    share, randomness = grid_share(values, 0.5, Fraction(100), np.random.default_rng(3))
    assert share.dtype == np.int64
    assert "pseudo-random" in randomness
    noise = share - np.rint(values / 0.5).astype(np.int64)
    assert np.all(np.abs(noise) < 100)
    again, _ = grid_share(values, 0.5, Fraction(100), np.random.default_rng(3))
    np.testing.assert_array_equal(share, again)


def test_event_names_the_mechanism_and_holds_its_epsilon():
    event = distributed_discrete_gaussian_event(1e-5, Fraction(81821070), 5, 5000.0, 650, description="randomness: os")
    assert event.epsilon == distributed_discrete_gaussian_epsilon(1e-5, Fraction(81821070), 5, 5000.0, 650)
    assert "5 honest shares" in event.description and "randomness: os" in event.description


@pytest.mark.parametrize("call, name", [
    (lambda: distributed_discrete_gaussian_rdp(2.0, Fraction(1, 5), 2, 1.0, 1), "sigma_squared"),
    (lambda: distributed_discrete_gaussian_rdp(0.5, 1, 2, 1.0, 1), "orders"),
    (lambda: distributed_discrete_gaussian_rdp(2.0, 1, 0, 1.0, 1), "num_shares"),
    (lambda: distributed_discrete_gaussian_rdp(2.0, 1, 2, -1.0, 1), "sensitivity"),
    (lambda: distributed_discrete_gaussian_rdp(2.0, 1, 2, 1.0, 0), "dimension"),
    (lambda: distributed_discrete_gaussian_epsilon(1.0, 1, 2, 1.0, 1), "delta"),
    (lambda: calibrate_distributed_discrete_gaussian(0.0, 1e-5, 1.0, 2, 1), "epsilon"),
    (lambda: share_noise_bound(1, 1, 0.0), "failure_probability"),
    (lambda: grid_share([np.nan], 1.0, 1, 0), "values"),
    (lambda: grid_share([1.0], 1.0, 1, None), "rng"),
])
def test_bad_input_is_refused_naming_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
