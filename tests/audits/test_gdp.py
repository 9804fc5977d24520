"""GDP μ lower bound (Nasr et al. 2023): formula, the PR #270 pitfall, known answers and bug detection."""

import numpy as np
import pytest
from scipy import special

import dpmech
from audits import AuditScores, clopper_pearson_upper, epsilon_from_gdp, rank_levels

HAND = AuditScores(np.arange(15.0, 35.0), np.arange(20.0), trials="independent")


def _cp(k, n, a):
    # dpmech.verify's bound: scipy's Beta quantile moved to the safe side and confirmed by its log tails
    # (at most ~1e-4 relative above it; tests/audits/test_scores_and_intervals.py checks both).
    return float(clopper_pearson_upper(k, n, a))


def test_explicit_threshold_matches_hand_formula_in_both_directions():
    # N = 20 per side, α = 0.05, δ = 1e-5; one threshold × two directions × two rates: a = α / 4.
    a = 0.05 / 4
    # IN = 15..34, OUT = 0..19. "IN if score > 17.5": FP = 2, FN = 3. "IN if score < 17.5": FP = 18, FN = 17.
    forward = -special.ndtri(_cp(2, 20, a)) - special.ndtri(_cp(3, 20, a))
    reverse = -special.ndtri(_cp(18, 20, a)) - special.ndtri(_cp(17, 20, a))
    result = epsilon_from_gdp(HAND, alpha=0.05, delta=1e-5, threshold_strategy="explicit", thresholds=[17.5])
    assert result.mu_lb == pytest.approx(max(forward, reverse, 0.0), rel=1e-12) and forward > 0 > reverse
    assert result.eps_lb == dpmech.gaussian_epsilon(1e-5, sigma=1.0, sensitivity=result.mu_lb)
    assert result.num_hypotheses == 4 and result.valid_as == "certified" and "GDP-shaped" in result.assumption


def _shortcut_mu(scores, alpha, delta, num_thresholds=50):
    """The pre-PR #270 jax_privacy rule: |Φ⁻¹(1 − FPR_ub) − Φ⁻¹(FNR_ub)| on forward bounds only (WRONG).

    As there, thresholds with max(FPR_ub, FNR_ub) >= 1 − δ are dropped."""
    levels = rank_levels(scores.num_out, num_thresholds)
    cuts = np.sort(scores.out_scores)[::-1][levels]
    fn = np.searchsorted(np.sort(scores.in_scores), cuts, side="right")
    a = alpha / (2 * levels.size)
    fpr_ub = clopper_pearson_upper(levels, scores.num_out, a)
    fnr_ub = clopper_pearson_upper(fn, scores.num_in, a)
    kept = np.maximum(fpr_ub, fnr_ub) < 1 - delta
    return float(np.max(np.abs(-special.ndtri(fpr_ub[kept]) - special.ndtri(fnr_ub[kept]))))


@pytest.mark.parametrize("n", [50, 1000])
def test_reverse_direction_shortcut_is_refuted_on_null_scores(n):
    # Null: IN and OUT both N(0, 1), N = n per side, α = 0.05, δ = 1e-5; the true μ is 0.
    rng = np.random.default_rng(270)
    scores = AuditScores(rng.normal(size=n), rng.normal(size=n), trials="independent")
    assert epsilon_from_gdp(scores, alpha=0.05, delta=1e-5).mu_lb == 0.0
    shortcut = _shortcut_mu(scores, 0.05, 1e-5)
    assert dpmech.gaussian_epsilon(1e-5, sigma=1.0, sensitivity=shortcut) > 3.0


@pytest.mark.parametrize("mu", [1.0, 2.0, 3.0])
def test_known_answer_white_box_gaussian(mu):
    # IN ~ N(μ, 1), OUT ~ N(0, 1), N = 10^4 per side, α = 0.05, δ = 1e-5, 21 seeds.
    # Target μ_lb/μ >= 0.90 (auditing.md §3.6 gives 0.91–0.94 as medians of 20 repetitions):
    # asserted on the median; a single seed falls below 0.90 about 10% of the time at μ = 1.
    rng = np.random.default_rng(int(100 * mu))
    ratios = np.array([
        epsilon_from_gdp(AuditScores(rng.normal(mu, 1, 10_000), rng.normal(0, 1, 10_000), trials="independent"), alpha=0.05, delta=1e-5).mu_lb
        for _ in range(21)
    ]) / mu
    assert np.median(ratios) >= 0.90
    assert ratios.min() >= 0.85
    assert ratios.max() < 1.0


