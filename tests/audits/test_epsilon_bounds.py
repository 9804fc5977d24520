"""Clopper–Pearson / Jeffreys ε lower bound: exact formula checks on small hand-built cases."""

import math

import numpy as np
import pytest

from dpmech.verify import clopper_pearson_upper
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from audits import AuditScores, epsilon_lower_bound, rank_levels

# IN = 10..29, OUT = 0..19 (N = 20 per side). The rule "IN if score > 14.5" has FP = 5 (15..19), FN = 5 (10..14).
HAND = AuditScores(np.arange(10.0, 30.0), np.arange(20.0), trials="independent")


def _expected(fp, fn, n_in, n_out, a, delta, upper):
    fpr_ub, fnr_ub = upper(fp, n_out, a), upper(fn, n_in, a)
    values = []
    if 1 - delta - fnr_ub > 0:
        values.append(math.log(1 - delta - fnr_ub) - math.log(fpr_ub))
    if 1 - delta - fpr_ub > 0:
        values.append(math.log(1 - delta - fpr_ub) - math.log(fnr_ub))
    return max(values + [0.0])


def _cp(k, n, a):
    # dpmech.verify's bound: scipy's Beta quantile moved to the safe side and confirmed by its log tails
    # (at most ~1e-4 relative above it; tests/audits/test_scores_and_intervals.py checks both).
    return float(clopper_pearson_upper(k, n, a))


def _jeffreys(k, n, a):
    return 1.0 if k == n else stats.beta.ppf(1 - a, k + 0.5, n - k + 0.5)


@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.01])
def test_explicit_threshold_matches_hand_formula(delta):
    # α = 0.05, one threshold, one direction: a = α / 2 for each of FPR_ub and FNR_ub.
    result = epsilon_lower_bound(HAND, alpha=0.05, delta=delta, threshold_strategy="explicit", thresholds=[14.5])
    expected = _expected(5, 5, 20, 20, 0.025, delta, _cp)
    assert expected > 0.0
    assert result.eps_lb == pytest.approx(expected, rel=1e-12)
    assert dict(result.counts) == {"TP": 15, "FP": 5, "TN": 15, "FN": 5}
    assert result.thresholds == (14.5,) and result.decision_rule == "IN if score > t"
    assert result.valid_as == "certified" and result.num_hypotheses == 2


def test_explicit_two_sided_divides_alpha_by_four():
    result = epsilon_lower_bound(HAND, alpha=0.05, threshold_strategy="explicit", thresholds=[14.5], two_sided=True)
    assert result.num_hypotheses == 4
    assert result.eps_lb == pytest.approx(_expected(5, 5, 20, 20, 0.0125, 0.0, _cp), rel=1e-12)


def test_jeffreys_matches_hand_formula_and_is_an_estimate():
    result = epsilon_lower_bound(HAND, alpha=0.05, interval="jeffreys", threshold_strategy="explicit", thresholds=[14.5])
    assert result.eps_lb == pytest.approx(_expected(5, 5, 20, 20, 0.025, 0.0, _jeffreys), rel=1e-12)
    assert result.valid_as == "estimate" and result.method == "jeffreys"


@pytest.mark.parametrize("delta", [0.0, 1e-3])
def test_bonferroni_matches_a_brute_force_loop(delta):
    # N = 37 IN, 41 OUT, α = 0.1, 12 rank levels: a = α / (2 · 12) per bound.
    rng = np.random.default_rng(11)
    scores = AuditScores(rng.normal(1.5, 1, 37), rng.normal(0, 1, 41), trials="independent")
    result = epsilon_lower_bound(scores, alpha=0.1, delta=delta, num_thresholds=12)
    levels = rank_levels(41, 12)
    a = 0.1 / (2 * levels.size)
    out_descending = np.sort(scores.out_scores)[::-1]
    best = 0.0
    for k in levels:
        cut = out_descending[k]
        fn = int(np.sum(scores.in_scores <= cut))
        best = max(best, _expected(int(k), fn, 37, 41, a, delta, _cp))
    assert result.num_hypotheses == 2 * levels.size
    assert result.eps_lb == pytest.approx(best, rel=1e-12)
    assert best > 0.5


def test_polarity_flip_gives_the_same_bound():
    rng = np.random.default_rng(2)
    in_scores, out_scores = rng.normal(2, 1, 300), rng.normal(0, 1, 300)
    up = epsilon_lower_bound(AuditScores(in_scores, out_scores, trials="independent"), delta=1e-5)
    down = epsilon_lower_bound(AuditScores(-in_scores, -out_scores, higher_is_in=False, trials="independent"), delta=1e-5)
    assert up.eps_lb == pytest.approx(down.eps_lb, rel=1e-12)
    assert down.thresholds[0] == pytest.approx(-up.thresholds[0]) and down.decision_rule == "IN if score < t"


