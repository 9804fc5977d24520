"""The canary client of one-shot averaging, against dpmech's blind-averaging calibration (N, α, δ stated)."""

import numpy as np
import pytest

import dpmech
from audits import epsilon_from_gdp
from audits.attacks import average_noise_std, averaging_canary_scores

ALPHA, DELTA, TRIALS = 0.05, 1e-5, 10_000


def _worlds(num_users, dimension, local_sensitivity, rng):
    models = rng.normal(size=(num_users, dimension))
    with_canary = models.copy()
    direction = rng.normal(size=dimension)
    with_canary[0] += local_sensitivity * direction / np.linalg.norm(direction)  # one client moves by exactly s
    return models, with_canary


@pytest.mark.parametrize("epsilon", [4.0, 8.0])
def test_blind_averaging_audit_is_tight_at_the_calibrated_noise(epsilon):
    rng = np.random.default_rng(0)
    num_users, local_sensitivity = 20, 0.3
    user_std = dpmech.mechanisms.calibrate_user_noise(epsilon, DELTA, local_sensitivity, num_users, honest_fraction=1.0)
    models, with_canary = _worlds(num_users, 5, local_sensitivity, rng)
    scores = averaging_canary_scores(models, with_canary, user_std, TRIALS, rng)
    mu_claimed = local_sensitivity / dpmech.calibrate_gaussian(epsilon, DELTA, local_sensitivity)
    result = epsilon_from_gdp(scores, alpha=ALPHA, delta=DELTA)
    assert 0.85 * mu_claimed <= result.mu_lb <= mu_claimed
    assert result.eps_lb <= epsilon


def test_an_honest_fraction_below_one_only_adds_noise():
    # t = 1/2 doubles every user's variance when all users are in fact honest: the audit sees a smaller μ.
    rng = np.random.default_rng(1)
    user_std = dpmech.mechanisms.calibrate_user_noise(2.0, DELTA, 0.3, 20, honest_fraction=0.5)
    models, with_canary = _worlds(20, 5, 0.3, rng)
    result = epsilon_from_gdp(averaging_canary_scores(models, with_canary, user_std, TRIALS, rng), delta=DELTA)
    assert result.eps_lb < 2.0


def test_dropping_the_user_share_of_noise_is_detected():
    # Bug: each user adds σ/√|U| calibrated for the AVERAGE's scale, i.e. |U| times too little variance.
    rng = np.random.default_rng(2)
    num_users, local_sensitivity, epsilon = 16, 0.3, 1.0
    central = dpmech.calibrate_gaussian(epsilon, DELTA, local_sensitivity / num_users)
    models, with_canary = _worlds(num_users, 5, local_sensitivity, rng)
    result = epsilon_from_gdp(averaging_canary_scores(models, with_canary, central / np.sqrt(num_users), TRIALS, rng), delta=DELTA)
    assert result.eps_lb > epsilon


def test_average_noise_std_and_bad_input():
    assert average_noise_std([3.0, 4.0], 2) == pytest.approx(2.5)
    assert average_noise_std(1.0, 4) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="client_noise_std"):
        average_noise_std(0.0, 3)
    with pytest.raises(ValueError, match="models_with"):
        averaging_canary_scores(np.zeros((3, 2)), np.zeros((2, 2)), 1.0, 10, 0)
