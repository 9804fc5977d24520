"""epsilon_one_run's faster search is certified and as tight as the searches it replaced.

The oracle below is the search as it was before issue 31: every window term from pmf(v − 1) on through
``stats.binom.pmf``, brentq from ε = 1 by doubling on p itself, and every guess rule's bound found in full. The
new search inverts the δ = 0 tail in closed form, builds the window terms from ratios of consecutive pmf
terms, and at δ > 0 takes Newton steps on log p = log target from an estimated crossing. Its ε_lb must have a
p-value below the significance less 1e-9 of it (the margin for scipy's tails) and lie within 1e-7 of the
oracle's, and its window maximum must never be below the exact one. A second oracle is the brentq search that
the Newton steps replaced (commit fb84ba5): the Newton bound is never above it and at most 1e-6·max(1, ε) below.
"""


import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import optimize, special, stats

from audits import AuditScores, epsilon_one_run, one_run_p_value
from audits import one_run

from tests.profiles import examples

# The plain search's own constants, as they were before issue 31.
_PLAIN_SEARCH_WIDTH = 128
_PLAIN_XTOL = 1e-10


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
    while high - low > _PLAIN_SEARCH_WIDTH:
        points = np.linspace(low, high, _PLAIN_SEARCH_WIDTH + 1).astype(np.int64)
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
    root = optimize.brentq(lambda e: _plain_p_value(e, delta, r, v, m) - significance, low, high, xtol=_PLAIN_XTOL)
    epsilon = max(root - 2.0 * _PLAIN_XTOL, low)
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


def _target(significance):
    return significance * (1.0 - one_run._P_MARGIN)


