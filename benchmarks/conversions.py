"""Privacy-notion conversions: dpmech.conversions against dp_accounting 0.6.0 on the same inputs, in one run.

Usage::

    python benchmarks/conversions.py [--quick]

Both libraries run in this one process, so thread settings are the same for both.
Each row gives the median time of each (construction of dp_accounting's objects
included), the speed-up, and the largest difference between the two answers
(absolute, or relative where stated). ``--quick`` uses fewer repeats and smaller
inputs for the slowest dp_accounting loops.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time

import numpy as np
from dp_accounting import privacy_accountant
from dp_accounting.pld import accountant as pld_accountant
from dp_accounting.pld import common as pld_common
from dp_accounting.pld import privacy_loss_mechanism as mechanisms
from dp_accounting.rdp import rdp_privacy_accountant as rdp

from dpmech.conversions import composition, privacy_loss, renyi


def timed(function, repeats):
    times, value = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        value = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def each(function, values):
    """dp_accounting's scalar methods, called once per value on one object."""
    return np.array([function(value) for value in values])


def tasks(quick: bool):
    n = 200 if quick else 2000
    epsilons = np.linspace(0.0, 8.0, n)
    xs = np.linspace(-6.0, 6.0, n)
    losses = np.linspace(-0.1, 3.0, n)  # above log(1 − q) = −0.105 and log p_0 = −0.69 below
    orders = np.concatenate([np.linspace(1.1, 10.0, 90), np.geomspace(10.0, 1e4, 110)])
    remove = mechanisms.AdjacencyType.REMOVE
    replace_one = privacy_accountant.NeighboringRelation.REPLACE_ONE
    k = 100 if quick else 400

    def gaussian(q):
        return mechanisms.GaussianPrivacyLoss(0.8, sensitivity=1.0, sampling_prob=q, adjacency_type=remove)

    def laplace(q):
        return mechanisms.LaplacePrivacyLoss(0.8, sensitivity=1.0, sampling_prob=q, adjacency_type=remove)

    yield (
        f"Gaussian δ(ε), q = 1, {n} ε",
        lambda: gaussian(1.0).get_delta_for_epsilon(epsilons),
        lambda: privacy_loss.gaussian_delta_for_epsilon(epsilons, 0.8),
        "relative",
    )
    yield (
        f"Gaussian δ(ε), q = 0.1, {n} ε",
        lambda: gaussian(0.1).get_delta_for_epsilon(epsilons),
        lambda: privacy_loss.gaussian_delta_for_epsilon(epsilons, 0.8, 1.0, 0.1),
        "relative",
    )
    yield (
        f"Laplace δ(ε), q = 0.1, {n} ε",
        lambda: laplace(0.1).get_delta_for_epsilon(epsilons),
        lambda: privacy_loss.laplace_delta_for_epsilon(epsilons, 0.8, 1.0, 0.1),
        "absolute",
    )
    yield (
        f"Gaussian privacy loss, q = 0.1, {n} x",
        lambda: each(gaussian(0.1).privacy_loss, xs),
        lambda: privacy_loss.gaussian_privacy_loss(xs, 0.8, 1.0, 0.1),
        "absolute",
    )
    yield (
        f"Gaussian inverse privacy loss, q = 0.1, {n} values",
        lambda: each(gaussian(0.1).inverse_privacy_loss, losses),
        lambda: privacy_loss.gaussian_inverse_privacy_loss(losses, 0.8, 1.0, 0.1),
        "absolute",
    )
    mixture = ([0.0, 1.0, 2.0], [0.5, 0.3, 0.2])
    yield (
        f"mixture of Gaussians inverse loss, {n} values",
        lambda: mechanisms.MixtureGaussianPrivacyLoss(0.8, *mixture, adjacency_type=remove).inverse_privacy_losses(np.sort(losses) + 0.0),
        lambda: privacy_loss.mixture_gaussian_inverse_privacy_loss(losses, 0.8, *mixture),
        "absolute",
    )
    yield (
        f"mixture of Gaussians δ(ε), {n} ε",
        lambda: mechanisms.MixtureGaussianPrivacyLoss(0.8, *mixture, adjacency_type=remove).get_delta_for_epsilon(epsilons),
        lambda: privacy_loss.mixture_gaussian_delta_for_epsilon(epsilons, 0.8, *mixture),
        "absolute",
    )
    yield (
        f"discrete Gaussian δ(ε), σ = 3, q = 0.5, {n} ε",
        lambda: mechanisms.DiscreteGaussianPrivacyLoss(3.0, sensitivity=2, sampling_prob=0.5, adjacency_type=remove).get_delta_for_epsilon(epsilons),
        lambda: privacy_loss.discrete_gaussian_delta_for_epsilon(epsilons, 3.0, 2, 0.5),
        "absolute",
    )
    yield (
        f"K-ary RR RDP (p = 0.3, K = 10), {orders.size} orders",
        lambda: rdp._compute_randomized_response_rdp(0.3, 10, orders, replace_one),
        lambda: renyi.randomized_response_rdp(orders, 0.3, 10),
        "relative",
    )
    yield (
        f"Laplace RDP (ε = 1), {orders.size} orders",
        lambda: np.array([rdp._laplace_rdp(1.0, a) for a in orders]),
        lambda: renyi.laplace_rdp(orders, 1.0),
        "relative",
    )
    gaussian_curve = renyi.gaussian_rdp(orders, 2.0)
    yield (
        f"RDP → ε (improved), {orders.size} orders",
        lambda: rdp.compute_epsilon(orders, gaussian_curve, 1e-6)[0],
        lambda: renyi.rdp_epsilon(1e-6, orders, gaussian_curve)[0],
        "relative",
    )
    yield (
        f"advanced composition, k = {k}",
        lambda: pld_accountant.advanced_composition(pld_common.DifferentialPrivacyParameters(0.1, 1e-6), k, 1e-3),
        lambda: composition.advanced_composition(0.1, 1e-6, k, 1e-3),
        "absolute",
    )
    yield (
        "smallest ε from advanced composition, k = 50",
        lambda: pld_accountant.get_smallest_epsilon_from_advanced_composition(pld_common.DifferentialPrivacyParameters(5.0, 0.01), 50),
        lambda: composition.smallest_epsilon_from_advanced_composition(5.0, 0.01, 50),
        "absolute",
    )


def difference(theirs, ours, kind):
    theirs, ours = np.asarray(theirs, dtype=float), np.asarray(ours, dtype=float)
    if kind == "relative":
        scale = np.maximum(np.abs(theirs), 1e-300)
        finite = np.isfinite(theirs) & (theirs > 1e-300)
        return float(np.max(np.abs(ours[finite] - theirs[finite]) / scale[finite], initial=0.0))
    return float(np.max(np.abs(ours - theirs), initial=0.0))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats, smaller inputs")
    arguments = parser.parse_args(argv)
    repeats = 3 if arguments.quick else 7
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}; provisional timings on a shared machine")
    header = f"{'task':<48} {'dp_accounting':>14} {'dpmech':>12} {'speed-up':>9} {'max difference':>22}"
    print(header)
    print("-" * len(header))
    for name, theirs, ours, kind in tasks(arguments.quick):
        their_time, their_value = timed(theirs, repeats)
        our_time, our_value = timed(ours, repeats)
        print(
            f"{name:<48} {their_time * 1e3:>11.3f} ms {our_time * 1e3:>9.3f} ms {their_time / our_time:>8.1f}x "
            f"{difference(their_value, our_value, kind):>13.2e} {kind}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
