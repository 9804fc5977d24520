"""dpmech's numeric PLD path against dp_accounting's PLD, prv_accountant and opacus on the same inputs, in one table.

Usage::

    python benchmarks/pld.py

Every library runs single-threaded (OMP/MKL/OpenBLAS threads set to 1 before numpy loads,
and threadpoolctl around each call). Times are the median of three runs with
``time.perf_counter``, construction included. dpmech's value is its certified interval;
the anchors give a point value (dp_accounting's pessimistic PLD) or prv_accountant's
(lower, estimate, upper). "ratio" is the anchor's time over dpmech's (above 1: dpmech faster).
The DP-SGD rows go through the public API (``PrivacyLedger.epsilon`` with the ``numeric``
method at discretisation 9e-4, whose interval is at most 1e-3 wide there, and
``dpmech.poisson_subsampled_gaussian_sigma``); opacus's ``get_noise_multiplier`` (rdp and
prv) is timed when opacus is installed, else the table says so.
Numbers taken on a shared machine are provisional.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_variable] = "1"

import math
import statistics
import time

from dp_accounting import dp_event
from dp_accounting.mechanism_calibration import (
    ExplicitBracketInterval,
    calibrate_dp_mechanism,
)
from dp_accounting.pld import privacy_loss_distribution as dp_pld
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from prv_accountant import PRVAccountant
from prv_accountant.privacy_random_variables import (
    LaplaceMechanism,
    PoissonSubsampledGaussianMechanism,
)
from threadpoolctl import threadpool_limits

from dpmech import ADD_REMOVE_ONE, GaussianEvent, PoissonSampledEvent, PrivacyLedger, pld
from dpmech.pld.calibration import poisson_subsampled_gaussian_sigma

try:
    from opacus.accountants.utils import get_noise_multiplier
except ImportError:  # opacus is no dependency of dpmech
    get_noise_multiplier = None


def timed(function, repeats=3):
    times, result = [], None
    for _ in range(repeats):
        with threadpool_limits(1):
            start = time.perf_counter()
            result = function()
            times.append(time.perf_counter() - start)
    return statistics.median(times), result


def _interval(value):
    return f"[{value.lower:.6g}, {value.upper:.6g}] (width {value.upper - value.lower:.2g})"


def _sgm_ledger(sigma, rate=0.01, steps=1000):
    return [(pld.poisson_subsampled(pld.GaussianPair(1.0 / sigma), rate), steps)]


def _dp_sgd_ledger(sigma, rate=0.01, steps=1000):
    return PrivacyLedger(ADD_REMOVE_ONE).record(PoissonSampledEvent(GaussianEvent(sigma), rate), count=steps)


class _Guarantee:
    """A PrivacyGuarantee's interval with the ``lower``/``upper`` the table prints."""

    def __init__(self, guarantee):
        self.lower, _, self.upper = guarantee.interval


def _dp_accounting_sgm_epsilon(delta, discretization=1e-4):
    event = dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0)), 1000)
    accountant = PLDAccountant(value_discretization_interval=discretization)
    accountant.compose(event)
    return accountant.get_epsilon(delta)


def _prv_sgm_epsilon(delta):
    accountant = PRVAccountant(
        prvs=[PoissonSubsampledGaussianMechanism(noise_multiplier=1.0, sampling_probability=0.01)],
        max_self_compositions=[1000], eps_error=0.01, delta_error=delta / 1000,
    )
    return accountant.compute_epsilon(delta=delta, num_self_compositions=[1000])


def _dp_accounting_sigma(epsilon, delta):
    def event(sigma):
        return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(sigma)), 1000)

    return calibrate_dp_mechanism(
        lambda: PLDAccountant(value_discretization_interval=1e-3), event, epsilon, delta,
        ExplicitBracketInterval(0.3, 5.0), tol=1e-3,
    )


