"""DiscreteGaussianEvent: its dominating pair, accounted by the numeric engine, against an arb enclosure of
the exact δ(ε) of k discrete Gaussian releases (Canonne, Kamath & Steinke 2020, Thm. 7 for k = 1); dp_accounting's
truncated discrete Gaussian, proven to dominate it, against both."""

import math
from fractions import Fraction

import pytest
from flint import arb, arb_poly
from hypothesis import given
from hypothesis import strategies as st

from tests.profiles import examples

from dpmech import PrivacyLedger, gaussian_delta, group_privacy
from dpmech.events import (
    ADD_REMOVE_ONE,
    REPLACE_ONE,
    DiscreteGaussianEvent,
    PoissonSampledEvent,
)


def _exact_delta(sigma_squared: Fraction, sensitivity: int, count: int, epsilon: float) -> arb:
    """δ(ε) of ``count`` releases of N_Z(0, σ²) against N_Z(Δ, σ²), enclosed in arb.

    Under P the loss of k releases is (kΔ² − 2ΔS)/(2σ²) with S the sum of k draws of N_Z(0, σ²), so
    δ(ε) = Σ_s P[S = s](1 − e^{ε − L(s)})₊ (the pair is symmetric: one direction). S's law is the k-th power
    of the generating polynomial of the draws on |x| <= M; the mass beyond M, at most k·2Σ_{x>M} w(x)/Z with
    the geometric tail bound, is added as the ball's radius (each term of δ lies in [0, 1]).
    """
    variance = arb(sigma_squared.numerator) / sigma_squared.denominator
    reach = math.ceil(40 * math.sqrt(float(sigma_squared))) + count * sensitivity + 5
    weights = [(-(arb(x) ** 2) / (2 * variance)).exp() for x in range(-reach, reach + 1)]
    first = arb(reach + 1)
    one_tail = (-(first**2) / (2 * variance)).exp() / (1 - (-(2 * first + 1) / (2 * variance)).exp())
    normaliser = sum(weights, arb(0)) + 2 * one_tail  # Z within the tail bound (taken whole: an upper end)
    normaliser = normaliser.union(sum(weights, arb(0)))
    law = arb_poly(weights) ** count  # coefficient j: mass of S = j − k·M, times Z^k
    total = arb(0)
    for index in range(count * (2 * reach) + 1):
        s = index - count * reach
        loss = (arb(count * sensitivity**2) - 2 * sensitivity * s) / (2 * variance)
        gap = arb(epsilon) - loss
        if gap < 0:
            total += law[index] * (1 - gap.exp())
        elif not gap > 0:  # the loss straddles ε: its term lies in [0, 1 − e^gap]
            total += law[index] * arb(0).union(1 - gap.exp())
    missing = count * 2 * one_tail / sum(weights, arb(0))
    return (total / normaliser**count + arb(0).union(missing)).intersection(arb(0).union(arb(1)))


sigma_squares = st.integers(1, 16).map(lambda n: Fraction(n, 4))


@examples(0.2)
@given(sigma_squares, st.integers(1, 3), st.integers(1, 2), st.floats(0.0, 4.0))
def test_numeric_delta_contains_the_exact_discrete_gaussian_delta(sigma_squared, sensitivity, count, epsilon):
    ledger = PrivacyLedger().record(DiscreteGaussianEvent(sigma_squared, sensitivity), count=count)
    guarantee = ledger.delta(epsilon)
    assert guarantee.method == "numeric" and guarantee.certified
    exact = _exact_delta(sigma_squared, sensitivity, count, epsilon)
    lower, _, upper = guarantee.interval
    assert lower <= float(exact.upper()) and float(exact.lower()) <= upper, (guarantee.interval, exact)


@examples(0.2)
@given(sigma_squares, st.integers(1, 3), st.integers(1, 2), st.sampled_from([1e-1, 1e-3, 1e-6]))
def test_numeric_epsilon_brackets_the_exact_epsilon(sigma_squared, sensitivity, count, delta):
    ledger = PrivacyLedger().record(DiscreteGaussianEvent(sigma_squared, sensitivity), count=count)
    lower, _, upper = ledger.epsilon(delta).interval
    # δ(ε) decreases: the upper end meets δ, the lower end does not beat it.
    assert _exact_delta(sigma_squared, sensitivity, count, upper).lower() <= delta
    if lower > 0.0:
        assert _exact_delta(sigma_squared, sensitivity, count, lower).upper() >= delta


