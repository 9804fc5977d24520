"""epsilon_one_run's faster p-value search returns the same doubles as the plain search it replaced.

The oracle below is the search as it was before issue 31: every window term from pmf(v − 1) on through
``stats.binom.pmf``, no remembered p-values, and every guess rule's bound found in full. The new search
skips terms that are exactly 0.0, remembers p per ε, and stops a rule after one p-value when the best
bound so far is not rejected for it; its results must be identical, bit for bit.
"""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, special, stats

from audits import AuditScores, epsilon_one_run
from audits import one_run


def _plain_window_average_max(r, v, q):
    upper_side = v - 1 >= r * q
    anchor = special.bdtrc(v - 1, r, q) if upper_side else special.bdtr(v - 1, r, q)

    def averages(i):
        below = v - 1 - i
        if upper_side:
            mass = special.bdtrc(below, r, q) - anchor
        else:
            mass = anchor - np.where(below < 0, 0.0, special.bdtr(np.maximum(below, 0), r, q))
        return mass / i

    low, high = 1, v
    while high - low > one_run._SEARCH_WIDTH:
        points = np.linspace(low, high, one_run._SEARCH_WIDTH + 1).astype(np.int64)
        values = averages(points)
        falling = np.flatnonzero(values[1:] < values[:-1])
        first = falling[0] if falling.size else points.size - 1
        low, high = int(points[max(first - 1, 0)]), int(points[min(first + 1, points.size - 1)])
    terms = stats.binom.pmf(np.arange(v - 1, v - 1 - high, -1), r, q)
    return float(np.max(np.cumsum(terms)[low - 1:high] / np.arange(low, high + 1))) * (1.0 + one_run._ROUNDING_MARGIN)


def _plain_p_value(epsilon, delta, r, v, m):
    if v == 0:
        return 1.0
    q = float(special.expit(epsilon))
    tail = float(special.bdtrc(v - 1, r, q))
    if delta == 0.0:
        return min(1.0, tail)
    return min(1.0, tail + _plain_window_average_max(r, v, q) * delta * 2.0 * m)


def _plain_epsilon_for_counts(significance, delta, r, v, m):
    if r == 0 or _plain_p_value(0.0, delta, r, v, m) >= significance:
        return 0.0
    low, high = 0.0, 1.0
    while _plain_p_value(high, delta, r, v, m) < significance:
        low, high = high, 2.0 * high
        if high > one_run._EPSILON_CAP:
            return low
    root = optimize.brentq(lambda e: _plain_p_value(e, delta, r, v, m) - significance, low, high, xtol=one_run._XTOL)
    epsilon = max(root - 2.0 * one_run._XTOL, low)
    while epsilon > low and _plain_p_value(epsilon, delta, r, v, m) >= significance:
        epsilon = max(epsilon - 1e-6 * max(epsilon, 1.0), low)
    return epsilon


def _plain_best(significance, delta, r, v, m, analysis="steinke"):
    assert analysis == "steinke"
    pure = np.array([_plain_epsilon_for_counts(significance, 0.0, int(a), int(b), m) for a, b in zip(r, v)])
    if delta == 0.0:
        best = int(np.argmax(pure))
        return best, float(pure[best])
    best, best_epsilon = int(np.argmax(pure)), -1.0
    for index in np.argsort(-pure, kind="stable"):
        if pure[index] <= best_epsilon:
            break
        epsilon = _plain_epsilon_for_counts(significance, delta, int(r[index]), int(v[index]), m)
        if epsilon > best_epsilon:
            best, best_epsilon = int(index), epsilon
    return best, best_epsilon


@settings(max_examples=40, deadline=None)
@given(
    size=st.integers(4, 4000),
    shift=st.floats(0.0, 4.0),
    delta=st.sampled_from([0.0, 1e-8, 1e-5, 1e-3]),
    guessing=st.sampled_from(["one-sided", "two-sided"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_results_are_those_of_the_plain_search(size, shift, delta, guessing, seed):
    rng = np.random.default_rng(seed)
    scores = AuditScores(rng.normal(shift, 1.0, size), rng.normal(0.0, 1.0, size), trials="independent")
    new = epsilon_one_run(scores, delta=delta, guessing=guessing)
    original = one_run._best
    one_run._best = _plain_best
    try:
        plain = epsilon_one_run(scores, delta=delta, guessing=guessing)
    finally:
        one_run._best = original
    assert new == plain


@settings(max_examples=200, deadline=None)
@given(r=st.integers(1, 300_000), data=st.data(), epsilon=st.floats(0.0, 8.0))
def test_window_maximum_is_that_of_the_plain_sum(r, data, epsilon):
    # Including windows far above the mean, whose leading terms underflow and are skipped.
    v = data.draw(st.integers(1, r))
    q = float(special.expit(epsilon))
    assert one_run._window_average_max(r, v, q) == _plain_window_average_max(r, v, q)


@pytest.mark.parametrize("r, v, epsilon", [(232_692, 199_962, 0.0), (232_692, 199_962, 1.0), (54_146, 50_042, 0.5)])
def test_skipped_window_terms_are_exact_zeros(r, v, epsilon):
    q = float(special.expit(epsilon))
    zeros = one_run._underflowing_terms(r, v, q, v)
    assert zeros > 0
    skipped = stats.binom.pmf(np.arange(v - 1, v - 1 - zeros, -1), r, q)
    assert np.all(skipped == 0.0) and stats.binom.pmf(v - 1 - zeros - 2_000, r, q) > 0.0


def test_the_window_terms_are_scipys_binomial_pmf():
    # one_run uses stats.binom._pmf (no argument checks) for speed: it must be the public pmf's doubles.
    x = np.arange(199_961, 195_000, -1)
    assert np.array_equal(stats.binom._pmf(x, 232_692, 0.844), stats.binom.pmf(x, 232_692, 0.844))
