"""The fast ROC metrics against brute-force references, exactly (not to a tolerance).

The references enumerate every threshold rule "IN if score >= t" (t over the distinct scores and +inf)
and every (IN, OUT) pair, and build the hull with Andrew's monotone chain in plain Python; they share no
code with :mod:`audits.metrics`. Scores are drawn from a few integers to force ties across and within the
sides, and with one score per side.
"""

import dataclasses

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn import metrics as sk

from audits import metrics
from audits import AuditScores, advantage, auc, max_accuracy, mia_metrics, roc_counts, roc_curve, tpr_at_fpr
from tests.profiles import examples

TIED = st.lists(st.integers(-3, 3), min_size=1, max_size=30)
# Rates at and around the multiples of 1/n_out (the FP counts' boundaries) as well as anywhere in [0, 1].
RATES = st.one_of(st.floats(0.0, 1.0), st.fractions(0, 1, max_denominator=30).map(float))


def _rules(in_scores, out_scores):
    """(thresholds, FP, TP) of every rule "IN if score >= t", t = +inf then the distinct scores downwards."""
    in_array, out_array = np.asarray(in_scores, dtype=float), np.asarray(out_scores, dtype=float)
    thresholds = np.r_[np.inf, np.unique(np.r_[in_array, out_array])[::-1]]
    fp = np.array([int(np.sum(out_array >= t)) for t in thresholds])
    tp = np.array([int(np.sum(in_array >= t)) for t in thresholds])
    return thresholds, fp, tp


def _upper_hull(points):
    """Andrew's monotone chain: vertices of the upper hull from (0, 0), by increasing x then y, collinear dropped.

    Among points of equal x only the highest survives, except at the start: the ROC's hull keeps its
    vertical first edge from (0, 0) to (0, TP at FPR 0).
    """
    hull = []
    for point in sorted(set(points)):
        while len(hull) >= 2:
            (x0, y0), (x1, y1) = hull[-2], hull[-1]
            if (x1 - x0) * (point[1] - y0) - (y1 - y0) * (point[0] - x0) >= 0:
                hull.pop()  # hull[-1] is on or below the chord from hull[-2] to the new point
            else:
                break
        hull.append(point)
    return hull


def _reference(in_scores, out_scores, higher_is_in=True):
    sign = 1 if higher_is_in else -1
    in_array = sign * np.asarray(in_scores, dtype=float)
    out_array = sign * np.asarray(out_scores, dtype=float)
    n_in, n_out = in_array.size, out_array.size
    _, fp, tp = _rules(in_array, out_array)
    greater = int(np.sum(in_array[:, None] > out_array[None, :]))
    ties = int(np.sum(in_array[:, None] == out_array[None, :]))
    hull = _upper_hull(list(zip(fp.tolist(), tp.tolist())))
    hull_fp, hull_tp = np.array([p[0] for p in hull]), np.array([p[1] for p in hull])
    return dict(fp=fp, tp=tp, n_in=n_in, n_out=n_out, doubled_auc=2 * greater + ties,
                hull_fp=hull_fp, hull_tp=hull_tp,
                doubled_hull_auc=int(np.sum((hull_tp[1:] + hull_tp[:-1]) * np.diff(hull_fp))),
                best_gap=int(np.max(tp * n_out - fp * n_in)))


def _deterministic_tpr(ref, target):
    return ref["tp"][ref["fp"] / ref["n_out"] <= target].max() / ref["n_in"]


def _hull_tpr(ref, target):
    fpr, tpr = ref["hull_fp"] / ref["n_out"], ref["hull_tp"] / ref["n_in"]
    # At FPR 0 the upper of the two vertices counts.
    first = 1 if fpr[1] == 0 else 0
    return np.interp(target, fpr[first:], tpr[first:])


@given(TIED, TIED, st.booleans())
def test_roc_counts_enumerate_every_threshold_rule(in_scores, out_scores, higher_is_in):
    counts = roc_counts(AuditScores(in_scores, out_scores, higher_is_in=higher_is_in))
    sign = 1 if higher_is_in else -1
    thresholds, fp, tp = _rules(sign * np.array(in_scores), sign * np.array(out_scores))
    np.testing.assert_array_equal(counts.false_positives, fp)
    np.testing.assert_array_equal(counts.true_positives, tp)
    np.testing.assert_array_equal(counts.oriented_thresholds, thresholds)
    assert (counts.num_in, counts.num_out) == (len(in_scores), len(out_scores))


@given(TIED, TIED, st.booleans(), RATES)
def test_deterministic_metrics_equal_the_brute_force_counts(in_scores, out_scores, higher_is_in, target):
    scores = AuditScores(in_scores, out_scores, higher_is_in=higher_is_in)
    ref = _reference(in_scores, out_scores, higher_is_in)
    n_in, n_out = ref["n_in"], ref["n_out"]
    metrics = mia_metrics(scores)
    # The same integer divided the same way: equality is exact.
    assert metrics.auc == auc(scores) == ref["doubled_auc"] / (2.0 * n_in * n_out)
    assert metrics.advantage == advantage(scores) == ref["best_gap"] / (n_in * n_out)
    assert metrics.tpr_at_0_1_percent_fpr == _deterministic_tpr(ref, 1e-3)
    assert metrics.tpr_at_1_percent_fpr == _deterministic_tpr(ref, 1e-2)
    assert metrics.fpr_resolution == 1.0 / n_out
    assert tpr_at_fpr(scores, target) == _deterministic_tpr(ref, target)


