"""group_privacy: exact for Gaussians, kε for pure ε, the geometric δ sum for (ε, δ)."""

import math
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpmech import (
    ApproximateDpEvent,
    GaussianEvent,
    NoGuaranteeEvent,
    NoGuaranteeWarning,
    PrivacyLedger,
    PureEpsilonEvent,
    SelfComposedEvent,
    gaussian_delta,
    group_privacy,
)


@given(st.floats(0.1, 50.0), st.floats(0.01, 10.0), st.integers(1, 50), st.floats(0.0, 20.0))
def test_gaussian_group_equals_scaled_sensitivity(sigma, sensitivity, k, epsilon):
    grouped = group_privacy(GaussianEvent(sigma, sensitivity), k)
    assert grouped == GaussianEvent(sigma, k * sensitivity)
    ledger = PrivacyLedger().record(GaussianEvent(sigma, sensitivity)).group_privacy(k)
    assert ledger.delta(epsilon).interval[1] == pytest.approx(gaussian_delta(epsilon, sigma, k * sensitivity), rel=1e-12)


@given(st.floats(0.001, 5.0), st.floats(1e-12, 1e-3), st.integers(1, 30))
def test_approximate_dp_group_is_the_geometric_sum_and_at_most_k_exp(epsilon, delta, k):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grouped = group_privacy(ApproximateDpEvent(epsilon, delta), k)
    geometric = delta * sum(math.exp(i * epsilon) for i in range(k))
    if geometric >= 1.0:
        assert isinstance(grouped, NoGuaranteeEvent)
        assert any(issubclass(record.category, NoGuaranteeWarning) for record in caught)
        return
    assert not any(issubclass(record.category, NoGuaranteeWarning) for record in caught)
    assert grouped.epsilon == pytest.approx(k * epsilon)
    assert grouped.delta == pytest.approx(geometric, rel=1e-12)
    assert grouped.delta >= geometric
    assert grouped.delta <= k * math.exp((k - 1) * epsilon) * delta * (1 + 1e-12)


def test_group_of_one_is_the_event_itself():
    event = ApproximateDpEvent(1.0, 1e-6)
    assert group_privacy(event, 1) is event


def test_pure_epsilon_group_multiplies_epsilon_and_drops_the_rr_structure():
    grouped = group_privacy(PureEpsilonEvent(0.5, num_outcomes=10), 3)
    assert grouped == PureEpsilonEvent(1.5)


def test_self_composed_events_group_inside():
    grouped = group_privacy(SelfComposedEvent(GaussianEvent(2.0), 4), 3)
    assert grouped == SelfComposedEvent(GaussianEvent(2.0, 3.0), 4)


def test_large_groups_do_not_overflow():
    with pytest.warns(NoGuaranteeWarning, match="group of 1000 records"):
        assert isinstance(group_privacy(ApproximateDpEvent(2.0, 1e-300), 1000), NoGuaranteeEvent)
    assert group_privacy(ApproximateDpEvent(0.0, 1e-9), 10).delta == pytest.approx(1e-8)


@pytest.mark.parametrize("k", [0, -1, 2.5, True])
def test_bad_group_size_names_the_parameter(k):
    with pytest.raises(ValueError, match="group_size"):
        group_privacy(GaussianEvent(1.0), k)
