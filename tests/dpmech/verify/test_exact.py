"""Exact checker: hockey-stick sums, witnesses, smallest ε, and the randomized-response family at drawn settings."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpmech
from dpmech.randomized_response import worst_case_log_ratio
from dpmech.verify import DpViolation, assert_dp, hockey_stick_divergence, privacy_profile, smallest_epsilon

from tests.profiles import examples

OMEGA = 0.5671432904097838  # the solution of ε = −ln ε


def test_hockey_stick_by_hand_and_witness():
    first, second = {"a": 0.5, "b": 0.5}, {"a": 0.1, "c": 0.9}
    result = hockey_stick_divergence(first, second, math.log(2.0))
    assert result.divergence == pytest.approx((0.5 - 0.2) + 0.5, rel=1e-15)
    assert set(result.witness) == {"a", "b"}
    assert hockey_stick_divergence([0.2, 0.8], [0.2, 0.8], 0.0).divergence == 0.0


@st.composite
def label_settings(draw):
    num_classes = draw(st.integers(2, 8))
    epsilon = draw(st.floats(1e-3, 12.0))
    prior = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=num_classes, max_size=num_classes)))
    prior = prior + 1e-3
    return num_classes, epsilon, prior / prior.sum(), draw(st.integers(1, num_classes)), draw(st.booleans())


def family(num_classes, epsilon, prior, k, compat):
    return {
        "rr": lambda y: dpmech.mechanisms.randomized_response_distribution([y], epsilon, num_classes)[0],
        "top-k": lambda y: dpmech.mechanisms.rr_top_k_distribution([y], prior[None, :], k, epsilon)[0],
        "with-prior": lambda y: dpmech.mechanisms.rr_with_prior_distribution([y], prior[None, :], epsilon, google_compat=compat)[0],
    }


@examples(0.3)  # every label pair of four mechanisms enumerated exactly: ~0.1 s of CPU per example
@given(label_settings())
def test_rr_family_is_exactly_epsilon_label_dp_and_not_less(setting):
    num_classes, epsilon, prior, k, compat = setting
    for name, mechanism in family(num_classes, epsilon, prior, k, compat).items():
        channel = np.stack([mechanism(y) for y in range(num_classes)])
        measured = max(smallest_epsilon(mechanism, (y, z), 0.0) for y in range(num_classes) for z in range(num_classes))
        # Independent of dpmech.randomized_response's own check: the exact ε equals the worst log-ratio of the channel.
        assert measured == pytest.approx(worst_case_log_ratio(channel), rel=1e-12, abs=1e-15), name
        for y in range(num_classes):
            for z in range(num_classes):
                assert_dp(mechanism, (y, z), epsilon, 0.0)
        assert measured <= epsilon * (1 + 1e-12)
        # Tight where a label pair can reach e^ε: RR always, top-k when k >= 2 (both labels inside Y_k).
        if name == "rr" or (name == "top-k" and k >= 2):
            assert measured == pytest.approx(epsilon, rel=1e-10)
            with pytest.raises(DpViolation):
                worst_pair = (int(np.argsort(-prior, kind="stable")[0]), int(np.argsort(-prior, kind="stable")[1]))
                assert_dp(mechanism, worst_pair, epsilon * (1 - 1e-6), 0.0)


def broken_top_k_distribution(label, prior, k, epsilon):
    """The public variant that draws uniformly over ALL labels when y is outside Y_k (not DP)."""
    num_classes = prior.size
    if np.argsort(-prior, kind="stable").tolist().index(label) < k:
        return dpmech.mechanisms.rr_top_k_distribution([label], prior[None, :], k, epsilon)[0]
    return np.full(num_classes, 1.0 / num_classes)


def test_broken_top_k_is_refuted_with_the_outputs_outside_y_k_as_witness():
    prior = np.array([0.5, 0.3, 0.1, 0.1])
    mechanism = lambda y: broken_top_k_distribution(y, prior, 2, 1.0)  # noqa: E731
    with pytest.raises(DpViolation) as caught:
        assert_dp(mechanism, (3, 0), 1.0, 0.05)
    violation = caught.value
    assert set(violation.witness) == {2, 3}
    assert violation.direction == "D -> D'"
    assert violation.measured_delta == pytest.approx(0.5, rel=1e-14) and violation.excess == pytest.approx(0.45)
    assert smallest_epsilon(mechanism, (3, 0), 0.0) == math.inf
    assert smallest_epsilon(mechanism, (3, 0), 0.5) < 1.0  # with δ = 1/2 the outside mass is paid for


def broken_rr_distribution(label, epsilon, num_classes):
    """RR with keep probability ε/(ε+K−1) instead of e^ε/(e^ε+K−1)."""
    row = np.full(num_classes, 1.0 / (epsilon + num_classes - 1))
    row[label] = epsilon / (epsilon + num_classes - 1)
    return row


@given(st.floats(0.01, 5.0), st.integers(2, 6))
def test_broken_rr_violates_exactly_when_epsilon_is_below_omega(epsilon, num_classes):
    # Its worst log-ratio is |ln ε|, which exceeds ε only for ε < Ω ≈ 0.567: above that the bug costs utility, not privacy.
    mechanism = lambda y: broken_rr_distribution(y, epsilon, num_classes)  # noqa: E731
    assert smallest_epsilon(mechanism, (0, 1), 0.0) == pytest.approx(abs(math.log(epsilon)), rel=1e-12, abs=1e-14)
    if epsilon < OMEGA * (1 - 1e-6):
        with pytest.raises(DpViolation):
            assert_dp(mechanism, (0, 1), epsilon, 0.0)
    elif epsilon > OMEGA * (1 + 1e-6):
        assert_dp(mechanism, (0, 1), epsilon, 0.0)


@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=7), st.lists(st.floats(0.0, 1.0), min_size=2, max_size=7), st.floats(0.0, 0.9))
def test_smallest_epsilon_is_where_the_profile_crosses_delta(raw_first, raw_second, delta):
    size = min(len(raw_first), len(raw_second))
    first, second = np.array(raw_first[:size]) + 1e-3, np.array(raw_second[:size]) + 1e-3
    first, second = first / first.sum(), second / second.sum()
    mechanism = lambda which: first if which == 0 else second  # noqa: E731
    epsilon = smallest_epsilon(mechanism, (0, 1), delta)
    assert privacy_profile(mechanism, (0, 1), epsilon, rtol=0.0) <= delta + 1e-12
    if epsilon > 1e-9:
        assert privacy_profile(mechanism, (0, 1), epsilon * (1 - 1e-6) - 1e-12, rtol=0.0) > delta


BAD_INPUTS = [
    ("epsilon", lambda: hockey_stick_divergence([1.0], [1.0], -1.0)),
    ("distribution", lambda: hockey_stick_divergence([0.5, 0.6], [0.5, 0.5], 1.0)),
    ("distribution", lambda: hockey_stick_divergence({"a": 1.0}, [1.0], 1.0)),
    ("distribution", lambda: hockey_stick_divergence([0.5, 0.5], [1.0], 1.0)),
    ("delta", lambda: assert_dp(lambda d: [1.0], (0, 1), 1.0, 1.5)),
    ("delta", lambda: smallest_epsilon(lambda d: [1.0], (0, 1), -0.1)),
    ("rtol", lambda: privacy_profile(lambda d: [1.0], (0, 1), 1.0, rtol=-1.0)),
    ("pair", lambda: privacy_profile(lambda d: [1.0], 3, 1.0)),
    ("mechanism", lambda: privacy_profile("rr", (0, 1), 1.0)),
]


@pytest.mark.parametrize("parameter, call", BAD_INPUTS, ids=[f"{name}-{i}" for i, (name, _) in enumerate(BAD_INPUTS)])
def test_bad_input_raises_value_error_naming_the_parameter(parameter, call):
    with pytest.raises(ValueError, match=parameter):
        call()
