"""The exact accountant's ε(δ) at tiny δ (issue 28): k × binary randomized response against proven arb balls.

For k repetitions of binary randomized response at ε₀ the privacy loss is lⱼ = (2j − k)ε₀ with
probability Pⱼ = C(k, j) pʲ (1 − p)^{k−j}, p = 1/(1 + e^{−ε₀}), so

    δ(ε) = Σ_{lⱼ > ε} Pⱼ (1 − e^{ε − lⱼ}),

which python-flint's arb encloses with proven error bounds (the atoms lⱼ and ε are exact in it). An
ε is above the tight ε(δ) when δ(ε) <= δ is proven, below it when δ(ε) >= δ is; an undecided
comparison fails the test.

The accountant states its accuracy in log δ: its upper end is a point where its upper profile (atoms
rounded up by at most two grid units of 2^-50 of the largest loss) is within ``log_margin`` plus the
search's stopping tolerance of log δ, so the true δ a little below the upper end (by those grid units
and an ulp, well within 2^-40·kε₀) is at least δ·e^-κ, and symmetrically for the lower end.
"""

import math
from fractions import Fraction

import flint
from hypothesis import example, given
from hypothesis import strategies as st

from dpmech import REPLACE_ONE, PrivacyLedger, PureEpsilonEvent
from dpmech.accountants import exact
from tests.profiles import examples

_PRECISION = 256  # bits; 2000 products and a sum of 2000 terms lose a dozen


def _delta(count: int, epsilon0: float, epsilon: float) -> flint.arb:
    """δ(ε) of ``count`` × binary randomized response at ``epsilon0``, as a proven arb ball.

    The masses from the top down, P_k = (1 + e^{−ε₀})^{−k} and P_{j−1} = Pⱼ·j/(k − j + 1)·e^{−ε₀};
    1 − e^{ε − lⱼ} as −expm1, accurate where ε is within an ulp of an atom.
    """
    with flint.ctx.workprec(_PRECISION):
        step, point = flint.arb(epsilon0), flint.arb(epsilon)
        ratio = (-step).exp()
        mass = (1 + ratio) ** -count
        total = flint.arb(0)
        for j in range(count, -1, -1):
            gap = (2 * j - count) * step - point  # exact: a 53-bit ε₀ times an integer, minus a double
            if not gap > 0:
                break
            total += -mass * (-gap).expm1()
            mass *= ratio * j / (count - j + 1)
        return total


def _exact_interval(count: int, epsilon0: float, delta: float):
    """``ledger.epsilon(delta, method="exact").interval`` for ``count`` × RR(``epsilon0``)."""
    ledger = PrivacyLedger(REPLACE_ONE).record(PureEpsilonEvent(epsilon0), count=count)
    return ledger.epsilon(delta, method="exact").interval


def _check(count: int, epsilon0: float, delta: float):
    """The interval contains ε(δ), stays within the stated margin of it, and never passes kε₀."""
    lower, _, upper = _exact_interval(count, epsilon0, delta)
    target = flint.arb(delta)
    # Containment, proven: δ(upper) <= δ, and δ(lower) >= δ unless lower = 0 (which bounds every ε).
    assert _delta(count, epsilon0, upper) <= target
    assert lower == 0.0 or _delta(count, epsilon0, lower) >= target
    # No privacy loss exceeds kε₀, so ε(δ) <= kε₀ for every δ > 0: the upper end is at most the smallest
    # double >= kε₀ (compared exactly; kε₀ itself need not be a double).
    largest = count * Fraction(epsilon0)
    assert Fraction(math.nextafter(upper, -math.inf)) < largest
    # Width: within the stated log-δ margin (and the search's tolerance) plus a few grid units.
    log_margin = exact._profiles([(PureEpsilonEvent(epsilon0), count)])[0].log_margin
    kappa = 2.0 * (log_margin + 4.0 * exact._AIM * max(1.0, -math.log(delta)))
    shift = math.ldexp(count * epsilon0, -40)
    with flint.ctx.workprec(_PRECISION):
        assert upper == 0.0 or _delta(count, epsilon0, upper - shift) >= target * flint.arb(-kappa).exp()
        assert _delta(count, epsilon0, lower + shift) <= target * flint.arb(kappa).exp()
    return lower, upper


@examples(0.3)
@given(st.integers(1, 2000), st.floats(0.01, 2.0), st.floats(-300.0, -1.0))
# The closed-form start had an excess of exactly 0, which stepped away from the root to 0 and bisected.
@example(count=1, epsilon0=1.0, log10_delta=-1.0)
# 3ε₀ is not a double and ε(δ) lies within an ulp below it: the cap is the double above.
@example(count=3, epsilon0=1.6764320137548425, log10_delta=-15.0)
def test_interval_contains_the_truth_within_its_margin_at_any_delta(count, epsilon0, log10_delta):
    _check(count, epsilon0, 10.0**log10_delta)


def test_reported_1000_randomized_responses_at_1e_minus_200():
    # Was (496.982, 767.13): the search ran out of its 400 steps a bracket [422, 795] wide, one atom a step.
    # ε(1e-200) lies in (496.982131764831, 496.9821317648311) by bisection on the arb balls.
    lower, upper = _check(1000, 0.5, 1e-200)
    assert lower <= 496.982131764831 and 496.9821317648311 <= upper and upper - lower <= 1e-9


def test_reported_1000_randomized_responses_at_1e_minus_300_stays_below_the_largest_loss():
    # Was 1151 although no loss exceeds 1000 × 0.5. Only the atom 500, of mass P = (1 + e^-0.5)^-1000 ≈ e^-474,
    # lies above 499, so ε(δ) = 500 + log(1 − δ/P) ≈ 500 − e^-217 at 1e-300: 500 is the smallest double
    # above it, for the smallest positive double too.
    for delta in (1e-300, 5e-324):
        lower, upper = _check(1000, 0.5, delta)
        assert upper == 500.0 and lower >= 500.0 - 1e-12
