"""Distributed DP-Helmet accuracy against the number of users (seed 002, RQ1: fixed N per user).

Each user holds N = 50 records; Softmax-SLP-SGD (Λ = 1, R = 1) and Huber SVM-SGD (Λ = 1,
R = 0.3), 20 epochs, batch 10, on public PCA(16) features clipped to c = 1; honest fraction
t = 0.5; δ = 1e-5. Columns: ε = ∞ (averaged WITHOUT noise: no guarantee), record-level ε = 1,
and user-level ε = 1 (Cor. 5.5, sensitivity 2B). The last columns give, for the record-level
noise, the user-level ε that group privacy (Cor. 5.4, k = N) and Cor. 5.5 certify.
Run: ``PYTHONPATH=. python benchmarks/seed_dphelmet.py``.
"""

from __future__ import annotations

import argparse
import math
import time

from rich.console import Console
from rich.progress import track
from rich.table import Table

from trainers.data import load_digits_dataset, make_mnist1d
from trainers.pipelines import DpHelmetConfig, run_dphelmet

MODELS = {"softmax": 1.0, "huber_svm": 0.3}
SETTINGS = (("ε=∞", math.inf, "record"), ("record ε=1", 1.0, "record"), ("user ε=1", 1.0, "user"))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mnist1d-samples", type=int, default=20_000)
    arguments = parser.parse_args()
    console = Console(width=200)
    grids = {
        "digits": (load_digits_dataset(), (1, 2, 5, 10, 20)),
        "MNIST-1D": (make_mnist1d(arguments.mnist1d_samples), (1, 5, 20, 50, 100, 200)),
    }
    start = time.perf_counter()
    for name, (data, user_counts) in grids.items():
        cells = [(users, model, setting) for users in user_counts for model in MODELS for setting in SETTINGS]
        results = {}
        for users, model, (label, epsilon, unit) in track(cells, description=f"DP-Helmet {name}", console=console):
            config = DpHelmetConfig(num_users=users, model=model, projection_radius=MODELS[model], epsilon=epsilon,
                                    privacy_unit=unit)
            results[(users, model, label)] = run_dphelmet(data, config, seed=0)
        table = Table(title=f"DP-Helmet test accuracy (%) on {name}, N = 50 per user, δ = 1e-5, t = 0.5")
        table.add_column("|U|", justify="right")
        for model in MODELS:
            for label, _, _ in SETTINGS:
                table.add_column(f"{model} {label}", justify="right")
        table.add_column("softmax: user ε via group privacy / Cor. 5.5", justify="right")
        for users in user_counts:
            row = [str(users)]
            for model in MODELS:
                row += [f"{100 * results[(users, model, label)].accuracy:.1f}" for label, _, _ in SETTINGS]
            record = results[(users, "softmax", "record ε=1")].guarantees
            row.append(f"{record['user, group privacy'].epsilon:.3g} / {record['user, Cor. 5.5'].epsilon:.3g}")
            table.add_row(*row)
        console.print(table)
    console.print(f"done in {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
