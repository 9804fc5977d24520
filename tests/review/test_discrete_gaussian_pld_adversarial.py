"""Adversarial review of DiscreteGaussianEvent under method 'pld' (commit 6c250f2).

The claim: dp_accounting's pair of N_Z(0, σ²) truncated to [−T, T] and renormalised, against its shift by Δ,
dominates the untruncated release (N_Z(0, σ²), N_Z(Δ, σ²)) at every ε of both signs for integer T >= Δ/2, hence in
every composition. Checked here directly, not through the proof: both pairs' k-fold compositions are exact
convolutions on the integers (the k-fold loss is a function of the sum of the outputs, so the composed pair is
(A^{*k}, A^{*k} shifted by kΔ)), in both directions, in mpmath at 60 digits. As δ(ε) = 1 − Σ_s min(U(s), e^ε L(s))
for a law U of mass 1, the two are compared by that overlap, a sum of positive terms (δ itself is 1 − 1e-70 at
σ² = 0.1, Δ = 5, three releases: at 40 or 60 digits the two δ rounded to the same value and misordered). The release
is kept on [−N, N], N = ⌈20σ⌉ + 2Δ: its overlap there is at most its whole overlap, and renormalising on the window
raises each mass by a factor below 1 + e^{−200}, so the truncated pair's overlap being at most the release's windowed
one (less 1e-55 relative, the rounding allowance) shows δ_truncated >= δ_release to that resolution.
"""

import math
from fractions import Fraction

import mpmath
import pytest

from dpmech import PrivacyLedger
from dpmech.events import DiscreteGaussianEvent

_DIGITS = 60


def _pmf(sigma_squared, low: int, high: int) -> tuple[int, list]:
    weights = [mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * sigma_squared)) for x in range(low, high + 1)]
    total = mpmath.fsum(weights)
    return low, [weight / total for weight in weights]


def _convolve(first, second):
    (first_low, first_masses), (second_low, second_masses) = first, second
    out = [mpmath.mpf(0)] * (len(first_masses) + len(second_masses) - 1)
    for i, a in enumerate(first_masses):
        for j, b in enumerate(second_masses):
            out[i + j] += a * b
    return first_low + second_low, out


def _power(law, count: int):
    result = law
    for _ in range(count - 1):
        result = _convolve(result, law)
    return result


def _hockey_stick(upper, lower, epsilon: float):
    """Σ_x (U(x) − e^ε L(x))⁺ for laws given as (lowest integer, masses)."""
    (upper_low, upper_masses), (lower_low, lower_masses) = upper, lower
    bound = mpmath.exp(epsilon)
    total = mpmath.mpf(0)
    for x in range(min(upper_low, lower_low), max(upper_low + len(upper_masses), lower_low + len(lower_masses))):
        u = upper_masses[x - upper_low] if 0 <= x - upper_low < len(upper_masses) else 0
        lo = lower_masses[x - lower_low] if 0 <= x - lower_low < len(lower_masses) else 0
        total += max(u - bound * lo, 0)
    return total


def _overlap(upper, lower, epsilon: float):
    """Σ_x min(U(x), e^ε L(x)): 1 − δ(ε) for a law U of mass 1."""
    (upper_low, upper_masses), (lower_low, lower_masses) = upper, lower
    bound = mpmath.exp(epsilon)
    return mpmath.fsum(min(mass, bound * lower_masses[x + upper_low - lower_low])
                       for x, mass in enumerate(upper_masses) if 0 <= x + upper_low - lower_low < len(lower_masses))


def _shifted(law, by: int):
    return law[0] + by, law[1]


