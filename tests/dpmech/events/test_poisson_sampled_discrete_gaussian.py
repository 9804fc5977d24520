"""PoissonSampledEvent(DiscreteGaussianEvent) under method 'pld': dp_accounting's subsampled PLD of the truncated
discrete Gaussian pair (both directions), proven in :mod:`dpmech.events.discrete_gaussian` to dominate the sampled
release. Checked against an arb enclosure of the sampled release's exact δ(ε) (one step, by enumeration), the
domination itself at small truncations, the numeric accountant's certified interval, and dp_accounting's own PLD
of the same event (its own truncation and discretisation)."""

import math
from fractions import Fraction

import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_library
from flint import arb, ctx
from hypothesis import given
from hypothesis import strategies as st

from dpmech import PrivacyLedger
from dpmech.accountants import get_accountant
from dpmech.events import REPLACE_ONE, DiscreteGaussianEvent, PoissonSampledEvent
from tests.profiles import examples

# dp_accounting's grid at 1e-3 (its default 1e-4 costs seconds per composed query): its pessimistic ε exceeds the
# truth by at most one step per composed release.
STEP = 1e-3
# The release's own law is enumerated on |x| <= ⌈40σ⌉ + 5; the mass beyond is below e^-800.
_WINDOW_WIDTH = 40


@pytest.fixture(autouse=True)
def _arb_precision(monkeypatch):
    # 200 bits: the truncation's excess, below 1e-29, must show above arb's rounding.
    monkeypatch.setattr(ctx, "prec", 200)


sigma_squares = st.integers(1, 64).map(lambda n: Fraction(n, 4))
rates = st.floats(0.01, 0.9)


def _truncated_hockey_sticks(sigma_squared: Fraction, sensitivity: int, rate: float, truncation: int,
                             epsilon: float) -> tuple[arb, arb]:
    """(removal, addition) δ(ε) of the Poisson-sampled truncated pair, enumerated in arb: with A = N_Z(0, σ²)
    restricted to [−T, T] and renormalised, U = q·A(· − Δ) + (1 − q)·A against L = A, Σ_x (U(x) − e^ε L(x))₊ and
    Σ_x (L(x) − e^ε U(x))₊."""
    variance = arb(sigma_squared.numerator) / sigma_squared.denominator
    weights = {x: (-(arb(x) ** 2) / (2 * variance)).exp() for x in range(-truncation, truncation + 1)}
    normaliser = sum(weights.values(), arb(0))
    q, scale = arb(rate), arb(epsilon).exp()
    removal = addition = arb(0)
    for x in range(-truncation, truncation + sensitivity + 1):
        lower = weights.get(x, arb(0)) / normaliser
        upper = q * weights.get(x - sensitivity, arb(0)) / normaliser + (1 - q) * lower
        removal += _positive_part(upper - scale * lower)
        addition += _positive_part(lower - scale * upper)
    return removal, addition


def _positive_part(difference: arb) -> arb:
    """An enclosure of max(difference, 0)."""
    if difference > 0:
        return difference
    if difference < 0:
        return arb(0)
    return arb(0).union(difference)


def _release_delta(sigma_squared: Fraction, sensitivity: int, rate: float, epsilon: float) -> arb:
    """δ(ε) of the Poisson-sampled release q(D) + N_Z(0, σ²) under add/remove-one, the larger direction, enclosed in
    arb. N_Z(0, σ²) on the window |x| <= R, renormalised, is within total variation 2Σ_{x>R} e^{−x²/(2σ²)}/Z of
    itself, and each hockey-stick divergence moves by at most (1 + e^ε) times that: added as the ball's radius."""
    reach = math.ceil(_WINDOW_WIDTH * math.sqrt(float(sigma_squared))) + 5
    removal, addition = _truncated_hockey_sticks(sigma_squared, sensitivity, rate, reach, epsilon)
    variance = arb(sigma_squared.numerator) / sigma_squared.denominator
    first = arb(reach + 1)
    one_tail = (-(first**2) / (2 * variance)).exp() / (1 - (-(2 * first + 1) / (2 * variance)).exp())
    distance = (1 + arb(epsilon).exp()) * 2 * one_tail  # Z >= 1 (the term at x = 0)
    return _larger(removal, addition) + distance.union(-distance)


