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

Numerics. The maximum over window sums is found by a search that uses the
unimodality of the window averages (:func:`_window_average_max`), with binomial
tails instead of pmf sums, and is rounded up, so the p-value is never
understated. ε is found by bracketing and ``scipy.optimize.brentq``, and the
returned ε_lb is checked to satisfy p(ε_lb, δ) < α'. This relies on p being
nondecreasing in ε, which the first term always is (binomial stochastic order);
the tests check the whole expression on a grid. Over a grid of guess rules, the
δ = 0 bound of each rule bounds its δ > 0 bound from above (p(ε, δ) >= p(ε, 0)),
so rules whose δ = 0 bound cannot beat the best so far are skipped, and a rule for which the best bound
so far is not rejected is dropped after that one p-value (its own bound is smaller, p being
nondecreasing). Window terms that underflow to 0.0 are not evaluated and p is remembered per ε within
one root search: the results are the same doubles as without these shortcuts
(``tests/audits/test_one_run_speed.py``), at about 3 sorts' CPU time for 10⁶ scores at δ = 1e-5.
"""

from __future__ import annotations

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
_SEARCH_WIDTH = 128
_ROUNDING_MARGIN = 1e-10
_XTOL = 1e-10
_EPSILON_CAP = 700.0
_UNDERFLOW_EXPONENT = 800.0


def _window_average_max(r: int, v: int, q: float) -> float:
    """max over 1 <= i <= v of P[v − i <= Bin(r, q) <= v − 1] / i, never understated.

    The averaged terms pmf(v − 1), pmf(v − 2), … first rise (up to the mode) and
    then fall, and the running average of such a sequence rises while the next
    term exceeds it and falls for good afterwards: the averages are unimodal in
    i. A k-ary search on the sign of their increments brackets the maximum, which
    is then taken over the bracket. Window masses are differences of binomial
    tails on the side of the mean where they are small; the maximum over the
    bracket is then taken from sums of the pmf (scipy 1.17's tails are off by
    2.4e-11 relative in places, its pmf by ~1e-14), raised by a relative 1e-10
    to cover the rounding of the sum.
    """
    upper_side = v - 1 >= r * q
    # scipy.special's bdtrc(k) = P[Bin > k] and bdtr(k) = P[Bin <= k]: stats.binom's checks cost more than the tails.
    anchor = special.bdtrc(v - 1, r, q) if upper_side else special.bdtr(v - 1, r, q)

    def averages(i):
        below = v - 1 - i  # >= -1
        if upper_side:
            mass = special.bdtrc(below, r, q) - anchor
        else:
            mass = anchor - np.where(below < 0, 0.0, special.bdtr(np.maximum(below, 0), r, q))
        return mass / i

    low, high = 1, v
    while high - low > _SEARCH_WIDTH:
        points = np.linspace(low, high, _SEARCH_WIDTH + 1).astype(np.int64)
        values = averages(points)
        falling = np.flatnonzero(values[1:] < values[:-1])
        # The maximum lies between the neighbours of the first point after which the averages fall.
        first = falling[0] if falling.size else points.size - 1
        low, high = int(points[max(first - 1, 0)]), int(points[min(first + 1, points.size - 1)])
    # The maximum over the bracket from sums of the pmf: the incomplete-beta tails the search compares are off by
    # more than the margin in scipy 1.17 (2.4e-11 relative at r = 10,288, q = expit(2), v = 8,849, against
    # 40-digit mpmath), while the pmf terms are accurate to ~1e-14 and their sum adds at most v ulps.
    # Far above the mean the leading terms are exactly 0.0 in double precision: they are not evaluated (most of
    # the cost at m = 10^6), and the cumulative sums, which start with exact zeros, are unchanged bit for bit.
    # stats.binom._pmf is the Boost kernel behind stats.binom.pmf without its argument checks (a third of the
    # cost for ~4,000 terms); the arguments are valid integers and a probability here, and the values are the
    # same doubles (tests/audits/test_one_run.py checks it).
    zeros = _underflowing_terms(r, v, q, high)
    sums = np.zeros(high)
    sums[zeros:] = np.cumsum(stats.binom._pmf(np.arange(v - 1 - zeros, v - 1 - high, -1), r, q))
    return float(np.max(sums[low - 1:high] / np.arange(low, high + 1))) * (1.0 + _ROUNDING_MARGIN)


def _underflowing_terms(r: int, v: int, q: float, count: int) -> int:
    """How many of pmf(v − 1), pmf(v − 2), … (at most ``count``) lie below e^−800, hence round to 0.0.

    Chernoff's bound P[Bin(r, q) = x] <= exp(−r KL(x/r ‖ q)) (the point mass is below the tail) with
    the exponent decreasing as x falls towards r q; e^−800 is e^55 below the smallest subnormal, so a
    pmf accurate to any relative error below e^55 returns 0.0 there. Bisection on x >= r q only.
    """
    def exponent(x: float) -> float:
        share = x / r
        return r * float(special.rel_entr(share, q) + special.rel_entr(1.0 - share, 1.0 - q))

    above_mean = min(count, int(np.floor(v - 1 - r * q)) + 1)  # the terms x = v − 1 − j with x >= r q
    if above_mean <= 0 or exponent(v - 1) <= _UNDERFLOW_EXPONENT:
        return 0
    low, high = 1, above_mean  # exponent(v − 1 − j) > threshold for j < low; the answer is in [low, high]
    while low < high:
        middle = (low + high) // 2
        if exponent(v - 1 - middle) > _UNDERFLOW_EXPONENT:
            low = middle + 1
        else:
            high = middle
    return low


def _p_value(epsilon: float, delta: float, num_guesses: int, num_correct: int, num_canaries: int) -> float:
    r, v = num_guesses, num_correct
    if v == 0:
        return 1.0
    q = float(special.expit(epsilon))
    tail = float(special.bdtrc(v - 1, r, q))
    if delta == 0.0:
        return min(1.0, tail)
    return min(1.0, tail + _window_average_max(r, v, q) * delta * 2.0 * num_canaries)


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


def _epsilon_for_counts(significance: float, delta: float, r: int, v: int, m: int,
                        rejected: tuple[float, float] | None = None) -> float:
    """sup{ε : p(ε) < significance}, 0 when even ε = 0 is not rejected.

    ``rejected``: a known (ε₀, p(ε₀)) with p(ε₀) < significance, so that p(0) <= p(ε₀) need not be computed.
    """
    # brentq evaluates the bracket's ends again, which the doubling has just computed: p is remembered per ε.
    remembered: dict[float, float] = dict([rejected]) if rejected is not None else {}

    def p_value(epsilon: float) -> float:
        if epsilon not in remembered:
            remembered[epsilon] = _p_value(epsilon, delta, r, v, m)
        return remembered[epsilon]

    if r == 0 or (rejected is None and p_value(0.0) >= significance):
        return 0.0
    low, high = 0.0, 1.0
    while p_value(high) < significance:
        low, high = high, 2.0 * high
        if high > _EPSILON_CAP:
            return low
    root = optimize.brentq(lambda e: p_value(e) - significance, low, high, xtol=_XTOL)
    epsilon = max(root - 2.0 * _XTOL, low)
    while epsilon > low and p_value(epsilon) >= significance:
        epsilon = max(epsilon - 1e-6 * max(epsilon, 1.0), low)
    return epsilon


def _guess_counts(num_canaries: int, guessing: str, num_guess_counts: int) -> np.ndarray:
    largest = num_canaries if guessing == "one-sided" else num_canaries // 2
    if largest < 1:
        raise ValueError(f"two-sided guessing needs at least 2 canaries (got {num_canaries})")
    return np.unique(np.round(np.geomspace(1, largest, num_guess_counts)).astype(np.int64))


def _pooled_sorted_at(in_sorted: np.ndarray, out_sorted: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """The pooled scores, sorted, at ``positions`` (0-based ints below m), without merging the two sides.

    The value at position j is the smallest score s with #{pooled <= s} > j, a score of one side or the
    other; each side is bisected on its sorted positions for it, vectorised over j (O(log² m) per j).
    """
    def count_at_most(values):
        return np.searchsorted(in_sorted, values, side="right") + np.searchsorted(out_sorted, values, side="right")

    value = np.full(positions.shape, np.inf)
    for side in (in_sorted, out_sorted):
        # The predicate count_at_most(side[i]) > j is monotone in i: false below low, true from high on.
        low, high = np.zeros(positions.shape, np.int64), np.full(positions.shape, side.size, np.int64)
        while np.any(low < high):
            active = low < high
            middle = (low + high) // 2
            enough = count_at_most(side[np.minimum(middle, side.size - 1)]) > positions
            high = np.where(active & enough, middle, high)
            low = np.where(active & ~enough, middle + 1, low)
        value = np.where(high < side.size, np.minimum(value, side[np.minimum(high, side.size - 1)]), value)
    return value


def _cuts_from_counts(in_sorted: np.ndarray, out_sorted: np.ndarray, counts: np.ndarray, guessing: str):
    m = in_sorted.size + out_sorted.size
    in_cuts = np.where(counts < m, _pooled_sorted_at(in_sorted, out_sorted, np.clip(m - 1 - counts, 0, m - 1)), -np.inf)
    if guessing == "one-sided":
        out_cuts = np.full(counts.size, -np.inf)
    else:
        out_cuts = _pooled_sorted_at(in_sorted, out_sorted, np.clip(counts, 0, m - 1))
    return out_cuts, in_cuts


def _candidate_cuts(scores, in_sorted, out_sorted, guessing, grid_size, guess_rules):
    """(out_cuts, in_cuts) of the candidate guess rules: the count grid, or every ROC-hull threshold."""
    if guess_rules == "grid":
        counts = _guess_counts(in_sorted.size + out_sorted.size, guessing, grid_size)
        return _cuts_from_counts(in_sorted, out_sorted, counts, guessing)
    from . import metrics

    counts = metrics.roc_counts(scores)
    # Hull vertex j is the rule "IN if score >= t_j", i.e. "IN if score > the next lower distinct score".
    vertices = metrics.hull_indices(counts)[1:]
    lower = np.r_[counts.oriented_thresholds[1:], -np.inf]
    return np.full(vertices.size, -np.inf), lower[vertices]


def _sorted_sides(scores):
    """Oriented IN and OUT scores, each sorted."""
    in_oriented, out_oriented = scores.oriented()
    return np.sort(in_oriented), np.sort(out_oriented)


def _guess_tallies(in_sorted, out_sorted, out_cuts, in_cuts):
    """(r, v) of "IN if score > in_cut, OUT if score < out_cut" for arrays of cuts, from sorted sides."""
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
    pure = np.array([_epsilon_for_counts(significance, 0.0, int(a), int(b), m) for a, b in zip(r, v)])
    if delta == 0.0:
        best = int(np.argmax(pure))
        return best, float(pure[best])
    best, best_epsilon = int(np.argmax(pure)), -1.0
    for index in np.argsort(-pure, kind="stable"):
        if pure[index] <= best_epsilon:
            break  # this and every later rule is bounded by its δ = 0 value
        counts = (int(r[index]), int(v[index]), m)
        rejected = None
        if best_epsilon >= 0.0:
            # p is nondecreasing in ε: if the best bound so far is not rejected for this rule, neither is any
            # larger ε, and this rule's bound (whose p is below the significance) is smaller: one p-value, not ~12.
            at_best = _p_value(best_epsilon, delta, *counts)
            if at_best >= significance:
                continue
            rejected = (best_epsilon, at_best)
        epsilon = _epsilon_for_counts(significance, delta, *counts, rejected=rejected)
        if epsilon > best_epsilon:
            best, best_epsilon = int(index), epsilon
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
    alpha = arg.significance(alpha)
    delta = arg.delta_at_least_zero(delta)
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
        in_sorted, out_sorted = _sorted_sides(selection_half)
        all_out, all_in = _candidate_cuts(selection_half, in_sorted, out_sorted, guessing, grid_size, guess_rules)
        r, v = _guess_tallies(in_sorted, out_sorted, all_out, all_in)
        best, _ = _best(alpha, delta, r, v, in_sorted.size + out_sorted.size, analysis)
        out_cuts, in_cuts = all_out[best : best + 1], all_in[best : best + 1]
        num_hypotheses, significance = 1, alpha
    else:
        in_sorted, out_sorted = _sorted_sides(scores)
        out_cuts, in_cuts = _candidate_cuts(scores, in_sorted, out_sorted, guessing, grid_size, guess_rules)
        num_hypotheses = in_cuts.size if strategy == "bonferroni" else 1
        significance = alpha / num_hypotheses

    if strategy in ("explicit", "split"):
        in_sorted, out_sorted = _sorted_sides(evaluated)
    m = evaluated.num_in + evaluated.num_out
    r, v = _guess_tallies(in_sorted, out_sorted, out_cuts, in_cuts)
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
