r"""Auditing in one training run (Steinke, Nasr & Jagielski, NeurIPS 2023).

Setup. m canaries, each included independently with probability ½ (S_i = ±1),
one run of the mechanism. From the output alone the auditor guesses IN for
high scores, OUT for low scores and abstains on the rest: r guesses, v of them
correct. If the mechanism is (ε, δ)-DP in each canary, then (Steinke et al.,
Thm. 3.1 for δ = 0 and its (ε, δ) extension; the formula is the authors' code
as reproduced in ml_privacy_meter ``audit.py``), with q = e^ε / (1 + e^ε):

.. math::
    p(\varepsilon, \delta) = \min\Big(1,\; P[\mathrm{Bin}(r, q) \ge v]
        + 2 m \delta \max_{1 \le i \le v} \frac{P[v > \mathrm{Bin}(r, q) \ge v - i]}{i}\Big)

is a valid p-value for the claim (ε, δ), and
ε_lb = sup{ε : p(ε, δ) < α'} is a lower bound with confidence 1 − α'. The
theorem is stated conditionally on the guess vector T = t (my reading of the
paper, not re-checked against its text here), so any guess rule that is a
function of the scores alone may be used and r is the realised number of
guesses; with the count grids below and continuous scores r = k₊ + k₋ is fixed anyway. Note that m counts every randomised canary, guessed or not.

Corrections to public code: the ubc-systopia copy of the authors' snippet
comments out the δ term (``p = beta  #+ alpha * delta * 2 * m``), which is
wrong whenever δ > 0; ml_privacy_meter grid-searches (k₋, k₊) and reports the
maximum without a multiple-testing correction (here: "uncorrected", an estimate).

Guess rules. With counts (k₊, k₋), the cut c₊ is the (k₊+1)-th largest and c₋
the (k₋+1)-th smallest of the pooled scores; the auditor guesses IN on scores
> c₊ and OUT on scores < c₋. Scores tied with a cut are abstained on (never
split by position, which would leak membership through the array order), so at
most k₊ + k₋ guesses are made; for discrete scores such as released labels use
``threshold_strategy="explicit"`` with cuts fixed in advance. "one-sided"
guessing uses k₋ = 0; "two-sided" uses k₊ = k₋ = k. The "bonferroni" grid of
k is geometric in [1, m] (one-sided) or [1, m/2] (two-sided) and depends on m
only; α is divided by its size. "split" picks the grid point on a random half of
the canaries and applies its cuts to the other half (m is then that half's size).

Numerics. The window maximum uses the unimodality of the window averages and
builds the pmf terms from ratios of consecutive terms around the mode
(:func:`_window_average_max`), rounded up with a proven margin, so the p-value is
never understated. Each rule's δ = 0 root comes from the inverse of the incomplete
beta function, one vectorised call for all rules (:func:`_live_roots`), and is
lowered until p itself passes (:func:`_lowered_root`), only for the rules whose
root can still matter; for δ > 0 the rules are tried in the order of an estimated
crossing (:func:`_estimate_rejects`, bisected in [0, root] only as far as that
order needs), and Newton's method on log p(ε) = log α', started at that estimate,
finds the crossing (:func:`_epsilon_for_counts`; the slope comes from the window
terms p is built from, and the steps between two full p-values are taken on p_w, the
same expression with the one window that maximised at the last of them, four binomial
tails in one call: :func:`_window_p_value_and_slope`). Every returned ε_lb is checked to satisfy p(ε_lb, δ) < α'(1 − 10⁻⁹),
the 10⁻⁹ covering scipy's tail errors. This relies on p being nondecreasing in ε, which the
first term always is (binomial stochastic order); the tests check the whole
expression on a grid. Over a grid of guess rules, the δ = 0 bound of each rule
bounds its δ > 0 bound from above (p(ε, δ) >= p(ε, 0)), and so does its estimated
crossing (the estimate's window maximum is over fewer windows, so its p is at most
p), so rules whose bounds cannot beat the best so far are skipped, and a rule for
which the best bound so far is not rejected is dropped after that one p-value (its
own bound is smaller, p being nondecreasing). At δ > 0 a rule's bound is 2·10⁻⁸·max(1, ε)
below Newton's crossing, and p_w (at most p) is computed to reach α'(1 − 10⁻⁹) at most
5·10⁻⁸·max(1, ε) above it: the bound is at most that much below the supremum, and never above the bound of
the brentq search it replaced (commit fb84ba5, within ~3·10⁻⁹ of the supremum); the
tests compare the two on random audits and single rules (at most 1e-6·max(1, ε) apart,
the new never above). The results agree with the plain search (every term through scipy's
pmf, brentq from ε = 1 by doubling) to 1e-7; at δ = 0 they are the doubles of the search
before issue 31's fixed-cost work at ten pinned seeds (``tests/audits/test_one_run_speed.py``)
and those of commit 1d46e14 at 240 pinned cases (``tests/audits/test_one_run_pinned.py``),
and at δ > 0 at most 1e-6·max(1, ε) below them with the same rule chosen.
Thread CPU time against ``np.sort`` of the same pooled scores (one core, best of 300 interleaved rounds at 10⁴
scores per side, 60 at 10⁵, 20 at 10⁶, this search and that of commit 9f1ec62 (before p_w's steps and the argument
fast path) in the same process, a shared 2-core machine at load 13 to 14): at δ = 1e-5, 3.91× at 10⁴ scores per
side (9f1ec62: 4.34×), 1.70× at 10⁵ (1.70×), 1.02× at 10⁶ (1.01×); at δ = 0, 2.29× (2.74×), 1.29× (1.37×) and
0.97× (0.98×). The issue's target of 3× at δ = 1e-5 is not reached at 10⁴: there the cost is numpy and scipy calls
of ~1.5 µs each on small arrays. Sorting both sides costs about one sort, the cuts a third to two thirds of another
(three rounds of a dozen calls; two or four rounds cost as much or more), the tallies and δ = 0 roots 0.05 to 0.08 ms;
at δ > 0 the ~15 steps of the crossing estimate (one bdtrc call of five tails, ~10 µs each) are the largest part,
then the best rule's 2 or 3 full p-values (a window maximum of ~18 numpy calls, 30 to 50 µs each) and the p_w
steps between them (~8 µs each). Not taken: the proxies by a safeguarded secant (Illinois) on the estimate's log
(the same 15 to 19 estimates at 10⁴, the estimate being piecewise in its rounded widths), the cuts from a
subsample and per-lane windows (slower: unsorted searchsorted into the sides), and a neighbour-by-neighbour climb
of the maximising width (more steps where the width moves by several).
"""

