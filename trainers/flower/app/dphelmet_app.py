"""Flower App components for a real deployment: ``server`` (ServerApp) and ``client`` (ClientApp).

Both rebuild the round's public preparation from the run config (digits data, DpHelmetConfig,
seed); a SuperNode's ``partition-id`` node config names its user. In this demonstration every
SuperNode loads the digits data and keeps only its user's records; on real machines each
SuperNode would load its own records instead. The ServerApp writes the release (accuracy,
guarantees, survivors, upload bytes) as JSON to the run config's ``output`` path when one is set.
"""

import functools
import json
import time

from flwr.client import ClientApp
from flwr.client.mod import secaggplus_mod
from flwr.server import ServerApp

from trainers.data import load_digits_dataset
from trainers.flower.dphelmet import (ServerRecord, prepare_flower_round, released_round, secure_aggregation_round,
                                      user_client)
from trainers.pipelines.dphelmet import DpHelmetConfig


@functools.lru_cache(maxsize=4)
def _round(num_users, records_per_user, epsilon, delta, honest_fraction, noise, seed, clip_failure_probability,
           minimum_honest_shares):
    config = DpHelmetConfig(num_users=num_users, records_per_user=records_per_user, epsilon=epsilon, delta=delta,
                            honest_fraction=honest_fraction, noise=noise)
    return (config, *prepare_flower_round(load_digits_dataset(), config, seed, clip_failure_probability,
                                          minimum_honest_shares))


def _round_of(run_config):
    return _round(int(run_config["num-users"]), int(run_config["records-per-user"]), float(run_config["epsilon"]),
                  float(run_config["delta"]), float(run_config["honest-fraction"]), str(run_config["noise"]),
                  int(run_config["seed"]), float(run_config["clip-failure-probability"]),
                  int(run_config["minimum-honest-shares"]))


def _client_fn(context):
    _, prepared, _, encoding = _round_of(context.run_config)
    return user_client(prepared, encoding, int(context.node_config["partition-id"]))


client = ClientApp(client_fn=_client_fn, mods=[secaggplus_mod])
server = ServerApp()


@server.main()
def main(grid, context):
    run_config = context.run_config
    config, prepared, shape, encoding = _round_of(run_config)
    record = ServerRecord()
    start = time.perf_counter()
    secure_aggregation_round(grid, context, encoding, config.num_users, int(run_config["reconstruction-threshold"]),
                             shape, record)
    seconds = time.perf_counter() - start
    if record.aggregate is None:
        raise RuntimeError("SecAgg+ could not unmask the sum (too few survivors); nothing was released")
    flower_round = released_round(prepared, config, int(run_config["seed"]), encoding, record,
                                  int(run_config["minimum-honest-shares"]), seconds)
    summary = {
        "accuracy": flower_round.result.accuracy,
        "guarantees": {name: guarantee.as_dict() for name, guarantee in flower_round.result.guarantees.items()},
        "survivors": list(flower_round.survivors),
        "honest_shares": flower_round.honest_shares,
        "upload_bytes": sorted(flower_round.upload_bytes.values()),
        "stage_seconds": list(flower_round.stage_seconds),
        "notes": list(flower_round.result.notes),
    }
    print(json.dumps(summary))
    if run_config["output"]:
        with open(str(run_config["output"]), "w", encoding="utf-8") as handle:
            json.dump(summary, handle)
