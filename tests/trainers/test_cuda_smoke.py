"""CUDA smoke test: the batched logistic heads and one pipeline (Fed-ZDA) on a CUDA device.

Each check is one function of the device. The ``cuda`` cases run only where
``torch.cuda.is_available()`` and are skipped, with the reason, elsewhere; the ``cpu`` cases send
``device="cpu"`` through the same functions, so the comparison and certificate logic runs (and can
fail) on every machine.

Heads: L2-regularised logistic regression is λ-strongly convex, so every model has one minimiser
θ*_b, and a certified ‖∇J_b(θ_b)‖₂ <= τ puts θ_b within τ/λ of it (the certificate of
:func:`trainers.batched_logistic.certify_minimisers`). Parameters fitted on the device and on the
CPU are therefore within 2τ/λ of each other, whatever the device's summation order; the test
checks that, the device's own certificate, and re-certifies the device's parameters on the CPU in
long double (:func:`trainers.batched_logistic._long_double_gradient_bounds`).
"""

import math

import numpy as np
import pytest
import torch

from trainers import networks
from trainers.batched_logistic import BatchedLogisticRegression, _long_double_gradient_bounds, logistic_objective
from trainers.pipelines import fedzda
from tests.trainers.digits_fixtures import digits_split

pytestmark = pytest.mark.filterwarnings("ignore::dpmech.NoGuaranteeWarning")

DEVICES = [
    pytest.param("cuda", id="cuda", marks=pytest.mark.skipif(
        not torch.cuda.is_available(), reason="no CUDA device on this machine (torch.cuda.is_available() is False)")),
    pytest.param("cpu", id="cpu-through-the-same-path"),
]

REGULARIZATION = 0.05
TOLERANCE = 1e-9


def _head_problem(num_classes: int, layout: str, seed: int = 7):
    """Features of norm <= 1, labels, and memberships: random halves of a shared pool (audit
    shadows) or disjoint blocks (one head per client), the two layouts of the batched trainer."""
    rng = np.random.default_rng(seed)
    n, d, models = 160, 6, 8
    features = rng.normal(size=(n, d))
    features /= np.maximum(1.0, np.linalg.norm(features, axis=1, keepdims=True))
    labels = rng.integers(0, num_classes, size=n)
    if layout == "shared":
        membership = rng.random((models, n)) < 0.5
    else:
        membership = np.zeros((models, n), dtype=bool)
        membership[np.repeat(np.arange(models), n // models), rng.permutation(n)] = True
    return features, labels, membership


def check_heads_on(device: str, num_classes: int, layout: str, dtype: torch.dtype) -> None:
    features, labels, membership = _head_problem(num_classes, layout)
    settings = dict(regularization=REGULARIZATION, num_classes=num_classes, tol=TOLERANCE, feature_bound=1.0)
    reference = BatchedLogisticRegression(**settings, device="cpu").fit(features, labels, membership)
    fitted = BatchedLogisticRegression(**settings, device=device, dtype=dtype).fit(features, labels, membership)

    assert fitted.parameters_.device.type == device
    assert fitted.parameters_.dtype == torch.float64  # the certified release is float64 on every device
    assert fitted.gradient_norm_bound_ <= TOLERANCE
    on_cpu = fitted.parameters_.cpu()
    distances = torch.linalg.vector_norm((on_cpu - reference.parameters_).reshape(len(membership), -1), dim=1)
    assert float(distances.max()) <= 2 * TOLERANCE / REGULARIZATION

    # The device's certificate, re-derived on the CPU in long double from its parameters alone.
    augmented = torch.as_tensor(np.hstack([features, np.ones((len(features), 1))]), dtype=torch.float64)
    rows = torch.as_tensor(membership, dtype=torch.float64)
    objective = logistic_objective(augmented, torch.as_tensor(labels), rows / rows.sum(dim=1, keepdim=True),
                                   REGULARIZATION, num_classes)
    bounds = _long_double_gradient_bounds(objective, on_cpu, torch.arange(len(membership)))
    assert float(bounds.max()) <= TOLERANCE
    assert fitted.sensitivity(80) == reference.sensitivity(80)

    # Predictions agree wherever the CPU's margin exceeds what a 2τ/λ move of θ can change.
    cpu_logits = reference.decision_function(features)
    device_logits = fitted.decision_function(features).cpu()
    movable = 2 * TOLERANCE / REGULARIZATION * math.sqrt(2.0) * 2  # ‖x̃‖ <= √2, and a difference of two logits
    if num_classes == 2:
        decided = cpu_logits.abs() > movable
        agree = fitted.predict(features).cpu() == reference.predict(features)
    else:
        top2 = cpu_logits.topk(2, dim=2).values
        decided = (top2[..., 0] - top2[..., 1]) > movable
        agree = device_logits.argmax(dim=2) == cpu_logits.argmax(dim=2)
    assert bool(agree[decided].all())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("num_classes", [2, 4])
@pytest.mark.parametrize("layout", ["shared", "own"])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["float64", "float32-warm-start"])
def test_batched_heads_agree_with_the_cpu_within_the_certified_distance(device, num_classes, layout, dtype):
    check_heads_on(device, num_classes, layout, dtype)


# Fed-ZDA at a tiny size; on the CPU (seed 3) it reaches 0.86 (Fed-ZDAC) and 0.69 (Fed-ZDAS) global accuracy, chance 0.1.
TINY_FEDZDA = dict(num_clients=4, alpha=0.3, rounds=3, augmentation_start=1, zsdg_iterations=10, synthetic_per_class=4,
                   local_epochs=2, architecture="conv-batch-8", stacked_clients=True, baseline=False)
MINIMUM_ACCURACY = 0.5


def check_fedzda_on(device: str, variant: str, split) -> None:
    config = fedzda.FedZdaConfig(**TINY_FEDZDA, variant=variant)
    result = fedzda.run_fedzda(split, config, seed=3, device=device)
    assert all(parameter.device.type == device for parameter in result.model.parameters())
    assert all(buffer.device.type == device for buffer in result.model.buffers())
    assert len(result.messages) == config.rounds * config.num_clients
    assert all(np.isfinite(value).all() for message in result.messages for value in message.payload.values())
    assert result.guarantees["record_level"].epsilon == math.inf  # no guarantee, on any device
    assert result.accuracy >= MINIMUM_ACCURACY
    # The released global model evaluates the same on the CPU as on the device.
    on_cpu = networks.load_state_arrays_(
        networks.build_classifier(config.architecture, config.input_shape, config.num_classes, torch.Generator()),
        networks.state_arrays(result.model))
    inputs = networks.as_inputs(split.test.features, config.input_shape, "cpu")
    labels = networks.as_targets(split.test.labels, "cpu")
    assert networks.accuracy(on_cpu, inputs, labels) == pytest.approx(result.accuracy, abs=2.0 / len(labels))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("variant", ["client", "server"])
def test_fedzda_runs_end_to_end_on_the_device(device, variant, digits_split):
    check_fedzda_on(device, variant, digits_split)
