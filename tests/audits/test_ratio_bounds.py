"""TF-Privacy's ratio bounds and ε estimates, against the known answers of its own tests.

Source of every expected value: tensorflow/privacy,
tensorflow_privacy/privacy/privacy_tests/epsilon_lower_bound_test.py (test names in the comments;
their values come from R's asbio ``ci.prat`` and, for Clopper–Pearson, arXiv 2006.07709).
"""

import numpy as np
import pytest

from audits import AuditScores
from audits.metrics import roc_counts
from audits.ratio_bounds import epsilon_ratio_bounds, ratio_lower_bound

# (tp, fn, fp, tn, method, expected) at α = 0.05: test_bound_scalar, test_bound_scalar_with_0, ..._with_large.
SCALAR_CASES = [
    (473, 511, 755, 950, "katz-log", 1.01166194), (473, 511, 755, 950, "adjusted-log", 1.01189079),
    (473, 511, 755, 950, "bailey", 1.01148934), (473, 511, 755, 950, "inv-sinh", 1.01167669),
    (2, 697, 213, 313, "katz-log", 0.00220470), (2, 697, 213, 313, "adjusted-log", 0.00310880),
    (2, 697, 213, 313, "bailey", 0.00162322), (2, 697, 213, 313, "inv-sinh", 0.00233503),
    (1000, 10, 10, 10000, "katz-log", 589.27335593), (1000, 10, 10, 10000, "adjusted-log", 568.32659563),
    (1000, 10, 10, 10000, "bailey", 613.58766147), (1000, 10, 10, 10000, "inv-sinh", 592.63264572),
    (0, 511, 755, 950, "katz-log", 0.0), (0, 511, 755, 950, "adjusted-log", 0.00021568),
    (0, 511, 755, 950, "bailey", 0.0), (0, 511, 755, 950, "inv-sinh", 0.0),
    (2, 697, 0, 313, "katz-log", 0.13325535), (2, 697, 0, 313, "adjusted-log", 0.17571862),
    (2, 697, 0, 313, "bailey", 0.18481008), (2, 697, 0, 313, "inv-sinh", 0.08081083),
    (0, 10, 0, 10000, "katz-log", 0.0), (0, 10, 0, 10000, "adjusted-log", 0.0),
    (0, 10, 0, 10000, "bailey", 0.0), (0, 10, 0, 10000, "inv-sinh", 0.0),
    (473, 0, 755, 950, "katz-log", 2.15959024), (473, 0, 755, 950, "adjusted-log", 2.15883995),
    (473, 0, 755, 950, "bailey", 2.15787013), (473, 0, 755, 950, "inv-sinh", 2.15959827),
    (2, 697, 213, 0, "katz-log", 0.00089568), (2, 697, 213, 0, "adjusted-log", 0.00126522),
    (2, 697, 213, 0, "bailey", 0.00066016), (2, 697, 213, 0, "inv-sinh", 0.00094821),
    (1000, 0, 10, 0, "katz-log", 0.93375356), (1000, 0, 10, 0, "adjusted-log", 0.93686007),
    (1000, 0, 10, 0, "bailey", 0.93591485), (1000, 0, 10, 0, "inv-sinh", 0.93381958),
]


@pytest.mark.parametrize("tp, fn, fp, tn, method, expected", SCALAR_CASES)
def test_ratio_bounds_match_tf_privacy(tp, fn, fp, tn, method, expected):
    assert ratio_lower_bound(tp, fp, tp + fn, fp + tn, 0.05, method) == pytest.approx(expected, abs=5e-8)


@pytest.mark.parametrize("method, expected", [
    ("katz-log", [1.71127264, 0.0, 2.21549347, 0.99840355]),
    ("adjusted-log", [1.71070821, 0.00388765, 2.33237436, 0.99840433]),
    ("bailey", [1.71182320, 0.0, 3.86813751, 0.99840348]),
    ("inv-sinh", [1.71128185, 0.0, 1.51711034, 0.99840355]),
])
def test_ratio_bound_arrays_match_tf_privacy(method, expected):
    # test_bound_array: n₊ = 1000, n₋ = 1200.
    bounds = ratio_lower_bound([900, 0, 10, 1000], [600, 14, 0, 1200], 1000, 1200, 0.05, method)
    np.testing.assert_allclose(bounds, expected, atol=1e-7)