from __future__ import annotations

import functools
import heapq
import math

import numpy as np
from scipy import optimize, special, stats

from dpmech import validation as check

from . import _arguments as arg
from . import one_run_fdp
from .result import CERTIFIED, ESTIMATE, AuditResult
from .scores import NATURAL_TRIALS_NOTE

GUESSING = ("one-sided", "two-sided")
ANALYSES = ("steinke",) + one_run_fdp.CURVES
GUESS_RULES = ("grid", "hull")
DEFAULT_NUM_GUESS_COUNTS = 10
_GAUSSIAN_CURVE_NOTE = (
    " eps_lb falsifies the Gaussian trade-off curve with μ = 1/σ(ε, δ): valid only if the mechanism's privacy "
    "curve is Gaussian-shaped (e.g. a composed Gaussian mechanism); not an assumption-free (ε, δ) bound."
)
_ROUNDING_MARGIN = 1e-10
_XTOL = 1e-9
_EPSILON_CAP = 700.0
# p(ε) is compared with the significance less this fraction of it: scipy's binomial tails carry relative errors
# (2.4e-11 seen), and a bound whose computed p-value only just passes must pass in exact arithmetic too.
_P_MARGIN = 1e-9
_PROXY_STEPS = 9
_LOWERING_CHUNK = 12
_DOUBLINGS = [2.0**k for k in range(_LOWERING_CHUNK)]  # the steps of one chunk in units of the step, exact
_TINY = 1e-300  # log p is taken of max(p, this): a tail that underflows at small ε still orders correctly
# Newton's search for a rule's δ > 0 bound (_epsilon_for_counts): at most this many steps; the crossing is taken
# once its predicted error is below _NEWTON_PREDICTED·max(1, ε), the bound sits _NEWTON_BELOW·max(1, ε) below it,
# and p is confirmed to reach the target _NEWTON_WIDTH·max(1, ε) above the bound.
_NEWTON_STEPS = 8
_NEWTON_PREDICTED = 2e-9
_NEWTON_BELOW = 2e-8
_NEWTON_WIDTH = 5e-8


def _window_average_max(r: int, v: int, q: float) -> tuple[float, float, float, int]:
    """max over 1 <= i <= v of P[v − i <= Bin(r, q) <= v − 1] / i, never understated; with two slopes and the maximiser.

    The averaged terms t_i = pmf(v − i) first rise (up to the mode) and then fall,
    and the running average A_i of such a sequence rises while the next term
    exceeds it and falls for good once a falling term is at most the average
    (A_{i+1} is a weighted mean of A_i and t_{i+1}, both >= t_{i+2}): the
    averages are unimodal in i, and the maximum is over the terms down to the
    first falling one below the running average.

    The terms are computed relative to the largest one, pmf(x₀) at
    x₀ = min(⌊(r + 1)q⌋, v − 1), from the ratios pmf(x + 1)/pmf(x) =
    (r − x)q/((x + 1)(1 − q)) and their products (a few ns per term, against
    ~100 ns for scipy's pmf), taken upwards to v − 1 and downwards in chunks of
    ~10 standard deviations until the averages fall. Each ratio carries at most 4
    roundings and each product one more, so after k steps a term is within
    γ_{5k} ≈ 5ku relative of its value (u = 2⁻⁵³); the cumulative sums add γ_N
    over N terms, and pmf(x₀) (scipy's Boost kernel) is accurate to ~1e-14. The
    result is raised by a relative 1e-10 + 8Nu, and by N²·2⁻¹⁰⁷⁰ times pmf(x₀)
    for terms that underflow (each rounding in the subnormal range is off by at
    most 2⁻¹⁰⁷⁵ in absolute terms), plus the smallest subnormal.

    Returns that bound, the ε-derivative of the maximising window's average (d pmf(x)/dε = pmf(x)(x − rq) for
    q = e^ε/(1 + e^ε); the window held fixed, as the envelope theorem allows where the maximiser is unique) and
    pmf(v − 1). The last two only steer :func:`_epsilon_for_counts`'s Newton steps and carry no margin. Last, the
    maximising width i (the first, where several share the largest average), for :func:`_window_p_value_and_slope`.
    """
    complement = 1.0 - q
    if complement <= 0.0:
        return 1.0, 0.0, 0.0, 1  # q rounded to 1 (ε > 37): every average of probabilities is at most 1
    peak = min(math.floor((r + 1) * q), v - 1)  # the mode among x <= v − 1, up to one position
    spread = int(10.0 * math.sqrt(r * q * complement) + 16.0)
    num_above = v - 1 - peak
    count = min(spread, peak)
    # pmf(y + 1)/pmf(y) = (r − y)q/((y + 1)(1 − q)) for y = x₀ .. v − 2, and pmf(x − 1)/pmf(x) is its reciprocal
    # at y = x − 1 for x = x₀, … down to x₀ − count + 1: each numerator and denominator once, for y from x₀ − count.
    ys = np.arange(peak - count, v - 1, dtype=np.float64)
    numerators, denominators = (r - ys) * q, (ys + 1.0) * complement
    # terms: t_1 .. t_{v − x₀} then the terms below x₀, in units of pmf(x₀), filled in place (one buffer, no joins).
    # ufunc methods, not np.cumprod/np.cumsum/ndarray.max: the same loops without ~1 µs of Python dispatch each.
    terms = np.empty(num_above + 1 + count)
    upward_ratios = numerators[count:] / denominators[count:]
    np.multiply.accumulate(upward_ratios, out=terms[:num_above][::-1])  # pmf(v − 1 .. x₀ + 1)
    terms[num_above] = 1.0
    downward_ratios = (denominators[:count] / numerators[:count])[::-1]
    np.multiply.accumulate(downward_ratios, out=terms[num_above + 1:])  # pmf(x₀ − 1, …)
    below = count
    while True:
        averages = np.add.accumulate(terms) / np.arange(1, terms.size + 1)
        # Stop at x = 0, or once the last term, two or more below x₀ (past the true mode), is below its average
        # with room for the rounding of both.
        if peak - below <= 0 or (below >= 2 and terms[-1] * (1.0 + 1e-9) < averages[-2] * (1.0 - 1e-9)):
            break
        start = peak - below
        count = min(spread + below, start)
        downward = np.arange(start, start - count, -1, dtype=np.float64)
        further = np.multiply.accumulate(downward * complement / ((r - downward + 1.0) * q))
        terms = np.concatenate((terms, terms[-1] * further))
        below += count
    size = terms.size
    anchor = float(stats.binom._pmf(peak, r, q))
    margin = 1.0 + _ROUNDING_MARGIN + 8.0 * size * 2.0**-53
    underflow = size * size * 2.0**-1070
    widest = int(averages.argmax())  # the window of the first largest average: terms 0 .. widest, x = v − 1 − j
    largest = float(averages[widest])
    # Σ_j t_j (x_j − rq) / (widest + 1) with x_j = v − 1 − j: the mean offset of the window's mass from rq.
    offsets = float(np.dot(terms[:widest + 1], np.arange(widest + 1.0))) / (widest + 1)
    slope = anchor * ((v - 1 - r * q) * largest - offsets)
    return (anchor * (largest + underflow)) * margin + 5e-324, slope, anchor * float(terms[0]), widest + 1


