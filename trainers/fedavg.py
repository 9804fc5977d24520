"""FedAvg (McMahan et al. 2017) over the seed pipelines' small torch classifiers: the baseline of
FedGM (multi-round and one-shot) and the base protocol of Fed-ZDA.

Each round every client starts from the global model, trains ``local_epochs`` on its data and
sends its whole model state (a :class:`~trainers.federation.ClientMessage`); the server averages
the states weighted by the clients' record counts. The updates carry no noise: FedAvg releases
non-private functions of the clients' data, and every message records
``dpmech.NoGuaranteeEvent`` (or the event the caller names).

Two hooks let Fed-ZDA build on it without copying the loop: ``client_augmentation`` adds
examples to a client's training set from the received global model (Fed-ZDAC), and
``server_update`` retrains the averaged model from the received client models (Fed-ZDAS). Both
must be picklable (module-level functions or ``functools.partial`` of them) so that joblib can
ship them to worker processes.

With ``FedAvgConfig(stacked_clients=True)`` a round's sampled clients train in one process as one
stacked model (:func:`fit_stacked_clients`): grouped convolutions hold every client's network side
by side, so each SGD step is one call for all clients instead of one per client. It is the same
computation (each client's shuffles, batches, BatchNorm statistics and momentum are its own; only
the floating-point summation order differs), for the ``conv-batch`` networks and SGD; at Fed-ZDA's
scale (10 clients a round, batch 10) the per-step overhead of tiny models dominates, which this removes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np
import torch
from torch import nn
from rich.progress import Progress

from dpmech import NoGuaranteeEvent
from dpmech import validation as check

from . import networks
from .data import LabelledData
from .federation import ClientMessage, client_generators, run_clients, seed_sequence

FEDAVG_NO_GUARANTEE = "FedAvg shares non-private model updates: no formal guarantee"


@dataclass(frozen=True)
class FedAvgConfig:
    """Architecture and schedule of FedAvg; ``rounds = 1`` is one-shot FedAvg. Each round the
    server samples :func:`clients_per_round` of the K clients (the fraction C of McMahan et al.
    2017; ``client_fraction = 1`` takes every client)."""

    architecture: str = "conv-batch-16"
    rounds: int = 10
    local_epochs: int = 2
    batch_size: int = 16
    learning_rate: float = 0.05
    optimizer: str = "sgd"
    client_fraction: float = 1.0
    # train a round's clients as one stacked model (module docstring); conv-batch networks and SGD only
    stacked_clients: bool = False

    def __post_init__(self):
        networks.validated_architecture(self.architecture)
        check.integer_scalar("rounds", self.rounds, 1)
        check.integer_scalar("local_epochs", self.local_epochs, 1)
        check.integer_scalar("batch_size", self.batch_size, 1)
        check.positive("learning_rate", self.learning_rate)
        check.choice("optimizer", self.optimizer, ("adam", "sgd"))
        check.in_interval("client_fraction", self.client_fraction, 0.0, 1.0, low_open=True, high_open=False)
        check.boolean("stacked_clients", self.stacked_clients)
        if self.stacked_clients and (self.architecture.split("-")[:2] != ["conv", "batch"] or self.optimizer != "sgd"):
            raise ValueError("stacked_clients needs a 'conv-batch-<width>' architecture and optimizer 'sgd' "
                             f"(got {self.architecture!r}, {self.optimizer!r})")


def clients_per_round(num_clients: int, client_fraction: float) -> int:
    """m = max(1, round(C·K)): the number of clients FedAvg samples per round (McMahan et al. 2017,
    Algorithm 1, with the nearest integer so that C·K = 9.999… still gives 10)."""
    num_clients = check.integer_scalar("num_clients", num_clients, 1)
    client_fraction = float(check.in_interval("client_fraction", client_fraction, 0.0, 1.0, low_open=True, high_open=False))
    return max(1, int(round(client_fraction * num_clients)))


@dataclass(frozen=True)
class FedAvgRun:
    """The final global model and every message sent, round by round: ``messages[r]`` holds the
    messages of the clients sampled in round r, in client order (``message.client`` is the id)."""

    model: torch.nn.Module
    messages: Sequence[Sequence[ClientMessage]]


def weighted_state_average(states: Sequence[dict], weights) -> dict:
    """Σ_i w_i·state_i / Σ_i w_i for float entries; integer entries (BatchNorm's batch counters)
    take the maximum, since an average of counters has no meaning."""
    weights = np.asarray(weights, dtype=np.float64)
    if len(states) == 0 or weights.shape != (len(states),) or np.any(weights < 0) or weights.sum() <= 0:
        raise ValueError("weights must be one non-negative weight per state with a positive sum")
    shares = weights / weights.sum()
    averaged = {}
    for name, first in states[0].items():
        stacked = np.stack([np.asarray(state[name]) for state in states])
        if stacked.dtype.kind == "f":
            averaged[name] = np.tensordot(shares, stacked, axes=1).astype(stacked.dtype)
        else:
            averaged[name] = stacked.max(axis=0)
    return averaged


def _client_training_set(global_state, features, labels, architecture, input_shape, num_classes, device,
                         client_augmentation, round_index, generator):
    """The received global model and the client's training inputs and targets (its records plus
    any augmentation), drawing from ``generator`` in the same order whichever trainer follows."""
    model = networks.load_state_arrays_(
        networks.build_classifier(architecture, input_shape, num_classes, generator, device), global_state
    )
    inputs = networks.as_inputs(features, input_shape, device)
    targets = networks.as_targets(labels, device)
    added = 0
    if client_augmentation is not None:
        extra_inputs, extra_targets = client_augmentation(model, labels, round_index, generator)
        added = int(extra_inputs.shape[0])
        inputs, targets = torch.cat([inputs, extra_inputs]), torch.cat([targets, extra_targets])
    return model, inputs, targets, added


def _message(client, state, events, config, client_augmentation, round_index, added) -> ClientMessage:
    return ClientMessage(
        client=client,
        payload=state,
        events=events,
        description=f"round {round_index}: full model state after {config.local_epochs} local epochs"
        + (f" on its records and {added} synthetic examples" if client_augmentation is not None else ""),
    )


def _local_update(global_state, features, labels, architecture, input_shape, num_classes, config, device,
                  client_augmentation, events, round_index, client, rng) -> ClientMessage:
    generator = networks.torch_generator(rng)
    model, inputs, targets, added = _client_training_set(global_state, features, labels, architecture, input_shape, num_classes,
                                                         device, client_augmentation, round_index, generator)
    networks.fit(model, inputs, targets, epochs=config.local_epochs, batch_size=config.batch_size,
                 learning_rate=config.learning_rate, generator=generator, optimizer=config.optimizer)
    return _message(client, networks.state_arrays(model), events, config, client_augmentation, round_index, added)


# conv-batch networks (trainers.networks): Sequential indices of the two convolutions, their
# BatchNorm layers and the final linear layer
_CONVOLUTIONS, _NORMS, _LINEAR = ("0", "4"), ("1", "5"), "9"


def _stacked_logits(weights, statistics, inputs, *, momentum, eps):
    """Training-mode logits (k, b, classes) of k conv-batch networks on their own batches
    ``inputs`` (k, b, channels, *spatial); ``weights[name]`` holds the k networks' parameters
    stacked on axis 0. Updates ``statistics`` (the k networks' BatchNorm running statistics,
    contiguous (k, width) tensors) in place as nn.BatchNorm does."""
    count, batch = inputs.shape[:2]
    dimensions = inputs.dim() - 3
    convolution = nn.functional.conv1d if dimensions == 1 else nn.functional.conv2d
    pool = nn.functional.avg_pool1d if dimensions == 1 else nn.functional.avg_pool2d
    # the networks side by side on the channel axis: client g owns channels [g·c, (g+1)·c)
    hidden = inputs.transpose(0, 1).reshape(batch, count * inputs.shape[2], *inputs.shape[3:])
    for conv, norm in zip(_CONVOLUTIONS, _NORMS):
        kernel = weights[conv + ".weight"]
        hidden = convolution(hidden, kernel.reshape(-1, *kernel.shape[2:]), weights[conv + ".bias"].reshape(-1),
                             padding=1, groups=count)
        hidden = nn.functional.batch_norm(hidden, statistics[norm + ".running_mean"].view(-1),
                                          statistics[norm + ".running_var"].view(-1), weights[norm + ".weight"].reshape(-1),
                                          weights[norm + ".bias"].reshape(-1), training=True, momentum=momentum, eps=eps)
        hidden = pool(nn.functional.relu(hidden), 2)
    flat = hidden.reshape(batch, count, -1).transpose(0, 1)  # each network's Flatten: channel-major
    return torch.baddbmm(weights[_LINEAR + ".bias"].unsqueeze(1), flat, weights[_LINEAR + ".weight"].transpose(1, 2))


def fit_stacked_clients(model: nn.Module, inputs: Sequence[torch.Tensor], targets: Sequence[torch.Tensor],
                        generators: Sequence[torch.Generator], *, epochs: int, batch_size: int, learning_rate: float,
                        momentum: float = 0.9) -> list:
    """K copies of the conv-batch ``model`` trained as K calls of :func:`trainers.networks.fit`
    with ``optimizer="sgd"`` would train them, copy i on ``inputs[i]``, ``targets[i]`` with
    shuffles from ``generators[i]``, but each step is one stacked call for every copy that has a
    batch of that size (same batches, BatchNorm statistics and momentum per copy; only the
    floating-point summation order differs). Returns the K trained states as numpy arrays."""
    if not (len(inputs) == len(targets) == len(generators) >= 1):
        raise ValueError("inputs, targets and generators must hold one entry per client")
    epochs = check.integer_scalar("epochs", epochs, 0)
    batch_size = check.integer_scalar("batch_size", batch_size, 1)
    learning_rate = float(check.positive("learning_rate", learning_rate))
    norms = [module for module in model.modules() if isinstance(module, nn.modules.batchnorm._BatchNorm)]
    if [name for name, _ in model.named_children()][-1] != _LINEAR or len(norms) != len(_NORMS):
        raise ValueError("model must be a conv-batch network of trainers.networks")
    count = len(inputs)
    state = model.state_dict()
    weights = {name: value.detach().unsqueeze(0).repeat(count, *([1] * value.dim())).requires_grad_(True)
               for name, value in model.named_parameters()}
    statistics = {name: value.detach().unsqueeze(0).repeat(count, *([1] * value.dim())) for name, value in state.items()
                  if name not in weights}
    velocity = {name: torch.zeros_like(value) for name, value in weights.items()}
    # each client's batches in networks.fit's order: one shuffle per epoch, batches of one skipped (BatchNorm)
    batches = [
        [batch for _ in range(epochs) for batch in torch.randperm(data.shape[0], generator=generator).to(data.device).split(batch_size)
         if batch.numel() >= 2]
        for data, generator in zip(inputs, generators)
    ]
    device = inputs[0].device
    # every client's records in one padded tensor, so a step gathers all its batches in one indexing
    longest = max(data.shape[0] for data in inputs)
    padded_inputs = torch.zeros((count, longest, *inputs[0].shape[1:]), dtype=inputs[0].dtype, device=device)
    padded_targets = torch.zeros((count, longest), dtype=targets[0].dtype, device=device)
    for client, (data, labels) in enumerate(zip(inputs, targets)):
        padded_inputs[client, : data.shape[0]] = data
        padded_targets[client, : labels.shape[0]] = labels
    everyone = torch.arange(count, device=device)
    for step in range(max(len(client_batches) for client_batches in batches)):
        active = [client for client in range(count) if step < len(batches[client])]
        for size in sorted({batches[client][step].numel() for client in active}):
            group = [client for client in active if batches[client][step].numel() == size]
            whole = len(group) == count  # the usual step: no client selection to copy in and out
            index = everyone if whole else torch.tensor(group, device=device)
            positions = torch.stack([batches[client][step] for client in group])
            rows = index.unsqueeze(1)
            group_weights = weights if whole else {name: value[index] for name, value in weights.items()}
            group_statistics = statistics if whole else {name: value[index].contiguous() for name, value in statistics.items()}
            logits = _stacked_logits(group_weights, group_statistics, padded_inputs[rows, positions],
                                     momentum=norms[0].momentum, eps=norms[0].eps)
            # a sum of the clients' mean losses: client g's gradient is that of its own loss alone
            losses = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), padded_targets[rows, positions].reshape(-1),
                                                 reduction="none")
            gradients = torch.autograd.grad(losses.view(len(group), size).mean(dim=1).sum(), list(weights.values()))
            with torch.no_grad():
                for (name, weight), gradient in zip(weights.items(), gradients):
                    if whole:
                        velocity[name].mul_(momentum).add_(gradient)
                        weight.sub_(learning_rate * velocity[name])
                    else:
                        velocity[name][index] = momentum * velocity[name][index] + gradient[index]
                        weight[index] -= learning_rate * velocity[name][index]
                for name, value in group_statistics.items():
                    if name.endswith("num_batches_tracked"):
                        value.add_(1)
                    if not whole:
                        statistics[name][index] = value
    return [{name: (weights[name] if name in weights else statistics[name])[client].detach().cpu().numpy().copy() for name in state}
            for client in range(count)]


def _stacked_round(global_state, client_data, sampled, architecture, input_shape, num_classes, config, device,
                   client_augmentation, stacked_augmentation, events, round_index, seed) -> list:
    """One round's sampled clients through :func:`fit_stacked_clients`, with the generators,
    augmentation and messages that :func:`run_clients` over :func:`_local_update` gives them.
    ``stacked_augmentation`` augments every client in one call, after each client's generator
    has drawn its model initialisation, as in :func:`_client_training_set`."""
    generators = [networks.torch_generator(rng) for rng in client_generators(seed, len(sampled))]
    per_client = None if stacked_augmentation is not None else client_augmentation
    prepared = [
        list(_client_training_set(global_state, client_data[client].features, client_data[client].labels, architecture, input_shape,
                                  num_classes, device, per_client, round_index, generator))
        for client, generator in zip(sampled, generators)
    ]
    if stacked_augmentation is not None:
        extras = stacked_augmentation(prepared[0][0], [client_data[client].labels for client in sampled], round_index, generators)
        for entry, (extra_inputs, extra_targets) in zip(prepared, extras):
            entry[1:] = [torch.cat([entry[1], extra_inputs]), torch.cat([entry[2], extra_targets]), int(extra_inputs.shape[0])]
    states = fit_stacked_clients(prepared[0][0], [inputs for _, inputs, _, _ in prepared], [targets for _, _, targets, _ in prepared],
                                 generators, epochs=config.local_epochs, batch_size=config.batch_size,
                                 learning_rate=config.learning_rate)
    augmented = client_augmentation if stacked_augmentation is None else stacked_augmentation
    return [_message(int(client), state, events, config, augmented, round_index, added)
            for client, state, (_, _, _, added) in zip(sampled, states, prepared)]


def run_fedavg(
    client_data: Sequence[LabelledData],
    input_shape,
    num_classes: int,
    config: FedAvgConfig,
    seed,
    *,
    device="cpu",
    n_jobs: Optional[int] = None,
    progress: bool = True,
    torch_threads=1,
    events: tuple = (NoGuaranteeEvent(FEDAVG_NO_GUARANTEE),),
    client_augmentation: Optional[Callable] = None,
    server_update: Optional[Callable] = None,
    stacked_client_augmentation: Optional[Callable] = None,
    description: str = "FedAvg",
) -> FedAvgRun:
    """Run ``config.rounds`` FedAvg rounds; everything is drawn from ``seed``. Each round the
    server samples :func:`clients_per_round` clients uniformly without replacement (every client
    when ``config.client_fraction = 1``), and averages the sampled clients' states weighted by
    their record counts.

    Args:
        client_data: one :class:`LabelledData` per client (features flattened, as ``input_shape``).
        input_shape, num_classes: the model's input and output.
        config: :class:`FedAvgConfig`.
        seed: int or ``numpy.random.SeedSequence``.
        events: the privacy events each message records.
        client_augmentation: ``f(global_model, client_labels, round_index, torch_generator) ->
            (inputs, labels)``, examples added to that client's training set this round (Fed-ZDAC).
        server_update: ``f(averaged_model, client_models, round_index, numpy_generator)``, applied in
            place after averaging (Fed-ZDAS).
        stacked_client_augmentation: with ``config.stacked_clients``, ``f(global_model,
            [client_labels], round_index, [torch_generators]) -> [(inputs, labels)]`` augments the
            round's clients in one call instead of ``client_augmentation``; it must draw from each
            client's generator what ``client_augmentation`` would.
    """
    if not client_data:
        raise ValueError("client_data must hold at least one client")
    if not isinstance(config, FedAvgConfig):
        raise ValueError(f"config must be a FedAvgConfig (got {type(config).__name__})")
    if stacked_client_augmentation is not None and not config.stacked_clients:
        raise ValueError("stacked_client_augmentation needs config.stacked_clients = True")
    # the sampling stream is spawned last so that the other streams do not depend on it
    initial, server, *round_sequences, sampling = seed_sequence(seed).spawn(3 + config.rounds)
    model = networks.build_classifier(config.architecture, input_shape, num_classes, networks.torch_generator(np.random.default_rng(initial)), device)
    server_rng, sampling_rng = np.random.default_rng(server), np.random.default_rng(sampling)
    sampled_count = clients_per_round(len(client_data), config.client_fraction)
    weights = np.array([len(data) for data in client_data], dtype=np.float64)
    history = []
    with networks.torch_threads(torch_threads), Progress(disable=not progress, transient=True) as bar:
        task = bar.add_task(description, total=config.rounds)
        for round_index, round_sequence in enumerate(round_sequences):
            global_state = networks.state_arrays(model)
            sampled = np.sort(sampling_rng.choice(len(client_data), size=sampled_count, replace=False))
            arguments = [
                (global_state, client_data[client].features, client_data[client].labels, config.architecture,
                 tuple(input_shape), num_classes, config, device, client_augmentation, tuple(events), round_index, int(client))
                for client in sampled
            ]
            if config.stacked_clients:
                messages = _stacked_round(global_state, client_data, sampled, config.architecture, tuple(input_shape), num_classes,
                                          config, device, client_augmentation, stacked_client_augmentation, tuple(events), round_index,
                                          round_sequence)
            else:
                messages = run_clients(_local_update, arguments, round_sequence, n_jobs=n_jobs)
            history.append(messages)
            networks.load_state_arrays_(model, weighted_state_average([m.payload for m in messages], weights[sampled]))
            if server_update is not None:
                client_models = [
                    networks.load_state_arrays_(
                        networks.build_classifier(config.architecture, input_shape, num_classes, torch.Generator(), device),
                        message.payload,
                    )
                    for message in messages
                ]
                server_update(model, client_models, round_index, server_rng)
            bar.advance(task)
    return FedAvgRun(model=model, messages=history)
