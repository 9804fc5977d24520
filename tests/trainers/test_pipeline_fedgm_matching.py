"""FedGM's matching pieces: Zhao et al.'s per-output-unit gradient distance on hand-computed cases,
the batched per-class gradients against a per-class loop, the pathological #C = k split, and the
re-clustering and baseline options at tiny sizes."""

import numpy as np
import pytest
import torch
from hypothesis import example, given
from hypothesis import strategies as st

from tests.profiles import examples
from tests.trainers.digits_fixtures import digits_split as split
from trainers import networks
from trainers.pipelines import fedgm

pytestmark = pytest.mark.filterwarnings("ignore::dpmech.UnprotectedReleaseWarning")


def _one_class(*arrays):
    return [torch.tensor(array, dtype=torch.float64)[None] for array in arrays]


def test_distance_is_one_minus_cosine_per_output_unit_on_a_hand_computed_case():
    # a conv kernel (2 output channels, 1 input channel, 1 × 2): channel 0 orthogonal (cos 0),
    # channel 1 parallel (cos 1); a linear layer (1 output, 2 inputs): (3, 4)·(4, 3) = 24, cos 24/25;
    # a bias, which the reference code leaves out.
    real = _one_class([[[[1.0, 0.0]]], [[[1.0, 1.0]]]], [[3.0, 4.0]], [5.0, -1.0])
    synthetic = _one_class([[[[0.0, 1.0]]], [[[2.0, 2.0]]]], [[4.0, 3.0]], [-5.0, 7.0])
    expected = (1 - 0 / (1 + 1e-6)) + (1 - 4 / (4 + 1e-6)) + (1 - 24 / (25 + 1e-6))
    assert float(fedgm.gradient_matching_distance(real, synthetic)) == pytest.approx(expected, rel=1e-12)
    # the distance of whole flattened tensors would differ: 1 − 4/√27 for the kernel alone
    assert expected - 1.04 == pytest.approx(0.0, abs=1e-5)
    assert abs((1 - 4 / 27 ** 0.5) - 1.0) > 0.2


def test_distance_of_a_zero_gradient_row_is_one_not_nan():
    real = _one_class([[0.0, 0.0], [1.0, 2.0]])
    synthetic = _one_class([[1.0, 1.0], [1.0, 2.0]])
    assert float(fedgm.gradient_matching_distance(real, synthetic)) == pytest.approx(1.0, abs=1e-6)


def test_distance_refuses_mismatched_shapes():
    with pytest.raises(ValueError, match="equal shapes"):
        fedgm.gradient_matching_distance(_one_class([[1.0, 2.0]]), _one_class([[1.0, 2.0, 3.0]]))


def _reference_distance(real, synthetic):
    """numpy: Σ over classes and output units of 1 − a·b / (‖a‖‖b‖ + 1e-6), units along axis 1."""
    real, synthetic = real.reshape(*real.shape[:2], -1), synthetic.reshape(*synthetic.shape[:2], -1)
    norms = np.linalg.norm(real, axis=2) * np.linalg.norm(synthetic, axis=2)
    return float((1 - (real * synthetic).sum(axis=2) / (norms + 1e-6)).sum())


@examples(0.5)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 5), st.integers(0, 2**32 - 1))
@example(classes=2, units=3, inputs=1, seed=2_337_442_126)  # a synthetic unit of norm ~0.01: the 1e-6 moves it 1.3e-4
def test_distance_matches_a_numpy_reference_and_ignores_the_scale_of_each_unit(classes, units, inputs, seed):
    rng = np.random.default_rng(seed)
    real = rng.normal(size=(classes, units, 1, inputs)) + 3.0
    synthetic = rng.normal(size=(classes, units, 1, inputs)) - 3.0 * rng.integers(0, 2)
    bias = rng.normal(size=(classes, units))  # one axis besides the class axis: left out
    distance = float(fedgm.gradient_matching_distance(*_pair([real, bias], [synthetic, -bias])))
    assert distance == pytest.approx(_reference_distance(real, synthetic), abs=1e-9)
    real_scale = rng.uniform(0.5, 2.0, size=(classes, units, 1, 1))
    synthetic_scale = rng.uniform(0.5, 2.0, size=(classes, units, 1, 1))
    rescaled, resynthesised = real * real_scale, synthetic * synthetic_scale
    rescaled_distance = float(fedgm.gradient_matching_distance(*_pair([rescaled], [resynthesised])))
    assert rescaled_distance == pytest.approx(_reference_distance(rescaled, resynthesised), abs=1e-9)
    # Scale-free but for the denominator's 1e-6: a unit of norms product N scaled by s moves its cosine by
    # |a·b|·1e-6·|1 − s| / ((sN + 1e-6)(N + 1e-6)) <= 1e-6·|1 − s| / (min(s, 1)·N), large only where N is tiny.
    scale = (real_scale * synthetic_scale).reshape(classes, units)
    norms = np.linalg.norm(real.reshape(classes, units, -1), axis=2) * np.linalg.norm(synthetic.reshape(classes, units, -1), axis=2)
    moved = float((1e-6 * np.abs(1 - scale) / (np.minimum(scale, 1) * norms)).sum())
    assert abs(rescaled_distance - distance) <= moved + 1e-9
    assert -1e-9 <= distance <= 2.0 * classes * units + 1e-9


