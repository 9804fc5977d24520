r"""(ε, δ) lower bound from attack error rates (Jagielski, Ullman & Oprea 2020, with the δ term).

If a mechanism is (ε, δ)-DP, every test between neighbouring datasets D, D'
(add/remove-one or replace-one: the bound is the same, only the audited
mechanism's claimed ε changes with the relation) satisfies both

.. math::
    \mathrm{TPR} \le e^{\varepsilon}\,\mathrm{FPR} + \delta, \qquad
    \mathrm{TNR} \le e^{\varepsilon}\,\mathrm{FNR} + \delta

(Kairouz, Oh & Viswanath 2015). With upper confidence bounds FPR_ub, FNR_ub
that hold simultaneously with probability >= 1 − α,

.. math::
    \varepsilon_{lb} = \max\Big(\log(1 - \delta - \mathrm{FNR_{ub}}) - \log \mathrm{FPR_{ub}},\;
                             \log(1 - \delta - \mathrm{FPR_{ub}}) - \log \mathrm{FNR_{ub}},\; 0\Big)

is a lower bound on ε with confidence 1 − α: the TPR/FPR test and the
complementary TNR/FNR test at the same threshold use the same two bounds, so
they cost no extra α. This is the symmetric form of Andrew et al. 2024
(``one_shot_epe._epsilon_lower_bound``) and of jax_privacy.

Corrections to the seed code: the original Jagielski et al. code
(jagielski/auditing-dpsgd ``code/audit.py``) has no δ term and takes the
maximum over all thresholds chosen on the same data without a multiple-testing
correction; that maximum is available here only as
``threshold_strategy="uncorrected"`` and is labelled an estimate.
Group privacy (dividing by the number of poisoned points) is not applied.
"""

from __future__ import annotations

import numpy as np

from dpmech import validation as check

from . import _arguments as arg
from .result import ESTIMATE, AuditResult
from .scores import NATURAL_TRIALS_NOTE
from .thresholds import select_and_bound


def privacy_region_boundary(fpr, epsilon, delta):
    """Largest TPR an (ε, δ)-DP mechanism allows at each FPR (Kairouz, Oh & Viswanath 2015)."""
    fpr = np.asarray(fpr, dtype=float)
    return np.clip(np.minimum(np.exp(epsilon) * fpr + delta, 1.0 - np.exp(-epsilon) * (1.0 - delta - fpr)), 0.0, 1.0)

_ASSUMPTION = (
    "IN and OUT scores are independent draws: every IN score from the mechanism run on D∪{canary} "
    "(or D'), every OUT score from the run on D, each trial independent; thresholds chosen as "
    "the threshold_strategy states. No assumption on the shape of the privacy curve."
)


