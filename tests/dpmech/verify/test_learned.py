"""Learned events (DP-Sniper style): catches what singletons and half-lines cannot, with no false alarm."""

import numpy as np
import pytest

import dpmech
from dpmech.verify import statistical_dp_test
from dpmech.verify.learned import OutputFeatures, _learned_events, learned_dp_test

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


def test_point_masses_of_a_real_coordinate_get_indicators_fixed_by_training():
    # SVT with noisy answers: ⊥ coded 0 (a point mass) beside continuous answers; -1 after the halt.
    rng = np.random.default_rng(0)
    answers = rng.laplace(1.0, 8.0, size=(2000, 2))
    training = [np.where(rng.random((2000, 2)) < 0.6, 0.0, answers), np.where(rng.random((2000, 2)) < 0.3, -1.0, answers)]
    featurise = OutputFeatures(training)
    assert {column: atoms.tolist() for column, atoms in featurise.atoms.items()} == {0: [-1.0, 0.0], 1: [-1.0, 0.0]}
    features = featurise(np.array([[0.0, 2.5], [-1.0, 0.0]]))
    # raw (2) + NaN/+inf/-inf indicators (6), then per coordinate: its atoms' indicators and the coordinate with atoms at 0.
    assert features.shape == (2, 2 + 6 + 2 * (2 + 1))
    np.testing.assert_array_equal(features[:, 8:11], [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    np.testing.assert_array_equal(features[:, 11:14], [[0.0, 0.0, 2.5], [0.0, 1.0, 0.0]])


@pytest.mark.parametrize(
    "training",
    [
        [np.random.default_rng(1).normal(size=(5000, 3))],  # continuous: no value repeats
        [np.random.default_rng(2).integers(0, 2, size=(5000, 3)).astype(float)],  # integer codes: not atoms
        [np.round(np.random.default_rng(3).normal(0.0, 1.0, size=(5000, 2)), 3)],  # a fine lattice: masses < 1 %
    ],
)
def test_no_point_masses_where_there_are_none(training):
    assert OutputFeatures(training).atoms == {}


def test_the_logistic_score_is_the_fitted_model_on_standardised_features():
    from sklearn.linear_model import LogisticRegression

    from dpmech.verify.learned import _Standardised, _fitted_scorers

    rng = np.random.default_rng(4)
    first, second = rng.normal(0.0, 1.0, (800, 4)) * [1, 10, 0.1, 1], rng.normal(0.3, 1.0, (800, 4)) * [1, 10, 0.1, 1]
    (name, score), _ = _fitted_scorers(first, second, seed=0)
    features = np.vstack([first, second])
    standardise = _Standardised(features)
    reference = LogisticRegression(max_iter=500).fit(standardise(features), np.r_[np.ones(800), np.zeros(800)])
    assert name == "logistic regression"
    np.testing.assert_allclose(score(features), reference.decision_function(standardise(features)), rtol=1e-9, atol=1e-9)


def test_a_point_mass_of_the_second_sample_alone_is_found_however_large_the_first():
    rng = np.random.default_rng(5)
    first = rng.normal(size=(50_000, 1))
    second = np.where(rng.random((50_000, 1)) < 0.2, 0.5, rng.normal(size=(50_000, 1)))
    assert {column: atoms.tolist() for column, atoms in OutputFeatures([first, second]).atoms.items()} == {0: [0.5]}


def test_the_thresholds_of_one_score_featurise_an_output_chunk_once(monkeypatch):
    # The final stage counts several thresholds of a classifier's score on the same outputs: featurising and scoring
    # them once per chunk, not once per event, is most of its speed on vector outputs.
    calls = []
    original = OutputFeatures.__call__
    monkeypatch.setattr(OutputFeatures, "__call__", lambda self, sample: calls.append(len(sample)) or original(self, sample))
    rng = np.random.default_rng(0)
    training = [rng.normal(0.0, 1.0, (2000, 3)), rng.normal(0.5, 1.0, (2000, 3))]
    test = [rng.normal(0.0, 1.0, (2000, 3)), rng.normal(0.5, 1.0, (2000, 3))]
    names, _, _, event_of = _learned_events(training, test, 8, False, 0)
    outputs = rng.normal(0.0, 1.0, (500, 3))
    calls.clear()
    masks = [event_of(index)(outputs) for index in range(len(names))]
    assert len(calls) == 2  # once per scorer (logistic regression, trees), not once per threshold
    # Another outputs object is featurised anew, and every event's membership is what it was.
    again = outputs.copy()
    assert all(np.array_equal(event_of(index)(again), mask) for index, mask in enumerate(masks))
    assert len(calls) == 4


def test_an_output_has_the_same_features_in_a_batch_of_numbers_and_in_a_batch_holding_a_none():
    # Membership must be a function of each output alone: one None in a chunk made it an object array, which the
    # feature map read as floats (and, with float bits, gave other columns) or refused.
    from dpmech.verify.learned import OutputFeatures

    rng = np.random.default_rng(0)
    for training in ([rng.integers(0, 5, (200, 3)), rng.integers(0, 5, (200, 3))],
                     [rng.normal(size=(200, 3)), rng.normal(size=(200, 3))]):
        for float_bits in (False, True):
            featurise = OutputFeatures(training, float_bits=float_bits)
            plain = training[0][:4]
            mixed = np.empty(5, dtype=object)
            for index, row in enumerate(plain):
                mixed[index] = row
            mixed[4] = None
            with_none = featurise(mixed)
            np.testing.assert_array_equal(with_none[:4], featurise(plain))
            assert with_none.shape == (5, featurise(plain).shape[1])
