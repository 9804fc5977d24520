"""clip_features: every returned row has Σ x_i² <= bound² in exact rational arithmetic, at every scale."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import dpmech
from dpmech import clipping


def exact_squared_norms(array):
    return [sum(Fraction(value) ** 2 for value in row) for row in array.tolist()]


def assert_exactly_clipped(features, bound, clipped):
    before = exact_squared_norms(features)
    after = exact_squared_norms(clipped)
    limit = Fraction(bound) ** 2
    for row, (old, new) in enumerate(zip(before, after)):
        assert new <= limit, f"row {row} has squared norm {float(new)!r} above {float(limit)!r}"
        if old <= limit:
            np.testing.assert_array_equal(clipped[row], features[row])


# Any finite double: huge, subnormal, zero, negative.
ANY_FINITE = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True)


@given(
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, max_side=6), elements=ANY_FINITE),
    st.floats(min_value=5e-324, max_value=1.7e308, allow_subnormal=True),
)
# A bound near the largest double: bound/‖y‖ overflowed to inf and the row was stepped down one ulp at a time.
@example(np.array([[1.00910916e308, 1.01039398e86, 1.01039398e86, 2.52953737e16]]), 1.0091091587864492e308)
@example(np.array([[1.7976931348623157e308, 1.7976931348623157e308]]), 1.7976931348623157e308)
def test_every_row_is_inside_the_ball_exactly_and_rows_inside_are_untouched(features, bound):
    clipped = dpmech.clip_features(features, bound)
    assert clipped.shape == features.shape and np.all(np.isfinite(clipped))
    assert_exactly_clipped(features, bound, clipped)


@given(
    hnp.arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 6)), elements=st.floats(-1e3, 1e3)),
    st.floats(1e-3, 1e3),
)
def test_rows_outside_keep_their_direction_and_land_just_below_the_bound(features, bound):
    norms = np.linalg.norm(features, axis=1)
    clipped = dpmech.clip_features(features, bound)
    outside = norms > bound * (1 + 1e-12)
    new_norms = np.linalg.norm(clipped[outside], axis=1)
    assert np.all(new_norms >= bound * (1 - 1e-13))
    rescaled = clipped[outside] * (norms[outside] / new_norms)[:, None]
    assert np.all(np.abs(rescaled - features[outside]) <= 1e-12 * norms[outside][:, None])


@pytest.mark.parametrize(
    "features, bound",
    [
        ([[1e200, 1e200]], 1.0),  # the norm overflowed: bound/inf = 0 returned zeros
        ([[1.7e308, 1.7e308, -1.7e308]], 1e308),
        ([[1e-320, 0.0]], 1e-321),  # squares underflowed: the norm read 0 and the row stayed over the bound
        ([[3e-320, 4e-320]], 4.9e-320),
        ([[1e-160, 1e-160]], 1e-160),
    ],
)
def test_issue_11_extreme_rows(features, bound):
    features = np.array(features)
    clipped = dpmech.clip_features(features, bound)
    assert_exactly_clipped(features, bound, clipped)
    assert np.any(clipped != 0.0)
    # The direction survives: the sign of every coordinate is kept (no coordinate flips sign).
    assert np.all(np.sign(clipped) * np.sign(features) >= 0)


@given(
    st.integers(1, 300),
    st.integers(1, 8),
    st.floats(1e-300, 1e300),
    st.integers(0, 2**32 - 1),
)
def test_rows_put_on_the_sphere_are_decided_as_exact_arithmetic_decides(dimension, rows, bound, seed):
    # A normalisation (bound·x/‖x‖) puts every row within a few ulps of the sphere, where the rounded
    # norm cannot decide; the twice-precision check (clipping._excess_signs) decides them, vectorised.
    directions = np.random.default_rng(seed).normal(size=(rows, dimension))
    features = directions * (bound / np.linalg.norm(directions, axis=1, keepdims=True))
    limit = Fraction(bound) ** 2
    exact_inside = np.array([norm <= limit for norm in exact_squared_norms(features)])
    np.testing.assert_array_equal(clipping._inside_ball(features, bound), exact_inside)
    assert_exactly_clipped(features, bound, dpmech.clip_features(features, bound))


def test_a_row_exactly_on_the_bound_is_inside():
    features = np.array([[3.0, 4.0], [0.6, 0.8]])
    np.testing.assert_array_equal(dpmech.clip_features(features, 5.0)[0], [3.0, 4.0])


@pytest.mark.parametrize(
    "parameter, call",
    [
        ("features", lambda: dpmech.clip_features([[10**400, 1]], 1.0)),
        ("features", lambda: dpmech.clip_features([["1", "2"]], 1.0)),
        ("features", lambda: dpmech.clip_features([[1 + 2j, 0]], 1.0)),
        ("features", lambda: dpmech.clip_features([[np.nan, 0.0]], 1.0)),
        ("bound", lambda: dpmech.clip_features([[1.0]], [1.0, 2.0])),
        ("bound", lambda: dpmech.clip_features([[1.0]], True)),
    ],
)
def test_bad_input_names_the_parameter(parameter, call):
    with pytest.raises(ValueError, match=parameter):
        call()
