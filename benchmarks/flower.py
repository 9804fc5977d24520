"""Flower deployment (tracker issue 17): the Flower rounds beside the in-process pipelines, the
SecAgg+ overhead of Distributed DP-Helmet, and the dropout table.

* DP-Helmet (Softmax-SLP, |U| users, N records each, record level, ε = 1, δ = 1e-5, t = 0.5) over
  SecAgg+ in Flower's simulation engine, and FedAUXfdp over Flower's Message API, each beside
  the in-process run with the same seed: accuracy and ε. For DP-Helmet over SecAgg+ the
  certified ε is that of the quantised sum (one honest share against s + 2γ√d, at δ + p) and the
  unquantised secure sum's ε is an estimate (see ``trainers.flower.accounting``).
* SecAgg+ overhead per DP-Helmet user: bytes uploaded over the four stages against the bytes of
  the plaintext share (float64), and the wall time of each stage (provisional timings: a shared,
  loaded 2-core machine; Ray's start-up is in the total, not in the stages).
* The dropout table: ε of the unquantised secure average after 0..5 dropouts of |U| = 10 users,
  t = 0.5, calibrated to ε = 1 (issue 17 quotes 1.13 / 1.33 / 1.66 / 2.44 for 4/3/2/1 honest).

Run: ``PYTHONPATH=. python benchmarks/flower.py`` (about three minutes).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from dpmech.directed_rounding import format_up

from trainers.data import load_digits_dataset
from trainers.flower import accounting
from trainers.flower.dphelmet import run_flower_dphelmet
from trainers.flower.fedauxfdp import run_flower_fedauxfdp
from trainers.pipelines import DpHelmetConfig, FedAuxFdpConfig, run_dphelmet, run_fedauxfdp


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--records-per-user", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()
    console = Console(width=160)
    data = load_digits_dataset()

    config = DpHelmetConfig(num_users=arguments.users, records_per_user=arguments.records_per_user)
    start = time.perf_counter()
    in_process = run_dphelmet(data, config, arguments.seed)
    in_process_seconds = time.perf_counter() - start
    flower = run_flower_dphelmet(data, config, arguments.seed)
    auxiliary_config = FedAuxFdpConfig(num_clients=arguments.users)
    start = time.perf_counter()
    auxiliary_in_process = run_fedauxfdp(data, auxiliary_config, arguments.seed)
    auxiliary_seconds = time.perf_counter() - start
    start = time.perf_counter()
    auxiliary_flower = run_flower_fedauxfdp(data, auxiliary_config, arguments.seed)
    auxiliary_flower_seconds = time.perf_counter() - start

    table = Table(title=f"Flower rounds beside the in-process pipelines (digits, seed {arguments.seed})")
    for column in ("pipeline", "engine", "accuracy", "ε (certified)", "ε (estimate)", "δ", "wall s"):
        table.add_column(column)
    table.add_row("dphelmet", "in-process", f"{in_process.accuracy:.4f}", format_up(in_process.guarantees['tight'].epsilon, 5),
                  "", f"{config.delta:.3g}", f"{in_process_seconds:.1f}")
    certified = flower.result.guarantees["certified (quantised sum)"]
    estimate = flower.result.guarantees["estimate (unquantised secure sum)"]
    table.add_row("dphelmet", "flower + SecAgg+", f"{flower.result.accuracy:.4f}", format_up(certified.epsilon, 5),
                  format_up(estimate.epsilon, 5), format_up(certified.delta, 6), f"{flower.seconds:.1f}")
    for name, result, seconds in (("in-process", auxiliary_in_process, auxiliary_seconds),
                                  ("flower", auxiliary_flower, auxiliary_flower_seconds)):
        table.add_row("fedauxfdp", name, f"{result.accuracy:.4f}", format_up(result.guarantees['tight'].epsilon, 5), "",
                      f"{auxiliary_config.total_delta:.3g}", f"{seconds:.1f}")
        table.add_row("  FedAVG+P", name, f"{result.baselines['FedAVG+P']:.4f}", format_up(result.guarantees['tight'].epsilon, 5),
                      "", f"{auxiliary_config.total_delta:.3g}", "")
    console.print(table)

    share_bytes = flower.secure_sum.size * 8
    uploads = np.array(list(flower.upload_bytes.values()))
    overhead = Table(title=f"SecAgg+ overhead per DP-Helmet user ({config.num_users} users, share of "
                           f"{flower.secure_sum.size} values, γ = {flower.encoding.grid_step:.3g}, "
                           f"c = {flower.encoding.clipping_range:g})")
    for column in ("plaintext share bytes", "SecAgg+ upload bytes (min / max)", "ratio",
                   "stage seconds: setup (+Ray start) / share keys / masked (+training) / unmask", "simulation s"):
        overhead.add_column(column)
    overhead.add_row(str(share_bytes), f"{uploads.min()} / {uploads.max()}", f"{uploads.max() / share_bytes:.2f}",
                     " / ".join(f"{seconds:.2f}" for seconds in flower.stage_seconds), f"{flower.seconds:.1f}")
    console.print(overhead)

    # The ε depends on the sensitivity only through σ/s, which the calibration fixes: s = 1.
    rows = accounting.dropout_table(1.0, 1e-5, 1.0, 10, 0.5, 5)
    dropouts = Table(title="Dropouts: ε of the unquantised secure average (|U| = 10, t = 0.5, calibrated to ε = 1, δ = 1e-5)")
    for column in ("dropped", "surviving", "honest shares h", "ε", "issue 17"):
        dropouts.add_column(column)
    quoted = {4: "1.13", 3: "1.33", 2: "1.66", 1: "2.44"}
    for dropped, surviving, honest, epsilon in rows:
        dropouts.add_row(str(int(dropped)), str(int(surviving)), str(int(honest)),
                         "∞ (refused)" if math.isinf(epsilon) else format_up(epsilon, 5), quoted.get(int(honest), ""))
    console.print(dropouts)


if __name__ == "__main__":
    main()
