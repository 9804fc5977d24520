"""The proven Gaussian core against its peers, in one process, CPU time, thread pools at 1 (issue 28).

Usage::

    python benchmarks/gaussian_core.py [--runs 7]

Prints, each a median of ``--runs`` runs of ``time.process_time``:

* δ(ε) on 10^6 points (ε = linspace(0, 10), σ = 1): ``dpmech.gaussian_delta`` against opacus's
  ``analysis.gdp.delta_eps_mu`` (the plain Φ(−ε/μ+μ/2) − e^ε Φ(−ε/μ−μ/2) with scipy.stats.norm.cdf);
* one calibration (ε = 1) at δ = 1e-5 and δ = 1e-15: ``dpmech.calibrate_gaussian`` and
  dp_accounting's ``gaussian_mechanism.get_sigma_gaussian`` for reference;
* a ledger of 1000 Gaussians, ``PrivacyLedger(dpmech.REPLACE_ONE).record(GaussianEvent(σ), count=1000).epsilon(1e-5)``
  (and ``.delta(1.0)``), against the bare ``gaussian_epsilon(1e-5, σ, compositions=1000)``
  (and ``gaussian_delta(1.0, σ, compositions=1000)``).
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_name] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import dpmech  # noqa: E402


def median_time(function, runs, calls=1):
    """Median over ``runs`` of the CPU seconds per call, each run ``calls`` calls (after one warm-up)."""
    function()
    times = []
    for _ in range(runs):
        start = time.process_time()
        for _ in range(calls):
            function()
        times.append((time.process_time() - start) / calls)
    return statistics.median(times)


def fmt(seconds):
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.1f} µs"
    return f"{seconds * 1e3:8.2f} ms"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    runs = max(args.runs, 5)
    from dp_accounting import gaussian_mechanism
    from opacus.accountants.analysis import gdp

    rows = []
    with threadpool_limits(1):
        epsilons = np.linspace(0.0, 10.0, 1_000_000)
        ours = median_time(lambda: dpmech.gaussian_delta(epsilons, 1.0), runs)
        theirs = median_time(lambda: gdp.delta_eps_mu(eps=epsilons, mu=1.0), runs)
        rows.append(("δ(ε), 10^6 points, σ=1", "dpmech gaussian_delta", ours, "opacus gdp.delta_eps_mu", theirs))

        base = None
        for delta in (1e-5, 1e-15):
            ours = median_time(lambda: dpmech.calibrate_gaussian(1.0, delta), runs, calls=2000)
            theirs = median_time(lambda: gaussian_mechanism.get_sigma_gaussian(1.0, delta), runs, calls=20)
            rows.append((f"calibration ε=1, δ={delta:g}", "dpmech calibrate_gaussian", ours,
                         "dp_accounting get_sigma_gaussian", theirs))
            base = ours if base is None else base
        rows.append(("calibration δ=1e-15 / δ=1e-5", "dpmech", ours, "dpmech δ=1e-5", base))

        for sigma in (1.0, 20.0):
            ledger = dpmech.PrivacyLedger(dpmech.REPLACE_ONE).record(dpmech.GaussianEvent(sigma), count=1000)
            ours = median_time(lambda: ledger.epsilon(1e-5), runs, calls=500)
            bare = median_time(lambda: dpmech.gaussian_epsilon(1e-5, sigma, compositions=1000), runs, calls=500)
            rows.append((f"ε(1e-5) of 1000 Gaussians, σ={sigma:g}", "ledger.epsilon", ours,
                         "bare gaussian_epsilon", bare))
            ours = median_time(lambda: ledger.delta(1.0), runs, calls=500)
            bare = median_time(lambda: dpmech.gaussian_delta(1.0, sigma, compositions=1000), runs, calls=500)
            rows.append((f"δ(1) of 1000 Gaussians, σ={sigma:g}", "ledger.delta", ours, "bare gaussian_delta", bare))

    print(f"{'task':<36} {'ours':<26} {'time':>11}   {'peer':<33} {'time':>11}   ours/peer")
    for task, ours_name, ours, peer_name, peer in rows:
        print(f"{task:<36} {ours_name:<26} {fmt(ours):>11}   {peer_name:<33} {fmt(peer):>11}   {ours / peer:6.2f}")


if __name__ == "__main__":
    main()