def _pair(real, synthetic):
    return [torch.tensor(array) for array in real], [torch.tensor(array) for array in synthetic]


def test_batched_class_gradients_equal_a_per_class_loop_with_padding():
    generator = torch.Generator().manual_seed(3)
    network = networks.build_classifier("conv-instance-4", (1, 8, 8), 3, generator).double()
    inputs = torch.rand(9, 1, 8, 8, generator=generator, dtype=torch.float64)
    labels = torch.tensor([0, 0, 0, 0, 1, 1, 2, 2, 2])
    groups = [np.arange(4), np.arange(4, 6), np.arange(6, 9)]  # unequal sizes: padded rows must not count
    index, weights = fedgm._padded_rows(groups, "cpu")
    parameters = {name: value.detach() for name, value in network.named_parameters()}
    batched = fedgm._class_gradients(network, parameters, inputs[index], labels[index], weights.double())
    for position, rows in enumerate(groups):
        loop = torch.autograd.grad(networks.cross_entropy(network(inputs[rows]), labels[rows]), list(network.parameters()))
        for name, expected in zip(parameters, loop):
            torch.testing.assert_close(batched[name][position], expected, rtol=1e-10, atol=1e-12)


def _vmap_class_gradients(network, parameters, inputs, targets, weights):
    """The previous matching step's per-class gradients (torch.func.vmap over classes of grad of
    the weighted mean cross-entropy), kept here as the oracle of the stacked-network version."""
    from torch.func import functional_call, grad, vmap

    def class_loss(parameters, inputs, targets, weights):
        losses = torch.nn.functional.cross_entropy(functional_call(network, parameters, (inputs,)), targets, reduction="none")
        return (losses * weights).sum() / weights.sum()
    return vmap(grad(class_loss), in_dims=(None, 0, 0, 0))(parameters, inputs, targets, weights)


def _matching_loss_and_image_gradient(class_gradients, network, real, real_targets, real_weights, synthetic, index,
                                      synthetic_targets, synthetic_weights):
    parameters = {name: value.detach() for name, value in network.named_parameters()}
    real_gradients = class_gradients(network, parameters, real, real_targets, real_weights)
    synthetic_gradients = class_gradients(network, parameters, synthetic[index], synthetic_targets, synthetic_weights)
    loss = fedgm.gradient_matching_distance([g.detach() for g in real_gradients.values()], list(synthetic_gradients.values()))
    return loss, torch.autograd.grad(loss, synthetic)[0], real_gradients