@examples(0.4)
@given(
    size=st.integers(4, 4000),
    shift=st.floats(0.0, 4.0),
    delta=st.sampled_from([0.0, 1e-8, 1e-5, 1e-3]),
    guessing=st.sampled_from(["one-sided", "two-sided"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_results_are_certified_and_those_of_the_plain_search(size, shift, delta, guessing, seed):
    rng = np.random.default_rng(seed)
    scores = AuditScores(rng.normal(shift, 1.0, size), rng.normal(0.0, 1.0, size), trials="independent")
    new = epsilon_one_run(scores, delta=delta, guessing=guessing)
    original = one_run._best
    one_run._best = _plain_best
    try:
        plain = epsilon_one_run(scores, delta=delta, guessing=guessing)
    finally:
        one_run._best = original
    assert abs(new.eps_lb - plain.eps_lb) <= 1e-7 * max(plain.eps_lb, 1.0)
    if new.eps_lb > 0.0:
        counts = new.counts
        p = one_run_p_value(new.eps_lb, delta, counts["guesses"], counts["correct"], counts["canaries"])
        assert p < _target(0.05 / new.num_hypotheses)


@examples(2)
@given(r=st.integers(1, 3000), data=st.data(), significance=st.sampled_from([0.05, 0.005, 1e-6]))
def test_closed_form_tail_bounds_are_certified_and_tight(r, data, significance):
    # The δ = 0 bound from the inverse incomplete beta: its p-value passes, and 1e-9 above it p no longer does.
    v = np.array([data.draw(st.integers(0, r)) for _ in range(3)], dtype=np.int64)
    rules = np.full(3, r, dtype=np.int64)
    roots = one_run._live_roots(significance, rules, v).tolist()
    epsilons = [one_run._lowered_root(significance, r, correct, root) for correct, root in zip(v.tolist(), roots)]
    for bound, correct in zip(epsilons, v):
        if bound > 0.0:
            assert one_run._p_value(bound, 0.0, r, int(correct), r) < _target(significance)
        plain = _plain_epsilon_for_counts(significance, 0.0, r, int(correct), r)
        assert abs(bound - plain) <= 1e-8 * max(plain, 1.0)


@examples(2)
@given(r=st.integers(1, 300_000), data=st.data(), epsilon=st.floats(0.0, 8.0))
def test_window_maximum_is_never_below_the_plain_sum(r, data, epsilon):
    # Including windows far above the mean, whose leading terms underflow, and r up to 300,000.
    v = data.draw(st.integers(1, r))
    q = float(special.expit(epsilon))
    found, plain = one_run._window_average_max(r, v, q)[0], _plain_window_average_max(r, v, q)
    assert found >= plain / (1.0 + one_run._ROUNDING_MARGIN)  # the plain search's own margin removed
    assert found <= plain * (1.0 + 2e-10) + 1e-300


@pytest.mark.parametrize("r, v, epsilon", [(232_692, 199_962, 0.0), (232_692, 199_962, 1.0), (54_146, 50_042, 0.5),
                                           (2_000_000, 1_382_480, 0.6)])
def test_window_maximum_far_above_the_mean(r, v, epsilon):
    # Every term of the window underflows or nearly so: the maximum is still never below the plain sum's.
    q = float(special.expit(epsilon))
    found, plain = one_run._window_average_max(r, v, q)[0], _plain_window_average_max(r, v, q)
    assert plain / (1.0 + one_run._ROUNDING_MARGIN) <= found <= plain * (1.0 + 2e-10) + 1e-300


def test_the_window_anchor_is_scipys_binomial_pmf():
    # one_run uses stats.binom._pmf (no argument checks) for speed: it must be the public pmf's doubles.
    x = np.arange(199_961, 195_000, -1)
    assert np.array_equal(stats.binom._pmf(x, 232_692, 0.844), stats.binom.pmf(x, 232_692, 0.844))


@examples(1)
@given(r=st.integers(1, 300_000), data=st.data(), epsilon=st.floats(0.0, 8.0),
       delta=st.sampled_from([1e-10, 1e-8, 1e-5, 1e-3]))
def test_one_window_p_value_is_at_most_p_and_equals_it_at_the_maximising_width(r, data, epsilon, delta):
    # Newton's steps and the tightness check use p_w (one window's average in place of the maximum): p_w <= p for
    # every width (else the check "p_w >= target, so p >= target" would be wrong), equal at the width that
    # _window_average_max reports as maximising (up to its 1e-10 margin and scipy's tail errors), and its slope is
    # the central difference of p_w. v from the mean to 6 standard deviations above it, where the searches cross.
    q = float(special.expit(epsilon))
    mean, spread = r * q, math.sqrt(r * q * (1.0 - q))
    v = data.draw(st.integers(max(1, min(r, math.floor(mean))), max(1, min(r, math.ceil(mean + 6.0 * spread + 1.0)))))
    m = data.draw(st.integers(r, 2 * r + 10))
    width = data.draw(st.integers(1, v))
    # p_w's window mass is the difference of two scipy tails, each a few 1e-11 off near ½ (8e-11 in the difference
    # seen at r = 3·10⁵): 1e-9, times 2mδ/w, is allowed.
    p = one_run._p_value(epsilon, delta, r, v, m)
    p_width, _ = one_run._window_p_value_and_slope(epsilon, delta, r, v, m, width)
    assert p_width <= p * (1.0 + 1e-12) + 2.0 * m * delta * 1e-9 / width + 1e-300
    full, _, maximising = one_run._p_value_and_slope(epsilon, delta, r, v, m)
    p_maximising, slope = one_run._window_p_value_and_slope(epsilon, delta, r, v, m, maximising)
    if full < 1.0:
        differenced = 2.0 * m * delta * 1e-9 / maximising
        assert full / (1.0 + 2e-10) - differenced - 1e-300 <= p_maximising <= full * (1.0 + 1e-12) + differenced
    if 1e-3 < p_maximising < 0.5 and epsilon > 1e-3:
        step = 1e-6 * max(1.0, epsilon)
        below, _ = one_run._window_p_value_and_slope(epsilon - step, delta, r, v, m, maximising)
        above, _ = one_run._window_p_value_and_slope(epsilon + step, delta, r, v, m, maximising)
        assert slope == pytest.approx((above - below) / (2.0 * step), rel=1e-3, abs=1e-9)


# epsilon_one_run's results before the fixed-cost work of issue 31 (commit 7271732), each drawn as
# AuditScores(N(shift, 1) of size, N(0, 1) of size) from default_rng(seed), α = 0.05, "bonferroni":
# (seed, size, shift, δ, guessing, ε_lb, guesses, correct). The cheaper search must choose the same rule and give
# the same double at δ = 0; at δ > 0 the Newton search's bound is at most 1e-6·max(1, ε_lb) lower, never higher.
_BEFORE_ISSUE_31 = [
    (0, 300, 1.0, 0.0, "two-sided", 1.5221242492069593, 48, 46),
    (1, 300, 1.0, 1e-05, "two-sided", 1.1497061178635655, 168, 142),
    (2, 3000, 0.5, 1e-05, "one-sided", 0.6776018611094405, 126, 101),
    (3, 3000, 2.0, 0.0, "one-sided", 3.753722486075772, 868, 859),
    (4, 20000, 1.0, 1e-05, "two-sided", 1.9781566321379587, 4428, 4007),
    (5, 1000, 3.0, 0.001, "two-sided", 0.2638321698094652, 2000, 1872),
    (6, 1000, 3.0, 0.001, "one-sided", 0.0, 369, 368),
    (7, 50, 4.0, 1e-05, "one-sided", 1.8309468686597201, 36, 36),
    (8, 10000, 0.2, 1e-08, "two-sided", 0.23671858552819774, 928, 558),
    (9, 5000, 1.5, 0.0, "two-sided", 2.9943154942575574, 584, 569),
]


@pytest.mark.parametrize("seed, size, shift, delta, guessing, eps_lb, guesses, correct", _BEFORE_ISSUE_31)
def test_results_are_those_before_the_fixed_cost_work(seed, size, shift, delta, guessing, eps_lb, guesses, correct):
    rng = np.random.default_rng(seed)
    scores = AuditScores(rng.normal(shift, 1.0, size), rng.normal(0.0, 1.0, size), trials="independent")
    result = epsilon_one_run(scores, delta=delta, guessing=guessing)
    _assert_at_most_and_within_1e_6(result.eps_lb, eps_lb)
    if delta == 0.0:
        assert result.eps_lb == eps_lb
    assert (result.counts["guesses"], result.counts["correct"]) == (guesses, correct)


def _assert_at_most_and_within_1e_6(new, old):
    assert old - 1e-6 * max(1.0, old) <= new <= old, (new, old)


def _brentq_epsilon_for_counts(significance, delta, r, v, m, root, estimate=float("nan"), rejected=None):
    """one_run._epsilon_for_counts as it was before its Newton steps (commit fb84ba5), on today's p-value."""
    target = _target(significance)
    remembered = dict([rejected]) if rejected is not None else {}

    def p_value(epsilon):
        if epsilon not in remembered:
            remembered[epsilon] = one_run._p_value(epsilon, delta, r, v, m)
        return remembered[epsilon]

    if r == 0 or v == 0:
        return 0.0
    low = 0.0 if rejected is None else rejected[0]
    high = max(root, low)
    if low < estimate < high:
        for guess in (estimate, estimate - 0.01 * max(estimate, 1.0)):
            if low < guess < high:
                if p_value(guess) < target:
                    low = guess
                else:
                    high = guess
    if low == 0.0 and rejected is None and p_value(0.0) >= target:
        return 0.0
    step = 1e-9 * max(high, 1.0)
    while p_value(high) < target:
        low, high, step = high, high + step, 2.0 * step
        if high > one_run._EPSILON_CAP:
            return low
    log_target = np.log(target)
    root = optimize.brentq(lambda e: np.log(max(p_value(e), one_run._TINY)) - log_target, low, high,
                           xtol=one_run._XTOL)
    epsilon = max(root - 2.0 * one_run._XTOL, low)
    while epsilon > low and p_value(epsilon) >= target:
        epsilon = max(epsilon - 1e-6 * max(epsilon, 1.0), low)
    return epsilon


@examples(0.4)
@given(
    size=st.integers(4, 20_000),
    shift=st.floats(0.0, 4.0),
    delta=st.sampled_from([1e-8, 1e-5, 1e-3, 1e-2]),
    guessing=st.sampled_from(["one-sided", "two-sided"]),
    num_guess_counts=st.integers(1, 30),
    seed=st.integers(0, 2**32 - 1),
)
def test_newton_bound_is_never_above_the_brentq_bound_and_at_most_1e_6_below(size, shift, delta, guessing,
                                                                              num_guess_counts, seed):
    # The whole search (proxies, order, skips) with the Newton steps against the same with the brentq search.
    rng = np.random.default_rng(seed)
    scores = AuditScores(rng.normal(shift, 1.0, size), rng.normal(0.0, 1.0, size), trials="independent")
    new = epsilon_one_run(scores, delta=delta, guessing=guessing, num_guess_counts=num_guess_counts)
    original = one_run._epsilon_for_counts
    one_run._epsilon_for_counts = _brentq_epsilon_for_counts
    try:
        old = epsilon_one_run(scores, delta=delta, guessing=guessing, num_guess_counts=num_guess_counts)
    finally:
        one_run._epsilon_for_counts = original
    _assert_at_most_and_within_1e_6(new.eps_lb, old.eps_lb)
    if new.eps_lb > 0.0:
        counts = new.counts
        p = one_run_p_value(new.eps_lb, delta, counts["guesses"], counts["correct"], counts["canaries"])
        assert p < _target(0.05 / new.num_hypotheses)


@examples(0.5)
@given(m=st.integers(2, 2_000_000), data=st.data(), significance=st.sampled_from([0.05, 0.005, 1e-6]),
       delta=st.sampled_from([1e-10, 1e-8, 1e-5, 1e-3, 1e-2]), from_proxy=st.booleans())
def test_newton_steps_against_the_brentq_search_for_one_rule(m, data, significance, delta, from_proxy):
    # One rule, started from its proxy (as _best does) or from its root; rules up to 2·10⁶ guesses, whose windows
    # span thousands of terms. The bound is certified (p below the target), never above the brentq bound, at most
    # 1e-6·max(1, ε) below it, and p reaches the target 5e-8·max(1, ε) above it (plus brentq's own 3e-9).
    r = data.draw(st.integers(1, m))
    v = data.draw(st.integers(max(1, r // 2), r))
    root = float(one_run._live_roots(significance, np.array([r]), np.array([v]))[0])
    estimate = _proxy(significance, delta, r, v, m, root) if from_proxy and root > 0.0 else float("nan")
    new = one_run._epsilon_for_counts(significance, delta, r, v, m, root, estimate)
    old = _brentq_epsilon_for_counts(significance, delta, r, v, m, root, estimate)
    _assert_at_most_and_within_1e_6(new, old)
    if new > 0.0:
        assert one_run._p_value(new, delta, r, v, m) < _target(significance)
    if 0.0 < new < one_run._EPSILON_CAP:
        above = new + (one_run._NEWTON_WIDTH + 3e-9) * max(1.0, new)
        assert one_run._p_value(above, delta, r, v, m) >= _target(significance)


def _proxy(significance, delta, r, v, m, root):
    """A rule's proxy as _best finds it: _PROXY_STEPS bisection steps on _estimate_rejects in [0, root]."""
    low, high, target = 0.0, root, _target(significance)
    for _ in range(one_run._PROXY_STEPS):
        middle = 0.5 * (low + high)
        if one_run._estimate_rejects(middle, 2.0 * m * delta, target, r, v):
            low = middle
        else:
            high = middle
    return high


def _vectorised_proxies(significance, delta, r, v, m, roots):
    """The proxies as the vectorised search of commit 1d46e14 found them (every rule, one bdtrc call a step)."""
    weight = 2.0 * m * delta
    target = _target(significance)
    live = np.flatnonzero(roots > 0.0)
    r, v = r[live], v[live]
    low, high = np.zeros(live.shape), np.array(roots[live], dtype=np.float64)
    offsets = np.array([0.0, 0.0, 0.0, 1.0, 2.0])
    r_plus_one, last_correct, r_column, last_correct_column = r + 1, v - 1, r[:, None], (v - 1)[:, None]
    for _ in range(one_run._PROXY_STEPS):
        middle = 0.5 * (low + high)
        q = special.expit(middle)
        peak = np.minimum(np.floor(r_plus_one * q), last_correct)
        widths = (v - peak)[:, None] + np.sqrt(r * q * (1.0 - q))[:, None] * offsets
        widths = np.minimum(np.maximum(np.round(widths), 1.0), v[:, None])
        widths[:, :2] = (0.0, 1.0)
        tails = special.bdtrc(last_correct_column - widths, r_column, q[:, None])
        tail = tails[:, 0]
        averages = (tails[:, 1:] - tail[:, None]) / widths[:, 1:]
        rejected = tail + weight * averages.max(axis=1) < target
        low, high = np.where(rejected, middle, low), np.where(rejected, high, middle)
    proxies = np.zeros(roots.shape)
    proxies[live] = high
    return proxies


@examples(1)
@given(m=st.integers(2, 300_000), data=st.data(), significance=st.sampled_from([0.05, 0.005, 1e-6]),
       delta=st.sampled_from([1e-8, 1e-5, 1e-3]))
def test_proxies_bound_each_rules_crossing_from_above_and_are_the_vectorised_ones(m, data, significance, delta):
    # _best skips a rule whose proxy is at most the best bound so far: p(proxy, δ) must not be below the target,
    # so that the rule's own bound (where p is below it) is not above its proxy; 1e-8 of it is left for the
    # estimate's differenced scipy tails (relative errors ~1e-11 each). The scalar bisection must also give the
    # doubles of the vectorised one it replaced, so that the order, the skips and the brackets are the same.
    r = np.array(data.draw(st.lists(st.integers(1, m), min_size=1, max_size=6)), dtype=np.int64)
    v = np.array([data.draw(st.integers(0, guesses)) for guesses in r.tolist()], dtype=np.int64)
    roots = one_run._live_roots(significance, r, v)
    proxies = [_proxy(significance, delta, a, b, m, root) if root > 0.0 else 0.0
               for a, b, root in zip(r.tolist(), v.tolist(), roots.tolist())]
    assert proxies == _vectorised_proxies(significance, delta, r, v, m, roots).tolist()
    for proxy, guesses, correct in zip(proxies, r.tolist(), v.tolist()):
        if proxy > 0.0:
            assert one_run._p_value(proxy, delta, guesses, correct, m) >= _target(significance) * (1.0 - 1e-8)


def _vectorised_lowered(significance, r, v, roots):
    """The δ = 0 bounds as the vectorised lowering of commit 1d46e14 found them (every rule with a positive root)."""
    target = _target(significance)
    epsilons = np.zeros(roots.shape)
    lowered = np.flatnonzero(roots > 0.0)
    if lowered.size == 0:
        return epsilons
    r, v, root = r[lowered], v[lowered], roots[lowered]
    candidate = np.maximum(root * (1.0 - 1e-12), 0.0)
    step = 1e-12 * np.maximum(candidate, 1.0)
    doublings = 2.0 ** np.arange(one_run._LOWERING_CHUNK)
    lanes, tail_start, guesses = np.arange(r.size), (v - 1)[:, None], r[:, None]
    while True:
        trail = np.maximum(np.subtract.accumulate(np.column_stack((candidate, step[:, None] * doublings)), axis=1), 0.0)
        passing = special.bdtrc(tail_start, guesses, special.expit(trail[:, :-1])) < target
        first = passing.argmax(axis=1)
        passed = passing[lanes, first]
        if passed.all():
            break
        candidate = np.where(passed, trail[lanes, first], trail[:, -1])
        step = np.where(passed, 0.0, step * 2.0**one_run._LOWERING_CHUNK)
    epsilons[lowered] = trail[lanes, first]
    return epsilons


@examples(1)
@given(m=st.integers(2, 300_000), data=st.data(), significance=st.sampled_from([0.05, 0.005, 1e-6, 1e-12]))
def test_scalar_lowering_gives_the_vectorised_doubles(m, data, significance):
    # _lowered_root lowers one rule in Python floats; the doubles must be those of the vectorised chunks it replaced.
    r = np.array(data.draw(st.lists(st.integers(1, m), min_size=1, max_size=8)), dtype=np.int64)
    v = np.array([data.draw(st.integers(0, guesses)) for guesses in r.tolist()], dtype=np.int64)
    roots = one_run._live_roots(significance, r, v)
    scalar = [one_run._lowered_root(significance, a, b, root) for a, b, root in zip(r.tolist(), v.tolist(), roots.tolist())]
    assert scalar == _vectorised_lowered(significance, r, v, roots).tolist()
