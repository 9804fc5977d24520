"""The engine at length, at small ε, at tiny δ and with heavy tails (issue 28): widths the default call
promises, ends that stay certified, and the width= promise kept or refused by name."""

from fractions import Fraction

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dpmech import (
    ADD_REMOVE_ONE,
    GaussianEvent,
    PoissonSampledEvent,
    PrivacyLedger,
    PureEpsilonEvent,
    pld,
)
from dpmech.pld.accountant import epsilon_goal
from tests import arb_reference
from tests.dpmech.accountants.test_exact_tiny_delta import _delta as _rr_delta
from tests.profiles import examples


def _dp_sgd(sigma, rate, steps):
    return PrivacyLedger(ADD_REMOVE_ONE).record(PoissonSampledEvent(GaussianEvent(sigma), rate), count=steps)


def _width(guarantee):
    lower, _, upper = guarantee.interval
    return upper - lower


@pytest.mark.parametrize("steps", [1000, 10000])
def test_default_dp_sgd_interval_meets_its_width_goal(steps):
    """q = 0.01, σ = 1, δ = 1e-5: at most max(1e-4·ε, min(1e-3, 1e-2·ε)) wide, with the estimate the
    connect-the-dots value (the upper end), not a midpoint."""
    guarantee = _dp_sgd(1.0, 0.01, steps).epsilon(1e-5, method="numeric")
    lower, estimate, upper = guarantee.interval
    assert guarantee.certified and 0 < lower <= estimate == upper
    assert _width(guarantee) <= max(1e-4 * upper, min(1e-3, 1e-2 * upper))


def test_hundred_thousand_steps_keep_a_lower_end_near_the_upper():
    """The lower end was 9.98 against an upper 25.59: the bucketed lower measure's labels drift below its
    losses by up to k·h, and the search for its ε stopped at the top label."""
    guarantee = _dp_sgd(1.0, 0.01, 100_000).epsilon(1e-5, method="numeric")
    lower, _, upper = guarantee.interval
    assert 25.56 < lower <= 25.5733 <= upper < 25.58  # dp_accounting's PLD at 1e-4: 25.5733
    assert upper - lower <= 1e-4 * upper


def test_small_epsilon_is_resolved_relative_to_itself():
    """σ = 100, 1000 steps: ε ≈ 0.0074, so an absolute step of 1e-3 (the old default, [0, 0.024]) says nothing."""
    guarantee = _dp_sgd(100.0, 0.01, 1000).epsilon(1e-5, method="numeric")
    lower, _, upper = guarantee.interval
    assert 0.0072 < lower and upper < 0.0076
    assert _width(guarantee) <= 0.01 * upper


def test_tiny_delta_has_finite_ends_on_the_default_grid():
    """1000 × Poisson(0.01, σ = 1) at δ = 1e-40 had an infinite upper end; q = 1e-4, σ = 0.5 at 10⁵ steps a
    lower end of 0."""
    tiny = _dp_sgd(1.0, 0.01, 1000).epsilon(1e-40, method="numeric")
    assert 12.0 < tiny.interval[0] <= tiny.interval[2] < 12.5
    assert _width(tiny) <= epsilon_goal(pld.Interval(tiny.interval[0], tiny.interval[2]))
    sparse = _dp_sgd(0.5, 1e-4, 100_000).epsilon(1e-5, method="numeric")
    assert 2.0 < sparse.interval[0] and _width(sparse) <= 1e-3


def test_heavy_tailed_gaussian_with_randomized_response_contains_the_proven_epsilon():
    """σ = 0.02 (μ = 50) with one binary RR(1) was [698, 1462]: the bucketed lower measure merged the whole
    Q-law below its window into its bottom bucket, where it swamped every other Q-mass. The ends are
    checked against a proven enclosure of the exact δ (python-flint balls)."""
    ledger = PrivacyLedger(ADD_REMOVE_ONE).record(GaussianEvent(0.02)).record(PureEpsilonEvent(1.0))
    lower, _, upper = ledger.epsilon(1e-5, method="numeric").interval
    assert upper - lower <= 1e-3 * upper
    rest = [(PureEpsilonEvent(1.0), 1)]
    mu = 1 / Fraction(0.02)
    assert arb_reference.sampled_delta(upper, mu, 1, rest).hi <= Fraction(1e-5)
    assert arb_reference.sampled_delta(lower, mu, 1, rest).lo > Fraction(1e-5)


def test_width_promise_is_kept_or_refused_naming_the_limit():
    ledger = _dp_sgd(1.0, 0.01, 1000)
    kept = ledger.epsilon(1e-5, method="numeric", width=2e-4)
    assert _width(kept) <= 2e-4
    with pytest.raises(ValueError, match="max_points"):
        ledger.epsilon(1e-5, method="numeric", width=1e-9, max_points=1 << 16)


def test_refinement_never_widens_the_interval():
    """Each refined grid's answer is intersected with the coarser ones."""
    ledger = [(pld.poisson_subsampled(pld.GaussianPair(1.0), 0.01), 2000)]
    widths = [pld.epsilon(ledger, 1e-5, width=width) for width in (1e-2, 1e-3, 2e-4)]
    assert all(later.upper - later.lower <= earlier.upper - earlier.lower
               for earlier, later in zip(widths, widths[1:]))
    assert all(w.lower <= widths[-1].upper and widths[-1].lower <= w.upper for w in widths)


@given(
    count=st.integers(81, 3000),
    epsilon0=st.floats(0.01, 1.0),
    log10_delta=st.floats(-30.0, -2.0),
    cells=st.floats(2.0, 40.0),
)
@examples(0.1)
def test_two_level_composition_contains_the_proven_epsilon(count, epsilon0, log10_delta, cells):
    """k >= 81 compositions take the two-level path (m steps on the fine grid, coarsened, then the
    super-steps): k × binary RR against its exact δ(ε) in arb balls (tests/dpmech/accountants/
    test_exact_tiny_delta.py), on a step that does not divide the atoms."""
    delta = 10.0**log10_delta
    interval = pld.epsilon([(pld.randomized_response_pair(epsilon0, 2), count)], delta, epsilon0 / cells)
    assume(interval.upper < count * epsilon0)  # past the largest loss the answer is the trivial end
    assert _rr_delta(count, epsilon0, interval.upper) <= delta
    if interval.lower > 0:
        assert _rr_delta(count, epsilon0, interval.lower) >= delta


def test_refinement_that_stops_narrowing_says_so_instead_of_growing_the_grid():
    """δ(ε) at three ε from one tilt: at ε = 6 the lower end is lost below the doubles whatever the step, so
    the default refinement stops with a note rather than refining to max_points (it took 9.5 s)."""
    ledger = [(pld.poisson_subsampled(pld.GaussianPair(1.0), 0.01), 1000)]
    answer = pld.delta(ledger, [0.5, 2.0, 6.0])
    assert "stopped narrowing" in answer.note
    assert answer.upper[1] - answer.lower[1] <= 1e-2 * answer.upper[1]
    assert answer.lower[2] == 0.0 < answer.upper[2]
