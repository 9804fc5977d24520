"""calibrate_gaussian: never under-noised, within 1e-9 of the exact σ, vectorised."""

import math

import numpy as np
import pytest
from dp_accounting import gaussian_mechanism
from hypothesis import given
from hypothesis import strategies as st

from dpmech import calibrate_gaussian, gaussian_delta
from dpmech import high_precision as reference

epsilons = st.floats(1e-6, 1e3)
log10_deltas = st.floats(-300.0, math.log10(0.4999))


@given(epsilons, log10_deltas)
def test_calibrated_sigma_never_under_noises_in_50_digits(epsilon, log10_delta):
    delta = 10.0**log10_delta
    sigma = calibrate_gaussian(epsilon, delta)
    assert reference.delta(epsilon, 1.0 / sigma) <= delta
    exact = reference.sigma(epsilon, delta, sigma)
    assert 0.0 <= sigma / exact - 1 <= 1e-9


@given(epsilons, log10_deltas, st.floats(0.01, 100.0), st.integers(1, 10_000))
def test_calibrate_then_delta_round_trips(epsilon, log10_delta, sensitivity, count):
    delta = 10.0**log10_delta
    sigma = calibrate_gaussian(epsilon, delta, sensitivity, count)
    achieved = gaussian_delta(epsilon, sigma, sensitivity, count)
    assert achieved <= delta
    assert achieved == pytest.approx(delta, rel=1e-9)


@pytest.mark.parametrize(
    "delta,exact", [(1e-5, 3.730631635), (1e-12, 6.557822067), (1e-20, 8.838226922)]
)
def test_anchor_values_where_other_libraries_under_noise(delta, exact):
    # diffprivlib returns 8.2434 (under-noised by 6.7%) at δ = 1e-20; autodp 9.85 (11% over).
    assert calibrate_gaussian(1.0, delta) == pytest.approx(exact, rel=1e-9)


@given(st.floats(0.01, 50.0), st.floats(-15.0, -2.0))
def test_agrees_with_dp_accounting_exact_calibration(epsilon, log10_delta):
    delta = 10.0**log10_delta
    theirs = gaussian_mechanism.get_sigma_gaussian(epsilon, delta)
    assert calibrate_gaussian(epsilon, delta) == pytest.approx(theirs, rel=1e-8)


def test_ten_thousand_pairs_in_one_call_equal_scalar_calls():
    rng = np.random.default_rng(7)
    epsilon = 10.0 ** rng.uniform(-6, 3, 10_000)
    delta = 10.0 ** rng.uniform(-300, math.log10(0.4999), 10_000)
    sigma = calibrate_gaussian(epsilon, delta)
    assert sigma.shape == (10_000,)
    # One float pair takes dpmech._gaussian_scalar, whose bound on log δ is wider by its erfcx's error term
    # (4.6e-12): σ moves by that over d log δ/d log μ, up to a relative 1.1e-11 on a 6,000-point grid.
    for index in rng.choice(10_000, 40, replace=False):
        assert sigma[index] == pytest.approx(calibrate_gaussian(float(epsilon[index]), float(delta[index])), rel=3e-11)
    achieved = gaussian_delta(epsilon, sigma)
    assert np.all(achieved <= delta)


def test_compositions_scale_sigma_by_root_k():
    assert calibrate_gaussian(1.0, 1e-5, compositions=10) == pytest.approx(11.79729308, rel=1e-9)


def test_classic_is_dwork_roth_and_refuses_epsilon_at_least_one():
    sigma = calibrate_gaussian(0.5, 1e-5, sensitivity=2.0, method="classic")
    assert sigma == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-15)
    assert sigma > calibrate_gaussian(0.5, 1e-5, sensitivity=2.0)
    with pytest.raises(ValueError, match="analytic"):
        calibrate_gaussian(1.0, 1e-5, method="classic")


@given(st.floats(1e-4, 0.999), st.floats(-300.0, -1.0))
def test_classic_is_never_below_analytic(epsilon, log10_delta):
    delta = 10.0**log10_delta
    assert calibrate_gaussian(epsilon, delta, method="classic") >= calibrate_gaussian(epsilon, delta)


@given(st.floats(0.05, 20.0), st.floats(-12.0, -3.0), st.lists(st.floats(0.1, 10.0), min_size=1, max_size=4),
       st.lists(st.floats(0.01, 5.0), min_size=4, max_size=4))
def test_split_budget_composes_to_at_most_the_total(epsilon, log10_delta, shares, sensitivities):
    from dpmech import REPLACE_ONE, GaussianEvent, PrivacyLedger, split_gaussian_budget

    delta = 10.0**log10_delta
    ledger = PrivacyLedger(REPLACE_ONE)
    for (share_epsilon, share_delta), sensitivity in zip(split_gaussian_budget(epsilon, delta, shares), sensitivities):
        ledger.record(GaussianEvent(calibrate_gaussian(share_epsilon, share_delta, sensitivity), sensitivity))
    composed = ledger.epsilon(delta).epsilon
    assert composed <= epsilon
    assert composed == pytest.approx(epsilon, rel=1e-6)
