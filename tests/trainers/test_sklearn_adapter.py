"""The scikit-learn adapter minimises the mean-form objective with a regularised intercept."""

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.special import log_softmax, softmax
from sklearn.base import clone

from dpmech import sensitivity
from trainers.data import load_digits_dataset
from trainers.sklearn_adapter import LogisticRegressionTrainer

from tests.profiles import examples


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


def _gradient_norm_50_digits(parameters, features, labels, regularization):
    """‖∇J(θ)‖₂ of the mean-form objective at the released float64 θ, in 50-digit arithmetic."""
    with mpmath.workdps(50):
        theta = mpmath.matrix([[mpmath.mpf(float(v)) for v in row] for row in parameters])
        augmented = [[mpmath.mpf(float(v)) for v in row] + [mpmath.mpf(1)] for row in features]
        rows, width = theta.rows, theta.cols
        gradient = regularization * theta
        for x, label in zip(augmented, labels):
            logits = [mpmath.fsum(theta[k, j] * x[j] for j in range(width)) for k in range(rows)]
            if rows == 1:
                residuals = [1 / (1 + mpmath.exp(-logits[0])) - int(label)]
            else:
                top = max(logits)
                exps = [mpmath.exp(z - top) for z in logits]
                residuals = [e / mpmath.fsum(exps) - (1 if k == label else 0) for k, e in enumerate(exps)]
            for k in range(rows):
                for j in range(width):
                    gradient[k, j] += residuals[k] * x[j] / len(labels)
        return mpmath.sqrt(mpmath.fsum(gradient[k, j] ** 2 for k in range(rows) for j in range(width)))


@pytest.mark.parametrize("num_classes, tolerance", [(2, 1e-12), (3, 1e-12), (4, 1e-9)])
def test_released_parameters_certify_the_gradient_tolerance_in_50_digits(num_classes, tolerance):
    rng = np.random.default_rng(7 + num_classes)
    features = rng.normal(size=(15, 2))
    features /= np.maximum(1.0, np.linalg.norm(features, axis=1, keepdims=True))
    labels = rng.integers(0, num_classes, size=15)
    model = LogisticRegressionTrainer(regularization=0.03, num_classes=num_classes, gradient_tolerance=tolerance)
    model.fit(features, labels)
    assert model.gradient_norm_bound_ <= tolerance
    assert _gradient_norm_50_digits(model.parameters_, features, labels, 0.03) <= tolerance


@pytest.mark.parametrize("num_classes, bound", [(2, sensitivity.TIGHT_BOUND), (5, sensitivity.TIGHT_BOUND),
                                                (5, sensitivity.SEED_BOUND)])
def test_sensitivity_adds_twice_the_certified_distance_to_the_minimiser(num_classes, bound):
    # L-BFGS stops on a relative decrease, not on τ: the exact minimiser's Δ alone does not cover
    # the released θ̂, which is only certified to within τ/λ of it.
    model = LogisticRegressionTrainer(regularization=0.01, num_classes=num_classes, feature_bound=2.0,
                                      gradient_tolerance=1e-6, multinomial_bound=bound)
    if num_classes == 2:
        exact = sensitivity.logistic_regression_sensitivity(0.01, 500, 2.0, regularized_intercept=True)
    else:
        exact = sensitivity.multinomial_logistic_regression_sensitivity(
            0.01, 500, 2.0, num_classes=num_classes, regularized_intercept=True, bound=bound)
    reported = model.sensitivity(500)
    assert reported >= exact + 2 * 1e-6 / 0.01
    assert reported == pytest.approx(exact + 2e-4, rel=1e-14)


def test_default_tolerance_is_negligible_against_the_bound():
    model = LogisticRegressionTrainer()
    exact = sensitivity.logistic_regression_sensitivity(0.01, 10_000, 1.0, regularized_intercept=True)
    assert 0 < model.sensitivity(10_000) / exact - 1 < 1e-5


def test_an_uncertifiable_tolerance_raises_instead_of_releasing():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(20, 2)) / 3
    labels = rng.integers(0, 2, size=20)
    with pytest.raises(RuntimeError, match="gradient tolerance"):
        LogisticRegressionTrainer(gradient_tolerance=1e-300).fit(features, labels)
    with pytest.raises(ValueError, match="gradient_tolerance"):
        LogisticRegressionTrainer(gradient_tolerance=0.0).fit(features, labels)
    with pytest.raises(ValueError, match="multinomial_bound"):
        LogisticRegressionTrainer(multinomial_bound="loose").fit(features, labels)


@pytest.mark.parametrize("num_classes, size", [(2, 1797), (10, 300)])
def test_declared_sensitivity_covers_the_released_parameters_optimisation_error(num_classes, size):
    # Before certification, L-BFGS stopped at ‖∇J‖₂ ≈ 5e-9 on digits heads (λ = 0.01), a distance
    # up to ‖∇J‖/λ ≈ 5e-7 from the minimiser that the exact-minimiser Δ did not cover.
    data = load_digits_dataset()
    features = (data.features / np.linalg.norm(data.features, axis=1).max())[:size]
    labels = data.labels[:size] if num_classes > 2 else (data.labels[:size] == 3).astype(np.int64)
    model = LogisticRegressionTrainer(regularization=0.01, num_classes=num_classes).fit(features, labels)
    gradient = _mean_form_gradient(model.parameters_, features, labels, 0.01, num_classes)
    if num_classes == 2:
        exact = sensitivity.logistic_regression_sensitivity(0.01, size, 1.0, regularized_intercept=True)
    else:
        exact = sensitivity.multinomial_logistic_regression_sensitivity(0.01, size, 1.0, regularized_intercept=True)
    assert model.sensitivity(size) - exact >= 2 * np.linalg.norm(gradient) / 0.01


@examples(0.2)
@given(st.integers(1, 8), st.integers(1, 3), st.integers(2, 3), st.floats(0.01, 10.0), st.floats(0.1, 2.0),
       st.integers(0, 2**32 - 1))
def test_certified_gradient_bound_holds_in_50_digits(n, dimension, num_classes, regularization, bound, seed):
    # τ = 1e-11 sits a few orders above the float64 rounding allowance, so the certificate is tight.
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(n, dimension))
    features *= bound / np.maximum(bound, np.linalg.norm(features, axis=1, keepdims=True)) * rng.uniform(0.5, 1.0, (n, 1))
    labels = rng.integers(0, num_classes, size=n)
    model = LogisticRegressionTrainer(regularization=regularization, num_classes=num_classes, feature_bound=bound,
                                      gradient_tolerance=1e-11)
    model.fit(features, labels)
    assert _gradient_norm_50_digits(model.parameters_, features, labels, regularization) <= model.gradient_norm_bound_ <= 1e-11


def test_wide_multinomial_models_are_certified_without_forming_the_hessian():
    # C·p = 3·701 > 2048: Newton directions come from conjugate gradients on Hessian-vector products.
    rng = np.random.default_rng(2)
    features = rng.normal(size=(30, 700))
    features /= np.linalg.norm(features, axis=1, keepdims=True)
    labels = rng.integers(0, 3, size=30)
    model = LogisticRegressionTrainer(regularization=0.05, num_classes=3, gradient_tolerance=1e-10).fit(features, labels)
    assert np.linalg.norm(_mean_form_gradient(model.parameters_, features, labels, 0.05, 3)) <= model.gradient_norm_bound_ <= 1e-10
