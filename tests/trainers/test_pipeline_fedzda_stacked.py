"""The stacked client trainer (``stacked_clients=True``) and batched ZSDG are speed-ups only: they
must give every client the model, and every ZSDG batch the inputs, that the one-client-at-a-time
code gives it (same draws, batches, BatchNorm statistics and momentum; float summation order aside)."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from tests.profiles import examples
from tests.trainers.digits_fixtures import digits_split as split
from trainers import networks
from trainers.data import LabelledData
from trainers.fedavg import FedAvgConfig, fit_stacked_clients, run_fedavg
from trainers.pipelines import fedzda

pytestmark = pytest.mark.filterwarnings("ignore::dpmech.NoGuaranteeWarning")

TOLERANCE = 1e-4  # float32 states after a few dozen SGD steps, summed in a different order


def _assert_same_messages(first, second):
    assert len(first) == len(second)
    for one, other in zip(first, second):
        assert one.client == other.client and one.description == other.description
        assert one.payload.keys() == other.payload.keys()
        for name in one.payload:
            assert one.payload[name].dtype == other.payload[name].dtype
            np.testing.assert_allclose(one.payload[name], other.payload[name], rtol=TOLERANCE, atol=TOLERANCE, err_msg=name)


@st.composite
def federations(draw):
    input_shape = draw(st.sampled_from([(1, 12), (2, 8), (1, 4, 4)]))
    num_classes = draw(st.integers(2, 4))
    # unequal sizes, and sizes that leave a last batch of one (skipped, as networks.fit skips it)
    sizes = draw(st.lists(st.integers(2, 23), min_size=1, max_size=5))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    clients = [LabelledData(rng.normal(size=(size, int(np.prod(input_shape)))), rng.integers(0, num_classes, size)) for size in sizes]
    settings = dict(architecture=f"conv-batch-{draw(st.integers(1, 4))}", rounds=draw(st.integers(1, 3)),
                    local_epochs=draw(st.integers(1, 2)), batch_size=draw(st.integers(2, 6)),
                    learning_rate=draw(st.sampled_from([0.01, 0.1])), client_fraction=draw(st.sampled_from([0.5, 1.0])))
    return clients, input_shape, num_classes, settings, draw(st.integers(0, 2**32 - 1))


@pytest.mark.slow  # 3.3 s of CPU in CI's default run of 06381b9 (3 s rule, stop 39)
@examples(0.2)
@given(federations())
def test_stacked_fedavg_sends_the_messages_of_one_client_at_a_time(federation):
    clients, input_shape, num_classes, settings, seed = federation
    runs = [run_fedavg(clients, input_shape, num_classes, FedAvgConfig(**settings, stacked_clients=stacked), seed, progress=False)
            for stacked in (False, True)]
    for first, second in zip(runs[0].messages, runs[1].messages):
        _assert_same_messages(first, second)
    for name, value in runs[0].model.state_dict().items():
        np.testing.assert_allclose(value.numpy(), runs[1].model.state_dict()[name].numpy(), rtol=TOLERANCE, atol=TOLERANCE)


def test_fit_stacked_clients_matches_networks_fit_per_client():
    rng = np.random.default_rng(5)
    model = networks.build_classifier("conv-batch-3", (1, 10), 3, torch.Generator().manual_seed(1))
    inputs = [torch.tensor(rng.normal(size=(size, 1, 10)), dtype=torch.float32) for size in (9, 4, 13)]
    targets = [torch.tensor(rng.integers(0, 3, tensor.shape[0])) for tensor in inputs]
    stacked = fit_stacked_clients(model, inputs, targets, [torch.Generator().manual_seed(seed) for seed in range(3)],
                                  epochs=3, batch_size=4, learning_rate=0.05)
    for client in range(3):
        alone = networks.load_state_arrays_(networks.build_classifier("conv-batch-3", (1, 10), 3, torch.Generator()),
                                            networks.state_arrays(model))
        networks.fit(alone, inputs[client], targets[client], epochs=3, batch_size=4, learning_rate=0.05,
                     generator=torch.Generator().manual_seed(client), optimizer="sgd")
        trained = networks.state_arrays(alone)
        assert stacked[client].keys() == trained.keys()
        for name in trained:
            np.testing.assert_allclose(stacked[client][name], trained[name], rtol=TOLERANCE, atol=TOLERANCE, err_msg=name)
        # training moved the model: the comparison is not between two untouched copies
        assert not np.allclose(trained["9.weight"], networks.state_arrays(model)["9.weight"])


@examples(0.2)
@given(st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=6), min_size=1, max_size=4), st.integers(0, 2**32 - 1))
@pytest.mark.slow
def test_batched_zsdg_gives_each_batch_its_own_zsdg_run(batches, seed):
    model = networks.build_classifier("conv-batch-4", (1, 12), 4, torch.Generator().manual_seed(seed % 1000))
    model.train()
    model(torch.randn(32, 1, 12, generator=torch.Generator().manual_seed(seed % 997)) + 0.5)  # BatchNorm statistics of some data
    targets = [torch.tensor(labels) for labels in batches]
    together = fedzda.zero_shot_batches(model, targets, (1, 12), iterations=8, learning_rate=0.1,
                                        generators=[torch.Generator().manual_seed(seed + index) for index in range(len(targets))])
    for index, labels in enumerate(targets):
        alone = fedzda.zero_shot_data(model, labels, (1, 12), iterations=8, learning_rate=0.1,
                                      generator=torch.Generator().manual_seed(seed + index))
        assert together[index].shape == alone.shape == (len(labels), 1, 12)
        torch.testing.assert_close(together[index], alone, rtol=1e-4, atol=1e-4)


def test_stacked_fed_zdac_sends_the_messages_of_one_client_at_a_time(split):
    settings = dict(num_clients=6, partition="shards", client_fraction=0.5, rounds=3, augmentation_start=1, zsdg_iterations=4,
                    synthetic_per_class=2, local_epochs=1, architecture="conv-batch-4", baseline=False)
    runs = [fedzda.run_fedzda(split, fedzda.FedZdaConfig(**settings, stacked_clients=stacked), seed=3) for stacked in (False, True)]
    _assert_same_messages(runs[0].messages, runs[1].messages)
    assert "synthetic examples" in runs[1].messages[-1].description


def test_stacked_clients_refuses_what_it_cannot_stack():
    with pytest.raises(ValueError, match="stacked_clients needs a 'conv-batch-<width>'"):
        FedAvgConfig(architecture="mlp-8", stacked_clients=True)
    with pytest.raises(ValueError, match="stacked_clients needs"):
        FedAvgConfig(optimizer="adam", stacked_clients=True)
    with pytest.raises(ValueError, match="stacked_clients"):
        fedzda.FedZdaConfig(stacked_clients="yes")
    clients = [LabelledData(np.zeros((4, 12)), np.array([0, 1, 0, 1]))]
    with pytest.raises(ValueError, match="stacked_client_augmentation needs config.stacked_clients"):
        run_fedavg(clients, (1, 12), 2, FedAvgConfig(rounds=1), 0, progress=False,
                   stacked_client_augmentation=lambda *arguments: None)
    with pytest.raises(ValueError, match="one entry per batch"):
        fedzda.zero_shot_batches(networks.build_classifier("conv-batch-2", (1, 12), 2, torch.Generator()), [torch.tensor([0])],
                                 (1, 12), iterations=1, learning_rate=0.1, generators=[])
