"""dpmech's black-box tester on the mechanisms of the DP-testing literature (dpmech.verify.examples).

Usage::

    python benchmarks/verification_literature.py [--budget 20] [--seeds 1] [--only NAME]

Per mechanism: the truth, the claim, dpmech's verdict (``find_violation``
with both event families, no hand-picked pair: StatDP's input patterns or
the example's candidate neighbours), its ε lower bound (confidence 0.95),
the samples per side of the last round, the wall time, and beside it the
published results of StatDP (Ding et al. CCS 2018) and DP-Sniper (Bichsel
et al. S&P 2021). Their numbers were not found in the reference material
available when this was written, so the columns print "not found" rather
than a guess. With ``--seeds 20`` each correct mechanism is run at 20
seeds and every false alarm counted. Timings on a shared machine are
provisional.
"""

from __future__ import annotations

import argparse
import sys
import time

from rich.console import Console
from rich.table import Table

from dpmech.verify.examples import all_examples
from dpmech.verify.tester import find_violation

# (StatDP, DP-Sniper) published results; None where not found in a source we could read.
PUBLISHED = {}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=20.0, help="seconds per mechanism and seed")
    parser.add_argument("--seeds", type=int, default=1, help="seeds per mechanism (20 for the false-alarm count)")
    parser.add_argument("--only", default=None, help="run the examples whose name contains this")
    args = parser.parse_args(argv)
    table = Table(title=f"dpmech.verify.find_violation, budget {args.budget:g} s, alpha 0.05, {args.seeds} seed(s)")
    for column in ("mechanism", "truth", "claim (eps, delta)", "verdicts", "max eps lower bound", "samples/side", "time/seed", "StatDP", "DP-Sniper"):
        table.add_column(column)
    wrong = 0
    for example in all_examples():
        if args.only and args.only not in example.name:
            continue
        rejections, best, samples, seconds = 0, 0.0, 0, 0.0
        for seed in range(args.seeds):
            start = time.perf_counter()
            report = find_violation(
                example.sampler, example.pairs, example.epsilon, example.delta, rng=seed, budget_seconds=args.budget, outputs=example.outputs,
                **example.options,
            )
            seconds += time.perf_counter() - start
            rejections += report.rejected
            best, samples = max(best, report.epsilon_lower_bound), max(samples, report.num_samples)
        expected = 0 if example.correct else args.seeds
        wrong += abs(rejections - expected)
        verdict = f"{rejections}/{args.seeds} rejected" + (" (false alarm)" if example.correct and rejections else "")
        statdp, sniper = PUBLISHED.get(example.name, ("not found", "not found"))
        table.add_row(
            example.name,
            ("correct: " if example.correct else "buggy: ") + example.truth,
            f"({example.epsilon:.4g}, {example.delta:g})",
            verdict,
            f"{best:.3f}",
            str(samples),
            f"{seconds / args.seeds:.1f} s",
            statdp,
            sniper,
        )
        Console(width=220).print(f"done: {example.name}", style="dim")
    Console(width=220).print(table)
    print(f"mechanisms with a wrong verdict (false alarms + missed violations), summed over seeds: {wrong}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
