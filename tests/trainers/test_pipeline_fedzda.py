"""Fed-ZDA pipelines at tiny sizes on digits: no guarantee (ε = ∞ with the reason), reproducibility,
ZSDG, fairness metrics, validation."""

import math

import numpy as np
import pytest
import torch

import dpmech
from trainers import networks
from trainers.pipelines import fedzda
from tests.trainers.digits_fixtures import digits_split as split

# Every Fed-ZDA run warns that it has no guarantee (tests/trainers/test_privacy_warnings.py checks it).
pytestmark = pytest.mark.filterwarnings("ignore::dpmech.NoGuaranteeWarning")

TINY = dict(num_clients=4, alpha=0.3, rounds=3, augmentation_start=1, zsdg_iterations=10, synthetic_per_class=4,
            local_epochs=1, architecture="conv-batch-8")


@pytest.fixture(scope="module")
def result(split):
    return fedzda.run_fedzda(split, fedzda.FedZdaConfig(**TINY), seed=2, progress=False)


def test_ledger_holds_no_guarantee_with_the_reason(result):
    event = dpmech.NoGuaranteeEvent(fedzda.NO_GUARANTEE_REASON)
    assert result.ledger.events == (event,)
    assert all(message.events == (event,) for message in result.messages)
    guarantee = result.guarantees["record_level"]
    assert guarantee.epsilon == math.inf
    assert "assumes TV <= δ, which nothing enforces" in guarantee.note
    assert any("NOT differentially private" in note for note in result.notes)


def test_same_seed_gives_identical_accuracy_and_messages(split, result):
    again = fedzda.run_fedzda(split, fedzda.FedZdaConfig(**dict(TINY, baseline=False)), seed=2, progress=False)
    assert again.accuracy == result.accuracy
    assert len(again.messages) == len(result.messages) == TINY["rounds"] * TINY["num_clients"]
    for first, second in zip(result.messages, again.messages):
        for name in first.payload:
            np.testing.assert_array_equal(first.payload[name], second.payload[name])


def test_client_variance_is_the_variance_of_the_local_accuracies(result):
    local = np.array([entry["local_accuracy"] for entry in result.per_client])
    assert result.fairness["fed_zda"]["client_variance"] == pytest.approx(np.var(100 * local), rel=1e-12)
    assert result.fairness["fed_zda"]["mean_local_accuracy"] == pytest.approx(local.mean(), rel=1e-12)
    assert result.baselines["fedavg"] == result.fairness["fedavg"]["global_accuracy"]


def test_server_variant_shares_the_fedavg_baseline(split, result):
    server = fedzda.run_fedzda(split, fedzda.FedZdaConfig(**dict(TINY, variant="server")), seed=2, progress=False)
    assert server.pipeline == "fedzda_server"
    # same clients, initial model and round seeds: the FedAvg baseline is the same run
    assert server.fairness["fedavg"] == result.fairness["fedavg"]
    assert server.ledger.events == result.ledger.events


def test_accuracy_is_above_chance(result):
    # 10 balanced classes: chance is about 0.1
    assert result.accuracy > 0.25


def test_zero_shot_data_reaches_the_targets_and_leaves_the_model_unchanged(split):
    generator = torch.Generator().manual_seed(0)
    model = networks.build_classifier("conv-batch-8", (1, 8, 8), 10, generator)
    with networks.torch_threads(1):
        networks.fit(model, networks.as_inputs(split.private.features, (1, 8, 8)), networks.as_targets(split.private.labels),
                     epochs=3, batch_size=32, learning_rate=1e-2, generator=generator)
    before = networks.state_arrays(model)
    targets = torch.arange(10).repeat(3)
    with networks.torch_threads(1):
        inputs = fedzda.zero_shot_data(model, targets, (1, 8, 8), iterations=60, learning_rate=0.1, generator=generator)
    assert inputs.shape == (30, 1, 8, 8)
    predicted = networks.predict_logits(model, inputs).argmax(dim=1)
    assert (predicted == targets).double().mean() > 0.9
    for name, value in networks.state_arrays(model).items():
        np.testing.assert_array_equal(value, before[name])


def test_zero_shot_data_needs_batchnorm():
    model = networks.build_classifier("conv-instance-8", (1, 8, 8), 10, torch.Generator())
    with pytest.raises(ValueError, match="BatchNorm"):
        fedzda.zero_shot_data(model, torch.zeros(2, dtype=torch.int64), (1, 8, 8), iterations=1, learning_rate=0.1,
                              generator=torch.Generator())


@pytest.mark.parametrize("field,value", [
    ("variant", "both"), ("architecture", "conv-instance-8"), ("augmentation_start", 3), ("alpha", 0.0),
    ("local_test_fraction", 1.0), ("synthetic_per_class", 1), ("zsdg_iterations", 0), ("batch_size", 1),
])
def test_invalid_config_raises(field, value):
    with pytest.raises(ValueError, match=field):
        fedzda.FedZdaConfig(**dict(TINY, **{field: value}))


def test_client_without_a_local_test_set_raises(split):
    with pytest.raises(ValueError, match="at least 2 records"):
        fedzda.run_fedzda(split, fedzda.FedZdaConfig(**dict(TINY, num_clients=400, alpha=0.01)), seed=0, progress=False)