def _larger(first: arb, second: arb) -> arb:
    """An enclosure of max(first, second)."""
    if first > second:
        return first
    if second > first:
        return second
    return first.union(second)


def _ledger(sigma_squared: Fraction, sensitivity: int, rate: float, steps: int) -> PrivacyLedger:
    return PrivacyLedger().record(PoissonSampledEvent(DiscreteGaussianEvent(sigma_squared, sensitivity), rate),
                                  count=steps)


@pytest.mark.parametrize("sigma_squared, sensitivity", [(Fraction(1, 4), 1), (Fraction(1), 1), (Fraction(3), 2),
                                                        (Fraction(9, 4), 5)])
@pytest.mark.parametrize("rate", [0.05, 0.5, 0.95])
def test_the_sampled_truncated_pair_dominates_the_sampled_release_at_every_truncation_and_epsilon(
        sigma_squared, sensitivity, rate):
    # The module docstring's claim, checked by enumeration in each direction on its own: every T >= Δ/2
    # (dp_accounting's least), ε of both signs; small T, where a misplaced tail mass would show.
    for truncation in range((sensitivity + 1) // 2, 9):
        for epsilon in (-2.0, -0.5, 0.0, 0.3, 1.0, 3.0):
            truncated = _truncated_hockey_sticks(sigma_squared, sensitivity, rate, truncation, epsilon)
            reach = math.ceil(_WINDOW_WIDTH * math.sqrt(float(sigma_squared))) + 5
            release = _truncated_hockey_sticks(sigma_squared, sensitivity, rate, reach, epsilon)
            for direction in (0, 1):
                # The release's window is within 1e-300 of the release (see _release_delta).
                assert truncated[direction].upper() >= release[direction].lower() - 1e-300, (
                    truncation, epsilon, direction, truncated, release)


@pytest.mark.parametrize("sigma_squared, sensitivity", [(Fraction(1, 4), 1), (Fraction(2), 3)])
def test_the_accountants_truncation_exceeds_the_sampled_release_by_less_than_the_stated_bound(sigma_squared,
                                                                                              sensitivity):
    # T = ⌈11.6σ⌉ + Δ: the excess over the sampled release is below (1 + e^ε)·1.3e-29 (module docstring).
    truncation = math.ceil(11.6 * math.sqrt(float(sigma_squared))) + sensitivity
    for rate in (0.1, 0.7):
        for epsilon in (0.0, 0.5, 2.0):
            truncated = _larger(*_truncated_hockey_sticks(sigma_squared, sensitivity, rate, truncation, epsilon))
            release = _release_delta(sigma_squared, sensitivity, rate, epsilon)
            assert truncated.lower() >= release.lower() - 1e-300
            assert truncated.upper() - release.lower() <= (1 + math.exp(epsilon)) * 1.3e-29


# (c) One step against the exact δ(ε), enumerated: the upper end bounds it, within one grid step of ε.
@examples(0.2)
@given(st.integers(1, 16).map(lambda n: Fraction(n, 4)), st.integers(1, 3), rates, st.floats(0.0, 4.0))
def test_pld_bounds_the_exact_sampled_delta_of_one_step_and_is_tight(sigma_squared, sensitivity, rate, epsilon):
    ledger = _ledger(sigma_squared, sensitivity, rate, 1)
    lower, estimate, upper = ledger.delta(epsilon, method="pld", discretization=STEP).interval
    exact = _release_delta(sigma_squared, sensitivity, rate, epsilon)
    assert upper >= float(exact.lower())
    shifted = _release_delta(sigma_squared, sensitivity, rate, max(epsilon - STEP, 0.0))
    assert upper <= float(shifted.upper()) * (1 + 1e-6) + 1e-25
    assert lower <= estimate <= upper
    certified = ledger.delta(epsilon, method="numeric")
    assert certified.certified and certified.interval[0] <= float(exact.upper())
    assert float(exact.lower()) <= certified.interval[2]


@examples(0.2)
@given(st.integers(1, 16).map(lambda n: Fraction(n, 4)), st.integers(1, 3), rates,
       st.sampled_from([1e-1, 1e-3, 1e-6]))
def test_pld_epsilon_of_one_step_meets_delta_on_the_exact_curve(sigma_squared, sensitivity, rate, delta):
    lower, _, upper = _ledger(sigma_squared, sensitivity, rate, 1).epsilon(delta, method="pld",
                                                                           discretization=STEP).interval
    assert _release_delta(sigma_squared, sensitivity, rate, upper).lower() <= delta
    # Within one grid step: δ(ε) at upper − STEP is not below the target.
    if upper - STEP > 0.0:
        assert _release_delta(sigma_squared, sensitivity, rate, upper - STEP).upper() >= delta
    assert lower <= upper


# (a) Compositions against numeric's certified interval: the intervals overlap, the upper end never below the
# certified lower end, and within one grid step per step of the certified upper end.
@examples(0.1)
@given(sigma_squares, rates, st.integers(1, 30), st.sampled_from([1e-2, 1e-4, 1e-6, 1e-9]))
def test_pld_epsilon_of_a_sampled_composition_overlaps_the_certified_interval(sigma_squared, rate, steps, delta):
    ledger = _ledger(sigma_squared, 1, rate, steps)
    assert get_accountant("pld").supports([(PoissonSampledEvent(DiscreteGaussianEvent(sigma_squared, 1), rate), steps)])
    answer = ledger.epsilon(delta, method="pld", discretization=STEP)
    certified = ledger.epsilon(delta, method="numeric")
    assert certified.certified and not answer.certified
    lower, _, upper = answer.interval
    certified_lower, _, certified_upper = certified.interval
    assert upper >= certified_lower and lower <= certified_upper
    assert upper <= certified_upper + steps * STEP + 1e-9


# (b) dp_accounting's own PLD of the event (its truncation ⌈11.6σ⌉, privacy buckets, its sampled pair): within its
# stated error, one grid step per composed step, of the certified interval on both sides.
@pytest.mark.parametrize("sigma_squared, rate, steps", [(Fraction(1, 4), 0.5, 10), (Fraction(1), 0.01, 30),
                                                        (Fraction(4), 0.1, 20), (Fraction(16), 0.3, 5)])
def test_dp_accounting_own_pld_of_the_event_agrees_within_its_discretisation(sigma_squared, rate, steps):
    own = pld_library.from_discrete_gaussian_mechanism(math.sqrt(sigma_squared), 1, sampling_prob=rate,
                                                       value_discretization_interval=STEP).self_compose(steps)
    ledger = _ledger(sigma_squared, 1, rate, steps)
    for delta in (1e-3, 1e-6):
        certified_lower, _, certified_upper = ledger.epsilon(delta, method="numeric").interval
        own_epsilon = own.get_epsilon_for_delta(delta)
        assert certified_lower - steps * STEP <= own_epsilon <= certified_upper + steps * STEP
        assert own_epsilon >= ledger.epsilon(delta, method="pld", discretization=STEP).interval[0] - steps * STEP


def test_it_is_supported_only_under_add_remove_one_and_still_amplifies():
    inner = DiscreteGaussianEvent(Fraction(4), 1)
    sampled = PoissonSampledEvent(inner, 0.1)
    accountant = get_accountant("pld")
    assert accountant.supports([(sampled, 10)])
    # Δ stated under replace-one: the amplification theorem takes it under add/remove-one, so the sampled event
    # is refused when it is made, before any method.
    with pytest.raises(ValueError, match="^event: its relation must be add-remove-one, that of Poisson sampling"):
        PoissonSampledEvent(DiscreteGaussianEvent(Fraction(4), 1, REPLACE_ONE), 0.1)
    alone = PrivacyLedger().record(inner, count=10).epsilon(1e-5, method="pld", discretization=STEP)
    amplified = PrivacyLedger().record(sampled, count=10).epsilon(1e-5, method="pld", discretization=STEP)
    assert amplified.epsilon < 0.5 * alone.epsilon
