r"""Threshold selection with a sound multiple-testing budget, shared by the CP, Jeffreys and GDP estimators.

Every attack here is a threshold rule on the oriented score (higher means IN):
"IN if score > c". At a rule, FP = #{OUT > c} and FN = #{IN <= c}; an estimator
turns upper confidence bounds FPR_ub, FNR_ub into a bound on ε or μ.

Why the candidate set is indexed by OUT ranks. Choosing thresholds *at the
observed scores* and dividing α by their number (as jax_privacy's Bonferroni
does over its data-dependent Pareto frontier) is not justified by the plain
union bound, because the set of hypotheses is itself random. Here the candidates are
fixed in advance as ranks: level k in a set K that depends only on n_out uses
:math:`c_k = X_{(k+1)}`, the (k+1)-th largest OUT score (the most permissive
rule with at most k false positives). Then, for each k:

* :math:`P[\mathrm{OUT} > X_{(k+1)}]` is distributed as the (k+1)-th smallest of
  n_out uniforms, Beta(k + 1, n_out − k), for continuous scores and is
  stochastically smaller with ties, so ``FPR_ub = CP_up(k, n_out, a)`` =
  ``Beta.ppf(1 − a; k + 1, n_out − k)`` fails with probability at most a;
* :math:`c_k` depends on OUT scores only, so given it FN ~ Binomial(n_in, FNR(c_k))
  and ``FNR_ub = CP_up(FN, n_in, a)`` fails with probability at most a.

With 2|K| events per rule direction, a = α / (2 |K| D) (D = 1 or 2 directions)
makes every bound hold at once with probability >= 1 − α ("bonferroni"). The
level set K is geometric in the rank from both ends (small FPR and small TNR),
``num_thresholds`` levels at most (default 50), all ranks when n_out is smaller.

"split" picks the level and direction on a random half with the uncorrected
bounds and evaluates that single fixed threshold on the other half (a = α/2).
"explicit" evaluates caller-given thresholds, fixed before seeing the data
(a = α / (2 T D)). "uncorrected" takes the best level with a = α/2 and then
searches every rank between that level's neighbours (the search costs no α
there, as in jax_privacy's search over every threshold); it is only an estimate.

A finer grid does not help the certified strategies much: for GDP-shaped scores
μ(t) is the same at every threshold and the confidence width in μ varies slowly
with the FPR (by 4% between FPR 0.32 and 0.5), so the gap to the true μ is the
price of α/(2|K|D), not of the grid (measured: doubling or symmetrising K
changed μ_lb/μ by less than 0.5% at μ = 0.3–2, N = 10⁴–10⁵).
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np

from dpmech import validation as check
from dpmech.statistics import clopper_pearson_upper

from . import intervals
from .result import CERTIFIED, ESTIMATE
from .scores import AuditScores

THRESHOLD_STRATEGIES = ("bonferroni", "split", "explicit", "uncorrected")
INTERVALS = ("clopper-pearson", "jeffreys")
DEFAULT_NUM_THRESHOLDS = 50


class Selection(NamedTuple):
    """The chosen rule and the bounds behind it."""

    value: float
    threshold: float
    decision_rule: str
    counts: dict
    num_hypotheses: int
    fpr_ub: float
    fnr_ub: float
    valid_as: str


def rank_levels(num_out: int, num_thresholds: int) -> np.ndarray:
    """FP-count levels k, a function of n_out only: geometric in k and in n_out − 1 − k."""
    if num_out <= num_thresholds:
        return np.arange(num_out)
    per_end = max(num_thresholds // 2, 1)
    steps = np.unique(np.round(np.geomspace(1, num_out, per_end)).astype(np.int64))
    levels = np.unique(np.concatenate([steps - 1, num_out - steps]))
    # Rounding can merge ranks; drop from the middle, where levels matter least, to keep the count.
    while levels.size > num_thresholds:
        levels = np.delete(levels, levels.size // 2)
    return levels


def _rule_text(sign: int) -> str:
    return "IN if score > t" if sign > 0 else "IN if score < t"


def _upper(interval: str, successes, trials, a):
    if a == 0.0:  # α split over the hypotheses underflows: an upper bound at level 0 is 1
        return np.ones(np.shape(successes))
    if interval == "jeffreys":
        return np.asarray(intervals.jeffreys_upper(successes, trials, a), dtype=float)
    return np.asarray(clopper_pearson_upper(np.asarray(successes, dtype=float), float(trials), a), dtype=float)


def sorted_sides(scores: AuditScores) -> tuple[np.ndarray, np.ndarray]:
    """(IN, OUT) oriented scores, each sorted: the one sort every direction and level reuses."""
    in_oriented, out_oriented = scores.oriented()
    return np.sort(in_oriented), np.sort(out_oriented)


def _directed(sides, sign: int):
    """The sorted sides on the scale of direction ``sign``: negating reverses the order, so no new sort."""
    if sign > 0:
        return sides
    return tuple(-side[::-1] for side in sides)


def level_candidates(in_sorted, out_sorted, levels):
    """Cuts c_k = (k+1)-th largest OUT score and the FP, FN counts of "IN if score > c_k"."""
    cuts = out_sorted[out_sorted.size - 1 - levels]
    false_positives, false_negatives = _fixed_cut_counts(in_sorted, out_sorted, cuts)
    return cuts, false_positives, false_negatives


def _fixed_cut_counts(in_sorted, out_sorted, cuts):
    false_positives = out_sorted.size - np.searchsorted(out_sorted, cuts, side="right")
    false_negatives = np.searchsorted(in_sorted, cuts, side="right")
    return false_positives, false_negatives


def _directions(two_directions: bool):
    return (1, -1) if two_directions else (1,)


def _pick(values, cuts, signs, fp, fn, fpr_ub, fnr_ub, scores, num_in, num_out, num_hypotheses, valid_as):
    best = int(np.nanargmax(values)) if np.any(np.isfinite(values)) else 0
    sign = int(signs[best])
    # cut is on the direction-oriented scale; the rule's threshold in the caller's units (+ 0.0: never "-0.0",
    # which a tie between 0.0 and -0.0 in the sort could otherwise pick):
    original = scores.to_original_units(sign * cuts[best]) + 0.0
    overall_sign = sign * (1 if scores.higher_is_in else -1)
    counts = {
        "TP": int(num_in - fn[best]),
        "FP": int(fp[best]),
        "TN": int(num_out - fp[best]),
        "FN": int(fn[best]),
    }
    return Selection(
        float(values[best]), original, _rule_text(overall_sign), counts, num_hypotheses,
        float(fpr_ub[best]), float(fnr_ub[best]), valid_as,
    )


def _all_levels(scores, sides, directions, interval, a, num_thresholds, objective, levels=None):
    """Objective at every (direction, level) with bounds at significance a each; ``sides`` from sorted_sides."""
    if levels is None:
        levels = rank_levels(scores.num_out, num_thresholds)
    parts = []
    for sign in directions:
        cuts, fp, fn = level_candidates(*_directed(sides, sign), levels)
        fp_for_bound = levels if interval == "clopper-pearson" else fp
        fpr_ub = _upper(interval, fp_for_bound, scores.num_out, a)
        fnr_ub = _upper(interval, fn, scores.num_in, a)
        parts.append((cuts, np.full(levels.size, sign), fp, fn, fpr_ub, fnr_ub))
    cuts, signs, fp, fn, fpr_ub, fnr_ub = (np.concatenate(column) for column in zip(*parts))
    return objective(fpr_ub, fnr_ub), cuts, signs, fp, fn, fpr_ub, fnr_ub, levels.size


def _refined(scores, sides, interval, a, num_thresholds, objective, *candidates):
    """The candidates plus every rank between the neighbours of the best grid level, in its direction."""
    values, _, signs = candidates[:3]
    if not np.any(np.isfinite(values)):
        return candidates
    best = int(np.nanargmax(values))
    levels = rank_levels(scores.num_out, num_thresholds)
    position = best % levels.size
    low, high = levels[max(position - 1, 0)], levels[min(position + 1, levels.size - 1)]
    finer = _all_levels(scores, sides, (int(signs[best]),), interval, a, num_thresholds, objective,
                        levels=np.arange(low, high + 1))
    return tuple(np.concatenate([old, new]) for old, new in zip(candidates, finer[:7]))


def select_and_bound(
    scores: AuditScores,
    *,
    alpha: float,
    strategy: str,
    two_directions: bool,
    interval: str,
    thresholds,
    rng,
    num_thresholds: int,
    objective: Callable[[np.ndarray, np.ndarray], np.ndarray],
) -> Selection:
    """Apply a threshold strategy and return the rule maximising ``objective(FPR_ub, FNR_ub)``.

    The label ``valid_as`` is "certified" for bonferroni, split and explicit
    with Clopper–Pearson bounds on scores declared ``trials="independent"``,
    and "estimate" for Jeffreys, "uncorrected" or natural trials.
    """
    directions = _directions(two_directions)
    certified_interval = interval == "clopper-pearson" and scores.independent_trials
    if strategy != "explicit" and thresholds is not None:
        raise ValueError(f"thresholds is only used with threshold_strategy='explicit' (got {strategy!r})")
    if strategy != "split" and rng is not None:
        raise ValueError(f"rng is only used with threshold_strategy='split' (got {strategy!r})")

    if strategy in ("bonferroni", "uncorrected"):
        levels_count = rank_levels(scores.num_out, num_thresholds).size
        num_hypotheses = 2 * levels_count * len(directions) if strategy == "bonferroni" else 2
        a = alpha / num_hypotheses
        sides = sorted_sides(scores)
        values, cuts, signs, fp, fn, fpr_ub, fnr_ub, _ = _all_levels(
            scores, sides, directions, interval, a, num_thresholds, objective
        )
        if strategy == "uncorrected":
            # No α is spent on the search, so search every rank between the best level's neighbours.
            values, cuts, signs, fp, fn, fpr_ub, fnr_ub = _refined(
                scores, sides, interval, a, num_thresholds, objective, values, cuts, signs, fp, fn, fpr_ub, fnr_ub
            )
        valid = CERTIFIED if strategy == "bonferroni" and certified_interval else ESTIMATE
        return _pick(values, cuts, signs, fp, fn, fpr_ub, fnr_ub, scores, scores.num_in, scores.num_out,
                     num_hypotheses, valid)

    if strategy == "explicit":
        if thresholds is None:
            raise ValueError("thresholds must be given (a non-empty 1-D array) with threshold_strategy='explicit'")
        given = np.atleast_1d(np.asarray(check.real_at_least("thresholds", thresholds, -np.inf), dtype=float))
        if given.ndim != 1 or given.size == 0 or not np.all(np.isfinite(given)):
            raise ValueError(f"thresholds must be a non-empty 1-D array of finite numbers (got {thresholds!r})")
        oriented_cuts = given if scores.higher_is_in else -given
        num_hypotheses = 2 * given.size * len(directions)
        a = alpha / num_hypotheses
        sides = sorted_sides(scores)
        parts = []
        for sign in directions:
            cuts = sign * oriented_cuts
            fp, fn = _fixed_cut_counts(*_directed(sides, sign), cuts)
            parts.append((cuts, np.full(cuts.size, sign), fp, fn,
                          _upper(interval, fp, scores.num_out, a), _upper(interval, fn, scores.num_in, a)))
        cuts, signs, fp, fn, fpr_ub, fnr_ub = (np.concatenate(column) for column in zip(*parts))
        valid = CERTIFIED if certified_interval else ESTIMATE
        return _pick(objective(fpr_ub, fnr_ub), cuts, signs, fp, fn, fpr_ub, fnr_ub, scores, scores.num_in,
                     scores.num_out, num_hypotheses, valid)

    # strategy == "split": choose on one half (any rule may choose), certify on the other.
    selection_half, evaluation_half = scores.split(rng)
    values, cuts, signs, *_ = _all_levels(selection_half, sorted_sides(selection_half), directions, interval,
                                          alpha / 2, num_thresholds, objective)
    best = int(np.nanargmax(values)) if np.any(np.isfinite(values)) else 0
    sign, cut = int(signs[best]), float(cuts[best])
    fp, fn = _fixed_cut_counts(*_directed(sorted_sides(evaluation_half), sign), np.array([cut]))
    a = alpha / 2
    fpr_ub = _upper(interval, fp, evaluation_half.num_out, a)
    fnr_ub = _upper(interval, fn, evaluation_half.num_in, a)
    valid = CERTIFIED if certified_interval else ESTIMATE
    return _pick(objective(fpr_ub, fnr_ub), np.array([cut]), np.array([sign]), fp, fn, fpr_ub, fnr_ub,
                 evaluation_half, evaluation_half.num_in, evaluation_half.num_out, 2, valid)
