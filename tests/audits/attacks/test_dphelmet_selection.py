"""The DP-Helmet canary audit of a round with client selection (k of n users, or each with probability q):
it samples the selection in every trial and bounds the amplified claim with the assumption-free
Clopper–Pearson estimator, never above the claim, while the same audit blind to the selection refutes it."""

import math

import numpy as np
import pytest

from audits.attacks.pipelines.dphelmet import audit_dphelmet, planned_threshold
from trainers.pipelines import dphelmet
from trainers.pipelines.dphelmet import DpHelmetConfig, run_dphelmet
from tests.trainers.digits_fixtures import digits  # noqa: F401

UNIFORM = DpHelmetConfig(privacy_unit="user", epsilon=2.0, clients_per_round=3)
POISSON = DpHelmetConfig(privacy_unit="user", epsilon=2.0, participation_probability=0.3)
TRIALS = 4000


CONFIGS = {"uniform": UNIFORM, "poisson": POISSON}
# Seeds 1 and 2 repeat seed 0's checks (about 1.5 s of CPU per audit): the slow set runs them.
SEEDS = [0, *(pytest.param(seed, marks=pytest.mark.slow) for seed in (1, 2))]


@pytest.fixture(scope="module")
def audits(digits):
    """audits[name, seed]: the audit of selection ``name`` at ``seed``, TRIALS trials per side, run once per module."""
    class Audits(dict):
        def __missing__(self, key):
            name, seed = key
            self[key] = audit_dphelmet(digits, CONFIGS[name], seed=seed, trials=TRIALS)
            return self[key]

    return Audits()


@pytest.mark.parametrize("name", ["uniform", "poisson"])
@pytest.mark.parametrize("seed", SEEDS)
def test_the_bound_never_exceeds_the_amplified_claim(audits, name, seed):
    audit = audits[name, seed]
    measurements = audit.measurements
    assert audit.method == "clopper-pearson" and audit.valid_as == "certified"
    assert audit.mu_claimed is None and audit.mu_lb is None  # the mixture is not GDP-shaped: no μ is claimed
    assert audit.result.threshold_strategy == "explicit" and audit.result.thresholds == (measurements["planned_threshold"],)
    assert 0.0 <= audit.eps_lb <= audit.eps_claimed and not audit.violation
    # The claim is the amplified one, below the selected users' own release; the scored pair lies inside it.
    assert measurements["epsilon_of_scored_canary"] <= audit.eps_claimed < measurements["epsilon_claimed_without_selection"]
    assert audit.release_checks["average_sensitivity"]["fraction"] <= 1.0


@pytest.mark.parametrize("name, config", [("uniform", UNIFORM), ("poisson", POISSON)])
def test_the_audit_claims_the_runs_amplified_guarantee(digits, audits, name, config):
    tight = run_dphelmet(digits, config, seed=0).guarantees["tight"]
    assert audits[name, 0].eps_claimed == tight.epsilon
    assert ("add/remove-one" if name == "poisson" else "replace-one") in audits[name, 0].claim


@pytest.mark.parametrize("name", ["uniform", "poisson"])
@pytest.mark.parametrize("seed", SEEDS)
def test_the_canary_takes_part_with_the_selection_law(audits, name, seed):
    # k/n = q = 0.3: the fraction of IN trials with user 0 selected is within 5 standard errors of it (an audit
    # that always or never selected the canary fails).
    measurements = audits[name, seed].measurements
    law = measurements["participation_law"]
    assert law == 0.3
    tolerance = 5 * math.sqrt(law * (1 - law) / TRIALS)
    assert abs(measurements["canary_participation_in"] - law) <= tolerance
    # Uniform: user 0 is in both worlds and is selected as often; Poisson: it is absent from the OUT world.
    expected_out = law if name == "uniform" else 0.0
    assert abs(measurements["canary_participation_out"] - expected_out) <= tolerance


@pytest.mark.parametrize("seed", SEEDS)
def test_poisson_releases_carry_the_same_noise_whoever_takes_part(audits, seed):
    # OUT releases lack user 0, so every OUT score is pure noise of the release's scale, whatever m (0 included).
    audit = audits["poisson", seed]
    assert np.std(audit.scores.out_scores) == pytest.approx(audit.measurements["release_noise_std"], rel=0.05)
    assert not audit.release_checks["average_noise_scale"]["under_noised"]


@pytest.mark.slow
def test_the_same_audit_blind_to_the_selection_refutes_the_amplified_claim(digits, monkeypatch):
    # The soundness tests above could fail: with the canary user selected in every trial (selection ignored),
    # the same estimator finds ε_lb above the amplified claim. All users honest (t = 1), so the scored noise is
    # the accounted noise; ε = 1 at q = 0.05, whose selected release alone is ε ≈ 4.3.
    config = DpHelmetConfig(privacy_unit="user", epsilon=1.0, honest_fraction=1.0, participation_probability=0.05)
    sampled = audit_dphelmet(digits, config, seed=0, trials=20_000)
    assert sampled.eps_lb <= sampled.eps_claimed < 1.0 < 4.0 < sampled.measurements["epsilon_claimed_without_selection"]
    draw = dphelmet.selection_masks

    def canary_always_selected(*arguments, **options):
        masks = draw(*arguments, **options)
        masks[:, 0] = True
        return masks

    monkeypatch.setattr(dphelmet, "selection_masks", canary_always_selected)
    blind = audit_dphelmet(digits, config, seed=0, trials=20_000)
    assert blind.measurements["canary_participation_in"] == 1.0
    assert blind.eps_lb > blind.eps_claimed == sampled.eps_claimed and blind.violation


def test_an_unclaimed_round_with_selection_is_refused(digits):
    with pytest.raises(ValueError, match="epsilon must be finite"):
        audit_dphelmet(digits, DpHelmetConfig(privacy_unit="user", epsilon=math.inf, participation_probability=0.3),
                       seed=0, trials=200)


@pytest.mark.parametrize("call, name", [
    (lambda: planned_threshold(([1.0], [0.0]), ([0.5, 0.5], [1.0, 0.0]), 0.0, 100, alpha=0.05, delta=1e-5), "noise_std"),
    (lambda: planned_threshold(([1.0], [0.0]), ([0.5, 0.4], [1.0, 0.0]), 1.0, 100, alpha=0.05, delta=1e-5), "in_law"),
    (lambda: planned_threshold(([1.0, 0.0], [0.0]), ([1.0], [1.0]), 1.0, 100, alpha=0.05, delta=1e-5), "out_law"),
    (lambda: planned_threshold(([1.0], [0.0]), ([1.0], [1.0]), 1.0, 0, alpha=0.05, delta=1e-5), "trials"),
    (lambda: planned_threshold(([1.0], [0.0]), ([1.0], [1.0]), 1.0, 100, alpha=1.0, delta=1e-5), "alpha"),
])
def test_planned_threshold_refuses_bad_input_by_name(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_the_planned_threshold_of_a_rare_shift_sits_in_the_tail():
    # OUT N(0, 1) against IN 0.9·N(0, 1) + 0.1·N(4, 1): the best rule flags the shifted component only, far above
    # the midpoint of the two means that a Gaussian-shape rule would pick.
    threshold = planned_threshold(([1.0], [0.0]), ([0.9, 0.1], [0.0, 4.0]), 1.0, 10_000, alpha=0.05, delta=1e-5)
    assert 2.0 < threshold < 4.0
