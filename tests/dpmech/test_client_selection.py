"""dpmech.client_selection: federated rounds with selected clients as the existing subsampling events."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpmech import (
    ADD_REMOVE_ONE,
    REPLACE_ONE,
    GaussianEvent,
    LaplaceEvent,
    PoissonSampledEvent,
    PrivacyLedger,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
)
from dpmech.client_selection import client_selection_event
from tests.profiles import examples


def test_uniform_and_poisson_selection_are_the_sampled_events_composed_over_rounds():
    step = GaussianEvent(2.0)
    uniform = client_selection_event(step, rounds=50, clients_per_round=10, num_clients=1000)
    assert uniform == SelfComposedEvent(SampledWithoutReplacementEvent(step, 10, 1000), 50)
    poisson = client_selection_event(step, rounds=50, participation_probability=0.01)
    assert poisson == SelfComposedEvent(PoissonSampledEvent(step, 0.01), 50)
    # Each in the ledger of its relation, with the numbers of the events built by hand.
    for event, relation, inner in ((uniform, REPLACE_ONE, SampledWithoutReplacementEvent(step, 10, 1000)),
                                   (poisson, ADD_REMOVE_ONE, PoissonSampledEvent(step, 0.01))):
        ours = PrivacyLedger(relation).record(event).epsilon(1e-5)
        theirs = PrivacyLedger(relation).record(inner, count=50).epsilon(1e-5)
        assert ours.interval == theirs.interval and ours.certified


@given(sigma=st.floats(0.8, 4.0), rounds=st.integers(1, 20), clients=st.integers(1, 50))
@examples(0.05)
def test_every_client_selected_is_the_unsampled_rounds(sigma, rounds, clients):
    """k = n selects everyone: the certified interval must hold the exact ε of the rounds' Gaussians."""
    event = client_selection_event(GaussianEvent(sigma), rounds=rounds, clients_per_round=clients, num_clients=clients)
    ours = PrivacyLedger(REPLACE_ONE).record(event).epsilon(1e-6)
    exact = PrivacyLedger(REPLACE_ONE).record(GaussianEvent(sigma), count=rounds).epsilon(1e-6, method="exact")
    assert ours.interval[0] <= exact.interval[2] and exact.interval[0] <= ours.interval[2]


@pytest.mark.parametrize("clients, population, rounds", [(10, 1000, 100), (50, 200, 20)])
def test_uniform_selection_is_within_dp_accountings_rdp_bound(clients, population, rounds):
    """dp_accounting's RDP accountant (sampling without replacement under replace-one, Wang, Balle & Kasiviswanathan
    2019; its PLD accountant refuses the event) gives a valid upper bound of the same rounds: dpmech's certified
    interval must reach below it, and its upper end must not exceed it (a PLD is tighter than an RDP bound)."""
    from dp_accounting import dp_event
    from dp_accounting.privacy_accountant import NeighboringRelation
    from dp_accounting.rdp.rdp_privacy_accountant import RdpAccountant

    sigma = 1.5
    event = client_selection_event(GaussianEvent(sigma), rounds=rounds, clients_per_round=clients,
                                   num_clients=population)
    ours = PrivacyLedger(REPLACE_ONE).record(event).epsilon(1e-5)
    accountant = RdpAccountant(neighboring_relation=NeighboringRelation.REPLACE_ONE)
    accountant.compose(dp_event.SampledWithoutReplacementDpEvent(population, clients, dp_event.GaussianDpEvent(sigma)),
                       rounds)
    theirs = accountant.get_epsilon(1e-5)
    assert ours.interval[0] <= ours.interval[2] <= theirs


def test_fewer_clients_per_round_cost_less():
    def upper(clients):
        event = client_selection_event(LaplaceEvent(1.0), rounds=10, clients_per_round=clients, num_clients=100)
        return PrivacyLedger(REPLACE_ONE).record(event).epsilon(1e-6).interval[2]

    assert upper(5) < upper(20) < upper(100)


@pytest.mark.parametrize("call, name", [
    (lambda: client_selection_event("gaussian", rounds=1, participation_probability=0.1), "round_event"),
    (lambda: client_selection_event(GaussianEvent(1.0), rounds=0, participation_probability=0.1), "rounds"),
    (lambda: client_selection_event(GaussianEvent(1.0), rounds=1), "clients_per_round"),
    (lambda: client_selection_event(GaussianEvent(1.0), rounds=1, clients_per_round=1, num_clients=2,
                                    participation_probability=0.1), "clients_per_round"),
    (lambda: client_selection_event(GaussianEvent(1.0), rounds=1, clients_per_round=3), "num_clients"),
    (lambda: client_selection_event(GaussianEvent(1.0), rounds=1, num_clients=3), "clients_per_round"),
    (lambda: client_selection_event(GaussianEvent(1.0), rounds=1, clients_per_round=4, num_clients=3),
     "clients_per_round"),
    (lambda: client_selection_event(GaussianEvent(1.0), rounds=1, clients_per_round=0, num_clients=3),
     "clients_per_round"),
    (lambda: client_selection_event(GaussianEvent(1.0), rounds=1, participation_probability=1.5),
     "sampling_probability"),
    (lambda: client_selection_event(GaussianEvent(1.0), rounds=2.5, participation_probability=0.1), "rounds"),
])
def test_bad_input_is_refused_by_name(call, name):
    with pytest.raises(ValueError, match=name):
        call()
