"""The exact accountant on issue 12's three ledgers, against dp_accounting's PLD and prv_accountant, in one run.

Usage::

    python benchmarks/exact_accountant.py [--quick] [--full]

1. Mixed ledger: 10 Gaussians (σ = 2 + 0.5i, Δ = 1 + 0.1i) + 10 × RR(ε = 0.5, K = 10) + 5 × generic
   (0.1, 1e-7), ε at δ = 1e-5. Truth 6.65484058998559 (50 digits, issue 12); the interval is also
   checked against :func:`dpmech.high_precision.ledger_delta` at both ends.
2. Gaussian σ = 0.02 and σ = 0.01 (Δ = 1) + one RR(0.5, K = 10): time and peak traced memory of
   ``PrivacyLedger.epsilon(1e-5)``. dp_accounting's PLD needed 66 s and 7.8 GB at σ = 0.02 (issue 12)
   and runs only with ``--full``.
3. 10⁴, 10⁵, 10⁶ events of mixed types (half Gaussians with varied σ, 40 % K-ary RR with 40 distinct
   (ε, K), 10 % generic (ε, δ) with 1000 distinct steps), each size in a fresh process: recording
   time, ε time, peak RSS and the ratios between sizes (linear growth is ×10 per row).
   ``--quick`` stops at 10⁵.

Times are medians of repeats with ``time.perf_counter`` and ``OMP_NUM_THREADS=1``-style single
threads for all three libraries (set them in the environment for a fair comparison).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc

import numpy as np

import dpmech
from dpmech import ApproximateDpEvent, GaussianEvent, PrivacyLedger, high_precision

DELTA = 1e-5
MIXED_TRUTH = 6.65484058998559  # 50-digit ε of the mixed ledger at δ = 1e-5 (issue 12)


def timed(function, repeats=7):
    """(median seconds, last value); a call over a second runs once."""
    start = time.perf_counter()
    value = function()
    times = [time.perf_counter() - start]
    for _ in range(repeats - 1 if times[0] < 1.0 else 0):
        start = time.perf_counter()
        value = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def mixed_ledger():
    ledger = PrivacyLedger(dpmech.REPLACE_ONE)
    for i in range(10):
        ledger.record(GaussianEvent(2.0 + 0.5 * i, 1.0 + 0.1 * i))
    for _ in range(10):
        ledger.record(dpmech.randomized_response_event(0.5, 10))
    for _ in range(5):
        ledger.record(ApproximateDpEvent(0.1, 1e-7))
    return ledger


def contains_truth(ledger, interval):
    """Whether 50-digit δ at the ends brackets the target: δ(upper) <= δ <= δ(lower)."""
    pairs = ledger._pairs()
    lower, _, upper = interval
    return bool(high_precision.ledger_delta(pairs, upper) <= DELTA <= high_precision.ledger_delta(pairs, lower))


def anchor(ledger, method, **options):
    """(seconds, ε upper) by a library method, or (nan, message) when it refuses."""
    try:
        seconds, guarantee = timed(lambda: ledger.epsilon(DELTA, method=method, **options), repeats=3)
    except (ValueError, MemoryError) as error:
        return math.nan, f"refused: {str(error)[:60]}"
    return seconds, guarantee.epsilon


def show_anchor(name, seconds, value, ours):
    if math.isnan(seconds):
        print(f"  {name:<22} {value}")
    else:
        print(f"  {name:<22} {seconds * 1e3:10.2f} ms  ε = {value:.10g}  dpmech is {seconds / ours:,.0f}× faster")


def mixed_case():
    print("1. Mixed ledger: 10 Gaussians + 10 × RR(0.5, K=10) + 5 × (0.1, 1e-7), ε at δ = 1e-5")
    ledger = mixed_ledger()
    seconds, guarantee = timed(lambda: ledger.epsilon(DELTA), repeats=21)
    lower, estimate, upper = guarantee.interval
    print(f"  dpmech exact           {seconds * 1e3:10.2f} ms  interval ({lower!r}, {estimate!r}, {upper!r})")
    print(f"  relative error of the estimate against 6.65484058998559: {abs(estimate - MIXED_TRUTH) / MIXED_TRUTH:.2e}; "
          f"relative width {(upper - lower) / estimate:.2e}; 50-digit δ brackets δ at the ends: "
          f"{contains_truth(ledger, guarantee.interval)}")
    show_anchor("dp_accounting pld", *anchor(ledger, "pld"), seconds)
    show_anchor("prv_accountant", *anchor(ledger, "prv"), seconds)


def small_sigma_case(full):
    print("2. Gaussian σ (Δ = 1) + one RR(0.5, K=10), ε at δ = 1e-5")
    for sigma in (0.02, 0.01):
        ledger = PrivacyLedger(dpmech.REPLACE_ONE).record(GaussianEvent(sigma, 1.0)).record(dpmech.randomized_response_event(0.5, 10))
        seconds, guarantee = timed(lambda ledger=ledger: ledger.epsilon(DELTA), repeats=21)
        tracemalloc.start()
        ledger.epsilon(DELTA)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        lower, estimate, upper = guarantee.interval
        print(f"  σ = {sigma}: dpmech exact {seconds * 1e3:8.2f} ms, peak traced memory {peak / 2**20:.2f} MB, "
              f"interval ({lower!r}, {estimate!r}, {upper!r}), 50-digit check {contains_truth(ledger, guarantee.interval)}")
        show_anchor("prv_accountant", *anchor(ledger, "prv"), seconds)
        if full and sigma == 0.02:
            show_anchor("dp_accounting pld", *anchor(ledger, "pld"), seconds)
    if not full:
        print("  dp_accounting pld: skipped (66 s and 7.8 GB at σ = 0.02, MemoryError at 0.01; run with --full)")


def large_ledger(events, seed=0):
    """``events`` events: half Gaussians, 40 % K-ary RR over 40 (ε, K) values, 10 % (ε, δ) over 1000 steps."""
    rng = np.random.default_rng(seed)
    gaussians, generic = events // 2, events // 10
    rr = events - gaussians - generic
    ledger = PrivacyLedger(dpmech.REPLACE_ONE)
    for sigma in rng.uniform(50.0, 500.0, gaussians):
        ledger.record(GaussianEvent(float(sigma), 1.0))
    rr_epsilon = rng.choice(np.linspace(1e-3, 1e-2, 8), rr)
    rr_outcomes = rng.integers(2, 7, rr)
    for epsilon, outcomes in zip(rr_epsilon, rr_outcomes):
        ledger.record(dpmech.randomized_response_event(float(epsilon), int(outcomes)))
    steps = np.stack([np.linspace(1e-4, 3e-4, 1000), np.geomspace(1e-13, 1e-11, 1000)], axis=1)
    for epsilon, delta in steps[rng.integers(0, 1000, generic)]:
        ledger.record(ApproximateDpEvent(float(epsilon), float(delta)))
    return ledger


def peak_resident_megabytes():
    """This process's peak resident memory: VmHWM (Linux; ru_maxrss would include the parent's peak
    before exec), else ru_maxrss (kilobytes on Linux, bytes on macOS)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def scaling_child(events):
    start = time.perf_counter()
    ledger = large_ledger(events)
    recorded = time.perf_counter() - start
    start = time.perf_counter()
    guarantee = ledger.epsilon(DELTA)
    solved = time.perf_counter() - start
    peak = peak_resident_megabytes()
    print(json.dumps({"events": events, "record": recorded, "epsilon": solved, "rss_mb": peak,
                      "interval": list(guarantee.interval)}))


