"""AuditScores validation and the one-sided binomial bounds against closed forms, scipy and exact enumeration."""

import numpy as np
import pytest
from scipy import stats

import audits
import audits.lira
import audits.loss
from audits import (
    AuditScores,
    clopper_pearson_lower,
    clopper_pearson_upper,
    jeffreys_upper,
    rank_levels,
)


def test_scores_are_read_only_copies():
    source = np.array([1.0, 2.0])
    scores = AuditScores(source, [0.0], higher_is_in=False, trials="independent")
    source[0] = 99.0
    assert scores.in_scores[0] == 1.0
    with pytest.raises(ValueError):
        scores.in_scores[0] = 5.0
    with pytest.raises(AttributeError):
        scores.higher_is_in = True
    in_oriented, out_oriented = scores.oriented()
    np.testing.assert_array_equal(in_oriented, [-1.0, -2.0])
    np.testing.assert_array_equal(out_oriented, [-0.0])


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"in_scores": [], "out_scores": [1.0]}, "in_scores"),
        ({"in_scores": [1.0], "out_scores": [np.nan]}, "out_scores"),
        ({"in_scores": [[1.0, 2.0]], "out_scores": [1.0]}, "in_scores"),
        ({"in_scores": ["a"], "out_scores": [1.0]}, "in_scores"),
        ({"in_scores": [1.0], "out_scores": [np.inf]}, "out_scores"),
        ({"in_scores": [1.0], "out_scores": [1.0], "higher_is_in": 1}, "higher_is_in"),
    ],
)
def test_bad_scores_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        AuditScores(**kwargs, trials="independent")


def test_split_is_reproducible_and_partitions():
    scores = AuditScores(np.arange(11.0), -np.arange(7.0), trials="independent")
    first, second = scores.split(5)
    again, _ = scores.split(np.random.default_rng(5))
    np.testing.assert_array_equal(first.in_scores, again.in_scores)
    assert (first.num_in, second.num_in, first.num_out, second.num_out) == (5, 6, 3, 4)
    np.testing.assert_array_equal(np.sort(np.r_[first.in_scores, second.in_scores]), np.arange(11.0))
    with pytest.raises(ValueError, match="rng"):
        scores.split(None)


def _safe_and_close(bound, exact, side):
    # dpmech.verify's bounds sit on the safe side of the exact quantile, by at most about a relative 1e-4 (allowed: 1e-3).
    bound, exact = np.asarray(bound, dtype=float), np.asarray(exact, dtype=float)
    if side == "upper":
        assert np.all(bound >= exact) and np.all(bound <= exact * (1 + 1e-3))
    else:
        assert np.all(bound <= exact) and np.all(bound >= exact * (1 - 1e-3))


@pytest.mark.parametrize("n", [1, 5, 40])
@pytest.mark.parametrize("a", [0.05, 1e-4])
def test_clopper_pearson_closed_forms(n, a):
    # Beta(1, n) and Beta(n, 1) have closed-form quantiles.
    _safe_and_close(clopper_pearson_upper(0, n, a), 1.0 - a ** (1.0 / n), "upper")
    _safe_and_close(clopper_pearson_lower(n, n, a), a ** (1.0 / n), "lower")
    assert clopper_pearson_upper(n, n, a) == 1.0
    assert clopper_pearson_lower(0, n, a) == 0.0
    if n > 1:
        _safe_and_close(clopper_pearson_upper(n - 1, n, a), (1.0 - a) ** (1.0 / n), "upper")


def test_bounds_match_scipy_beta_quantiles():
    k, n, a = np.array([0, 3, 7, 19]), 20, 0.025
    _safe_and_close(clopper_pearson_upper(k, n, a), stats.beta.ppf(1 - a, k + 1, n - k), "upper")
    _safe_and_close(clopper_pearson_lower(k[1:], n, a), stats.beta.ppf(a, k[1:], n - k[1:] + 1), "lower")
    np.testing.assert_allclose(jeffreys_upper(k, n, a), stats.beta.ppf(1 - a, k + 0.5, n - k + 0.5), rtol=1e-14)


def test_clopper_pearson_covers_exactly_and_jeffreys_does_not():
    # Exact non-coverage P_p[p > bound(K)] by enumerating K ~ Binomial(n, p), n = 30, a = 0.05.
    n, a = 30, 0.05
    k = np.arange(n + 1)
    p = np.linspace(0.001, 0.999, 999)[:, None]
    pmf = stats.binom.pmf(k, n, p)
    cp_miss = (pmf * (p > clopper_pearson_upper(k, n, a))).sum(axis=1)
    jeffreys_miss = (pmf * (p > jeffreys_upper(k, n, a))).sum(axis=1)
    assert cp_miss.max() <= a
    assert jeffreys_miss.max() > a  # hence Jeffreys-based results are labelled "estimate"


@pytest.mark.parametrize("bad, name", [((-1, 5, 0.1), "successes"), ((6, 5, 0.1), "successes"),
                                       ((1, 0, 0.1), "trials"), ((1, 5, 0.0), "alpha"), ((1, 5, 1.5), "alpha")])
def test_bad_bound_arguments(bad, name):
    with pytest.raises(ValueError, match=name):
        jeffreys_upper(*bad)


def test_clopper_pearson_has_one_home():
    import dpmech.verify

    assert clopper_pearson_upper is dpmech.verify.clopper_pearson_upper
    assert clopper_pearson_lower is dpmech.verify.clopper_pearson_lower


