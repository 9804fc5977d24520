"""Accuracy and privacy statement of FedMD-NFDP, FedGM and Fed-ZDA on digits (and FedMD-NFDP on
MNIST-1D), with the baselines each seed compares against, at sizes for two CPU cores.

Usage::

    python benchmarks/seed_pipelines_two.py [--seed 0]

Digits pixels are divided by 16, their public maximum. Every number comes from one seed; the
privacy column is the pipeline's own guarantee from dpmech (never recomputed here).
"""

from __future__ import annotations

import argparse
import time

from rich.console import Console
from rich.table import Table

from trainers.data import LabelledData, load_digits_dataset, make_mnist1d, split_federated
from trainers.pipelines.fedgm import FedGmConfig, run_fedgm
from trainers.pipelines.fedmd_nfdp import FedMdNfdpConfig, run_fedmd_nfdp
from trainers.pipelines.fedzda import FedZdaConfig, run_fedzda


def _statement(result) -> str:
    return "; ".join(f"{name}: {guarantee}" for name, guarantee in result.guarantees.items())


def main(seed: int = 0, console: Console | None = None) -> list:
    console = console or Console()
    digits = load_digits_dataset()
    digits_split = split_federated(LabelledData(digits.features / 16.0, digits.labels), seed)
    mnist1d_split = split_federated(make_mnist1d(4000, seed=42), seed)
    runs = [
        ("FedMD-NFDP digits k=20", lambda: run_fedmd_nfdp(digits_split, FedMdNfdpConfig(subsample_size=20), seed)),
        ("FedMD-NFDP digits k=60", lambda: run_fedmd_nfdp(digits_split, FedMdNfdpConfig(subsample_size=60), seed)),
        ("FedMD-NFDP digits k=60 repl.", lambda: run_fedmd_nfdp(digits_split, FedMdNfdpConfig(subsample_size=60, replacement=True), seed)),
        ("FedMD-NFDP digits k=150", lambda: run_fedmd_nfdp(digits_split, FedMdNfdpConfig(subsample_size=150), seed)),
        ("FedMD-NFDP MNIST-1D k=150", lambda: run_fedmd_nfdp(
            mnist1d_split, FedMdNfdpConfig(input_shape=(1, 40), architectures=("mlp-64", "mlp-128", "conv-none-16"),
                                           subsample_size=150), seed)),
        ("FedGM digits ε=2", lambda: run_fedgm(digits_split, FedGmConfig(outer_iterations=5, label_epsilon=2.0), seed)),
        ("FedGM digits ε=8", lambda: run_fedgm(digits_split, FedGmConfig(outer_iterations=5, label_epsilon=8.0, baselines=False), seed)),
        ("Fed-ZDAC digits", lambda: run_fedzda(digits_split, FedZdaConfig(variant="client"), seed)),
        ("Fed-ZDAS digits", lambda: run_fedzda(digits_split, FedZdaConfig(variant="server"), seed)),
    ]
    table = Table(title=f"Trainers II pipelines (seed {seed})")
    for column in ("method", "accuracy", "baselines", "privacy statement (dpmech)", "seconds"):
        table.add_column(column)
    results = []
    for name, run in runs:
        start = time.perf_counter()
        result = run()
        seconds = time.perf_counter() - start
        results.append((name, result))
        baselines = ", ".join(f"{key} {value:.3f}" for key, value in result.baselines.items())
        table.add_row(name, f"{result.accuracy:.3f}", baselines, _statement(result), f"{seconds:.0f}")
        console.print(f"{name}: accuracy {result.accuracy:.4f} | {baselines} | {_statement(result)} | {seconds:.1f} s")
        for note in result.notes:
            console.print(f"    note: {note}")
        if hasattr(result, "fairness"):
            for method, values in result.fairness.items():
                console.print(f"    fairness {method}: " + ", ".join(f"{k} {v:.4g}" for k, v in values.items()))
    console.print(table)
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    main(parser.parse_args().seed)