def scaling_case(quick):
    sizes = (10**4, 10**5) if quick else (10**4, 10**5, 10**6)
    print("3. Mixed events at scale (50 % Gaussians, 40 % RR over 40 (ε, K), 10 % (ε, δ) over 1000 steps), δ = 1e-5")
    print(f"  {'events':>9} {'record s':>9} {'epsilon s':>10} {'total ×':>8} {'peak RSS MB':>12}  interval")
    previous = None
    for events in sizes:
        output = subprocess.run([sys.executable, __file__, "--scaling-child", str(events)], capture_output=True,
                                text=True, check=True, env=os.environ).stdout
        row = json.loads(output.strip().splitlines()[-1])
        total = row["record"] + row["epsilon"]
        ratio = f"{total / previous:8.1f}" if previous else f"{'':8}"
        lower, estimate, upper = row["interval"]
        print(f"  {events:>9} {row['record']:9.2f} {row['epsilon']:10.2f} {ratio} {row['rss_mb']:12.0f}  "
              f"({lower:.6g}, {estimate:.6g}, {upper:.6g})")
        previous = total


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="scaling up to 10^5 events only")
    parser.add_argument("--full", action="store_true", help="also dp_accounting's PLD at σ = 0.02 (about a minute, 8 GB)")
    parser.add_argument("--scaling-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.scaling_child:
        scaling_child(args.scaling_child)
        return 0
    mixed_case()
    small_sigma_case(args.full)
    scaling_case(args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
