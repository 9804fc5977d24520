"""Gaussian accounting: dpmech against dp_accounting and prv_accountant, in one run.

Usage::

    python benchmarks/accounting.py [--quick] [--markdown PATH]

For each task the table gives the time, the value returned, its relative error
against a 50-digit mpmath reference (negative = under-noised or understated,
which breaks the guarantee) and the speed-up of dpmech over each library.
``--quick`` skips the two slowest library calls (dp_accounting's PLD on 1000
Gaussians, about 20 s; prv_accountant's calibration, about 0.3 s) and
extrapolates loops from fewer calls; it is what the tests run.
Times are medians of repeats with ``time.perf_counter``, construction included.
"""

from __future__ import annotations

import argparse
import math
import platform
import statistics
import sys
import time

import numpy as np
from dp_accounting import dp_event, gaussian_mechanism
from dp_accounting.pld import accountant as pld_accountant
from dp_accounting.pld import common as pld_common
from dp_accounting.pld import privacy_loss_mechanism
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from prv_accountant import GaussianMechanism, PRVAccountant
from prv_accountant.dpsgd import find_noise_multiplier
from rich.console import Console
from rich.table import Table

import dpmech
from dpmech import high_precision
from dpmech.directed_rounding import format_down, format_up


def timed(function, repeats=5):
    """(median seconds, last value) over ``repeats`` calls; fewer repeats for slow calls."""
    start = time.perf_counter()
    value = function()
    first = time.perf_counter() - start
    times = [first]
    for _ in range(repeats - 1 if first < 1.0 else (2 if first < 10.0 else 0)):
        start = time.perf_counter()
        value = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def exact_sigma(epsilon, delta):
    return high_precision.sigma(epsilon, delta, dpmech.calibrate_gaussian(epsilon, delta))


def exact_epsilon(delta, mu):
    return high_precision.epsilon(delta, mu, dpmech.gaussian_epsilon(delta, 1.0, mu))


