"""DiscreteGaussianEvent: its dominating pair, accounted by the numeric engine, against an arb enclosure of
the exact δ(ε) of k discrete Gaussian releases (Canonne, Kamath & Steinke 2020, Thm. 7 for k = 1)."""

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


def test_accountants_without_its_mathematics_refuse_it_by_name():
    ledger = PrivacyLedger().record(DiscreteGaussianEvent(Fraction(1), 1))
    for method in ("exact", "pld", "prv"):
        with pytest.raises(ValueError, match=f"{method}' cannot account DiscreteGaussianEvent"):
            ledger.epsilon(1e-5, method=method)


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
