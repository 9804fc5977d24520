"""FedAUXfdp server accuracy in the shape of seed 000 Table 3, next to FedAVG+P and FedD+P.

Digits and MNIST-1D (generated locally), 20 clients, Dirichlet α in {0.01, 0.16, 10.24}, class ε
in {∞, 1, 0.5, 0.1} (δ = 1e-5), scoring head at (0.1, 1e-5) as in the seed. Class ε = ∞ means
the class heads are released WITHOUT noise (the scoring heads keep their noise), so that row has
no DP guarantee at all. Run: ``PYTHONPATH=. python benchmarks/seed_fedauxfdp.py [--repeats R]``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from rich.console import Console
from rich.progress import track
from rich.table import Table

from trainers.data import load_digits_dataset, make_mnist1d
from trainers.pipelines import FedAuxFdpConfig, run_fedauxfdp

ALPHAS = (0.01, 0.16, 10.24)
CLASS_EPSILONS = (math.inf, 1.0, 0.5, 0.1)
METHODS = ("FedAVG+P", "FedD+P", "FedAUXfdp")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=1, help="seeds per cell (mean ± std when > 1)")
    parser.add_argument("--mnist1d-samples", type=int, default=10_000)
    arguments = parser.parse_args()
    console = Console(width=200)
    datasets = {"digits": load_digits_dataset(), "MNIST-1D": make_mnist1d(arguments.mnist1d_samples)}
    cells = [(name, alpha, epsilon, seed) for name in datasets for epsilon in CLASS_EPSILONS for alpha in ALPHAS
             for seed in range(arguments.repeats)]
    accuracy, guarantees = {}, {}
    start = time.perf_counter()
    for name, alpha, epsilon, seed in track(cells, description="FedAUXfdp grid", console=console):
        result = run_fedauxfdp(datasets[name], FedAuxFdpConfig(alpha=alpha, class_epsilon=epsilon), seed=seed)
        for method, value in (("FedAUXfdp", result.accuracy), *result.baselines.items()):
            accuracy.setdefault((name, method, epsilon, alpha), []).append(100 * value)
        guarantees[epsilon] = (result.guarantees["basic"].epsilon, result.guarantees["tight"].epsilon)
    table = Table(title=f"Server test accuracy (%), 20 clients, {arguments.repeats} seed(s); scoring heads (0.1, 1e-5)")
    table.add_column("method")
    table.add_column("class (ε, δ)")
    for name in datasets:
        for alpha in ALPHAS:
            table.add_column(f"{name} α={alpha:g}", justify="right")
    for epsilon in CLASS_EPSILONS:
        for method in METHODS:
            cells_text = []
            for name in datasets:
                for alpha in ALPHAS:
                    values = accuracy[(name, method, epsilon, alpha)]
                    cells_text.append(f"{np.mean(values):.1f}" + (f" ± {np.std(values):.1f}" if len(values) > 1 else ""))
            label = "None (no noise)" if epsilon == math.inf else f"({epsilon:g}, 1e-05)"
            table.add_row(method, label, *cells_text, end_section=method == METHODS[-1])
    console.print(table)
    budget = Table(title="Total guarantee per client record (replace-one), δ = 2e-5")
    for column in ("class (ε, δ)", "basic ε (ε_scores + ε_classes)", "tight ε (exact composition)"):
        budget.add_column(column, justify="right")
    for epsilon, (basic, tight) in guarantees.items():
        budget.add_row("None" if epsilon == math.inf else f"({epsilon:g}, 1e-05)", f"{basic:.4f}", f"{tight:.4f}")
    console.print(budget)
    console.print(f"{len(cells)} runs in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
