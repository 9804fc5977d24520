"""Fed-ZDA's client side as seed 004 sets it up: McMahan et al.'s label-shard split, FedAvg's
client sampling (an exact count per round, drawn from the seed), and late augmentation."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from tests.trainers.digits_fixtures import digits_split as split
from trainers.data import PublicData, shard_label_partition
from trainers.fedavg import FedAvgConfig, clients_per_round
from trainers.pipelines import fedzda

pytestmark = pytest.mark.filterwarnings("ignore::dpmech.NoGuaranteeWarning")

TINY = dict(num_clients=6, partition="shards", shards_per_client=2, client_fraction=0.5, rounds=4, augmentation_start=2,
            zsdg_iterations=5, synthetic_per_class=2, local_epochs=1, architecture="conv-batch-8", baseline=False)


@st.composite
def shard_problems(draw):
    labels = np.array(draw(st.lists(st.integers(0, 9), min_size=1, max_size=300)), dtype=np.int64)
    num_clients = draw(st.integers(1, labels.size))
    shards_per_client = draw(st.integers(1, max(1, labels.size // num_clients)))
    return labels, num_clients, shards_per_client, draw(st.integers(0, 2**32 - 1))


@given(shard_problems())
def test_shard_partition_gives_every_client_its_shards_of_sorted_labels(problem):
    labels, num_clients, shards_per_client, seed = problem
    client, shard = shard_label_partition(labels, num_clients, shards_per_client, seed)
    num_shards = num_clients * shards_per_client
    assert client.shape == shard.shape == labels.shape
    sizes = np.bincount(shard, minlength=num_shards)
    assert sizes.size == num_shards and sizes.min() >= 1 and sizes.max() - sizes.min() <= 1
    # a shard belongs to one client, and every client owns exactly shards_per_client shards
    owners = np.full(num_shards, -1)
    owners[shard] = client
    assert np.array_equal(owners[shard], client)
    assert np.array_equal(np.bincount(owners, minlength=num_clients), np.full(num_clients, shards_per_client))
    # shards are contiguous in label order: shard s's labels never exceed shard s + 1's
    lowest = np.array([labels[shard == s].min() for s in range(num_shards)])
    highest = np.array([labels[shard == s].max() for s in range(num_shards)])
    assert np.all(highest[:-1] <= lowest[1:])
    again = shard_label_partition(labels, num_clients, shards_per_client, seed)
    assert np.array_equal(again[0], client) and np.array_equal(again[1], shard)


def test_shard_partition_refuses_more_shards_than_records():
    with pytest.raises(ValueError, match="num_clients · shards_per_client"):
        shard_label_partition(np.arange(10), 6, 2, 0)
    with pytest.raises(ValueError, match="shards_per_client"):
        shard_label_partition(np.arange(10), 2, 0, 0)


@given(st.integers(1, 10_000), st.floats(0.0, 1.0, exclude_min=True))
def test_clients_per_round_is_the_nearest_integer_to_the_fraction_and_at_least_one(num_clients, fraction):
    count = clients_per_round(num_clients, fraction)
    assert 1 <= count <= num_clients
    assert count == 1 or abs(count - fraction * num_clients) <= 0.5


@pytest.mark.parametrize("fraction", [0.0, 1.5, float("nan"), "0.5", True])
def test_client_fraction_is_validated(fraction):
    with pytest.raises(ValueError, match="client_fraction"):
        FedAvgConfig(client_fraction=fraction)
    with pytest.raises(ValueError, match="client_fraction"):
        fedzda.FedZdaConfig(client_fraction=fraction)


def test_shard_clients_hold_the_private_pool_exactly_once_with_few_classes(split):
    config = fedzda.FedZdaConfig(**dict(TINY, num_clients=20))
    train, test = fedzda.client_training_sets(split, config, seed=3)
    rows = np.vstack([part.features for part in train + test])
    assert rows.shape[0] == len(split.private)
    # the multiset of records is the private pool: sort rows lexicographically and compare
    order = np.lexsort(rows.T[::-1])
    reference = np.lexsort(split.private.features.T[::-1])
    np.testing.assert_array_equal(rows[order], split.private.features[reference])
    sizes = np.array([len(a) + len(b) for a, b in zip(train, test)])
    shard = len(split.private) / 40
    assert np.all(np.abs(sizes - 2 * shard) <= 2)
    classes = [np.unique(np.concatenate([a.labels, b.labels])).size for a, b in zip(train, test)]
    # two shards of ~27 sorted records span at most 2 classes plus one per class boundary inside a shard
    assert max(classes) <= 4 and np.mean(classes) < 3


@pytest.fixture(scope="module")
def sampled(split):
    return fedzda.run_fedzda(split, fedzda.FedZdaConfig(**TINY), seed=5)


@pytest.mark.slow  # 5.20 s of CPU in CI's default run (2026-11-27): 5 s or more goes to the slow set
def test_each_round_samples_exactly_the_configured_count_reproducibly(split, sampled):
    per_round = clients_per_round(TINY["num_clients"], TINY["client_fraction"])
    assert per_round == 3
    assert len(sampled.messages) == TINY["rounds"] * per_round
    rounds = [sampled.messages[r * per_round:(r + 1) * per_round] for r in range(TINY["rounds"])]
    chosen = [tuple(message.client for message in messages) for messages in rounds]
    assert all(len(set(clients)) == per_round and set(clients) <= set(range(TINY["num_clients"])) for clients in chosen)
    assert all(message.description.startswith(f"round {r}:") for r, messages in enumerate(rounds) for message in messages)
    assert len(set(chosen)) > 1  # the sample changes across rounds
    again = fedzda.run_fedzda(split, fedzda.FedZdaConfig(**TINY), seed=5)
    assert [m.client for m in again.messages] == [m.client for m in sampled.messages]
    assert again.accuracy == sampled.accuracy
    other = fedzda.run_fedzda(split, fedzda.FedZdaConfig(**TINY), seed=6)
    assert [m.client for m in other.messages] != [m.client for m in sampled.messages]


def test_augmentation_starts_at_the_configured_round(sampled):
    # clients of two shards miss classes, so from round augmentation_start on they add ZSDG examples
    for message in sampled.messages:
        round_index = int(message.description.split(":")[0].split()[1])
        added = int(message.description.split(" and ")[1].split()[0])
        assert (added > 0) == (round_index >= TINY["augmentation_start"])


def test_baseline_is_paired_with_the_same_initial_model_and_round_seeds(split, monkeypatch):
    # run_fedavg spawns its initial-model, server and round streams from the sequence it is given:
    # Fed-ZDA and its FedAvg baseline must each get the same, never yet spawned, sequence
    seen = []
    original = fedzda.run_fedavg

    def recording(*args, **kwargs):
        sequence = args[4]
        seen.append((sequence.entropy, sequence.spawn_key, sequence.n_children_spawned))
        return original(*args, **kwargs)

    monkeypatch.setattr(fedzda, "run_fedavg", recording)
    fedzda.run_fedzda(split, fedzda.FedZdaConfig(**dict(TINY, rounds=2, augmentation_start=1, baseline=True)), seed=1)
    assert len(seen) == 2 and seen[0] == seen[1] and seen[0][2] == 0


class _FirstFeaturesAsLogits(torch.nn.Module):
    """An oracle whose logits are the input's first ten values, so its labels are known."""

    def forward(self, inputs):
        return inputs.reshape(inputs.shape[0], -1)[:, :10]