@pytest.mark.parametrize("epsilon", [1.0, 2.0, 4.0])
def test_halved_sigma_is_detected(epsilon):
    # Claimed (ε, δ = 1e-5) with σ from dpmech; the mechanism uses σ/2. Sensitivity 1, N = 10^4 per side, α = 0.05.
    sigma = dpmech.calibrate_gaussian(epsilon, 1e-5)
    rng = np.random.default_rng(7)
    scores = AuditScores(rng.normal(1.0, sigma / 2, 10_000), rng.normal(0.0, sigma / 2, 10_000), trials="independent")
    result = epsilon_from_gdp(scores, alpha=0.05, delta=1e-5)
    assert result.mu_lb > 1.0 / sigma  # refutes the μ-GDP claim with no shape assumption
    assert result.eps_lb > epsilon
    honest = AuditScores(rng.normal(1.0, sigma, 10_000), rng.normal(0.0, sigma, 10_000), trials="independent")
    assert epsilon_from_gdp(honest, alpha=0.05, delta=1e-5).eps_lb < epsilon


def test_uncorrected_and_jeffreys_are_estimates():
    rng = np.random.default_rng(9)
    scores = AuditScores(rng.normal(1, 1, 500), rng.normal(0, 1, 500), trials="independent")
    assert epsilon_from_gdp(scores, threshold_strategy="uncorrected").valid_as == "estimate"
    assert epsilon_from_gdp(scores, interval="jeffreys").valid_as == "estimate"
    assert epsilon_from_gdp(scores, threshold_strategy="split", rng=1).num_hypotheses == 2


@pytest.mark.parametrize("kwargs, name", [({"delta": 0.0}, "delta"), ({"alpha": -0.1}, "alpha"),
                                          ({"threshold_strategy": "none"}, "threshold_strategy")])
def test_bad_arguments_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        epsilon_from_gdp(HAND, **kwargs)


@pytest.mark.parametrize("mu", [0.1, 1.0, 3.0])
def test_uncorrected_search_matches_jax_privacy_tight_test(mu):
    # google-deepmind/jax_privacy, jax_privacy/auditing/canary_score_auditor_test.py,
    # test_epsilon_from_gdp_tight: α = 0.1, δ = 0.05, 10^5 IN ~ N(μ, 1) and 10^5 OUT ~ N(0, 1) drawn in that
    # order from default_rng(0xBAD5EED); ε within 5% of the true ε (0 at μ = 0.1, where δ(0) = 0.040 < δ).
    # jax_privacy's search uses α/2 per rate over every threshold, i.e. our "uncorrected" estimate.
    rng = np.random.default_rng(0xBAD5EED)
    scores = AuditScores(rng.normal(mu, 1, 100_000), rng.normal(0, 1, 100_000), trials="independent")
    result = epsilon_from_gdp(scores, alpha=0.1, delta=0.05, threshold_strategy="uncorrected")
    true_epsilon = dpmech.gaussian_epsilon(0.05, sigma=1.0, sensitivity=mu)
    np.testing.assert_allclose(result.eps_lb, true_epsilon, rtol=0.05)
    assert result.valid_as == "estimate"


def test_one_direction_spends_alpha_on_half_the_hypotheses():
    # IN ~ N(1, 1), OUT ~ N(0, 1), 2000 per side: the forward rule carries the signal, so testing it alone
    # (half the Bonferroni hypotheses) gives a larger μ_lb; on reversed scores only the two-sided test sees it.
    rng = np.random.default_rng(21)
    in_scores, out_scores = rng.normal(1, 1, 2000), rng.normal(0, 1, 2000)
    forward = AuditScores(in_scores, out_scores, trials="independent")
    one = epsilon_from_gdp(forward, two_sided=False)
    both = epsilon_from_gdp(forward)
    assert one.num_hypotheses * 2 == both.num_hypotheses and one.mu_lb > both.mu_lb > 0.7
    reverse = AuditScores(-in_scores, -out_scores, trials="independent")
    assert epsilon_from_gdp(reverse, two_sided=False).mu_lb == 0.0
    assert epsilon_from_gdp(reverse).mu_lb == pytest.approx(both.mu_lb)