def epsilon_from_error_rates(fpr, fnr, delta: float = 0.0, complement: bool = True) -> np.ndarray:
    """The ε an (ε, δ) claim must exceed for a test with these error rates (the one home of this formula).

    ``log(1 − δ − FNR) − log FPR`` (the rule's TPR/FPR inequality) and, when
    ``complement``, ``log(1 − δ − FPR) − log FNR`` (its TNR/FNR inequality), the
    larger of the two; −inf where neither is defined (1 − δ − rate <= 0).
    Kairouz, Oh & Viswanath 2015. With upper confidence bounds plugged in for
    the rates this is a lower confidence bound on ε; with the observed rates it
    is a point estimate (jax_privacy's ``epsilon_raw_counts``). Broadcasts.
    """
    fpr, fnr = np.asarray(fpr, dtype=float), np.asarray(fnr, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.log(1.0 - delta - fnr) - np.log(fpr)
        if complement:
            value = np.fmax(value, np.log(1.0 - delta - fpr) - np.log(fnr))
    return np.where(np.isnan(value), -np.inf, value)




def epsilon_lower_bound(
    scores,
    *,
    alpha: float = 0.05,
    delta: float = 0.0,
    interval: str = "clopper-pearson",
    threshold_strategy: str = "bonferroni",
    thresholds=None,
    two_sided: bool = False,
    rng=None,
    num_thresholds: int | None = None,
    complement: bool = True,
) -> AuditResult:
    """Lower bound on ε at the given δ from Clopper–Pearson (or Jeffreys) bounds on FPR and FNR.

    Args:
        scores: an :class:`~audits.scores.AuditScores`.
        alpha: significance in (0, 1); the bound fails with probability <= alpha
            when ``valid_as == "certified"``.
        delta: δ in [0, 1) of the claim being tested.
        interval: "clopper-pearson" (exact coverage; certified) or "jeffreys"
            (approximate coverage; always an estimate).
        threshold_strategy: "bonferroni" (default; α divided over the 2|K|·D
            rank-indexed candidate events, see :mod:`audits.thresholds`),
            "split" (threshold chosen on a random half drawn with ``rng``,
            evaluated on the other half), "explicit" (``thresholds`` given by
            the caller, rule "IN if score > t" in the caller's orientation) or
            "uncorrected" (maximum over candidates at α/2 each: an estimate).
        thresholds: 1-D thresholds for "explicit" only.
        two_sided: also test the reverse rule (the opposite polarity), under the same α
            (TF-Privacy's ``two_sided_threshold``).
        complement: also use each rule's TNR/FNR inequality (free in α; default).
            ``complement=False`` keeps only TPR/FPR, as jax_privacy's
            ``epsilon_lower_bound(one_sided=True)``.
        rng: ``numpy.random.Generator`` or int seed, for "split" only.
        num_thresholds: size of the rank-indexed candidate set (default 50).

    Returns:
        :class:`~audits.result.AuditResult` with method "clopper-pearson" or "jeffreys".
    """
    scores = arg.audit_scores(scores)
    alpha = arg.significance(alpha)
    delta = arg.delta_at_least_zero(delta)
    interval = arg.interval(interval)
    strategy = arg.strategy(threshold_strategy)
    two_sided = arg.flag("two_sided", two_sided)
    complement = arg.flag("complement", complement)
    selection = select_and_bound(
        scores,
        alpha=alpha,
        strategy=strategy,
        two_directions=two_sided,
        interval=interval,
        thresholds=thresholds,
        rng=rng,
        num_thresholds=arg.num_thresholds(num_thresholds),
        objective=lambda fpr_ub, fnr_ub: epsilon_from_error_rates(fpr_ub, fnr_ub, delta, complement),
    )
    assumption = _ASSUMPTION
    if not scores.independent_trials:
        assumption += " " + NATURAL_TRIALS_NOTE
    if interval == "jeffreys":
        assumption += " Jeffreys bounds have only approximate coverage, so this is an estimate."
    return AuditResult(
        eps_lb=max(selection.value, 0.0),
        delta=delta,
        alpha=alpha,
        method=interval,
        thresholds=(selection.threshold,),
        counts=selection.counts,
        assumption=assumption,
        valid_as=selection.valid_as,
        threshold_strategy=strategy,
        decision_rule=selection.decision_rule,
        num_hypotheses=selection.num_hypotheses,
    )


def _raw_count_side(false_positives, true_positives, num_positive, num_negative, min_count, delta):
    """max log(TPR − δ) − log FPR over hull points with FP >= min_count and the hull point at FPR = min_count/n."""
    if min_count >= num_negative:
        return -np.inf
    fpr, tpr = false_positives / num_negative, true_positives / num_positive
    min_fpr = min_count / num_negative
    distinct = np.r_[fpr[1:] != fpr[:-1], True]
    kept = false_positives >= min_count
    candidates_fpr = np.r_[fpr[kept], min_fpr]
    candidates_tpr = np.r_[tpr[kept], np.interp(min_fpr, fpr[distinct], tpr[distinct])]
    return float(np.max(epsilon_from_error_rates(candidates_fpr, 1.0 - candidates_tpr, delta, complement=False)))


def epsilon_raw_counts(scores, *, min_count: int = 50, delta: float = 0.0, complement: bool = False) -> AuditResult:
    """Point estimate of ε from raw counts on the ROC convex hull (jax_privacy ``epsilon_raw_counts``); an estimate.

    Over the vertices of the ROC's upper convex hull (:mod:`audits.metrics`,
    ``convention="hull"``) with at least ``min_count`` false positives, and the
    hull point at FPR = min_count / n_out (a rule randomising between two
    thresholds), the estimate is max log(TPR − δ) − log FPR, clipped at 0; with
    ``complement`` the same on the roles of IN and OUT swapped (TNR/FNR, with
    at least ``min_count`` false negatives; jax_privacy's ``one_sided=False``).
    0 when ``min_count`` >= n_out. Too small a ``min_count`` gives a high
    variance, too large a bias towards 0. It is no confidence bound:
    ``valid_as`` is always "estimate".

    Args:
        scores: an :class:`~audits.scores.AuditScores`.
        min_count: integer >= 1 (jax_privacy's default 50; 0 would divide by an FPR of 0).
        delta: δ in [0, 1).
        complement: also the TNR/FNR estimate.
    """
    from . import metrics

    scores = arg.audit_scores(scores)
    min_count = check.integer_scalar("min_count", min_count, 1)
    delta = arg.delta_at_least_zero(delta)
    complement = arg.flag("complement", complement)
    counts = metrics.roc_counts(scores)
    hull = metrics.hull_indices(counts)
    fp, tp = counts.false_positives[hull], counts.true_positives[hull]
    estimate = _raw_count_side(fp, tp, counts.num_in, counts.num_out, min_count, delta)
    if complement:
        # IN and OUT swapped: FN plays FP and TN plays TP; the reflected hull is the swapped problem's hull.
        estimate = max(estimate, _raw_count_side((counts.num_in - tp)[::-1], (counts.num_out - fp)[::-1],
                                                 counts.num_out, counts.num_in, min_count, delta))
    return AuditResult(
        eps_lb=max(estimate, 0.0),
        delta=delta,
        alpha=1.0,
        method="raw-counts",
        thresholds=(),
        counts={"min_count": min_count},
        assumption="A point estimate from observed rates on the ROC hull, with no confidence level (alpha = 1).",
        valid_as=ESTIMATE,
        threshold_strategy="uncorrected",
        decision_rule="IN if score >= t, randomising between two hull thresholds",
        num_hypotheses=0,
    )
