"""Audits of FedMD-NFDP, FedGM and Fed-ZDA on digits at tiny sizes (fixed seeds; N, α, δ stated per test)."""

import json
import math

import numpy as np
import pytest

from audits.attacks.pipelines import pipeline_parts
from audits.attacks.pipelines.fedgm import nearest_image_scores
from audits.attacks.pipelines.record import PipelineAudit
from audits.report import json_ready
from trainers.data import load_dataset
from trainers.pipelines.fedgm import FedGmConfig
from trainers.pipelines.fedmd_nfdp import FedMdNfdpConfig
from trainers.pipelines.fedzda import FedZdaConfig

# The audited FedMD-NFDP, FedGM and Fed-ZDA runs raise their caveats (tests/trainers/test_privacy_warnings.py checks them).
pytestmark = [
    pytest.mark.filterwarnings("ignore::dpmech.VacuousGuaranteeWarning"),
    pytest.mark.filterwarnings("ignore::dpmech.UnprotectedReleaseWarning"),
    pytest.mark.filterwarnings("ignore::dpmech.NoGuaranteeWarning"),
]

ALPHA = 0.05
TINY = {
    "fedmd-nfdp": (FedMdNfdpConfig(subsample_size=40, public_epochs=1, initial_epochs=8, num_clients=5), 20),
    "fedgm": (FedGmConfig(num_clients=2, images_per_class=2, real_batch_size=8, outer_iterations=1, matching_steps=2,
                          network_steps=1, server_epochs=2, width=8, kmeans_initialisations=1), 4000),
    "fedzda": (FedZdaConfig(num_clients=3, rounds=2, augmentation_start=1, local_epochs=1, zsdg_iterations=5,
                            synthetic_per_class=2), 300),
}


@pytest.fixture(scope="module")
def digits():
    return load_dataset("digits")


@pytest.fixture(scope="module")
def audits(digits):
    return {name: pipeline_parts(name)[0](digits, config, seed=0, trials=trials, alpha=ALPHA)
            for name, (config, trials) in TINY.items()}


@pytest.mark.parametrize("name", sorted(TINY))
def test_every_audit_is_a_well_formed_record(audits, name):
    audit = audits[name]
    assert isinstance(audit, PipelineAudit) and audit.pipeline == name
    assert audit.valid_as in ("certified", "estimate") and audit.method != "none"
    assert 0.0 <= audit.eps_lb < math.inf and audit.eps_claimed > 0.0
    assert 0.0 <= audit.mia["auc"] <= 1.0 and 0.0 <= audit.mia["tpr_at_0_1_percent_fpr"] <= 1.0
    assert audit.notes and audit.claim and audit.result is not None and audit.scores is not None
    record = audit.as_dict()
    json.dumps(json_ready(record))
    assert record["threat_model"]["runs"] >= 1


@pytest.mark.parametrize("name", sorted(TINY))
def test_every_audit_is_reproducible_from_its_seed(digits, audits, name):
    config, trials = TINY[name]
    again = pipeline_parts(name)[0](digits, config, seed=0, trials=trials, alpha=ALPHA)
    assert again.eps_lb == audits[name].eps_lb
    np.testing.assert_array_equal(again.scores.in_scores, audits[name].scores.in_scores)
    np.testing.assert_array_equal(again.scores.out_scores, audits[name].scores.out_scores)
    assert again.mia == audits[name].mia


def test_nfdp_bound_at_the_claimed_delta_does_not_exceed_the_claim(audits):
    # N = 20 independent runs per world, α = 0.05, δ = the claimed k/n (Theorem 1).
    audit = audits["fedmd-nfdp"]
    n = audit.measurements["party_records"]
    assert audit.delta == pytest.approx(40 / n, rel=1e-12) and audit.delta >= 1 / n
    assert audit.eps_claimed == pytest.approx(math.log((n + 1) / (n + 1 - 40)), rel=1e-12)
    assert audit.valid_as == "certified" and audit.method == "clopper-pearson"
    assert audit.eps_lb <= audit.eps_claimed
    assert audit.measurements["meaningful_delta"] == pytest.approx(0.1 / n)
    assert audit.measurements["eps_lb_at_meaningful_delta"] >= audit.eps_lb
    assert 0 <= audit.measurements["canary_sampled_runs"] <= 20


@pytest.mark.slow  # 4.5 s of CPU in CI's default run (stop 39): the README's rule moves tests of 4 s or more
def test_nfdp_defaults_to_the_pipeline_config_and_refuses_another(digits):
    audit_function = pipeline_parts("fedmd-nfdp")[0]
    audit = audit_function(digits, seed=1, trials=10, alpha=ALPHA)
    assert audit.measurements["subsample_size"] == FedMdNfdpConfig().subsample_size
    with pytest.raises(ValueError, match="config"):
        audit_function(digits, FedGmConfig(), trials=10, alpha=ALPHA)


def test_fedgm_label_bound_stays_below_the_claimed_epsilon(audits):
    # One run, m = 4000 canary labels through dpmech.mechanisms.rr_with_prior with the run's priors, α = 0.05, δ = 0.
    audit = audits["fedgm"]
    assert audit.eps_claimed == TINY["fedgm"][0].label_epsilon and audit.delta == 0.0
    assert audit.method == "one-run" and audit.valid_as == "certified"
    assert audit.eps_lb <= audit.eps_claimed + 1e-9
    assert audit.measurements["guesses"] > 0 and audit.threat_model.canaries == 4000
    assert audit.measurements["pipeline_prior_rows_uniform"] > 0
    assert audit.measurements["pipeline_prior_rows_stage_two"] > 0


def test_fedzda_reports_no_guarantee(audits):
    audit = audits["fedzda"]
    assert audit.eps_claimed == math.inf and audit.valid_as == "estimate"
    assert audit.measurements["members"] == 300 and audit.measurements["nonmembers"] == 300
    assert audit.measurements["advantage_lower_bound_on_delta_estimate"] == audit.mia["advantage"]


def test_nearest_image_scores_match_a_direct_computation():
    rng = np.random.default_rng(0)
    images = rng.normal(size=(7, 5))
    members = np.vstack([images[:3], rng.normal(size=(2, 5))])
    nonmembers = rng.normal(size=(4, 5))
    scores = nearest_image_scores(members, nonmembers, images)
    direct = -np.min(np.linalg.norm(members[:, None, :] - images[None, :, :], axis=2), axis=1)
    np.testing.assert_allclose(scores.in_scores, direct, atol=1e-7)
    np.testing.assert_allclose(scores.in_scores[:3], 0.0, atol=1e-7)
    assert np.all(scores.out_scores < 0)
