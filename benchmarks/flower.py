"""Flower deployment (tracker issue 17): the Flower rounds beside the in-process pipelines, the
SecAgg+ overhead of Distributed DP-Helmet, the dropout tables and the share sampler.

* DP-Helmet (Softmax-SLP, |U| users, N records each, record level, ε = 1, δ = 1e-5, t = 0.5):
  in process with continuous and with discrete shares, and over SecAgg+ in Flower's simulation
  engine with continuous shares (certified ε: the quantised sum from one honest share against
  s + 2γ√d; the unquantised sum's ε only an estimate) and with distributed discrete Gaussian
  shares (certified ε of the exact integer sum with the realised honest shares, calibrated at the
  floor h_min = ⌈t·|U|⌉). FedAUXfdp in process and over Flower's Message API. Accuracy, ε, δ.
* SecAgg+ overhead per DP-Helmet user (discrete round): bytes uploaded over the four stages
  against the plaintext share (float64), and the wall time of each stage (Ray's start-up is in
  the first stage and in the total).
* Dropouts, |U| = 10, t = 0.5, ε = 1: the unquantised continuous secure average (issue 17 quotes
  1.13 / 1.33 / 1.66 / 2.44 for 4/3/2/1 honest shares), and the certified ε of discrete shares
  calibrated at h_min = 5 (no dropout tolerated) and at h_min = 3 (two tolerated).
* Sampler: one user's discrete share of a 10⁶-parameter model (rounding plus N_Z(0, σ²) at the
  Flower round's σ²) against numpy's float64 Gaussian, one thread.

Every timing is provisional (a shared, loaded 2-core machine). Run: ``PYTHONPATH=. python
benchmarks/flower.py`` (about four minutes: two Flower simulations of DP-Helmet, one of FedAUXfdp).
"""

from __future__ import annotations

import os

for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = "1"

import argparse
import dataclasses
import math
import time

import numpy as np
from rich.console import Console
from rich.table import Table

from dpmech.directed_rounding import format_up
from dpmech.distributed_discrete_gaussian import grid_share
from dpmech.output_perturbation import rounded_grid_sensitivity

from trainers.data import load_digits_dataset
from trainers.flower import accounting
from trainers.flower.dphelmet import run_flower_dphelmet
from trainers.flower.fedauxfdp import run_flower_fedauxfdp
from trainers.pipelines import DpHelmetConfig, FedAuxFdpConfig, run_dphelmet, run_fedauxfdp