def rows():
    out = []

    def add(task, ours, theirs):
        our_time, our_value = ours
        for anchor, (their_time, their_value) in theirs:
            out.append((task, _interval(our_value) if hasattr(our_value, "lower") else f"{our_value:.6g}",
                        f"{our_time * 1e3:.0f}", anchor, their_value, f"{their_time * 1e3:.0f}",
                        "-" if math.isnan(their_time) else f"{their_time / our_time:.2f}"))

    # 1. The issue-12 headline: Poisson-subsampled Gaussian, q = 0.01, σ = 1, 1000 steps.
    ours = timed(lambda: _Guarantee(_dp_sgd_ledger(1.0).epsilon(1e-5, method="numeric", discretization=9e-4)))
    dp = timed(lambda: _dp_accounting_sgm_epsilon(1e-5))
    prv = timed(lambda: _prv_sgm_epsilon(1e-5))
    add("SGM q=0.01 σ=1 k=1000 ε(δ=1e-5)", ours,
        [("dp_accounting PLD 1e-4", (dp[0], f"{dp[1]:.6g}")),
         ("prv_accountant ±0.01", (prv[0], "({:.6g}, {:.6g}, {:.6g})".format(*prv[1])))])

    ours = timed(lambda: _Guarantee(_dp_sgd_ledger(1.0).epsilon(1e-20, method="numeric", discretization=9e-4)))
    dp = timed(lambda: _dp_accounting_sgm_epsilon(1e-20))
    try:
        prv_value = "({:.6g}, {:.6g}, {:.6g})".format(*_prv_sgm_epsilon(1e-20))
    except (ValueError, RuntimeError, AssertionError) as error:  # prv_accountant refuses δ this small
        prv_value = f"refused: {type(error).__name__}"
    add("SGM q=0.01 σ=1 k=1000 ε(δ=1e-20)", ours,
        [("dp_accounting PLD 1e-4", (dp[0], f"{dp[1]:.6g}")), ("prv_accountant", (math.nan, prv_value))])

    # 2. Calibration of σ for that ledger.
    for epsilon in (1.0, 8.0):
        ours = timed(lambda epsilon=epsilon: poisson_subsampled_gaussian_sigma(0.01, 1000, epsilon, 1e-5))
        check = _dp_sgd_ledger(ours[1]).delta(epsilon, method="numeric", discretization=ours[1].discretization)
        anchors = []
        dp = timed(lambda epsilon=epsilon: _dp_accounting_sigma(epsilon, 1e-5), repeats=1)
        dp_check = pld.delta(_sgm_ledger(dp[1]), epsilon, 1e-3)
        anchors.append(("dp_accounting calibrate (PLD 1e-3)",
                        (dp[0], f"{dp[1]:.6g} (certified δ there ∈ {_interval(dp_check)})")))
        for accountant in ("rdp", "prv"):
            if get_noise_multiplier is None:
                anchors.append((f"opacus get_noise_multiplier({accountant})", (math.nan, "opacus not installed")))
                continue
            theirs = timed(lambda epsilon=epsilon, accountant=accountant: get_noise_multiplier(
                target_epsilon=epsilon, target_delta=1e-5, sample_rate=0.01, steps=1000, accountant=accountant,
                epsilon_tolerance=0.001), repeats=1)
            their_check = pld.delta(_sgm_ledger(theirs[1]), epsilon, 1e-3)
            anchors.append((f"opacus get_noise_multiplier({accountant})",
                            (theirs[0], f"{theirs[1]:.6g} (certified δ there ∈ {_interval(their_check)})")))
        add(f"σ for ε={epsilon:g}, δ=1e-5 (certified δ at σ: {check.delta:.4g})", (ours[0], ours[1]), anchors)

    # 3. Laplace: scale 2, 50 compositions.
    ours = timed(lambda: pld.epsilon([(pld.LaplacePair(2.0), 50)], 1e-6, 1e-3))

    def dp_laplace():
        return dp_pld.from_laplace_mechanism(2.0, value_discretization_interval=1e-4).self_compose(50) \
            .get_epsilon_for_delta(1e-6)

    def prv_laplace():
        accountant = PRVAccountant(prvs=[LaplaceMechanism(mu=0.5)], max_self_compositions=[50],
                                   eps_error=0.01, delta_error=1e-9)
        return accountant.compute_epsilon(delta=1e-6, num_self_compositions=[50])

    dp = timed(dp_laplace)
    prv = timed(prv_laplace)
    add("Laplace b=2 k=50 ε(δ=1e-6)", ours,
        [("dp_accounting PLD 1e-4", (dp[0], f"{dp[1]:.6g}")),
         ("prv_accountant ±0.01", (prv[0], "({:.6g}, {:.6g}, {:.6g})".format(*prv[1])))])

    # 4. Mixed: 100 binary randomized responses with ε = 0.1 and 10 Gaussians with σ = 2.
    mixed = [(pld.randomized_response_pair(0.1), 100), (pld.GaussianPair(0.5), 10)]
    ours = timed(lambda: pld.epsilon(mixed, 1e-6, 1e-3))

    def dp_mixed():
        rr = dp_pld.from_randomized_response(2 / (math.exp(0.1) + 1), 2, value_discretization_interval=1e-4)
        gaussian = dp_pld.from_gaussian_mechanism(2.0, value_discretization_interval=1e-4)
        return rr.self_compose(100).compose(gaussian.self_compose(10)).get_epsilon_for_delta(1e-6)

    dp = timed(dp_mixed)
    add("RR ε=0.1 ×100 + Gaussian σ=2 ×10 ε(δ=1e-6)", ours, [("dp_accounting PLD 1e-4", (dp[0], f"{dp[1]:.6g}"))])
    return out


def main():
    header = ("task", "dpmech.pld certified", "ms", "anchor", "anchor value", "ms", "ratio")
    table = rows()
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for row in table:
        print(" | ".join(str(cell) for cell in row))
    print("\nProvisional: taken on a shared machine; anchors and dpmech single-threaded.")


if __name__ == "__main__":
    main()
