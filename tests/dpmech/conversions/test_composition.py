"""Advanced composition: dp_accounting's known answers, exact enumeration of composed randomized response, properties."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import special

from dpmech.conversions import composition
from tests.dpmech.conversions import dp_accounting_known_answers as known
from tests.profiles import examples


def _matches_known_answer(compute, expected, tolerance):
    """``compute()`` within ``tolerance`` of dp_accounting's answer (returned), or, where dp_accounting has none
    (``expected`` None: the total δ is too small), a ValueError naming total_delta (None returned)."""
    if expected is None:
        with pytest.raises(ValueError, match="total_delta"):
            compute()
        return None
    result = compute()
    assert result == pytest.approx(expected, abs=tolerance)
    return result


@pytest.mark.parametrize("name,epsilon,delta,total_delta,k,expected", known.ADVANCED_COMPOSITION)
def test_advanced_composition_matches_dp_accounting_known_answers(name, epsilon, delta, total_delta, k, expected):
    _matches_known_answer(lambda: composition.advanced_composition(epsilon, delta, k, total_delta), expected, 1e-12)


@pytest.mark.parametrize("name,total_epsilon,total_delta,delta,k,expected", known.SMALLEST_EPSILON)
def test_smallest_epsilon_matches_dp_accounting_known_answers(name, total_epsilon, total_delta, delta, k, expected):
    result = _matches_known_answer(
        lambda: composition.smallest_epsilon_from_advanced_composition(total_epsilon, total_delta, k, delta), expected, 1e-6)
    if result is not None:
        assert composition.advanced_composition(result, delta, k, total_delta) <= total_epsilon


def _composed_rr_delta(epsilon, k, total_epsilon):
    """Exact hockey-stick divergence of k-fold binary ε-RR at total_epsilon (KOV's extremal mechanism)."""
    j = np.arange(k + 1)  # number of "wrong" answers
    log_p = special.gammaln(k + 1) - special.gammaln(j + 1) - special.gammaln(k - j + 1) + (k - j) * epsilon - k * np.logaddexp(0, epsilon)
    loss = (k - 2 * j) * epsilon
    return float(np.sum(np.exp(log_p) * np.maximum(0.0, -np.expm1(total_epsilon - loss))))


@given(epsilon=st.floats(0.01, 2.0), k=st.integers(1, 200), total_delta=st.floats(1e-9, 0.5))
def test_pure_dp_result_is_valid_for_composed_randomized_response_and_optimal_on_its_lattice(epsilon, k, total_delta):
    total = composition.advanced_composition(epsilon, 0.0, k, total_delta)
    assert _composed_rr_delta(epsilon, k, total) <= total_delta * (1 + 1e-9)
    if total > epsilon * (k % 2) + 1e-12:  # the next lattice point down must fail the target
        assert _composed_rr_delta(epsilon, k, total - 2 * epsilon) > total_delta * (1 - 1e-9)


@given(epsilon=st.floats(0.01, 2.0), delta=st.floats(0.0, 1e-3), k=st.integers(1, 60), total_delta=st.floats(0.1, 0.5))
@examples(0.3)  # dp_accounting's loop is quadratic in k
def test_agrees_with_dp_accounting_and_never_beats_it(epsilon, delta, k, total_delta):
    from dp_accounting.pld import accountant, common

    theirs = accountant.advanced_composition(common.DifferentialPrivacyParameters(epsilon, delta), k, total_delta)
    if theirs is None:
        with pytest.raises(ValueError):
            composition.advanced_composition(epsilon, delta, k, total_delta)
        return
    ours = composition.advanced_composition(epsilon, delta, k, total_delta)
    assert ours >= theirs - 1e-12
    assert ours <= theirs + 2 * epsilon + 1e-12  # only a boundary case within rounding may differ


@given(epsilon=st.floats(0.01, 1.0), k=st.integers(1, 60), total_delta=st.floats(1e-6, 0.3))
def test_total_epsilon_is_monotone_in_epsilon_and_at_most_basic_composition(epsilon, k, total_delta):
    total = composition.advanced_composition(epsilon, 0.0, k, total_delta)
    assert total <= k * epsilon + 1e-12
    assert composition.advanced_composition(epsilon * 1.01, 0.0, k, total_delta) >= total - 1e-12


def test_large_k_stays_fast_and_beats_drv():
    total = composition.advanced_composition(0.01, 1e-11, 100_000, 1e-5)
    drv, drv_delta = composition.drv_composition(0.01, 1e-11, 100_000, 1e-5 - 100_000 * 1e-11)
    assert drv_delta <= 1e-5 * (1 + 1e-9)
    assert 0 < total < drv


def test_drv_composition_formula():
    total_epsilon, total_delta = composition.drv_composition(0.1, 1e-6, 100, 1e-5)
    expected = 0.1 * math.sqrt(200 * math.log(1e5)) + 100 * 0.1 * math.expm1(0.1)
    assert expected <= total_epsilon <= expected * (1 + 1e-15)
    assert total_delta >= 100 * 1e-6 + 1e-5


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: composition.advanced_composition(-1.0, 0.0, 3, 0.1), "epsilon"),
        (lambda: composition.advanced_composition(1.0, 1.0, 3, 0.1), "delta"),
        (lambda: composition.advanced_composition(1.0, 0.0, 0, 0.1), "num_queries"),
        (lambda: composition.advanced_composition(1.0, 0.0, 2.5, 0.1), "num_queries"),
        (lambda: composition.smallest_epsilon_from_advanced_composition(0.0, 0.1, 3), "total_epsilon"),
        (lambda: composition.drv_composition(1.0, 0.0, 3, 0.0), "delta_slack"),
    ],
)
def test_bad_input_raises_value_error_naming_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()
