"""The Fed-ZDAS investigation's switches (issue 16): the weight of ZSDG's statistics term and label
smoothing of the server's synthetic targets. Defaults are the seed's (weight 1, hard labels)."""

from dataclasses import replace

import numpy as np
import pytest
import torch

from trainers import networks
from trainers.pipelines import fedzda

pytestmark = pytest.mark.filterwarnings("ignore::dpmech.NoGuaranteeWarning")


def _trained_model(seed=0):
    model = networks.build_classifier("conv-batch-4", (1, 12), 3, torch.Generator().manual_seed(seed))
    generator = torch.Generator().manual_seed(seed + 1)
    inputs = torch.randn(60, 1, 12, generator=generator) * 2 + 1
    targets = torch.randint(0, 3, (60,), generator=generator)
    return networks.fit(model, inputs, targets, epochs=2, batch_size=10, learning_rate=0.05, generator=generator, optimizer="sgd")


def _statistics_mismatch(model, inputs):
    """Eq. 3's statistics term of ``inputs``."""
    captured = []
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    hooks = [norm.register_forward_pre_hook(lambda module, args: captured.append((module, args[0]))) for norm in norms]
    model.eval()
    with torch.no_grad():
        model(inputs)
    for hook in hooks:
        hook.remove()
    total = 0.0
    for module, activations in captured:
        axes = [0, *range(2, activations.dim())]
        mean, std = activations.mean(dim=axes), torch.sqrt(activations.var(dim=axes, unbiased=False) + module.eps)
        total += float(((mean - module.running_mean) ** 2).sum() + ((std - torch.sqrt(module.running_var + module.eps)) ** 2).sum())
    return total


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.slow
def test_a_heavier_statistics_weight_matches_the_batchnorm_statistics_more_closely(seed):
    model = _trained_model(seed)
    targets = torch.tensor([0, 1, 2] * 8)
    mismatch = {
        weight: _statistics_mismatch(model, fedzda.zero_shot_data(model, targets, (1, 12), iterations=150, learning_rate=0.05,
                                                                  generator=torch.Generator().manual_seed(seed),
                                                                  statistics_weight=weight))
        for weight in (0.01, 1.0, 100.0)
    }
    # Adam is invariant to the scale of the whole loss: only the weight relative to the cross-entropy matters
    assert max(mismatch[100.0], mismatch[1.0]) < mismatch[0.01]
    default = fedzda.zero_shot_data(model, targets, (1, 12), iterations=5, learning_rate=0.05, generator=torch.Generator().manual_seed(seed))
    weighted = fedzda.zero_shot_data(model, targets, (1, 12), iterations=5, learning_rate=0.05, generator=torch.Generator().manual_seed(seed),
                                     statistics_weight=1.0)
    torch.testing.assert_close(default, weighted, rtol=0, atol=0)  # the seed's Eq. 3 is weight 1


def _server_step(smoothing):
    config = fedzda.FedZdaConfig(input_shape=(1, 12), num_classes=3, variant="server", rounds=2, augmentation_start=0,
                                 zsdg_iterations=3, synthetic_per_class=4, architecture="conv-batch-4",
                                 server_label_smoothing=smoothing)
    model, clients = _trained_model(0), [_trained_model(1), _trained_model(2)]
    fedzda._server_augmentation(model, clients, 0, np.random.default_rng(7), config=config)
    return networks.state_arrays(model)


@pytest.mark.slow
def test_server_label_smoothing_changes_the_server_step_and_zero_is_hard_labels():
    hard, again, smoothed = _server_step(0.0), _server_step(0.0), _server_step(0.3)
    assert all(np.array_equal(hard[name], again[name]) for name in hard)
    assert not np.allclose(hard["9.weight"], smoothed["9.weight"])


@pytest.mark.parametrize("field, value", [("server_label_smoothing", 1.0), ("server_label_smoothing", -0.1),
                                          ("server_label_smoothing", "0.1"), ("zsdg_statistics_weight", 0.0),
                                          ("zsdg_statistics_weight", float("nan")), ("zsdg_statistics_weight", True)])
def test_investigation_switches_refuse_values_outside_their_range(field, value):
    with pytest.raises(ValueError, match=field):
        fedzda.FedZdaConfig(**{field: value})


