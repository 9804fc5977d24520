"""DP-Helmet pipeline: reproducibility, blind averaging of the messages, the ledger against dpmech."""

import math

import numpy as np
import pytest

import dpmech
import dpmech.sensitivity
from trainers.data import PrivateData
from trainers.pipelines.dphelmet import (
    DpHelmetConfig,
    UserSettings,
    dphelmet_user,
    local_sensitivity,
    run_dphelmet,
    secure_average,
)
from trainers.psgd import SoftmaxSLPTrainer
from tests.trainers.digits_fixtures import digits

TINY = DpHelmetConfig(num_users=4, records_per_user=30, epochs=5, num_components=8)


@pytest.fixture(scope="module")
def tiny_result(digits):
    return run_dphelmet(digits, TINY, seed=2)


def test_reproducible_from_one_seed(digits, tiny_result):
    again = run_dphelmet(digits, TINY, seed=2)
    assert again.accuracy == tiny_result.accuracy
    for first, second in zip(tiny_result.messages, again.messages):
        np.testing.assert_array_equal(first.payload["noisy_model"], second.payload["noisy_model"])
    other = run_dphelmet(digits, TINY, seed=3)
    assert not np.array_equal(other.messages[0].payload["noisy_model"], tiny_result.messages[0].payload["noisy_model"])


def test_messages_hold_only_the_noisy_model_and_the_average_is_their_mean(tiny_result):
    assert all(set(m.payload) == {"noisy_model"} for m in tiny_result.messages)
    stacked = np.stack([m.payload["noisy_model"] for m in tiny_result.messages])
    np.testing.assert_allclose(secure_average(tiny_result.messages), stacked.mean(axis=0), rtol=1e-14)


def test_ledger_is_dpmechs_blind_averaging_event(tiny_result):
    sensitivity = SoftmaxSLPTrainer(regularization=TINY.regularization, input_clip=TINY.feature_bound,
                                    projection_radius=TINY.projection_radius).sensitivity(TINY.records_per_user)
    user_noise = dpmech.mechanisms.calibrate_user_noise(TINY.epsilon * (1 - 1e-9), TINY.delta, sensitivity, TINY.num_users, TINY.honest_fraction)
    expected = dpmech.mechanisms.blind_averaging_event(user_noise, sensitivity, TINY.num_users, TINY.honest_fraction,
                                            neighbouring=dpmech.REPLACE_ONE)
    assert tiny_result.ledger.events == (expected,)
    assert tiny_result.per_client[0]["user_noise_std"] == user_noise
    # calibrated for (ε, δ): the tight ε is the target (up to the calibration's and the
    # accountant's conservative margins, each far below 1e-9)
    assert tiny_result.guarantees["tight"].epsilon == pytest.approx(TINY.epsilon, abs=1e-9)
    group = tiny_result.ledger.group_privacy(TINY.records_per_user).epsilon(TINY.delta).epsilon
    assert tiny_result.guarantees["user, group privacy"].epsilon == group
    user_level = dpmech.GaussianEvent(expected.sigma, 2 * TINY.projection_radius / TINY.num_users)
    assert tiny_result.guarantees["user, Cor. 5.5"].epsilon == dpmech.PrivacyLedger(dpmech.REPLACE_ONE).record(user_level).epsilon(TINY.delta).epsilon


def test_user_level_sensitivity_is_twice_the_model_norm_bound():
    softmax = DpHelmetConfig(privacy_unit="user", projection_radius=0.7)
    svm = DpHelmetConfig(privacy_unit="user", model="huber_svm", projection_radius=0.05)
    assert local_sensitivity(softmax, 10) == dpmech.sensitivity.user_level_sensitivity(0.7)
    assert local_sensitivity(svm, 10) == pytest.approx(2 * math.sqrt(10) * 0.05, rel=1e-15)


def test_user_adds_its_noise_share_and_never_projects_after_it(digits):
    rng = np.random.default_rng(0)
    local = PrivateData(dpmech.clip_features(rng.normal(size=(30, 8)), 1.0), rng.integers(0, 10, 30))
    config = DpHelmetConfig(epochs=3, projection_radius=0.5)
    settings = UserSettings(config, 10, 0.2, dpmech.NoGuaranteeEvent("test"))
    clean = UserSettings(config, 10, 0.0, dpmech.NoGuaranteeEvent("test"))
    message, model = dphelmet_user(0, local, settings, np.random.default_rng(1))
    clean_message, clean_model = dphelmet_user(0, local, clean, np.random.default_rng(1))
    np.testing.assert_array_equal(model, clean_model)
    np.testing.assert_array_equal(clean_message.payload["noisy_model"], clean_model)
    assert np.linalg.norm(model) <= 0.5 * (1 + 1e-12)
    residual = message.payload["noisy_model"] - model
    # 90 coordinates of N(0, 0.2²): sample std within ±25% with probability > 0.999
    assert residual.std() == pytest.approx(0.2, rel=0.25)
    assert np.linalg.norm(message.payload["noisy_model"]) > 0.5  # not projected back onto the R-ball


@pytest.mark.filterwarnings("ignore::dpmech.NoGuaranteeWarning")  # the noiseless run is the point
def test_without_noise_the_average_beats_chance_by_far(digits):
    config = DpHelmetConfig(num_users=5, records_per_user=50, epochs=10, model="huber_svm", projection_radius=0.3,
                            epsilon=math.inf, num_components=16)
    result = run_dphelmet(digits, config, seed=0)
    assert result.accuracy > 0.5  # chance is 0.1
    assert result.accuracy == result.baselines["no noise"]
    assert result.guarantees["tight"].epsilon == math.inf


@pytest.mark.parametrize(
    "field, value, match",
    [
        ("epsilon", 0.0, "epsilon"),
        ("epsilon", -1.0, "epsilon"),
        ("honest_fraction", 0.0, "honest_fraction"),
        ("honest_fraction", 1.5, "honest_fraction"),
        ("num_users", 0, "num_users"),
        ("model", "mlp", "model"),
        ("privacy_unit", "group", "privacy_unit"),
        ("projection_radius", 0.0, "projection_radius"),
    ],
)
def test_bad_configuration_raises(field, value, match):
    with pytest.raises(ValueError, match=match):
        DpHelmetConfig(**{field: value})


def test_more_records_than_the_pool_raises(digits):
    with pytest.raises(ValueError, match="records_per_user"):
        run_dphelmet(digits, DpHelmetConfig(num_users=100, records_per_user=50), seed=0)


def test_paper_settings_rescaled_to_the_public_clip():
    paper = DpHelmetConfig.paper()
    assert (paper.regularization, paper.projection_radius, paper.feature_bound) == (0.01, 10.0, 1.0)
    assert (paper.num_users, paper.records_per_user, paper.epochs, paper.batch_size) == (1000, 50, 100, 20)
    assert (paper.epsilon, paper.delta, paper.honest_fraction) == (1.0, 1e-5, 0.5)
    # inside the seed's rescaled grid Λ' ∈ [8e-4, 2.5e-2], R' ∈ [3.5, 35]; the default is far outside
    assert 8e-4 <= paper.regularization <= 2.5e-2 and 3.5 <= paper.projection_radius <= 35
    default = DpHelmetConfig()
    assert not (8e-4 <= default.regularization <= 2.5e-2 and 3.5 <= default.projection_radius <= 35)
    assert DpHelmetConfig.paper(num_users=7).num_users == 7
    with pytest.raises(ValueError, match="regularization"):
        DpHelmetConfig.paper(regularization=-1.0)
