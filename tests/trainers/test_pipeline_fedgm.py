"""FedGM pipeline at tiny sizes on digits: reproducibility, ε-label-DP accounting equal to dpmech's,
the statement that label DP does not protect the images, the stage-2 prior, validation."""

import numpy as np
import pytest

import dpmech
from tests.trainers.digits_fixtures import digits_split as split
from trainers import networks
from trainers.pipelines import fedgm

# Every FedGM run warns that its images are unprotected (tests/trainers/test_privacy_warnings.py checks it).
pytestmark = pytest.mark.filterwarnings("ignore::dpmech.UnprotectedReleaseWarning")

EPSILON = 4.0
TINY = dict(num_clients=3, alpha=10.0, images_per_class=4, real_batch_size=8, outer_iterations=1, matching_steps=2,
            network_steps=1, width=8, label_epsilon=EPSILON, server_epochs=15, fedavg_rounds=2, fedavg_local_epochs=1,
            one_shot_local_epochs=2)


@pytest.fixture(scope="module")
def config():
    return fedgm.FedGmConfig(**TINY)


@pytest.fixture(scope="module")
def result(split, config):
    return fedgm.run_fedgm(split, config, seed=11, progress=False)


def _stages(result):
    half = len(result.messages) // 2
    return result.messages[:half], result.messages[half:]


@pytest.mark.slow
def test_same_seed_gives_identical_accuracy_and_messages(split, config, result):
    again = fedgm.run_fedgm(split, fedgm.FedGmConfig(**dict(TINY, baselines=False)), seed=11, progress=False)
    assert again.accuracy == result.accuracy
    for first, second in zip(result.messages, again.messages):
        assert first.payload.keys() == second.payload.keys()
        for name in first.payload:
            np.testing.assert_array_equal(first.payload[name], second.payload[name])


@pytest.mark.slow
def test_label_dp_accounting_equals_dpmechs(result):
    reference = dpmech.PrivacyLedger(dpmech.REPLACE_ONE).record(dpmech.mechanisms.rr_with_prior_event(EPSILON))
    assert result.ledger.events == reference.events
    assert all(message.events == (dpmech.mechanisms.rr_with_prior_event(EPSILON),) for message in result.messages)
    labels = result.guarantees["synthetic_labels"]
    assert (labels.epsilon, labels.delta) == (EPSILON, 0.0)
    assert result.ledger.epsilon(1e-6).epsilon == reference.epsilon(1e-6).epsilon


@pytest.mark.slow  # 7.07 s of CPU in CI's default run (2026-11-27): 5 s or more goes to the slow set
def test_each_synthetic_label_is_released_once(result):
    first, second = _stages(result)
    for entry, one, two in zip(result.per_client, first, second):
        assert one.payload["labels"].shape[0] + two.payload["labels"].shape[0] == entry["synthetic_images"]
        assert abs(one.payload["labels"].shape[0] - two.payload["labels"].shape[0]) <= 1


def test_result_states_that_label_dp_does_not_protect_the_images(result):
    assert any("does NOT protect the synthetic images" in note for note in result.notes)
    assert all(fedgm.IMAGES_NOT_PROTECTED in message.description for message in result.messages)
    assert result.guarantees["synthetic_images"].epsilon == float("inf")
    assert "does NOT protect the synthetic images" in fedgm.__doc__


def test_result_says_the_public_rows_are_not_used(result, split):
    public_rows = split.negative.features.shape[0] + split.distillation.features.shape[0]
    assert public_rows > 0
    assert f"FedGM reads no public data: the split's {public_rows} public rows are not used." in result.notes


def test_stage_two_prior_is_recomputed_from_stage_one_messages_alone(result, config):
    first, second = _stages(result)
    with networks.torch_threads(1):  # the pipeline's default: float sums depend on the thread count
        model = fedgm.stage_one_model(first, config, seed=11)
        priors = [fedgm.label_prior(model, message.payload["images"], config) for message in second]
    for message, prior in zip(second, priors):
        np.testing.assert_array_equal(message.payload["prior"], prior)
        # every released label lies in the top-k* of that prior: RRTop-k* never leaves Y_k*
        k = dpmech.mechanisms.rr_with_prior_optimal_k(prior, EPSILON)
        ranks = np.argsort(np.argsort(-prior, axis=1, kind="stable"), axis=1)
        assert np.all(ranks[np.arange(prior.shape[0]), message.payload["labels"]] < k)


def test_accuracy_is_above_chance(result):
    # 10 balanced classes: chance is about 0.1
    assert result.accuracy > 0.3
    assert set(result.baselines) == {"stage_one_model", "synthetic_true_labels", "kmeans_real", "random_real", "real_pooled",
                                     "fedavg", "one_shot_fedavg"}
    assert result.baselines["fedavg"] > 0.3
    # all ~650 private digits with true labels: far above the 12-per-class sets at these sizes
    assert result.baselines["real_pooled"] > 0.9
    assert result.baselines["real_pooled"] > result.baselines["random_real"]


@pytest.mark.parametrize("field,value", [
    ("images_per_class", 1), ("label_epsilon", 0.0), ("prior_temperature", -1.0), ("alpha", 0.0),
    ("outer_iterations", 0), ("width", 0), ("num_classes", 1),
])
def test_invalid_config_raises(field, value):
    with pytest.raises(ValueError, match=field):
        fedgm.FedGmConfig(**{field: value})


def test_invalid_seed_raises(split, config):
    with pytest.raises(ValueError, match="seed"):
        fedgm.run_fedgm(split, config, seed=-1, progress=False)
