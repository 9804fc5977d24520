"""Benchmark: CPU time per certified head of BatchedLogisticRegression against scikit-learn's lbfgs (issue 32).

The heads are trained as the federated pipelines train them: one multinomial head per client, each
on its own records (FedAUXfdp's class heads: 20 clients, ~2,430 records each at the paper's scale,
10 classes; the benchmark uses the d = 64 digits features, the pipelines' CNN embedding has d = 32).
Each of ``--heads`` clients draws n records with replacement from scikit-learn's digits (features
divided by the largest digits norm, so ‖x‖ <= 1), and one batched fit trains every head: the pool is
the clients' records side by side and each membership row selects one client's block.

What each side computes, for λ = ``--regularization`` and the mean-form objective
J(θ) = (1/n) Σ ℓ(θ; x̃_i, y_i) + (λ/2)‖θ‖², x̃ = (x, 1):

* batched: ``BatchedLogisticRegression(tol=τ)``, which certifies ‖∇J(θ̂)‖₂ <= τ per head in float64,
  rounding error included.
* scikit-learn matched: ``LogisticRegression(solver="lbfgs", C=1/(nλ), fit_intercept=False,
  tol=τ, max_iter=10000)`` on x̃. scikit-learn (>= 1.1) minimises the same mean-form J and its
  ``tol`` is L-BFGS-B's ``gtol``, a bound on the max-norm of the projected gradient, ‖∇J‖∞ <= tol.
  Since ‖g‖∞ <= ‖g‖₂, our certificate ‖g‖₂ <= τ implies scikit-learn's stopping rule at tol = τ,
  so matching tol = τ asks scikit-learn for less than we certify (its ‖g‖₂ may be up to √(C p)
  times larger). scikit-learn also stops on a relative decrease of 64·eps in J, often before tol,
  so the column "sklearn ‖g‖₂" reports the largest ‖∇J‖₂ its answers reach (computed in float64).
* scikit-learn default: the same with scikit-learn's default tol = 1e-4 and max_iter = 100.

Every timing is CPU time (``time.process_time``), the best of ``--repeats`` runs after a warm-up,
with one thread in every pool (torch, BLAS and OpenMP, :func:`trainers.threads.limited_threads`),
divided by the number of heads; the sides alternate so that both see the same background load.
scikit-learn gets one zero-weight placeholder row per class, as the adapter gives it, so that a
client lacking a class (``--label-skew``) still fits the public 10-class objective.
A ratio above 1 means the batched heads are faster.

    PYTHONPATH=. python benchmarks/batched_heads.py [--sizes 100 500 2400] [--heads 20] [--tolerance 1e-9]
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import time
import warnings

import numpy as np
import torch
from rich.console import Console
from rich.table import Table
from scipy.special import softmax
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

import dpmech.sensitivity
from trainers.batched_logistic import BatchedLogisticRegression
from trainers.data import load_digits_dataset
from trainers.threads import limited_threads


def _cpu_seconds(function):
    start = time.process_time()
    result = function()
    return time.process_time() - start, result


def _gradient_norm(coefficients, augmented, labels, regularization):
    """‖∇J(θ)‖₂ of one multinomial head in float64 (scikit-learn's answers, reported, not certified)."""
    residuals = softmax(augmented @ coefficients.T, axis=1) - np.eye(coefficients.shape[0])[labels]
    gradient = residuals.T @ augmented / len(labels) + regularization * coefficients
    return float(np.linalg.norm(gradient))


def _clients(features, labels, heads, n, rng, label_skew):
    """``heads`` clients of n records drawn with replacement, as one pool with block memberships.

    ``label_skew`` α: each client's label proportions are Dirichlet(α) (as
    :func:`trainers.data.dirichlet_label_partition` splits the pipelines' clients), its records
    drawn uniformly within each label; None draws records uniformly.
    """
    if label_skew is None:
        chosen = rng.integers(0, features.shape[0], size=(heads, n))
    else:
        by_label = np.argsort(labels, kind="stable")
        counts = np.bincount(labels, minlength=10)
        proportions = np.cumsum(rng.dirichlet(np.full(10, label_skew), size=heads), axis=1)
        drawn = np.minimum((rng.random((heads, n, 1)) > proportions[:, None, :]).sum(axis=2), 9)
        within = np.floor(rng.random((heads, n)) * counts[drawn]).astype(np.int64)
        chosen = by_label[(np.cumsum(counts) - counts)[drawn] + within]
    pool_features, pool_labels = features[chosen.ravel()], labels[chosen.ravel()]
    membership = np.kron(np.eye(heads, dtype=bool), np.ones((1, n), dtype=bool))
    return pool_features, pool_labels, membership


def _case(features, labels, n, arguments, rng):
    heads, regularization, tolerance = arguments.heads, arguments.regularization, arguments.tolerance
    pool_features, pool_labels, membership = _clients(features, labels, heads, n, rng, arguments.label_skew)
    augmented = np.hstack([pool_features, np.ones((pool_features.shape[0], 1))])
    blocks = [(augmented[row], pool_labels[row]) for row in membership]
    # One zero-weight placeholder row per class, as trainers.sklearn_adapter does: scikit-learn then
    # fits the public 10-class objective even for a client that lacks a class (J is unchanged).
    placeholders = np.zeros((10, augmented.shape[1])), np.arange(10), np.concatenate([np.ones(n), np.zeros(10)])
    batched = BatchedLogisticRegression(regularization=regularization, num_classes=10, tol=tolerance)
    inverse_c = dpmech.sensitivity.sklearn_c(regularization, n)

    def batched_fit():
        return batched.fit(pool_features, pool_labels, membership).parameters_.numpy()

    def sklearn_fits(tol, max_iter):
        def fit_all():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                return [LogisticRegression(C=inverse_c, fit_intercept=False, solver="lbfgs", tol=tol, max_iter=max_iter)
                        .fit(np.vstack([x, placeholders[0]]), np.concatenate([y, placeholders[1]]),
                             sample_weight=placeholders[2]).coef_ for x, y in blocks]
        return fit_all

    sides = {"batched": batched_fit, "matched": sklearn_fits(tolerance, 10_000), "default": sklearn_fits(1e-4, 100)}
    best = dict.fromkeys(sides, np.inf)
    answers = {}
    with limited_threads(arguments.threads):
        for name, side in sides.items():
            answers[name] = side()  # warm-up
        for _ in range(arguments.repeats):
            for name, side in sides.items():
                seconds, answers[name] = _cpu_seconds(side)
                best[name] = min(best[name], seconds)
    sklearn_norms = {name: max(_gradient_norm(theta, x, y, regularization) for theta, (x, y) in zip(answers[name], blocks))
                     for name in ("matched", "default")}
    return {name: seconds / heads for name, seconds in best.items()}, sklearn_norms, batched


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 500, 2400], help="records per head")
    parser.add_argument("--heads", type=int, default=20, help="heads (clients) per batched fit")
    parser.add_argument("--regularization", type=float, default=0.01, help="λ of every head (FedAUXfdp.paper: 0.01)")
    parser.add_argument("--tolerance", type=float, default=1e-9, help="τ, the certified gradient norm (default 1e-9)")
    parser.add_argument("--threads", type=int, default=1, help="threads of both sides' pools (default 1)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--label-skew", type=float, default=None,
                        help="Dirichlet α of every client's label proportions (FedAUXfdp: 0.16); default: uniform draws")
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args(argv)
    for name in ("heads", "threads", "repeats"):
        if getattr(arguments, name) < 1:
            parser.error(f"--{name} must be >= 1")
    if min(arguments.sizes) < 1 or arguments.regularization <= 0 or arguments.tolerance <= 0:
        parser.error("--sizes, --regularization and --tolerance must be positive")
    if arguments.label_skew is not None and not arguments.label_skew > 0:
        parser.error("--label-skew must be > 0")
    rng = np.random.default_rng(arguments.seed)
    data = load_digits_dataset()
    features = data.features / np.linalg.norm(data.features, axis=1).max()
    console = Console(width=160)
    table = Table(title=f"CPU ms per certified head: {arguments.heads} heads, d = {features.shape[1]}, C = 10, "
                        f"λ = {arguments.regularization:g}, τ = {arguments.tolerance:g}, labels "
                        + ("uniform" if arguments.label_skew is None else f"Dirichlet({arguments.label_skew:g}) per client"))
    for column in ("n", "batched ms", "Newton iters", "certified ‖g‖₂ ≤", "sklearn matched ms", "sklearn ‖g‖₂",
                   "ratio matched", "sklearn default ms", "sklearn default ‖g‖₂", "ratio default"):
        table.add_column(column, justify="right")
    for n in arguments.sizes:
        seconds, norms, batched = _case(features, data.labels, n, arguments, rng)
        table.add_row(
            str(n), f"{1e3 * seconds['batched']:.2f}", str(batched.n_iter_), f"{batched.gradient_norm_bound_:.2e}",
            f"{1e3 * seconds['matched']:.2f}", f"{norms['matched']:.1e}", f"{seconds['matched'] / seconds['batched']:.2f}x",
            f"{1e3 * seconds['default']:.2f}", f"{norms['default']:.1e}", f"{seconds['default'] / seconds['batched']:.2f}x",
        )
    console.print(table)
    console.print("ratio = scikit-learn CPU time / batched CPU time (above 1: the batched heads are faster)")
    console.print(f"command: {shlex.join([sys.executable] + sys.argv)}")
    console.print(
        f"machine: {platform.node()} {platform.platform()}, {os.cpu_count()} CPUs, torch {torch.__version__}, "
        f"{arguments.threads} thread(s) in every pool on both sides, load average {os.getloadavg()[0]:.2f} at the end"
    )


if __name__ == "__main__":
    main()