def _p_value(epsilon: float, delta: float, num_guesses: int, num_correct: int, num_canaries: int) -> float:
    r, v = num_guesses, num_correct
    if v == 0:
        return 1.0
    if delta > 0.0:
        return _p_value_and_slope(epsilon, delta, r, v, num_canaries)[0]
    return min(1.0, float(special.bdtrc(v - 1, r, float(special.expit(epsilon)))))


def _p_value_and_slope(epsilon: float, delta: float, r: int, v: int, m: int) -> tuple[float, float, int]:
    """p(ε, δ) as :func:`_p_value` computes it (δ > 0, v >= 1), an estimate of dp/dε (0 where p is capped at 1), and
    the width of the window whose average is the maximum (:func:`_window_average_max`).

    d/dε P[Bin(r, q) >= v] = q (r − v + 1) pmf(v − 1) (from dP/dq = r·pmf_{r−1}(v − 1) and dq/dε = q(1 − q)), and
    the window's slope comes from :func:`_window_average_max`. The slope only steers Newton's steps.
    """
    q = float(special.expit(epsilon))
    tail = float(special.bdtrc(v - 1, r, q))
    window, window_slope, last_term, width = _window_average_max(r, v, q)
    p = tail + window * delta * 2.0 * m
    if not p < 1.0:  # as min(1, p), a NaN included
        return 1.0, 0.0, width
    return p, q * (r - v + 1) * last_term + 2.0 * m * delta * window_slope, width


def _window_p_value_and_slope(epsilon: float, delta: float, r: int, v: int, m: int, width: int) -> tuple[float, float]:
    """p(ε, δ) with the window maximum replaced by the average over one window, and its slope (δ > 0, 1 <= width <= v).

    p_w(ε) = P[X >= v] + 2mδ·P[v − w <= X <= v − 1]/w for X ~ Bin(r, q), q = e^ε/(1 + e^ε), from four binomial
    tails in one bdtrc call (bdtrc(k) = P[X > k], so the window's mass is bdtrc(v − 1 − w) − bdtrc(v − 1) and
    pmf(k) = bdtrc(k − 1) − bdtrc(k)); d bdtrc(k)/dε = q (r − k) pmf(k). The maximum over the windows being at
    least any one of them, p_w <= p (up to scipy's errors in the two differenced tails, a few 1e-11 each and 8e-11
    seen in their difference at r = 3·10⁵, times 2mδ/w; the maximum's own margin only widens the gap), with equality where w is the maximising width. :func:`_epsilon_for_counts` steers its Newton
    steps with it, and uses p_w(ε) >= target to show that p(ε) reaches the target (a tightness check, never the
    certificate of a bound, which is always p itself). 1.0 and slope 0 where p_w is not below 1 (a NaN included).
    """
    q = float(special.expit(epsilon))
    end = v - 1 - width  # the window is v − w .. v − 1: its mass is P[X > v − 1 − w] − P[X > v − 1]
    tail, above, window_tail, below = special.bdtrc((v - 1, v - 2, end, end - 1), np.int64(r), q).tolist()
    weight = 2.0 * m * delta
    p = tail + weight * (window_tail - tail) / width
    if not p < 1.0:
        return 1.0, 0.0
    top_slope = q * (r - v + 1) * (above - tail)  # d P[X > v − 1]/dε = q (r − v + 1) pmf(v − 1)
    return p, top_slope + weight * (q * (r - end) * (below - window_tail) - top_slope) / width


def one_run_p_value(epsilon, delta, num_guesses, num_correct, num_canaries) -> float:
    """The p-value p(ε, δ) of Steinke et al. 2023 for v correct out of r guesses among m canaries.

    Args:
        epsilon: ε >= 0 of the claim.
        delta: δ in [0, 1) of the claim.
        num_guesses: r >= 0.
        num_correct: v, 0 <= v <= r.
        num_canaries: m >= r, every canary randomised into IN/OUT.
    """
    epsilon = float(check.non_negative("epsilon", epsilon))
    delta = arg.delta_at_least_zero(delta)
    r = check.integer_scalar("num_guesses", num_guesses, 0)
    v = check.integer_scalar("num_correct", num_correct, 0)
    m = check.integer_scalar("num_canaries", num_canaries, 1)
    if v > r:
        raise ValueError(f"num_correct must be <= num_guesses (got {v} > {r})")
    if r > m:
        raise ValueError(f"num_guesses must be <= num_canaries (got {r} > {m})")
    return _p_value(epsilon, delta, r, v, m)


