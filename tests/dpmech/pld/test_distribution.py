"""The composition's round-off and aliasing bounds and the safe sides of the grid measures."""

import math
from fractions import Fraction

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from dpmech.pld.composition import Cumulant, compose, cyclic_power, window
from dpmech.pld.distribution import GridMeasure
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


def _exact_powers(arrays, counts):
    result = [Fraction(1)]
    for array, count in zip(arrays, counts):
        single = [Fraction(x) for x in array.tolist()]
        for _ in range(count):
            out = [Fraction(0)] * (len(result) + len(single) - 1)
            for i, x in enumerate(result):
                if x:
                    for j, y in enumerate(single):
                        out[i + j] += x * y
            result = out
    return result


@given(
    sizes=st.lists(st.integers(2, 24), min_size=1, max_size=2),
    counts=st.lists(st.integers(1, 4), min_size=2, max_size=2),
    decay=st.floats(0.0, 8.0),
    size_power=st.integers(4, 9),
    seed=st.integers(0, 2**32 - 1),
)
@examples(0.1)
def test_cyclic_power_error_is_within_its_bound(sizes, counts, decay, size_power, seed):
    """Against exact rational arithmetic, folded onto the cyclic grid (aliasing included), on vectors whose
    entries span up to 1e-139 to 1."""
    rng = np.random.default_rng(seed)
    arrays = []
    for size in sizes:
        array = rng.random(size) * np.exp(-decay * np.arange(size))
        arrays.append(array / array.sum())
    counts = counts[: len(arrays)]
    length = 1 << size_power
    computed, bound = cyclic_power(arrays, counts, length)
    exact = _exact_powers(arrays, counts)
    folded = [Fraction(0)] * length
    for index, value in enumerate(exact):
        folded[index % length] += value
    worst = max(abs(Fraction(float(c)) - e) for c, e in zip(computed, folded))
    assert worst <= Fraction(bound)
    assert bound < 1e-11  # not vacuous: about ε_N·√N·‖x‖₂


def _random_measure(rng, upper, tilt, size):
    log_masses = np.log(rng.random(size) * np.exp(-0.3 * np.arange(size)) + 1e-300)
    return GridMeasure.from_log_masses(0.1, tilt, -3, log_masses, -math.inf, upper)


@given(count=st.integers(2, 8), tilt=st.floats(0.0, 2.0), seed=st.integers(0, 2**32 - 1),
       shrink=st.integers(0, 3))
@examples(0.1)
def test_composed_window_keeps_each_measure_on_its_side(count, tilt, seed, shrink):
    """Every composed mass of an upper (lower) measure is at least (at most) the exact one at its label, on
    windows the tail bounds chose and on windows cut shorter, where aliasing and the moved tails count."""
    rng = np.random.default_rng(seed)
    for upper in (True, False):
        measure = _random_measure(rng, upper, tilt, 10)
        cumulant = Cumulant([measure], [count])
        first, size = window([measure], [count], cumulant)
        size = max(size >> shrink, 4)
        first += size // 4 if shrink else 0
        composed = compose([measure], [count], first, size, cumulant)
        exact_tilted = _exact_powers([measure.tilted], [count])
        low = count * measure.start
        for index, mass in enumerate(np.exp(composed.log_masses()).tolist()):
            label = composed.start + index
            if not 0 <= label - low < len(exact_tilted):
                continue
            exact = float(exact_tilted[label - low]) * math.exp(count * measure.log_scale - tilt * label * measure.step)
            if upper:
                assert mass >= exact * (1 - 1e-9)
            else:
                assert mass <= exact * (1 + 1e-9)


def _measure(upper, tilt=0.7):
    log_masses = np.log(np.array([0.1, 0.2, 0.4, 0.2, 0.1]))
    return GridMeasure.from_log_masses(0.1, tilt, -2, log_masses, -math.inf, upper)


def test_upper_and_lower_measures_bound_the_masses_they_were_built_from():
    for upper in (True, False):
        measure = _measure(upper)
        masses = np.exp(measure.log_masses())
        reference = np.array([0.1, 0.2, 0.4, 0.2, 0.1])
        assert np.all(masses >= reference) if upper else np.all(masses <= reference)


def test_upper_delta_at_infinity_mass_is_never_below_it():
    measure = GridMeasure.from_log_masses(0.1, 3.0, 0, np.log(np.array([0.5, 0.5 - 1e-9])), math.log(1e-9), True)
    assert math.exp(measure.log_delta(100.0)) >= 1e-9


@given(log_infinity=st.floats(-5000.0, -1.0), count=st.integers(1, 10**6))
def test_composed_mass_at_infinity_below_the_smallest_double_still_counts(log_infinity, count):
    """The mass at +∞ lives in logs: composed k times, an upper measure keeps at least k·p (the first-order
    term of 1 − (1 − p)^k, which it may exceed by the union bound) and a lower one at least p and at most k·p,
    however far below e^-745 p lies."""
    for upper in (True, False):
        measure = GridMeasure.from_log_masses(0.1, 0.5, 0, np.log(np.array([0.5, 0.5])), log_infinity, upper)
        cumulant = Cumulant([measure], [count])
        composed = compose([measure], [count], *window([measure], [count], cumulant), cumulant)
        assert composed.log_infinity >= log_infinity - 1e-12 * abs(log_infinity)
        exact_upper = log_infinity + math.log(count)  # 1 − (1 − p)^k <= k·p
        if upper:
            assert composed.log_infinity >= min(0.0, exact_upper) - 1e-9
            assert composed.log_delta(1e9) >= composed.log_infinity
        else:
            assert composed.log_infinity <= exact_upper + 1e-12 * abs(exact_upper)
