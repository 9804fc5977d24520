"""The exact accountant's fast paths stay sound, and its work grows linearly (issue 12, exact-speed).

Speed itself is measured in ``benchmarks/exact_accountant.py``; here the work is counted (Python
function calls, atoms formed in products, profile evaluations), so a quadratic step or a root search
that degraded to bisection fails whatever the machine's load.
"""

import cProfile
import math
import pstats
from unittest import mock

import mpmath
from hypothesis import given
from hypothesis import strategies as st

import dpmech
from dpmech import (
    REPLACE_ONE,
    ApproximateDpEvent,
    GaussianEvent,
    PrivacyLedger,
    PureEpsilonEvent,
    high_precision,
)
from benchmarks.exact_accountant import DELTA, MIXED_TRUTH, mixed_ledger
from dpmech.accountants import exact
from tests.dpmech.accountants.test_soundness import _check_epsilon
from tests.profiles import examples

finite_events = st.one_of(
    st.builds(PureEpsilonEvent, st.floats(0.05, 1.5), st.one_of(st.none(), st.integers(2, 8))),
    st.builds(ApproximateDpEvent, st.floats(0.0, 1.0), st.one_of(st.just(0.0), st.floats(1e-9, 1e-4))),
)
small_ledgers = st.tuples(
    st.lists(st.tuples(finite_events, st.integers(1, 4)), min_size=1, max_size=4),
    st.one_of(st.none(), st.floats(0.5, 8.0)),
)


def _ledger(entries, sigma):
    ledger = PrivacyLedger(REPLACE_ONE)
    for event, count in entries:
        ledger.record(event, count=count)
    if sigma is not None:
        ledger.record(GaussianEvent(sigma))
    return ledger


def _reference(entries, sigma):
    return [*entries, *([(GaussianEvent(sigma), 1)] if sigma is not None else [])]


@examples(0.3)
@given(small_ledgers, st.floats(-9.0, -1.0), st.floats(0.0, 4.0))
def test_binned_and_merged_products_stay_sound(ledger_spec, log10_delta, epsilon):
    # Tiny limits send every product through the O(n) binning, force merges onto coarse strides and
    # repeated three-atom steps through powers by squaring: the interval must still contain the
    # 50-digit truth, for ε(δ) and for δ(ε).
    entries, sigma = ledger_spec
    ledger, reference = _ledger(entries, sigma), _reference(entries, sigma)
    delta = 10.0**log10_delta
    with mock.patch.object(exact, "MAX_ATOMS", 6), mock.patch.object(exact, "_SORTED_CONVOLUTION_LIMIT", 4), \
            mock.patch.object(exact, "_CLOSED_FORM_TRINOMIAL_LIMIT", 1):
        guarantee = ledger.epsilon(delta)
        bounded = ledger.delta(epsilon)
    _check_epsilon(guarantee, reference, delta)
    truth = high_precision.ledger_delta(reference, epsilon)
    assert bounded.log_delta >= (mpmath.log(truth) if truth > 0 else -math.inf)
    assert bounded.interval[0] <= truth


@examples(0.3)
@given(small_ledgers, st.floats(-12.0, -1.0))
def test_root_search_takes_few_evaluations(ledger_spec, log10_delta):
    # Newton steps on log δ close both ends of the bracket in a handful of evaluations; bisection
    # to the double precision the interval keeps would take over a hundred.
    entries, sigma = ledger_spec
    ledger = _ledger(entries, sigma)
    calls = []
    evaluate = exact._Profile.evaluate

    def counted(profile, *arguments, **options):
        calls.append(1)
        return evaluate(profile, *arguments, **options)

    with mock.patch.object(exact._Profile, "evaluate", counted):
        guarantee = ledger.epsilon(10.0**log10_delta)
    _check_epsilon(guarantee, _reference(entries, sigma), 10.0**log10_delta)
    assert len(calls) <= 40


def test_mixed_ledger_of_issue_12_is_exact_in_few_evaluations():
    ledger = mixed_ledger()
    with mock.patch.object(exact._Profile, "evaluate", autospec=True, side_effect=exact._Profile.evaluate) as spy:
        lower, estimate, upper = ledger.epsilon(DELTA).interval
    assert lower <= MIXED_TRUTH <= upper
    assert abs(estimate - MIXED_TRUTH) <= 1e-9 * MIXED_TRUTH
    assert spy.call_count <= 12


