"""Caveats a user must not miss are raised as dpmech privacy warnings, not only written into notes."""

import math

import pytest

import dpmech
from trainers.data import load_dataset, split_federated
from trainers.pipelines import dphelmet, fedauxfdp, fedmd_nfdp


@pytest.fixture(scope="module")
def digits():
    return load_dataset("digits")


def test_every_privacy_warning_is_a_user_warning_that_one_filter_catches():
    for warning in (dpmech.VacuousGuaranteeWarning, dpmech.NoGuaranteeWarning, dpmech.UnprotectedReleaseWarning):
        assert issubclass(warning, dpmech.PrivacyWarning) and issubclass(warning, UserWarning)


def test_a_noiseless_fedauxfdp_head_warns_that_there_is_no_guarantee(digits):
    with pytest.warns(dpmech.NoGuaranteeWarning, match="class_epsilon = ∞"):
        fedauxfdp.run_fedauxfdp(digits, fedauxfdp.FedAuxFdpConfig(num_clients=3, class_epsilon=math.inf))


def test_a_noiseless_dphelmet_average_warns_that_there_is_no_guarantee(digits):
    with pytest.warns(dpmech.NoGuaranteeWarning, match="WITHOUT noise"):
        dphelmet.run_dphelmet(digits, dphelmet.DpHelmetConfig(num_users=2, records_per_user=10, epochs=1,
                                                              epsilon=math.inf))


def test_fedmd_nfdp_warns_that_its_guarantee_is_vacuous(digits):
    config = fedmd_nfdp.FedMdNfdpConfig(subsample_size=10, public_epochs=0, initial_epochs=1, rounds=1,
                                        alignment_size=20, digest_epochs=0, revisit_epochs=0, num_clients=2)
    with pytest.warns(dpmech.VacuousGuaranteeWarning, match="1/n"):
        fedmd_nfdp.run_fedmd_nfdp(split_federated(digits, 0), config, 0)


def test_fed_zda_warns_that_it_has_no_guarantee(digits):
    from trainers.pipelines import fedzda

    config = fedzda.FedZdaConfig(num_clients=3, rounds=2, augmentation_start=1, local_epochs=1, zsdg_iterations=5,
                                 synthetic_per_class=2, baseline=False)
    with pytest.warns(dpmech.NoGuaranteeWarning, match="nothing enforces"):
        fedzda.run_fedzda(split_federated(digits, 0), config, 0)
