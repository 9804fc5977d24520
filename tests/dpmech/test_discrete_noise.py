"""Discrete Laplace and discrete Gaussian: exact-probability tests of the samplers, the privacy profile at 50 digits."""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

import dpmech
from dpmech.discrete_gaussian import discrete_gaussian
from dpmech.discrete_gaussian_privacy import (
    calibrate_discrete_gaussian,
    discrete_gaussian_delta,
)
from dpmech.discrete_laplace import discrete_laplace
from tests.profiles import examples

DRAWS = 100_000
ALPHA = 1e-6


def discrete_gaussian_pmf(values, sigma_squared):
    sigma_squared = float(sigma_squared)
    width = int(40 * sigma_squared**0.5) + 50
    normaliser = np.exp(-np.arange(-width, width + 1) ** 2 / (2 * sigma_squared)).sum()
    return np.exp(-np.asarray(values, dtype=float) ** 2 / (2 * sigma_squared)) / normaliser


def discrete_laplace_pmf(values, scale):
    scale = float(scale)
    return np.tanh(1 / (2 * scale)) * np.exp(-np.abs(np.asarray(values, dtype=float)) / scale)


def assert_matches(draws, pmf):
    """Pearson chi-square over the central cells (expected count >= 20) plus one cell for the rest, at α = 1e-6."""
    values, counts = np.unique(draws, return_counts=True)
    low, high = values.min(), values.max()
    support = np.arange(low - 1, high + 2)
    expected = pmf(support) * draws.size
    central = expected >= 20
    observed = np.zeros(support.size)
    observed[values - support[0]] = counts
    cells_expected = np.append(expected[central], draws.size - expected[central].sum())
    cells_observed = np.append(observed[central], draws.size - observed[central].sum())
    assert stats.chisquare(cells_observed, cells_expected).pvalue > ALPHA


@pytest.mark.parametrize("scale", [Fraction(1, 3), 1, Fraction(7, 2), 40])
def test_discrete_laplace_matches_its_exact_probabilities(scale):
    draws, randomness = discrete_laplace(scale, DRAWS, rng=20260201)
    assert draws.dtype == np.int64 and "numpy-generator" in randomness
    assert_matches(draws, lambda x: discrete_laplace_pmf(x, scale))


@pytest.mark.parametrize("sigma_squared", [Fraction(1, 10), Fraction(9, 4), 1, 30, Fraction(40001, 4)])
def test_discrete_gaussian_matches_its_exact_probabilities(sigma_squared):
    draws, _ = discrete_gaussian(sigma_squared, DRAWS, rng=np.random.default_rng(20260202))
    assert_matches(draws, lambda x: discrete_gaussian_pmf(x, sigma_squared))


def test_seeded_draws_are_reproducible_and_the_os_source_is_stated():
    first, _ = discrete_gaussian(Fraction(5, 2), (3, 4), 7)
    second, _ = discrete_gaussian(Fraction(5, 2), (3, 4), np.random.default_rng(7))
    np.testing.assert_array_equal(first, second)
    assert first.shape == (3, 4)
    draws, randomness = discrete_gaussian(2, 1000, "os")
    assert randomness.startswith("os-csprng") and draws.shape == (1000,)


def reference_delta(epsilon, sigma_squared, sensitivity):
    """CKS 2020 Thm 7 at 50 digits: the tail sums of exp(−x²/(2σ²)) by mpmath over |x| <= 60σ + Δ + εσ²/Δ."""
    with mpmath.workdps(50):
        s2 = mpmath.mpf(sigma_squared.numerator) / sigma_squared.denominator
        e = mpmath.mpf(epsilon)
        width = int(60 * mpmath.sqrt(s2) + sensitivity + e * s2 / sensitivity) + 10
        weights = {x: mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * s2)) for x in range(-width, width + 1)}
        total = mpmath.fsum(weights.values())
        low = e * s2 / sensitivity - mpmath.mpf(sensitivity) / 2

        def above(c):
            return mpmath.fsum(w for x, w in weights.items() if x > c) / total

        return above(low) - mpmath.exp(e) * above(low + sensitivity), above(low) + mpmath.exp(e) * above(low + sensitivity)


@examples(0.2)
@given(
    st.floats(0.0, 8.0),
    st.fractions(Fraction(1, 16), Fraction(60), max_denominator=64),
    st.integers(1, 4),
)
def test_one_dimensional_profile_is_an_upper_bound_within_1e_minus_8_of_the_50_digit_reference(epsilon, sigma_squared, sensitivity):
    exact, scale = reference_delta(epsilon, sigma_squared, sensitivity)
    bound = discrete_gaussian_delta(epsilon, sigma_squared, sensitivity)
    assert bound >= exact
    # The documented accuracy: within 1e-8 of the two tails' sum (a relative 1e-8 unless they cancel).
    assert bound <= exact + 1e-8 * scale + 1e-300


@given(st.floats(0.0, 50.0), st.fractions(Fraction(1, 16), Fraction(2**32), max_denominator=64),
       st.integers(2**61, 10**30))