def test_scalar_bounds_at_alpha_0_01_match_tf_privacy():
    # test_bounds_scalar and test_bound_scalar_clopper_pearson: TP = 500 of 500, FP = 0 of 500, α = 0.01.
    expected = {"katz-log": 37.31696140, "adjusted-log": 37.35421695, "bailey": 108.47420518, "inv-sinh": 35.46128691}
    for method, value in expected.items():
        assert ratio_lower_bound(500, 0, 500, 500, 0.01, method) == pytest.approx(value, abs=5e-8)
    assert np.log(ratio_lower_bound(500, 0, 500, 500, 0.01, "clopper-pearson")) == pytest.approx(4.54, abs=5e-3)


def test_counts_match_tf_privacy_all_thresholds():
    # test_tp_fp_all_thresholds.
    counts = roc_counts(AuditScores([9, 4, 5, 0], [3, 8, 6, 1, 2, 7.0]))
    np.testing.assert_array_equal(counts.true_positives[1:], [1, 1, 1, 1, 2, 3, 3, 3, 3, 4])
    np.testing.assert_array_equal(counts.false_positives[1:], [0, 1, 2, 3, 3, 3, 4, 5, 6, 6])


def test_epsilon_bounds_match_tf_privacy():
    # test_epsilon_bound and test_epsilon_bounds: explicit thresholds, α = 0.05.
    scores = AuditScores([9, 4, 5, 0.0], [3, 8, 6, 1, 2, 7])
    thresholds = [9.5, 8.5, 5.5, 0.5]
    tpr_fpr = [-1.02310327, -1.72826789, -0.66577858]
    tnr_fnr = [-0.29368152, -0.16314973, -1.09474300, -3.95577741]
    fpr_tpr = [-3.95577741, -0.76912173, -0.16314973]
    fnr_tnr = [-0.36916217, -0.66577858, -0.35929344, -1.02310327]
    one_sided = epsilon_ratio_bounds(scores, method="adjusted-log", thresholds=thresholds)
    np.testing.assert_allclose(one_sided, np.sort(tpr_fpr + tnr_fnr)[::-1], atol=1e-7)
    two_sided = epsilon_ratio_bounds(scores, method="adjusted-log", thresholds=thresholds, two_sided=True)
    np.testing.assert_allclose(two_sided, np.sort(tpr_fpr + tnr_fnr + fpr_tpr + fnr_tnr)[::-1], atol=1e-7)
    inv_sinh = [-2.05961264, -2.13876684, -0.75815925, -0.32235626, -0.18279510, -1.20631805]
    np.testing.assert_allclose(epsilon_ratio_bounds(scores, method="inv-sinh", thresholds=thresholds),
                               np.sort(inv_sinh)[::-1], atol=1e-7)
    # test_epsilon_bound_clopper_pearson: 500 ones against 500 zeros, α = 0.01, threshold 0.5.
    separated = AuditScores(np.ones(500), np.zeros(500))
    for two in (False, True):
        np.testing.assert_allclose(epsilon_ratio_bounds(separated, method="clopper-pearson", alpha=0.01,
                                                        thresholds=[0.5], two_sided=two), [4.54, 4.54], atol=5e-3)


@pytest.mark.parametrize("kwargs, name", [({"alpha": 0.5}, "alpha"), ({"method": "wald"}, "method")])
def test_bad_arguments(kwargs, name):
    arguments = {"alpha": 0.05, "method": "katz-log", **kwargs}
    with pytest.raises(ValueError, match=name):
        ratio_lower_bound(3, 2, 10, 10, **arguments)
