"""Audits of trained seed pipelines (digits, fixed seeds; N = 2000 canary releases per side, α = 0.05)."""

import dataclasses
import math

import numpy as np
import pytest

import dpmech
from audits.attacks.pipelines import pipeline_parts
from trainers.pipelines.targets import pipeline_config
from trainers.data import load_dataset


@pytest.fixture(scope="module")
def digits():
    return load_dataset("digits")


@pytest.mark.parametrize("pipeline", ["fedauxfdp", "dphelmet"])
def test_a_correct_pipeline_passes_its_canary_audit(digits, pipeline):
    audit_function, _, run = pipeline_parts(pipeline)
    config = pipeline_config(pipeline, 2.0, 1e-5)
    audit = audit_function(digits, config, seed=0, trials=2000)
    assert audit.valid_as == "certified"
    assert 0.0 <= audit.eps_lb <= audit.eps_claimed <= 2.0
    assert not audit.violation
    assert 0.0 < audit.measurements["canary_mu_over_claimed_mu"] <= 1.0
    assert audit.eps_claimed == pytest.approx(run(digits, config, seed=0).guarantees["tight"].epsilon, rel=1e-9)
    assert 0.0 <= audit.mia["auc"] <= 1.0
    assert audit.as_dict()["threat_model"]["access"] == "white-box"


def test_fedauxfdp_budget_split_meets_the_target_and_canary_sits_inside_the_bound(digits):
    config = pipeline_config("fedauxfdp", 1.0, 1e-5)
    audit = pipeline_parts("fedauxfdp")[0](digits, config, seed=1, trials=2000)
    assert audit.eps_claimed <= 1.0
    assert audit.eps_claimed == pytest.approx(1.0, rel=1e-6)
    measurements = audit.measurements
    assert 0.0 < measurements["canary_class_distance_over_bound"] <= 1.0
    # The scoring head is released with its label-fixed sensitivity (every private record has label 1 there).
    assert measurements["score_head_label_fixed_sensitivity_over_bound"] == 1.0
    assert 0.0 < measurements["canary_score_distance_over_bound"] <= 1.0
    assert measurements["canary_score_distance_over_label_fixed_sensitivity"] <= 1.0
    # eps_lb bounds the ε of the tested pair's own μ, which lies below the claim.
    assert audit.eps_lb <= measurements["epsilon_of_canary_mu"] <= audit.eps_claimed


def test_an_under_noised_dphelmet_is_caught(digits, monkeypatch):
    # Bug: users calibrate their share for sensitivity s/|U| (the average's) instead of s (the sum's).
    from trainers.pipelines import dphelmet

    config = pipeline_config("dphelmet", 1.0, 1e-5)
    original = dphelmet.prepare_users

    def under_noised(data, config, seed):
        prepared = original(data, config, seed)
        wrong = dpmech.mechanisms.calibrate_user_noise(1.0, 1e-5, prepared.sensitivity / config.num_users, config.num_users,
                                            config.honest_fraction)
        return dataclasses.replace(prepared, settings=dataclasses.replace(prepared.settings, user_noise_std=wrong))

    monkeypatch.setattr(dphelmet, "prepare_users", under_noised)
    audit = pipeline_parts("dphelmet")[0](digits, config, seed=0, trials=2000)
    assert audit.violation and audit.release_checks["average_noise_scale"]["under_noised"]


def test_lira_sees_members_of_a_noise_free_class_head(digits):
    audit_function, config_class, _ = pipeline_parts("fedauxfdp")
    audit = audit_function(digits, config_class(class_epsilon=math.inf), seed=0, trials=1000)
    assert audit.eps_claimed == math.inf and audit.method == "none"
    assert audit.mia["auc"] > 0.6


def test_unknown_pipeline_is_refused():
    with pytest.raises(ValueError, match="pipeline"):
        pipeline_parts("fedprox")


@pytest.mark.parametrize("honest_fraction", [0.5, 0.35, 1.0])
def test_dphelmet_audit_scores_carry_exactly_the_honest_noise_the_event_claims(digits, honest_fraction):
    # Colluding users' noise shares are removed before scoring: the OUT scores' spread is the
    # ⌈t|U|⌉ honest users' noise, σ_u·sqrt(⌈t|U|⌉)/|U|, which is at least the event's σ (= it when t|U| is whole).
    config = dataclasses.replace(pipeline_config("dphelmet", 1.0, 1e-5), honest_fraction=honest_fraction)
    audit = pipeline_parts("dphelmet")[0](digits, config, seed=0, trials=2000)
    honest = math.ceil(honest_fraction * config.num_users)
    assert audit.measurements["honest_users"] == honest
    expected = audit.measurements["user_noise_std"] * math.sqrt(honest) / config.num_users
    assert np.std(audit.scores.out_scores) == pytest.approx(expected, rel=0.06)
    event_sigma = audit.measurements["user_noise_std"] * math.sqrt(honest_fraction * config.num_users) / config.num_users
    assert expected >= event_sigma * (1 - 1e-12)
    assert not audit.violation and audit.eps_lb <= audit.measurements["epsilon_of_scored_canary_mu"] <= audit.eps_claimed


def test_fedauxfdp_audit_reuses_the_round_its_run_prepared_and_refuses_another_run(digits, monkeypatch):
    audit_function, _, run = pipeline_parts("fedauxfdp")
    config = pipeline_config("fedauxfdp", 2.0, 1e-5)
    result = run(digits, config, seed=0)
    fresh = audit_function(digits, config, seed=0, trials=200)
    from trainers.pipelines import fedauxfdp

    def prepared_twice(*args, **kwargs):
        raise AssertionError("the audit prepared the round again")

    monkeypatch.setattr(fedauxfdp, "prepare_round", prepared_twice)
    reused = audit_function(digits, config, seed=0, trials=200, result=result)
    assert reused.as_dict() == fresh.as_dict()
    with pytest.raises(ValueError, match="result must be the PipelineResult of the fedauxfdp pipeline"):
        audit_function(digits, config, seed=1, trials=200, result=result)
    with pytest.raises(ValueError, match="result must be"):
        audit_function(digits, dataclasses.replace(config, class_regularization=2 * config.class_regularization),
                       seed=0, trials=200, result=result)
