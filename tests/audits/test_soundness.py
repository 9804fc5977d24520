"""Soundness: certified bounds must rarely exceed the truth, on null scores and at the claimed ε.

All checks use α = 0.05 and 200 repetitions whose data are drawn in one vectorised call per setting.
For the conservative (Bonferroni / split / explicit) estimators the observed rate is asserted <= α
directly. For the one-run test on exact randomized response, which is an almost exact test (true
rate 0.0492 at m = 1000, ε = 2), the rate is checked exactly by enumeration, and the Monte-Carlo
count only against the 99th percentile of Binomial(200, α).
"""

import math

import numpy as np
import pytest
from scipy import stats

import dpmech
from audits import AuditScores, epsilon_from_gdp, epsilon_lower_bound, epsilon_one_run
from audits.attacks import label_randomized_response_scores

ALPHA = 0.05
REPETITIONS = 200
ALLOWED = int(ALPHA * REPETITIONS)

TWO_SAMPLE_ESTIMATORS = {
    "cp-bonferroni": lambda s, seed: epsilon_lower_bound(s, alpha=ALPHA, delta=1e-5),
    "cp-bonferroni-two-sided": lambda s, seed: epsilon_lower_bound(s, alpha=ALPHA, two_sided=True),
    "cp-split": lambda s, seed: epsilon_lower_bound(s, alpha=ALPHA, threshold_strategy="split", rng=seed),
    "cp-explicit": lambda s, seed: epsilon_lower_bound(
        s, alpha=ALPHA, threshold_strategy="explicit", thresholds=[0.0, 1.0, 2.0]
    ),
    "jeffreys-bonferroni": lambda s, seed: epsilon_lower_bound(s, alpha=ALPHA, interval="jeffreys"),
    "gdp-bonferroni": lambda s, seed: epsilon_from_gdp(s, alpha=ALPHA, delta=1e-5),
    "gdp-bonferroni-one-direction": lambda s, seed: epsilon_from_gdp(s, alpha=ALPHA, two_sided=False),
    "gdp-split": lambda s, seed: epsilon_from_gdp(s, alpha=ALPHA, threshold_strategy="split", rng=seed),
    "gdp-explicit": lambda s, seed: epsilon_from_gdp(s, alpha=ALPHA, threshold_strategy="explicit", thresholds=[0.0, 1.0]),
}


@pytest.fixture(scope="module")
def null_scores():
    # IN and OUT both N(0, 1), N = 1000 per side, 200 repetitions.
    rng = np.random.default_rng(2024)
    return rng.normal(size=(REPETITIONS, 1000)), rng.normal(size=(REPETITIONS, 1000))


@pytest.mark.slow  # a Monte-Carlo rate check: 200 certified bounds per estimator
@pytest.mark.parametrize("name", sorted(TWO_SAMPLE_ESTIMATORS))
def test_null_scores_rarely_give_positive_epsilon(name, null_scores):
    estimator = TWO_SAMPLE_ESTIMATORS[name]
    in_scores, out_scores = null_scores
    positives = sum(estimator(AuditScores(i, o, trials="independent"), seed).eps_lb > 0 for seed, (i, o) in enumerate(zip(in_scores, out_scores)))
    assert positives <= ALLOWED


@pytest.fixture(scope="module")
def null_one_run():
    # m = 2000 canaries per run, each IN w.p. ½, every score N(0, 1) whatever S: 200 repetitions.
    rng = np.random.default_rng(2025)
    return rng.random((REPETITIONS, 2000)) < 0.5, rng.normal(size=(REPETITIONS, 2000))


def _one_run_positives(null_one_run, **kwargs):
    included, values = null_one_run
    count = 0
    for seed, (is_in, v) in enumerate(zip(included, values)):
        extra = {"rng": seed} if kwargs.get("threshold_strategy") == "split" else {}
        count += epsilon_one_run(AuditScores(v[is_in], v[~is_in], trials="independent"), alpha=ALPHA, **kwargs, **extra).eps_lb > 0
    return count


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"guessing": "one-sided"}, {"delta": 1e-5}, {"threshold_strategy": "split"}, {"analysis": "f-dp"},
     {"analysis": "f-dp", "delta": 1e-5},
     {"guessing": "one-sided", "guess_rules": "hull", "threshold_strategy": "split"}],
    ids=["two-sided", "one-sided", "delta", "split", "f-dp", "f-dp-delta", "hull-split"],
)
def test_null_one_run_rarely_gives_positive_epsilon(kwargs, null_one_run):
    assert _one_run_positives(null_one_run, **kwargs) <= ALLOWED


@pytest.mark.slow  # a Monte-Carlo rate check: 200 searches
def test_uncorrected_search_fails_the_null_check(null_scores, null_one_run):
    # The check has power: an uncorrected maximum over thresholds exceeds α on the same null data,
    # which is why it is labelled an estimate.
    in_scores, out_scores = null_scores
    gdp = [epsilon_from_gdp(AuditScores(i, o, trials="independent"), alpha=ALPHA, threshold_strategy="uncorrected") for i, o in
           zip(in_scores, out_scores)]
    assert sum(r.eps_lb > 0 for r in gdp) > ALLOWED and gdp[0].valid_as == "estimate"
    assert _one_run_positives(null_one_run, threshold_strategy="uncorrected") > ALLOWED