@examples(0.3)
@given(st.integers(2, 4), st.sampled_from([(1, 8, 8), (2, 12)]), st.integers(0, 2**32 - 1))
@pytest.mark.slow
def test_stacked_matching_loss_and_image_gradient_equal_the_vmap_oracle(classes, input_shape, seed):
    rng = np.random.default_rng(seed)
    network = networks.build_classifier("conv-instance-3", input_shape, classes, networks.torch_generator(rng)).double()
    real_groups = [np.arange(3 * c, 3 * c + rng.integers(1, 4)) for c in range(classes)]  # 1–3 real rows per class
    real_index, real_weights = fedgm._padded_rows(real_groups, "cpu")
    real_inputs = torch.tensor(rng.uniform(size=(3 * classes, *input_shape)))
    real_labels = torch.arange(classes).repeat_interleave(3)
    synthetic_labels = torch.tensor(rng.permutation(np.repeat(np.arange(classes), 2)))
    synthetic = torch.tensor(rng.uniform(size=(2 * classes, *input_shape)), requires_grad=True)
    synthetic_index, synthetic_weights = fedgm._padded_rows([np.flatnonzero(synthetic_labels == c) for c in range(classes)],
                                                            "cpu")
    arguments = (network, real_inputs[real_index], real_labels[real_index], real_weights.double(), synthetic, synthetic_index,
                 synthetic_labels[synthetic_index], synthetic_weights.double())
    loss, image_gradient, real_gradients = _matching_loss_and_image_gradient(fedgm._class_gradients, *arguments)
    oracle_loss, oracle_image_gradient, _ = _matching_loss_and_image_gradient(_vmap_class_gradients, *arguments)
    torch.testing.assert_close(loss, oracle_loss, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(image_gradient, oracle_image_gradient, rtol=1e-8, atol=1e-10)
    assert float(image_gradient.abs().max()) > 0  # the comparison is not between two zeros
    assert all(not gradient.requires_grad for gradient in real_gradients.values())  # no graph kept for the real batches


def test_stacked_gradients_refuse_a_batch_norm_network():
    network = networks.build_classifier("conv-batch-2", (1, 8, 8), 2, torch.Generator().manual_seed(0))
    parameters = {name: value.detach() for name, value in network.named_parameters()}
    with pytest.raises(ValueError, match="network must be built from"):
        fedgm._class_gradients(network, parameters, torch.zeros(2, 1, 1, 8, 8), torch.zeros(2, 1, dtype=torch.long),
                               torch.ones(2, 1))


@examples(0.5)
@given(st.integers(1, 12), st.integers(2, 6), st.data())
def test_pathological_partition_gives_each_client_its_classes_in_equal_shares(num_clients, num_classes, data):
    classes_per_client = data.draw(st.integers(1, num_classes))
    labels = np.repeat(np.arange(num_classes), data.draw(st.integers(num_clients, 3 * num_clients)))
    seed = data.draw(st.integers(0, 2**32 - 1))
    assignment = fedgm.pathological_label_partition(labels, num_clients, classes_per_client, num_classes, seed)
    holders = [np.unique(assignment[labels == label]) for label in range(num_classes)]
    held = [{label for label in range(num_classes) if client in holders[label]} for client in range(num_clients)]
    assert all(len(classes) == classes_per_client and client % num_classes in classes for client, classes in enumerate(held))
    for label in range(num_classes):
        counts = np.bincount(assignment[labels == label] + 1, minlength=num_clients + 1)
        if counts[0]:  # a class nobody holds is left out whole
            assert counts[0] == np.sum(labels == label) and num_clients < num_classes
        else:
            shares = counts[1:][counts[1:] > 0]
            assert shares.max() - shares.min() <= 1
    np.testing.assert_array_equal(assignment, fedgm.pathological_label_partition(labels, num_clients, classes_per_client,
                                                                                 num_classes, seed))


@pytest.mark.parametrize("field,value", [("clustering", "pixel"), ("recluster_interval", 0), ("partition", "shards"),
                                         ("classes_per_client", 0), ("classes_per_client", 11)])
def test_invalid_new_fields_raise(field, value):
    with pytest.raises(ValueError, match=field):
        fedgm.FedGmConfig(**{field: value})


TINY = dict(num_clients=5, images_per_class=3, real_batch_size=6, outer_iterations=1, matching_steps=3, network_steps=1,
            width=8, label_epsilon=4.0, server_epochs=10, partition="pathological", classes_per_client=2,
            clustering="embeddings", recluster_interval=2, baselines=False)


def test_pathological_run_with_reclustering_keeps_each_client_to_its_classes(split):
    config = fedgm.FedGmConfig(**TINY)
    result = fedgm.run_fedgm(split, config, seed=2, progress=False)
    clients = fedgm.fedgm_clients(split.private, config, fedgm.seed_streams(2).partition)
    assert [entry["classes"] for entry in result.per_client] == [2] * 5
    for entry, data in zip(result.per_client, clients):
        assert entry["synthetic_images"] == 2 * config.images_per_class and entry["records"] == len(data)
    assert result.accuracy > 0.2  # 10 classes: chance is 0.1


def test_reclustering_on_embeddings_changes_the_matching_target(split):
    rows = np.flatnonzero(split.private.labels < 2)
    features, labels = split.private.features[rows], split.private.labels[rows]
    images = {}
    for clustering in ("pixels", "embeddings"):
        config = fedgm.FedGmConfig(**dict(TINY, clustering=clustering, recluster_interval=1))
        with networks.torch_threads(1):
            images[clustering], synthetic_labels, initial = fedgm.distil(features, labels, config, "cpu", np.random.default_rng(5))
        assert synthetic_labels.tolist() == [0, 0, 0, 1, 1, 1]
    # same initial images (the same k-means on pixels), different targets from the first step on
    assert not np.allclose(images["pixels"], images["embeddings"])
    assert not np.allclose(images["pixels"], initial)
