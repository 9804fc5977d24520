"""FedAUXfdp (and its FedAVG+P and FedD+P baselines) on Flower's Message API.

Each ClientApp runs the pipeline's own client work with the Generator the in-process run gives
it: ``train_client_heads``, ``head_mechanisms`` and the release step ``release_client_heads``;
its reply is that ClientMessage (noisy heads and their events, :mod:`.messages`). The ServerApp
sends one train message to every node that holds records, rebuilds the messages and runs
``fedauxfdp_server`` on the public distillation features, exactly as ``run_fedauxfdp`` does;
the ledger is ``worst_client_ledger`` of the received events. No secure aggregation: the server
sees every client's noisy heads, which is what FedAUXfdp's guarantee covers (each release is
(ε, δ)-DP on its own).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Optional

import numpy as np

from dpmech import validation as check

from ..federation import PipelineResult, client_generators, worst_client_ledger
from ..pipelines._common import linear_accuracy
from ..pipelines.fedauxfdp import (FedAuxFdpConfig, client_settings, fedauxfdp_client, fedauxfdp_server,
                                   prepare_round, round_notes)
from .messages import from_record_dict, to_record_dict


def client_app(prepared, config: FedAuxFdpConfig):
    """The FedAUXfdp ClientApp: node ``partition-id`` i is client i."""
    from flwr.app import Message
    from flwr.clientapp import ClientApp

    settings = client_settings(config, prepared.num_classes)
    sets, assignment = prepared.features, prepared.assignment
    clients = [client for client in range(config.num_clients) if np.any(assignment == client)]
    app = ClientApp()

    @app.train()
    def train(message, context):
        client = int(context.node_config["partition-id"])
        # run_clients spawns one Generator per client with records, in client order.
        seed = np.random.SeedSequence(prepared.client_seed.entropy, spawn_key=prepared.client_seed.spawn_key)
        rng = client_generators(seed, len(clients))[clients.index(client)]
        local = sets.private.subset(np.flatnonzero(assignment == client))
        released = fedauxfdp_client(client, local, sets.negative.features, settings, rng)
        return Message(to_record_dict(released), reply_to=message)

    return app


def _wait_for_nodes(grid, count: int, timeout: float = 300.0) -> list:
    """The grid's node ids once ``count`` SuperNodes have connected (they register asynchronously)."""
    deadline = time.monotonic() + timeout
    while len(nodes := list(grid.get_node_ids())) < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {len(nodes)} of {count} SuperNodes connected within {timeout:g} s")
        time.sleep(0.5)
    return nodes


def server_app(prepared, config: FedAuxFdpConfig, holder: dict):
    """The FedAUXfdp ServerApp; puts the rebuilt messages and the server models in ``holder``."""
    from flwr.app import ConfigRecord, Message, MessageType, RecordDict
    from flwr.serverapp import ServerApp

    clients = {client for client in range(config.num_clients) if np.any(prepared.assignment == client)}
    app = ServerApp()

    @app.main()
    def main(grid, context):
        nodes = _wait_for_nodes(grid, config.num_clients)
        requests = [Message(RecordDict({"round": ConfigRecord({"round": 1})}), dst_node_id=node,
                            message_type=MessageType.TRAIN) for node in nodes]
        replies = list(grid.send_and_receive(requests))
        holder["errors"] = [str(reply.error) for reply in replies if reply.has_error()]
        messages = sorted((from_record_dict(reply.content) for reply in replies if not reply.has_error()),
                          key=lambda message: message.client)
        holder["messages"] = [message for message in messages if message.client in clients]
        holder["reply_bytes"] = [len(reply.content.array_records["payload"]["class_head"].data)
                                 + len(reply.content.array_records["payload"]["score_head"].data)
                                 for reply in replies if not reply.has_error()]
        if holder["messages"]:
            holder["server"] = fedauxfdp_server(holder["messages"], prepared.features.distillation.features,
                                                config.server_regularization)

    return app


def run_flower_fedauxfdp(data, config: FedAuxFdpConfig = FedAuxFdpConfig(), seed: int = 0, *,
                         backend_config: Optional[dict] = None) -> PipelineResult:
    """Run FedAUXfdp in Flower's simulation engine, one SuperNode per client.

    The result has the in-process run's accuracy, baselines (FedAVG+P, FedD+P), ledger and
    guarantees, computed on the server from what the ClientApps sent. Clients with no record
    reply with an error and send nothing, as in-process. Raises RuntimeError if a client with
    records fails.
    """
    from .simulation import simulate

    if not isinstance(config, FedAuxFdpConfig):
        raise ValueError(f"config must be a FedAuxFdpConfig (got {type(config).__name__})")
    seed = check.integer_scalar("seed", seed, 0)
    prepared = prepare_round(data, config, seed)
    holder: dict = {}
    start = time.perf_counter()
    simulate(server_app(prepared, config, holder), client_app(prepared, config), config.num_clients, backend_config)
    seconds = time.perf_counter() - start
    expected = [client for client in range(config.num_clients) if np.any(prepared.assignment == client)]
    received = [message.client for message in holder.get("messages", [])]
    if received != expected:
        raise RuntimeError(f"FedAUXfdp on Flower: clients {sorted(set(expected) - set(received))} sent nothing "
                           f"({holder.get('errors', [])}); nothing was released")
    messages, server = holder["messages"], holder["server"]
    ledger = worst_client_ledger(messages, config.total_delta)
    sets = prepared.features
    return PipelineResult(
        pipeline="fedauxfdp",
        accuracy=linear_accuracy(server.fedauxfdp, sets.test),
        baselines={"FedAVG+P": linear_accuracy(server.fedavg, sets.test),
                   "FedD+P": linear_accuracy(server.fedd, sets.test)},
        per_client=[{"client": m.client, "num_records": int(np.count_nonzero(prepared.assignment == m.client)),
                     "upload_bytes": b} for m, b in zip(messages, holder["reply_bytes"])],
        ledger=ledger, messages=tuple(messages),
        guarantees={"basic": ledger.epsilon(config.total_delta, method="basic"),
                    "tight": ledger.epsilon(config.total_delta, method="auto")},
        notes=(*round_notes(config, prepared),
               f"Flower simulation, {config.num_clients} SuperNodes, {seconds:.1f} s; the server saw each "
               "client's noisy heads (no secure aggregation)."),
        config={**dataclasses.asdict(config), "engine": "flower"}, seed=seed,
    )