def test_subnormal_lower_end_of_delta_is_rounded_down():
    # exp of a log-δ near −740 rounded up to 3e-322, above the 50-digit 3.0063e-322 (CI profile).
    ledger = PrivacyLedger(REPLACE_ONE)
    ledger.record(GaussianEvent(9.5, 0.203125)).record(GaussianEvent(9.25, 0.1953125))
    ledger.record(ApproximateDpEvent(1.1953125, 0.0), count=2)
    reference = [(GaussianEvent(9.5, 0.40625), 1), (GaussianEvent(9.25, 0.390625), 1),
                 (ApproximateDpEvent(2.390625, 0.0), 2)]
    guarantee = ledger.group_privacy(2).delta(7.078125)
    truth = high_precision.ledger_delta(reference, 7.078125)
    assert guarantee.interval[0] <= truth <= guarantee.delta


def _large_ledger(events):
    """Mixed events with varied parameters: Gaussians, K-ary RR over 12 (ε, K), (ε, δ) over 50 steps."""
    ledger = PrivacyLedger(REPLACE_ONE)
    for i in range(events // 2):
        ledger.record(GaussianEvent(100.0 + i % 97, 1.0))
    for i in range(events // 2 - events // 10):
        ledger.record(dpmech.randomized_response_event(0.002 * (1 + i % 4), 2 + i % 3))
    for i in range(events // 10):
        ledger.record(ApproximateDpEvent(1e-4 * (1 + i % 50), 1e-12))
    return ledger


def _python_calls(function):
    profile = cProfile.Profile()
    profile.runcall(function)
    return pstats.Stats(profile).total_calls


def _bookkeeping_calls(events):
    """Python function calls of recording, flattening, group privacy and accounting ``events`` events."""
    recording = _python_calls(lambda: _large_ledger(events))
    ledger = _large_ledger(events)
    return (recording, _python_calls(ledger._pairs), _python_calls(lambda: ledger.group_privacy(2)),
            _python_calls(lambda: ledger.epsilon(1e-5)))


def test_ledger_bookkeeping_is_linear_in_events():
    for small, large in zip(_bookkeeping_calls(500), _bookkeeping_calls(5000)):
        assert large <= 11 * small


def _atoms_formed(events):
    """Atoms formed in every product (sorted or binned) and merge while accounting ``events`` events."""
    counts = []
    by_index, binned = exact._logsumexp_by_index, exact._Atoms._bin

    def count_sorted(index, log_p):
        counts.append(index.size)
        return by_index(index, log_p)

    def count_binned(atoms, index, log_p):
        counts.append(index.size)
        return binned(atoms, index, log_p)

    with mock.patch.object(exact, "_logsumexp_by_index", count_sorted), \
            mock.patch.object(exact._Atoms, "_bin", count_binned):
        _large_ledger(events).epsilon(1e-5)
    return sum(counts)


def test_products_formed_grow_linearly_in_events():
    # A quadratic step (a convolution per repetition, a product of all atoms with all) would show ×100.
    assert _atoms_formed(20000) <= 11 * _atoms_formed(2000)


def test_huge_mu_gives_a_finite_upper_end_near_mu_squared_over_two():
    # μ = 1/σ up to 1e149: ε(δ) = μ²/2 + O(μ) is a double, found although the slope's t + log Φ(b)
    # cancels at 1e39 and beyond and δ drops from 1 to 0 between adjacent doubles. Past that, inf.
    for sigma in (1e-10, 1e-20, 1e-50, 1e-100, 1e-149):
        mu = 1.0 / sigma
        for ledger in (PrivacyLedger(REPLACE_ONE).record(GaussianEvent(sigma)),
                       PrivacyLedger(REPLACE_ONE).record(GaussianEvent(sigma)).record(PureEpsilonEvent(0.5))):
            lower, _, upper = ledger.epsilon(1e-5).interval
            assert 0.5 * mu * mu < upper <= (0.5 * mu * mu + 10.0 * mu) * (1.0 + 1e-14) and lower <= upper
    lower, _, upper = PrivacyLedger(REPLACE_ONE).record(GaussianEvent(1e-160)).epsilon(1e-5).interval
    assert upper == math.inf and 0.0 <= lower < math.inf
