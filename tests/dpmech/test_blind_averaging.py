"""Blind averaging (DP-Helmet Alg. 3, Lemmas 5.1-5.2): noise scales, variance, and the event."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

import dpmech


@given(
    st.floats(0.1, 10.0),
    st.floats(1e-10, 1e-2),
    st.floats(1e-4, 10.0),
    st.integers(1, 10_000),
    st.floats(0.01, 1.0),
)
def test_honest_noise_alone_meets_the_central_gaussian_target(epsilon, delta, local_sensitivity, num_users, honest_fraction):
    user_std = dpmech.mechanisms.calibrate_user_noise(epsilon, delta, local_sensitivity, num_users, honest_fraction)
    central_sum_sigma = dpmech.calibrate_gaussian(epsilon, delta, local_sensitivity)
    # Honest users contribute at least t|U| shares of variance σ_u² to the sum.
    honest_sum_variance = honest_fraction * num_users * user_std**2
    assert honest_sum_variance == pytest.approx(central_sum_sigma**2, rel=1e-12)
    # On the average's scale: std σ/|U| against sensitivity s/|U|, the same (ε, δ).
    event = dpmech.mechanisms.blind_averaging_event(user_std, local_sensitivity, num_users, honest_fraction)
    assert event.sensitivity == pytest.approx(dpmech.mechanisms.average_sensitivity(local_sensitivity, num_users), rel=1e-15)
    assert event.sigma == pytest.approx(central_sum_sigma / num_users, rel=1e-12)
    assert dpmech.gaussian_delta(epsilon, event.sigma, event.sensitivity) <= delta * (1 + 1e-9)


def test_reading_sigma_on_the_average_scale_would_under_noise_by_the_number_of_users():
    # If σ were the average-scale std (calibrated to s/|U|) and each user added σ²/(t|U|),
    # the honest noise on the average would be σ/|U|: |U| times too little.
    epsilon, delta, s, users, t = 1.0, 1e-5, 0.1, 100, 0.5
    wrong_user_std = dpmech.calibrate_gaussian(epsilon, delta, s / users) / math.sqrt(t * users)
    wrong = dpmech.mechanisms.blind_averaging_event(wrong_user_std, s, users, t)
    assert dpmech.gaussian_delta(epsilon, wrong.sigma, wrong.sensitivity) > 0.5
    assert wrong_user_std == pytest.approx(dpmech.mechanisms.calibrate_user_noise(epsilon, delta, s, users, t) / users, rel=1e-12)


def test_blind_average_has_the_expected_mean_and_variance():
    # |U| = 10 users, 200 repetitions x 500 coordinates = 100,000 draws of the noisy average.
    # Variance against σ_u²/|U| (chi-square interval, α = 1e-4), mean against the plain average (z-test, α = 1e-4).
    users, user_std = 10, 0.3
    rng = np.random.default_rng(20260103)
    models = rng.normal(size=(users, 500))
    averages = np.stack([dpmech.mechanisms.blind_average(models, user_std, rng) for _ in range(200)])
    residual = (averages - models.mean(axis=0)).ravel()
    variance = user_std**2 / users
    statistic = np.sum(residual**2) / variance
    assert stats.chi2.ppf(5e-5, residual.size) < statistic < stats.chi2.ppf(1 - 5e-5, residual.size)
    assert abs(residual.mean()) / math.sqrt(variance / residual.size) < stats.norm.ppf(1 - 5e-5)
    assert dpmech.mechanisms.blind_average(models, user_std, 1).shape == (500,)
    np.testing.assert_array_equal(dpmech.mechanisms.blind_average(models, user_std, 9), dpmech.mechanisms.blind_average(models, user_std, np.random.default_rng(9)))


def test_models_are_not_projected_after_noise():
    # Models on the sphere of radius R = 1: the noisy average is not pulled back into the ball.
    models = np.tile([1.0, 0.0], (4, 1))
    average = dpmech.mechanisms.blind_average(models, 50.0, 3)
    assert np.linalg.norm(average) > 1.0


BAD_INPUTS = [
    ("honest_fraction", lambda: dpmech.mechanisms.calibrate_user_noise(1.0, 1e-5, 1.0, 10, 0.0)),
    ("honest_fraction", lambda: dpmech.mechanisms.calibrate_user_noise(1.0, 1e-5, 1.0, 10, 1.5)),
    ("honest_fraction", lambda: dpmech.mechanisms.blind_averaging_event(1.0, 1.0, 10, -0.5)),
    ("num_users", lambda: dpmech.mechanisms.calibrate_user_noise(1.0, 1e-5, 1.0, 0, 0.5)),
    ("num_users", lambda: dpmech.mechanisms.average_sensitivity(1.0, 2.5)),
    ("local_sensitivity", lambda: dpmech.mechanisms.calibrate_user_noise(1.0, 1e-5, 0.0, 10, 0.5)),
    ("epsilon", lambda: dpmech.mechanisms.calibrate_user_noise(0.0, 1e-5, 1.0, 10, 0.5)),
    ("delta", lambda: dpmech.mechanisms.calibrate_user_noise(1.0, 0.0, 1.0, 10, 0.5)),
    ("user_noise_std", lambda: dpmech.mechanisms.blind_average(np.ones((3, 2)), 0.0, 0)),
    ("user_noise_std", lambda: dpmech.mechanisms.blind_averaging_event(-1.0, 1.0, 10, 0.5)),
    ("local_models", lambda: dpmech.mechanisms.blind_average(np.ones((0, 2)), 1.0, 0)),
    ("local_models", lambda: dpmech.mechanisms.blind_average([[1.0, np.nan]], 1.0, 0)),
    ("rng", lambda: dpmech.mechanisms.blind_average(np.ones((3, 2)), 1.0, None)),
]


@pytest.mark.parametrize("parameter, call", BAD_INPUTS, ids=[f"{name}-{i}" for i, (name, _) in enumerate(BAD_INPUTS)])
def test_bad_input_raises_value_error_naming_the_parameter(parameter, call):
    with pytest.raises(ValueError, match=parameter):
        call()


# Discrete option: integer shares on the grid, accounted as a distributed discrete Gaussian.
from fractions import Fraction  # noqa: E402

from tests.profiles import examples  # noqa: E402

from dpmech import blind_averaging  # noqa: E402
from dpmech.distributed_discrete_gaussian import distributed_discrete_gaussian_epsilon  # noqa: E402
from dpmech.output_perturbation import rounded_grid_sensitivity  # noqa: E402


@examples(0.2)
@given(st.floats(0.2, 5.0), st.floats(1e-9, 1e-3), st.floats(1e-3, 1.0), st.integers(-14, -4), st.integers(1, 700),
       st.integers(2, 50), st.floats(0.1, 1.0))
def test_discrete_shares_meet_the_target_with_the_honest_shares_and_not_with_fewer(
        epsilon, delta, sensitivity, exponent, dimension, num_users, honest_fraction):
    granularity = 2.0**exponent
    honest = blind_averaging.honest_shares(num_users, honest_fraction)
    assert honest >= honest_fraction * num_users * (1 - 1e-9) and honest <= num_users
    sigma_squared = blind_averaging.calibrate_discrete_user_noise(epsilon, delta, sensitivity, granularity, dimension,
                                                                  honest)
    event = blind_averaging.discrete_blind_averaging_event(delta, sigma_squared, sensitivity, granularity, dimension,
                                                           honest)
    assert event.epsilon <= epsilon and event.delta == delta
    grid_sensitivity = rounded_grid_sensitivity(sensitivity, granularity, dimension)
    # Nearest rounding moves each coordinate by at most γ/2 (in one dimension the difference is an integer).
    assert grid_sensitivity >= (math.floor(sensitivity / granularity) + 1 if dimension == 1
                                else sensitivity / granularity + math.sqrt(dimension))
    if honest > 1 and sigma_squared > 1:
        fewer = distributed_discrete_gaussian_epsilon(delta, sigma_squared, honest - 1, grid_sensitivity, dimension)
        assert fewer > event.epsilon


def test_discrete_blind_average_is_the_rounded_mean_plus_integer_noise():
    rng = np.random.default_rng(5)
    models = rng.normal(scale=0.3, size=(6, 40))
    granularity = 2.0**-10
    average, randomness = blind_averaging.discrete_blind_average(models, granularity, Fraction(400), rng)
    scaled = average * models.shape[0] / granularity
    assert np.max(np.abs(scaled - np.rint(scaled))) < 1e-9  # a multiple of γ/|U| up to the final scaling
    noise = np.rint(scaled) - np.rint(models / granularity).sum(axis=0)
    # The sum of 6 shares of N_Z(0, 400) has variance below 6·400: a loose two-sided check over 40 coordinates.
    assert 0.3 * 2400 < np.mean(noise**2) < 2.0 * 2400
    assert "pseudo-random" in randomness
    again, _ = blind_averaging.discrete_blind_average(models, granularity, Fraction(400), np.random.default_rng(5))
    assert again.shape == (40,)


def test_honest_shares_are_not_bumped_by_rounding():
    assert blind_averaging.honest_shares(10, 0.3) == 3
    assert blind_averaging.honest_shares(10, 0.31) == 4
    assert blind_averaging.honest_shares(3, 0.1) == 1


@pytest.mark.parametrize("call, name", [
    (lambda: blind_averaging.calibrate_discrete_user_noise(1.0, 1e-5, 1.0, 0.0, 3, 2), "granularity"),
    (lambda: blind_averaging.calibrate_discrete_user_noise(1.0, 1e-5, 1.0, 0.1, 3, 0), "num_shares"),
    (lambda: blind_averaging.discrete_blind_average(np.ones(3), 0.1, Fraction(1), None), "rng"),
    (lambda: blind_averaging.discrete_blind_average(np.full((2, 2), np.inf), 0.1, Fraction(1), 0), "values"),
])
def test_discrete_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()
