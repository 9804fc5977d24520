"""Sensitivity bounds: each checked against minimisers or PSGD runs on neighbouring datasets (replace-one).

Exact minimisers come from a damped Newton method run to a gradient norm
below 1e-12, so the measured distance is within 1e-10 of the true one; the
PSGD runs follow the analysed schedule exactly (one record per step,
η_t = min(1/β, 1/(Λt)), projection after every step).
"""

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import optimize, special
from sklearn.linear_model import LogisticRegression

import dpmech
from dpmech import sensitivity

from tests.profiles import examples

MEASUREMENT_SLACK = 1e-8


def newton_minimise(objective, dimension):
    """Damped Newton for a smooth strongly convex objective returning (value, gradient, Hessian)."""
    theta = np.zeros(dimension)
    for _ in range(500):
        value, gradient, hessian = objective(theta)
        if np.linalg.norm(gradient) < 1e-12:
            return theta
        step = np.linalg.solve(hessian, gradient)
        scale = 1.0
        # Backtrack until the value falls enough or, near the optimum where values no
        # longer resolve, the gradient shrinks.
        while scale > 1e-12:
            trial_value, trial_gradient, _ = objective(theta - scale * step)
            if trial_value <= value - 1e-4 * scale * gradient @ step or (
                trial_value <= value + 1e-15 * abs(value) and np.linalg.norm(trial_gradient) < np.linalg.norm(gradient)
            ):
                break
            scale /= 2
        theta = theta - scale * step
    assert np.linalg.norm(objective(theta)[1]) < 1e-10
    return theta


def binary_logistic_objective(features, signs, regularization):
    def objective(theta):
        margins = signs * (features @ theta)
        value = np.mean(np.logaddexp(0.0, -margins)) + 0.5 * regularization * theta @ theta
        weights = special.expit(-margins)
        gradient = -(signs * weights) @ features / len(signs) + regularization * theta
        curvature = weights * (1.0 - weights)
        hessian = (features.T * curvature) @ features / len(signs) + regularization * np.eye(len(theta))
        return value, gradient, hessian

    return objective


def multinomial_logistic_objective(features, labels, num_classes, regularization):
    n, dimension = features.shape
    one_hot = np.eye(num_classes)[labels]

    def objective(flat_weights):
        weights = flat_weights.reshape(num_classes, dimension)
        logits = features @ weights.T
        probabilities = special.softmax(logits, axis=1)
        value = np.mean(special.logsumexp(logits, axis=1) - logits[np.arange(n), labels])
        value += 0.5 * regularization * flat_weights @ flat_weights
        gradient = ((probabilities - one_hot).T @ features / n).ravel() + regularization * flat_weights
        covariance = np.einsum("ic,cd->icd", probabilities, np.eye(num_classes)) - np.einsum(
            "ic,id->icd", probabilities, probabilities
        )
        hessian = np.einsum("icd,ij,ik->cjdk", covariance, features, features).reshape(
            num_classes * dimension, num_classes * dimension
        ) / n + regularization * np.eye(num_classes * dimension)
        return value, gradient, hessian

    return objective


@st.composite
def neighbouring_datasets(draw, num_classes=2):
    """Features clipped to a public bound, labels, and a replacement record for index 0."""
    n = draw(st.integers(1, 6))
    dimension = draw(st.integers(1, 3))
    bound = draw(st.floats(0.3, 3.0))
    regularization = draw(st.floats(0.05, 5.0))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    raw = rng.normal(scale=2.0 * bound, size=(n + 1, dimension))
    features = dpmech.clip_features(raw, bound)
    labels = rng.integers(0, num_classes, size=n + 1)
    first = (features[:n], labels[:n])
    second = (np.vstack([features[n:], features[1:n]]), np.r_[labels[n:], labels[1:n]])
    return bound, regularization, first, second


def with_constant_column(features):
    return np.hstack([features, np.ones((len(features), 1))])


@given(neighbouring_datasets(), st.booleans())
def test_binary_logistic_regression_argmin_moves_at_most_the_bound(setting, intercept):
    bound, regularization, first, second = setting
    minimisers = []
    for features, labels in (first, second):
        features = with_constant_column(features) if intercept else features
        minimisers.append(newton_minimise(binary_logistic_objective(features, 2.0 * labels - 1, regularization), features.shape[1]))
    measured = np.linalg.norm(minimisers[0] - minimisers[1])
    limit = sensitivity.logistic_regression_sensitivity(regularization, len(first[1]), bound, regularized_intercept=intercept)
    assert measured <= limit + MEASUREMENT_SLACK


@given(neighbouring_datasets(num_classes=4), st.booleans())
def test_multinomial_logistic_regression_argmin_moves_at_most_the_tight_bound(setting, intercept):
    bound, regularization, first, second = setting
    minimisers = []
    for features, labels in (first, second):
        features = with_constant_column(features) if intercept else features
        objective = multinomial_logistic_objective(features, labels, 4, regularization)
        minimisers.append(newton_minimise(objective, 4 * features.shape[1]))
    measured = np.linalg.norm(minimisers[0] - minimisers[1])
    n = len(first[1])
    tight = sensitivity.multinomial_logistic_regression_sensitivity(
        regularization, n, bound, num_classes=4, regularized_intercept=intercept
    )
    seed = sensitivity.multinomial_logistic_regression_sensitivity(
        regularization, n, bound, num_classes=4, regularized_intercept=intercept, bound="seed"
    )
    assert measured <= tight + MEASUREMENT_SLACK
    assert seed == pytest.approx(tight * math.sqrt(2.0), rel=1e-15)
    radius = sensitivity.multinomial_logistic_regression_sensitivity(
        regularization, n, bound, num_classes=4, regularized_intercept=intercept, bound="radius"
    )
    assert measured <= radius + MEASUREMENT_SLACK and radius <= tight


def test_one_dimensional_single_record_minimiser_in_closed_form():
    # n = 1, x = B, y = ±1: λθ = y B σ(−yθB), solved by brentq; flipping y negates θ, so the distance is 2|θ|.
    bound, regularization = 2.0, 0.5
    theta = optimize.brentq(lambda t: regularization * t - bound * special.expit(-t * bound), 0.0, bound / regularization, xtol=1e-15)
    newton = newton_minimise(binary_logistic_objective(np.array([[bound]]), np.array([1.0]), regularization), 1)
    assert newton[0] == pytest.approx(theta, rel=1e-12)
    assert 2 * theta <= sensitivity.logistic_regression_sensitivity(regularization, 1, bound)
    assert 2 * theta == pytest.approx(2 * bound / regularization * special.expit(-theta * bound), rel=1e-12)


def test_unaccounted_intercept_breaks_the_bound():
    # ‖x‖ <= 0.1 but a regularised intercept adds an input 1: the bound must use √(0.1² + 1).
    bound, regularization = 0.1, 1.0
    objective = lambda signs: binary_logistic_objective(np.array([[bound, 1.0]]), signs, regularization)  # noqa: E731
    measured = np.linalg.norm(newton_minimise(objective(np.array([1.0])), 2) - newton_minimise(objective(np.array([-1.0])), 2))
    assert measured > sensitivity.logistic_regression_sensitivity(regularization, 1, bound)
    assert measured <= sensitivity.logistic_regression_sensitivity(regularization, 1, bound, regularized_intercept=True)


def sklearn_fit(features, labels, c):
    model = LogisticRegression(C=c, fit_intercept=False, tol=1e-12, max_iter=100_000)
    return model.fit(features, labels).coef_.ravel()


def test_sklearn_c_reproduces_the_mean_form_objective_and_fedaux_c_breaks_the_bound():
    rng = np.random.default_rng(0)
    n, regularization = 20, 1.0
    features = dpmech.clip_features(rng.normal(size=(n, 2)), 1.0)
    labels = (features[:, 0] > 0).astype(int)
    features[0], labels[0] = [1.0, 0.0], 1
    neighbour_features, neighbour_labels = features.copy(), labels.copy()
    neighbour_features[0], neighbour_labels[0] = [0.0, 1.0], 0
    c = sensitivity.sklearn_c(regularization, n)
    newton = newton_minimise(binary_logistic_objective(features, 2.0 * labels - 1, regularization), 2)
    np.testing.assert_allclose(sklearn_fit(features, labels, c), newton, atol=1e-6)
    limit = sensitivity.logistic_regression_sensitivity(regularization, n)
    measured = np.linalg.norm(sklearn_fit(features, labels, c) - sklearn_fit(neighbour_features, neighbour_labels, c))
    assert measured <= limit
    # FedAUX's C = 1/λ is the objective with λ/n: this pair moves 2.4 times the bound it is noised for.
    fedaux = np.linalg.norm(
        sklearn_fit(features, labels, 1.0 / regularization) - sklearn_fit(neighbour_features, neighbour_labels, 1.0 / regularization)
    )
    assert fedaux > 2 * limit