@pytest.mark.slow  # a Monte-Carlo rate check: 400 certified bounds
def test_clopper_pearson_at_the_claimed_epsilon():
    # Binary randomized response, exactly ε-DP with ε = 1 (δ = 0): P[output 1 | IN] = e/(1+e), P[1 | OUT] = 1/(1+e).
    # N = 10^4 per side, 200 repetitions; the single explicit threshold 0.5 is the optimal test.
    rng = np.random.default_rng(77)
    q = math.exp(1.0) / (1.0 + math.exp(1.0))
    in_scores = (rng.random((REPETITIONS, 10_000)) < q).astype(float)
    out_scores = (rng.random((REPETITIONS, 10_000)) < 1.0 - q).astype(float)
    explicit = [epsilon_lower_bound(AuditScores(i, o, trials="independent"), alpha=ALPHA, threshold_strategy="explicit", thresholds=[0.5])
                for i, o in zip(in_scores, out_scores)]
    bonferroni = [epsilon_lower_bound(AuditScores(i, o, trials="independent"), alpha=ALPHA) for i, o in zip(in_scores, out_scores)]
    assert sum(r.eps_lb > 1.0 for r in explicit) <= ALLOWED
    assert sum(r.eps_lb > 1.0 for r in bonferroni) <= ALLOWED
    assert np.median([r.eps_lb for r in explicit]) > 0.9  # and the check is not vacuous


@pytest.mark.slow  # a Monte-Carlo rate check: 200 certified bounds
def test_gdp_at_the_claimed_epsilon():
    # Gaussian mechanism calibrated by dpmech to (ε = 4, δ = 1e-5): IN ~ N(μ, 1), OUT ~ N(0, 1), N = 2000 per side.
    mu = 1.0 / dpmech.calibrate_gaussian(4.0, 1e-5)
    rng = np.random.default_rng(78)
    in_scores, out_scores = rng.normal(mu, 1, (REPETITIONS, 2000)), rng.normal(0, 1, (REPETITIONS, 2000))
    results = [epsilon_from_gdp(AuditScores(i, o, trials="independent"), alpha=ALPHA, delta=1e-5) for i, o in zip(in_scores, out_scores)]
    assert sum(r.eps_lb > 4.0 for r in results) <= ALLOWED
    assert sum(r.mu_lb > mu for r in results) <= ALLOWED


def _all_guessed(num_canaries, correct):
    """Scores of m canaries, all guessed (cuts at ±0.5), exactly `correct` of them right."""
    in_scores = np.r_[np.ones(correct - 1), -np.ones(num_canaries - correct)]
    return AuditScores(in_scores, [-1.0], trials="independent")


@pytest.mark.parametrize("delta", [0.0, 1e-5])
# Steinke, Nasr & Jagielski's (2023) analysis and the f-DP analysis on the (ε, δ) trade-off (Mahloujifar et al.
# 2024); each exceeds ε at a rate above its floor, so the check is not vacuous.
@pytest.mark.parametrize("analysis,floor", [("steinke", 0.03), ("f-dp", 0.02)])
def test_one_run_at_the_claimed_epsilon_exactly(delta, analysis, floor):
    # Exact enumeration: under ε-DP randomized response (ε = 2, m = 1000, all guessed) v ~ Binomial(m, q);
    # P[ε_lb > ε] = P[v >= v*] <= α with v* the smallest count whose bound exceeds ε.
    m, epsilon = 1000, 2.0
    q = math.exp(epsilon) / (1 + math.exp(epsilon))

    def exceeds(v):
        return epsilon_one_run(_all_guessed(m, v), alpha=ALPHA, delta=delta, threshold_strategy="explicit",
                               guess_thresholds=[(-0.5, 0.5)], analysis=analysis).eps_lb > epsilon

    low, high = 1, m  # bisection on the monotone map v -> [ε_lb(v) > ε]
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if exceeds(middle) else (middle + 1, high)
    assert not exceeds(low - 1) and exceeds(low)
    rate = stats.binom.sf(low - 1, m, q)
    assert floor < rate <= ALPHA


def test_one_run_at_the_claimed_epsilon_monte_carlo():
    # Label RR, exactly ε-DP with ε = 2, m = 1000 canaries, δ = 0, 200 repetitions (an almost exact test).
    rng = np.random.default_rng(79)
    bounds = [epsilon_one_run(label_randomized_response_scores(1000, 2.0, 2, rng), alpha=ALPHA, threshold_strategy="explicit",
                              guess_thresholds=[(-0.5, 0.5)]).eps_lb for _ in range(REPETITIONS)]
    assert sum(b > 2.0 for b in bounds) <= stats.binom.ppf(0.99, REPETITIONS, ALPHA)


def test_fdp_gaussian_one_run_at_the_claimed_epsilon():
    # One run of m = 1000 canaries, each IN w.p. ½, score = μ·[IN] + N(0, 1): a Gaussian mechanism per canary,
    # μ = 1/σ(ε = 2, δ = 1e-5). The Gaussian-curve f-DP analysis with one explicit rule (cuts ±0.5·μ + 1.5)
    # may exceed ε = 2 with probability <= α: 100 repetitions, checked against the 99th percentile of Bin(100, α).
    epsilon, delta = 2.0, 1e-5
    mu = 1.0 / dpmech.calibrate_gaussian(epsilon, delta)
    rng = np.random.default_rng(80)
    bounds = []
    for _ in range(100):
        is_in = rng.random(1000) < 0.5
        values = mu * is_in + rng.normal(size=1000)
        result = epsilon_one_run(AuditScores(values[is_in], values[~is_in], trials="independent"), alpha=ALPHA,
                                 delta=delta, analysis="f-dp-gaussian", threshold_strategy="explicit",
                                 guess_thresholds=[(mu / 2 - 1.5, mu / 2 + 1.5)])
        bounds.append(result.eps_lb)
    assert sum(b > epsilon for b in bounds) <= stats.binom.ppf(0.99, 100, ALPHA)
    assert np.median(bounds) > 0.5  # the check is not vacuous
