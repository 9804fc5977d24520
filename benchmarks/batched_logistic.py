"""Benchmark: heads per second of BatchedLogisticRegression against a scikit-learn loop.

Reading of issue 5 ("n=50 and n=500, d=64, C=10"): d = 64 features and C = 10 classes, the
digits head (scikit-learn's bundled digits have 64 pixel features and 10 classes), so the main
case is the 10-class multinomial head; ``C`` is not scikit-learn's inverse regularisation, which
is fixed by λ through C = 1/(nλ). The binary head (digit 3 against the rest) is measured too.

Setup, as for the shadow models of a membership audit: for each size n the pool is 2n digits
records (features scaled by a public constant so that ‖x‖ <= 1, plus the regularised bias
coordinate), and each head trains on a uniformly random half of the pool (n records), λ = 0.01.
Both sides reach the same optimum (the tests check 1e-6): the batched trainer stops at
max |gradient| <= 1e-10, scikit-learn (L-BFGS, fit_intercept=False on the augmented features)
at tol = 1e-10. Both sides run with the same thread pools (``--threads``, default 1: torch, BLAS and
OpenMP through :func:`trainers.threads.limited_threads`). Every timing is the best of ``--repeats`` runs, after one warm-up run; the batched and
scikit-learn runs alternate, so both sides see the same background load.

    PYTHONPATH=. python benchmarks/batched_logistic.py [--heads 512] [--sklearn-heads 64] [--device cpu]
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import time

import numpy as np
import torch
from rich.console import Console
from rich.table import Table

from trainers.batched_logistic import BatchedLogisticRegression
from trainers.data import load_digits_dataset
from trainers.sklearn_adapter import LogisticRegressionTrainer
from trainers.threads import limited_threads


def _timed(function):
    start = time.perf_counter()
    function()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.perf_counter() - start


def _case(features, labels, num_classes, n, heads, sklearn_heads, device, repeats, rng, threads):
    pool = rng.choice(features.shape[0], size=2 * n, replace=False)
    pool_features, pool_labels = features[pool], labels[pool]
    membership = np.zeros((heads, 2 * n), dtype=bool)
    chosen = np.argsort(rng.random((heads, 2 * n)), axis=1)[:, :n]
    np.put_along_axis(membership, chosen, True, axis=1)
    batched = BatchedLogisticRegression(regularization=0.01, num_classes=num_classes, device=device)
    single = LogisticRegressionTrainer(regularization=0.01, num_classes=num_classes, threads=threads)

    def batched_fit():
        with limited_threads(threads):
            batched.fit(pool_features, pool_labels, membership)

    def sklearn_loop():
        for row in membership[:sklearn_heads]:
            single.fit(pool_features[row], pool_labels[row])

    # Interleaved, best of ``repeats`` after a warm-up: both sides see the same background load.
    batched_fit()
    sklearn_loop()
    batched_seconds, sklearn_seconds = np.inf, np.inf
    for _ in range(repeats):
        batched_seconds = min(batched_seconds, _timed(batched_fit))
        sklearn_seconds = min(sklearn_seconds, _timed(sklearn_loop))
    return heads / batched_seconds, sklearn_heads / sklearn_seconds, batched.n_iter_


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heads", type=int, default=512, help="models trained in one batched fit")
    parser.add_argument("--sklearn-heads", type=int, default=64, help="models in the timed scikit-learn loop")
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 500])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads of both sides: torch, BLAS and OpenMP pools (default 1)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args(argv)
    rng = np.random.default_rng(arguments.seed)
    data = load_digits_dataset()
    features = data.features / np.linalg.norm(data.features, axis=1).max()
    console = Console(width=120)
    table = Table(title="Batched torch LR vs scikit-learn loop (heads per second)")
    for column in ("head", "n", "d", "C", "batched heads/s", "Newton iters", "sklearn heads/s", "speed-up"):
        table.add_column(column, justify="right")
    for num_classes, labels, name in ((10, data.labels, "multinomial"), (2, (data.labels == 3).astype(np.int64), "binary")):
        for n in arguments.sizes:
            batched_rate, sklearn_rate, iterations = _case(
                features, labels, num_classes, n, arguments.heads, arguments.sklearn_heads,
                arguments.device, arguments.repeats, rng, arguments.threads,
            )
            table.add_row(name, str(n), str(features.shape[1]), str(num_classes), f"{batched_rate:,.0f}",
                          str(iterations), f"{sklearn_rate:,.0f}", f"{batched_rate / sklearn_rate:.1f}x")
    console.print(table)
    device = torch.cuda.get_device_name() if arguments.device.startswith("cuda") else platform.processor() or platform.machine()
    console.print(f"command: {shlex.join([sys.executable] + sys.argv)}")
    console.print(
        f"machine: {platform.node()} {platform.platform()}, {os.cpu_count()} CPUs, torch {torch.__version__} "
        f"({arguments.threads} threads on both sides), device {arguments.device} ({device}), B = {arguments.heads} heads per batched fit, "
        f"load average {os.getloadavg()[0]:.2f} at the end (other processes share the CPUs when it exceeds the thread count)"
    )


if __name__ == "__main__":
    main()
