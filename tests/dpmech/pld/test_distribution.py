"""The FFT round-off bound and the safe sides of the grid measures."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpmech.pld.distribution import GridMeasure, _convolve
from tests.profiles import examples


def _exact_convolution(a, b):
    a = [Fraction(x) for x in a.tolist()]
    b = [Fraction(x) for x in b.tolist()]
    out = [Fraction(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        if x:
            for j, y in enumerate(b):
                out[i + j] += x * y
    return out


@given(
    sizes=st.tuples(st.integers(65, 160), st.integers(65, 160)),
    decay=st.floats(0.0, 8.0),
    seed=st.integers(0, 2**32 - 1),
)
@examples(0.1)
def test_fft_convolution_error_is_within_its_bound(sizes, decay, seed):
    """Against exact rational arithmetic, on vectors whose entries span up to 1e-300 to 1."""
    rng = np.random.default_rng(seed)
    a = rng.random(sizes[0]) * np.exp(-decay * np.arange(sizes[0]))
    b = rng.random(sizes[1]) * np.exp(-decay * np.arange(sizes[1])[::-1])
    a, b = a / a.sum(), b / b.sum()
    computed, bound = _convolve(a, b)
    exact = _exact_convolution(a, b)
    worst = max(abs(Fraction(float(c)) - e) for c, e in zip(computed, exact))
    assert worst <= Fraction(bound)
    assert bound < 1e-13


def _measure(upper, tilt=0.7):
    log_masses = np.log(np.array([0.1, 0.2, 0.4, 0.2, 0.1]))
    return GridMeasure.from_log_masses(0.1, tilt, -2, log_masses, 0.0, upper)


def test_upper_and_lower_measures_bound_the_masses_they_were_built_from():
    for upper in (True, False):
        measure = _measure(upper)
        masses = np.exp(measure.log_masses())
        reference = np.array([0.1, 0.2, 0.4, 0.2, 0.1])
        assert np.all(masses >= reference) if upper else np.all(masses <= reference)


def test_composition_of_measures_contains_the_exact_convolution():
    exact = np.convolve([0.1, 0.2, 0.4, 0.2, 0.1], [0.1, 0.2, 0.4, 0.2, 0.1])
    upper = _measure(True).compose(_measure(True))
    lower_measure = _measure(False)
    lower = lower_measure.compose(lower_measure)
    assert upper.start == lower.start == -4
    assert np.all(np.exp(upper.log_masses()) >= exact) and np.all(np.exp(lower.log_masses()) <= exact)


def test_measures_on_different_grids_do_not_compose():
    with pytest.raises(ValueError, match="same grid"):
        _measure(True).compose(_measure(True, tilt=0.2))


def test_upper_delta_at_infinity_mass_is_never_below_it():
    measure = GridMeasure.from_log_masses(0.1, 3.0, 0, np.log(np.array([0.5, 0.5 - 1e-9])), 1e-9, True)
    assert math.exp(measure.log_delta(100.0)) >= 1e-9
