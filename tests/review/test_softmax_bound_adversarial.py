"""Adversarial review of softmax_gradient_difference_bound for C > 2 (commits 8719fcc, 629b202).

Two checks independent of tests/dpmech/test_sensitivity.py's search: the bound at extreme inputs against values
attained at W = 0 (so it can fail on both sides), and an Adam multi-start ascent in torch over W, x, x' (W and the
inputs parametrised on their balls by a sigmoid radius and a free direction; x, x' in R², which is no loss: only
W restricted to span(x̃, x̃') moves the logits).
"""

import itertools
import math

import numpy as np
import pytest

from dpmech.sensitivity import softmax_gradient_difference_bound


def _attained_at_zero_weights(feature_bound: float, num_classes: int, intercept: bool) -> float:
    """max of two values of ‖∇ℓ(0; x, y) − ∇ℓ(0; x', y')‖_F (p uniform): y ≠ y', x = x' at norm c gives √2·c';
    y = y', x' = −x gives ‖u‖·2c with ‖u‖² = (C − 1)/C."""
    input_norm = math.hypot(feature_bound, 1.0) if intercept else feature_bound
    return max(math.sqrt(2.0) * input_norm, 2.0 * feature_bound * math.sqrt((num_classes - 1) / num_classes))


@pytest.mark.parametrize("num_classes, intercept", list(itertools.product([3, 1000], [True, False])))
def test_bound_at_extreme_inputs_is_finite_above_attained_values_below_the_r_free_bound_and_monotone(num_classes,
                                                                                                     intercept):
    """R from 1e-8 to 1e8 and c from 1e-6 to 1e6: never NaN or ∞, at least a value W = 0 attains, at most
    2√2·c', and non-decreasing in R (the supremum is, as the ball grows) and in c."""
    radii = np.logspace(-8, 8, 6)
    bounds = np.array([[softmax_gradient_difference_bound(float(radius), float(c), num_classes,
                                                          regularized_intercept=intercept) for radius in radii]
                       for c in (1e-6, 1e-2, 1.0, 1e6)])
    for row, c in enumerate((1e-6, 1e-2, 1.0, 1e6)):
        input_norm = math.hypot(c, 1.0) if intercept else c
        assert np.all(np.isfinite(bounds[row]))
        assert np.all(bounds[row] >= _attained_at_zero_weights(c, num_classes, intercept) * (1.0 - 1e-15))
        assert np.all(bounds[row] <= 2.0 * math.sqrt(2.0) * input_norm * (1.0 + 1e-12))
        assert np.all(np.diff(bounds[row]) >= 0.0)
    assert np.all(np.diff(bounds, axis=0) >= 0.0)


def _ascent(num_classes: int, feature_bound: float, weight_radius: float, intercept: bool, starts: int,
            steps: int, seed: int) -> float:
    """The largest ‖D‖_F met by Adam ascent from ``starts`` random points, both label cases (0, 0) and (0, 1)."""
    torch = pytest.importorskip("torch")
    generator = torch.Generator().manual_seed(seed)
    best = 0.0
    for same_label in (True, False):
        directions = torch.randn(starts, num_classes, 3 if intercept else 2, generator=generator, dtype=torch.float64)
        inputs = torch.randn(starts, 2, 2, generator=generator, dtype=torch.float64)
        weight_scale = torch.randn(starts, generator=generator, dtype=torch.float64) * 3.0 + 2.0
        input_scale = torch.randn(starts, 2, generator=generator, dtype=torch.float64) * 3.0 + 2.0
        parameters = [directions, inputs, weight_scale, input_scale]
        for parameter in parameters:
            parameter.requires_grad_()
        optimiser = torch.optim.Adam(parameters, lr=0.05)
        for _ in range(steps):
            weights = (weight_radius * torch.sigmoid(weight_scale)[:, None, None] * directions
                       / directions.flatten(1).norm(dim=1)[:, None, None])
            points = feature_bound * torch.sigmoid(input_scale)[:, :, None] * inputs / inputs.norm(dim=2, keepdim=True)
            if intercept:
                points = torch.cat([points, torch.ones(starts, 2, 1, dtype=torch.float64)], dim=2)
            residuals = torch.softmax(torch.einsum("scd,skd->skc", weights, points), dim=2)
            first = residuals[:, 0] - torch.nn.functional.one_hot(torch.zeros(starts, dtype=torch.long), num_classes)
            second = residuals[:, 1] - torch.nn.functional.one_hot(
                torch.full((starts,), 0 if same_label else 1, dtype=torch.long), num_classes)
            difference = first[:, :, None] * points[:, 0, None, :] - second[:, :, None] * points[:, 1, None, :]
            norms = difference.flatten(1).norm(dim=1)
            best = max(best, float(norms.detach().max()))
            optimiser.zero_grad()
            (-norms.sum()).backward()
            optimiser.step()
    return best


@pytest.mark.slow  # 9 to 24 s each (wall, shared 2-core machine)
@pytest.mark.parametrize("num_classes, feature_bound, weight_radius, intercept", [
    (3, 0.1, 0.01, True), (3, 5.0, 3.0, True), (4, 1.0, 0.3, False), (10, 1.0, 3.0, True), (10, 5.0, 30.0, False),
    (50, 1.0, 3.0, True), (50, 0.1, 30.0, True)])
def test_multi_start_ascent_stays_below_the_bound(num_classes, feature_bound, weight_radius, intercept):
    found = _ascent(num_classes, feature_bound, weight_radius, intercept, starts=256, steps=300, seed=num_classes)
    bound = softmax_gradient_difference_bound(weight_radius, feature_bound, num_classes, regularized_intercept=intercept)
    assert found <= bound, (found, bound)
