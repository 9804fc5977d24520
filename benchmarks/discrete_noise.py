"""Exact discrete noise: throughput against numpy's float Gaussian and OpenDP, and δ(ε) discrete vs continuous.

Usage::

    python benchmarks/discrete_noise.py [--draws 1000000] [--opendp-draws 100000] [--quick]

One process, one thread for every library (the thread variables are set before numpy
loads); each sampler is timed once, after one small warm-up call. OpenDP
(``pip install opendp``) is optional: its rows read "not installed" without it. Its
integer Gaussian and Laplace measurements are timed on ``--opendp-draws`` draws
(slower per draw) and reported per second like the others. Timings on a shared
machine are provisional.
"""

from __future__ import annotations

import os

for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ[variable] = "1"

import argparse
import time
from fractions import Fraction

import numpy as np
from rich.console import Console
from rich.table import Table

import dpmech
from dpmech.directed_rounding import format_down, format_up

SIGMA_SQUARED = 100  # σ = 10 grid units
LAPLACE_SCALE = 10


def timed(function, draws):
    """(wall seconds, CPU seconds of this process): on a shared machine the CPU time is the fairer of the two."""
    function(min(draws, 1000))
    start, start_cpu = time.perf_counter(), time.process_time()
    function(draws)
    return time.perf_counter() - start, time.process_time() - start_cpu


def opendp_samplers():
    try:
        import opendp.prelude as dp
    except ImportError:
        return None
    dp.enable_features("contrib")
    gaussian = dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=int)), dp.l2_distance(T=int), scale=float(SIGMA_SQUARED) ** 0.5)
    laplace = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int), scale=float(LAPLACE_SCALE))
    return {
        "OpenDP discrete Gaussian (make_gaussian, int)": lambda n: gaussian([0] * n),
        "OpenDP discrete Laplace (make_laplace, int)": lambda n: laplace([0] * n),
    }


def throughput_table(draws: int, opendp_draws: int) -> Table:
    generator = np.random.default_rng(0)
    rows = {
        "numpy float64 Gaussian (Generator.normal, not exact)": (lambda n: generator.normal(0.0, 10.0, n), draws),
        "dpmech discrete Gaussian, seeded Generator": (lambda n: dpmech.discrete_gaussian(SIGMA_SQUARED, n, generator), draws),
        "dpmech discrete Gaussian, OS CSPRNG": (lambda n: dpmech.discrete_gaussian(SIGMA_SQUARED, n, "os"), draws),
        "dpmech discrete Laplace, seeded Generator": (lambda n: dpmech.discrete_laplace(LAPLACE_SCALE, n, generator), draws),
        "dpmech discrete Laplace, OS CSPRNG": (lambda n: dpmech.discrete_laplace(LAPLACE_SCALE, n, "os"), draws),
    }
    external = opendp_samplers()
    table = Table(title="Noise throughput, one thread (σ = 10, Laplace scale 10; provisional timings)")
    for column in ("sampler", "draws", "wall s", "CPU s", "draws per CPU second", "relative to numpy float"):
        table.add_column(column)
    baseline = None
    results = []
    for name, (function, count) in rows.items():
        seconds = timed(function, count)
        results.append((name, count, seconds))
    if external is None:
        results += [(name, None, None) for name in ("OpenDP discrete Gaussian", "OpenDP discrete Laplace")]
    else:
        results += [(name, opendp_draws, timed(function, opendp_draws)) for name, function in external.items()]
    for name, count, seconds in results:
        if seconds is None:
            table.add_row(name, "-", "not installed", "-", "-", "-")
            continue
        wall, cpu = seconds
        rate = count / max(cpu, 1e-9)
        baseline = baseline or rate
        table.add_row(name, f"{count:,}", f"{wall:.3f}", f"{cpu:.3f}", f"{rate:,.0f}", f"{rate / baseline:.4f}")
    return table


def profile_table() -> Table:
    table = Table(title="δ(ε) for sensitivity 1: discrete Gaussian (CKS Thm 7, upper bound) vs continuous (Balle & Wang)")
    for column in ("σ", "ε", "δ discrete", "δ continuous", "discrete / continuous"):
        table.add_column(column)
    for sigma_squared in (Fraction(1, 4), 1, 4, 25, 400):
        sigma = float(sigma_squared) ** 0.5
        for epsilon in (0.5, 1.0, 2.0):
            discrete = dpmech.mechanisms.discrete_gaussian_delta(epsilon, sigma_squared, 1)
            continuous = dpmech.gaussian_delta(epsilon, sigma, 1.0)
            ratio = format_down(discrete / continuous, 4) if continuous > 0 else "-"
            table.add_row(f"{sigma:g}", f"{epsilon:g}", format_up(discrete, 6), format_up(continuous, 6), ratio)
    return table


def calibration_table() -> Table:
    table = Table(title="Calibrated noise for ε = 1, δ = 1e-5, L2 sensitivity 1 (σ in output units)")
    for column in ("release", "σ continuous", "σ discrete", "ratio"):
        table.add_column(column)
    continuous = dpmech.calibrate_gaussian(1.0, 1e-5, 1.0)
    for dimension, granularity in ((1, 1e-2), (1, 1e-4), (100, 1e-4), (10_000, 1e-5)):
        mechanism = dpmech.GaussianOutputMechanism(1.0, 1.0, 1e-5, sampler="discrete", granularity=granularity,
                                                   dimension=dimension)
        table.add_row(f"d = {dimension}, γ = {granularity:g}", format_up(continuous, 6), format_up(mechanism.sigma, 6),
                      format_up(mechanism.sigma / continuous, 4))
    return table


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1_000_000)
    parser.add_argument("--opendp-draws", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="10,000 draws each, for the tests")
    args = parser.parse_args(argv)
    draws, opendp_draws = (10_000, 10_000) if args.quick else (args.draws, args.opendp_draws)
    console = Console(width=200)
    console.print(throughput_table(draws, opendp_draws))
    console.print(profile_table())
    console.print(calibration_table())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