def timed(function):
    start = time.perf_counter()
    value = function()
    return value, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--records-per-user", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sampler-parameters", type=int, default=10**6)
    arguments = parser.parse_args()
    console = Console(width=170)
    data = load_digits_dataset()
    seed = arguments.seed

    config = DpHelmetConfig(num_users=arguments.users, records_per_user=arguments.records_per_user)
    discrete = dataclasses.replace(config, noise="discrete")
    in_process, in_process_seconds = timed(lambda: run_dphelmet(data, config, seed))
    flower_continuous = run_flower_dphelmet(data, config, seed)
    flower_discrete = run_flower_dphelmet(data, discrete, seed)
    # In process on the Flower round's grid, for the same noise as the discrete Flower round.
    grid = flower_discrete.encoding.grid_step
    in_process_discrete, in_process_discrete_seconds = timed(
        lambda: run_dphelmet(data, dataclasses.replace(discrete, granularity=grid), seed))
    auxiliary_config = FedAuxFdpConfig(num_clients=arguments.users)
    auxiliary_in_process, auxiliary_seconds = timed(lambda: run_fedauxfdp(data, auxiliary_config, seed))
    auxiliary_flower, auxiliary_flower_seconds = timed(lambda: run_flower_fedauxfdp(data, auxiliary_config, seed))

    table = Table(title=f"Flower rounds beside the in-process pipelines (digits, |U| = {config.num_users}, "
                        f"seed {seed}, target ε = {config.epsilon:g}, δ = {config.delta:g})")
    for column in ("pipeline", "engine, shares", "accuracy", "ε (certified)", "δ", "ε (estimate only)", "wall s"):
        table.add_column(column)

    def row(pipeline, engine, accuracy, guarantee, estimate, seconds):
        table.add_row(pipeline, engine, f"{accuracy:.4f}", format_up(guarantee.epsilon, 5), format_up(guarantee.delta, 4),
                      "" if estimate is None else format_up(estimate.epsilon, 5), f"{seconds:.1f}")

    row("dphelmet", "in-process, continuous", in_process.accuracy, in_process.guarantees["tight"], None,
        in_process_seconds)
    row("dphelmet", f"in-process, discrete (γ = 2^{round(math.log2(grid))})", in_process_discrete.accuracy,
        in_process_discrete.guarantees["tight"], None, in_process_discrete_seconds)
    row("dphelmet", "Flower SecAgg+, continuous (rounded)", flower_continuous.result.accuracy,
        flower_continuous.result.guarantees["tight"],
        flower_continuous.result.guarantees["estimate (unquantised secure sum)"], flower_continuous.seconds)
    row("dphelmet", f"Flower SecAgg+, distributed discrete (h = {flower_discrete.honest_shares})",
        flower_discrete.result.accuracy, flower_discrete.result.guarantees["tight"], None, flower_discrete.seconds)
    for name, result, seconds in (("in-process", auxiliary_in_process, auxiliary_seconds),
                                  ("Flower", auxiliary_flower, auxiliary_flower_seconds)):
        row("fedauxfdp", name, result.accuracy, result.guarantees["tight"], None, seconds)
        row("  FedAVG+P", name, result.baselines["FedAVG+P"], result.guarantees["tight"], None, float("nan"))
    console.print(table)

    share_bytes = flower_discrete.secure_sum.size * 8
    overhead = Table(title=f"SecAgg+ overhead per DP-Helmet user ({config.num_users} users, share of "
                           f"{flower_discrete.secure_sum.size} values; continuous round c = "
                           f"{flower_continuous.encoding.clipping_range:g}, discrete round c = "
                           f"{flower_discrete.encoding.clipping_range:g}, γ = 2^{round(math.log2(grid))})")
    for column in ("round", "plaintext share bytes", "SecAgg+ upload bytes (min / max)", "ratio",
                   "stage s: setup (+Ray start) / share keys / masked (+training) / unmask", "simulation s"):
        overhead.add_column(column)
    for name, flower in (("continuous", flower_continuous), ("discrete", flower_discrete)):
        uploads = np.array(list(flower.upload_bytes.values()))
        overhead.add_row(name, str(share_bytes), f"{uploads.min()} / {uploads.max()}",
                         f"{uploads.max() / share_bytes:.2f}",
                         " / ".join(f"{seconds:.2f}" for seconds in flower.stage_seconds), f"{flower.seconds:.1f}")
    console.print(overhead)

    # The continuous ε depends on the sensitivity only through σ/s, which the calibration fixes: s = 1.
    continuous_rows = accounting.dropout_table(1.0, 1e-5, 1.0, 10, 0.5, 5)
    dimension = flower_discrete.secure_sum.size
    grid_sensitivity = rounded_grid_sensitivity(flower_discrete.local_sensitivity, grid, dimension)
    strict = accounting.discrete_dropout_table(1.0, 1e-5, grid_sensitivity, dimension, 10, 0.5, 5, 5)
    tolerant = accounting.discrete_dropout_table(1.0, 1e-5, grid_sensitivity, dimension, 10, 0.5, 3, 5)
    dropouts = Table(title="Dropouts (|U| = 10, t = 0.5, calibrated to ε = 1, δ = 1e-5): ε after each dropout")
    for column in ("dropped", "honest shares h", "continuous, unquantised sum (estimate for SecAgg+)", "issue 17",
                   "discrete, h_min = 5 (certified)", "discrete, h_min = 3 (certified)"):
        dropouts.add_column(column)
    quoted = {4: "1.13", 3: "1.33", 2: "1.66", 1: "2.44"}

    def cell(epsilon, released=1.0):
        text = "∞" if math.isinf(epsilon) else format_up(epsilon, 5)
        return text if released else f"{text} (refused)"

    for (dropped, _, honest, epsilon), strict_row, tolerant_row in zip(continuous_rows, strict, tolerant):
        dropouts.add_row(str(int(dropped)), str(int(honest)), cell(epsilon), quoted.get(int(honest), ""),
                         cell(strict_row[3], strict_row[4]), cell(tolerant_row[3], tolerant_row[4]))
    console.print(dropouts)

    settings_sigma_squared = flower_discrete.settings.sigma_squared_grid
    parameters = arguments.sampler_parameters
    model = np.random.default_rng(0).uniform(-0.01, 0.01, parameters)
    grid_share(model[:1000], grid, settings_sigma_squared, 0)  # warm-up
    (_, _), discrete_seconds = timed(lambda: grid_share(model, grid, settings_sigma_squared, 1))
    (_, _), os_seconds = timed(lambda: grid_share(model, grid, settings_sigma_squared, "os"))
    float_rng = np.random.default_rng(2)
    _, float_seconds = timed(lambda: model + float_rng.normal(0.0, grid * math.sqrt(settings_sigma_squared), parameters))
    sampler = Table(title=f"One user's share of a {parameters:,}-parameter model (σ² = {settings_sigma_squared} grid "
                          f"units², γ = 2^{round(math.log2(grid))}; one thread)")
    for column in ("sampler", "seconds", "draws per second"):
        sampler.add_column(column)
    for name, seconds in (("exact discrete share (seeded Generator)", discrete_seconds),
                          ("exact discrete share (OS CSPRNG)", os_seconds),
                          ("numpy float64 Gaussian (not floating-point safe)", float_seconds)):
        sampler.add_row(name, f"{seconds:.3f}", f"{parameters / seconds:,.0f}")
    console.print(sampler)


if __name__ == "__main__":
    main()
