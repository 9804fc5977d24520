"""MIA metrics against scikit-learn and hand-computed cases."""

import numpy as np
import pytest
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