def test_the_pair_is_the_discrete_one_not_the_continuous_one():
    # At σ = 1/2 the discrete and continuous Gaussians differ by far more than the certified interval's width.
    sigma_squared, epsilon = Fraction(1, 4), 1.0
    lower, _, upper = PrivacyLedger().record(DiscreteGaussianEvent(sigma_squared, 1)).delta(epsilon).interval
    exact = _exact_delta(sigma_squared, 1, 1, epsilon)
    assert lower <= float(exact.upper()) and float(exact.lower()) <= upper
    continuous = gaussian_delta(epsilon, 0.5, 1.0)
    assert not lower <= continuous <= upper
    assert upper - lower < 1e-2 * abs(continuous - upper)


def test_the_pair_is_symmetric_and_keeps_the_tails_at_infinite_loss():
    pair = DiscreteGaussianEvent(Fraction(9, 4), 2).privacy_loss_pair()
    loss, log_p, log_q = pair.log_atoms()
    assert pair.symmetric
    # The P-mass beyond the window sits at +∞ (and Q's, mirrored, at −∞): kept, and below e^-790.
    assert -math.inf < log_p[loss == math.inf][0] < -790.0 and log_q[loss == math.inf][0] == -math.inf
    assert log_q[loss == -math.inf][0] == log_p[loss == math.inf][0]
    # The window's losses are (Δ² − 2Δx)/(2σ²) at the integers x = −N, ..., Δ + N, N = ⌈40σ⌉ + 1 = 61.
    points = sorted((4.0 - 2.0 * 2.25 * value) / 4.0 for value in loss if math.isfinite(value))
    assert points == pytest.approx(list(range(-61, 2 + 61 + 1)), abs=1e-9)
    _, p, q = pair.atoms()
    assert math.fsum(p) == pytest.approx(1.0, abs=1e-12) and math.fsum(q) == pytest.approx(1.0, abs=1e-12)


@given(sigma_squares, st.integers(1, 3), st.sampled_from([1e-2, 1e-5]))
def test_basic_cost_is_never_below_the_exact_epsilon(sigma_squared, sensitivity, delta):
    event = DiscreteGaussianEvent(sigma_squared, sensitivity)
    ledger = PrivacyLedger().record(event)
    basic = ledger.epsilon(delta, method="basic")
    exact = _exact_delta(sigma_squared, sensitivity, 1, basic.epsilon)
    assert exact.lower() <= delta
    # One release's curve is the tight one (CKS Thm. 7, its δ bound within a relative 1e-8): about the numeric
    # engine's upper end.
    assert basic.epsilon <= ledger.epsilon(delta, method="numeric").epsilon * (1 + 1e-6)
    bound = math.exp(event.basic_cost().log_delta(basic.epsilon))
    assert exact.upper() <= bound * (1 + 1e-12)


def test_group_form_scales_the_sensitivity_and_enters_replace_one_ledgers():
    event = DiscreteGaussianEvent(Fraction(3, 2), 2, ADD_REMOVE_ONE)
    assert group_privacy(event, 3) == DiscreteGaussianEvent(Fraction(3, 2), 6, ADD_REMOVE_ONE)
    replace = PrivacyLedger(REPLACE_ONE).record(event)
    alone = PrivacyLedger(REPLACE_ONE).record(DiscreteGaussianEvent(Fraction(3, 2), 4))
    assert replace.delta(1.0).interval == alone.delta(1.0).interval


def test_accountants_without_its_mathematics_refuse_it_by_name_and_point_to_numeric():
    ledger = PrivacyLedger().record(DiscreteGaussianEvent(Fraction(1), 1))
    with pytest.raises(ValueError, match="exact' cannot account DiscreteGaussianEvent; it takes Gaussian releases"):
        ledger.epsilon(1e-5, method="exact")
    with pytest.raises(ValueError, match=r"prv' cannot account DiscreteGaussianEvent; .*prv_accountant has no discrete "
                                         r"Gaussian.*use method='numeric'"):
        ledger.epsilon(1e-5, method="prv")


def _truncated_delta(sigma_squared: Fraction, sensitivity: int, truncation: int, epsilon: float) -> arb:
    """δ(ε) of dp_accounting's discrete Gaussian pair: N_Z(0, σ²) restricted to [−T, T] and renormalised, against
    its shift by Δ, by enumeration in arb (the mass of [−T, Δ − T), where the shift has none, counted whole)."""
    variance = arb(sigma_squared.numerator) / sigma_squared.denominator
    weights = {x: (-(arb(x) ** 2) / (2 * variance)).exp() for x in range(-truncation, truncation + 1)}
    normaliser = sum(weights.values(), arb(0))
    total = arb(0)
    for x, weight in weights.items():
        shifted = weights.get(x - sensitivity, arb(0))
        difference = weight - arb(epsilon).exp() * shifted
        if difference > 0:
            total += difference
        elif not difference < 0:
            total += arb(0).union(difference)
    return total / normaliser


