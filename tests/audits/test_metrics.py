"""MIA metrics against scikit-learn and hand-computed cases."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn import metrics as sk

from audits import AuditScores, advantage, auc, mia_metrics, roc_curve, tpr_at_fpr


def _labels_and_scores(scores):
    return np.r_[np.ones(scores.num_in), np.zeros(scores.num_out)], np.r_[scores.in_scores, scores.out_scores]


@pytest.mark.parametrize("rounding", [None, 1])
def test_roc_and_auc_match_scikit_learn(rounding):
    # N = 700 IN ~ N(1, 1), 900 OUT ~ N(0, 1); rounding to 0.1 creates ties.
    rng = np.random.default_rng(0)
    in_scores, out_scores = rng.normal(1, 1, 700), rng.normal(0, 1, 900)
    if rounding is not None:
        in_scores, out_scores = np.round(in_scores, rounding), np.round(out_scores, rounding)
    scores = AuditScores(in_scores, out_scores)
    labels, pooled = _labels_and_scores(scores)
    fpr, tpr, thresholds = roc_curve(scores)
    sk_fpr, sk_tpr, sk_thresholds = sk.roc_curve(labels, pooled, drop_intermediate=False)
    np.testing.assert_allclose(fpr, sk_fpr)
    np.testing.assert_allclose(tpr, sk_tpr)
    np.testing.assert_allclose(thresholds[1:], sk_thresholds[1:])
    assert auc(scores) == pytest.approx(sk.roc_auc_score(labels, pooled), rel=1e-12)
    assert advantage(scores) == pytest.approx(np.max(sk_tpr - sk_fpr), rel=1e-12)


def test_hand_computed_case():
    # IN = {4, 3, 1}, OUT = {2, 0, -1, -2}. Rules ">= t": t=4 (1/3, 0), 3 (2/3, 0), 2 (2/3, 1/4), 1 (1, 1/4).
    scores = AuditScores([4.0, 3.0, 1.0], [2.0, 0.0, -1.0, -2.0])
    assert auc(scores) == pytest.approx(11 / 12)
    assert advantage(scores) == pytest.approx(3 / 4)
    assert tpr_at_fpr(scores, 0.0) == pytest.approx(2 / 3)
    np.testing.assert_allclose(tpr_at_fpr(scores, [0.2, 0.25, 1.0]), [2 / 3, 1.0, 1.0])
    low = mia_metrics(scores)
    assert (low.tpr_at_0_1_percent_fpr, low.tpr_at_1_percent_fpr) == pytest.approx((2 / 3, 2 / 3))


def test_polarity_flip_is_invariant():
    rng = np.random.default_rng(1)
    in_scores, out_scores = rng.normal(0, 1, 300), rng.normal(1, 1, 400)
    assert mia_metrics(AuditScores(in_scores, out_scores, higher_is_in=False)) == mia_metrics(
        AuditScores(-in_scores, -out_scores)
    )


def test_low_fpr_points_on_gaussian_scores():
    # IN ~ N(3, 1), OUT ~ N(0, 1), N = 10^5 per side: TPR at FPR f is Φ(Φ⁻¹(f) + 3) up to sampling error.
    from scipy import stats

    rng = np.random.default_rng(2)
    scores = AuditScores(rng.normal(3, 1, 100_000), rng.normal(0, 1, 100_000))
    result = mia_metrics(scores)
    assert result.tpr_at_0_1_percent_fpr == pytest.approx(stats.norm.cdf(stats.norm.ppf(1e-3) + 3), abs=0.02)
    assert result.tpr_at_1_percent_fpr == pytest.approx(stats.norm.cdf(stats.norm.ppf(1e-2) + 3), abs=0.01)
    assert result.auc == pytest.approx(stats.norm.cdf(3 / np.sqrt(2)), abs=0.003)


@pytest.mark.parametrize("fpr", [-0.1, 1.5, np.nan])
def test_bad_fpr(fpr):
    with pytest.raises(ValueError, match="fpr"):
        tpr_at_fpr(AuditScores([1.0], [0.0]), fpr)


# Known answers from google-deepmind/jax_privacy, jax_privacy/auditing/canary_score_auditor_test.py.
# jax_privacy's Pareto frontier is in (FN, TN) counts; here (FP, TP) = (n_out − TN, n_in − FN).
@pytest.mark.parametrize(
    "in_scores, out_scores, frontier",
    [
        (np.arange(4) + 0.5, np.arange(4), [(0, 0), (0, 1), (3, 4), (4, 4)]),  # test_get_tn_fn_counts
        ([0, 1, 1, 2], [0, 0, 1, 1], [(0, 0), (0, 1), (2, 3), (4, 4)]),  # test_get_tn_fn_counts_ties_convex
        ([0, 0, 1, 2], [0, 1, 1, 1], [(0, 0), (0, 1), (4, 4)]),  # test_get_tn_fn_counts_ties_nonconvex
        (np.zeros(4), np.zeros(4), [(0, 0), (4, 4)]),  # test_get_tn_fn_counts_zeros
    ],
)
def test_hull_matches_jax_privacy_frontier(in_scores, out_scores, frontier):
    fpr, tpr, _ = roc_curve(AuditScores(in_scores, out_scores), convention="hull")
    np.testing.assert_array_equal(np.column_stack([fpr * 4, tpr * 4]), frontier)


def test_hull_conventions_match_jax_privacy_known_answers():
    # test_attack_auroc_simple: hull AUC 13/16 (the Mann–Whitney AUC of the same scores is 11/16).
    simple = AuditScores([0, 4, 6, 7], [1, 2, 3, 5])
    assert auc(simple, convention="hull") == pytest.approx(13 / 16)
    assert auc(simple) == pytest.approx(11 / 16)
    # test_tpr_at_given_fpr_simple.
    np.testing.assert_allclose(tpr_at_fpr(AuditScores([1, 3], [0, 2]), [0, 0.25, 0.5, 0.75, 1.0], convention="hull"),
                               [0.5, 0.75, 1.0, 1.0, 1.0])
    fprs = np.linspace(0, 1, 10)
    for out_size in (15, 30, 45):  # out_samples_ratio 0.5, 1, 1.5 with 30 IN samples
        worst = AuditScores(np.zeros(30), np.ones(out_size))  # test_tpr_at_given_fpr_worst_case, ..._auroc_worst_case
        np.testing.assert_allclose(tpr_at_fpr(worst, fprs, convention="hull"), fprs, atol=1e-15)
        assert auc(worst, convention="hull") == pytest.approx(0.5)
        best = AuditScores(np.ones(30), np.zeros(out_size))  # test_tpr_at_given_fpr_best_case, ..._auroc_best_case
        np.testing.assert_array_equal(tpr_at_fpr(best, fprs, convention="hull"), np.ones(10))
        assert auc(best, convention="hull") == pytest.approx(1.0)


@given(st.lists(st.integers(0, 6), min_size=1, max_size=25), st.lists(st.integers(0, 6), min_size=1, max_size=25))
def test_hull_is_the_least_concave_majorant_of_the_roc(in_scores, out_scores):
    # Discrete scores with many ties. Every ROC point lies on or below the hull; the hull's slopes decrease;
    # every hull vertex is an ROC point; so hull AUC >= max(AUC, ½) and hull TPR >= deterministic TPR.
    scores = AuditScores(in_scores, out_scores)
    fpr, tpr, _ = roc_curve(scores)
    hull_fpr, hull_tpr, _ = roc_curve(scores, convention="hull")
    assert (hull_fpr[0], hull_tpr[0], hull_fpr[-1], hull_tpr[-1]) == (0.0, 0.0, 1.0, 1.0)
    assert set(zip(hull_fpr, hull_tpr)) <= set(zip(fpr, tpr))
    distinct = np.r_[hull_fpr[1:] != hull_fpr[:-1], True]
    assert np.all(tpr <= np.interp(fpr, hull_fpr[distinct], hull_tpr[distinct]) + 1e-12)
    with np.errstate(divide="ignore"):
        slopes = np.diff(hull_tpr) / np.diff(hull_fpr)  # +inf for a vertical first edge
    assert np.all(np.diff(slopes[np.isfinite(slopes)]) < 0)
    assert auc(scores, convention="hull") >= max(auc(scores), 0.5) - 1e-12
    targets = np.linspace(0, 1, 21)
    assert np.all(tpr_at_fpr(scores, targets, convention="hull") >= tpr_at_fpr(scores, targets) - 1e-12)


@pytest.mark.parametrize("num_out, unresolved", [(500, (1e-3,)), (99, (1e-3, 1e-2)), (1000, ())])
def test_tpr_below_the_fpr_resolution_is_not_available(num_out, unresolved):
    rng = np.random.default_rng(3)
    metrics = mia_metrics(AuditScores(rng.normal(2, 1, 300), rng.normal(0, 1, num_out)))
    assert metrics.fpr_resolution == 1.0 / num_out and metrics.unresolved == unresolved
    for fpr in (1e-3, 1e-2):
        text = metrics.tpr_text(fpr)
        assert text.startswith("n/a (FPR resolution") == (fpr in unresolved)
    if num_out == 500:
        assert metrics.tpr_text(1e-3) == "n/a (FPR resolution 0.002)"
        assert metrics.tpr_text(1e-2) == f"{metrics.tpr_at_1_percent_fpr:.3f}"


def test_bad_convention():
    with pytest.raises(ValueError, match="convention"):
        mia_metrics(AuditScores([1.0], [0.0]), convention="interpolated")


def test_max_accuracy_and_its_upper_bound():
    from scipy import stats

    from audits import max_accuracy

    # IN = {4, 3, 1}, OUT = {2, 0, -1, -2}: the rule ">= 3" has TP 2, TN 4, accuracy 6/7 = the rule ">= 1" (3 + 3).
    scores = AuditScores([4.0, 3.0, 1.0], [2.0, 0.0, -1.0, -2.0])
    assert max_accuracy(scores) == pytest.approx(6 / 7)
    assert max_accuracy(scores, prevalence=0.5) == pytest.approx(0.5 * 1.0 + 0.5 * 0.75)
    # Upper bound: CP upper bounds at α/2 on TPR and TNR of each hull vertex, with prevalence 3/7.
    a = 0.05 / 2
    def upper(k, n):
        return 1.0 if k == n else stats.beta.ppf(1 - a, k + 1, n - k)
    vertices = [(0, 4), (2, 4), (3, 3), (3, 0)]  # (TP, TN) on the hull
    expected = max(3 / 7 * upper(tp, 3) + 4 / 7 * upper(tn, 4) for tp, tn in vertices)
    # Clopper–Pearson from dpmech.verify sits on the safe side of the exact quantile by <= ~1e-4 relative.
    assert expected <= max_accuracy(scores, alpha=0.05) <= expected * (1 + 1e-4)
    assert max_accuracy(scores, alpha=0.05) >= max_accuracy(scores)
    with pytest.raises(ValueError, match="prevalence"):
        max_accuracy(scores, prevalence=1.5)


@given(st.lists(st.integers(0, 9), min_size=1, max_size=40), st.lists(st.integers(0, 9), min_size=1, max_size=40),
       st.floats(0.0, 1.0))
def test_deterministic_tpr_and_advantage_by_brute_force(in_scores, out_scores, target):
    # Every rule "IN if score >= t" for t over the scores and +inf: the largest TPR with FPR <= target, and
    # max (TPR − FPR).
    scores = AuditScores(in_scores, out_scores)
    in_array, out_array = np.array(in_scores), np.array(out_scores)
    cuts = np.r_[np.inf, np.unique(np.r_[in_array, out_array])]
    tpr = np.array([(in_array >= t).mean() for t in cuts])
    fpr = np.array([(out_array >= t).sum() / out_array.size for t in cuts])
    assert tpr_at_fpr(scores, target) == tpr[fpr <= target].max()
    assert advantage(scores) == pytest.approx(np.max(tpr - fpr), abs=1e-15)
    assert auc(scores) == pytest.approx(np.mean(in_array[:, None] > out_array[None, :])
                                        + 0.5 * np.mean(in_array[:, None] == out_array[None, :]), abs=1e-12)
