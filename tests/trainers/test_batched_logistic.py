"""Batched torch LR reaches scikit-learn's optimum (C = 1/(nλ), fit_intercept=False on (x, 1))."""

import numpy as np
import pytest
import torch
from scipy.special import softmax
from sklearn.linear_model import LogisticRegression

from dpmech import sensitivity
from trainers.batched_logistic import BatchedLogisticRegression
from trainers.data import load_digits_dataset
from trainers.sklearn_adapter import LogisticRegressionTrainer

TOLERANCE = 1e-6


@pytest.fixture(scope="module")
def pool():
    data = load_digits_dataset()
    rng = np.random.default_rng(11)
    chosen = rng.choice(len(data), size=120, replace=False)
    features = data.features[chosen] / np.linalg.norm(data.features, axis=1).max()
    return features, data.labels[chosen]


def _masks(rng, num_records):
    random_halves = np.argsort(rng.random((4, num_records)), axis=1) < num_records // 2
    small = np.zeros((1, num_records), dtype=bool)
    small[0, rng.choice(num_records, size=15, replace=False)] = True
    everything = np.ones((1, num_records), dtype=bool)
    return np.vstack([random_halves, small, everything])


@pytest.mark.parametrize("num_classes, regularization", [(2, 0.01), (2, 0.1), (10, 0.01), (10, 0.1)])
def test_batched_matches_sklearn_for_several_masks(pool, num_classes, regularization):
    features, labels = pool
    labels = labels if num_classes == 10 else (labels == 3).astype(np.int64)
    membership = _masks(np.random.default_rng(num_classes), len(labels))
    batched = BatchedLogisticRegression(regularization=regularization, num_classes=num_classes).fit(features, labels, membership)
    assert batched.gradient_norm_bound_ <= 1e-9
    for row, parameters in zip(membership, batched.parameters_.numpy()):
        reference = LogisticRegressionTrainer(regularization=regularization, num_classes=num_classes)
        reference.fit(features[row], labels[row])
        assert np.abs(reference.parameters_.reshape(parameters.shape) - parameters).max() < TOLERANCE


def test_float_weights_match_sklearn_sample_weights(pool):
    features, labels = pool
    weights = np.random.default_rng(5).uniform(0.0, 2.0, size=(3, len(labels)))
    augmented = np.hstack([features, np.ones((len(labels), 1))])
    batched = BatchedLogisticRegression(regularization=0.05, num_classes=10).fit(features, labels, weights)
    for row, parameters in zip(weights, batched.parameters_.numpy()):
        # mean form with n_b = Σ w: scikit-learn's C Σ w ℓ + ½‖θ‖² with C = 1/(λ Σ w)
        reference = LogisticRegression(C=1.0 / (0.05 * row.sum()), fit_intercept=False, tol=1e-10, max_iter=10000)
        reference.fit(augmented, labels, sample_weight=row)
        assert np.abs(reference.coef_ - parameters).max() < TOLERANCE


def test_pooled_warm_start_is_the_full_pool_optimum(pool):
    features, labels = pool
    membership = np.ones((2, len(labels)), dtype=bool)
    batched = BatchedLogisticRegression(regularization=0.1, num_classes=10).fit(features, labels, membership)
    reference = LogisticRegressionTrainer(regularization=0.1, num_classes=10).fit(features, labels)
    assert np.abs(batched.pooled_parameters_.numpy() - reference.parameters_).max() < TOLERANCE
    assert batched.n_iter_ == 0


def test_predictions_have_one_row_per_model(pool):
    features, labels = pool
    membership = _masks(np.random.default_rng(0), len(labels))
    batched = BatchedLogisticRegression(regularization=0.1, num_classes=10).fit(features, labels, membership)
    assert batched.decision_function(features[:7]).shape == (6, 7, 10)
    assert batched.predict(features[:7]).shape == (6, 7)
    assert batched.parameters_.dtype == torch.float64


def test_float32_and_an_absent_class(pool):
    features, labels = pool
    membership = (labels != 4)[None, :]
    batched = BatchedLogisticRegression(regularization=0.1, num_classes=10, dtype=torch.float32, tol=1e-5)
    batched.fit(features, labels, membership)
    reference = LogisticRegressionTrainer(regularization=0.1, num_classes=10).fit(features[labels != 4], labels[labels != 4])
    assert np.abs(batched.parameters_[0].numpy() - reference.parameters_).max() < 1e-3


