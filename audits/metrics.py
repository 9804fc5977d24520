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

Speed. The metrics come from one sort of each side and a linear merge of the two
sorted runs (or, when one side is at least 4 times smaller, a binary search of its
scores in the other), which gives, for each IN score, the number of OUT scores below it:
the Mann–Whitney count is their sum plus the cross ties (from the OUT runs' lengths),
the deterministic TPR at an FPR is one binary search per target, and the
advantage and the hull need only the ROC corners where an OUT score separates two
IN scores. The hull is found by repeated vectorised removal of non-convex corners
with exact integer turn tests, after thinning long chains below the hull of a
sample. No loop over scores, and no array of every ROC point unless
:func:`roc_counts` or :func:`roc_curve` asks for one. At 10⁶ scores per side
:func:`mia_metrics` costs about 2.3–2.5 times an ``np.sort`` of the pooled scores
(``benchmarks/audit_statistics.py``). The values agree exactly with brute-force
enumeration and with scikit-learn's ``roc_curve`` (tested); scikit-learn is
15–25 times slower (an argsort of the pooled scores), so it is not called here.

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


class _SortedSides(NamedTuple):
    """Both sides sorted on the oriented scale, and where each IN score falls among the OUT scores."""

    in_sorted: np.ndarray
    out_sorted: np.ndarray
    out_below: np.ndarray  # out_below[i] = #{OUT < in_sorted[i]}, nondecreasing

    @property
    def num_in(self) -> int:
        return self.in_sorted.size

    @property
    def num_out(self) -> int:
        return self.out_sorted.size


def _sorted_sides(scores) -> _SortedSides:
    in_oriented, out_oriented = scores.oriented()
    num_in, num_out = in_oriented.size, out_oriented.size
    if 4 * num_in <= num_out:
        # Few IN scores: one binary search each beats merging all the OUT scores in.
        in_sorted, out_sorted = np.sort(in_oriented), np.sort(out_oriented)
        return _SortedSides(in_sorted, out_sorted, np.searchsorted(out_sorted, in_sorted, side="left"))
    if 4 * num_out <= num_in:
        # Few OUT scores: search them among the IN scores. OUT score j lies below the IN scores from
        # position at_or_below[j] = #{IN <= it} on, so #{OUT < in_sorted[i]} = #{j : at_or_below[j] <= i}.
        in_sorted, out_sorted = np.sort(in_oriented), np.sort(out_oriented)
        at_or_below = np.searchsorted(in_sorted, out_sorted, side="right")
        out_below = np.cumsum(np.bincount(at_or_below, minlength=num_in + 1)[:num_in])
        return _SortedSides(in_sorted, out_sorted, out_below)
    pooled = np.concatenate([in_oriented, out_oriented])
    in_sorted, out_sorted = pooled[:num_in], pooled[num_in:]
    in_sorted.sort()
    out_sorted.sort()
    # A stable sort of two sorted runs of similar length is a linear merge (timsort), as cheap as a
    # binary search per IN score. IN comes first among ties, so IN score i sits at position i + #{OUT < it}.
    order = np.argsort(pooled, kind="stable")
    out_below = np.flatnonzero(order < num_in)
    out_below -= np.arange(num_in)
    return _SortedSides(in_sorted, out_sorted, out_below)


def _roc_corners(sides: _SortedSides) -> tuple[np.ndarray, np.ndarray]:
    """(FP, TP) of the ROC points that can be hull vertices or maximise TPR − FPR, by increasing FPR.

    The rule ">= in_sorted[i]" is reached by an upward step (it catches IN score i); it is left by
    a rightward one only if an OUT score lies in [in_sorted[i − 1], in_sorted[i]), i.e. where
    out_below increases (which also makes i the first of its ties). Every other point lies
    directly below the next corner or on a horizontal run: on or below the hull, and of smaller
    TPR − FPR. The ends (0, 0) and (n_out, n_in) are included.
    """
    below = sides.out_below
    rises = np.empty(below.size, dtype=bool)
    rises[0] = below[0] > 0
    np.greater(below[1:], below[:-1], out=rises[1:])
    corners = np.flatnonzero(rises)[::-1]
    false_positives = np.r_[0, sides.num_out - below[corners], sides.num_out]
    true_positives = np.r_[0, sides.num_in - corners, sides.num_in]
    return false_positives, true_positives


def _remove_non_convex_corners(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Positions of the upper hull's vertices in a chain with nondecreasing x (collinear points dropped).

    A point on or below the chord between its two neighbours is on or below the hull, so it is no
    vertex; removing every such point at once and repeating until none is left leaves the hull's
    vertices, whichever superset of them (with both ends) the chain is. The turn test is an exact
    integer cross product.
    """
    kept = np.arange(x.size)
    while kept.size > 2:
        dx, dy = np.diff(x), np.diff(y)
        below = dx[:-1] * dy[1:] >= dy[:-1] * dx[1:]
        if not below.any():
            break
        keep = np.r_[True, ~below, True]
        kept, x, y = kept[keep], x[keep], y[keep]
    return kept


_HULL_SAMPLE = 4096


def _upper_hull(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Positions of the upper-hull vertices of a chain of integer points, x nondecreasing and increasing after x[1].

    Long chains are first thinned: a point strictly below the hull of a sample of the chain is below
    a chord of two chain points, so it is no vertex. The sample hull is evaluated with ``np.interp``,
    whose error on integers below 2^53 is a few ulps of n_in = y[-1]; only points below it by more than
    2^-30·n_in are dropped, so no vertex is lost, and the exact integer pass decides the rest.
    """
    if x.size <= 4 * _HULL_SAMPLE:
        return _remove_non_convex_corners(x, y)
    # From position 1: x[0] may equal x[1], and np.interp needs increasing abscissae. The ends are kept anyway.
    sample = np.r_[np.arange(1, x.size - 1, x.size // _HULL_SAMPLE), x.size - 1]
    vertices = sample[_remove_non_convex_corners(x[sample], y[sample])]
    near = y >= np.interp(x, x[vertices], y[vertices]) - 2.0**-30 * y[-1]
    near[0] = near[-1] = True
    candidates = np.flatnonzero(near)
    return candidates[_remove_non_convex_corners(x[candidates], y[candidates])]


def hull_indices(counts: RocCounts) -> np.ndarray:
    """Indices of the ROC points on its upper convex hull, by increasing FPR (collinear points dropped)."""
    fp, tp = counts.false_positives, counts.true_positives
    # Besides the end points, only corners reached by an upward step and left by a rightward one can be vertices.
    kept = np.flatnonzero(np.r_[True, (np.diff(tp[:-1]) > 0) & (np.diff(fp[1:]) > 0), True])
    return kept[_upper_hull(fp[kept], tp[kept])]


class _Roc(NamedTuple):
    """What every metric needs from one sort: the sorted sides, the corners, and the hull's (FP, TP)."""

    sides: _SortedSides
    false_positives: np.ndarray
    true_positives: np.ndarray
    hull_false_positives: np.ndarray | None
    hull_true_positives: np.ndarray | None


def _roc(scores, hull: bool) -> _Roc:
    sides = _sorted_sides(arg.audit_scores(scores))
    fp, tp = _roc_corners(sides)
    if not hull:
        return _Roc(sides, fp, tp, None, None)
    vertices = _upper_hull(fp, tp)
    return _Roc(sides, fp, tp, fp[vertices], tp[vertices])


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


def _tied_pairs(sides: _SortedSides) -> int:
    """#{(IN, OUT) pairs with equal scores}, in O(n) from the merge (no search)."""
    in_sorted, out_sorted, below = sides
    first_not_below = np.take(out_sorted, below, mode="clip")
    tied = np.flatnonzero(first_not_below == in_sorted)
    if tied.size == 0:
        return 0
    # A tied IN score equals the run of OUT scores starting at out_below; its length is the gap to the next run.
    run_starts = np.flatnonzero(np.r_[True, out_sorted[1:] != out_sorted[:-1]])
    run_end = np.empty(out_sorted.size, dtype=np.int64)
    run_end[run_starts] = np.r_[run_starts[1:], out_sorted.size]
    starts = below[tied]
    return int(np.sum(run_end[starts] - starts))


def _auc(roc: _Roc, convention: str) -> float:
    num_in, num_out = roc.sides.num_in, roc.sides.num_out
    if convention == "deterministic":
        # Mann–Whitney, doubled: 2·#{IN > OUT} + #{IN = OUT}; its trapezoidal area under the ROC is the same integer.
        doubled = 2 * np.sum(roc.sides.out_below) + _tied_pairs(roc.sides)
    else:
        fp, tp = roc.hull_false_positives, roc.hull_true_positives
        # Exact in int64: the doubled area is at most 2·n_in·n_out.
        doubled = np.dot(tp[1:] + tp[:-1], np.diff(fp))
    return float(doubled / (2.0 * num_in * num_out))


def _largest_count_at_most(rate, total: int) -> np.ndarray:
    """Largest integer k with k / total <= rate (as the float comparison reads), for an array of rates."""
    k = np.floor(np.asarray(rate, dtype=float) * total)
    k = np.where((k + 1) / total <= rate, k + 1, k)
    return np.where(k / total > rate, k - 1, k)


def _tpr_at(roc: _Roc, convention: str, target) -> np.ndarray:
    sides = roc.sides
    if convention == "deterministic":
        # The most permissive rule with at most k false positives is "IN if score > the (k+1)-th largest
        # OUT score"; every rule with fewer FP has fewer TP.
        k = _largest_count_at_most(target, sides.num_out).astype(np.int64)
        cut = sides.out_sorted[np.maximum(sides.num_out - 1 - k, 0)]
        true_positives = np.where(k >= sides.num_out, sides.num_in,
                                  sides.num_in - np.searchsorted(sides.in_sorted, cut, side="right"))
        return true_positives / sides.num_in
    fpr, tpr = roc.hull_false_positives / sides.num_out, roc.hull_true_positives / sides.num_in
    # On the hull, FPR = 0 may hold at two vertices; the upper one is the TPR at FPR 0.
    distinct = np.r_[fpr[1:] != fpr[:-1], True]
    return np.interp(target, fpr[distinct], tpr[distinct])


def auc(scores, *, convention: str = "deterministic") -> float:
    """Area under the ROC: Mann–Whitney P[IN > OUT] + ½ P[tie] ("deterministic") or under its convex hull ("hull")."""
    convention = check.choice("convention", convention, CONVENTIONS)
    return _auc(_roc(scores, convention == "hull"), convention)


def tpr_at_fpr(scores, fpr, *, convention: str = "deterministic"):
    """TPR at FPR <= ``fpr`` (scalar or array in [0, 1]): best deterministic rule, or interpolated on the hull.

    Below :func:`fpr_resolution` the deterministic answer is the TPR at FPR = 0.
    """
    target = check.in_interval("fpr", fpr, 0.0, 1.0, low_open=False, high_open=False)
    convention = check.choice("convention", convention, CONVENTIONS)
    roc = _roc(scores, convention == "hull")
    return check.scalar_or_array(np.asarray(_tpr_at(roc, convention, target), dtype=float))


def fpr_resolution(scores) -> float:
    """1 / n_out: the smallest positive FPR a threshold rule can have on these scores."""
    return 1.0 / arg.audit_scores(scores).num_out


def advantage(scores) -> float:
    """Membership advantage max_t (TPR − FPR) >= 0 (Yeom et al. 2018); the same on the hull (a vertex attains it)."""
    return _advantage(_roc(scores, hull=False))


def _advantage(roc: _Roc) -> float:
    num_in, num_out = roc.sides.num_in, roc.sides.num_out
    # Exact in int64: max (TP·n_out − FP·n_in) / (n_in·n_out), attained at a corner or at (0, 0).
    gap = roc.true_positives * num_out - roc.false_positives * num_in
    return float(np.max(gap) / (num_in * num_out))


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
    """AUC, TPR at 0.1% and at 1% FPR, advantage and the FPR resolution, from one sort of each side."""
    convention = check.choice("convention", convention, CONVENTIONS)
    roc = _roc(scores, convention == "hull")
    at = _tpr_at(roc, convention, np.array(REPORTED_FPRS))
    return MiaMetrics(
        auc=_auc(roc, convention),
        tpr_at_0_1_percent_fpr=float(at[0]),
        tpr_at_1_percent_fpr=float(at[1]),
        advantage=_advantage(roc),
        fpr_resolution=1.0 / roc.sides.num_out,
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
    from dpmech.statistics import clopper_pearson_upper

    roc = _roc(scores, hull=True)
    num_in, num_out = roc.sides.num_in, roc.sides.num_out
    if prevalence is None:
        prevalence = num_in / (num_in + num_out)
    prevalence = float(check.in_interval("prevalence", prevalence, 0.0, 1.0, low_open=False, high_open=False))
    true_positives = roc.hull_true_positives.astype(float)
    true_negatives = num_out - roc.hull_false_positives.astype(float)
    if alpha is None:
        tpr, tnr = true_positives / num_in, true_negatives / num_out
    else:
        alpha = check.in_interval("alpha", alpha, 0.0, 1.0, low_open=True, high_open=True)
        tpr = np.asarray(clopper_pearson_upper(true_positives, float(num_in), alpha / 2))
        tnr = np.asarray(clopper_pearson_upper(true_negatives, float(num_out), alpha / 2))
    return float(np.max(prevalence * tpr + (1.0 - prevalence) * tnr))