def _pure_roots(significance: float, r: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The ε at which P[Bin(r, q) >= v] = significance, q = e^ε/(1 + e^ε), for arrays of counts (v >= 1).

    P[Bin(r, q) >= v] = I_q(v, r − v + 1) = 1 − I_{1−q}(r − v + 1, v) (the regularised incomplete beta),
    so 1 − q is scipy's inverse of the complemented incomplete beta at the significance, in one vectorised
    call; ε = log(q) − log(1 − q) from 1 − q keeps its relative precision as q nears 1. An estimate only:
    :func:`_lowered_root` checks and lowers it.
    """
    complement = special.betainccinv(r - v + 1, v, significance)
    with np.errstate(divide="ignore"):
        return np.log1p(-complement) - np.log(complement)


def _live_roots(significance: float, r: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Each rule's δ = 0 root (:func:`_pure_roots`, at most 700), and 0 where no ε > 0 can be rejected.

    A rule is live when its p-value at ε = 0, P[Bin(r, ½) >= v], is below the significance less 1e-9 of it
    (bdtrc(−1, r, q) = 1: a rule with v = 0 is never live); a NaN root counts as 0. Every rule's δ = 0 bound
    (:func:`_lowered_root`) is at most its root, and so is its δ > 0 bound.
    """
    r, v = np.asarray(r, np.int64), np.asarray(v, np.int64)
    roots = np.zeros(r.shape)
    # .nonzero() on the 1-D mask, not np.flatnonzero (a ~5 µs Python wrapper).
    live = (special.bdtrc(v - 1, r, 0.5) < significance * (1.0 - _P_MARGIN)).nonzero()[0]
    if live.size:
        estimated = _pure_roots(significance, r[live], v[live])
        roots[live] = np.where(np.isnan(estimated), 0.0, np.minimum(estimated, _EPSILON_CAP))
    return roots


def _lowered_root(significance: float, r: int, v: int, root: float) -> float:
    """sup{ε : p(ε, 0) < significance·(1 − 1e-9)} for one rule, from its root (:func:`_live_roots`).

    The root is lowered (by 1e-12 relative, then by doubling steps) until the p-value itself,
    P[Bin(r, expit ε) >= v] as :func:`_p_value` computes it, is below the significance less 1e-9 of it; 0 where
    the root is 0 (a live rule with a NaN root passes at ε = 0, where it is live). The 1e-9 covers the error of
    scipy's binomial tail (2.4e-11 relative seen against mpmath), so p at the returned ε is below the
    significance in exact arithmetic too, and the bound is certified in the sense of Steinke et al.
    """
    if not root > 0.0:
        return 0.0
    target = significance * (1.0 - _P_MARGIN)
    candidate = max(root * (1.0 - 1e-12), 0.0)
    step = 1e-12 * max(candidate, 1.0)
    # The candidates c_0 = candidate, c_k = c_{k−1} − 2^{k−1}·step, each taken at max(c_k, 0), _LOWERING_CHUNK at a
    # time, one bdtrc call checking them all (the roots sit at the significance, 1e-9 above the target, so a rule
    # passes after ~4 to 9 steps); the first that passes is the bound, and if none does the search goes on from
    # the last with the step 2^K·step. Python floats: one rule's dozen candidates cost less in scalars than in
    # the ~20 numpy calls of a vectorised chunk, and the doubles are those of that chunk (a subtract-accumulate).
    while True:
        trail = [candidate]
        for doubling in _DOUBLINGS:
            trail.append(trail[-1] - step * doubling)
        trail = [max(point, 0.0) for point in trail]
        passing = special.bdtrc(v - 1, r, special.expit(trail[:-1])) < target  # NaN fails too
        first = int(passing.argmax())
        if passing[first]:
            return trail[first]
        candidate, step = trail[-1], step * 2.0**_LOWERING_CHUNK


def _estimate_rejects(epsilon: float, weight: float, target: float, r: int, v: int) -> bool:
    """Whether an estimate of p(ε, δ), at most p, is below the target (r, v >= 1; ``weight`` = 2mδ).

    W of :func:`_window_average_max` is estimated by its largest average among four window widths (1, the
    distance from v − 1 down to the mode, and that plus one and two standard deviations, rounded and kept in
    [1, v]), from differences of binomial tails, all five tails in one bdtrc call. A maximum over some windows
    is at most W, so tail(ε) + 2mδ·(that maximum) is at most p (up to the rounding of differenced tails).
    :func:`_best` bisects on it for each rule's proxy. Scalar arithmetic in the order of the vectorised
    estimate it replaced, so that every decision, and so every proxy and bracket, is the same doubles
    (tests/audits/test_one_run_pinned.py); a NaN tail or average rejects nothing.
    """
    q = float(special.expit(epsilon))
    last = v - 1
    distance = v - min(math.floor((r + 1) * q), last)  # from v − 1 down to the mode, >= 1 and <= v
    spread = math.sqrt(r * q * (1.0 - q))
    wider = min(max(float(round(distance + spread)), 1.0), v)
    widest = min(max(float(round(distance + spread * 2.0)), 1.0), v)
    tails = special.bdtrc((float(last), last - 1.0, last - distance, last - wider, last - widest), np.int64(r), q)
    tail, *ends = tails.tolist()
    if math.isnan(tail) or any(map(math.isnan, ends)):  # then an average is NaN: the vectorised max rejected nothing
        return False
    averages = (ends[0] - tail, (ends[1] - tail) / distance, (ends[2] - tail) / wider, (ends[3] - tail) / widest)
    return tail + weight * max(averages) < target


def _epsilon_for_counts(significance: float, delta: float, r: int, v: int, m: int, root: float,
                        estimate: float = math.nan, rejected: tuple[float, float] | None = None) -> float:
    """sup{ε : p(ε, δ) < significance·(1 − 1e-9)} less at most 5·10⁻⁸·max(1, ε), 0 when even ε = 0 is not rejected.

    ``root``: where the δ = 0 p-value crosses the significance (:func:`_pure_roots`); p(ε, δ) >= p(ε, 0), so the
    crossing of p(·, δ) lies below it. ``estimate``: a guess at the crossing (a proxy of :func:`_best`).
    ``rejected``: a known (ε₀, p(ε₀)) with p(ε₀) below the target, so that p(0) <= p(ε₀) need not be computed.

    Newton's method on log p(ε) = log target from the estimate (else the root): near the crossing the error squares
    at each step (e_{k+1} ≈ C e_k² with C = |f''|/(2f') for f = log p − log target, f'' estimated from the slopes at
    the last two points). The first point's p comes in full (:func:`_p_value_and_slope`) with the width w whose
    window average is the maximum; the next steps are taken on p_w (:func:`_window_p_value_and_slope`, the same
    expression with that one window; p_w <= p, equal where w maximises), so from a proxy within 1/512 of the root
    one full p-value and two or three of p_w predict the crossing ε* to 2·10⁻⁹·max(1, ε*). Then
    ε = ε* − 2·10⁻⁸·max(1, ε*) is returned if p(ε) < target, computed in full (the bound is certified: it is
    checked with p itself), w also maximises at ε (else ε* may be p_w's crossing and not p's, and Newton goes on
    from ε with the width found there), and p_w(ε + 5·10⁻⁸·max(1, ε*)) >= target (then p >= p_w reaches the target
    there, p being nondecreasing the supremum lies below that point, and ε is at most 5·10⁻⁸·max(1, ε*) below it;
    scipy's errors in p_w's tails, ~1e-10 of p at most, move that point by ~1e-11). Two full p-values where the
    maximising width at the proxy is that at the crossing, three where it moves (brentq took 7 to 8). The 2·10⁻⁸
    keeps ε below the bound the brentq search before it returned (within ~3·10⁻⁹ of the supremum). Where Newton does not predict
    and confirm a crossing within its steps (a slope of 0 where p is capped at 1, a crossing at 0 or beyond the
    bracket), brentq solves log p = log target in the bracket Newton's p-values left, its root less
    2·10⁻⁸·max(1, root) is taken, and that is lowered until p passes.
    """
    target = significance * (1.0 - _P_MARGIN)
    log_target = math.log(target)
    # Newton's checks and brentq evaluate some points again: p, its slope and maximising width are remembered per ε.
    remembered: dict[float, tuple[float, float, int]] = {}

    def p_slope_width(epsilon: float) -> tuple[float, float, int]:
        if epsilon not in remembered:
            remembered[epsilon] = _p_value_and_slope(epsilon, delta, r, v, m)
        return remembered[epsilon]

    def p_value(epsilon: float) -> float:
        return rejected[1] if rejected is not None and epsilon == rejected[0] else p_slope_width(epsilon)[0]

    if r == 0 or v == 0:
        return 0.0
    low = 0.0 if rejected is None else rejected[0]
    high = max(root, low)
    low_known, high_known = rejected is not None, False  # whether p(low) < target, p(high) >= target are computed
    epsilon = estimate if low < estimate < high else high
    last_epsilon = last_log_slope = math.nan
    # The maximising width at the last p computed in full (0 before the first): between two such points Newton
    # steps on p_w of that width (four tails in one bdtrc call, against ~18 numpy calls for p), which is p where
    # that width maximises. Where the maximiser moves with ε faster than that (wide windows, r ~ 10⁵ and more), a
    # second bound certified under another width than predicted ends the steering: Newton goes on with p in full.
    width, moved = 0, 0
    for _ in range(2 * _NEWTON_STEPS):  # p_w's steps and p's together
        if width and moved < 2:
            p, slope = _window_p_value_and_slope(epsilon, delta, r, v, m, width)
            if p >= target:  # p >= p_w: p reaches the target here too (p_w below it shows nothing about p)
                high, high_known = min(high, epsilon) if high_known else epsilon, True
        else:
            p, slope, width = p_slope_width(epsilon)
            if p < target:
                low, low_known = max(low, epsilon), True
            else:
                high, high_known = min(high, epsilon) if high_known else epsilon, True
        if not (p > _TINY and slope > 0.0):
            break
        log_slope = slope / p
        step = (math.log(p) - log_target) / log_slope
        crossing = epsilon - step
        scale = max(crossing, 1.0)
        # Newton's error after this step is about |f''|/(2f')·step² for f = log p − log target, f'' taken from
        # the change of f' since the last point (NaN, so no crossing is taken, before a second point).
        distance = abs(epsilon - last_epsilon)
        curvature = abs(log_slope - last_log_slope) / distance if distance > 0.0 else math.inf
        last_epsilon, last_log_slope, epsilon = epsilon, log_slope, crossing
        if curvature * step * step <= 2.0 * _NEWTON_PREDICTED * scale * log_slope:
            bound, confirming = crossing - _NEWTON_BELOW * scale, crossing + (_NEWTON_WIDTH - _NEWTON_BELOW) * scale
            if bound < 0.0:
                break
            if not (bound == low and low_known):
                p_bound, _, width_at_bound = p_slope_width(bound)
                if p_bound < target:
                    low, low_known = max(low, bound), True
                else:
                    high, high_known = min(high, bound) if high_known else bound, True
                if p_bound >= target or moved < 2 and width_at_bound != width:
                    # Not certified, or certified where another width maximises than the one whose crossing was
                    # predicted (p_w below p there: the prediction may lie above p's crossing): Newton goes on from
                    # the bound, with the width that maximises there.
                    moved += width_at_bound != width
                    width, epsilon = width_at_bound, bound
                    continue
                width = width_at_bound  # the same where p_w steered; for the check below after steps on p
            # The bound is certified (p < target). p >= p_w: where p_w reaches the target, so does p, and the
            # supremum lies below that point.
            if high_known and high <= confirming or \
                    _window_p_value_and_slope(confirming, delta, r, v, m, width)[0] >= target:
                return bound
            low, low_known, epsilon = max(low, bound), True, confirming
            # A kink of p (the window's maximiser moved) spoilt the prediction: Newton goes on from the point
            # that failed its check.
            continue
        if not (low < crossing < high if high_known else low < crossing):
            break
    if not low_known and p_value(low) >= target:
        return low  # low = 0 here: even ε = 0 is not rejected
    step = 1e-9 * max(high, 1.0)
    while p_value(high) < target:
        low, high, step = high, high + step, 2.0 * step
        if high > _EPSILON_CAP:
            return low
    root = optimize.brentq(lambda e: math.log(max(p_value(e), _TINY)) - log_target, low, high, xtol=_XTOL)
    # As far below brentq's root as Newton's bound sits below its crossing (brentq's root is within ~1e-9 of the
    # supremum): the bound does not depend on which of the two searches found it by more than ~5e-8.
    epsilon = max(root - 2.0 * _XTOL - _NEWTON_BELOW * max(root, 1.0), low)
    while epsilon > low and p_value(epsilon) >= target:
        epsilon = max(epsilon - 1e-6 * max(epsilon, 1.0), low)
    return epsilon


@functools.lru_cache(maxsize=64)
def _guess_counts(num_canaries: int, guessing: str, num_guess_counts: int) -> np.ndarray:
    """The "bonferroni" grid of guess counts, read-only: a function of its arguments alone, so it is remembered
    (np.geomspace and np.unique took ~50 µs, a third of a sort of 2·10⁴ scores)."""
    largest = num_canaries if guessing == "one-sided" else num_canaries // 2
    if largest < 1:
        raise ValueError(f"two-sided guessing needs at least 2 canaries (got {num_canaries})")
    counts = np.unique(np.round(np.geomspace(1, largest, num_guess_counts)).astype(np.int64))
    counts.flags.writeable = False
    return counts


def _pooled_sorted_at(in_padded: np.ndarray, out_padded: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The pooled scores, sorted, at ``positions`` (0-based ints below m), without merging the two sides.

    ``in_padded`` and ``out_padded`` are each side sorted between the sentinels −∞ and +∞ (:func:`_sorted_sides`).
    The j + 1 smallest pooled scores are the i smallest of one side and the j + 1 − i smallest of the other,
    where i is the least count with a[i] >= b[j − i] (a = the IN side, b = the OUT side; a[n_a] = +∞ and
    b[−1] = −∞, which the sentinels hold): a[i] rises and b[j − i] falls with i, so that predicate is monotone,
    and a search over i, vectorised over j, finds it in O(log m) steps. The value at j is the larger of the
    last ones taken, max(a[i − 1], b[j − i]) (a[−1] = −∞).

    In padded indices I = i + 1 the predicate reads A[I] >= B[j + 2 − I], and the answer is the least I in
    [max(1, j + 2 − n_b), min(j + 2, n_a + 1)] where it holds (at the top of that range through a +∞ or a −∞).
    The sentinels keep every index in range. The search is in base P = 2^k, with P^R above the widest range
    and R <= 3 rounds (P = 32 at 10⁴ scores per side, 128 at 10⁶): the round with stride S = P^(R−1), …, P, 1
    checks the P points low + S·t, t = 0 .. P − 1, of every lane at once (those above the top of the range read
    the top, where the predicate holds), and with f of them failing the answer lies in
    [low + S·(f − 1) + 1, low + S·f] (at f = 0, low itself), a range narrower than S, so the round with stride 1
    ends on the answer. About a dozen numpy calls a round on 20·P points (probes spread over each lane's own
    range took about twenty: ~70 against ~90 µs at 10⁴ scores per side).
    """
    a, b = in_padded, out_padded
    shifted = np.asarray(positions, np.int64) + 2
    low = np.maximum(1, shifted - (b.size - 2))  # at most n_b from b
    high = np.minimum(shifted, a.size - 1)  # at most j + 1 from a
    digits = int(np.maximum.reduce(high - low)).bit_length()  # P^R = 2^(bits·R) >= 2^digits > every range
    bits = max(1, -(-digits // 3))
    steps, shifted_column, high_column = np.arange(1 << bits), shifted[:, None], high[:, None]
    for stride in (1 << (bits * power) for power in range(-(-digits // bits) - 1, -1, -1)):
        probes = np.minimum(low[:, None] + steps * stride, high_column)
        failing = np.add.reduce(a[probes] < b[shifted_column - probes], axis=1)  # the predicate fails on a prefix
        low = low + np.maximum(failing * stride - (stride - 1), 0)
    return np.maximum(a[low - 1], b[shifted - low])


def _cuts_from_counts(in_padded: np.ndarray, out_padded: np.ndarray, counts: np.ndarray, guessing: str):
    m = in_padded.size + out_padded.size - 4
    in_positions = np.minimum(np.maximum(m - 1 - counts, 0), m - 1)
    if guessing == "one-sided":
        in_cuts = _pooled_sorted_at(in_padded, out_padded, in_positions)
        out_cuts = np.full(counts.size, -np.inf)
    else:
        # Both sides' cuts in one vectorised search.
        both = _pooled_sorted_at(in_padded, out_padded, np.concatenate((in_positions, np.minimum(counts, m - 1))))
        in_cuts, out_cuts = both[:counts.size], both[counts.size:]
    return out_cuts, np.where(counts < m, in_cuts, -np.inf)


def _candidate_cuts(scores, in_padded, out_padded, guessing, grid_size, guess_rules):
    """(out_cuts, in_cuts) of the candidate guess rules: the count grid, or every ROC-hull threshold."""
    if guess_rules == "grid":
        counts = _guess_counts(in_padded.size + out_padded.size - 4, guessing, grid_size)
        return _cuts_from_counts(in_padded, out_padded, counts, guessing)
    from . import metrics

    counts = metrics.roc_counts(scores)
    # Hull vertex j is the rule "IN if score >= t_j", i.e. "IN if score > the next lower distinct score".
    vertices = metrics.hull_indices(counts)[1:]
    lower = np.r_[counts.oriented_thresholds[1:], -np.inf]
    return np.full(vertices.size, -np.inf), lower[vertices]


def _sorted_sides(scores) -> tuple[np.ndarray, np.ndarray]:
    """Oriented IN and OUT scores, each sorted between the sentinels −∞ and +∞ (for :func:`_pooled_sorted_at`).

    Each side is copied (negated if lower scores mean IN) into its padded buffer and sorted there, so the
    sentinels cost no copy beyond the one a sort makes anyway.
    """
    padded = []
    for side in (scores.in_scores, scores.out_scores):
        buffer = np.empty(side.size + 2)
        buffer[0], buffer[-1] = -np.inf, np.inf
        inner = buffer[1:-1]
        if scores.higher_is_in:
            inner[:] = side
        else:
            np.negative(side, out=inner)
        inner.sort()
        padded.append(buffer)
    return padded[0], padded[1]


def _guess_tallies(in_padded, out_padded, out_cuts, in_cuts):
    """(r, v) of "IN if score > in_cut, OUT if score < out_cut" for arrays of cuts, from the padded sorted sides."""
    in_sorted, out_sorted = in_padded[1:-1], out_padded[1:-1]
    in_above = in_sorted.size - np.searchsorted(in_sorted, in_cuts, side="right")
    out_above = out_sorted.size - np.searchsorted(out_sorted, in_cuts, side="right")
    in_below = np.searchsorted(in_sorted, out_cuts, side="left")
    out_below = np.searchsorted(out_sorted, out_cuts, side="left")
    return in_above + out_above + in_below + out_below, in_above + out_below


def _best(significance, delta, r, v, m, analysis="steinke"):
    """Index of the rule with the largest ε bound and that bound."""
    if analysis != "steinke":
        epsilons = [one_run_fdp.epsilon_for_counts(analysis, significance, delta, int(a), int(b), m) for a, b in zip(r, v)]
        best = int(np.argmax(epsilons))
        return best, float(epsilons[best])
    roots = _live_roots(significance, r, v)
    if delta == 0.0:
        # A rule's bound is at most its root: only the rules whose root reaches the bound of the rule with the
        # largest root can hold the largest bound, and only theirs are lowered (12 bdtrc candidates a rule).
        top = int(np.argmax(roots))
        pure = np.zeros(roots.shape)
        pure[top] = _lowered_root(significance, int(r[top]), int(v[top]), float(roots[top]))
        for index in (roots >= pure[top]).nonzero()[0].tolist():
            if index != top:
                pure[index] = _lowered_root(significance, int(r[index]), int(v[index]), float(roots[index]))
        best = int(np.argmax(pure))
        return best, float(pure[best])
    target = significance * (1.0 - _P_MARGIN)
    best, best_epsilon = 0, -1.0  # every bound is >= 0: the first rule tried replaces both
    # Proxies: _PROXY_STEPS bisection steps in [0, root] (to 1/512 of it) find where the estimate of
    # _estimate_rejects meets the target; the proxy is the last upper end. The estimated p being at most p, a
    # proxy (a point where the estimated p is not below the target, or the δ = 0 root) bounds its rule's crossing
    # from above. The rules are tried in the order of their proxies (ties by index), the rule likeliest to be
    # best first, so that the others mostly cost one p-value or none; a rule whose proxy does not exceed the best
    # bound so far ends the search; and the proxy brackets the rule's search. Only an order, a first bracket and
    # that skip: nothing certified rests on them (_epsilon_for_counts checks p), and a proxy that rounding left
    # just below its crossing can only make the result smaller.
    # A proxy is found only as far as the order needs it: each rule's bisection holds an upper end (its root
    # before the first step), at least its proxy; the rule with the largest upper end (ties: an unfinished
    # bisection, then the lower index) takes one more step until it is finished, and then no other rule's proxy
    # can exceed its proxy: it is the next in the order.
    weight, guesses, corrects = 2.0 * m * delta, r.tolist(), v.tolist()
    lower, upper = [0.0] * r.size, roots.tolist()
    steps = [_PROXY_STEPS if root == 0.0 else 0 for root in upper]  # a rule with root 0 has proxy 0
    # A heap of (−upper end, finished, index): the largest upper end first, an unfinished bisection before a
    # finished one, then the lower index.
    queue = [(-root, steps[index] == _PROXY_STEPS, index) for index, root in enumerate(upper)]
    heapq.heapify(queue)
    while queue:
        _, finished, index = heapq.heappop(queue)
        if upper[index] <= best_epsilon:
            # p(·, δ) is at least the estimate's p, which reaches the target at the proxy: this rule's bound is at
            # most the best so far (up to the estimate's rounding, which can only make the result smaller), and so
            # is every later rule's, their proxies being at most their upper ends.
            break
        if not finished:
            middle = 0.5 * (lower[index] + upper[index])
            if _estimate_rejects(middle, weight, target, guesses[index], corrects[index]):
                lower[index] = middle
            else:
                upper[index] = middle
            steps[index] += 1
            heapq.heappush(queue, (-upper[index], steps[index] == _PROXY_STEPS, index))
            continue
        if best_epsilon >= 0.0 and (roots[index] <= best_epsilon or _lowered_root(
                significance, guesses[index], corrects[index], float(roots[index])) <= best_epsilon):
            continue  # bounded by its δ = 0 value (itself at most the root), lowered only when the root does not tell
        counts = (guesses[index], corrects[index], m)
        rejected = None
        if best_epsilon >= 0.0:
            # p is nondecreasing in ε: if the best bound so far is not rejected for this rule, neither is any
            # larger ε, and this rule's bound (whose p is below the target) is smaller: one p-value, not ~12.
            at_best = _p_value(best_epsilon, delta, *counts)
            if at_best >= target:
                continue
            rejected = (best_epsilon, at_best)
        epsilon = _epsilon_for_counts(significance, delta, *counts, float(roots[index]), upper[index],
                                      rejected=rejected)
        if epsilon > best_epsilon:
            best, best_epsilon = index, epsilon
    return best, best_epsilon


def epsilon_one_run(
    scores,
    *,
    alpha: float = 0.05,
    delta: float = 0.0,
    guessing: str = "two-sided",
    threshold_strategy: str = "bonferroni",
    guess_thresholds=None,
    rng=None,
    num_guess_counts: int | None = None,
    analysis: str = "steinke",
    guess_rules: str = "grid",
) -> AuditResult:
    """One-run ε lower bound (Steinke, Nasr & Jagielski 2023) from the scores of m randomised canaries.

    Args:
        scores: :class:`~audits.scores.AuditScores`; ``in_scores`` are the canaries
            with S = +1, ``out_scores`` those with S = −1, all from ONE run.
        alpha: significance in (0, 1).
        delta: δ in [0, 1) of the claim.
        guessing: "two-sided" (IN on the top, OUT on the bottom) or "one-sided" (IN only).
        threshold_strategy: "bonferroni" (default), "split", "explicit" or "uncorrected".
        guess_thresholds: for "explicit": pairs (out_cut, in_cut) in the caller's
            units; guess IN beyond in_cut and OUT beyond out_cut (strictly), in
            the direction given by ``higher_is_in``; ±inf disables a side.
        rng: ``numpy.random.Generator`` or int seed, for "split" only.
        num_guess_counts: size of the k grid (default 10).
        analysis: "steinke" (the p-value above), "f-dp" (Mahloujifar et al.'s
            f-DP recursion on the (ε, δ) trade-off, usually tighter, same
            assumptions) or "f-dp-gaussian" (jax_privacy's Gaussian trade-off;
            needs δ > 0 and is valid only for GDP-shaped privacy curves); see
            :mod:`audits.one_run_fdp`.
        guess_rules: "grid" (the geometric grid of guess counts) or "hull"
            (jax_privacy's convention: one-sided rules "IN if score >= t" at every
            vertex of the ROC's convex hull, α divided by their number under
            "bonferroni"). That number depends on the data, so the union bound
            does not justify it: with "bonferroni" the result is an estimate;
            with "split" the rule is chosen on one half and certified on the other.

    Returns:
        :class:`~audits.result.AuditResult` with ``method="one-run"``; counts hold
        guesses r, correct v and canaries m.
    """
    scores = arg.audit_scores(scores)
    # A float already in range is what the checks return for it; they cost ~10 µs each (an array round trip), a
    # tenth of the sort at 10⁴ scores per side, so they are called only for anything else.
    alpha = alpha if type(alpha) is float and 0.0 < alpha < 1.0 else arg.significance(alpha)
    delta = delta if type(delta) is float and 0.0 <= delta < 1.0 else arg.delta_at_least_zero(delta)
    guessing = check.choice("guessing", guessing, GUESSING)
    analysis = check.choice("analysis", analysis, ANALYSES)
    guess_rules = check.choice("guess_rules", guess_rules, GUESS_RULES)
    if guess_rules == "hull" and guessing != "one-sided":
        raise ValueError("guess_rules='hull' needs guessing='one-sided' (as in jax_privacy)")
    if analysis == "f-dp-gaussian" and delta == 0.0:
        raise ValueError("delta must be > 0 with analysis='f-dp-gaussian' (a Gaussian curve has no δ = 0 point)")
    strategy = arg.strategy(threshold_strategy)
    grid_size = check.integer_scalar(
        "num_guess_counts", DEFAULT_NUM_GUESS_COUNTS if num_guess_counts is None else num_guess_counts, 1
    )
    if strategy != "explicit" and guess_thresholds is not None:
        raise ValueError(f"guess_thresholds is only used with threshold_strategy='explicit' (got {strategy!r})")
    if strategy != "split" and rng is not None:
        raise ValueError(f"rng is only used with threshold_strategy='split' (got {strategy!r})")

    evaluated = scores
    if strategy == "explicit":
        if guess_thresholds is None:
            raise ValueError("guess_thresholds must be given as (out_cut, in_cut) pairs with threshold_strategy='explicit'")
        try:
            pairs = np.array(guess_thresholds, dtype=float).reshape(-1, 2)
        except (TypeError, ValueError):
            raise ValueError(f"guess_thresholds must be (out_cut, in_cut) pairs (got {guess_thresholds!r})") from None
        if pairs.shape[0] == 0 or np.any(np.isnan(pairs)):
            raise ValueError(f"guess_thresholds must be non-empty pairs without NaN (got {guess_thresholds!r})")
        oriented = pairs if scores.higher_is_in else -pairs
        if np.any(oriented[:, 0] > oriented[:, 1]):
            raise ValueError("guess_thresholds: each out_cut must lie on the OUT side of its in_cut")
        out_cuts, in_cuts = oriented[:, 0], oriented[:, 1]
        num_hypotheses, significance = pairs.shape[0], alpha / pairs.shape[0]
    elif strategy == "split":
        selection_half, evaluated = scores.split(rng)
        in_padded, out_padded = _sorted_sides(selection_half)
        all_out, all_in = _candidate_cuts(selection_half, in_padded, out_padded, guessing, grid_size, guess_rules)
        r, v = _guess_tallies(in_padded, out_padded, all_out, all_in)
        best, _ = _best(alpha, delta, r, v, selection_half.num_in + selection_half.num_out, analysis)
        out_cuts, in_cuts = all_out[best : best + 1], all_in[best : best + 1]
        num_hypotheses, significance = 1, alpha
    else:
        in_padded, out_padded = _sorted_sides(scores)
        out_cuts, in_cuts = _candidate_cuts(scores, in_padded, out_padded, guessing, grid_size, guess_rules)
        num_hypotheses = in_cuts.size if strategy == "bonferroni" else 1
        significance = alpha / num_hypotheses

    if strategy in ("explicit", "split"):
        in_padded, out_padded = _sorted_sides(evaluated)
    m = evaluated.num_in + evaluated.num_out
    r, v = _guess_tallies(in_padded, out_padded, out_cuts, in_cuts)
    best, eps_lb = _best(significance, delta, r, v, m, analysis)
    certifiable = strategy != "uncorrected" and not (strategy == "bonferroni" and guess_rules == "hull")
    sign = 1.0 if scores.higher_is_in else -1.0
    rule = (
        "IN if score > in_cut, OUT if score < out_cut, else abstain"
        if scores.higher_is_in
        else "IN if score < in_cut, OUT if score > out_cut, else abstain"
    )
    return AuditResult(
        eps_lb=float(eps_lb),
        delta=delta,
        alpha=alpha,
        method="one-run" if analysis == "steinke" else f"one-run {analysis}",
        thresholds=(sign * out_cuts[best] + 0.0, sign * in_cuts[best] + 0.0),  # + 0.0: never "-0.0"
        counts={"guesses": int(r[best]), "correct": int(v[best]), "canaries": int(m)},
        assumption=(
            "One run; every canary included independently with probability 1/2; guesses depend on the "
            "output only (thresholds as threshold_strategy states); (ε, δ)-DP with respect to each canary."
        ) + (_GAUSSIAN_CURVE_NOTE if analysis == "f-dp-gaussian" else "") + ("" if scores.independent_trials else " " + NATURAL_TRIALS_NOTE),
        valid_as=CERTIFIED if certifiable and scores.independent_trials else ESTIMATE,
        threshold_strategy=strategy,
        decision_rule=rule,
        num_hypotheses=num_hypotheses,
    )