# --- projected SGD (bolt-on) --------------------------------------------------------------------------


def huber_gradient(theta, augmented_input, sign, width):
    margin = sign * theta @ augmented_input
    if margin > 1 + width:
        slope = 0.0
    elif margin < 1 - width:
        slope = -1.0
    else:
        slope = -(1 + width - margin) / (2 * width)
    return slope * sign * augmented_input


def softmax_gradient(weights, augmented_input, label):
    probabilities = special.softmax(weights @ augmented_input)
    probabilities[label] -= 1.0
    return np.outer(probabilities, augmented_input)


def project(theta, radius):
    return theta / max(1.0, np.linalg.norm(theta) / radius)


def psgd(loss_gradient, inputs, targets, initial, regularization, smoothness, radius, order):
    """PSGD exactly as analysed: one record per step, η_t = min(1/β, 1/(Λt)), projection each step."""
    theta = initial.copy()
    for step, index in enumerate(order, start=1):
        rate = min(1.0 / smoothness, 1.0 / (regularization * step))
        theta = project(theta - rate * (loss_gradient(theta, inputs[index], targets[index]) + regularization * theta), radius)
    return theta


@st.composite
def psgd_settings(draw):
    n = draw(st.integers(2, 12))
    bound = draw(st.floats(0.5, 3.0))
    regularization = draw(st.floats(0.1, 5.0))
    radius = draw(st.floats(0.1, 3.0))
    seed = draw(st.integers(0, 2**32 - 1))
    return n, bound, regularization, radius, np.random.default_rng(seed)


def neighbouring_inputs(rng, n, bound, num_classes):
    features = dpmech.clip_features(rng.normal(scale=2 * bound, size=(n + 1, 3)), bound)
    augmented = with_constant_column(features)
    labels = rng.integers(0, num_classes, size=n + 1)
    first = (augmented[:n], labels[:n])
    second = (np.vstack([augmented[n:], augmented[1:n]]), np.r_[labels[n:], labels[1:n]])
    order = np.concatenate([rng.permutation(n) for _ in range(4)])
    return first, second, order


@examples(0.25)
@given(psgd_settings())
def test_huber_svm_psgd_moves_at_most_the_bolt_on_bound(setting):
    n, bound, regularization, radius, rng = setting
    width = 0.1
    first, second, order = neighbouring_inputs(rng, n, bound, 2)
    smoothness = sensitivity.huber_svm_smoothness(bound, regularization, width)
    outputs = [
        psgd(lambda t, x, y: huber_gradient(t, x, 2.0 * y - 1, width), inputs, targets, np.zeros(4), regularization, smoothness, radius, order)
        for inputs, targets in (first, second)
    ]
    limit = sensitivity.huber_svm_sensitivity(regularization, n, bound)
    assert np.linalg.norm(outputs[0] - outputs[1]) <= limit + 1e-12
    lipschitz = sensitivity.huber_svm_lipschitz(bound)
    assert limit == pytest.approx(sensitivity.psgd_bolt_on_sensitivity(lipschitz, regularization, n), rel=1e-15)


@examples(0.25)
@given(psgd_settings())
def test_softmax_slp_psgd_moves_at_most_the_bound(setting):
    n, bound, regularization, radius, rng = setting
    first, second, order = neighbouring_inputs(rng, n, bound, 3)
    smoothness = sensitivity.softmax_slp_smoothness(bound, regularization)
    outputs = [
        psgd(softmax_gradient, inputs, targets, np.zeros((3, 4)), regularization, smoothness, radius, order)
        for inputs, targets in (first, second)
    ]
    limit = sensitivity.softmax_slp_sensitivity(regularization, n, bound)
    assert np.linalg.norm(outputs[0] - outputs[1]) <= limit + 1e-12
    within_radius = sensitivity.softmax_slp_sensitivity(regularization, n, bound, projection_radius=radius,
                                                        num_classes=3)
    assert np.linalg.norm(outputs[0] - outputs[1]) <= within_radius + 1e-12 and within_radius <= limit
    # Kirschte et al.'s 2(√2·c + RΛ)/(nΛ) without the RΛ, with the bias input (c' = √(c² + 1)).
    expected = 2 * math.sqrt(2) * math.hypot(bound, 1.0) / (n * regularization)
    assert limit == pytest.approx(expected, rel=1e-15)


@given(st.floats(0.1, 40.0), st.floats(0.01, 3.0), st.floats(0.01, 100.0), st.integers(0, 2**32 - 1))
def test_lipschitz_and_smoothness_constants_bound_gradients_and_hessians(bound, radius, regularization, seed):
    rng = np.random.default_rng(seed)
    width = 0.1
    augmented = np.r_[dpmech.clip_features(rng.normal(scale=bound, size=(1, 3)), bound)[0], 1.0]
    weights = project(rng.normal(size=(4, 4)) * radius, radius)
    label = int(rng.integers(0, 4))
    # Softmax: loss gradient (p − e_y) x̃ᵀ (L excludes the regulariser's ΛW), Hessian (diag p − ppᵀ) ⊗ x̃x̃ᵀ + ΛI.
    gradient = softmax_gradient(weights, augmented, label)
    assert np.linalg.norm(gradient) <= sensitivity.softmax_slp_lipschitz(bound) * (1 + 1e-12)
    probabilities = special.softmax(weights @ augmented)
    covariance = np.diag(probabilities) - np.outer(probabilities, probabilities)
    hessian = np.kron(covariance, np.outer(augmented, augmented)) + regularization * np.eye(16)
    assert np.linalg.eigvalsh(hessian).max() <= sensitivity.softmax_slp_smoothness(bound, regularization) * (1 + 1e-12)
    # Huber: |ℓ'| <= 1, ℓ'' <= 1/(2h).
    theta = weights[0]
    huber = huber_gradient(theta, augmented, 1.0, width)
    assert np.linalg.norm(huber) <= sensitivity.huber_svm_lipschitz(bound) * (1 + 1e-12)
    assert np.linalg.norm(augmented) ** 2 / (2 * width) + regularization <= sensitivity.huber_svm_smoothness(
        bound, regularization, width
    ) * (1 + 1e-12)


def huber_gradient_difference_by_enumeration(num_classes, feature_bound, intercept):
    """max over label pairs, t = x·x' = ±c² and vertices s, s' of Σ_k ‖s x̃ − s'x̃'‖² (s ∈ [0, 1] or [−1, 0] by y_k)."""
    a, bias = feature_bound**2, float(intercept)
    best = 0.0
    for same_label, t in itertools.product([True, False], [-a, a]):
        total = 0.0
        for differs in [False] * (num_classes if same_label else num_classes - 2) + [True] * (0 if same_label else 2):
            # s for the record's sign interval, s' for the replacement's: one sign when y_k agrees.
            vertices = itertools.product([0.0, 1.0], [0.0, -1.0] if differs else [0.0, 1.0])
            total += max((s * s + u * u) * (a + bias) - 2 * s * u * (t + bias) for s, u in vertices)
        best = max(best, total)
    return best


@pytest.mark.parametrize("num_classes", [2, 3, 4, 10, 100])
@pytest.mark.parametrize("feature_bound", [0.1, 0.5, 1.0, 34.854])
@pytest.mark.parametrize("intercept", [True, False])
def test_huber_svm_joint_bound_is_the_vertex_enumeration(num_classes, feature_bound, intercept):
    joint = sensitivity.huber_svm_sensitivity(10.0, 50, feature_bound, num_classes=num_classes,
                                              regularized_intercept=intercept)
    expected = math.sqrt(huber_gradient_difference_by_enumeration(num_classes, feature_bound, intercept)) / (50 * 10.0)
    assert joint == pytest.approx(expected, rel=1e-14)
    per_class = sensitivity.huber_svm_sensitivity(10.0, 50, feature_bound, regularized_intercept=intercept)
    # Never above √C times one class's bound (C separate releases compose to that), equal to it at C = 2.
    assert joint <= math.sqrt(num_classes) * per_class * (1 + 1e-14)
    if num_classes == 2:
        assert joint == pytest.approx(math.sqrt(2) * per_class, rel=1e-14)


