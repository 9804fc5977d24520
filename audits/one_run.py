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

Numerics. The window sums of the binomial pmf are exact sums of positive
terms (reverse cumulative sums); pmf terms more than 40 standard deviations
below the mean are not summed and their total mass, P[Bin(r, q) < lower],
is added to the maximum instead, so the p-value is never understated. ε is
found by bracketing and ``scipy.optimize.brentq``, and the returned ε_lb is
checked to satisfy p(ε_lb, δ) < α'. This relies on p being nondecreasing in ε,
which the first term always is (binomial stochastic order); the tests check the
whole expression on a grid.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special, stats

from dpmech import validation as check

from . import _arguments as arg
from .result import CERTIFIED, ESTIMATE, AuditResult
from .scores import NATURAL_TRIALS_NOTE

GUESSING = ("one-sided", "two-sided")
DEFAULT_NUM_GUESS_COUNTS = 10
_WINDOW_SDS = 40.0
_XTOL = 1e-10
_EPSILON_CAP = 700.0


def _p_value(epsilon: float, delta: float, num_guesses: int, num_correct: int, num_canaries: int) -> float:
    r, v = num_guesses, num_correct
    if v == 0:
        return 1.0
    q = float(special.expit(epsilon))
    tail = float(stats.binom.sf(v - 1, r, q))
    if delta == 0.0:
        return min(1.0, tail)
    spread = _WINDOW_SDS * math.sqrt(r * q * (1.0 - q)) + 1.0
    lower = max(0, int(math.floor(r * q - spread)))
    lower = min(lower, v - 1)
    pmf_desc = stats.binom.pmf(np.arange(v - 1, lower - 1, -1), r, q)
    window_average = np.cumsum(pmf_desc) / np.arange(1, pmf_desc.size + 1)
    unsummed = float(stats.binom.cdf(lower - 1, r, q)) if lower > 0 else 0.0
    alpha_max = float(window_average.max()) + unsummed
    return min(1.0, tail + alpha_max * delta * 2.0 * num_canaries)


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


def _epsilon_for_counts(significance: float, delta: float, r: int, v: int, m: int) -> float:
    """sup{ε : p(ε) < significance}, 0 when even ε = 0 is not rejected."""
    if r == 0 or _p_value(0.0, delta, r, v, m) >= significance:
        return 0.0
    low, high = 0.0, 1.0
    while _p_value(high, delta, r, v, m) < significance:
        low, high = high, 2.0 * high
        if high > _EPSILON_CAP:
            return low
    root = optimize.brentq(lambda e: _p_value(e, delta, r, v, m) - significance, low, high, xtol=_XTOL)
    epsilon = max(root - 2.0 * _XTOL, low)
    while epsilon > low and _p_value(epsilon, delta, r, v, m) >= significance:
        epsilon = max(epsilon - 1e-6 * max(epsilon, 1.0), low)
    return epsilon


def _guess_counts(num_canaries: int, guessing: str, num_guess_counts: int) -> np.ndarray:
    largest = num_canaries if guessing == "one-sided" else num_canaries // 2
    if largest < 1:
        raise ValueError(f"two-sided guessing needs at least 2 canaries (got {num_canaries})")
    return np.unique(np.round(np.geomspace(1, largest, num_guess_counts)).astype(np.int64))


def _cuts_from_counts(pooled_sorted: np.ndarray, counts: np.ndarray, guessing: str):
    m = pooled_sorted.size
    in_cuts = np.where(counts < m, pooled_sorted[np.clip(m - 1 - counts, 0, m - 1)], -np.inf)
    if guessing == "one-sided":
        out_cuts = np.full(counts.size, -np.inf)
    else:
        out_cuts = pooled_sorted[np.clip(counts, 0, m - 1)]
    return out_cuts, in_cuts


def _guess_tallies(in_oriented, out_oriented, out_cuts, in_cuts):
    """(r, v) of "IN if score > in_cut, OUT if score < out_cut" for arrays of cuts."""
    in_sorted, out_sorted = np.sort(in_oriented), np.sort(out_oriented)
    in_above = in_sorted.size - np.searchsorted(in_sorted, in_cuts, side="right")
    out_above = out_sorted.size - np.searchsorted(out_sorted, in_cuts, side="right")
    in_below = np.searchsorted(in_sorted, out_cuts, side="left")
    out_below = np.searchsorted(out_sorted, out_cuts, side="left")
    return in_above + out_above + in_below + out_below, in_above + out_below


def _best(significance, delta, r, v, m):
    epsilons = np.array([_epsilon_for_counts(significance, delta, int(a), int(b), m) for a, b in zip(r, v)])
    return int(np.argmax(epsilons)), epsilons


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

    Returns:
        :class:`~audits.result.AuditResult` with ``method="one-run"``; counts hold
        guesses r, correct v and canaries m.
    """
    scores = arg.audit_scores(scores)
    alpha = arg.significance(alpha)
    delta = arg.delta_at_least_zero(delta)
    guessing = check.choice("guessing", guessing, GUESSING)
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
        in_oriented, out_oriented = selection_half.oriented()
        pooled = np.sort(np.concatenate([in_oriented, out_oriented]))
        counts = _guess_counts(pooled.size, guessing, grid_size)
        all_out, all_in = _cuts_from_counts(pooled, counts, guessing)
        r, v = _guess_tallies(in_oriented, out_oriented, all_out, all_in)
        best, _ = _best(alpha, delta, r, v, pooled.size)
        out_cuts, in_cuts = all_out[best : best + 1], all_in[best : best + 1]
        num_hypotheses, significance = 1, alpha
    else:
        in_oriented, out_oriented = scores.oriented()
        pooled = np.sort(np.concatenate([in_oriented, out_oriented]))
        counts = _guess_counts(pooled.size, guessing, grid_size)
        out_cuts, in_cuts = _cuts_from_counts(pooled, counts, guessing)
        num_hypotheses = counts.size if strategy == "bonferroni" else 1
        significance = alpha / num_hypotheses

    in_oriented, out_oriented = evaluated.oriented()
    m = evaluated.num_in + evaluated.num_out
    r, v = _guess_tallies(in_oriented, out_oriented, out_cuts, in_cuts)
    best, epsilons = _best(significance, delta, r, v, m)
    sign = 1.0 if scores.higher_is_in else -1.0
    rule = (
        "IN if score > in_cut, OUT if score < out_cut, else abstain"
        if scores.higher_is_in
        else "IN if score < in_cut, OUT if score > out_cut, else abstain"
    )
    return AuditResult(
        eps_lb=float(epsilons[best]),
        delta=delta,
        alpha=alpha,
        method="one-run",
        thresholds=(sign * out_cuts[best], sign * in_cuts[best]),
        counts={"guesses": int(r[best]), "correct": int(v[best]), "canaries": int(m)},
        assumption=(
            "One run; every canary included independently with probability 1/2; guesses depend on the "
            "output only (thresholds as threshold_strategy states); (ε, δ)-DP with respect to each canary."
        ) + ("" if scores.independent_trials else " " + NATURAL_TRIALS_NOTE),
        valid_as=CERTIFIED if strategy != "uncorrected" and scores.independent_trials else ESTIMATE,
        threshold_strategy=strategy,
        decision_rule=rule,
        num_hypotheses=num_hypotheses,
    )
