"""Dropout accounting of blind averaging over SecAgg+ and the certified event of the quantised sum."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpmech
from trainers.flower import accounting
from trainers.flower.encoding import SecAggEncoding, randomised_rounding


def test_dropout_table_of_issue_17():
    # |U| = 10, t = 0.5, calibrated to ε = 1 at δ = 1e-5: 4 / 3 / 2 / 1 honest shares give ε =
    # 1.13 / 1.33 / 1.66 / 2.44 (the issue's values, to two decimals).
    table = accounting.dropout_table(1.0, 1e-5, 0.7, 10, 0.5, 5)
    assert table[:, 0].tolist() == [0, 1, 2, 3, 4, 5]
    assert table[:, 2].tolist() == [5, 4, 3, 2, 1, 0]
    assert table[0, 3] == pytest.approx(1.0, abs=1e-9)
    assert table[1:5, 3] == pytest.approx([1.13, 1.33, 1.66, 2.44], abs=0.01)
    assert math.isinf(table[5, 3])
    assert np.all(np.diff(table[:, 3]) > 0)


@given(st.integers(1, 200), st.floats(0.01, 1.0), st.data())
def test_honest_shares_are_never_more_than_the_worst_case_leaves(num_users, honest_fraction, data):
    survivors = data.draw(st.integers(0, num_users))
    honest = accounting.guaranteed_honest_shares(num_users, honest_fraction, survivors)
    # Any set of >= t|U| honest users minus the dropped ones: the guarantee is the worst case.
    assert honest == max(0, math.ceil(honest_fraction * num_users - 1e-9) - (num_users - survivors))
    assert 0 <= honest <= survivors


@given(st.floats(1e-3, 1e3), st.floats(1e-3, 1e3), st.integers(1, 1000), st.data())
def test_surviving_event_never_overstates_the_honest_noise(user_noise_std, sensitivity, survivors, data):
    honest = data.draw(st.integers(1, survivors))
    event = accounting.surviving_sum_event(user_noise_std, sensitivity, survivors, honest)
    # Exact rationals: σ_u·√h/n >= the event's σ, and the event's s >= s/n.
    from fractions import Fraction
    assert Fraction(event.sigma) ** 2 * survivors**2 <= Fraction(user_noise_std) ** 2 * honest
    assert Fraction(event.sensitivity) * survivors >= Fraction(sensitivity)
    reference = dpmech.mechanisms.blind_averaging_event(user_noise_std, sensitivity, survivors, honest / survivors)
    assert event.sigma == pytest.approx(reference.sigma, rel=1e-14)


def test_floor_refuses_to_release():
    with pytest.raises(ValueError, match="minimum_honest_shares = 3"):
        accounting.require_honest_shares(2, 3)
    assert accounting.require_honest_shares(3, 3) == 3
    with pytest.raises(ValueError, match="honest_shares"):
        accounting.surviving_sum_event(1.0, 1.0, 4, 0)


@given(st.lists(st.floats(-3.9, 3.9), min_size=1, max_size=20), st.lists(st.floats(-3.9, 3.9), min_size=1, max_size=20),
       st.integers(0, 2**32))
def test_rounding_with_shared_thresholds_moves_a_share_by_less_than_the_event_allows(first, second, seed):
    # The certified quantised-sum event rests on: with the same rounding thresholds, the rounded
    # shares differ by less than |a - b| + γ per coordinate, hence by less than ‖a - b‖ + γ√d.
    size = min(len(first), len(second))
    a, b = np.array(first[:size]), np.array(second[:size])
    encoding = SecAggEncoding(4.0, 2**10, 2**32, 10, 0.0)
    rounded_a = randomised_rounding(a, encoding, np.random.default_rng(seed))
    rounded_b = randomised_rounding(b, encoding, np.random.default_rng(seed))
    assert np.all(np.abs(rounded_a - rounded_b) < np.abs(a - b) + encoding.grid_step)
    event = accounting.quantised_sum_event(1.0, max(np.linalg.norm(a - b), 1e-12), encoding.grid_step, size)
    assert np.linalg.norm(rounded_a - rounded_b) <= event.sensitivity


def test_quantised_event_is_never_below_the_share_sensitivity():
    event = accounting.quantised_sum_event(0.5, 0.04, 2.0**-19, 170)
    assert event.sigma == 0.5
    assert event.sensitivity >= 0.04 + 2 * 2.0**-19 * math.sqrt(170)


def test_total_delta_adds_the_refusal_probability_rounded_up():
    # (ε, δ) with refusals of probability p: δ + p + e^ε·p (TV distance p on each side).
    assert accounting.total_delta(1e-5, 1e-9, 2.0) >= 1e-5 + (1 + math.exp(2.0)) * 1e-9
    with pytest.raises(ValueError, match="clip_failure_probability"):
        accounting.total_delta(1e-5, -1e-9, 1.0)
    with pytest.raises(ValueError, match="delta"):
        accounting.total_delta(0.0, 1e-9, 1.0)


@given(st.floats(1e-8, 0.1), st.floats(0.01, 10.0), st.floats(0.0, 1e-3))
def test_mechanism_delta_leaves_room_for_the_refusals(delta, epsilon, failure):
    refusals = (1 + math.exp(epsilon)) * failure
    if refusals >= delta * (1 - 1e-8):
        # Refused when nothing (or next to nothing) is left for the mechanism.
        if refusals >= delta:
            with pytest.raises(ValueError, match="clip_failure_probability"):
                accounting.mechanism_delta(delta, epsilon, failure)
        return
    mechanism = accounting.mechanism_delta(delta, epsilon, failure)
    assert 0 < mechanism <= delta
    # Any ε' <= ε the mechanism meets at that δ keeps the round's total within δ.
    assert accounting.total_delta(mechanism, failure, epsilon) <= delta


@pytest.mark.parametrize("arguments, name", [
    ((0, 0.5, 0), "num_users"), ((10, 0.0, 5), "honest_fraction"), ((10, 1.5, 5), "honest_fraction"),
    ((10, 0.5, 11), "num_survivors"), ((10, 0.5, -1), "num_survivors"), ((10, "0.5", 5), "honest_fraction"),
])
def test_bad_counts_are_refused(arguments, name):
    with pytest.raises(ValueError, match=name):
        accounting.guaranteed_honest_shares(*arguments)


def test_discrete_dropout_table_meets_the_target_down_to_the_floor_and_refuses_below():
    rows = accounting.discrete_dropout_table(1.0, 1e-5, 200.0, 170, 10, 0.5, 3, 5)
    dropped, survivors, honest, epsilon, released = rows.T
    assert honest.tolist() == [5, 4, 3, 2, 1, 0] and released.tolist() == [1, 1, 1, 0, 0, 0]
    assert np.all(epsilon[:3] <= 1.0)
    assert epsilon[2] == pytest.approx(1.0, abs=0.01)  # calibrated at the floor h = 3
    assert np.all(np.diff(epsilon[:5]) > 0) and epsilon[3] > 1.0 and math.isinf(epsilon[5])
    # Calibrated at h_min = 1, one honest share alone meets the target.
    assert np.all(accounting.discrete_dropout_table(1.0, 1e-5, 200.0, 170, 10, 0.5, 1, 4)[:, 3] <= 1.0)