@pytest.mark.parametrize(
    "parameters, membership, match",
    [
        ({"regularization": 0.0}, None, "regularization"),
        ({"num_classes": 1}, None, "num_classes"),
        ({"tol": -1.0}, None, "tol"),
        ({"dtype": torch.int64}, None, "dtype"),
        ({}, np.zeros((2, 6)), "membership"),
        ({}, -np.ones((1, 6)), "membership"),
        ({}, np.ones((1, 5)), "membership"),
        ({"feature_bound": 0.1}, None, "feature_bound"),
    ],
)
def test_bad_configuration_names_the_parameter(parameters, membership, match):
    features = np.eye(6, 3) * 0.5
    labels = np.array([0, 1, 0, 1, 0, 1])
    membership = np.ones((1, 6)) if membership is None else membership
    with pytest.raises(ValueError, match=match):
        BatchedLogisticRegression(**parameters).fit(features, labels, membership)


def test_sensitivity_needs_a_feature_bound():
    with pytest.raises(ValueError, match="feature_bound"):
        BatchedLogisticRegression().sensitivity(10)


def _gradient_norms(parameters, features, labels, membership, regularization):
    augmented = np.hstack([features, np.ones((len(labels), 1))])
    weights = membership / membership.sum(axis=1, keepdims=True)
    if parameters.ndim == 2:
        residuals = 1.0 / (1.0 + np.exp(-(parameters @ augmented.T))) - labels
        gradients = (weights * residuals) @ augmented + regularization * parameters
    else:
        logits = np.einsum("bcp,np->bcn", parameters, augmented)
        residuals = softmax(logits, axis=1) - np.eye(parameters.shape[1])[labels].T
        gradients = np.einsum("bcn,np->bcp", residuals * weights[:, None, :], augmented) + regularization * parameters
    return np.linalg.norm(gradients.reshape(len(parameters), -1), axis=1)


@pytest.mark.parametrize("num_classes, dtype", [(2, torch.float64), (10, torch.float64), (10, torch.float32)])
def test_every_model_is_certified_within_the_gradient_tolerance(pool, num_classes, dtype):
    features, labels = pool
    labels = labels if num_classes == 10 else (labels == 3).astype(np.int64)
    membership = _masks(np.random.default_rng(3), len(labels))
    batched = BatchedLogisticRegression(regularization=0.05, num_classes=num_classes, tol=1e-10, dtype=dtype,
                                        feature_bound=1.0)
    batched.fit(features, labels, membership)
    # float32 runs are refined in float64 and released in float64: a cast back would leave the certificate.
    assert batched.parameters_.dtype == torch.float64
    assert batched.gradient_norm_bound_ <= 1e-10
    assert np.all(_gradient_norms(batched.parameters_.numpy(), features, labels, membership, 0.05) <= 1e-10)
    n = int(membership[0].sum())
    exact = (sensitivity.logistic_regression_sensitivity(0.05, n, 1.0, regularized_intercept=True) if num_classes == 2
             else sensitivity.multinomial_logistic_regression_sensitivity(0.05, n, 1.0, regularized_intercept=True))
    assert batched.sensitivity(n) == sensitivity.approximate_minimizer_sensitivity(exact, 1e-10, 0.05) > exact


def test_an_uncertifiable_tolerance_raises(pool):
    features, labels = pool
    with pytest.raises(RuntimeError, match="gradient tolerance"):
        BatchedLogisticRegression(regularization=0.1, tol=1e-300, max_iter=5).fit(
            features, (labels == 3).astype(np.int64), np.ones((2, len(labels)), dtype=bool))


@pytest.mark.parametrize("num_classes", [2, 10])
def test_clients_on_their_own_records_match_sklearn_and_repeat_exactly(pool, num_classes):
    # One head per client, each on its own block of the pool (the federated pipelines' heads): the
    # trainer gathers each block, (B, m, p), and preconditions each multinomial head by its own
    # Kronecker factors. Client 1 holds only labels 0-4 (label skew), client 2 a 15-record block.
    features, labels = pool
    labels = labels if num_classes == 10 else (labels == 3).astype(np.int64)
    order = np.argsort(pool[1] >= 5, kind="stable")
    features, labels = features[order], labels[order]
    membership = np.zeros((3, len(labels)), dtype=bool)
    membership[0, 60:], membership[1, :45], membership[2, 45:60] = True, True, True
    batched = BatchedLogisticRegression(regularization=0.01, num_classes=num_classes)
    parameters = batched.fit(features, labels, membership).parameters_.clone()
    assert batched.pooled_parameters_ is None and batched.gradient_norm_bound_ <= 1e-9
    for row, head in zip(membership, parameters.numpy()):
        reference = LogisticRegressionTrainer(regularization=0.01, num_classes=num_classes).fit(features[row], labels[row])
        assert np.abs(reference.parameters_.reshape(head.shape) - head).max() < TOLERANCE
    assert torch.equal(batched.fit(features, labels, membership).parameters_, parameters)
