"""group_privacy: exact for Gaussians, kε for pure ε, the geometric δ sum for (ε, δ)."""

import math
import warnings

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import dpmech
from dpmech import (
    ADD_REMOVE_ONE,
    REPLACE_ONE,
    ApproximateDpEvent,
    GaussianEvent,
    NoGuaranteeEvent,
    NoGuaranteeWarning,
    NoPrivacyLossEvent,
    PrivacyLedger,
    PureEpsilonEvent,
    SelfComposedEvent,
    gaussian_delta,
    gaussian_epsilon,
    group_privacy,
)


@given(st.floats(0.1, 50.0), st.floats(0.01, 10.0), st.integers(1, 50), st.floats(0.0, 20.0))
# δ within 1e-7500 of 1, where the certified lower end is far looser than the evaluation (the estimate).
@example(sigma=0.25, sensitivity=3.0, k=31, epsilon=0.0)
def test_gaussian_group_equals_scaled_sensitivity(sigma, sensitivity, k, epsilon):
    grouped = group_privacy(GaussianEvent(sigma, sensitivity), k)
    assert grouped == GaussianEvent(sigma, k * sensitivity)
    ledger = PrivacyLedger(REPLACE_ONE).record(GaussianEvent(sigma, sensitivity)).group_privacy(k)
    reference = gaussian_delta(epsilon, sigma, k * sensitivity)
    lower, estimate, upper = ledger.delta(epsilon).interval
    assert estimate == pytest.approx(reference, rel=1e-10)
    assert lower <= reference * (1 + 1e-12) and upper >= reference * (1 - 1e-12)


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


def test_approximate_dp_group_past_exp_overflow():
    # e^ε overflows a double above ε ≈ 709.78; the geometric sum must still be formed in logs.
    delta = 1e-310
    grouped = group_privacy(ApproximateDpEvent(710.0, delta), 2)
    log_reference = math.log(delta) + 710.0 + math.log1p(math.exp(-710.0))
    assert grouped.epsilon == 1420.0
    assert grouped.delta >= math.exp(log_reference)
    assert grouped.delta == pytest.approx(math.exp(log_reference), rel=1e-12)
    with pytest.warns(NoGuaranteeWarning, match="group of 2 records"):
        assert isinstance(group_privacy(ApproximateDpEvent(800.0, 0.5), 2), NoGuaranteeEvent)


@pytest.mark.parametrize("k", [0, -1, 2.5, True, "2", None])
def test_bad_group_size_names_the_parameter(k):
    with pytest.raises(ValueError, match="group_size"):
        group_privacy(GaussianEvent(1.0), k)


def test_ledger_group_privacy_converts_add_remove_events_once():
    # Issue 11, item 3: a replace-one ledger holding an add/remove Gaussian(σ=4, Δ=1) is a
    # Gaussian with Δ = 2; a group of 3 makes it Δ = 6 (ε 7.05), not 12 (ε 16.68).
    ledger = PrivacyLedger(REPLACE_ONE).record(GaussianEvent(4.0, 1.0, neighbouring=ADD_REMOVE_ONE))
    grouped = ledger.group_privacy(3)
    assert grouped.epsilon(1e-5).epsilon == pytest.approx(gaussian_epsilon(1e-5, 4.0, 6.0), rel=1e-9)
    assert grouped.epsilon(1e-5).epsilon < 7.06
    # Grouping twice is grouping by the product, never a second conversion.
    assert grouped.group_privacy(2).epsilon(1e-5).epsilon == pytest.approx(gaussian_epsilon(1e-5, 4.0, 12.0), rel=1e-9)


def test_no_privacy_loss_event_is_unchanged_by_groups():
    assert group_privacy(NoPrivacyLossEvent(), 7) == NoPrivacyLossEvent()


@pytest.mark.parametrize("event", [
    dpmech.PoissonSampledEvent(dpmech.GaussianEvent(1.0), 0.01),
    dpmech.SampledWithoutReplacementEvent(dpmech.PureEpsilonEvent(1.0), 10, 100),
    dpmech.RandomAllocationEvent(dpmech.GaussianEvent(1.0), num_steps=100),
])
def test_sampled_events_refuse_groups_and_replace_one_ledgers_by_name(event):
    # No group-privacy theorem is implemented for sampling schemes: a group and a replace-one ledger
    # (two add/remove steps) are refused with a message naming group_size, not a generic one.
    with pytest.raises(ValueError, match="group_size: no group-privacy theorem"):
        group_privacy(event, 2)
    if getattr(event, "neighbouring", None) == "add-remove-one":
        with pytest.raises(ValueError, match="group_size: no group-privacy theorem"):
            dpmech.PrivacyLedger(neighbouring="replace-one").record(event)
