"""The scikit-learn adapter minimises the mean-form objective with a regularised intercept."""

import numpy as np
import pytest
from scipy.special import log_softmax, softmax
from sklearn.base import clone

from trainers.sklearn_adapter import LogisticRegressionTrainer


def _mean_form_gradient(parameters, features, labels, regularization, num_classes):
    augmented = np.hstack([features, np.ones((len(labels), 1))])
    if num_classes == 2:
        probabilities = 1.0 / (1.0 + np.exp(-(augmented @ parameters[0])))
        return ((probabilities - labels) @ augmented / len(labels) + regularization * parameters[0])[None]
    probabilities = softmax(augmented @ parameters.T, axis=1)
    probabilities[np.arange(len(labels)), labels] -= 1.0
    return probabilities.T @ augmented / len(labels) + regularization * parameters


@pytest.mark.parametrize("num_classes", [2, 5])
def test_fit_is_the_stationary_point_of_the_mean_form_objective(num_classes):
    rng = np.random.default_rng(num_classes)
    features = rng.normal(size=(60, 4)) / 3
    features /= np.maximum(1.0, np.linalg.norm(features, axis=1, keepdims=True))
    labels = rng.integers(0, num_classes, size=60)
    model = LogisticRegressionTrainer(regularization=0.05, num_classes=num_classes).fit(features, labels)
    gradient = _mean_form_gradient(model.parameters_, features, labels, 0.05, num_classes)
    # The intercept is regularised: its gradient component is λ b + mean residual, and vanishes.
    assert np.abs(gradient).max() < 1e-7
    assert model.parameters_.shape == ((1 if num_classes == 2 else num_classes), 5)
    assert np.array_equal(model.intercept_, model.parameters_[:, -1])


def test_absent_classes_still_fit_the_full_class_objective():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(25, 3)) / 3
    features /= np.maximum(1.0, np.linalg.norm(features, axis=1, keepdims=True))
    labels = np.full(25, 2)
    model = LogisticRegressionTrainer(regularization=0.1, num_classes=4).fit(features, labels)
    assert model.parameters_.shape == (4, 4)
    assert np.abs(_mean_form_gradient(model.parameters_, features, labels, 0.1, 4)).max() < 1e-7
    assert np.all(model.predict(features) == 2)


def test_probabilities_and_estimator_conventions():
    rng = np.random.default_rng(1)
    features = rng.normal(size=(30, 2)) / 4
    features /= np.maximum(1.0, np.linalg.norm(features, axis=1, keepdims=True))
    labels = rng.integers(0, 3, size=30)
    model = LogisticRegressionTrainer(regularization=0.1, num_classes=3)
    assert clone(model).get_params() == model.get_params()
    model.fit(features, labels)
    probabilities = model.predict_proba(features)
    augmented = np.hstack([features, np.ones((30, 1))])
    assert np.allclose(np.log(probabilities), log_softmax(augmented @ model.parameters_.T, axis=1))


@pytest.mark.parametrize(
    "parameters, match",
    [
        ({"regularization": 0.0}, "regularization"),
        ({"num_classes": 1}, "num_classes"),
        ({"feature_bound": -1.0}, "feature_bound"),
        ({"tol": 0.0}, "tol"),
    ],
)
def test_bad_configuration_names_the_parameter(parameters, match):
    with pytest.raises(ValueError, match=match):
        LogisticRegressionTrainer(**parameters).fit(np.zeros((4, 2)), np.array([0, 1, 0, 1]))


def test_features_above_the_bound_and_bad_labels_raise():
    with pytest.raises(ValueError, match="feature_bound"):
        LogisticRegressionTrainer(feature_bound=1.0).fit(np.array([[2.0, 0.0], [0.1, 0.0]]), np.array([0, 1]))
    with pytest.raises(ValueError, match=r"y must be integers in \[0, 1\]"):
        LogisticRegressionTrainer().fit(np.zeros((2, 2)), np.array([0, 2]))
