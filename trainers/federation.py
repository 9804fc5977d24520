"""What every one-shot federated pipeline shares: client messages, the client executor, the result.

* :class:`ClientMessage` is everything one client sends to the server. A
  pipeline builds one per client and the server sees nothing else, so the
  threat model is explicit and testable: each array in ``payload`` is released,
  and ``events`` is its privacy cost.
* :func:`run_clients` runs one function per client through joblib, so a Dask
  or Ray backend (``joblib.parallel_config(backend="dask")``) scales clients
  out without code changes. Each client gets its own ``numpy.random.Generator``
  spawned from one seed, so results do not depend on the backend or ``n_jobs``.
* :class:`PipelineResult` is what every pipeline returns: accuracy, the
  baselines, per-client metrics, the ledger and the messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

import joblib
import numpy as np
from rich.console import Console
from rich.progress import Progress

from dpmech import PrivacyLedger
from dpmech import validation as check
from dpmech.json_values import json_ready


@dataclass(frozen=True)
class ClientMessage:
    """One client's whole upload.

    Attributes:
        client: index of the sending client.
        payload: name -> released array (noisy model parameters, synthetic
            data, logits, ...). Arrays are made read-only.
        events: dpmech events describing the privacy cost of this payload
            (empty tuple only when the payload is a function of public data).
        description: what the payload is, in words, for reports.
    """

    client: int
    payload: Mapping[str, np.ndarray]
    events: tuple = ()
    description: str = ""

    def __post_init__(self):
        frozen = {}
        for name, value in self.payload.items():
            array = np.array(value, copy=True)
            array.setflags(write=False)
            frozen[name] = array
        object.__setattr__(self, "payload", frozen)
        object.__setattr__(self, "events", tuple(self.events))

    @property
    def num_released_values(self) -> int:
        return int(sum(array.size for array in self.payload.values()))


def seed_sequence(seed) -> np.random.SeedSequence:
    """``seed`` itself if it is a ``numpy.random.SeedSequence``, else ``SeedSequence(seed)`` for an integer seed >= 0."""
    if isinstance(seed, np.random.SeedSequence):
        return seed
    return np.random.SeedSequence(check.integer_scalar("seed", seed, 0))


def client_generators(seed, num_clients: int) -> list:
    """One independent ``numpy.random.Generator`` per client, spawned from ``seed`` (SeedSequence)."""
    num_clients = check.integer_scalar("num_clients", num_clients, 1)
    return [np.random.default_rng(child) for child in seed_sequence(seed).spawn(num_clients)]


def run_clients(
    function: Callable, client_arguments: Sequence[tuple], seed, n_jobs: Optional[int] = None,
    progress: Optional[str] = None,
) -> list:
    """``[function(*arguments, rng) for each client]`` through joblib, in client order.

    ``rng`` is the client's own Generator from :func:`client_generators`, so
    the result is identical for any ``n_jobs`` and any joblib backend.
    ``n_jobs=None`` uses the active ``joblib.parallel_config`` (one job by
    default). ``progress``, when given, is the label of a rich progress bar
    on stderr that advances as clients finish (results still come back in client order).
    A positive ``n_jobs`` above the number of clients is lowered to it: joblib's process backend
    starts ``n_jobs`` workers up front, so ``--jobs 1000`` for one repetition forked 1000 processes.
    """
    generators = client_generators(seed, len(client_arguments))
    if n_jobs is not None and n_jobs > len(client_arguments):
        n_jobs = max(1, len(client_arguments))
    jobs = (joblib.delayed(function)(*arguments, rng) for arguments, rng in zip(client_arguments, generators))
    if progress is None:
        return joblib.Parallel(n_jobs=n_jobs)(jobs)
    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(progress, total=len(client_arguments))
        results = []
        for result in joblib.Parallel(n_jobs=n_jobs, return_as="generator")(jobs):
            results.append(result)
            bar.advance(task)
    return results


def ledger_from_messages(messages: Sequence[ClientMessage], neighbouring: str = "replace-one") -> PrivacyLedger:
    """The record-level ledger of a one-shot round.

    A record lives at exactly one client, so a record-level guarantee is the
    composition of one client's events (parallel composition across clients).
    The ledger is that of the client whose events are worst: this function
    requires every client to release the same kinds of events and returns the
    first client's ledger after checking they are identical, which is the case
    for the seed pipelines (every client is calibrated to the same target).
    """
    if not messages:
        raise ValueError("messages must hold at least one client message")
    first = messages[0].events
    for message in messages[1:]:
        if message.events != first:
            raise ValueError(
                f"messages: client {message.client} releases different events from client "
                f"{messages[0].client}; account them per client"
            )
    ledger = PrivacyLedger(neighbouring)
    for event in first:
        ledger.record(event)
    return ledger


def worst_client_ledger(messages: Sequence[ClientMessage], delta: float, method: str = "auto",
                        neighbouring: str = "replace-one") -> PrivacyLedger:
    """The record-level ledger of a one-shot round whose clients release different events.

    A record lives at exactly one client, so its guarantee is that of its
    client's events (parallel composition), and a guarantee for every record
    is the worst client's. Clients calibrated to one (ε, δ) target on
    different record counts release different (σ, Δ) pairs; this function
    accounts each distinct event tuple with ``PrivacyLedger.epsilon(delta,
    method)`` and returns the ledger of the one with the largest ε at
    ``delta`` (the first such client on ties). Use it at the δ the guarantee
    is reported at: at another δ a different client can be the worst.
    """
    if not messages:
        raise ValueError("messages must hold at least one client message")
    ledgers = {}
    for message in messages:
        if message.events not in ledgers:
            ledger = PrivacyLedger(neighbouring)
            for event in message.events:
                ledger.record(event)
            ledgers[message.events] = ledger
    return max(ledgers.values(), key=lambda ledger: ledger.epsilon(delta, method=method).epsilon)


@dataclass(frozen=True)
class PipelineResult:
    """What a seed pipeline returns.

    Attributes:
        pipeline: name, e.g. ``"fedauxfdp"``.
        accuracy: the server model's test accuracy.
        baselines: name -> test accuracy of each baseline run on the same data.
        per_client: one dict of metrics per client.
        ledger: record-level privacy ledger of everything the clients sent.
        messages: every client message, in client order.
        guarantees: name -> ``dpmech.PrivacyGuarantee`` (e.g. "basic", "tight").
        units: guarantee name -> the unit its neighbouring datasets differ in ("record", "user",
            "label"); a guarantee not named here protects one record.
        notes: plain statements the user must see (what the guarantee does not
            cover, warnings carried by the mechanisms).
        config: the configuration, as given.
        seed: the seed everything was drawn from.
        prepared: the pipeline's prepared round (split, public features, partition) where it has
            one, so an audit of this run reuses it instead of preparing it again; not summarised.
    """

    pipeline: str
    accuracy: float
    baselines: Mapping[str, float]
    per_client: Sequence[Mapping[str, Any]]
    ledger: PrivacyLedger
    messages: Sequence[ClientMessage]
    guarantees: Mapping[str, Any] = field(default_factory=dict)
    units: Mapping[str, str] = field(default_factory=dict)
    notes: Sequence[str] = ()
    config: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0
    prepared: Any = field(default=None, repr=False, compare=False)

    def summary(self) -> dict:
        """A JSON-ready summary (floats, strings, lists)."""
        guarantees = {name: guarantee.as_dict() for name, guarantee in self.guarantees.items()}
        return {
            "pipeline": self.pipeline,
            "accuracy": float(self.accuracy),
            "baselines": {name: float(value) for name, value in self.baselines.items()},
            "per_client": [dict(metrics) for metrics in self.per_client],
            "guarantees": json_ready(guarantees),
            "messages": [
                {"client": m.client, "description": m.description, "released_values": m.num_released_values,
                 "arrays": {name: list(array.shape) for name, array in m.payload.items()}}
                for m in self.messages
            ],
            "notes": list(self.notes),
            "config": dict(self.config),
            "seed": self.seed,
        }

    def unit(self, name: str) -> str:
        """What the neighbouring datasets of guarantee ``name`` differ in: "record", "user" or "label"."""
        if name not in self.guarantees:
            raise ValueError(f"name must be one of the guarantees {', '.join(self.guarantees)} (got {name!r})")
        return self.units.get(name, "record")