@pytest.mark.parametrize("sigma_squared, sensitivity", [(Fraction(1, 4), 1), (Fraction(1), 1), (Fraction(3), 2),
                                                        (Fraction(9, 4), 5)])
def test_the_truncated_pair_dominates_the_release_at_every_truncation_and_epsilon(sigma_squared, sensitivity):
    # The module docstring's proof, checked by enumeration: every T >= Δ/2 (dp_accounting's least), ε of both signs.
    for truncation in range((sensitivity + 1) // 2, 9):
        for epsilon in (-2.0, -0.5, 0.0, 0.3, 1.0, 3.0):
            truncated = _truncated_delta(sigma_squared, sensitivity, truncation, epsilon)
            exact = _exact_delta(sigma_squared, sensitivity, 1, epsilon) if epsilon >= 0 else None
            if exact is None:  # δ(ε) for ε < 0, by the same enumeration on a window far past the tails
                exact = _truncated_delta(sigma_squared, sensitivity, 60, epsilon)
            assert truncated.upper() >= exact.lower(), (truncation, epsilon, truncated, exact)


# dp_accounting's grid at 1e-3 (its default 1e-4 costs seconds per composed query): tightness within count·1e-3.
STEP = 1e-3


@examples(0.05)
@given(sigma_squares, st.integers(1, 3), st.integers(1, 2), st.floats(0.0, 4.0))
def test_dp_accounting_bounds_the_certified_delta_from_above_and_agrees_with_it(sigma_squared, sensitivity, count,
                                                                                 epsilon):
    ledger = PrivacyLedger().record(DiscreteGaussianEvent(sigma_squared, sensitivity), count=count)
    answer = ledger.delta(epsilon, method="pld", discretization=STEP)
    lower, estimate, upper = answer.interval
    certified = ledger.delta(epsilon, method="numeric")
    assert certified.certified and not answer.certified
    # An upper bound of δ(ε): never below the certified lower end, nor below arb's enclosure of the exact δ.
    assert upper >= certified.interval[0]
    assert upper >= float(_exact_delta(sigma_squared, sensitivity, count, epsilon).lower())
    # Tight: within dp_accounting's discretisation (one step per release) of the certified upper end, and its
    # optimistic estimate not above that end.
    shifted = ledger.delta(max(epsilon - count * STEP, 0.0), method="numeric").interval[2]
    assert upper <= shifted * (1 + 1e-6) + 1e-25 and lower <= certified.interval[2] * (1 + 1e-6)
    assert lower <= estimate <= upper


@pytest.mark.parametrize("sigma_squared, sensitivity, count", [(Fraction(1, 4), 1, 1), (Fraction(4), 2, 2),
                                                               (Fraction(9, 4), 3, 2)])
def test_dp_accounting_epsilon_meets_delta_where_the_certified_epsilon_does(sigma_squared, sensitivity, count):
    ledger = PrivacyLedger().record(DiscreteGaussianEvent(sigma_squared, sensitivity), count=count)
    for delta in (1e-3, 1e-6):
        certified = ledger.epsilon(delta, method="numeric").interval
        lower, _, upper = ledger.epsilon(delta, method="pld", discretization=STEP).interval
        assert upper >= certified[0] and lower <= certified[2] + 1e-6
        assert upper <= certified[2] + count * STEP + 1e-6


def test_poisson_sampling_of_it_is_accounted_and_amplifies():
    event = DiscreteGaussianEvent(Fraction(4), 1)
    sampled = PrivacyLedger().record(PoissonSampledEvent(event, 0.1), count=10).epsilon(1e-5)
    alone = PrivacyLedger().record(event, count=10).epsilon(1e-5)
    assert sampled.method == alone.method == "numeric"
    assert sampled.epsilon < 0.5 * alone.epsilon


@pytest.mark.parametrize("call,parameter", [
    (lambda: DiscreteGaussianEvent(Fraction(0), 1), "sigma_squared"),
    (lambda: DiscreteGaussianEvent(2.0**33, 1), "sigma_squared"),
    (lambda: DiscreteGaussianEvent(Fraction(1), 0), "sensitivity"),
    (lambda: DiscreteGaussianEvent(Fraction(1), 1.5), "sensitivity"),
    (lambda: DiscreteGaussianEvent(Fraction(1), 1, "neighbours"), "neighbouring"),
])
def test_bad_input_names_the_parameter(call, parameter):
    with pytest.raises(ValueError, match=parameter):
        call()