@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), min_size=1, max_size=60))
def test_oracle_agreement_is_the_per_class_share_labelled_as_the_target(pairs):
    targets, oracle_labels = (np.array(column) for column in zip(*pairs))
    inputs = torch.zeros(len(pairs), 1, 8, 8)
    inputs.view(len(pairs), -1)[torch.arange(len(pairs)), torch.as_tensor(oracle_labels)] = 1.0
    shares = fedzda.oracle_agreement(_FirstFeaturesAsLogits(), inputs, torch.as_tensor(targets), 10)
    for label in range(10):
        chosen = targets == label
        if chosen.any():
            assert shares[label] == pytest.approx(np.mean(oracle_labels[chosen] == label), abs=1e-12)
        else:
            assert np.isnan(shares[label])


def test_default_config_computes_no_oracle(sampled):
    assert sampled.diagnostics == {}


@pytest.mark.parametrize("variant", ["client", "server"])
def test_oracle_diagnostics_use_public_data_only_and_are_consistent(split, variant, monkeypatch):
    trained_on = []
    original = fedzda.train_oracle

    def recording(public_sets, *args, **kwargs):
        trained_on.extend(public_sets)
        return original(public_sets, *args, **kwargs)

    monkeypatch.setattr(fedzda, "train_oracle", recording)
    config = fedzda.FedZdaConfig(**dict(TINY, variant=variant, oracle=True, oracle_samples_per_class=4, oracle_epochs=10))
    diagnostics = fedzda.run_fedzda(split, config, seed=5).diagnostics
    assert trained_on and all(isinstance(data, PublicData) for data in trained_on)
    assert diagnostics["oracle_training_records"] == sum(len(data) for data in trained_on)
    assert diagnostics["oracle_test_accuracy"] > 0.8  # 360 public digits train a fair judge
    parts = ["global_model"] + (["client_models"] if variant == "server" else [])
    assert set(diagnostics) == {"oracle_training_records", "oracle_test_accuracy", "model_per_class_accuracy", *parts}
    for part in parts:
        quality = diagnostics[part]
        per_class = np.array(quality["per_class"])
        assert per_class.shape == (10,) and np.all((per_class >= 0) & (per_class <= 1))
        # equal counts per class, so the overall share is the mean of the per-class shares
        assert quality["agreement"] == pytest.approx(per_class.mean(), abs=1e-12)
    if variant == "server":
        # two-shard clients miss classes, so both kinds occur
        assert 0 <= diagnostics["client_models"]["agreement_seen_classes"] <= 1
        assert 0 <= diagnostics["client_models"]["agreement_unseen_classes"] <= 1


