"""The statistic of the pipeline canary audits: one threshold fixed by the pair, releases sampled in blocks.

:func:`audits.attacks.pipelines.record.gdp_bound_at_midpoint` bounds μ (Nasr et al. 2023) at the one rule
"IN if the projection exceeds half the distance between the two worlds", fixed before any release is
drawn; the scan over ranks it replaces spent α on up to 200 hypotheses. Both are certified under the GDP-shape
assumption, and a μ lower bound that covers the truth at the stated rate is what makes either sound.
"""

import dataclasses

import numpy as np
import pytest
from scipy import stats

from audits.attacks.pipelines import fedauxfdp as fedauxfdp_audit
from audits.attacks.pipelines import pipeline_parts
from audits.attacks.pipelines.record import gdp_bound_at_midpoint, projected_scores
from audits.gdp import epsilon_from_gdp
from audits.scores import AuditScores
from trainers.data import load_dataset
from trainers.pipelines.targets import pipeline_config

ALPHA, DELTA = 0.05 / 3, 1e-5  # the FedAUXfdp audit's share of α for its GDP bound


def gaussian_scores(mu: float, trials: int, rng: np.random.Generator) -> AuditScores:
    """Projections of whitened Gaussian releases of a pair at distance μ: OUT ~ N(0, 1), IN ~ N(μ, 1)."""
    return AuditScores(rng.normal(mu, 1.0, trials), rng.normal(0.0, 1.0, trials), higher_is_in=True,
                       trials="independent")


def test_midpoint_rule_bounds_mu_closer_than_the_scan_it_replaces():
    # μ = 0.16 is FedAUXfdp's canary at (1, 1e-5) on digits; N = 10⁵ releases per side.
    mu, trials = 0.16, 100_000
    midpoint_gaps, scan_gaps = [], []
    for seed in range(5):
        scores = gaussian_scores(mu, trials, np.random.default_rng(seed))
        midpoint = gdp_bound_at_midpoint(scores, mu, alpha=ALPHA, delta=DELTA)
        scan = epsilon_from_gdp(scores, alpha=ALPHA, delta=DELTA)
        assert midpoint.valid_as == scan.valid_as == "certified"
        assert midpoint.num_hypotheses == 2 and scan.num_hypotheses > 100  # 2 bounds × ≤ 50 levels × 2 directions
        midpoint_gaps.append((mu - midpoint.mu_lb) * np.sqrt(trials))
        scan_gaps.append((mu - scan.mu_lb) * np.sqrt(trials))
    # 2·z(1 − α/4)·1.25 = 6.0 expected for the midpoint (record.gdp_bound_at_midpoint), about 9 for the scan.
    assert 0.0 < np.mean(midpoint_gaps) < 7.5 < np.mean(scan_gaps)


def test_midpoint_rule_covers_mu_at_its_confidence():
    # 1 − α coverage of μ by μ_lb over 400 independent audits of N = 2,000 per side; α = 0.05 here so
    # that misses are frequent enough to count. The count of misses must stay below Binomial(400, α)'s
    # 0.999 quantile (the rule is conservative, so fewer is fine); a rule that ignored its own
    # uncertainty (μ_lb = the plug-in estimate) would miss about half the time.
    alpha, mu, trials, repetitions = 0.05, 0.3, 2_000, 400
    rng = np.random.default_rng(31)
    misses = sum(gdp_bound_at_midpoint(gaussian_scores(mu, trials, rng), mu, alpha=alpha, delta=DELTA).mu_lb > mu
                 for _ in range(repetitions))
    assert misses <= stats.binom.ppf(0.999, repetitions, alpha)