@given(st.integers(2, 12), st.floats(0.1, 5.0), st.booleans(), st.floats(0.01, 1.0), st.integers(0, 2**32 - 1))
def test_huber_svm_joint_bound_covers_every_gradient_difference(num_classes, feature_bound, intercept, width, seed):
    # Σ_k ‖∇ℓ_k(θ_k; z) − ∇ℓ_k(θ_k; z')‖² at random (also large) θ_k, records on or inside the bound, any labels.
    rng = np.random.default_rng(seed)
    features = dpmech.clip_features(rng.normal(scale=2 * feature_bound, size=(2, 3)), feature_bound)
    if rng.random() < 0.5:
        features[1] = -features[0] if rng.random() < 0.5 else features[0]
    inputs = with_constant_column(features) if intercept else features
    labels = rng.integers(0, num_classes, size=2)
    thetas = rng.normal(scale=rng.choice([0.01, 1.0, 10.0]), size=(num_classes, inputs.shape[1]))
    signs = np.where(np.arange(num_classes)[None, :] == labels[:, None], 1.0, -1.0)  # (2, C)
    differences = [huber_gradient(theta, inputs[0], signs[0, k], width) - huber_gradient(theta, inputs[1], signs[1, k], width)
                   for k, theta in enumerate(thetas)]
    total = float(np.sqrt(sum(np.sum(d**2) for d in differences)))
    joint = sensitivity.huber_svm_sensitivity(1.0, 1, feature_bound, num_classes=num_classes, regularized_intercept=intercept)
    assert total <= joint * (1 + 1e-12)


def test_huber_svm_joint_bound_closed_forms():
    # c = 1 with the bias input: C = 10 gives D² = max(16·2, 8 + 8·4, 10·4) = 40, against 10·4·2 = 80 for ten separate models.
    assert sensitivity.huber_svm_sensitivity(10.0, 50, 1.0, num_classes=10) == pytest.approx(
        math.sqrt(40) / (50 * 10.0), rel=1e-15)
    assert sensitivity.huber_svm_sensitivity(10.0, 50, 34.854) == pytest.approx(
        2 * math.hypot(34.854, 1) / (50 * 10.0), rel=1e-15)
    # Without the bias as an input the per-class bound is DP-Helmet's code's 2(c + RΛ)/(NΛ) without the RΛ.
    assert sensitivity.huber_svm_sensitivity(10.0, 50, 34.854, regularized_intercept=False) == pytest.approx(
        2 / 10.0 * 34.854 / 50, rel=1e-15
    )


def test_closed_forms():
    assert sensitivity.logistic_regression_sensitivity(0.01, 100) == pytest.approx(2.0, rel=1e-15)
    assert sensitivity.logistic_regression_sensitivity(0.01, 100, 1.0, regularized_intercept=True) == pytest.approx(
        2 * math.sqrt(2), rel=1e-15
    )
    assert sensitivity.multinomial_logistic_regression_sensitivity(0.01, 100) == pytest.approx(2 * math.sqrt(2), rel=1e-15)
    assert sensitivity.multinomial_logistic_regression_sensitivity(
        0.01, 100, regularized_intercept=True
    ) == pytest.approx(4.0, rel=1e-15)
    assert sensitivity.multinomial_logistic_regression_sensitivity(
        0.01, 100, num_classes=10, bound="seed"
    ) == pytest.approx(2 * math.sqrt(10), rel=1e-15)
    assert sensitivity.psgd_bolt_on_sensitivity(3.0, 2.0, 10) == pytest.approx(0.3, rel=1e-15)
    assert sensitivity.user_level_sensitivity(0.05) == 0.1
    assert dpmech.mechanisms.average_sensitivity(sensitivity.user_level_sensitivity(0.05), 100) == pytest.approx(0.001, rel=1e-15)


BAD_INPUTS = [
    ("regularization", lambda: sensitivity.logistic_regression_sensitivity(0.0, 10)),
    ("regularization", lambda: sensitivity.multinomial_logistic_regression_sensitivity(-1.0, 10)),
    ("regularization", lambda: sensitivity.softmax_slp_sensitivity(0.0, 10, 1.0)),
    ("regularization", lambda: sensitivity.huber_svm_sensitivity(math.nan, 10, 1.0)),
    ("regularization", lambda: sensitivity.fixed_label_logistic_regression_sensitivity(0.0, 10, 1.0)),
    ("feature_bound", lambda: sensitivity.logistic_regression_sensitivity(1.0, 10, 0.0)),
    ("feature_bound", lambda: sensitivity.multinomial_logistic_regression_sensitivity(1.0, 10, -2.0)),
    ("feature_bound", lambda: sensitivity.softmax_slp_sensitivity(1.0, 10, 0.0)),
    ("feature_bound", lambda: sensitivity.fixed_label_logistic_regression_sensitivity(1.0, 10, -1.0)),
    ("feature_bound", lambda: sensitivity.huber_svm_smoothness(0.0, 1.0, 0.1)),
    ("n", lambda: sensitivity.logistic_regression_sensitivity(1.0, 0)),
    ("n", lambda: sensitivity.psgd_bolt_on_sensitivity(1.0, 1.0, 2.5)),
    ("n", lambda: sensitivity.huber_svm_sensitivity(1.0, 0, 1.0)),
    ("n", lambda: sensitivity.fixed_label_logistic_regression_sensitivity(1.0, 0, 1.0)),
    ("num_public_negatives", lambda: sensitivity.fixed_label_logistic_regression_sensitivity(1.0, 10, 1.0, -1)),
    ("num_public_negatives", lambda: sensitivity.fixed_label_logistic_regression_sensitivity(1.0, 10, 1.0, 10)),
    ("num_public_negatives", lambda: sensitivity.fixed_label_logistic_regression_sensitivity(1.0, 10, 1.0, 2.5)),
    ("lipschitz", lambda: sensitivity.psgd_bolt_on_sensitivity(0.0, 1.0, 10)),
    ("strong_convexity", lambda: sensitivity.psgd_bolt_on_sensitivity(1.0, 0.0, 10)),
    ("radius", lambda: sensitivity.user_level_sensitivity(-1.0)),
    ("huber_width", lambda: sensitivity.huber_svm_smoothness(1.0, 1.0, 0.0)),
    ("num_classes", lambda: sensitivity.huber_svm_sensitivity(1.0, 10, 1.0, num_classes=0)),
    ("num_classes", lambda: sensitivity.multinomial_logistic_regression_sensitivity(1.0, 10, bound="seed")),
    ("num_classes", lambda: sensitivity.multinomial_logistic_regression_sensitivity(1.0, 10, num_classes=1)),
    ("bound", lambda: sensitivity.multinomial_logistic_regression_sensitivity(1.0, 10, bound="loose")),
    ("regularized_intercept", lambda: sensitivity.logistic_regression_sensitivity(1.0, 10, regularized_intercept=1)),
]


@pytest.mark.parametrize("parameter, call", BAD_INPUTS, ids=[f"{name}-{i}" for i, (name, _) in enumerate(BAD_INPUTS)])
def test_bad_input_raises_value_error_naming_the_parameter(parameter, call):
    with pytest.raises(ValueError, match=parameter):
        call()


