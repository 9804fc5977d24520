"""Regenerate ``benchmarks/RESULTS.md``: run every benchmark script and record its tables.

Usage::

    python benchmarks/run_all.py [--only NAME ...] [--threads N] [--output benchmarks/RESULTS.md]

Each section gives the exact command, the machine it ran on, the thread pools, the
load average before and after, the wall time and the script's printed tables. Every
script runs with ``--threads`` threads in every pool (OpenMP, OpenBLAS, MKL, and torch,
which reads ``OMP_NUM_THREADS``), so dpmech and the anchor it is compared with run with
the same pools: on 2 cores a second BLAS thread slows scikit-learn's fits 4–38×. A
script that fails is recorded with its exit status, and the run continues. ``--only``
reruns some sections and keeps the others from the existing file.
"""

from __future__ import annotations

import argparse
import datetime
import os
import pathlib
import platform
import re
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent

# name -> (script arguments, what it measures); run in this order.
BENCHMARKS = {
    "accounting": (["accounting.py"], "Gaussian accounting against dp-accounting and prv-accountant (issues 2 and 8)"),
    "conversions": (["conversions.py"], "RDP, zCDP, f-DP, privacy-loss functions and advanced composition against dp-accounting (issue 12)"),
    "pld": (["pld.py"], "dpmech's certified PLD engine against dp-accounting and prv-accountant (issue 12)"),
    "exact_accountant": (["exact_accountant.py"], "the exact accountant on issue 12's mixed, tiny-σ and 10⁶-event ledgers against dp-accounting and prv-accountant"),
    "discrete_noise": (["discrete_noise.py"], "exact discrete noise against numpy's float sampler and OpenDP (issue 17)"),
    "verification": (["verification.py"], "the verification suite's timing (issue 4)"),
    "verification_literature": (["verification_literature.py"], "the black-box tester on the DP-testing literature's mechanisms, beside StatDP and DP-Sniper (issue 14)"),
    "batched_logistic": (["batched_logistic.py"], "shadow and client heads: batched torch LR against a scikit-learn loop (issue 5)"),
    "audit_statistics": (["audit_statistics.py"], "audit estimators: known answers and trials per second (issue 7)"),
    "audit_pipelines": (["audit_pipelines.py"], "one audit row per seed pipeline, and shadow-head throughput (issue 7)"),
    "seed_fedauxfdp": (["seed_fedauxfdp.py"], "FedAUXfdp, seed 000 Table 3 shape"),
    "seed_dphelmet": (["seed_dphelmet.py"], "DP-Helmet accuracy against the number of users, seed 002"),
    "seed_nfdp_table2": (["seed_nfdp_table2.py"], "FedMD-NFDP Table 2's ε and δ recomputed, seed 001"),
    "seed_pipelines_two": (["seed_pipelines_two.py"], "FedMD-NFDP, FedGM and Fed-ZDA accuracy and fairness, seeds 001, 003, 004"),
}
# A section is "## NAME" up to the next "## "; a name may carry words after the script's (the sections recorded
# by hand, e.g. "## seed_fedgm --budget-curve (...)", runs too long for this script).
SECTION = re.compile(r"^## ([^\n]+)\n(.*?)(?=^## |\Z)", re.MULTILINE | re.DOTALL)


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        import torch

        device = f"torch {torch.__version__}" + (f", CUDA {torch.cuda.get_device_name(0)}" if torch.cuda.is_available() else ", no GPU")
    except ImportError:
        device = "no torch"
    return f"{platform.system()} {platform.machine()} ({cpu}), {os.cpu_count()} CPUs, Python {platform.python_version()}, {device}"


THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                    "NUMEXPR_NUM_THREADS")


def load_average() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def run_section(name: str, threads: int) -> str:
    arguments, purpose = BENCHMARKS[name]
    command = [sys.executable, str(HERE / arguments[0]), *arguments[1:]]
    shown = "python benchmarks/" + " ".join(arguments)
    pools = {variable: str(threads) for variable in THREAD_VARIABLES}
    load_before = load_average()
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT,
                            env={**os.environ, **pools, "COLUMNS": "200"})
    seconds = time.perf_counter() - start
    output = result.stdout.strip() or "(no output)"
    status = "" if result.returncode == 0 else f"\n\n**Exit status {result.returncode}.** Last lines of stderr:\n\n```text\n{result.stderr.strip()[-2000:]}\n```"
    return (
        f"## {name}\n\n{purpose}.\n\n- Command: `{shown}`\n- Machine: {machine()}\n"
        f"- Threads: {threads} in every pool, both sides ({', '.join(f'{v}={threads}' for v in THREAD_VARIABLES[:3])})\n"
        f"- Load average (1, 5, 15 min): {load_before} before, {load_average()} after\n"
        f"- Run: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, wall time {seconds:.0f} s\n\n"
        f"```text\n{output}\n```{status}\n\n"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=tuple(BENCHMARKS), help="rerun only these sections")
    parser.add_argument("--output", default=str(HERE / "RESULTS.md"))
    parser.add_argument("--threads", type=int, default=1, help="threads in every pool of every script (default 1)")
    args = parser.parse_args(argv)
    output = pathlib.Path(args.output)
    kept = dict(SECTION.findall(output.read_text())) if output.exists() else {}
    sections = []
    for name in BENCHMARKS:
        if args.only and name not in args.only:
            if name in kept:
                sections.append(f"## {name}\n{kept[name]}")
            continue
        print(f"running {name} ...", file=sys.stderr, flush=True)
        sections.append(run_section(name, args.threads))
    # Sections recorded by hand (not one of BENCHMARKS) stay, whatever is rerun.
    sections += [f"## {name}\n{body}" for name, body in kept.items() if name not in BENCHMARKS]
    header = (
        "# Benchmark results\n\nRegenerated by `python benchmarks/run_all.py` (one section per script; "
        "`--only NAME` reruns one). Times are wall clock on the machine named in each section.\n\n"
    )
    output.write_text(header + "".join(sections))
    print(f"wrote {output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
