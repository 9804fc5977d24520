"""Each pipeline audit samples the pipeline's own release step, so a bug injected there is caught.

For every pipeline with a claim, the release step alone is made to under-deliver (σ/2 noise, RR
at a larger ε than its event states, NFDP without the subsample) while the events still state
the claim; the audit must report a violation. The same audit of the unmodified pipeline must not.
Fed-ZDA has no claim (ε = ∞), so nothing can be under-delivered there.
"""

import numpy as np
import pytest

import dpmech
from audits.attacks.pipelines import audit_function
from trainers.pipelines.targets import pipeline_config
from trainers.data import load_dataset, split_federated
from trainers.federation import ClientMessage
from trainers.pipelines import dphelmet, fedauxfdp, fedgm, fedmd_nfdp
from trainers.pipelines.fedgm import FedGmConfig
from trainers.pipelines.fedmd_nfdp import FedMdNfdpConfig

# The audited FedMD-NFDP runs warn that their guarantee is vacuous (tests/trainers/test_privacy_warnings.py checks it).
pytestmark = pytest.mark.filterwarnings("ignore::dpmech.VacuousGuaranteeWarning")


@pytest.fixture(scope="module")
def digits():
    return load_dataset("digits")


def test_fedauxfdp_release_with_half_the_noise_is_caught(digits, monkeypatch):
    config = pipeline_config("fedauxfdp", 1.0, 1e-5)
    honest = audit_function("fedauxfdp")(digits, config, seed=0, trials=300, num_shadows=16)
    assert not honest.violation

    def half_noise(parameters, mechanism, rng, what):
        if mechanism is None:
            return parameters, dpmech.NoGuaranteeEvent(what)
        return parameters + rng.normal(0.0, mechanism.sigma / 2, size=np.shape(parameters)), mechanism.event

    monkeypatch.setattr(fedauxfdp, "_released", half_noise)
    audit = audit_function("fedauxfdp")(digits, config, seed=0, trials=300, num_shadows=16)
    assert audit.violation
    assert audit.release_checks["class_head_noise_scale"]["under_noised"]
    assert audit.release_checks["score_head_noise_scale"]["under_noised"]


def test_dphelmet_user_share_with_half_the_noise_is_caught(digits, monkeypatch):
    config = pipeline_config("dphelmet", 1.0, 1e-5)
    honest = audit_function("dphelmet")(digits, config, seed=0, trials=200)
    assert not honest.violation

    def half_noise(user, model, settings, rng):
        noisy = model + rng.normal(0.0, settings.user_noise_std / 2, size=model.shape)
        return ClientMessage(user, {"noisy_model": noisy}, (settings.event,))

    monkeypatch.setattr(dphelmet, "release_user_model", half_noise)
    audit = audit_function("dphelmet")(digits, config, seed=0, trials=200)
    assert audit.violation and audit.release_checks["average_noise_scale"]["under_noised"]


FEDGM = FedGmConfig(num_clients=2, images_per_class=2, real_batch_size=8, outer_iterations=1, matching_steps=2,
                    network_steps=1, server_epochs=2, width=8, kmeans_initialisations=1, label_epsilon=1.0,
                    baselines=False)


def test_fedgm_labels_randomised_at_a_larger_epsilon_than_claimed_are_caught(digits, monkeypatch):
    with pytest.warns(dpmech.UnprotectedReleaseWarning, match="images"):
        result = fedgm.run_fedgm(split_federated(digits, 0), FEDGM, 0, progress=False)
    honest = audit_function("fedgm")(digits, FEDGM, seed=0, trials=4000, result=result)
    assert not honest.violation
    original = fedgm.release_labels

    def larger_epsilon(true_labels, prior, config, rng):
        noisy, _ = original(true_labels, prior, FedGmConfig(**{**FEDGM.__dict__, "label_epsilon": 4.0}), rng)
        return noisy, dpmech.mechanisms.rr_with_prior_event(config.label_epsilon)

    monkeypatch.setattr(fedgm, "release_labels", larger_epsilon)
    audit = audit_function("fedgm")(digits, FEDGM, seed=0, trials=4000, result=result)
    assert audit.violation and audit.eps_lb > audit.eps_claimed == 1.0


@pytest.mark.slow  # a FedMD-NFDP round trained and audited end to end: 5 to 8 s of CPU
def test_fedmd_nfdp_training_on_every_record_instead_of_the_subsample_is_caught(digits, monkeypatch):
    config = FedMdNfdpConfig(subsample_size=40, public_epochs=1, initial_epochs=8, num_clients=5)

    def no_subsampling(num_records, subsample_size, replacement, rng):
        return np.arange(num_records)

    monkeypatch.setattr(fedmd_nfdp.dpmech.mechanisms, "nfdp_subsample", no_subsampling)
    audit = audit_function("fedmd-nfdp")(digits, config, seed=0, trials=20)
    assert audit.violation and audit.eps_lb > audit.eps_claimed