def recursion_by_enumeration(n, batch_size, epochs, smoothness, strong_convexity, lipschitz, own_size):
    """δ_T of the PSGD contraction recursion, maximised by trying every batch of every epoch (a plain loop)."""
    nominal = min(batch_size, n)
    steps_per_epoch = -(-n // nominal)
    sizes = [nominal] * steps_per_epoch
    if own_size:
        sizes[-1] = n - (steps_per_epoch - 1) * nominal
    worst = 0.0
    for positions in itertools.product(range(steps_per_epoch), repeat=epochs):
        distance, step = 0.0, 0
        for epoch in range(epochs):
            for batch in range(steps_per_epoch):
                step += 1
                rate = min(1.0 / smoothness, 1.0 / (strong_convexity * step))
                distance *= 1.0 - rate * strong_convexity
                if positions[epoch] == batch:
                    distance += 2.0 * lipschitz * rate / sizes[batch]
        worst = max(worst, distance)
    return worst


@st.composite
def psgd_schedules(draw, max_n=200, max_epochs=6):
    n = draw(st.integers(1, max_n))
    batch_size = draw(st.one_of(st.integers(1, n), st.integers(1, 2 * n + 3)))
    epochs = draw(st.integers(1, max_epochs))
    strong_convexity = draw(st.floats(1e-3, 1e3))
    # β/Λ from 1 (no constant-step phase) to far beyond the number of steps (constant steps only).
    smoothness = strong_convexity * draw(st.one_of(st.just(1.0), st.floats(1.0, 1e4)))
    lipschitz = draw(st.floats(1e-3, 1e3))
    return n, batch_size, epochs, smoothness, strong_convexity, lipschitz


@given(psgd_schedules())
def test_psgd_contraction_recursion_never_exceeds_the_bolt_on_bound(schedule):
    n, batch_size, epochs, smoothness, strong_convexity, lipschitz = schedule
    recursion = sensitivity.psgd_contraction_sensitivity(n, batch_size, epochs, smoothness, strong_convexity, lipschitz)
    bound = sensitivity.psgd_bolt_on_sensitivity(lipschitz, strong_convexity, n)
    # Equality holds when b divides n and every step is in the 1/(Λt) phase; allow the cumulative product's rounding.
    assert recursion <= bound * (1 + 1e-12)
    nominal = min(batch_size, n)
    assert recursion <= 2 * lipschitz / (strong_convexity * nominal * -(-n // nominal)) * (1 + 1e-12)


@given(psgd_schedules(max_n=9, max_epochs=3), st.booleans())
def test_psgd_contraction_recursion_is_the_worst_batch_position(schedule, own_size):
    divisor = sensitivity.OWN_SIZE_BATCH_DIVISOR if own_size else sensitivity.NOMINAL_BATCH_DIVISOR
    recursion = sensitivity.psgd_contraction_sensitivity(*schedule, batch_divisor=divisor)
    assert recursion == pytest.approx(recursion_by_enumeration(*schedule, own_size), rel=1e-12, abs=0)


def test_averaging_a_ragged_batch_over_its_own_size_breaks_the_bound():
    # Issue 11's configuration: n = 21, b = 20, one epoch; the 1-record batch injects 20 times more.
    lipschitz = sensitivity.huber_svm_lipschitz(1.0)
    smoothness = sensitivity.huber_svm_smoothness(1.0, 5.0, 0.1)
    bound = sensitivity.psgd_bolt_on_sensitivity(lipschitz, 5.0, 21)
    own_size = sensitivity.psgd_contraction_sensitivity(21, 20, 1, smoothness, 5.0, lipschitz, batch_divisor="own-size")
    nominal = sensitivity.psgd_contraction_sensitivity(21, 20, 1, smoothness, 5.0, lipschitz)
    assert own_size > 5 * bound
    assert nominal <= bound
    # One record per step, every step at 1/(Λt): Wu et al.'s bound is attained.
    assert sensitivity.psgd_contraction_sensitivity(30, 1, 3, 5.0, 5.0, lipschitz) == pytest.approx(
        sensitivity.psgd_bolt_on_sensitivity(lipschitz, 5.0, 30), rel=1e-12
    )


@pytest.mark.parametrize(
    "arguments, match",
    [
        ((0, 1, 1, 2.0, 1.0, 1.0), "n"),
        ((5, 0, 1, 2.0, 1.0, 1.0), "batch_size"),
        ((5, 1, 0, 2.0, 1.0, 1.0), "epochs"),
        ((5, 1, 1, 0.5, 1.0, 1.0), "smoothness"),
        ((5, 1, 1, 2.0, 0.0, 1.0), "strong_convexity"),
        ((5, 1, 1, 2.0, 1.0, -1.0), "lipschitz"),
    ],
)
def test_psgd_contraction_recursion_refuses_bad_input(arguments, match):
    with pytest.raises(ValueError, match=match):
        sensitivity.psgd_contraction_sensitivity(*arguments)
    with pytest.raises(ValueError, match="batch_divisor"):
        sensitivity.psgd_contraction_sensitivity(5, 1, 1, 2.0, 1.0, 1.0, batch_divisor="mean")


@given(st.floats(1e-8, 1e3), st.floats(0.0, 1e-2), st.floats(1e-4, 1e2))
def test_approximate_minimizer_sensitivity_rounds_the_sum_up(exact, tolerance, regularization):
    reported = sensitivity.approximate_minimizer_sensitivity(exact, tolerance, regularization)
    with mpmath.workdps(50):
        truth = mpmath.mpf(exact) + 2 * mpmath.mpf(tolerance) / mpmath.mpf(regularization)
        assert mpmath.mpf(reported) >= truth
        assert mpmath.mpf(reported) <= truth * (1 + mpmath.mpf(2) ** -50)


def test_approximate_minimiser_of_a_quadratic_moves_at_most_the_reported_sensitivity():
    # J(θ) = (λ/2)‖θ − c‖² on a replace-one pair: minimisers c and c', any θ̂ with ‖∇J(θ̂)‖ = τ
    # lies on the sphere of radius τ/λ around them, so the worst pair attains Δ + 2τ/λ exactly.
    regularization, tolerance = 0.5, 1e-3
    centre, other = np.array([0.0, 0.0]), np.array([0.3, 0.4])
    exact = np.linalg.norm(centre - other)
    direction = (other - centre) / exact
    worst = np.linalg.norm((other + direction * tolerance / regularization) - (centre - direction * tolerance / regularization))
    reported = sensitivity.approximate_minimizer_sensitivity(exact, tolerance, regularization)
    assert worst == pytest.approx(reported, rel=1e-14) and worst <= reported


@pytest.mark.parametrize(
    "arguments, match",
    [((0.0, 1e-9, 1.0), "exact_sensitivity"), ((1.0, -1e-9, 1.0), "gradient_tolerance"),
     ((1.0, 1e-9, 0.0), "strong_convexity"), ((1.0, "1e-9", 1.0), "gradient_tolerance")],
)
def test_approximate_minimizer_sensitivity_refuses_bad_input(arguments, match):
    with pytest.raises(ValueError, match=match):
        sensitivity.approximate_minimizer_sensitivity(*arguments)


@given(st.floats(1e-3, 1e3), st.integers(1, 10**7), st.floats(1e-3, 1e3))
def test_fixed_label_logistic_sensitivity_is_its_formula_rounded_up(regularization, n, feature_bound):
    # m·max(2b, L)/(nλ), m = σ(L²/λ), L = √(b² + 1), at 50 digits: the double is above it and within 1e-13.
    with mpmath.workdps(50):
        lipschitz = mpmath.sqrt(mpmath.mpf(feature_bound) ** 2 + 1)
        largest_residual = 1 / (1 + mpmath.exp(-(lipschitz**2) / mpmath.mpf(regularization)))
        exact = largest_residual * max(2 * mpmath.mpf(feature_bound), lipschitz) / (n * mpmath.mpf(regularization))
        value = sensitivity.fixed_label_logistic_regression_sensitivity(regularization, n, feature_bound)
        assert exact <= value <= exact * (1 + mpmath.mpf(1e-13))
    # Never above the label-blind bound 2L/(nλ); below it by m/√2 at b = 1.
    assert value <= sensitivity.logistic_regression_sensitivity(regularization, n, feature_bound, regularized_intercept=True)


def refined_label_one_residual(regularization, n, feature_bound, num_negatives):
    # m̄ of the docstring's proof at 50 digits, iterated to its limit (itself a bound: every iterate is one).
    lam, bound, n1, n0 = mpmath.mpf(regularization), mpmath.mpf(feature_bound), n - num_negatives, num_negatives
    positive = negative = mpmath.mpf(1)
    for _ in range(100_000):
        reach = bound * bound * (n1 * positive + n0 * negative) / (n * lam)
        step = (min(positive, mpmath.sigmoid(reach + n0 * negative / (n * lam))),
                min(negative, mpmath.sigmoid(reach + n1 * positive / (n * lam))))
        if abs(step[0] - positive) < mpmath.mpf(10) ** -40 and abs(step[1] - negative) < mpmath.mpf(10) ** -40:
            return step[0]
        positive, negative = step
    raise AssertionError("the 50-digit reference did not converge")


@given(st.floats(1e-3, 1e3), st.integers(1, 10**7), st.floats(1e-3, 1e3), st.floats(0.0, 1.0))
def test_fixed_label_logistic_sensitivity_with_public_negatives_is_its_formula_rounded_up(regularization, n,
                                                                                          feature_bound, share):
    # m̄·max(2b, L)/(nλ), m̄ the limit of the proof's iteration, at 50 digits: the double is above it (so above
    # the exact iterate it stopped at) and within 1e-9; below the one-step m' = σ((b² + n₀/n)/λ) and the bound
    # without n₀ (m' < m since n₀ <= n − 1).
    num_public_negatives = int(share * (n - 1))
    with mpmath.workdps(50):
        bound, lam = mpmath.mpf(feature_bound), mpmath.mpf(regularization)
        factor = max(2 * bound, mpmath.sqrt(bound**2 + 1)) / (n * lam)
        exact = refined_label_one_residual(regularization, n, feature_bound, num_public_negatives) * factor
        one_step = mpmath.sigmoid((bound**2 + mpmath.mpf(num_public_negatives) / n) / lam) * factor
        value = sensitivity.fixed_label_logistic_regression_sensitivity(regularization, n, feature_bound,
                                                                        num_public_negatives)
        assert exact <= value <= exact * (1 + mpmath.mpf(1e-9))
        assert value <= one_step * (1 + mpmath.mpf(1e-13))
    assert value <= sensitivity.fixed_label_logistic_regression_sensitivity(regularization, n, feature_bound)


def test_fixed_label_logistic_sensitivity_closed_form():
    # b = 1, λ = 3, n = 10: σ(2/3)·2/30.
    expected = 1.0 / (1.0 + math.exp(-2.0 / 3.0)) * 2.0 / 30.0
    assert sensitivity.fixed_label_logistic_regression_sensitivity(3.0, 10, 1.0) == pytest.approx(expected, rel=1e-13)
    # n₀ = 4 public negatives of n = 10: below the one step σ((1 + 0.4)/3)·2/30 = 0.0410 (the iteration's limit
    # m̄ = 0.5663, 0.0378); None keeps the bound above exactly.
    with_negatives = sensitivity.fixed_label_logistic_regression_sensitivity(3.0, 10, 1.0, 4)
    assert with_negatives < 1.0 / (1.0 + math.exp(-1.4 / 3.0)) * 2.0 / 30.0
    assert with_negatives == pytest.approx(0.5662696776835 * 2.0 / 30.0, rel=1e-9)
    assert (sensitivity.fixed_label_logistic_regression_sensitivity(3.0, 10, 1.0, None)
            == sensitivity.fixed_label_logistic_regression_sensitivity(3.0, 10, 1.0))


# --- the weight-radius bound on the softmax gradient difference (issue 31) -----------------------------------


def _squared_softmax_differences(weights, inputs, other_label):
    """‖u x̃ᵀ − u′ x̃′ᵀ‖²_F for y = 0, y′ = other_label, batched over starts, with its gradient in W and in x̃, x̃′.

    weights (N, C, d), inputs (N, 2, d). With F = Σ_ij s_ij G_ij ⟨u_i, u_j⟩ (s = [[1, −1], [−1, 1]], G the inputs'
    Gram matrix), ∂F/∂u_i = 2 Σ_j s_ij G_ij u_j, pulled back to the logits by the softmax Jacobian diag(p) − ppᵀ.
    """
    logits = np.einsum("nkd,nid->nik", weights, inputs)
    probabilities = special.softmax(logits, axis=-1)
    residuals = probabilities.copy()
    residuals[:, 0, 0] -= 1.0
    residuals[:, 1, other_label] -= 1.0
    gram = np.einsum("nid,njd->nij", inputs, inputs)
    residual_products = np.einsum("nik,njk->nij", residuals, residuals)
    signs = np.array([[1.0, -1.0], [-1.0, 1.0]])
    value = np.einsum("nij,nij,ij->n", gram, residual_products, signs)
    residual_gradient = 2.0 * np.einsum("ij,nij,njk->nik", signs, gram, residuals)
    logit_gradient = probabilities * (residual_gradient
                                      - np.sum(probabilities * residual_gradient, axis=-1, keepdims=True))
    weight_gradient = np.einsum("nik,nid->nkd", logit_gradient, inputs)
    input_gradient = (2.0 * np.einsum("ij,nij,njd->nid", signs, residual_products, inputs)
                      + np.einsum("nkd,nik->nid", weights, logit_gradient))
    return value, weight_gradient, input_gradient


def _softmax_difference_search_objective(parameters, radius, bound, num_classes, intercept, other_label):
    """F and ∂F at W = R·V/‖V‖_F (on the R-sphere) and x = c·tanh(‖v‖)·v/‖v‖ (inside the c-ball), x, x' in a plane.

    Two inputs span at most a plane, and only W's action on it matters, so x, x' ∈ R² (plus the constant 1)
    and W ∈ R^{C×d} lose nothing. The maps are smooth, so L-BFGS and Adam apply; every point is feasible.
    """
    count = parameters.shape[0]
    width = 3 if intercept else 2
    directions = parameters[:, :num_classes * width].reshape(count, num_classes, width)
    raw = parameters[:, num_classes * width:].reshape(count, 2, 2)
    direction_norm = np.linalg.norm(directions.reshape(count, -1), axis=1)[:, None, None]
    weights = radius * directions / direction_norm
    raw_norm = np.maximum(np.linalg.norm(raw, axis=-1, keepdims=True), 1e-12)
    shrink = np.tanh(raw_norm) / raw_norm
    features = bound * shrink * raw
    inputs = np.concatenate([features, np.ones((count, 2, 1))], axis=-1) if intercept else features
    value, weight_gradient, input_gradient = _squared_softmax_differences(weights, inputs, other_label)
    direction_gradient = radius / direction_norm * (
        weight_gradient - np.sum(weight_gradient * directions, axis=(1, 2), keepdims=True) / direction_norm**2
        * directions)
    feature_gradient = input_gradient[..., :2]
    shrink_slope = ((1.0 - np.tanh(raw_norm) ** 2) - shrink) / raw_norm
    raw_gradient = bound * (shrink * feature_gradient
                            + shrink_slope / raw_norm * np.sum(feature_gradient * raw, axis=-1, keepdims=True) * raw)
    return value, np.concatenate([direction_gradient.reshape(count, -1), raw_gradient.reshape(count, -1)], axis=1)


def _adversarial_difference(radius, bound, num_classes, intercept, rng, starts=64, steps=150):
    """The largest ‖∇ℓ(W; x, y) − ∇ℓ(W; x', y')‖_F a search finds over W, x, x' and labels (a lower bound on the sup).

    Labels: permuting W's rows maps any pair (y, y') to (0, 0) or (0, 1), so these two cover all of them.
    For each: Adam ascent from ``starts`` random points for ``steps`` steps, all starts at once, then L-BFGS from
    the best three. Measured: the defaults reach the grid's values below from 20 of 20 seeds at its hardest point
    (C = 10, c = 2, R = 5; 16 starts find a local maximum 6 % lower from 1 seed in 6), and an independent torch
    search (Adam from 256 starts) agrees to 3 digits at every grid point.
    """
    width = 3 if intercept else 2
    size = num_classes * width + 4
    best = 0.0
    for other_label in (0, 1):
        def objective(parameters):
            return _softmax_difference_search_objective(parameters, radius, bound, num_classes, intercept,
                                                        other_label)
        parameters = rng.normal(size=(starts, size))
        parameters[:, num_classes * width:] *= 3.0
        first_moment = np.zeros_like(parameters)
        second_moment = np.zeros_like(parameters)
        learning_rate = 0.1
        for step in range(1, steps + 1):
            _, gradient = objective(parameters)
            first_moment = 0.9 * first_moment + 0.1 * gradient
            second_moment = 0.999 * second_moment + 0.001 * gradient**2
            parameters += learning_rate * (first_moment / (1 - 0.9**step)) / (
                np.sqrt(second_moment / (1 - 0.999**step)) + 1e-8)
            if step == steps * 2 // 3:
                learning_rate = 0.02
        values, _ = objective(parameters)
        best = max(best, float(values.max()))
        for index in np.argsort(values)[-3:]:
            polished = optimize.minimize(lambda point: tuple(-part[0] for part in objective(point[None])),
                                         parameters[index], jac=True, method="L-BFGS-B")
            best = max(best, -float(polished.fun))
    return math.sqrt(best)


@examples(0.1)
@given(st.floats(0.02, 12.0), st.floats(0.3, 3.0), st.integers(2, 6), st.booleans(), st.integers(0, 2**32 - 1))
def test_softmax_gradient_difference_bound_is_never_exceeded_by_an_adversarial_search(radius, bound, num_classes,
                                                                                     intercept, seed):
    # Every W on the R-sphere, x, x' in the c-ball and every label pair that the search finds.
    limit = sensitivity.softmax_gradient_difference_bound(radius, bound, num_classes, regularized_intercept=intercept)
    found = _adversarial_difference(radius, bound, num_classes, intercept, np.random.default_rng(seed), 4, 100)
    assert found <= limit
    assert limit <= 2.0 * math.sqrt(2.0) * math.hypot(bound, 1.0 if intercept else 0.0)


def _softmax_difference_parts(weights, inputs, labels):
    """p, p', u, u' and ‖u x̃ᵀ − u′ x̃′ᵀ‖²_F for one W (C, d), inputs (2, d) and labels (y, y')."""
    probabilities = special.softmax(inputs @ weights.T, axis=1)
    residuals = probabilities - np.eye(weights.shape[0])[list(labels)]
    difference = np.outer(residuals[0], inputs[0]) - np.outer(residuals[1], inputs[1])
    return probabilities, residuals, float(np.sum(difference**2))


@st.composite
def softmax_difference_points(draw):
    """R, c, C, the intercept flag, W on the R-sphere and x, x' in the c-ball, with labels.

    Half the draws take the shape the search's maximisers have: W pushes the other label's logit up at x
    and the own label's up at x' (along x̃ − x̃'), the remaining classes level, x, x' on the sphere.
    """
    radius = draw(st.floats(0.02, 12.0))
    bound = draw(st.floats(0.3, 3.0))
    num_classes = draw(st.integers(3, 12))
    intercept = draw(st.booleans())
    shaped = draw(st.booleans())
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    labels = (0, int(rng.integers(0, 2)))
    features = rng.normal(size=(2, 2))
    norms = np.linalg.norm(features, axis=1, keepdims=True)
    scale = np.ones_like(norms) if shaped else rng.random(norms.shape) ** 0.5
    features = bound * scale * features / norms
    inputs = with_constant_column(features) if intercept else features
    noise = rng.normal(size=(num_classes, inputs.shape[1]))
    if shaped:
        push = np.zeros(num_classes)
        push[labels[1] if labels[1] != labels[0] else 1] += 1.0
        push[labels[0]] -= 1.0 if labels[1] != labels[0] else 0.0
        common = np.zeros(num_classes)
        common[[0, 1]] = 1.0
        common -= common.mean()
        noise = (rng.normal() * np.outer(push, inputs[0] - inputs[1]) + rng.normal() * np.outer(common, inputs.sum(0))
                 + 0.1 * rng.random() * noise)
    weights = radius * noise / np.linalg.norm(noise)
    return radius, bound, num_classes, intercept, weights, inputs, labels


@examples(1.0)
@given(softmax_difference_points())
def test_softmax_gradient_difference_bound_holds_at_drawn_weights_and_inputs(point):
    radius, bound, num_classes, intercept, weights, inputs, labels = point
    _, _, squared = _softmax_difference_parts(weights, inputs, labels)
    limit = sensitivity.softmax_gradient_difference_bound(radius, bound, num_classes, regularized_intercept=intercept)
    assert math.sqrt(squared) <= limit


@examples(1.0)
@given(softmax_difference_points())
def test_softmax_difference_proof_steps_hold_pointwise(point):
    # Steps (ii), (iv), (vi) and (vii) of the proof at one (W, x, x'), each an inequality that could fail.
    radius, bound, num_classes, intercept, weights, inputs, labels = point
    probabilities, residuals, squared = _softmax_difference_parts(weights, inputs, labels)
    offset = 1.0 if intercept else 0.0
    largest, smallest, residual_squared = sensitivity._softmax_ranges(radius * math.hypot(bound, math.sqrt(offset)),
                                                                      num_classes)
    slack = 1e-12
    assert probabilities.max() <= largest + slack and probabilities.min() >= smallest - slack
    assert np.sum(residuals**2, axis=1).max() <= residual_squared + slack
    inner = float(residuals[0] @ residuals[1])
    if labels[0] != labels[1]:
        assert inner <= largest - 2.0 * smallest + slack
    # ⟨u, u'⟩ = (‖u‖² + ‖u'‖² − ‖u − u'‖²)/2 <= U − ‖u − u'‖²/2, which (vii) couples to ‖u − u'‖'s bound.
    assert inner <= residual_squared - 0.5 * float(np.sum((residuals[0] - residuals[1]) ** 2)) + slack
    distance = float(np.linalg.norm(inputs[0] - inputs[1]))
    moved = float(np.linalg.norm(probabilities[0] - probabilities[1]))
    assert moved <= min(largest, 0.5) * radius * distance + slack
    norms = np.sum(residuals**2, axis=1)
    coupled = ((bound**2 + offset) * float(np.sum((residuals[0] - residuals[1]) ** 2)) + distance**2 * inner
               + bound**2 * max(0.0, inner - norms.min()))
    assert squared <= coupled * (1 + 1e-12) + slack


@examples(0.2)
@given(st.floats(0.02, 12.0), st.floats(0.3, 3.0), st.integers(3, 50), st.sampled_from([0.0, 1.0]))
def test_distance_coupled_bound_is_above_its_formula_at_every_distance_and_residual_gap(radius, bound, num_classes,
                                                                                        offset):
    # Step (viii)'s intervals and kinks against step (vii)'s bounds evaluated on a fine grid of δ and
    # Δ = ‖u − u'‖² (both cases, each the min of its G and L): at least every value, within 1 % of the largest.
    squared_norm, spread = bound**2 + offset, bound**2
    largest, smallest, residual_squared = sensitivity._softmax_ranges(radius * math.sqrt(squared_norm), num_classes)
    alignment, floor = largest - 2.0 * smallest, (1.0 - largest) ** 2 * num_classes / (num_classes - 1)
    distance = np.linspace(0.0, 2.0 * bound, 601)[:, None]
    moved = min(largest, 0.5) * radius * distance
    negative = np.minimum(np.maximum(0.5 * distance**2 - offset, 0.0), max(spread - offset, 0.0))
    positive = np.maximum(squared_norm - 0.5 * distance**2, 0.0)
    share = np.linspace(0.0, 1.0, 401)[None, :]
    gap = share * (math.sqrt(2.0) + moved) ** 2
    inner = np.minimum(alignment, residual_squared - 0.5 * gap)
    different = np.minimum(2.0 * squared_norm * residual_squared + np.maximum(2.0 * positive * (2.0 * largest - smallest),
                                                                              2.0 * negative * residual_squared),
                           squared_norm * gap + distance**2 * inner + spread * np.maximum(inner - floor, 0.0))
    gap = share * moved**2
    same = np.minimum(2.0 * squared_norm * residual_squared + 2.0 * negative * residual_squared,
                      squared_norm * gap + distance**2 * (residual_squared - 0.5 * gap)
                      + spread * np.sqrt(residual_squared * gap))
    formula = max(different.max(), same.max())
    interval = sensitivity._distance_coupled_squared_difference_bound(radius, bound, offset, num_classes)
    assert formula <= interval * (1.0 + 1e-12)
    assert interval <= 1.01 * formula


@given(st.floats(1e-3, 30.0), st.integers(2, 12), st.integers(0, 2**32 - 1))
def test_softmax_ranges_hold_on_the_logit_sphere(logit_radius, num_classes, seed):
    # (ii)/(vi): p̲ <= p_y and ‖p − e_y‖² <= U for logits on the ρ-sphere, including the shapes that attain
    # them (one class low, the rest two-valued), drawn at random otherwise.
    rng = np.random.default_rng(seed)
    largest, smallest, residual_squared = sensitivity._softmax_ranges(logit_radius, num_classes)
    directions = rng.normal(size=(64, num_classes))
    raised = rng.integers(1, num_classes, size=64)
    shaped = np.where(np.arange(num_classes)[None, :] < raised[:, None], rng.normal(), rng.normal(size=(64, 1)))
    shaped[:, 0] = -np.abs(rng.normal(size=64)) * 3.0
    logits = np.vstack([directions, shaped])
    logits -= logits.mean(axis=1, keepdims=True)
    logits *= logit_radius / np.linalg.norm(logits, axis=1, keepdims=True)
    probabilities = special.softmax(logits, axis=1)
    residual = np.sum(probabilities**2, axis=1) - 2.0 * probabilities[:, 0] + 1.0
    assert probabilities[:, 0].min() >= smallest * (1 - 1e-9)
    assert probabilities.max() <= largest * (1 + 1e-9)
    assert residual.max() <= residual_squared * (1 + 1e-9)
    # Tighter than (ii) and (iii) alone once the radius matters, and still a range.
    closed_smallest = 1.0 / (1.0 + (num_classes - 1) * math.exp(min(math.sqrt(2.0) * logit_radius, 700.0)))
    assert closed_smallest <= smallest <= 1.0 / num_classes <= largest
    assert residual_squared <= (1 - closed_smallest) * (1 - closed_smallest + largest)


# (C, c, R, the supremum the search reaches, the share of the bound it reaches, rounded down), intercept as input.
# The target is 0.95 of a proven bound at every point: met for C = 2 (the two-class relaxation, 0.97 or
# more), not for C = 10 (0.73 to 0.9997 with step (vii) coupling ⟨u, u'⟩ to ‖u − u'‖, 0.71 to 0.9995 without,
# 0.68 to 0.97 before step (vii); R = 0.1, R → 0, R = 0.5 and c = 2, R = 0.5 reach it). The two-variable exhaustive search below finds the same suprema
# wherever its family holds the maximiser: the shortfall is the bound's, not the search's.
SOFTMAX_DIFFERENCE_GRID = [
    (2, 1.0, 0.001, 2.0000, 0.99),
    (10, 1.0, 0.001, 2.0000, 0.99),
    (2, 0.5, 0.1, 1.5860, 0.99),
    (2, 0.5, 0.5, 1.6865, 0.99),
    (2, 0.5, 1.0, 1.8949, 0.99),
    (2, 0.5, 2.0, 2.2753, 0.99),
    (2, 0.5, 5.0, 2.7885, 0.99),
    (2, 1.0, 0.1, 2.0099, 0.99),
    (2, 1.0, 0.5, 2.1982, 0.99),
    (2, 1.0, 1.0, 2.5397, 0.99),
    (2, 1.0, 2.0, 3.0654, 0.99),
    (2, 1.0, 5.0, 3.6417, 0.99),
    (2, 2.0, 0.1, 3.2006, 0.99),
    (2, 2.0, 0.5, 3.7898, 0.97),
    (2, 2.0, 1.0, 4.5529, 0.99),
    (2, 2.0, 2.0, 5.3689, 0.99),
    (2, 2.0, 5.0, 6.0089, 0.99),
    (10, 0.5, 0.1, 1.5821, 0.99),
    (10, 0.5, 0.5, 1.6013, 0.97),
    (10, 0.5, 1.0, 1.6437, 0.92),
    (10, 0.5, 2.0, 1.7869, 0.75),
    (10, 0.5, 5.0, 2.4966, 0.82),
    (10, 1.0, 0.1, 2.0020, 0.99),
    (10, 1.0, 0.5, 2.0377, 0.96),
    (10, 1.0, 1.0, 2.1162, 0.87),
    (10, 1.0, 2.0, 2.4030, 0.73),
    (10, 1.0, 5.0, 3.4144, 0.87),
    (10, 2.0, 0.1, 3.8331, 0.98),
    (10, 2.0, 0.5, 3.9568, 0.96),
    (10, 2.0, 1.0, 4.0744, 0.83),
    (10, 2.0, 2.0, 4.5890, 0.78),
    (10, 2.0, 5.0, 5.8962, 0.93),
]


# Two points (one per C, at DP-Helmet's c = R = 1) run in the default set; the whole grid (~1 s of CPU a point) in
# the slow set, which CI also runs.
_DEFAULT_SET_POINTS = {(2, 1.0, 1.0), (10, 1.0, 1.0)}


@pytest.mark.parametrize("num_classes, bound, radius, supremum, reached", [
    point if point[:3] in _DEFAULT_SET_POINTS else pytest.param(*point, marks=pytest.mark.slow)
    for point in SOFTMAX_DIFFERENCE_GRID])
def test_how_much_of_the_softmax_gradient_difference_bound_a_search_reaches(num_classes, bound, radius, supremum,
                                                                         reached):
    # The search finds the recorded supremum (to 1e-4), never more than the bound, and the recorded share of it:
    # a weaker search, or a looser bound, fails here.
    limit = sensitivity.softmax_gradient_difference_bound(radius, bound, num_classes)
    found = _adversarial_difference(radius, bound, num_classes, True, np.random.default_rng(31))
    assert found == pytest.approx(supremum, abs=1e-4)
    assert reached * limit <= found <= limit


def _swap_symmetric_logits(length, angle, scale, radius, bound, num_classes):
    """Logits z, z' (last axis: C classes) of the swap-symmetric family at δ = ``length``, on the grid's axes.

    ‖x‖ = ‖x'‖ = c with the intercept input, so x̃ + x̃' ⟂ x̃ − x̃' and W = (z + z')(x̃ + x̃')ᵀ/‖x̃ + x̃'‖²
    + (z − z')(x̃ − x̃')ᵀ/δ² maps x̃, x̃' to z, z' with ‖W‖²_F = ‖z + z'‖²/(4c'² − δ²) + ‖z − z'‖²/δ².
    z = (α, β, γ, …, γ) and z' = (β, α, γ, …, γ) with α + β + (C − 2)γ = 0: ‖z + z'‖² = 2C(C − 2)γ² and
    ‖z − z'‖² = 2(α − β)², so ``angle`` splits ‖W‖_F = ``scale``·R between γ and α − β.
    """
    squared_norm = bound**2 + 1.0
    level = scale * radius * np.cos(angle) * np.sqrt((4.0 * squared_norm - length**2) / (2.0 * num_classes
                                                                                          * (num_classes - 2)))
    gap = scale * radius * np.sin(angle) * length / math.sqrt(2.0)
    level, gap = np.broadcast_arrays(level, gap)
    label_sum = -(num_classes - 2) * level
    first = np.concatenate([((label_sum + gap) / 2)[..., None], ((label_sum - gap) / 2)[..., None],
                            np.repeat(level[..., None], num_classes - 2, axis=-1)], axis=-1)
    return first, first[..., [1, 0] + list(range(2, num_classes))]


def _swap_symmetric_difference(radius, bound, num_classes, points=300):
    """The largest ‖D‖_F over the swap-symmetric family (labels 0, 1): a dense grid of (δ, split, scale), then
    Nelder–Mead from its best point; the maximiser is rebuilt as W, x, x' and its ‖D‖_F computed directly.

    Two variables carry the family at ‖W‖_F = R, so the grid is exhaustive where the general search is not; the
    general search's maximisers at C = 10, c <= 1 lie in it.
    """
    squared_norm = bound**2 + 1.0

    def squared_difference(length, angle, scale):
        first, second = _swap_symmetric_logits(length, angle, scale, radius, bound, num_classes)
        residual = special.softmax(first, axis=-1)
        residual[..., 0] -= 1.0
        other = special.softmax(second, axis=-1)
        other[..., 1] -= 1.0
        inner = np.sum(residual * other, axis=-1)
        # a = a' = c'², t = c'² − δ²/2, and ‖u'‖ = ‖u‖ by the swap.
        return 2.0 * squared_norm * np.sum(residual**2, axis=-1) - (2.0 * squared_norm - length**2) * inner

    length = np.linspace(2.0 * bound / points, 2.0 * bound, points)[:, None, None]
    angle = np.linspace(0.0, 2.0 * math.pi, points, endpoint=False)[None, :, None]
    scale = np.linspace(0.25, 1.0, 4)[None, None, :]
    values = squared_difference(length, angle, scale)
    best = np.unravel_index(np.argmax(values), values.shape)
    start = np.array([length.ravel()[best[0]], angle.ravel()[best[1]], scale.ravel()[best[2]]])

    def clipped(point):
        return np.array([np.clip(point[0], 1e-9, 2.0 * bound), point[1], np.clip(point[2], 0.0, 1.0)])

    polished = optimize.minimize(lambda point: -float(squared_difference(*clipped(point))), start,
                                 method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-13, "maxiter": 2000})
    length, angle, scale = clipped(polished.x) if -polished.fun > values.max() else start
    first, second = _swap_symmetric_logits(np.array(length), np.array(angle), scale, radius, bound, num_classes)
    # x = c(cos ψ, sin ψ), x' = c(cos ψ, −sin ψ) with ‖x − x'‖ = 2c·sin ψ = δ.
    half_angle = math.asin(min(length / (2.0 * bound), 1.0))
    inputs = with_constant_column(bound * np.array([[math.cos(half_angle), math.sin(half_angle)],
                                                    [math.cos(half_angle), -math.sin(half_angle)]]))
    weights = (np.outer(first + second, inputs[0] + inputs[1]) / np.sum((inputs[0] + inputs[1]) ** 2)
               + np.outer(first - second, inputs[0] - inputs[1]) / np.sum((inputs[0] - inputs[1]) ** 2))
    _, _, squared = _softmax_difference_parts(weights, inputs, (0, 1))
    assert np.linalg.norm(weights) <= radius * (1.0 + 1e-12)
    assert np.allclose(inputs @ weights.T, np.stack([first, second]), atol=1e-9)
    return math.sqrt(squared)


# C = 10 points of the grid above whose maximiser (of the general search) is in the swap-symmetric family.
_SWAP_SYMMETRIC_POINTS = [point for point in SOFTMAX_DIFFERENCE_GRID
                          if point[0] == 10 and (point[1] <= 1.0 or point[2] == 5.0) and point[2] > 0.001]


@pytest.mark.parametrize("num_classes, bound, radius, supremum, reached", [
    point if point[:3] == (10, 1.0, 1.0) else pytest.param(*point, marks=pytest.mark.slow)
    for point in _SWAP_SYMMETRIC_POINTS])
def test_a_two_variable_exhaustive_search_reaches_the_general_searchs_supremum(num_classes, bound, radius, supremum,
                                                                             reached):
    # The general search (3C + 4 variables, multi-start) and a dense grid over a two-variable family agree to 1e-4:
    # neither search is the loose side of the reach recorded above; the bound is (issue 31).
    found = _swap_symmetric_difference(radius, bound, num_classes)
    assert found == pytest.approx(supremum, abs=1e-4)
    assert found <= sensitivity.softmax_gradient_difference_bound(radius, bound, num_classes)


@pytest.mark.parametrize("num_classes, bound, radius", [(10, 1.0, 0.1), (10, 0.5, 0.1)])
def test_the_search_refutes_a_softmax_difference_bound_a_few_percent_too_small(num_classes, bound, radius):
    # Where the bound is nearly attained, 0.97 of it (a constant such as κ or H taken a little too small would do
    # as much) is exceeded by the search: the reach tests above can tell a too-small bound from a sound one.
    limit = sensitivity.softmax_gradient_difference_bound(radius, bound, num_classes)
    found = _adversarial_difference(radius, bound, num_classes, True, np.random.default_rng(31), 16, 100)
    assert 0.97 * limit < found <= limit


@given(st.floats(0.01, 0.99), st.floats(0.01, 0.99), st.floats(-8.0, 8.0), st.floats(-8.0, 8.0), st.floats(0.0, 4.0),
       st.floats(0.0, 4.0), st.floats(0.2, 3.0), st.sampled_from([0.0, 1.0]), st.integers(0, 2**32 - 1))
def test_two_class_box_bounds_hold_at_every_point_of_the_box(length_start, length_end, difference, total,
                                                             difference_width, total_width, bound, offset, seed):
    # The branch and bound is sound only if each box's interval bound is at least Ψ at every point in it
    # (δ within (0, 2c), where every point is feasible at this radius).
    length_start, length_end = sorted((2.0 * bound * length_start, 2.0 * bound * length_end))
    lower = np.array([[length_start, difference, total]])
    upper = np.array([[length_end, difference + difference_width, total + total_width]])
    points = lower + np.random.default_rng(seed).random((200, 3)) * (upper - lower)
    points = np.vstack([points, lower, upper])
    values = sensitivity._two_class_relaxation_values(points, 1e9, bound, offset)
    assert values.min() > 0.0
    assert values.max() <= sensitivity._two_class_relaxation_upper(lower, upper, bound, offset)[0] * (1.0 + 1e-12)


def test_two_class_bound_is_below_the_general_one_and_refuted_without_the_intercept():
    # C = 2 is the minimum of both bounds; the relaxation with c' = c (the bias input left out) is wrong for
    # inputs with an intercept, and the search shows it.
    assert sensitivity.softmax_gradient_difference_bound(1.0, 1.0, 2) < 0.72 * 3.5744
    wrong = math.sqrt(2.0 * sensitivity._two_class_squared_difference_bound(1.0, 1.0, 0.0))
    assert _adversarial_difference(1.0, 1.0, 2, True, np.random.default_rng(5)) > 1.4 * wrong


def test_the_adversarial_search_refutes_wrong_softmax_difference_bounds():
    # Two plausible mistakes the search must catch: the R → 0 value √2·c' (the weights ignored), and the R-free
    # 2√2·c with the bias input left out (DP-Helmet's code uses c for c').
    assert _adversarial_difference(1.0, 1.0, 10, True, np.random.default_rng(5)) > 1.05 * 2.0
    assert _adversarial_difference(5.0, 1.0, 2, True, np.random.default_rng(5)) > 1.25 * 2.0 * math.sqrt(2.0)
    assert sensitivity.softmax_gradient_difference_bound(1e6, 1.0, 10) == 2.0 * math.sqrt(2.0) * math.hypot(1.0, 1.0)


@given(st.floats(0.3, 6.0), st.integers(3, 5), st.integers(0, 2**32 - 1))
def test_single_record_minimisers_move_at_most_the_radius_bound(regularization, num_classes, seed):
    # n = 1, two labels apart, x and x' drawn on the unit sphere: the minimisers' distance against bound="radius".
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(2, 2))
    features /= np.linalg.norm(features, axis=1, keepdims=True)
    inputs = with_constant_column(features)
    minimisers = [newton_minimise(multinomial_logistic_objective(inputs[i:i + 1], np.array([label]), num_classes,
                                                                 regularization), num_classes * 3)
                  for i, label in ((0, 0), (1, 1))]
    limit = sensitivity.multinomial_logistic_regression_sensitivity(regularization, 1, 1.0, num_classes=num_classes,
                                                                    regularized_intercept=True, bound="radius")
    assert np.linalg.norm(minimisers[0] - minimisers[1]) <= limit + MEASUREMENT_SLACK


def test_radius_bounds_need_their_arguments():
    with pytest.raises(ValueError, match="num_classes"):
        sensitivity.multinomial_logistic_regression_sensitivity(1.0, 10, bound="radius")
    with pytest.raises(ValueError, match="projection_radius and num_classes"):
        sensitivity.softmax_slp_sensitivity(1.0, 10, 1.0, projection_radius=1.0)
    with pytest.raises(ValueError, match="weight_radius"):
        sensitivity.softmax_gradient_difference_bound(0.0, 1.0, 10)
    # DP-Helmet's defaults (c = 1, R = 1, Λ = 1, C = 10): 0.60 of the R-free bound (0.63 before (vii) coupled
    # ⟨u, u'⟩ to ‖u − u'‖, 0.70 before step (vii)).
    ratio = sensitivity.softmax_slp_sensitivity(1.0, 50, 1.0, projection_radius=1.0, num_classes=10) / \
        sensitivity.softmax_slp_sensitivity(1.0, 50, 1.0)
    assert ratio == pytest.approx(0.6017, abs=1e-4)
    # C = 2: the two-class relaxation, 0.64 of it (0.89 with the general bound alone).
    ratio = sensitivity.softmax_slp_sensitivity(1.0, 50, 1.0, projection_radius=1.0, num_classes=2) / \
        sensitivity.softmax_slp_sensitivity(1.0, 50, 1.0)
    assert ratio == pytest.approx(0.6352, abs=1e-4)


@pytest.mark.parametrize("regularization", [1.0, 4.0])
def test_radius_bound_holds_over_a_grid_of_worst_looking_pairs(regularization):
    # Three records (two fixed, the third replaced), x on the unit circle at 12 angles
    # against x' = −x and x' = x, every label pair of 3 classes: exact minimisers never move more than the
    # refined-radius bound (the refinement R ← √U(R)·c'/λ is the step most worth checking). Measured: 0.41 and
    # 0.70 of it at λ = 1 and 4 (24 angles).
    limit = sensitivity.multinomial_logistic_regression_sensitivity(regularization, 3, 1.0, num_classes=3,
                                                                    regularized_intercept=True, bound="radius")
    largest = 0.0
    base = with_constant_column(np.array([[0.6, 0.8], [-1.0, 0.0]]))
    for angle in np.linspace(0.0, 2.0 * math.pi, 12, endpoint=False):
        x = np.array([math.cos(angle), math.sin(angle)])
        for replacement, (first_label, second_label) in itertools.product((x, -x), itertools.permutations(range(3), 2)):
            minimisers = []
            for feature, label in ((x, first_label), (replacement, second_label)):
                inputs = np.vstack([base, with_constant_column(feature[None, :])])
                objective = multinomial_logistic_objective(inputs, np.array([0, 1, label]), 3, regularization)
                minimisers.append(newton_minimise(objective, 9))
            largest = max(largest, float(np.linalg.norm(minimisers[0] - minimisers[1])))
    assert largest <= limit + MEASUREMENT_SLACK
