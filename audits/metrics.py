"""Membership-inference metrics from IN/OUT scores: ROC, AUC, TPR at low FPR, advantage.

All are computed from one sort of the pooled scores (no loops over scores).
The ROC uses deterministic rules "IN if score >= t" at every distinct score;
TPR at a target FPR is the largest TPR among those rules with FPR <= target
(no randomised interpolation, the convention of LiRA's ``plot.py``:
``tpr[where(fpr < target)[-1]]`` up to the strict inequality). The advantage
is max_t (TPR − FPR) (Yeom et al. 2018). These are descriptive statistics of
the attack, not privacy bounds.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy import stats

from dpmech import validation as check

from . import _arguments as arg


def roc_curve(scores) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(fpr, tpr, thresholds) of "IN if score >= t" over every distinct score, from (0, 0) at t = +inf.

    Thresholds are in the caller's units; for ``higher_is_in=False`` the rule
    reads "IN if score <= t".
    """
    scores = arg.audit_scores(scores)
    in_oriented, out_oriented = scores.oriented()
    pooled = np.concatenate([in_oriented, out_oriented])
    is_in = np.concatenate([np.ones(in_oriented.size, bool), np.zeros(out_oriented.size, bool)])
    order = np.argsort(-pooled, kind="stable")
    pooled, is_in = pooled[order], is_in[order]
    true_positives = np.cumsum(is_in)
    false_positives = np.arange(1, pooled.size + 1) - true_positives
    # The last element of each tie group: a rule cannot separate tied scores.
    group_end = np.r_[pooled[1:] != pooled[:-1], True]
    tpr = np.r_[0.0, true_positives[group_end] / in_oriented.size]
    fpr = np.r_[0.0, false_positives[group_end] / out_oriented.size]
    thresholds = np.r_[np.inf, pooled[group_end]]
    if not scores.higher_is_in:
        thresholds = -thresholds
    return fpr, tpr, thresholds


def auc(scores) -> float:
    """Area under the ROC: P[IN score > OUT score] + ½ P[tie] (Mann–Whitney U / (n_in n_out))."""
    scores = arg.audit_scores(scores)
    in_oriented, out_oriented = scores.oriented()
    ranks = stats.rankdata(np.concatenate([in_oriented, out_oriented]))
    n_in, n_out = in_oriented.size, out_oriented.size
    u_statistic = ranks[:n_in].sum() - n_in * (n_in + 1) / 2.0
    return float(u_statistic / (n_in * n_out))


def tpr_at_fpr(scores, fpr):
    """Largest TPR over deterministic threshold rules with FPR <= ``fpr`` (scalar or array in [0, 1])."""
    target = check.in_interval("fpr", fpr, 0.0, 1.0, low_open=False, high_open=False)
    roc_fpr, roc_tpr, _ = roc_curve(scores)
    # fpr and tpr are nondecreasing along the curve, so the last admissible point has the largest TPR.
    index = np.searchsorted(roc_fpr, target, side="right") - 1
    return check.scalar_or_array(roc_tpr[index])


def advantage(scores) -> float:
    """Membership advantage max_t (TPR − FPR) >= 0 (Yeom et al. 2018)."""
    roc_fpr, roc_tpr, _ = roc_curve(scores)
    return float(np.max(roc_tpr - roc_fpr))


@dataclasses.dataclass(frozen=True)
class MiaMetrics:
    """Standard MIA summary: AUC, TPR at 0.1% and 1% FPR, advantage."""

    auc: float
    tpr_at_0_1_percent_fpr: float
    tpr_at_1_percent_fpr: float
    advantage: float


def mia_metrics(scores) -> MiaMetrics:
    """AUC, TPR at 0.1% and at 1% FPR, and advantage, from one ROC."""
    scores = arg.audit_scores(scores)
    roc_fpr, roc_tpr, _ = roc_curve(scores)
    at = roc_tpr[np.searchsorted(roc_fpr, np.array([1e-3, 1e-2]), side="right") - 1]
    return MiaMetrics(
        auc=auc(scores),
        tpr_at_0_1_percent_fpr=float(at[0]),
        tpr_at_1_percent_fpr=float(at[1]),
        advantage=float(np.max(roc_tpr - roc_fpr)),
    )
