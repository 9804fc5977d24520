"""Adversarial review of the tighter softmax_gradient_difference_bound (commit 4173f9c: step (vii) couples ⟨u, u'⟩
to ‖u − u'‖).

The proof of (vii) was re-derived: ‖D‖² = aA_u + a'B_u + δ²⟨u, u'⟩ (2t = a + a' − δ²), at most one of A_u, B_u
negative, a, a' in [β, c'²] with c'² − β = c²; ⟨u, u'⟩ <= U − ‖u − u'‖²/2; ‖p − p'‖ <= κRδ by the mean value
theorem with the softmax Jacobian's norm <= min(max_k p_k, 1/2); min(‖u‖², ‖u'‖²) >= (1 − p̄)²C/(C − 1); and
⟨u, u'⟩ − min(‖u‖², ‖u'‖²) <= √U‖u − u'‖. It holds. A torch Adam multi-start search (tests/review/
test_softmax_bound_adversarial.py's ascent, 128 starts x 250 steps, seeds 1003/1010/1050) over C in {3, 10, 50},
c in {0.1, 1, 5}, R in {0.3, 1, 2, 5}, with and without the intercept stayed below the new bound at all 72 points
(closest: 0.99962 of it at C = 50, c = 0.1, R = 0.3, intercept).

Extreme inputs the function accepts (finite, > 0), once not sound (NaN at R >= ~1e155, an underflowed bound at c <= ~1e-160
without the intercept, an OverflowError at c >= ~1e155): checked below; fixed through the R-free bound and the exact
scale covariance D(R, c) = c·D(Rc, 1).
"""

import math

import pytest

from dpmech.sensitivity import softmax_gradient_difference_bound


def _attained_at_zero_weights(feature_bound: float, num_classes: int, intercept: bool) -> float:
    """A value ‖∇ℓ(0; x, y) − ∇ℓ(0; x', y')‖_F takes (p uniform): y ≠ y', x = x' at norm c gives √2·c'; y = y',
    x' = −x gives 2c‖u‖ with ‖u‖² = (C − 1)/C. Computed without squaring c, so it neither under- nor overflows."""
    input_norm = math.hypot(feature_bound, 1.0) if intercept else feature_bound
    return max(math.sqrt(2.0) * input_norm, 2.0 * feature_bound * math.sqrt((num_classes - 1) / num_classes))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("num_classes", [2, 3, 10])
def test_bound_is_a_number_at_huge_weight_radius(num_classes):
    for intercept in (True, False):
        bound = softmax_gradient_difference_bound(1e200, 1.0, num_classes, regularized_intercept=intercept)
        assert math.isfinite(bound) and bound >= _attained_at_zero_weights(1.0, num_classes, intercept)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("num_classes", [2, 3, 10])
def test_bound_is_above_an_attained_value_at_tiny_feature_bound(num_classes):
    for feature_bound in (1e-164, 1e-200, 1e-300):
        bound = softmax_gradient_difference_bound(1.0, feature_bound, num_classes, regularized_intercept=False)
        assert bound >= _attained_at_zero_weights(feature_bound, num_classes, False), (feature_bound, bound)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_bound_at_huge_feature_bound_is_a_number_or_a_named_refusal():
    try:
        bound = softmax_gradient_difference_bound(1.0, 1e200, 10)
    except ValueError as error:
        assert "feature_bound" in str(error)
    else:
        assert math.isfinite(bound) and bound >= _attained_at_zero_weights(1e200, 10, True)


def _assert_finite_monotone_and_between_attained_and_r_free(points: int, num_classes_set, feature_bounds,
                                                            largest_step: float) -> None:
    """R on ``points`` log-spaced points in [1e-6, 1e4], both intercept settings: finite, non-decreasing in R,
    at least the W = 0 value, at most 2√2c', and no step between neighbours above ``largest_step``."""
    for num_classes in num_classes_set:
        for intercept in (True, False):
            for feature_bound in feature_bounds:
                input_norm = math.hypot(feature_bound, 1.0) if intercept else feature_bound
                bounds = [softmax_gradient_difference_bound(10.0 ** (-6 + 10 * i / (points - 1)), feature_bound,
                                                            num_classes, regularized_intercept=intercept)
                          for i in range(points)]
                assert all(math.isfinite(bound) for bound in bounds)
                assert all(earlier <= later <= largest_step * earlier for earlier, later in zip(bounds, bounds[1:]))
                assert bounds[0] >= _attained_at_zero_weights(feature_bound, num_classes, intercept) * (1 - 1e-15)
                assert bounds[-1] <= 2.0 * math.sqrt(2.0) * input_norm * (1 + 1e-12)


def test_bound_is_finite_monotone_and_between_attained_and_r_free_values():
    _assert_finite_monotone_and_between_attained_and_r_free(40, (3, 50), (1e-3, 1.0, 1e3), largest_step=2.0)


@pytest.mark.slow  # ~20 s of CPU
def test_bound_has_no_jump_over_a_dense_grid():
    """300 points (neighbours 8 % apart in R), C in {3, 10, 50, 1000}, c in {1e-3, 0.1, 1, 5, 1e3}: no step
    above 20 % (the review run found none)."""
    _assert_finite_monotone_and_between_attained_and_r_free(300, (3, 10, 50, 1000), (1e-3, 0.1, 1.0, 5.0, 1e3),
                                                            largest_step=1.2)
