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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np
import torch
from rich.progress import Progress

from dpmech import NoGuaranteeEvent
from dpmech import validation as check

from . import networks
from .data import LabelledData
from .federation import ClientMessage, run_clients, seed_sequence

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

    def __post_init__(self):
        networks.validated_architecture(self.architecture)
        check.integer_scalar("rounds", self.rounds, 1)
        check.integer_scalar("local_epochs", self.local_epochs, 1)
        check.integer_scalar("batch_size", self.batch_size, 1)
        check.positive("learning_rate", self.learning_rate)
        check.choice("optimizer", self.optimizer, ("adam", "sgd"))
        check.in_interval("client_fraction", self.client_fraction, 0.0, 1.0, low_open=True, high_open=False)


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


def _local_update(global_state, features, labels, architecture, input_shape, num_classes, config, device,
                  client_augmentation, events, round_index, client, rng) -> ClientMessage:
    generator = networks.torch_generator(rng)
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
    networks.fit(model, inputs, targets, epochs=config.local_epochs, batch_size=config.batch_size,
                 learning_rate=config.learning_rate, generator=generator, optimizer=config.optimizer)
    return ClientMessage(
        client=client,
        payload=networks.state_arrays(model),
        events=events,
        description=f"round {round_index}: full model state after {config.local_epochs} local epochs"
        + (f" on its records and {added} synthetic examples" if client_augmentation is not None else ""),
    )


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
    """
    if not client_data:
        raise ValueError("client_data must hold at least one client")
    if not isinstance(config, FedAvgConfig):
        raise ValueError(f"config must be a FedAvgConfig (got {type(config).__name__})")
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
