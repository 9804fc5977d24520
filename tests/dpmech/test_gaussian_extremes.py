"""The Gaussian core at the extremes: every answer on the safe side of the exact one, or a ValueError naming a parameter.

References are :func:`dpmech.high_precision.log_delta` (50 significant digits,
with the working precision raised by the cancellation at hand), so the checks
hold for μ from subnormal to 1e300, ε up to 1e308 and δ far below 1e-308.
"""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpmech import calibrate_gaussian, gaussian_delta, gaussian_epsilon, gaussian_log_delta, split_gaussian_budget
from dpmech import high_precision as reference
from dpmech.gaussian import LOG_DELTA_FLOOR, _log_delta_and_error
from tests.profiles import examples


def _powers(low, high):
    return st.floats(low, high).map(lambda exponent: 10.0**exponent)


epsilons = st.one_of(st.just(0.0), _powers(-320.0, 308.0), st.sampled_from([5e-324, 1.7976931348623157e308]))
mus = st.one_of(_powers(-323.0, 308.0), st.sampled_from([5e-324, 1e4, 1e5, 1e20, 1.7976931348623157e308]))
sigmas = st.one_of(_powers(-320.0, 308.0), st.sampled_from([5e-324, 1.7976931348623157e308]))
sensitivities = st.one_of(_powers(-323.0, 308.0), st.sampled_from([5e-324, 1.0]))
counts = st.one_of(st.integers(1, 10_000), st.integers(1, 10**400), st.sampled_from([2**53 + 1, 10**400]))
deltas = st.one_of(_powers(-320.0, math.log10(0.9999)), st.sampled_from([5e-324, 1e-300, 1e-5, 0.5, 0.9999999999999999]))


def _is_tight(ours, exact_log, epsilon, mu):
    """ours exceeds the exact log δ by at most twice the error bound of the evaluation at (ε, μ)."""
    log_delta, error = _log_delta_and_error(np.array([float(epsilon)]), np.array([float(mu)]))
    if not np.isfinite(log_delta[0]) or ours in (0.0, LOG_DELTA_FLOOR) or mu < 2.2250738585072014e-308:
        # The floor or the trivial bound log δ <= 0, used only where nothing tighter is proven; or a
        # subnormal μ, which rounds upward by a whole (coarse) ulp.
        return True
    return ours - exact_log <= 2 * error[0] + 1e-13 * abs(exact_log) + 1e-12


@examples(0.5)
@given(epsilons, mus)
def test_log_delta_is_an_upper_bound_at_every_scale(epsilon, mu):
    ours = gaussian_log_delta(epsilon, 1.0, mu)
    exact = reference.log_delta(epsilon, mu)
    assert math.isfinite(ours)
    assert ours >= exact, (epsilon, mu, ours, exact)
    assert _is_tight(ours, exact, epsilon, mu), (epsilon, mu, ours, exact)


@examples(0.5)
@given(epsilons, sigmas, sensitivities, counts)
def test_delta_from_sigma_sensitivity_and_compositions_is_never_below_the_truth(epsilon, sigma, sensitivity, count):
    # μ = Δ√k/σ rounds; the old code formed it to nearest and was below the truth at about half of all points.
    exact = reference.log_delta_of_noise(epsilon, sigma, sensitivity, count)
    log_delta = gaussian_log_delta(epsilon, sigma, sensitivity, count)
    delta = gaussian_delta(epsilon, sigma, sensitivity, count)
    assert math.isfinite(log_delta) and log_delta >= exact
    assert 0.0 < delta <= 1.0 and mpmath.log(delta) >= exact


@pytest.mark.parametrize("sigma,sensitivity,count", [(1.0, 1.0, 3), (3.0, 0.7, 7), (0.37, 1.3, 11), (5.0, 2.0, 1000)])
def test_mu_formed_from_sigma_sensitivity_and_compositions_rounds_upward(sigma, sensitivity, count):
    # The bug report's case: on main these points had δ below the truth by up to 1.8e-11 relative.
    for epsilon in np.linspace(0.0, 30.0, 40):
        exact = reference.log_delta_of_noise(float(epsilon), sigma, sensitivity, count)
        assert gaussian_log_delta(float(epsilon), sigma, sensitivity, count) >= exact


@examples(0.5)
@given(deltas, _powers(-300.0, 154.0))
def test_epsilon_is_never_below_the_exact_one_at_every_scale(delta, mu):
    epsilon = gaussian_epsilon(delta, 1.0, mu)
    assert math.isfinite(epsilon) and epsilon >= 0.0
    assert reference.log_delta(epsilon, mu) <= mpmath.log(delta)