def fmt_time(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1.0:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def run(quick: bool):
    rows = []

    def add(task, library, call, seconds, value, error, ours_seconds):
        ratio = "—" if library == "dpmech" else f"{seconds / ours_seconds:,.0f}×" if seconds >= ours_seconds else f"{seconds / ours_seconds:.2f}×"
        rows.append((task, library, call, fmt_time(seconds), value, error, ratio))

    # (1) δ(ε) at 10^6 points, σ = 1.
    epsilons = np.linspace(0.0, 10.0, 1_000_000)
    check = epsilons[::1000]
    reference = [high_precision.delta(e, 1.0) for e in check]

    def signed_worst(values):
        errors = [float(v / r - 1) for v, r in zip(values, reference) if r > 0]
        return min(errors) if abs(min(errors)) > abs(max(errors)) else max(errors)

    ours_t, ours = timed(lambda: dpmech.gaussian_delta(epsilons, 1.0))
    task = "δ(ε) at 10^6 points"
    add(task, "dpmech", "gaussian_delta(eps_array, 1.0)", ours_t, f"{1e6 / ours_t / 1e6:.1f} M/s", f"{signed_worst(ours[::1000]):+.1e}", ours_t)
    loss = privacy_loss_mechanism.GaussianPrivacyLoss(1.0)
    t, theirs = timed(lambda: loss.get_delta_for_epsilon(epsilons), repeats=3)
    add(task, "dp_accounting", "GaussianPrivacyLoss(1).get_delta_for_epsilon(arr)", t, f"{1e6 / t / 1e6:.1f} M/s", f"{signed_worst(theirs[::1000]):+.1e}", ours_t)
    prv = PRVAccountant([GaussianMechanism(1.0)], eps_error=0.01, delta_error=1e-10)
    sample = check[:20] if quick else check[:100]
    t, prv_values = timed(lambda: [prv.compute_delta(float(e), [1])[1] for e in sample], repeats=1)
    per_million = t / len(sample) * 1e6
    prv_error = max((float(v / r - 1) for v, r in zip(prv_values, reference) if r > 0), key=abs)
    add(task, "prv_accountant", f"compute_delta loop ({len(sample)} calls, extrapolated)", per_million, f"{1e6 / per_million:.0f} /s", f"{prv_error:+.1e}", ours_t)

    # (2) one calibration, ε = 1, at three δ.
    for delta in (1e-5, 1e-12, 1e-20):
        exact = exact_sigma(1.0, delta)
        task = f"one calibration, ε=1, δ={delta:g}"
        ours_t, ours_sigma = timed(lambda: dpmech.calibrate_gaussian(1.0, delta), repeats=2000)
        add(task, "dpmech", "calibrate_gaussian(1, δ)", ours_t, f"{ours_sigma:.10g}", f"{float(ours_sigma / exact - 1):+.1e}", ours_t)
        t, sigma = timed(lambda: gaussian_mechanism.get_sigma_gaussian(1.0, delta), repeats=20)
        add(task, "dp_accounting", "get_sigma_gaussian(1, δ)", t, f"{sigma:.10g}", f"{float(sigma / exact - 1):+.1e}", ours_t)
        t, sigma = timed(lambda: pld_accountant.get_smallest_gaussian_noise(pld_common.DifferentialPrivacyParameters(1.0, delta)), repeats=3)
        add(task, "dp_accounting", "pld.accountant.get_smallest_gaussian_noise", t, f"{sigma:.10g}", f"{float(sigma / exact - 1):+.1e}", ours_t)
        if not quick:
            try:
                t, sigma = timed(lambda: find_noise_multiplier(1.0, 1, 1.0, delta, eps_error=0.01), repeats=1)
                add(task, "prv_accountant", "dpsgd.find_noise_multiplier(q=1, steps=1)", t, f"{sigma:.10g}", f"{float(sigma / exact - 1):+.1e}", ours_t)
            except ValueError as error:
                rows.append((task, "prv_accountant", "dpsgd.find_noise_multiplier(q=1, steps=1)", "—", "fails", str(error)[:48], "—"))

    # (3) 10^4 calibrations.
    rng = np.random.default_rng(0)
    eps = 10.0 ** rng.uniform(-3, 1, 10_000)
    deltas = 10.0 ** rng.uniform(-12, -3, 10_000)
    task = "10^4 calibrations"
    ours_t, sigmas = timed(lambda: dpmech.calibrate_gaussian(eps, deltas), repeats=3)
    under = int(np.sum(dpmech.gaussian_delta(eps, sigmas) > deltas))
    add(task, "dpmech", "calibrate_gaussian(eps_array, delta_array)", ours_t, f"under: {under}", "—", ours_t)
    calls = 100 if quick else 1000
    t, _ = timed(lambda: [gaussian_mechanism.get_sigma_gaussian(float(e), float(d)) for e, d in zip(eps[:calls], deltas[:calls])], repeats=1)
    add(task, "dp_accounting", f"get_sigma_gaussian loop ({calls} calls, extrapolated)", t * 10_000 / calls, "—", "—", ours_t)

    # (4) ε of 1000 composed Gaussians, σ = 1 and σ = 20, δ = 1e-5.
    for sigma in (1.0, 20.0):
        exact = exact_epsilon(1e-5, math.sqrt(1000) / sigma)
        task = f"ε of 1000 Gaussians, σ={sigma:g}"
        ledger = dpmech.PrivacyLedger(dpmech.ADD_REMOVE_ONE).record(dpmech.GaussianEvent(sigma), count=1000)
        ours_t, value = timed(lambda: ledger.epsilon(1e-5).epsilon, repeats=200)
        add(task, "dpmech", "PrivacyLedger().record(..., count=1000).epsilon(1e-5)", ours_t, f"{value:.8g}", f"{float(value / exact - 1):+.1e}", ours_t)
        if not (quick and sigma == 1.0):
            t, value = timed(lambda: PLDAccountant().compose(dp_event.GaussianDpEvent(sigma), 1000).get_epsilon(1e-5), repeats=1)
            add(task, "dp_accounting", "PLDAccountant().compose(Gaussian, 1000)", t, f"{value:.8g}", f"{float(value / exact - 1):+.1e}", ours_t)
        t, (lower, estimate, upper) = timed(
            lambda: PRVAccountant(prvs=[GaussianMechanism(sigma)], max_self_compositions=[1000], eps_error=0.1, delta_error=1e-8).compute_epsilon(1e-5, [1000]), repeats=1
        )
        add(task, "prv_accountant", "PRVAccountant(eps_error=0.1) (lo, est, hi)", t, f"({lower:.6g}, {estimate:.8g}, {upper:.6g})", f"{float(estimate / exact - 1):+.1e}", ours_t)
        _optional_anchors(rows, add, task, sigma, exact, ours_t)

    # (5) heterogeneous: 10 Gaussians (σ = 2) + 10 × 10-ary RR (ε = 0.5) + one generic (0.1, 1e-7), δ = 1e-5.
    task = "ε of Gaussian×10 + RR×10 + (0.1, 1e-7)"
    ledger = (
        dpmech.PrivacyLedger(dpmech.REPLACE_ONE)
        .record(dpmech.GaussianEvent(2.0), count=10)
        .record(dpmech.randomized_response_event(0.5, 10), count=10)
        .record(dpmech.ApproximateDpEvent(0.1, 1e-7))
    )
    ours_t, guarantee = timed(lambda: ledger.epsilon(1e-5, method="exact"), repeats=3)
    lower, _, upper = guarantee.interval
    add(task, "dpmech", "ledger.epsilon(1e-5, method='exact')", ours_t, f"[{format_down(lower, 12)}, {format_up(upper, 12)}]", "certified interval", ours_t)
    t, guarantee = timed(lambda: ledger.epsilon(1e-5, method="pld"), repeats=3)
    lower, _, upper = guarantee.interval
    add(task, "dpmech", "ledger.epsilon(1e-5, method='pld')", t, f"[{lower:.6g}, {upper:.6g}]", "lower end an estimate", ours_t)
    t, guarantee = timed(lambda: ledger.epsilon(1e-5, method="prv"), repeats=3)
    add(task, "dpmech", "ledger.epsilon(1e-5, method='prv')", t, f"({guarantee.interval[0]:.6g}, {guarantee.interval[1]:.6g}, {guarantee.interval[2]:.6g})", "RR as generic ε-DP", ours_t)
    t, guarantee = timed(lambda: ledger.epsilon(2e-5, method="basic"), repeats=3)
    add(task, "dpmech", "ledger.epsilon(2e-5, method='basic')", t, f"{guarantee.epsilon:.6g}", "basic composition", ours_t)
    without_generic = dpmech.PrivacyLedger(dpmech.REPLACE_ONE).record(dpmech.GaussianEvent(2.0), count=10).record(
        dpmech.randomized_response_event(0.5, 10), count=10
    )
    t, value = timed(
        lambda: PLDAccountant(without_generic.dp_accounting_relation).compose(without_generic.to_dp_event()).get_epsilon(1e-5),
        repeats=3,
    )
    add(task, "dp_accounting", "PLDAccountant (no generic (ε, δ) event; without it)", t, f"{value:.6g}", "lower: drops an event", ours_t)
    rr_noise = 10 / (math.exp(0.5) + 9)
    buggy = PLDAccountant(without_generic.dp_accounting_relation).compose(dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(4.0), 10))
    buggy = buggy.compose(dp_event.SelfComposedDpEvent(dp_event.RandomizedResponseDpEvent(rr_noise, 10), 10))
    add(task, "dp_accounting", "same, RR as SelfComposedDpEvent(count=10)", t, f"{buggy.get_epsilon(1e-5):.6g}", "UNDER: count dropped", ours_t)
    return rows


