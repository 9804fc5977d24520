"""k of t random allocation with k not dividing t (:mod:`dpmech.events.random_allocation`): the event's parts, how
every consumer of :meth:`~dpmech.events.base.PrivacyEvent.flattened` takes them, and what refuses them by name.

The accounting itself is checked against an exact enumeration, Monte Carlo and pld-accounting 2.0 in
``tests/dpmech/pld/test_allocation.py``.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpmech
from dpmech import GaussianEvent, PrivacyLedger, RandomAllocationEvent
from dpmech.events import SelfComposedEvent, flatten
from dpmech.ledger_calibration import calibrate_ledger

from tests.profiles import examples


def _event(steps: int, selected: int, sigma: float = 1.0) -> dpmech.RandomAllocationEvent:
    return dpmech.RandomAllocationEvent(dpmech.GaussianEvent(sigma), num_steps=steps, num_selected=selected)


@examples(1.0)
@given(steps=st.integers(1, 10**6), data=st.data(), repeats=st.integers(1, 50))
def test_property_parts_are_k_one_step_epochs_of_two_sizes_covering_the_steps(steps, data, repeats):
    """t = km + r: r epochs of 1-of-(m + 1) and k − r of 1-of-m, counts positive, every part a 1-step allocation
    of the same inner event; a self-composition multiplies every count and ``flatten`` lists the parts in order."""
    selected = data.draw(st.integers(1, steps))
    event = _event(steps, selected)
    parts = event.flattened()
    size, longer = divmod(steps, selected)
    expected = [(size + 1, longer), (size, selected - longer)] if selected > 1 else [(steps, 1)]
    assert [(part.num_steps, count) for part, count in parts] == [(s, c) for s, c in expected if c]
    assert all(part.num_selected == 1 and part.event == event.event for part, _ in parts)
    assert sum(part.num_steps * count for part, count in parts) == steps
    composed = SelfComposedEvent(event, repeats)
    assert composed.flattened() == [(part, count * repeats) for part, count in parts]
    gaussian = dpmech.GaussianEvent(2.0)
    assert flatten([composed, gaussian]) == composed.flattened() + [(gaussian, 1)]


@pytest.mark.parametrize("steps, selected", [(10, 11), (1, 2)])
def test_more_selected_than_steps_is_refused_by_name(steps, selected):
    with pytest.raises(ValueError, match=f"num_selected must be at most num_steps = {steps}"):
        _event(steps, selected)


def test_every_step_selected_is_t_one_step_epochs():
    """k = t: m = 1, r = 0, t epochs of 1-of-1 (the record in every step)."""
    parts = _event(4, 4).flattened()
    assert [(part.num_steps, count) for part, count in parts] == [(1, 4)]


def test_ledger_json_round_trip_keeps_the_event_and_its_parts(tmp_path):
    ledger = dpmech.PrivacyLedger("add-remove-one").record(_event(7, 3, 0.9), count=2, label="epochs")
    path = tmp_path / "ledger.json"
    ledger.save(path)
    for loaded in (dpmech.PrivacyLedger.load(path), dpmech.PrivacyLedger.from_json(ledger.to_json())):
        assert loaded.events == ledger.events and loaded.labels == ledger.labels
        assert loaded._pairs() == ledger._pairs() == [(_event(3, 1, 0.9), 2), (_event(2, 1, 0.9), 4)]


@pytest.mark.slow
def test_calibrate_ledger_through_the_parts():
    """σ for 2 of 5 steps at (ε, δ) = (1, 0.1), loss step 0.03: the certified δ at the σ found is at most the target,
    and the ledger's own numeric query, and that of the ledger of its parts (1-of-3 and 1-of-2 epochs), give the same
    certified interval at that σ and step, its upper end at most the target."""
    def allocation(sigma: float) -> dpmech.PrivacyLedger:
        return dpmech.PrivacyLedger("add-remove-one").record(_event(5, 2, sigma))

    sigma = calibrate_ledger(allocation, 1.0, 0.1, 0.5, 4.0, discretization=0.03, relative_tolerance=1e-2)
    assert 0.5 < sigma < 4.0 and sigma.certified_delta <= 0.1
    parts = dpmech.PrivacyLedger("add-remove-one").record(_event(3, 1, sigma)).record(_event(2, 1, sigma))
    answers = [ledger.delta(1.0, method="numeric", discretization=sigma.discretization).interval
               for ledger in (allocation(float(sigma)), parts)]
    assert answers[0] == answers[1] and answers[0][2] <= 0.1


def test_accountants_take_the_parts_or_refuse_by_name():
    """numeric (auto) accounts the parts; basic costs the inner Gaussian once per part's epoch (k releases per
    epoch); exact, pld and prv refuse the event by name; the dp_accounting export is non-private (ε = ∞)."""
    ledger = dpmech.PrivacyLedger("add-remove-one").record(_event(5, 2), count=2)
    assert ledger._resolve("auto", ledger._pairs()) == "numeric"
    gaussians = dpmech.PrivacyLedger("add-remove-one").record(dpmech.GaussianEvent(1.0), count=4)
    assert float(ledger.epsilon(1e-5, method="basic").epsilon) == float(gaussians.epsilon(1e-5, method="basic").epsilon)
    for method in ("exact", "pld", "prv"):
        with pytest.raises(ValueError, match="RandomAllocationEvent"):
            ledger.epsilon(1e-5, method=method)
    from dp_accounting import dp_event

    assert ledger.to_dp_event() == dp_event.ComposedDpEvent([dp_event.SelfComposedDpEvent(dp_event.NonPrivateDpEvent(), 2)])


def test_what_has_no_theorem_for_the_parts_refuses_by_name():
    """Group privacy and a replace-one ledger (no group theorem for random allocation); Poisson sampling of the epoch
    (an inner event of two parts has no single pair to amplify)."""
    event = _event(5, 2)
    with pytest.raises(ValueError, match="group_size: no group-privacy theorem for RandomAllocationEvent"):
        dpmech.PrivacyLedger("add-remove-one").record(event).group_privacy(2)
    with pytest.raises(ValueError, match="RandomAllocationEvent"):
        dpmech.PrivacyLedger("replace-one").record(event)
    sampled = dpmech.PrivacyLedger("add-remove-one").record(dpmech.PoissonSampledEvent(event, 0.1))
    with pytest.raises(ValueError, match="cannot account PoissonSampledEvent"):
        sampled.epsilon(1e-5)


# `dpmech dpsgd --sampling random-allocation` with N/B no integer: E epochs of B of N are E of T = E·N/B steps.
_WHOLE_RUN = ("--batch-size", "2", "--dataset-size", "5", "--delta", "1e-5", "--sampling", "random-allocation")


@pytest.mark.slow  # two accountings of 2 of 5 steps at δ = 1e-5
def test_dpsgd_random_allocation_over_the_whole_run_when_n_over_b_is_fractional():
    """N/B = 5/2 steps an epoch, 2 epochs: 5 steps, each record in 2 of them; the CLI's interval is the ledger's for
    ``RandomAllocationEvent(GaussianEvent(1), 5, 2)``, and the output says how the training must sample."""
    from tests.dpmech.test_cli_dpsgd import run_json

    record = run_json("epsilon", *_WHOLE_RUN, "--epochs", "2", "--noise-multiplier", "1")
    assert (record["steps"], record["steps_per_record"], record["epochs"]) == (5, 2, 2)
    assert "steps_per_epoch" not in record and "each record in 2 of the 5 steps" in record["note"]
    ledger = dpmech.PrivacyLedger("add-remove-one").record(_event(5, 2))
    lower, _, upper = ledger.epsilon(1e-5).interval
    assert record["interval"][0] <= lower and upper <= record["epsilon"]  # printed rounded outward
    assert record["epsilon"] <= upper * (1 + 1e-9)


@pytest.mark.parametrize("schedule", [("--epochs", "3"), ("--steps", "5")])
def test_dpsgd_random_allocation_refuses_a_fractional_run_by_name(schedule):
    """3 epochs of 5/2 steps are 7.5 steps; ``--steps`` gives no number of epochs to spread: exit 2, one line."""
    from tests.dpmech.test_cli_dpsgd import run

    status, out, err = run("epsilon", *_WHOLE_RUN, *schedule, "--noise-multiplier", "1")
    lines = err.strip().splitlines()
    assert status == 2 and out == "" and len(lines) == 1 and "--batch-size" in lines[0] and "whole" in lines[0], err


@pytest.mark.slow
def test_dpsgd_calibrate_over_the_whole_run():
    """Calibrating for the ε certified at σ = 1 over the whole run is never under-noised and lands within 0.1 %."""
    from tests.dpmech.test_cli_dpsgd import run_json

    target = run_json("epsilon", *_WHOLE_RUN, "--epochs", "2", "--noise-multiplier", "1")["epsilon"]
    calibrated = run_json("calibrate", *_WHOLE_RUN, "--epochs", "2", "--epsilon", repr(target))
    assert calibrated["certified_epsilon"] <= target and 0.999 <= calibrated["noise_multiplier"] <= 1.001
    assert calibrated["steps_per_record"] == 2


@pytest.mark.parametrize("steps, selected, tight", [(5, 1, True), (3, 3, True), (5, 2, False), (6, 3, False)])
def test_only_tight_reductions_are_certified(steps, selected, tight):
    """k = 1 (Feldman & Shenfeld's pair) and k = t (t Gaussians) are the event's own pair, so the interval is
    certified; for 1 < k < t the blocks' composition only dominates the k-of-t pair: the upper end holds, the
    interval is not certified and says why."""
    event = RandomAllocationEvent(GaussianEvent(1.0), num_steps=steps, num_selected=selected)
    assert event.parts_are_tight is tight
    assert SelfComposedEvent(event, 2).parts_are_tight is tight
    guarantee = PrivacyLedger().record(event).epsilon(1e-5)
    assert guarantee.certified is tight
    assert ("dominating reduction" in guarantee.note) is not tight
