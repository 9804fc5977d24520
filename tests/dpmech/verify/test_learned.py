"""Learned events (DP-Sniper style): catches what singletons and half-lines cannot, with no false alarm."""

import numpy as np
import pytest

import dpmech
from dpmech.verify import statistical_dp_test
from dpmech.verify.learned import OutputFeatures, learned_dp_test

N = 5000


def gaussian_vector(sigma):
    """(q1, q2) + N(0, σ²I) with q = (0, 0) on D and (1/√2, 1/√2) on D' (L2 sensitivity 1)."""
    shift = np.full(2, 1.0 / np.sqrt(2.0))
    return lambda d, size, rng: d * shift + rng.normal(0.0, sigma, size=(size, 2))


def test_rejects_a_vector_gaussian_with_too_little_noise_that_the_cheap_events_miss():
    # σ = 1 at Δ = 1: δ(0.1) = 0.34, claimed 0.01. Every vector output is distinct, so singletons see nothing.
    sampler = gaussian_vector(1.0)
    assert not statistical_dp_test(sampler, (0, 1), 0.1, 0.01, num_samples=N, rng=0).rejected
    result = learned_dp_test(sampler, (0, 1), 0.1, 0.01, num_samples=N, rng=0)
    assert result.rejected and "score" in result.witness and result.epsilon_lower_bound > 0.1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_accepts_a_correctly_calibrated_vector_gaussian(seed):
    sigma = dpmech.GaussianOutputMechanism(1.0, 1.0, 1e-3).sigma
    result = learned_dp_test(gaussian_vector(sigma), (0, 1), 1.0, 1e-3, num_samples=N, rng=seed)
    assert not result.rejected, result


def test_features_depend_on_the_training_sample_only():
    training = [np.array([0.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0])]
    featurise = OutputFeatures(training)
    before = featurise(np.array([1.0, 7.0]))
    # A later sample with NaN, inf and a new category maps into the same columns.
    after = featurise(np.array([np.nan, np.inf]))
    assert before.shape[1] == after.shape[1]
    assert after[0, 1] == 1.0 and after[1, 2] == 1.0  # the NaN and +inf indicators


def test_mixed_tuple_outputs_are_featurised_by_outcome():
    sampler = lambda d, size, rng: [(int(x > 0.5), "a" if y else "b") for x, y in zip(rng.laplace(d, 1.0, size), rng.random(size) < 0.5)]  # noqa: E731
    assert learned_dp_test(sampler, (0, 1), 0.3, 0.0, num_samples=N, rng=0).rejected


@pytest.mark.parametrize(
    "parameter, options",
    [("num_samples", {"num_samples": 5}), ("float_bits", {"float_bits": 1}), ("alpha", {"alpha": 0.0}), ("num_thresholds", {"num_thresholds": 0})],
)
def test_bad_input_raises_value_error_naming_the_parameter(parameter, options):
    arguments = {"num_samples": 100, "rng": 0} | options
    with pytest.raises(ValueError, match=parameter):
        learned_dp_test(gaussian_vector(1.0), (0, 1), 1.0, 0.0, **arguments)
