"""The ledger's all-Gaussian fast path gives the general path's guarantee exactly, field by field."""

import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpmech import ADD_REMOVE_ONE, REPLACE_ONE, GaussianEvent, PrivacyLedger
from dpmech import ledger as ledger_module
from dpmech.accountants import exact
from tests.profiles import examples


def _general(ledger, query, value, **keywords):
    """The same query with the fast path switched off: the exact accountant's general machinery."""
    with mock.patch.object(PrivacyLedger, "_gaussian_fast_mu", lambda self, method, options: None):
        return getattr(ledger, query)(value, **keywords)


def _ledger(events, relation):
    ledger = PrivacyLedger(relation)
    for sigma, sensitivity, count, event_relation in events:
        if relation == ADD_REMOVE_ONE and event_relation == REPLACE_ONE:
            event_relation = ADD_REMOVE_ONE
        ledger.record(GaussianEvent(sigma, sensitivity, event_relation), count=count)
    return ledger


gaussians = st.lists(
    st.tuples(
        st.floats(-3.0, 4.0).map(lambda exponent: 10.0**exponent),
        st.floats(-2.0, 2.0).map(lambda exponent: 10.0**exponent),
        st.one_of(st.integers(1, 10), st.integers(1, 10**6)),
        st.sampled_from([None, REPLACE_ONE, ADD_REMOVE_ONE]),
    ),
    min_size=1,
    max_size=3,
)
relations = st.sampled_from([REPLACE_ONE, ADD_REMOVE_ONE])


@examples(0.5)
@given(gaussians, relations, st.floats(-300.0, math.log10(0.99)).map(lambda exponent: 10.0**exponent),
       st.sampled_from(["auto", "exact"]))
def test_epsilon_equals_the_general_path_exactly(events, relation, delta, method):
    ledger = _ledger(events, relation)
    assert ledger._gaussian_fast_mu(method, {}) == exact.composed_mu(ledger._pairs())
    assert ledger.epsilon(delta, method) == _general(ledger, "epsilon", delta, method=method)


@examples(0.5)
@given(gaussians, relations, st.one_of(st.just(0.0), st.floats(-6.0, 4.0).map(lambda exponent: 10.0**exponent)),
       st.sampled_from(["auto", "exact"]))
def test_delta_equals_the_general_path_exactly(events, relation, epsilon, method):
    ledger = _ledger(events, relation)
    assert ledger.delta(epsilon, method) == _general(ledger, "delta", epsilon, method=method)


@pytest.mark.parametrize("sigma", [1e-12, 1e-6, 0.05, 1.0, 20.0, 1e6, 1e150])
@pytest.mark.parametrize("count", [1, 1000, 10**12])
def test_extremes_equal_the_general_path(sigma, count):
    ledger = PrivacyLedger(REPLACE_ONE).record(GaussianEvent(sigma), count=count)
    for delta in (1e-300, 1e-5, 0.5):
        assert ledger.epsilon(delta) == _general(ledger, "epsilon", delta)
    for epsilon in (0.0, 1.0, 1e3, 1e300):
        assert ledger.delta(epsilon) == _general(ledger, "delta", epsilon)


def test_arrays_of_queries_and_the_anchor():
    ledger = PrivacyLedger(ADD_REMOVE_ONE).record(GaussianEvent(1.0), count=1000)
    deltas = np.array([1e-10, 1e-5, 0.1])
    fast = ledger.epsilon(deltas)
    general = _general(ledger, "epsilon", deltas)
    assert all(first == second for first, second in zip(fast, general))
    assert fast[1].epsilon == pytest.approx(633.92985, rel=1e-7)


def test_the_fast_path_is_taken_only_for_gaussians_alone():
    ledger = PrivacyLedger(REPLACE_ONE).record(GaussianEvent(2.0), count=10)
    assert ledger._gaussian_fast_mu("auto", {}) is not None
    assert ledger._gaussian_fast_mu("numeric", {}) is None
    assert ledger._gaussian_fast_mu("exact", {"width": 1.0}) is None
    from dpmech import PureEpsilonEvent

    ledger.record(PureEpsilonEvent(0.5))
    assert ledger._gaussian_fast_mu("auto", {}) is None
    assert ledger.epsilon(1e-5) == _general(ledger, "epsilon", 1e-5)
    # The cached μ follows the ledger as it grows and when its relation changes.
    gaussian = PrivacyLedger(REPLACE_ONE).record(GaussianEvent(2.0, neighbouring=ADD_REMOVE_ONE))
    first = gaussian._gaussian_fast_mu("auto", {})
    gaussian.record(GaussianEvent(2.0))
    assert gaussian._gaussian_fast_mu("auto", {}) == exact.composed_mu(gaussian._pairs()) != first
    assert ledger_module._gaussian_margin() == exact._profiles([(GaussianEvent(1.0), 1)])[0].log_margin


@given(st.floats(-3.0, 3.0).map(lambda exponent: 10.0**exponent), st.floats(-30.0, -1e-9))
def test_the_float_profile_defers_to_exacts_profile_where_it_cannot_decide(mu, epsilon):
    # At ε < 0 the float profile has no evaluation of its own and asks exact's _Profile of the same single
    # atom; that deferral used to raise a TypeError (it left out the profile's largest_loss).
    upper, lower = exact._profiles([(GaussianEvent(1.0 / mu), 1)])
    for profile in (upper, lower):
        fast = ledger_module._GaussianProfile(profile.mu, profile.log_margin)
        assert fast.evaluate(epsilon) == profile.evaluate(epsilon)