def test_frozen_batchnorm_statistics_survive_server_training_and_restore_momentum():
    from trainers import networks

    generator = torch.Generator().manual_seed(0)
    model = networks.build_classifier("conv-batch-8", (1, 8, 8), 10, generator)
    norms = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    for norm in norms:  # statistics unlike those of the training batches below
        norm.running_mean.fill_(0.5)
        norm.running_var.fill_(2.0)
    before = {name: value.copy() for name, value in networks.state_arrays(model).items() if "running" in name}
    inputs, targets = torch.randn(40, 1, 8, 8, generator=generator), torch.arange(10).repeat(4)
    with fedzda._frozen_batchnorm_statistics(model):
        networks.fit(model, inputs, targets, epochs=2, batch_size=8, learning_rate=0.05, generator=generator, optimizer="sgd")
    after = networks.state_arrays(model)
    for name, value in before.items():
        np.testing.assert_array_equal(after[name], value)
    assert all(norm.momentum == 0.1 for norm in norms)
    networks.fit(model, inputs, targets, epochs=1, batch_size=8, learning_rate=0.05, generator=generator, optimizer="sgd")
    assert not np.array_equal(networks.state_arrays(model)[next(iter(before))], before[next(iter(before))])


@pytest.mark.parametrize("field,value", [("server_inversion", "clients"), ("server_batchnorm", "eval"), ("partition", "iid"),
                                         ("shards_per_client", 0), ("oracle", 1), ("oracle_samples_per_class", 1),
                                         ("oracle_epochs", 0)])
def test_new_config_fields_are_validated(field, value):
    with pytest.raises(ValueError, match=field):
        fedzda.FedZdaConfig(**{field: value})


def test_frozen_server_batchnorm_keeps_the_clients_averaged_statistics(split):
    from trainers import networks
    from trainers.fedavg import weighted_state_average

    config = fedzda.FedZdaConfig(**dict(TINY, variant="server", server_inversion="global_model", server_batchnorm="frozen"))
    result = fedzda.run_fedzda(split, config, seed=5)
    train_sets, _ = fedzda.client_training_sets(split, config, seed=5)
    last = [m for m in result.messages if m.description.startswith(f"round {config.rounds - 1}:")]
    averaged = weighted_state_average([m.payload for m in last], [len(train_sets[m.client]) for m in last])
    final = networks.state_arrays(result.model)
    running = [name for name in final if "running" in name]
    assert running
    for name in running:
        np.testing.assert_allclose(final[name], averaged[name], rtol=1e-6)
    # the server did train: the weights moved away from the average
    assert any(not np.allclose(final[name], averaged[name]) for name in final if name.endswith("weight"))
