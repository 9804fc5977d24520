"""Membership-inference metrics from IN/OUT scores: ROC, AUC, TPR at low FPR, advantage, accuracy.

Two conventions of the community are offered wherever they differ, by name:

* ``convention="deterministic"`` (default; scikit-learn, LiRA's ``plot.py``):
  the ROC of the deterministic rules "IN if score >= t" at every distinct score.
  AUC is the trapezoidal area under it, which equals the Mann–Whitney statistic
  P[IN score > OUT score] + ½ P[tie] (``sklearn.metrics.roc_auc_score``). TPR at
  a target FPR is the largest TPR among the rules with FPR <= target (LiRA's
  ``tpr[where(fpr < target)[-1]]`` up to the strict inequality).
* ``convention="hull"`` (google-deepmind/jax_privacy ``CanaryScoreAuditor``):
  rules may randomise between two thresholds, so the ROC is its upper convex
  hull (the Pareto frontier of jax_privacy's ``_get_tn_fn_counts``). AUC is the
  area under the hull (``attack_auroc``) and TPR at a target FPR is interpolated
  linearly along it (``tpr_at_given_fpr``). A hull AUC is never below ½.

Resolution. With n_out OUT scores the smallest positive FPR a rule can have is
1/n_out. Below it the deterministic TPR is the TPR at FPR = 0, not a measurement
at the target; :class:`MiaMetrics` records ``fpr_resolution`` and ``unresolved``
so that reports print "n/a" there (:meth:`MiaMetrics.tpr_text`).

Speed. Everything comes from one sort of each side and a linear merge of the two
sorted runs; the hull from repeated vectorised removal of non-convex corners
with exact integer turn tests; no loop over scores. The values agree with scikit-learn's
``roc_curve`` / ``roc_auc_score`` (tested), which are 15–25 times slower
(an argsort of the pooled scores), so they are not called here.

These are descriptive statistics of the attack, not privacy bounds.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from dpmech import validation as check

from . import _arguments as arg

CONVENTIONS = ("deterministic", "hull")
REPORTED_FPRS = (1e-3, 1e-2)


class RocCounts(NamedTuple):
    """Counts of the rules "IN if oriented score >= t" at every distinct score, from t = +inf (0, 0)."""

    false_positives: np.ndarray
    true_positives: np.ndarray
    oriented_thresholds: np.ndarray
    num_in: int
    num_out: int


def roc_counts(scores) -> RocCounts:
    """FP and TP counts of every deterministic threshold rule, in decreasing threshold order."""
    scores = arg.audit_scores(scores)
    in_oriented, out_oriented = scores.oriented()
    merged = np.concatenate([np.sort(in_oriented), np.sort(out_oriented)])
    # Two sorted runs: the stable sort (timsort) merges them in linear time.
    order = np.argsort(merged, kind="stable")[::-1]
    values = merged[order]
    true_positives = np.cumsum(order < in_oriented.size)
    # The last element of each tie group: a rule cannot separate tied scores.
    group_end = np.flatnonzero(np.r_[values[1:] != values[:-1], True])
    tp = np.r_[0, true_positives[group_end]]
    fp = np.r_[0, group_end + 1 - true_positives[group_end]]
    return RocCounts(fp, tp, np.r_[np.inf, values[group_end]], in_oriented.size, out_oriented.size)


def hull_indices(counts: RocCounts) -> np.ndarray:
    """Indices of the ROC points on its upper convex hull, by increasing FPR (collinear points dropped).

    A point on or below the chord between its two neighbours is on or below
    the hull, so it is no vertex; removing every such point at once and
    repeating until none is left leaves the hull's vertices. The turn test is
    an exact integer cross product of the counts.
    """
    fp, tp = counts.false_positives, counts.true_positives
    # Besides the end points, only corners reached by an upward step and left by a rightward one can be vertices.
    kept = np.flatnonzero(np.r_[True, (np.diff(tp[:-1]) > 0) & (np.diff(fp[1:]) > 0), True])
    while kept.size > 2:
        x, y = fp[kept], tp[kept]
        cross = (x[1:-1] - x[:-2]) * (y[2:] - y[:-2]) - (y[1:-1] - y[:-2]) * (x[2:] - x[:-2])
        below = cross >= 0
        if not below.any():
            break
        kept = kept[np.r_[True, ~below, True]]
    return kept


def roc_curve(scores, *, convention: str = "deterministic") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(fpr, tpr, thresholds) of "IN if score >= t" over every distinct score, from (0, 0) at t = +inf.

    Thresholds are in the caller's units; for ``higher_is_in=False`` the rule
    reads "IN if score <= t". With ``convention="hull"`` only the vertices of
    the upper convex hull are returned (points between two of them are reached
    by randomising between their thresholds).
    """
    convention = check.choice("convention", convention, CONVENTIONS)
    scores = arg.audit_scores(scores)
    counts = roc_counts(scores)
    index = hull_indices(counts) if convention == "hull" else slice(None)
    thresholds = counts.oriented_thresholds[index]
    if not scores.higher_is_in:
        thresholds = -thresholds
    return counts.false_positives[index] / counts.num_out, counts.true_positives[index] / counts.num_in, thresholds


