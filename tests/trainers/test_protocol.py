"""The trainer protocol with a user-written trainer, and the adapters' declared sensitivities."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit, log_expit

import dpmech.sensitivity
from dpmech import REPLACE_ONE
from trainers.protocol import Trainer, TrainedParameters, train_with_sensitivity
from trainers.sklearn_adapter import LogisticRegressionTrainer


class UserLogisticTrainer:
    """A user's own trainer: intercept-free binary L2 LR by scipy's L-BFGS on ‖x‖ <= 1.

    Its bound is Chaudhuri et al. (2011) Cor. 8, 2/(nλ); it takes the λ↔n factor 1/(nλ)
    from dpmech instead of redoing the arithmetic.
    """

    def __init__(self, regularization):
        self.regularization = regularization

    def train(self, features, labels):
        signs = 2.0 * labels - 1.0

        def objective(theta):
            margins = signs * (features @ theta)
            value = -log_expit(margins).mean() + 0.5 * self.regularization * theta @ theta
            gradient = -(expit(-margins) * signs) @ features / len(labels) + self.regularization * theta
            return value, gradient

        start = np.zeros(features.shape[1])
        return minimize(objective, start, jac=True, method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 0}).x

    def sensitivity(self, n):
        return 2.0 * dpmech.sensitivity.sklearn_c(self.regularization, n)


def _unit_ball_data(rng, n, d):
    features = rng.normal(size=(n, d))
    features /= np.maximum(1.0, np.linalg.norm(features, axis=1, keepdims=True))
    labels = (features[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(np.int64)
    return features, labels


def test_user_trainer_plugs_in_and_its_bound_holds_on_neighbours():
    rng = np.random.default_rng(7)
    trainer = UserLogisticTrainer(regularization=0.1)
    assert isinstance(trainer, Trainer)
    features, labels = _unit_ball_data(rng, 40, 3)
    release = train_with_sensitivity(trainer, features, labels)
    assert isinstance(release, TrainedParameters)
    assert release.num_records == 40 and release.relation == REPLACE_ONE
    assert release.sensitivity == pytest.approx(2.0 / (40 * 0.1), rel=1e-15)
    # Replace one record by an adversarial one (opposite label, unit norm): the change stays within Δ.
    worst = 0.0
    for index in range(5):
        neighbour_features, neighbour_labels = features.copy(), labels.copy()
        direction = release.parameters / np.linalg.norm(release.parameters)
        neighbour_features[index] = direction * (1 if labels[index] else -1)
        neighbour_labels[index] = 1 - labels[index]
        moved = np.linalg.norm(trainer.train(neighbour_features, neighbour_labels) - release.parameters)
        worst = max(worst, moved)
    assert 0.0 < worst <= release.sensitivity


def test_objects_without_the_protocol_are_rejected():
    class TrainOnly:
        def train(self, features, labels):
            return np.zeros(2)

    with pytest.raises(TypeError, match="sensitivity"):
        train_with_sensitivity(TrainOnly(), np.ones((3, 2)), np.zeros(3))


def test_shape_mismatch_and_bad_sensitivity_raise():
    trainer = UserLogisticTrainer(regularization=0.1)
    with pytest.raises(ValueError, match="labels"):
        train_with_sensitivity(trainer, np.ones((3, 2)), np.zeros(4))

    class NegativeBound(UserLogisticTrainer):
        def sensitivity(self, n):
            return -1.0

    with pytest.raises(ValueError, match="sensitivity"):
        train_with_sensitivity(NegativeBound(0.1), np.ones((3, 2)) / 2, np.array([0, 1, 0]))


def test_sklearn_binary_adapter_declares_the_bias_augmented_bound_and_it_holds():
    rng = np.random.default_rng(3)
    features, labels = _unit_ball_data(rng, 30, 2)
    trainer = LogisticRegressionTrainer(regularization=0.5, num_classes=2)
    release = train_with_sensitivity(trainer, features, labels)
    # Δ of the exact minimiser plus 2τ/λ, the certified optimisation error of both releases.
    assert release.sensitivity == pytest.approx(2.0 * math.sqrt(2.0) / (30 * 0.5) + 2 * trainer.gradient_tolerance / 0.5, rel=1e-12)
    neighbour_features, neighbour_labels = features.copy(), labels.copy()
    neighbour_features[0] = -release.parameters[0, :-1] / np.linalg.norm(release.parameters[0, :-1])
    neighbour_labels[0] = 1 - labels[0]
    moved = np.linalg.norm(trainer.train(neighbour_features, neighbour_labels) - release.parameters)
    assert moved <= release.sensitivity


def test_sklearn_multinomial_adapter_declares_the_tight_bound_and_it_holds():
    rng = np.random.default_rng(4)
    features = rng.normal(size=(30, 3))
    features /= np.maximum(1.0, np.linalg.norm(features, axis=1, keepdims=True))
    labels = rng.integers(0, 4, size=30)
    trainer = LogisticRegressionTrainer(regularization=0.5, num_classes=4)
    release = train_with_sensitivity(trainer, features, labels)
    assert release.sensitivity == pytest.approx(
        2.0 * math.sqrt(2.0) * math.sqrt(2.0) / (30 * 0.5) + 2 * trainer.gradient_tolerance / 0.5, rel=1e-12)
    neighbour_features, neighbour_labels = features.copy(), labels.copy()
    neighbour_features[0] = -features[0] / np.linalg.norm(features[0])
    neighbour_labels[0] = (labels[0] + 1) % 4
    moved = np.linalg.norm(trainer.train(neighbour_features, neighbour_labels) - release.parameters)
    assert moved <= release.sensitivity