@examples(0.5)
@given(_powers(-320.0, 308.0), deltas, sensitivities, counts)
def test_calibrated_sigma_is_never_below_the_exact_one_at_every_scale(epsilon, delta, sensitivity, count):
    try:
        sigma = calibrate_gaussian(epsilon, delta, sensitivity, count)
    except ValueError as error:
        # Only where σ has no double: a huge Δ√k over a tiny ε.
        assert "epsilon" in str(error)
        assert sensitivity * math.sqrt(float(min(count, 10**300))) / epsilon > 1e300 or count > 10**300
        return
    assert math.isfinite(sigma) and sigma > 0.0
    assert reference.log_delta_of_noise(epsilon, sigma, sensitivity, count) <= mpmath.log(delta)
    assert gaussian_delta(epsilon, sigma, sensitivity, count) <= delta


def test_epsilon_beyond_the_largest_double_is_refused_naming_sigma():
    with pytest.raises(ValueError, match="sigma"):
        gaussian_epsilon(1e-5, 1e-160)
    with pytest.raises(ValueError, match="sigma"):
        gaussian_epsilon(1e-5, 1.0, 1e300)


@pytest.mark.parametrize(
    "call",
    [
        # Each raised ZeroDivisionError, ArithmeticError, OverflowError, "math domain error" or returned NaN on main.
        lambda: calibrate_gaussian(np.array([1.0, 1e-16]), 1e-5),
        lambda: calibrate_gaussian(1e-17, 1e-5),
        lambda: calibrate_gaussian(1e-300, 1e-5),
        lambda: calibrate_gaussian(1e308, 1e-5),
        lambda: calibrate_gaussian(1.0, 1e-5, compositions=10**400),
        lambda: gaussian_delta(1e20, 1.0),
        lambda: gaussian_log_delta(1e308, 1.0),
        lambda: gaussian_epsilon(1e-5, 1e-20),
        lambda: gaussian_epsilon(1e-5, 1e-150),
        lambda: gaussian_delta(1.0, 1.0, 5e-324),
    ],
)
def test_former_crashes_now_give_sound_finite_answers(call):
    result = np.asarray(call())
    assert result.dtype == float and np.all(np.isfinite(result))


def test_former_crashes_checked_against_the_reference():
    sigma = calibrate_gaussian(1e-17, 1e-5)
    assert reference.log_delta(1e-17, 1.0 / sigma) <= math.log(1e-5)
    sigma = calibrate_gaussian(1e308, 1e-5)
    assert reference.log_delta_of_noise(1e308, sigma) <= math.log(1e-5)
    assert sigma == pytest.approx(1.0 / math.sqrt(2e308 / 4) / 2, rel=1e-12)  # μ ≈ √(2ε)
    assert gaussian_delta(1e20, 1.0) == 5e-324  # δ = e^{-5e39}: positive, below every double
    assert gaussian_log_delta(1e20, 1.0) >= reference.log_delta(1e20, 1.0)
    assert gaussian_log_delta(1e20, 1.0) == pytest.approx(-5e39, rel=1e-12)
    epsilon = gaussian_epsilon(1e-5, 1e-20)
    assert reference.log_delta(epsilon, 1e20) <= math.log(1e-5)
    assert epsilon == pytest.approx(5e39, rel=1e-13)
    sigma = calibrate_gaussian(1.0, 1e-5, compositions=10**400)
    assert sigma == pytest.approx(calibrate_gaussian(1.0, 1e-5) * 1e200, rel=1e-12)


def test_split_budget_refuses_no_shares_and_survives_huge_ones():
    with pytest.raises(ValueError, match="shares"):
        split_gaussian_budget(1.0, 1e-5, [])
    pairs = split_gaussian_budget(1.0, 1e-5, [1e308, 1e308])
    assert pairs[0] == pairs[1] and pairs[0][0] > 0.0


def test_split_budget_never_underflows_a_share_of_delta_to_zero():
    # On the branch before this fix, δ = 5e-324 split over two shares gave δ_i = 0.0, which no release can meet.
    with pytest.raises(ValueError, match="delta"):
        split_gaussian_budget(1.0, 5e-324, [1.0, 4.0])
    (_, first), (_, second) = split_gaussian_budget(1.0, 3e-323, [1.0, 4.0])
    assert 0.0 < first == second and first + second <= 3e-323
    shares = split_gaussian_budget(1.0, 0.1, [1.0, 1.0, 1.0])
    assert sum(mpmath.mpf(share) for _, share in shares) <= mpmath.mpf(0.1)