@given(TIED, TIED, st.booleans(), RATES)
def test_hull_metrics_equal_andrews_monotone_chain(in_scores, out_scores, higher_is_in, target):
    scores = AuditScores(in_scores, out_scores, higher_is_in=higher_is_in)
    ref = _reference(in_scores, out_scores, higher_is_in)
    n_in, n_out = ref["n_in"], ref["n_out"]
    fpr, tpr, _ = roc_curve(scores, convention="hull")
    np.testing.assert_array_equal(fpr, ref["hull_fp"] / n_out)
    np.testing.assert_array_equal(tpr, ref["hull_tp"] / n_in)
    metrics = mia_metrics(scores, convention="hull")
    assert metrics.auc == auc(scores, convention="hull") == ref["doubled_hull_auc"] / (2.0 * n_in * n_out)
    assert metrics.advantage == ref["best_gap"] / (n_in * n_out)
    assert metrics.tpr_at_0_1_percent_fpr == _hull_tpr(ref, 1e-3)
    assert metrics.tpr_at_1_percent_fpr == _hull_tpr(ref, 1e-2)
    assert tpr_at_fpr(scores, target, convention="hull") == _hull_tpr(ref, target)
    # Accuracy at prevalence 1/2 is maximised at a hull vertex.
    best = np.max(0.5 * ref["hull_tp"] / n_in + 0.5 * (n_out - ref["hull_fp"]) / n_out)
    assert max_accuracy(scores, prevalence=0.5) == best


@given(st.lists(st.floats(-1e300, 1e300), min_size=1, max_size=40),
       st.lists(st.floats(-1e300, 1e300), min_size=1, max_size=40))
def test_deterministic_roc_and_auc_agree_with_scikit_learn(in_scores, out_scores):
    # Any finite scores, extreme magnitudes included; scikit-learn's ROC is the same counts divided alike.
    scores = AuditScores(in_scores, out_scores)
    labels, pooled = np.r_[np.ones(len(in_scores)), np.zeros(len(out_scores))], np.r_[in_scores, out_scores]
    fpr, tpr, _ = roc_curve(scores)
    sk_fpr, sk_tpr, _ = sk.roc_curve(labels, pooled, drop_intermediate=False)
    np.testing.assert_array_equal(fpr, sk_fpr)
    np.testing.assert_array_equal(tpr, sk_tpr)
    assert auc(scores) == pytest.approx(sk.roc_auc_score(labels, pooled), rel=1e-12, abs=1e-15)


@examples(0.05)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["shifted", "identical", "lattice", "heavy", "separated"]))
def test_long_chains_keep_every_hull_vertex(seed, shape):
    # Over 4·4096 candidate corners, where the hull is first thinned by a sample hull: the same vertices as the
    # monotone chain, also where thousands of corners lie on the hull (identical samples: the diagonal).
    rng = np.random.default_rng(seed)
    n = 60_000
    in_scores, out_scores = {
        "shifted": lambda: (rng.normal(0.5, 1, n), rng.normal(0, 1, n)),
        "identical": lambda: (lambda v: (v, v.copy()))(rng.normal(0, 1, n)),
        "lattice": lambda: (2.0 * rng.permutation(n), 2.0 * rng.permutation(n) + 1),
        "heavy": lambda: (rng.standard_cauchy(n) + 1, rng.standard_cauchy(n)),
        "separated": lambda: (np.r_[rng.normal(6, 1, n // 10), rng.normal(0, 1, n)], rng.normal(0, 1, n)),
    }[shape]()
    scores = AuditScores(in_scores, out_scores)
    counts = roc_counts(scores)
    fp, tp = counts.false_positives, counts.true_positives
    corners = np.sum((np.diff(tp[:-1]) > 0) & (np.diff(fp[1:]) > 0))
    assert corners > 4 * metrics._HULL_SAMPLE  # the thinned path
    hull = _upper_hull(list(zip(counts.false_positives.tolist(), counts.true_positives.tolist())))
    fpr, tpr, _ = roc_curve(scores, convention="hull")
    assert list(zip((fpr * counts.num_out).round().astype(int).tolist(),
                    (tpr * counts.num_in).round().astype(int).tolist())) == hull
    hull_fp, hull_tp = np.array(hull).T
    doubled = int(np.sum((hull_tp[1:] + hull_tp[:-1]) * np.diff(hull_fp)))
    assert mia_metrics(scores, convention="hull").auc == doubled / (2.0 * counts.num_in * counts.num_out)


def test_single_scores_and_polarity():
    # One score per side: IN above, tied, below.
    for in_score, expected in ((1.0, 1.0), (0.0, 0.5), (-1.0, 0.0)):
        scores = AuditScores([in_score], [0.0])
        assert mia_metrics(scores).auc == expected
        assert mia_metrics(AuditScores([-in_score], [0.0], higher_is_in=False)).auc == expected
        assert mia_metrics(scores, convention="hull").auc == max(expected, 0.5)
    assert dataclasses.astuple(mia_metrics(AuditScores([2.0], [1.0]))) == (1.0, 1.0, 1.0, 1.0, 1.0)


@pytest.mark.parametrize("in_scores, out_scores, name", [
    ([], [0.0], "in_scores"), ([0.0], [], "out_scores"),
    ([np.inf], [0.0], "in_scores"), ([0.0], [-np.inf], "out_scores"), ([np.nan, 1.0], [0.0], "in_scores"),
])
def test_empty_or_non_finite_sides_are_refused(in_scores, out_scores, name):
    with pytest.raises(ValueError, match=name):
        AuditScores(in_scores, out_scores)


@pytest.mark.parametrize("function", [mia_metrics, auc, advantage, roc_counts, max_accuracy])
def test_raw_arrays_are_refused(function):
    with pytest.raises(ValueError, match="scores must be an AuditScores"):
        function([1.0, 2.0])