def _optional_anchors(rows, add, task, sigma, exact, ours_t):
    """autodp and opacus rows, when those packages are installed (they are not dependencies)."""
    try:
        from autodp.mechanism_zoo import ExactGaussianMechanism
        from autodp.transformer_zoo import ComposeGaussian
    except ImportError:
        rows.append((task, "autodp", "not installed", "—", "—", "—", "—"))
    else:
        t, value = timed(lambda: ComposeGaussian()([ExactGaussianMechanism(sigma)], [1000]).get_approxDP(1e-5), repeats=5)
        add(task, "autodp", "ComposeGaussian()([ExactGaussianMechanism], [1000])", t, f"{value:.8g}", f"{float(value / exact - 1):+.1e}", ours_t)
    try:
        from opacus.accountants import RDPAccountant
    except ImportError:
        rows.append((task, "opacus", "not installed", "—", "—", "—", "—"))
    else:
        def opacus_epsilon():
            accountant = RDPAccountant()
            accountant.history = [(sigma, 1.0, 1000)]
            return accountant.get_epsilon(1e-5)

        t, value = timed(opacus_epsilon, repeats=5)
        add(task, "opacus", "RDPAccountant (history [(σ, q=1, 1000)])", t, f"{value:.8g}", f"{float(value / exact - 1):+.1e}", ours_t)


def render(rows, quick):
    machine = f"{platform.machine()}, {platform.system()}, Python {platform.python_version()}, {__import__('os').cpu_count()} CPUs"
    command = "python benchmarks/accounting.py" + (" --quick" if quick else "")
    table = Table(title=f"Gaussian accounting — {machine}\n{command}")
    for column in ("task", "library", "call", "time", "value", "rel. error", "dpmech speed-up"):
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    return table, machine, command


def markdown(rows, machine, command):
    lines = [f"Machine: {machine}. Command: `{command}`.", "", "| task | library | call | time | value | rel. error | dpmech speed-up |", "|---|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(str(cell).replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--markdown", help="also write the table as Markdown to this path")
    args = parser.parse_args(argv)
    rows = run(args.quick)
    table, machine, command = render(rows, args.quick)
    Console(width=200).print(table)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(markdown(rows, machine, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())