def _auc(counts: RocCounts, index) -> float:
    fp, tp = counts.false_positives[index], counts.true_positives[index]
    # Exact in int64: the doubled area is at most 2·n_in·n_out.
    return float(np.dot(tp[1:] + tp[:-1], np.diff(fp)) / (2.0 * counts.num_in * counts.num_out))


def _largest_count_at_most(rate, total: int) -> np.ndarray:
    """Largest integer k with k / total <= rate (as the float comparison reads), for an array of rates."""
    k = np.floor(np.asarray(rate, dtype=float) * total)
    k = np.where((k + 1) / total <= rate, k + 1, k)
    return np.where(k / total > rate, k - 1, k)


def _tpr_at(counts: RocCounts, index, convention: str, target) -> np.ndarray:
    fp, tp = counts.false_positives[index], counts.true_positives[index]
    if convention == "deterministic":
        # fp and tp are nondecreasing along the curve, so the last admissible point has the largest TPR.
        last = np.searchsorted(fp, _largest_count_at_most(target, counts.num_out), side="right") - 1
        return tp[last] / counts.num_in
    fpr, tpr = fp / counts.num_out, tp / counts.num_in
    # On the hull, FPR = 0 may hold at two vertices; the upper one is the TPR at FPR 0.
    distinct = np.r_[fpr[1:] != fpr[:-1], True]
    return np.interp(target, fpr[distinct], tpr[distinct])


def auc(scores, *, convention: str = "deterministic") -> float:
    """Area under the ROC: Mann–Whitney P[IN > OUT] + ½ P[tie] ("deterministic") or under its convex hull ("hull")."""
    convention = check.choice("convention", convention, CONVENTIONS)
    counts = roc_counts(scores)
    return _auc(counts, hull_indices(counts) if convention == "hull" else slice(None))


def tpr_at_fpr(scores, fpr, *, convention: str = "deterministic"):
    """TPR at FPR <= ``fpr`` (scalar or array in [0, 1]): best deterministic rule, or interpolated on the hull.

    Below :func:`fpr_resolution` the deterministic answer is the TPR at FPR = 0.
    """
    target = check.in_interval("fpr", fpr, 0.0, 1.0, low_open=False, high_open=False)
    convention = check.choice("convention", convention, CONVENTIONS)
    counts = roc_counts(scores)
    index = hull_indices(counts) if convention == "hull" else slice(None)
    return check.scalar_or_array(np.asarray(_tpr_at(counts, index, convention, target), dtype=float))


def fpr_resolution(scores) -> float:
    """1 / n_out: the smallest positive FPR a threshold rule can have on these scores."""
    return 1.0 / arg.audit_scores(scores).num_out


def advantage(scores) -> float:
    """Membership advantage max_t (TPR − FPR) >= 0 (Yeom et al. 2018); the same on the hull (a vertex attains it)."""
    return _advantage(roc_counts(scores))


def _advantage(counts: RocCounts) -> float:
    # Exact in int64: max (TP·n_out − FP·n_in) / (n_in·n_out).
    gap = counts.true_positives * counts.num_out - counts.false_positives * counts.num_in
    return float(np.max(gap) / (counts.num_in * counts.num_out))


