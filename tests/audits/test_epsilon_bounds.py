"""Clopper–Pearson / Jeffreys ε lower bound: exact formula checks on small hand-built cases."""

import math

import numpy as np
import pytest
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
    return 1.0 if k == n else stats.beta.ppf(1 - a, k + 1, n - k)


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


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

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