def test_batches_sharing_one_generator_are_the_sequential_runs_in_order():
    # Fed-ZDAS with server_inversion="global_model" inverts the averaged model once per received
    # model from one generator: batched, each batch must be what the sequential run drew and found
    model = _trained_model(3)
    targets = torch.tensor([0, 1, 2, 0, 1, 2])
    generator = torch.Generator().manual_seed(11)
    sequential = [fedzda.zero_shot_data(model, targets, (1, 12), iterations=6, learning_rate=0.1, generator=generator) for _ in range(3)]
    shared = torch.Generator().manual_seed(11)
    batched = fedzda.zero_shot_batches(model, [targets] * 3, (1, 12), iterations=6, learning_rate=0.1, generators=[shared] * 3)
    for one, other in zip(sequential, batched):
        torch.testing.assert_close(one, other, rtol=1e-4, atol=1e-4)
    assert not torch.allclose(batched[0], batched[1])  # each batch has its own draws


@pytest.mark.parametrize("inversion", fedzda.SERVER_INVERSIONS)
def test_server_synthetic_set_is_class_balanced_per_received_model(inversion):
    config = fedzda.FedZdaConfig(input_shape=(1, 12), num_classes=3, architecture="conv-batch-4", synthetic_per_class=4,
                                 zsdg_iterations=3, server_inversion=inversion)
    clients = [_trained_model(seed) for seed in (1, 2)]
    inputs, targets = fedzda.server_synthetic_set(_trained_model(0), clients, torch.Generator().manual_seed(0), config)
    assert inputs.shape == (2 * 3 * 4, 1, 12)
    np.testing.assert_array_equal(np.bincount(targets.numpy()), [8, 8, 8])


@pytest.mark.slow
def test_server_step_is_the_synthetic_set_then_server_training():
    """The hook Fed-ZDAS runs each round is exactly the two public steps, drawing from one generator."""
    config = fedzda.FedZdaConfig(input_shape=(1, 12), num_classes=3, architecture="conv-batch-4", synthetic_per_class=4,
                                 zsdg_iterations=3, augmentation_start=1, rounds=3)
    clients = [_trained_model(seed) for seed in (1, 2)]
    hooked, stepwise = _trained_model(0), _trained_model(0)
    fedzda._server_augmentation(hooked, clients, 1, np.random.default_rng(5), config=config)
    generator = networks.torch_generator(np.random.default_rng(5))
    inputs, targets = fedzda.server_synthetic_set(stepwise, clients, generator, config)
    fedzda.server_training(stepwise, inputs, targets, generator, config)
    for name, value in networks.state_arrays(hooked).items():
        np.testing.assert_array_equal(value, networks.state_arrays(stepwise)[name])
    # before r₀ the hook leaves the averaged model alone
    untouched = _trained_model(0)
    fedzda._server_augmentation(untouched, clients, 0, np.random.default_rng(5), config=config)
    for name, value in networks.state_arrays(untouched).items():
        np.testing.assert_array_equal(value, networks.state_arrays(_trained_model(0))[name])


def test_server_learning_rate_defaults_to_the_clients_and_sets_the_servers_step():
    config = fedzda.FedZdaConfig(input_shape=(1, 12), num_classes=3, architecture="conv-batch-4")
    generator = torch.Generator().manual_seed(3)
    inputs, targets = torch.randn(24, 1, 12, generator=generator), torch.arange(3).repeat(8)

    def trained(server_config):
        return networks.state_arrays(fedzda.server_training(_trained_model(0), inputs, targets, torch.Generator().manual_seed(4),
                                                            server_config))

    default, explicit = trained(config), trained(replace(config, server_learning_rate=config.learning_rate))
    smaller = trained(replace(config, server_learning_rate=config.learning_rate / 10))
    start = networks.state_arrays(_trained_model(0))
    name = next(name for name in start if name.endswith("weight"))
    np.testing.assert_array_equal(default[name], explicit[name])
    # plain SGD steps from the same start on the same batches: a tenth of the rate moves the weights less
    assert np.linalg.norm(smaller[name] - start[name]) < np.linalg.norm(default[name] - start[name])


@pytest.mark.parametrize("value", [0.0, -0.01, float("nan"), float("inf")])
def test_server_learning_rate_must_be_positive_and_finite(value):
    with pytest.raises(ValueError, match="server_learning_rate"):
        fedzda.FedZdaConfig(server_learning_rate=value)
