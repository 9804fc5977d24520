"""Small torch classifiers for digits (1×8×8 images) and MNIST-1D (1×40 signals), seeded training
and evaluation.

Every random draw takes an explicit ``torch.Generator`` (parameter initialisation, shuffles), so
a model trained from the same generator state is bit-identical on CPU. Generators live on the CPU
and the drawn indices move to ``device``, so the same code runs on CUDA.

Architectures (``input_shape`` is (channels, length) for 1-D signals or (channels, height, width)
for images; a ConvNet uses 1-D or 2-D convolutions accordingly):

* ``"mlp-<width>"``: flatten, Linear(width), ReLU, Linear(num_classes);
* ``"conv-<norm>-<width>"``: two blocks of [3-wide convolution (padding 1), norm, ReLU, average
  pooling by 2], then Linear(num_classes). ``norm`` is ``instance`` (GroupNorm with one group per
  channel and affine parameters, the instance normalisation of Zhao & Bilen's ConvNet), ``batch``
  (BatchNorm, needed by Fed-ZDA's model inversion) or ``none``.
"""

from __future__ import annotations

import contextlib
import math

import numpy as np
import torch
from torch import nn

from dpmech import validation as check

NORMALISATIONS = ("instance", "batch", "none")


def torch_generator(rng) -> torch.Generator:
    """A CPU ``torch.Generator`` seeded by one draw from the numpy Generator (or int seed) ``rng``."""
    seed = int(check.generator("rng", rng).integers(0, 2**63 - 1))
    return torch.Generator().manual_seed(seed)


@contextlib.contextmanager
def torch_threads(count):
    """Run the block with ``count`` intra-op torch threads, then restore the caller's setting.

    The pipelines' models are tiny: on a shared 2-core machine one thread per process was 10–20×
    faster than two (thread contention); parallelism comes from clients through joblib instead.
    ``None`` leaves the setting alone.
    """
    if count is None:
        yield
        return
    count = check.integer_scalar("torch_threads", count, 1)
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def validated_input_shape(input_shape) -> tuple:
    shape = tuple(int(size) for size in input_shape)
    if len(shape) not in (2, 3) or min(shape) < 1:
        raise ValueError(f"input_shape must be (channels, length) or (channels, height, width) of positive sizes (got {input_shape!r})")
    return shape


def validated_architecture(architecture: str, name: str = "architecture") -> str:
    parts = str(architecture).split("-")
    valid = (
        (len(parts) == 2 and parts[0] == "mlp" and parts[1].isdigit() and int(parts[1]) > 0)
        or (len(parts) == 3 and parts[0] == "conv" and parts[1] in NORMALISATIONS and parts[2].isdigit() and int(parts[2]) > 0)
    )
    if not valid:
        raise ValueError(
            f"{name} must be 'mlp-<width>' or 'conv-<{'|'.join(NORMALISATIONS)}>-<width>' with width >= 1 (got {architecture!r})"
        )
    return str(architecture)


def _norm_layer(norm: str, channels: int, dimensions: int) -> nn.Module:
    if norm == "instance":
        return nn.GroupNorm(channels, channels, affine=True)
    if norm == "batch":
        return nn.BatchNorm1d(channels) if dimensions == 1 else nn.BatchNorm2d(channels)
    return nn.Identity()


def _conv_network(input_shape, num_classes, norm, width) -> nn.Sequential:
    dimensions = len(input_shape) - 1
    conv = nn.Conv1d if dimensions == 1 else nn.Conv2d
    pool = nn.AvgPool1d if dimensions == 1 else nn.AvgPool2d
    layers, channels, spatial = [], input_shape[0], list(input_shape[1:])
    for _ in range(2):
        layers += [conv(channels, width, 3, padding=1), _norm_layer(norm, width, dimensions), nn.ReLU(), pool(2)]
        channels, spatial = width, [size // 2 for size in spatial]
    if min(spatial) < 1:
        raise ValueError(f"input_shape {tuple(input_shape)} is too small for two pooling steps")
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(width * math.prod(spatial), num_classes))


def initialise_parameters_(model: nn.Module, generator: torch.Generator) -> nn.Module:
    """torch's default initialisation (Kaiming-uniform weights, uniform biases of bound 1/√fan_in),
    drawn from ``generator`` instead of the global generator; norm layers get weight 1, bias 0."""
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (nn.Linear, nn.Conv1d, nn.Conv2d)):
                nn.init.kaiming_uniform_(module.weight, a=math.sqrt(5), generator=generator)
                fan_in = module.weight[0].numel()
                nn.init.uniform_(module.bias, -1.0 / math.sqrt(fan_in), 1.0 / math.sqrt(fan_in), generator=generator)
            elif isinstance(module, (nn.GroupNorm, nn.BatchNorm1d, nn.BatchNorm2d)):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)
    return model