def test_midpoint_rule_catches_a_release_with_half_the_noise():
    # Scores of a mechanism that adds half the σ its claim (μ = 0.3) is calibrated for: the pair sits 2μ apart in
    # the claim's whitened units, and the rule at the claimed pair's midpoint bounds μ above the claim.
    mu, trials = 0.3, 20_000
    rng = np.random.default_rng(5)
    halved = AuditScores(rng.normal(mu, 0.5, trials), rng.normal(0.0, 0.5, trials), higher_is_in=True,
                         trials="independent")
    assert gdp_bound_at_midpoint(halved, mu, alpha=ALPHA, delta=DELTA).mu_lb > mu


def test_midpoint_rule_refuses_a_distance_that_is_not_positive():
    scores = gaussian_scores(0.1, 100, np.random.default_rng(0))
    for distance in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="distance"):
            gdp_bound_at_midpoint(scores, distance, alpha=ALPHA, delta=DELTA)


def test_projected_scores_of_blocks_equal_the_projection_of_their_concatenation():
    rng = np.random.default_rng(2)
    centre_without, centre_with = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    out_releases, in_releases = rng.normal(size=(10, 3, 4)), rng.normal(size=(10, 3, 4))
    whole = projected_scores(out_releases, in_releases, centre_without, centre_with)
    blocks = projected_scores(iter(np.split(out_releases, [3, 7])), iter(np.split(in_releases, [5])),
                              centre_without, centre_with)
    # The same products, up to BLAS summing a matrix of another height in another order (an ulp or two).
    np.testing.assert_allclose(blocks.out_scores, whole.out_scores, rtol=1e-14, atol=0.0)
    np.testing.assert_allclose(blocks.in_scores, whole.in_scores, rtol=1e-14, atol=0.0)


@pytest.fixture(scope="module")
def digits():
    return load_dataset("digits")


def test_fedauxfdp_audit_samples_every_release_in_blocks_of_the_release_step(digits, monkeypatch):
    # Blocks of 110 releases (110 × 187 parameters) for N = 300: three calls of the release step per world.
    config = pipeline_config("fedauxfdp", 1.0, 1e-5)
    calls = []
    original = fedauxfdp_audit.pipeline.release_client_heads

    def counted(client, heads, mechanisms, rng):
        calls.append(heads.score_head.shape[0])
        return original(client, heads, mechanisms, rng)

    monkeypatch.setattr(fedauxfdp_audit, "RELEASE_BLOCK_ELEMENTS", 110 * 187)
    monkeypatch.setattr(fedauxfdp_audit.pipeline, "release_client_heads", counted)
    audit = pipeline_parts("fedauxfdp")[0](digits, config, seed=0, trials=300, num_shadows=16)
    assert calls == [110, 110, 80] * 2
    assert audit.scores.in_scores.size == audit.scores.out_scores.size == 300
    # Whitened releases: the OUT projections are N(0, 1) draws (a Kolmogorov–Smirnov test at 1e-3).
    assert stats.kstest(audit.scores.out_scores, "norm").pvalue > 1e-3
    assert audit.result.threshold_strategy == "explicit" and audit.valid_as == "certified"
    assert not audit.violation


@pytest.mark.slow  # 10⁶ FedAUXfdp releases per world and 10⁵ DP-Helmet averages: about 22 s of CPU
def test_canary_audits_reach_half_the_claim_at_epsilon_one(digits):
    fedauxfdp = pipeline_parts("fedauxfdp")[0](digits, pipeline_config("fedauxfdp", 1.0, 1e-5), seed=1,
                                               trials=1_000_000, num_shadows=32)
    dphelmet = pipeline_parts("dphelmet")[0](digits, pipeline_config("dphelmet", 1.0, 1e-5), seed=0, trials=100_000)
    for audit, ceiling in ((fedauxfdp, "epsilon_of_canary_mu"), (dphelmet, "epsilon_of_scored_canary_mu")):
        assert audit.valid_as == "certified" and audit.method == "gdp"
        assert 0.5 * audit.eps_claimed <= audit.eps_lb <= audit.measurements[ceiling] <= audit.eps_claimed
        assert not audit.violation
    assert dataclasses.asdict(fedauxfdp.threat_model)["trials_per_side"] == 1_000_000
