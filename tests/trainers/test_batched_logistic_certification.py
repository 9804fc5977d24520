"""The batched trainer's gradient certificates: proven against ball arithmetic, and never lost.

A certificate ‖∇J_b(θ_b)‖₂ <= τ is what the output-perturbation sensitivity Δ + 2τ/λ rests on, so
both rounding allowances (float64, :func:`_gradient_bound`, and long double,
:func:`_long_double_gradient_bounds`) are checked against the exact gradient norm enclosed by
python-flint's arb at 200 bits, with the exact weights m_i/Σ m_j, on drawn problems, models
and parameters (not only minimisers).
"""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

import trainers.batched_logistic as batched_logistic
from trainers.batched_logistic import BatchedLogisticRegression, logistic_objective

from tests.profiles import examples

flint = pytest.importorskip("flint")


def _exact_gradient_norms(parameters, features, labels, membership, regularization):
    """arb enclosures of ‖∇J_b(θ_b)‖₂ for every row of ``membership`` (exact weights and floats)."""
    arb = flint.arb
    enclosures = []
    with flint.ctx.workprec(200):
        for theta, row in zip(parameters, membership):
            theta = np.atleast_2d(theta)  # binary: one row of logit weights
            total = arb(0)
            for value in row:
                total += arb(float(value))
            gradient = [[arb(regularization) * arb(float(t)) for t in theta_row] for theta_row in theta]
            for x, y, weight in zip(features, labels, row):
                if weight == 0:
                    continue
                logits = [sum((arb(float(t)) * arb(float(v)) for t, v in zip(theta_row, x)), arb(0)) for theta_row in theta]
                if len(theta) == 1:
                    residuals = [1 / (1 + (-logits[0]).exp()) - int(y)]
                else:
                    exponentials = [z.exp() for z in logits]
                    normaliser = sum(exponentials, arb(0))
                    residuals = [e / normaliser - (1 if c == y else 0) for c, e in enumerate(exponentials)]
                share = arb(float(weight)) / total
                for c, residual in enumerate(residuals):
                    for j, v in enumerate(x):
                        gradient[c][j] += share * residual * arb(float(v))
            enclosures.append(sum((g * g for row_ in gradient for g in row_), arb(0)).sqrt())
    return enclosures


@st.composite
def problems(draw):
    num_classes = draw(st.sampled_from([2, 3]))
    n = draw(st.integers(2, 9))
    d = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    features = rng.uniform(-1, 1, size=(n, d)) * draw(st.sampled_from([0.1, 1.0, 30.0]))
    augmented = np.hstack([features, np.ones((n, 1))])
    labels = rng.integers(0, num_classes, size=n)
    membership = rng.random((3, n)) < 0.5
    membership[:, 0] = True
    if draw(st.booleans()):
        membership = membership * rng.uniform(0.1, 3.0, size=membership.shape)
    scale = draw(st.sampled_from([0.0, 1.0, 50.0, 2000.0]))
    shape = (3, d + 1) if num_classes == 2 else (3, num_classes, d + 1)
    parameters = rng.normal(size=shape) * scale
    regularization = draw(st.sampled_from([1e-4, 0.01, 1.0]))
    own = draw(st.booleans())
    return num_classes, augmented, labels, membership, parameters, regularization, own


@examples(0.4)
@given(problems())
def test_float64_and_long_double_bounds_contain_the_exact_gradient_norm(problem):
    num_classes, augmented, labels, membership, parameters, regularization, own = problem
    weights = torch.as_tensor(membership, dtype=torch.float64)
    weights = weights / weights.sum(dim=1, keepdim=True)
    features, label_tensor = torch.as_tensor(augmented), torch.as_tensor(labels)
    if own:  # every model's records gathered, as the trainer does for clients
        order = torch.arange(len(labels)).expand(3, -1)
        features, label_tensor = features[order], label_tensor[order]
    objective = logistic_objective(features, label_tensor, weights, regularization, num_classes)
    theta = torch.as_tensor(parameters)
    _, probabilities = objective.evaluate(theta)
    gradient = objective.gradient(theta, probabilities)
    _, float64_bounds = batched_logistic._gradient_bound(objective, theta, probabilities, gradient, certify=True)
    long_double_bounds = batched_logistic._long_double_gradient_bounds(objective, theta, torch.arange(3))
    exact = _exact_gradient_norms(parameters, augmented, labels, membership, regularization)
    for enclosure, float64_bound, long_double_bound in zip(exact, float64_bounds, long_double_bounds):
        assert enclosure <= float(float64_bound)
        assert enclosure <= float(long_double_bound)


def test_small_feature_bound_and_regularisation_certify_instead_of_failing():
    # b = 0.1, λ = 1e-4: ‖θ‖ ≈ 49 on 10⁵ records makes the float64 allowance 2γ_k·Σ w‖x̃‖(‖θ‖‖x̃‖ + ...)
    # alone exceed τ = 1e-9, so float64 Newton could never certify: the trainer used to run its
    # 400 iterations and raise "could not certify ... (reached 1.18e-09 ...)".
    rng = np.random.default_rng(0)
    n, bound, regularization, tolerance = 100_000, 0.1, 1e-4, 1e-9
    labels = rng.integers(0, 2, size=n)
    features = rng.normal(size=(2, 2))[labels] + 0.3 * rng.normal(size=(n, 2))
    features *= bound / np.linalg.norm(features, axis=1).max()
    membership = np.ones((2, n), dtype=bool)
    membership[1, 0] = False
    model = BatchedLogisticRegression(regularization=regularization, feature_bound=bound, tol=tolerance, max_iter=400)
    model.fit(features, labels, membership)
    assert model.gradient_norm_bound_ <= tolerance
    augmented = torch.as_tensor(np.hstack([features, np.ones((n, 1))]))
    weights = torch.as_tensor(membership, dtype=torch.float64)
    objective = logistic_objective(augmented, torch.as_tensor(labels), weights / weights.sum(dim=1, keepdim=True),
                                   regularization, 2)
    _, probabilities = objective.evaluate(model.parameters_)
    gradient = objective.gradient(model.parameters_, probabilities)
    norms, float64_bounds = batched_logistic._gradient_bound(objective, model.parameters_, probabilities, gradient, True)
    assert float(float64_bounds.min()) > tolerance > 4 * float(norms.max())  # float64 alone cannot certify it
    assert model.sensitivity(n - 1) > 0


def test_a_model_that_nothing_certifies_is_named_with_its_bound():
    rng = np.random.default_rng(1)
    features = rng.uniform(-0.5, 0.5, size=(40, 3))
    labels = rng.integers(0, 3, size=40)
    membership = np.kron(np.eye(2, dtype=bool), np.ones((1, 20), dtype=bool))
    with pytest.raises(RuntimeError, match=r"gradient tolerance 1e-300 for 2 model\(s\).*model 0: .*model 1: "):
        BatchedLogisticRegression(num_classes=3, tol=1e-300, max_iter=3).fit(features, labels, membership)