def test_reverse_direction_only_counts_when_two_sided():
    rng = np.random.default_rng(4)
    reversed_scores = AuditScores(rng.normal(-2, 1, 500), rng.normal(0, 1, 500), trials="independent")
    assert epsilon_lower_bound(reversed_scores).eps_lb == 0.0
    both = epsilon_lower_bound(reversed_scores, two_sided=True)
    assert both.eps_lb > 1.0 and both.decision_rule == "IN if score < t"


def test_uncorrected_is_an_estimate_and_at_least_the_bonferroni_bound():
    rng = np.random.default_rng(5)
    scores = AuditScores(rng.normal(1, 1, 1000), rng.normal(0, 1, 1000), trials="independent")
    corrected = epsilon_lower_bound(scores, delta=1e-5)
    uncorrected = epsilon_lower_bound(scores, delta=1e-5, threshold_strategy="uncorrected")
    assert uncorrected.valid_as == "estimate" and corrected.valid_as == "certified"
    assert uncorrected.eps_lb >= corrected.eps_lb


def test_split_is_reproducible_and_uses_two_hypotheses():
    rng = np.random.default_rng(6)
    scores = AuditScores(rng.normal(2, 1, 2000), rng.normal(0, 1, 2000), trials="independent")
    first = epsilon_lower_bound(scores, threshold_strategy="split", rng=3)
    second = epsilon_lower_bound(scores, threshold_strategy="split", rng=np.random.default_rng(3))
    assert first == second
    assert first.num_hypotheses == 2 and first.valid_as == "certified" and first.eps_lb > 1.0
    assert sum(first.counts.values()) == 2000  # the evaluation half only


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": 1.0}, "alpha"),
        ({"delta": -1e-9}, "delta"),
        ({"delta": 1.0}, "delta"),
        ({"interval": "wald"}, "interval"),
        ({"threshold_strategy": "max"}, "threshold_strategy"),
        ({"threshold_strategy": "explicit"}, "thresholds"),
        ({"threshold_strategy": "explicit", "thresholds": [np.nan]}, "thresholds"),
        ({"thresholds": [1.0]}, "thresholds"),
        ({"threshold_strategy": "split"}, "rng"),
        ({"rng": 3}, "rng"),
        ({"two_sided": 1}, "two_sided"),
        ({"num_thresholds": 0}, "num_thresholds"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        epsilon_lower_bound(HAND, **kwargs)


def test_scores_must_be_audit_scores():
    with pytest.raises(ValueError, match="scores"):
        epsilon_lower_bound(([1.0], [0.0]))


def test_result_record_is_frozen_and_serialisable():
    import json

    from audits import AuditResult

    result = epsilon_lower_bound(HAND, threshold_strategy="explicit", thresholds=[14.5])
    record = result.as_dict()
    assert set(record) >= {"eps_lb", "delta", "alpha", "method", "thresholds", "counts", "assumption", "valid_as"}
    assert json.loads(json.dumps(record))["counts"] == {"TP": 15, "FP": 5, "TN": 15, "FN": 5}
    with pytest.raises(AttributeError):
        result.eps_lb = 3.0
    with pytest.raises(TypeError):
        result.counts["TP"] = 0
    with pytest.raises(ValueError, match="valid_as"):
        AuditResult(0.0, 0.0, 0.05, "x", (), {}, "", "maybe", "explicit", "", 1)


_small_scores = st.lists(st.integers(-5, 5).map(float), min_size=1, max_size=30)


@given(in_scores=_small_scores, out_scores=_small_scores, threshold=st.integers(-6, 5).map(lambda t: t + 0.5),
       delta=st.sampled_from([0.0, 1e-3]))
def test_explicit_bound_property_against_the_formula(in_scores, out_scores, threshold, delta):
    # Integer scores with ties, any threshold, α = 0.1: counts and ε_lb follow the formula exactly.
    result = epsilon_lower_bound(AuditScores(in_scores, out_scores, trials="independent"), alpha=0.1, delta=delta,
                                 threshold_strategy="explicit", thresholds=[threshold])
    fp = sum(s > threshold for s in out_scores)
    fn = sum(s <= threshold for s in in_scores)
    assert (result.counts["FP"], result.counts["FN"]) == (fp, fn)
    assert result.eps_lb == pytest.approx(_expected(fp, fn, len(in_scores), len(out_scores), 0.05, delta, _cp),
                                          rel=1e-12, abs=1e-15)


def test_error_rate_formula_has_one_home_and_complement_is_jax_privacys_two_sided():
    from audits.epsilon_bounds import epsilon_from_error_rates

    # FPR 0.1, FNR 0.3, δ = 0.01: forward log(0.69/0.1), complementary log(0.89/0.3).
    assert epsilon_from_error_rates(0.1, 0.3, 0.01) == pytest.approx(math.log(0.69 / 0.1), rel=1e-15)
    assert epsilon_from_error_rates(0.3, 0.1, 0.01) == pytest.approx(math.log(0.69 / 0.1), rel=1e-15)
    assert epsilon_from_error_rates(0.3, 0.1, 0.01, complement=False) == pytest.approx(math.log(0.89 / 0.3))
    assert epsilon_from_error_rates(1.0, 1.0, 0.0) == -np.inf
    # An explicit rule whose complementary test is the informative one (FP = 2, FN = 12 of 20):
    # complement=False (jax_privacy epsilon_lower_bound(one_sided=True)) keeps only log(TPR_lb − δ) − log FPR_ub.
    scores = AuditScores(np.arange(12.0, 32.0), np.arange(2.0, 22.0) - 0.25, trials="independent")
    only_rule = epsilon_lower_bound(scores, alpha=0.05, threshold_strategy="explicit", thresholds=[23.5],
                                    complement=False)
    both = epsilon_lower_bound(scores, alpha=0.05, threshold_strategy="explicit", thresholds=[23.5])
    assert dict(both.counts) == {"TP": 8, "FP": 0, "TN": 20, "FN": 12}
    fpr_ub, fnr_ub = _cp(0, 20, 0.025), _cp(12, 20, 0.025)
    assert only_rule.eps_lb == pytest.approx(max(math.log(1 - fnr_ub) - math.log(fpr_ub), 0.0), rel=1e-12)
    assert both.eps_lb == pytest.approx(_expected(0, 12, 20, 20, 0.025, 0.0, _cp), rel=1e-12)
    assert both.eps_lb >= only_rule.eps_lb


# Known answers from google-deepmind/jax_privacy, jax_privacy/auditing/canary_score_auditor_test.py.
@pytest.mark.parametrize("complement", [False, True])
def test_raw_counts_zero_if_no_min_counts(complement):
    # test_epsilon_raw_counts_zero_if_no_min_counts: 10 scores per side, min_count = 12, δ = 1e-3.
    from audits.epsilon_bounds import epsilon_raw_counts

    result = epsilon_raw_counts(AuditScores(np.arange(10) + 0.5, np.arange(10)), min_count=12, delta=1e-3,
                                complement=complement)
    assert result.eps_lb == 0.0 and result.valid_as == "estimate"


@pytest.mark.parametrize("min_count", [1, 50])
@pytest.mark.parametrize("out_samples_ratio", [0.5, 1.0, 1.5])
def test_raw_counts_accurate_at_large_delta(min_count, out_samples_ratio):
    # test_epsilon_raw_counts_helper_accurate_large_delta: δ = 1e-2, 2·10^5 IN ~ N(1, 1) then OUT ~ N(0, 1) from
    # default_rng(0xBAD5EED); within 10% of the true ε of the Gaussian mechanism with μ = 1.
    import dpmech
    from audits.epsilon_bounds import epsilon_raw_counts

    rng = np.random.default_rng(0xBAD5EED)
    scores = AuditScores(rng.normal(1, 1, 200_000), rng.normal(0, 1, int(200_000 * out_samples_ratio)))
    estimate = epsilon_raw_counts(scores, min_count=min_count, delta=1e-2).eps_lb
    np.testing.assert_allclose(estimate, dpmech.gaussian_epsilon(1e-2, sigma=1.0, sensitivity=1.0), rtol=0.1)


@given(st.lists(st.integers(0, 5), min_size=2, max_size=30), st.lists(st.integers(0, 5), min_size=2, max_size=30),
       st.integers(1, 5), st.sampled_from([0.0, 0.05]))
def test_raw_counts_is_the_best_hull_ratio(in_scores, out_scores, min_count, delta):
    # Brute force over every pair of ROC points (any randomised rule lies on a chord between two of them):
    # the estimate is the best log(TPR − δ) − log FPR among randomised rules with FPR >= min_count / n_out.
    from audits import roc_curve
    from audits.epsilon_bounds import epsilon_raw_counts

    scores = AuditScores(in_scores, out_scores)
    fpr, tpr, _ = roc_curve(scores)
    floor = min_count / scores.num_out
    best = 0.0
    if min_count < scores.num_out:
        for weight in np.linspace(0, 1, 201):
            mixed_fpr = weight * fpr[:, None] + (1 - weight) * fpr[None, :]
            mixed_tpr = weight * tpr[:, None] + (1 - weight) * tpr[None, :]
            ok = (mixed_fpr >= floor - 1e-12) & (mixed_tpr > delta)
            if ok.any():
                best = max(best, float(np.max(np.log(mixed_tpr[ok] - delta) - np.log(mixed_fpr[ok]))))
    estimate = epsilon_raw_counts(scores, min_count=min_count, delta=delta).eps_lb
    assert estimate >= best - 1e-9
    assert estimate <= best + 0.05  # the brute force mixes on a grid of 201 weights