def _truncated_pair_shortfalls(sigma_squared: Fraction, sensitivity: int, truncation: int, counts, epsilons):
    """The (count, ε, direction, release overlap, truncated overlap) where the truncated pair's overlap (1 − δ) is
    above the release's on its window (so its δ might be below the release's)."""
    shortfalls = []
    with mpmath.workdps(_DIGITS):
        variance = mpmath.mpf(sigma_squared.numerator) / sigma_squared.denominator
        edge = math.ceil(20 * math.sqrt(float(sigma_squared))) + 2 * sensitivity
        release, truncated = _pmf(variance, -edge, edge), _pmf(variance, -truncation, truncation)
        for count in counts:
            composed, composed_truncated = _power(release, count), _power(truncated, count)
            shift = count * sensitivity
            for epsilon in epsilons:
                for direction in ("remove", "add"):
                    pairs = ((composed, _shifted(composed, shift)), (composed_truncated, _shifted(composed_truncated, shift)))
                    if direction == "add":
                        pairs = tuple((lower, upper) for upper, lower in pairs)
                    exact, dominating = (_overlap(*pair, epsilon) for pair in pairs)
                    if dominating > exact * (1 + mpmath.mpf(10) ** (5 - _DIGITS)):
                        shortfalls.append((count, epsilon, direction, exact, dominating))
    return shortfalls


_EPSILONS = (-3.0, -1.0, -0.2, 0.0, 0.3, 1.0, 2.0, 3.5, 5.0)


def _truncations(sigma_squared: Fraction, sensitivity: int) -> list[int]:
    """From the smallest T dp_accounting accepts (2T >= Δ) to ⌈3σ⌉."""
    half = math.ceil(sensitivity / 2)
    return sorted({half, half + 1, sensitivity, 2 * sensitivity, math.ceil(3 * math.sqrt(float(sigma_squared)))})


@pytest.mark.parametrize("sigma_squared, sensitivity", [(Fraction(1, 2), 2), (Fraction(1, 10), 5)])
def test_truncated_pair_dominates_the_release_in_two_and_three_fold_compositions(sigma_squared, sensitivity):
    truncation = math.ceil(sensitivity / 2)
    assert _truncated_pair_shortfalls(sigma_squared, sensitivity, truncation, (2, 3), _EPSILONS) == []


@pytest.mark.slow  # 1-6 s of CPU each
@pytest.mark.parametrize("sigma_squared", [Fraction(1, 10), Fraction(1, 2), Fraction(1), Fraction(4)])
@pytest.mark.parametrize("sensitivity", [1, 2, 5])
def test_truncated_pair_dominates_the_release_at_every_small_truncation(sigma_squared, sensitivity):
    for truncation in _truncations(sigma_squared, sensitivity):
        counts = (1, 2) if sigma_squared == 4 else (1, 2, 3)
        assert _truncated_pair_shortfalls(sigma_squared, sensitivity, truncation, counts, _EPSILONS) == [], truncation


@pytest.mark.slow  # 4-45 s (wall, loaded machine): dp_accounting at its default grid
@pytest.mark.parametrize("sigma_squared, sensitivity, count", [
    (Fraction(1, 10), 5, 1), (Fraction(1, 10), 1, 3), (Fraction(1, 2), 2, 2), (Fraction(4), 5, 3), (Fraction(1), 1, 3)])
def test_pld_upper_end_and_numeric_interval_hold_the_exact_composed_delta(sigma_squared, sensitivity, count):
    """The 'pld' answer's upper end is at least the exact δ of the composed release, and numeric's certified
    interval contains it (the 'pld' lower end is dp_accounting's optimistic estimate, not a bound: at σ² = 1,
    Δ = 1, three releases, ε = 0 it sits 1.1e-15 above the truth, as it may)."""
    ledger = PrivacyLedger().record(DiscreteGaussianEvent(sigma_squared, sensitivity), count=count)
    with mpmath.workdps(_DIGITS):
        variance = mpmath.mpf(sigma_squared.numerator) / sigma_squared.denominator
        edge = math.ceil(14 * math.sqrt(float(sigma_squared))) + 2 * sensitivity
        composed = _power(_pmf(variance, -edge, edge), count)
        shifted = _shifted(composed, count * sensitivity)
        for epsilon in (0.0, 0.5, 2.0, 5.0):
            truth = max(_hockey_stick(composed, shifted, epsilon), _hockey_stick(shifted, composed, epsilon))
            pld = ledger.delta(epsilon, method="pld")
            numeric = ledger.delta(epsilon, method="numeric")
            assert truth <= pld.interval[2], (epsilon, pld.interval, truth)
            assert numeric.certified and numeric.interval[0] <= truth <= numeric.interval[2], (epsilon, numeric, truth)