@pytest.mark.parametrize("alpha", [1e-6, 1e-18, 1e-40])
def test_tiny_alpha_keeps_its_meaning(alpha):
    # Perfectly separated scores, n = 1000 per side, one explicit threshold, δ = 0: FP = FN = 0, so with
    # a = α/2, FPR_ub = FNR_ub = 1 − a^(1/n) and ε_lb = log(1 − FNR_ub) − log(FPR_ub), checked at 50 digits.
    # The former copy, Beta.ppf(1 − a), rounds 1 − a to 1 for a < 1e-16: FPR_ub = 1 and ε_lb = 0.
    import mpmath

    n = 1000
    scores = AuditScores(np.full(n, 1.0), np.full(n, 0.0), trials="independent")
    result = audits.epsilon_lower_bound(scores, alpha=alpha, threshold_strategy="explicit", thresholds=[0.5])
    with mpmath.workdps(50):
        root = mpmath.mpf(alpha / 2) ** (mpmath.mpf(1) / n)
        expected = float(mpmath.log(root) - mpmath.log(1 - root))
    assert expected * (1 - 1e-3) <= result.eps_lb <= expected and result.eps_lb > 0.0
    jeffreys = audits.epsilon_lower_bound(scores, alpha=alpha, interval="jeffreys", threshold_strategy="explicit",
                                          thresholds=[0.5])
    assert jeffreys.eps_lb > result.eps_lb  # Jeffreys is the narrower (uncertified) bound, still finite


@pytest.mark.parametrize("n", [1, 7, 50, 51, 10_000])
def test_rank_levels_depend_only_on_n(n):
    levels = rank_levels(n, 50)
    assert levels.size == n if n <= 50 else 30 <= levels.size <= 50
    assert levels[0] == 0 and levels[-1] == n - 1
    assert np.all(np.diff(levels) > 0)


_CERTIFIABLE = {
    "cp-bonferroni": lambda s: audits.epsilon_lower_bound(s, delta=1e-5),
    "cp-split": lambda s: audits.epsilon_lower_bound(s, threshold_strategy="split", rng=3),
    "cp-explicit": lambda s: audits.epsilon_lower_bound(s, threshold_strategy="explicit", thresholds=[0.5]),
    "gdp-bonferroni": lambda s: audits.epsilon_from_gdp(s),
    "gdp-split": lambda s: audits.epsilon_from_gdp(s, threshold_strategy="split", rng=3),
    "one-run": lambda s: audits.epsilon_one_run(s),
    "one-run-explicit": lambda s: audits.epsilon_one_run(s, threshold_strategy="explicit",
                                                         guess_thresholds=[(-0.5, 0.5)]),
}


@pytest.mark.parametrize("name", sorted(_CERTIFIABLE))
def test_only_declared_independent_trials_are_certified(name):
    # Same scores (IN ~ N(2, 1), OUT ~ N(0, 1), 400 per side): the number does not depend on the
    # declaration, the label does. Undeclared scores (the default) and natural ones are estimates.
    rng = np.random.default_rng(11)
    in_scores, out_scores = rng.normal(2, 1, 400), rng.normal(0, 1, 400)
    estimator = _CERTIFIABLE[name]
    independent = estimator(AuditScores(in_scores, out_scores, trials="independent"))
    natural = estimator(AuditScores(in_scores, out_scores, trials="natural"))
    undeclared = estimator(AuditScores(in_scores, out_scores))
    assert independent.valid_as == "certified" and independent.eps_lb > 0
    assert natural.valid_as == undeclared.valid_as == "estimate"
    assert natural.eps_lb == undeclared.eps_lb == independent.eps_lb
    assert "trials='natural'" in natural.assumption and "trials='natural'" not in independent.assumption


def test_natural_member_attacks_are_labelled_natural():
    rng = np.random.default_rng(12)
    logits, labels = rng.normal(size=(30, 3)), rng.integers(3, size=30)
    assert audits.loss.loss_attack(logits[:15], labels[:15], logits[15:], labels[15:]).trials == "natural"
    confidences, membership = rng.normal(size=(8, 20)), np.tile([True, False], (8, 10))
    membership[4:] = ~membership[4:]
    _, lira = audits.lira.leave_one_out_scores(confidences, membership, fixed_variance=True)
    assert lira.trials == "natural"
    assert audits.epsilon_lower_bound(lira, threshold_strategy="split", rng=0).valid_as == "estimate"


def test_split_keeps_the_trials_declaration_and_bad_trials_are_refused():
    first, second = AuditScores(np.arange(4.0), np.arange(4.0), trials="independent").split(0)
    assert first.trials == second.trials == "independent"
    for bad in ("randomised", None, True):
        with pytest.raises(ValueError, match="trials"):
            AuditScores([1.0], [0.0], trials=bad)


def test_clopper_pearson_upper_is_the_beta_quantile_moved_slightly_to_the_safe_side():
    from scipy import stats

    from dpmech.verify import clopper_pearson_upper

    for k, n, a in [(0, 20, 0.025), (5, 20, 0.025), (12, 20, 0.0125), (3, 1000, 1e-6)]:
        exact = stats.beta.ppf(1 - a, k + 1, n - k)
        assert exact <= clopper_pearson_upper(k, n, a) <= exact * (1 + 1e-3)