@dataclasses.dataclass(frozen=True)
class MiaMetrics:
    """Standard MIA summary: AUC, TPR at 0.1% and 1% FPR, advantage, under one ``convention``.

    Attributes:
        auc: area under the ROC (or its hull).
        tpr_at_0_1_percent_fpr, tpr_at_1_percent_fpr: TPR at those FPRs; when
            the target is below ``fpr_resolution`` this is the TPR at FPR = 0
            (deterministic) or an interpolation towards it (hull), not a
            measurement at the target: see ``unresolved``.
        advantage: max (TPR − FPR).
        fpr_resolution: 1 / n_out; the reported targets below it are ``unresolved``.

    Every field is a number, so that reports can format them alike.
    """

    auc: float
    tpr_at_0_1_percent_fpr: float
    tpr_at_1_percent_fpr: float
    advantage: float
    fpr_resolution: float

    @property
    def unresolved(self) -> tuple:
        """The reported FPR targets (0.1%, 1%) below ``fpr_resolution``: their TPR is not a measurement there."""
        return tuple(f for f in REPORTED_FPRS if f < self.fpr_resolution)

    def tpr_text(self, fpr: float, digits: int = 3) -> str:
        """The TPR at 0.1% or 1% FPR for a report, or "n/a (FPR resolution 1/n_out = …)" below the resolution."""
        values = {REPORTED_FPRS[0]: self.tpr_at_0_1_percent_fpr, REPORTED_FPRS[1]: self.tpr_at_1_percent_fpr}
        if fpr not in values:
            raise ValueError(f"fpr must be one of {REPORTED_FPRS} (got {fpr!r})")
        if fpr in self.unresolved:
            return f"n/a (FPR resolution {self.fpr_resolution:.3g})"
        return f"{values[fpr]:.{digits}f}"


def mia_metrics(scores, *, convention: str = "deterministic") -> MiaMetrics:
    """AUC, TPR at 0.1% and at 1% FPR, advantage and the FPR resolution, from one ROC."""
    convention = check.choice("convention", convention, CONVENTIONS)
    scores = arg.audit_scores(scores)
    counts = roc_counts(scores)
    index = hull_indices(counts) if convention == "hull" else slice(None)
    at = _tpr_at(counts, index, convention, np.array(REPORTED_FPRS))
    return MiaMetrics(
        auc=_auc(counts, index),
        tpr_at_0_1_percent_fpr=float(at[0]),
        tpr_at_1_percent_fpr=float(at[1]),
        advantage=_advantage(counts),
        fpr_resolution=1.0 / counts.num_out,
    )


def max_accuracy(scores, *, prevalence: float | None = None, alpha: float | None = None) -> float:
    """Best accuracy prevalence·TPR + (1 − prevalence)·TNR of a threshold rule, or its upper confidence bound.

    jax_privacy's ``max_accuracy``: over the vertices of the ROC hull (a linear
    objective is maximised at one), with ``prevalence`` the share of IN examples
    (default n_in / (n_in + n_out)). With ``alpha`` in (0, 1), TPR and TNR are
    replaced by Clopper–Pearson upper bounds at α/2 each: an upper bound at level
    1 − α for a threshold fixed in advance; maximised over the data-chosen hull,
    as there, it has no coverage guarantee and is a descriptive statistic.
    """
    from dpmech.verify import clopper_pearson_upper

    counts = roc_counts(scores)
    if prevalence is None:
        prevalence = counts.num_in / (counts.num_in + counts.num_out)
    prevalence = float(check.in_interval("prevalence", prevalence, 0.0, 1.0, low_open=False, high_open=False))
    hull = hull_indices(counts)
    true_positives = counts.true_positives[hull].astype(float)
    true_negatives = counts.num_out - counts.false_positives[hull].astype(float)
    if alpha is None:
        tpr, tnr = true_positives / counts.num_in, true_negatives / counts.num_out
    else:
        alpha = check.in_interval("alpha", alpha, 0.0, 1.0, low_open=True, high_open=True)
        tpr = np.asarray(clopper_pearson_upper(true_positives, float(counts.num_in), alpha / 2))
        tnr = np.asarray(clopper_pearson_upper(true_negatives, float(counts.num_out), alpha / 2))
    return float(np.max(prevalence * tpr + (1.0 - prevalence) * tnr))
