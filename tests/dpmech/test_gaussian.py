"""The tight Gaussian profile δ(ε), log δ(ε) and its inverse ε(δ)."""

import math

import mpmath
import numpy as np
import pytest
from dp_accounting import gaussian_mechanism
from dp_accounting.pld import privacy_loss_mechanism
from hypothesis import given
from hypothesis import strategies as st

from dpmech import calibrate_gaussian, gaussian_delta, gaussian_epsilon, gaussian_log_delta
from dpmech import high_precision as reference
from dpmech.gaussian import _log_delta_and_error

epsilons = st.floats(0.0, 1000.0)
mus = st.floats(1e-4, 1e3)


def _check_against_reference(epsilon, mu):
    """Our log δ is an upper bound on the 50-digit one, and above it by little."""
    exact = reference.delta(epsilon, mu)
    ours = gaussian_log_delta(epsilon, 1.0, mu)
    exact_log = mpmath.log(exact)
    assert ours >= exact_log, (epsilon, mu)
    assert ours - exact_log <= 3e-11 + 1e-13 * abs(exact_log), (epsilon, mu)


@given(epsilons, mus)
def test_log_delta_matches_50_digit_reference(epsilon, mu):
    _check_against_reference(epsilon, mu)


@pytest.mark.parametrize("epsilon", [0.0, 1e-6, 1e-3, 0.5, 1.0, 10.0, 100.0, 1000.0])
@pytest.mark.parametrize("mu", [1e-4, 0.01, 0.1414, 0.1415, 0.7, 1.0, 5.0, 40.0, 60.0, 1000.0])
def test_delta_on_a_grid_across_every_numerical_regime(epsilon, mu):
    _check_against_reference(epsilon, mu)


def test_delta_down_to_1e_300_and_log_delta_below():
    # ε = 1000 at the σ that gives δ = 1e-300, then a point with δ ≈ 1e-8500, which no double holds.
    sigma = calibrate_gaussian(1000.0, 1e-300)
    assert gaussian_delta(1000.0, sigma) <= 1e-300
    assert gaussian_delta(1000.0, sigma) == pytest.approx(1e-300, rel=1e-9)
    _check_against_reference(1000.0, 1.0 / sigma)
    log_delta = gaussian_log_delta(1000.0, 1.0, 5.0)
    assert log_delta < -19_000
    assert abs(log_delta / float(mpmath.log(reference.delta(1000.0, 5.0))) - 1) < 1e-12


def test_agrees_with_dp_accounting_gaussian_privacy_loss():
    epsilons = np.linspace(0.0, 10.0, 1000)
    ours = gaussian_delta(epsilons, 1.0)
    theirs = privacy_loss_mechanism.GaussianPrivacyLoss(1.0).get_delta_for_epsilon(epsilons)
    # Ours is an upper bound carrying its error margin (relative 1e-11 here).
    np.testing.assert_allclose(ours, theirs, rtol=3e-11)


@given(st.floats(0.0, 50.0), st.floats(0.0, 50.0), st.floats(0.05, 50.0))
def test_delta_decreases_in_epsilon(first, second, sigma):
    low, high = sorted((first, second))
    assert gaussian_delta(high, sigma) <= gaussian_delta(low, sigma)


@given(st.floats(0.0, 50.0), st.floats(0.05, 50.0), st.floats(0.05, 50.0))
def test_delta_decreases_in_sigma(epsilon, first, second):
    low, high = sorted((first, second))
    assert gaussian_log_delta(epsilon, high) <= gaussian_log_delta(epsilon, low)


@given(st.floats(0.0, 100.0), st.floats(0.1, 100.0), st.floats(0.01, 10.0), st.integers(1, 10_000))
def test_k_compositions_equal_one_release_with_sensitivity_root_k(epsilon, sigma, sensitivity, count):
    composed = gaussian_log_delta(epsilon, sigma, sensitivity, count)
    merged = gaussian_log_delta(epsilon, sigma, sensitivity * math.sqrt(count))
    assert composed == pytest.approx(merged, rel=1e-12, abs=1e-300)


def test_broadcasting_over_every_argument():
    epsilon = np.array([0.5, 1.0, 2.0])[:, None, None]
    sigma = np.array([1.0, 2.0])[None, :, None]
    sensitivity = np.array([1.0, 0.5, 0.25, 2.0])[None, None, :]
    result = gaussian_delta(epsilon, sigma, sensitivity, compositions=np.array([1, 4, 9, 16]))
    assert result.shape == (3, 2, 4)
    assert result[1, 1, 2] == pytest.approx(gaussian_delta(1.0, 2.0, 0.25, 9), rel=1e-14)
    assert isinstance(gaussian_delta(1.0, 2.0), float)


def test_delta_at_zero_epsilon_is_total_variation():
    mu = 1.3
    total_variation = math.erf(mu / (2 * math.sqrt(2)))
    assert total_variation <= gaussian_delta(0.0, 1.0 / mu) <= total_variation * (1 + 3e-11)


@given(st.floats(1e-12, 0.4), st.floats(0.02, 200.0), st.integers(1, 1000))
def test_epsilon_is_never_below_the_exact_one(delta, sigma, count):
    epsilon = gaussian_epsilon(delta, sigma, compositions=count)
    mu = math.sqrt(count) / sigma
    achieved = reference.delta(epsilon, mu)
    assert achieved <= delta
    if epsilon > 0:
        # and tight: the only slack is the evaluation's error bound (about 1e-11 here) and the aim past it
        _, error = _log_delta_and_error(np.array([epsilon]), np.array([mu]))
        assert achieved >= delta * (1 - 3e-11 - 2 * error[0])


def test_epsilon_is_zero_when_total_variation_is_already_below_delta():
    assert gaussian_epsilon(0.5, 10.0) == 0.0


@pytest.mark.parametrize("sigma,count,expected", [(1.0, 1000, 633.92985), (20.0, 1000, 7.5112759)])
def test_epsilon_of_1000_composed_gaussians_matches_the_anchor(sigma, count, expected):
    assert gaussian_epsilon(1e-5, sigma, compositions=count) == pytest.approx(expected, rel=1e-7)


@given(st.floats(1e-10, 0.3), st.floats(0.3, 30.0))
def test_epsilon_agrees_with_dp_accounting(delta, sigma):
    ours = gaussian_epsilon(delta, sigma)
    theirs = gaussian_mechanism.get_epsilon_gaussian(sigma, delta)
    assert ours == pytest.approx(theirs, rel=1e-6, abs=1e-9)


def test_vectorised_epsilon_equals_scalar_calls():
    # The scalar call takes a quick path of its own; both stop just past the target on the same upper bound of δ,
    # whose error (~3e-11 relative) sets how closely they agree (numpy 2.4.6 / scipy 1.17.1: 2.5e-12 at index 47).
    deltas = np.logspace(-12, -1, 50)
    sigmas = np.linspace(0.3, 8.0, 50)
    vector = gaussian_epsilon(deltas, sigmas)
    scalar = [gaussian_epsilon(float(d), float(s)) for d, s in zip(deltas, sigmas)]
    np.testing.assert_allclose(vector, scalar, rtol=1e-10)
    for delta, sigma, ours in zip(deltas, sigmas, np.column_stack([vector, scalar])):
        assert all(reference.delta(float(epsilon), 1.0 / sigma) <= delta for epsilon in ours)