def build_classifier(architecture: str, input_shape, num_classes: int, generator: torch.Generator, device="cpu") -> nn.Module:
    """A freshly initialised classifier (see the module docstring for the architectures)."""
    architecture = validated_architecture(architecture)
    input_shape = validated_input_shape(input_shape)
    num_classes = check.integer_scalar("num_classes", num_classes, 2)
    parts = architecture.split("-")
    if parts[0] == "mlp":
        width = int(parts[1])
        model = nn.Sequential(nn.Flatten(), nn.Linear(math.prod(input_shape), width), nn.ReLU(), nn.Linear(width, num_classes))
    else:
        model = _conv_network(input_shape, num_classes, parts[1], int(parts[2]))
    return initialise_parameters_(model.to(torch.float32), generator).to(device)


def as_inputs(features, input_shape, device="cpu") -> torch.Tensor:
    """Feature rows reshaped to (n, *input_shape) float32 tensors on ``device``."""
    array = np.asarray(features, dtype=np.float32)
    input_shape = validated_input_shape(input_shape)
    if array.ndim != 2 or array.shape[1] != math.prod(input_shape):
        raise ValueError(f"features must have shape (n, {math.prod(input_shape)}) for input_shape {input_shape} (got {array.shape})")
    return torch.tensor(array, device=device).reshape(array.shape[0], *input_shape)


def as_targets(labels, device="cpu") -> torch.Tensor:
    return torch.as_tensor(np.asarray(labels, dtype=np.int64), device=device)


def cross_entropy(logits, labels):
    return nn.functional.cross_entropy(logits, labels)


def mean_absolute_error(logits, target_logits):
    return nn.functional.l1_loss(logits, target_logits)


def fit(model: nn.Module, inputs: torch.Tensor, targets: torch.Tensor, *, loss=cross_entropy, epochs: int,
        batch_size: int, learning_rate: float, generator: torch.Generator, optimizer: str = "adam") -> nn.Module:
    """Mini-batch training in place: ``epochs`` passes over shuffles drawn from ``generator``.

    ``targets`` are class labels for :func:`cross_entropy` or logits for :func:`mean_absolute_error`.
    ``optimizer`` is ``"adam"`` or ``"sgd"`` (momentum 0.9). Zero epochs leave the model unchanged.
    A model with BatchNorm skips a final batch of one example, which BatchNorm cannot normalise.
    """
    epochs = check.integer_scalar("epochs", epochs, 0)
    batch_size = check.integer_scalar("batch_size", batch_size, 1)
    learning_rate = float(check.positive("learning_rate", learning_rate))
    optimizer = check.choice("optimizer", optimizer, ("adam", "sgd"))
    if epochs == 0 or inputs.shape[0] == 0:
        return model
    if optimizer == "adam":
        step = torch.optim.Adam(model.parameters(), lr=learning_rate)
    else:
        step = torch.optim.SGD(model.parameters(), lr=learning_rate, momentum=0.9)
    model.train()
    for _ in range(epochs):
        order = torch.randperm(inputs.shape[0], generator=generator).to(inputs.device)
        for batch in order.split(batch_size):
            # BatchNorm cannot normalise a batch of one in training mode
            if batch.numel() < 2 and any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules()):
                continue
            step.zero_grad()
            loss(model(inputs[batch]), targets[batch]).backward()
            step.step()
    return model


def predict_logits(model: nn.Module, inputs: torch.Tensor, batch_size: int = 1024) -> torch.Tensor:
    """Logits in evaluation mode (BatchNorm uses its running statistics), without gradients."""
    model.eval()
    with torch.no_grad():
        return torch.cat([model(chunk) for chunk in inputs.split(batch_size)]) if inputs.shape[0] else torch.empty(0)


def accuracy(model: nn.Module, inputs: torch.Tensor, labels: torch.Tensor) -> float:
    if inputs.shape[0] == 0:
        raise ValueError("accuracy needs at least one example")
    return float((predict_logits(model, inputs).argmax(dim=1) == labels).double().mean())


def per_class_accuracy(model: nn.Module, inputs: torch.Tensor, labels: torch.Tensor, num_classes: int) -> np.ndarray:
    """Accuracy on each class's examples (NaN for a class absent from ``labels``)."""
    correct = (predict_logits(model, inputs).argmax(dim=1) == labels).cpu().numpy()
    labels = labels.cpu().numpy()
    counts = np.bincount(labels, minlength=num_classes)
    hits = np.bincount(labels, weights=correct, minlength=num_classes)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, hits / np.maximum(counts, 1), np.nan)


def state_arrays(model: nn.Module) -> dict:
    """The model's full state (parameters and BatchNorm buffers) as numpy arrays, for a ClientMessage."""
    return {name: value.detach().cpu().numpy().copy() for name, value in model.state_dict().items()}


def load_state_arrays_(model: nn.Module, arrays) -> nn.Module:
    device = next(model.parameters()).device
    model.load_state_dict({name: torch.tensor(np.array(value), device=device) for name, value in arrays.items()})
    return model