def test_a_sensitivity_beyond_64_bit_integers_is_answered_not_overflowed(epsilon, sigma_squared, sensitivity):
    # Δ >= 2⁶¹ against σ <= 2¹⁶: P[X > εσ²/Δ − Δ/2] is 1 to far below a double's resolution, the other tail 0.
    assert discrete_gaussian_delta(epsilon, sigma_squared, sensitivity) == 1.0
    # At ε = 1e308 the threshold εσ²/Δ − Δ/2 passes the largest double: both tails are 0.
    assert discrete_gaussian_delta(1e308, sigma_squared, sensitivity) == 5e-324
    with pytest.raises(ValueError, match="sensitivity"):
        dpmech.mechanisms.calibrate_discrete_gaussian(1.0, 1e-5, sensitivity)


@pytest.mark.parametrize("epsilon", [7.999999999999999, 8.0, 8.000000000000002])
def test_profile_thresholds_are_exact_where_a_double_would_round_across_an_integer(epsilon):
    # c = εσ²/Δ − Δ/2 = −2⁻⁵⁴ for the first ε: c + 1 rounds to 1.0 in doubles, which dropped the x = 1 term.
    exact, scale = reference_delta(epsilon, Fraction(1, 16), 1)
    bound = discrete_gaussian_delta(epsilon, Fraction(1, 16), 1)
    assert exact <= bound <= exact + 1e-8 * scale


def test_profile_differs_from_the_continuous_formula_at_small_sigma_and_agrees_at_large():
    small = discrete_gaussian_delta(1.0, Fraction(1, 4), 1)
    assert abs(small - dpmech.gaussian_delta(1.0, 0.5, 1.0)) > 0.05
    large = discrete_gaussian_delta(1.0, 400, 1)
    assert large == pytest.approx(dpmech.gaussian_delta(1.0, 20.0, 1.0), rel=1e-6)


@examples(0.2)
@given(st.floats(0.05, 5.0), st.floats(1e-10, 1e-2), st.integers(1, 5), st.sampled_from([1, 1, 8]))
def test_calibrated_sigma_squared_meets_delta_and_one_step_less_does_not(epsilon, delta, sensitivity, dimension):
    sigma_squared = calibrate_discrete_gaussian(epsilon, delta, sensitivity, dimension)
    assert sigma_squared.denominator <= 64
    assert discrete_gaussian_delta(epsilon, sigma_squared, sensitivity, dimension) <= delta
    if dimension == 1 and sigma_squared < 500:
        assert reference_delta(epsilon, sigma_squared, sensitivity)[0] <= delta
    # Below 2**12 the grid is 1/64; above, integers rounded up to t·c with t = ⌊√(tc)⌋ (less than t + 1 more).
    if sigma_squared.denominator > 1 or sigma_squared < 4096:
        smaller = sigma_squared - Fraction(1, 64)
    else:
        smaller = sigma_squared - math.isqrt(sigma_squared.numerator) - 2
        root = math.isqrt(sigma_squared.numerator)
        assert sigma_squared.numerator % root == 0  # the form the sampler needs for exact small integers
    if smaller > 0:
        assert discrete_gaussian_delta(epsilon, smaller, sensitivity, dimension) > delta


def test_multivariate_bound_is_at_least_the_one_dimensional_exact_value():
    # In one dimension the zCDP route must be looser than the tight Thm 7 value, never tighter.
    for epsilon in (0.1, 1.0, 3.0):
        for sigma_squared in (Fraction(1, 2), 4, 50):
            assert discrete_gaussian_delta(epsilon, sigma_squared, 1.0, dimension=2) >= discrete_gaussian_delta(
                epsilon, sigma_squared, 1
            )


BAD = [
    ("sigma_squared", lambda: discrete_gaussian(0, 3, 0)),
    ("sigma_squared", lambda: discrete_gaussian(0.1, 3, 0)),  # 0.1 is a fraction with denominator 2**55
    ("sigma_squared", lambda: discrete_gaussian(2**40 + 1, 3, 0)),  # no divisor near σ: D = 2σ²t² > 2**62
    ("size", lambda: discrete_gaussian(1, -1, 0)),
    ("rng", lambda: discrete_gaussian(1, 3, None)),
    ("scale", lambda: discrete_laplace(-1, 3, 0)),
    ("scale", lambda: discrete_laplace("2", 3, 0)),
    ("sensitivity", lambda: discrete_gaussian_delta(1.0, 1, 1.5)),
    ("epsilon", lambda: discrete_gaussian_delta(-1.0, 1, 1)),
    ("dimension", lambda: discrete_gaussian_delta(1.0, 1, 1, dimension=0)),
    ("delta", lambda: calibrate_discrete_gaussian(1.0, 0.0, 1)),
    # An exact integer beyond every double: once an OverflowError in the continuous starting point.
    ("sensitivity", lambda: calibrate_discrete_gaussian(1.0, 1e-5, 10**400)),
]


@pytest.mark.parametrize("parameter, call", BAD, ids=[f"{name}-{i}" for i, (name, _) in enumerate(BAD)])
def test_bad_input_names_the_parameter(parameter, call):
    with pytest.raises(ValueError, match=parameter):
        call()
