"""dpmech's black-box tester on the mechanisms of the DP-testing literature (dpmech.verify.examples).

Usage::

    python benchmarks/verification_literature.py [--budget 20] [--seeds 1] [--only NAME]
    python benchmarks/verification_literature.py --false-alarms [--seeds 20] [--budget 2]
    python benchmarks/verification_literature.py --dpsniper [--budget 20] [--seeds 3]
    python benchmarks/verification_literature.py --per-seed [--seeds 20] [--budget 20] [--correct-budget 2] [--jobs 1] [--without NAME]
    ... [--clock cpu|wall] [--wall-cap-factor 10]

Default mode, per mechanism: the truth, the claim, dpmech's verdict
(``find_violation`` with its default event families plus what the
example declares: float bits, the noise family; no hand-picked pair:
StatDP's input patterns or the example's candidate neighbours), its ε lower
bound (confidence 0.95), the samples per side of the last round and the
wall time. ``--false-alarms`` runs every correct mechanism at ``--seeds``
seeds and counts rejections. ``--dpsniper`` runs the sparse-vector and
noisy-max mechanisms at DP-Sniper's settings (its
dpsniper/experiments/exp_default.py: ε = 0.1; SVT with c = 1 on 10
queries, T = 0.5 for Alg. 1 and T = 1 for the others; noisy max on 5
queries, scale 2/ε) in audit mode (the whole budget, the largest ε lower
bound, its final stage on fresh samples of its finalist events) at
``--seeds`` seeds (3 by default: a ratio must be stable, not lucky), with
the verdict on the claim ε = 0.1 itself (DP-Sniper's setting), beside the ε
lower bounds published with DP-Sniper and StatDP. ``--per-seed`` runs the
whole table (issue 31's target: no false alarm and every violation found, over
20 seeds) at seeds 0..``--seeds``−1, the (mechanism, seed) runs spread over
``--jobs`` joblib processes (1 by default: the machine is shared), and prints
each mechanism's verdict at every seed ("+" when it matches the truth, "X"
when not: a false alarm or a missed violation), its largest ε lower bound and
its CPU and wall time per seed. A buggy mechanism gets ``--budget`` (stopping at
its first rejection), a correct one ``--correct-budget``: a false alarm's
probability is at most α at any budget, and the correct mechanisms would
otherwise take most of the time. In every mode the budgets are CPU seconds of
the run's process (``--clock cpu``, the default:
:func:`dpmech.verify.budget_clock.cpu_seconds_budget`), so a run gets as many
samples on a loaded machine as on an idle one, and ends within
``--wall-cap-factor`` (10) times its budget in wall seconds however little CPU
it gets; ``--clock wall`` gives find_violation's own wall-clock budgets, on
which a loaded machine starves the runs (2026-11-26, 20 s wall budgets at
load 9–40: the missed runs got 2.7–4.2 s of CPU).

Every ε lower bound is printed rounded down to 4 significant digits, and every
ratio to a published bound to 3 (a bound shown never claims more than was shown).

Published numbers, beside each mechanism: the ``eps_lcb`` of the
reference results shipped with DP-Sniper (Bichsel, Steffen, Bogunovic &
Vechev, S&P 2021; github.com/eth-sri/dp-sniper,
eval_sp2021/reference-results/dd_search_reg_data.log, logistic
regression) and of StatDP (Ding et al. CCS 2018) as run by the same
authors (statdp_1_data.log), all at a claimed ε = 0.1. Mechanisms they did
not evaluate print "not evaluated". Timings on a shared machine are
provisional.

SVT Alg. 3 at this table's claim (noisy values; ε = 0.5, c = 2, 10 queries) is the
smallest violation here: on half half (1^10 vs 2^5 0^5) the exact likelihood ratio
(numerical integration over the threshold noise, 4·10⁵ outputs per side) has its
largest privacy loss at 0.875, and its best events {loss > t} have p = 0.0245, q =
0.0129 (ln(p/q) = 0.64) at t = 0.5. Until issue 14's last change the search often
spent its final stage on a weaker pair (five 20 s seeds: 0.149–0.604, refuted at
one). Since the pairs race on growing refit samples before the final stage and the
logistic regression's features are filled column-major (its final stage counted
1.6–6.8·10⁶ outputs per side in 20 s at four seeds, where it had counted
0.29–0.50·10⁶ at three of the same four seeds before), seven 20 s runs on the
states of that change (seeds 0–3, then 0–2) all refuted the claim, with ε lower
bounds 0.516–0.729, and this table's run refutes it (2026-11-26).
On 2026-11-26 the per-seed table (20 s wall budgets at load 9–40) missed it at 18 of 20
seeds, and noisy max (Laplace, index and value) at 18 (the missed runs got 2.7–4.2 s of
CPU); on a quiet machine it was still missed at seed 0 of 4 (19 s of CPU). Hence the CPU
budgets above, and a traced miss (seed 0, 19.8 s of CPU, 2026-11-27): the race's last pools
held 1.5·10⁵ outputs per side, and the final stage counted one pair's four events on 2.6·10⁶
outputs per side, three of them one set under three names ("#(x[j] == -1) <= 5 and sum x <=
-6.15", "#(x[j] == 0) > 2 and sum x <= -6.15", "first j with x[j] == -1 > 4 and sum x <=
-6.15", all below, 3993 against 2228 hits each: ln(p/q) ≈ 0.59): bound 0.458. The counts
were not what it lacked: "#(x[j] == 0) > 8 and first x[j] not a code <= 3.86" on all above
(a single late answer with a low value: 4159 against 1603 hits in 3.0·10⁶ outputs per side at
another seed, ln(p/q) ≈ 0.95 at p ≈ 1.4·10⁻³) would show ln(p/q) > 0.5 on 3·10⁵ outputs per
side (normal approximation). Since a quadrant refit names each set once (the same hits on both
halves and sides), the runners-up counted beside the best are other sets, often that late low
answer: ``--per-seed --seeds 20 --budget 20 --only svt3 --wall-cap-factor 40`` refuted the
claim at all 20 seeds (2026-11-27; ε lower bounds 0.6083–0.9771, 19.0 s of CPU per seed, at
most 19.8; load 9–16, run with --jobs 2: a CPU budget does not depend on the other job).
On the same CPU budgets (wall cap 40×, load 3–16, 2026-11-27): Gaussian σ×0.9 refuted at
20 of 20 seeds (1.006–1.072, 13.4 s of CPU per seed), noisy max (Laplace, index and value) at
20 of 20 (0.5082–1.24, 14.7 s), subsampled Laplace (claim qε) at 20 of 20 (0.3699–0.4224,
18.2 s); seeds 0–4 of every other mechanism up to Gaussian σ×1 (svt4–6, the
other noisy max, histograms, sums, clipping, randomized response) all right; and
``--false-alarms --seeds 20`` (2 s budgets): 0 false alarms over the 14 correct mechanisms.

At ε = 0.1 (``--dpsniper``) the gaps between StatDP's patterns are a few hundredths
in ln(p/q) at p ≈ 0.02 (Alg. 1, half half: the first ⊤ at query 6 has ln(p/q) =
0.089, at query 7 0.071; Alg. 4: 0.1725 on half half against 0.1065 on one above rest
below), which only millions of refit outputs per pair tell apart; hence the race.
SVT Alg. 3 at ε = 0.1: its events join the position of the answer and its value (a
late answer with a low value), which a logistic score weighs with one coefficient each
and no half-line on one statistic isolates. The race refits numeric vector outputs
with quadrant events on two summary statistics (:mod:`dpmech.verify.quadrants`: the
number of "halted" codes or ⊥ answers, beside the first entry that is no code, i.e. the
released answer). Their quality depends on the pool: chosen alone on 5·10⁵, 10⁶ and
2·10⁶ outputs per side (all above and x shape, 8 seeds each), the chosen event's exact
bound at N = 8·10⁶ (normal approximation, the final stage's z for 4 events) was, over
DP-Sniper's 0.1716, median 0.87, 0.97 and 0.99, worst 0.31, 0.79 and 0.83. Since the
race's quadrant refits tally joint histograms round by round (a round costs its fresh
outputs, 0.9 µs each with drawing, not the whole pool) and leave out coordinates that
are mostly codes (SVT's x[j]: their values are the released answer's), the last pairs'
pools reach 3.5–5.9·10⁵ per side (two traced seeds; at most 3·10⁵ before): over seeds 0–8 the ratio was 0.836–1.254, median 1.017
(2026-11-26; the best finalist's exact bound: median 1.06, worst 0.80). Before
(quadrants refitted on the whole pool, pools 2·10⁴–3·10⁵): 0.504–1.006 over 15 seeds,
median 0.845; before quadrants 0.32–1.02.
Tried and dropped: race and classifier shares 0.4 and 0.2 instead of 0.3 and 0.25
(median 0.86 over seeds 0–5, on the earlier refits). In that run one seed's bound, 0.2401
on all below (ratio 1.40), exceeds the expected bound of the best events below (0.216):
counted on 2·10⁷ fresh outputs per side its event ("#(x[j] == 0) > 5 and first x[j] not
a code <= 6.07") has ln(p/q) = 0.275 at p = 8.4·10⁻⁴, so the bound holds; it was a lucky
count, not a wrong one.
A level-set refit on outputs quantised around their point
masses (16 bins per continuous coordinate) reached ln(p/q) = 0.149 on 2·10⁶ fresh
outputs when fitted alone on 10⁶ outputs per side, but in the search it gave 0.0, 0.073
and 0.125 at seeds 0–2 against 0.111, 0.133 and 0.125 without it (the 0.0 partly a
fault fixed since: an entry whose refit found nothing kept its round-1 score), and
was dropped.

How far SVT Alg. 3 at ε = 0.1 could go: its exact likelihood ratio (numerical
integration over the threshold noise) gives, with the best event of each pair and
normal-approximation bounds (z = 2.5) on 5·10⁶ outputs per side, 0.218 (all above), 0.216
(all below), 0.206 (half half), 0.204 (x shape), 0.128 and 0.119 (one below rest above,
one above rest below), 0.046 (one above, one below); those events are rare (p =
0.0006–0.002: a late first answer with a value below the queries'), and near them the
ratios differ by 0.05 per answer position, so a classifier for them needs millions of
training outputs per side. Tried and dropped (2026-11-26): a Fisher
linear discriminant on the features plus 6 hinge columns max(0, x − κ) per continuous
coordinate (one piecewise-linear function per coordinate, the form of this mechanism's
log-likelihood ratio), which trains in one pass: with the best of its thresholds picked on
4·10⁶ fresh outputs (an oracle) it reached 0.141–0.153 trained on 5·10⁵ outputs per side
and 0.151–0.174 on 2·10⁶ (pairs all above and half half, two seeds); as the race's refit
for vector outputs in the search (pools of 7·10⁴–4·10⁵) it gave 0.159, 0.051, 0.0, 0.116,
0.106, 0.104 at seeds 0–5 (median 0.62 of DP-Sniper's bound, against 0.75 without it in
the same session): the race could not give any pair enough outputs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time

from rich.console import Console
from rich.table import Table

from dpmech.directed_rounding import format_down
from dpmech.verify.budget_clock import cpu_seconds_budget
from dpmech.verify.examples import all_examples, noisy_max_examples, sparse_vector_examples
from dpmech.verify.tester import find_violation

# example name -> (StatDP eps_lcb, DP-Sniper eps_lcb), both at a claimed eps = 0.1 (SVT: c = 1, 10 queries, T = 0.5 for Alg. 1,
# T = 1 for the others; noisy max: 5 queries), as dpsniper/experiments/exp_default.py runs them.
PUBLISHED = {
    "svt1 (Lyu Alg. 1)": (0.0298, 0.0858),
    "svt2 (Dwork-Roth)": (0.0316, 0.0859),
    "svt3 (Roth, noisy values)": (0.0231, 0.1716),
    "svt4 (Lee-Clifton)": (0.1709, 0.1687),
    "svt5 (Stoddard, no query noise)": (14.31, 1.7612),
    "svt6 (Chen, no halt)": (0.3220, 0.2720),
    "noisy max (laplace, index)": (0.0920, 0.0923),
    "noisy max (exponential, index)": (0.0996, 0.0975),
    "noisy max (laplace, value)": (0.1991, 0.2478),
    "noisy max (exponential, value)": (0.1960, 0.3463),
    "noisy histogram (scale 1/eps)": (0.0828, 0.0978),
    "noisy histogram (scale eps)": (9.717, 4.602),
}
PUBLISHED_EPSILON = 0.1


def published(name):
    if name not in PUBLISHED:
        return "not evaluated", "not evaluated"
    statdp, sniper = PUBLISHED[name]
    return f"{statdp:g} @ eps {PUBLISHED_EPSILON:g}", f"{sniper:g} @ eps {PUBLISHED_EPSILON:g}"


def run(example, seed, budget, wall_cap_factor, **options):
    """find_violation on ``example`` at ``seed``; the budget in CPU seconds capped by wall / ``wall_cap_factor``
    (:func:`dpmech.verify.budget_clock.cpu_seconds_budget`), or in wall seconds when ``wall_cap_factor`` is None."""
    start = time.perf_counter()
    with contextlib.nullcontext() if wall_cap_factor is None else cpu_seconds_budget(wall_cap_factor):
        report = find_violation(
            example.sampler, example.pairs, example.epsilon, example.delta, rng=seed, budget_seconds=budget, outputs=example.outputs,
            **example.options, **options,
        )
    return report, time.perf_counter() - start


def _seconds(wall_cap_factor):
    """The budgets' unit in a table's title."""
    return "wall s" if wall_cap_factor is None else f"CPU s (wall cap {wall_cap_factor:g}x)"


def literature_table(examples, seeds, budget, wall_cap_factor):
    table = Table(title=f"dpmech.verify.find_violation, budget {budget:g} {_seconds(wall_cap_factor)}, alpha 0.05, {seeds} seed(s)")
    for column in ("mechanism", "truth", "claim (eps, delta)", "verdicts", "max eps lower bound", "samples/side (rounds, final)", "time/seed", "StatDP", "DP-Sniper"):
        table.add_column(column)
    wrong = 0
    for example in examples:
        rejections, best, samples, final, seconds = 0, 0.0, 0, 0, 0.0
        for seed in range(seeds):
            report, elapsed = run(example, seed, budget, wall_cap_factor)
            seconds += elapsed
            rejections += report.rejected
            best, samples = max(best, report.epsilon_lower_bound), max(samples, report.num_samples)
            final = max(final, report.final_samples)
        wrong += abs(rejections - (0 if example.correct else seeds))
        verdict = f"{rejections}/{seeds} rejected" + (" (false alarm)" if example.correct and rejections else "")
        table.add_row(
            example.name, ("correct: " if example.correct else "buggy: ") + example.truth, f"({example.epsilon:.4g}, {example.delta:g})",
            verdict, format_down(best, 4), f"{samples}, {final}", f"{seconds / seeds:.1f} s", *published(example.name),
        )
        Console(width=230).print(f"done: {example.name}", style="dim")
    Console(width=230).print(table)
    print(f"mechanisms with a wrong verdict (false alarms + missed violations), summed over seeds: {wrong}")


def false_alarm_table(examples, seeds, budget, wall_cap_factor):
    table = Table(title=f"false alarms: correct mechanisms, {seeds} seeds each, budget {budget:g} {_seconds(wall_cap_factor)}, alpha 0.05")
    for column in ("mechanism", "claim (eps, delta)", "false alarms", "max eps lower bound", "largest samples/side (rounds, final)", "time/seed"):
        table.add_column(column)
    total = 0
    for example in examples:
        if not example.correct:
            continue
        alarms, best, samples, final, seconds = 0, 0.0, 0, 0, 0.0
        for seed in range(seeds):
            report, elapsed = run(example, seed, budget, wall_cap_factor)
            alarms += report.rejected
            best, samples, seconds = max(best, report.epsilon_lower_bound), max(samples, report.num_samples), seconds + elapsed
            final = max(final, report.final_samples)
        total += alarms
        cells = (example.name, f"({example.epsilon:.4g}, {example.delta:g})", f"{alarms}/{seeds}", format_down(best, 4), f"{samples}, {final}", f"{seconds / seeds:.1f} s")
        table.add_row(*cells)
        # Each mechanism's row as it is done: a run cut short still shows the mechanisms it finished.
        print("done: " + " | ".join(cells) + f" | load {os.getloadavg()[0]:.1f}", flush=True)
    Console(width=200).print(table)
    print(f"false alarms over all correct mechanisms and seeds: {total}")


def _seed_run(example, seed, budget, wall_cap_factor):
    """One (mechanism, seed) run in a joblib worker: (rejected, ε lower bound, CPU seconds, wall seconds)."""
    cpu_start = time.process_time()
    report, wall = run(example, seed, budget, wall_cap_factor)
    return report.rejected, report.epsilon_lower_bound, time.process_time() - cpu_start, wall


def per_seed_table(examples, seeds, budget, correct_budget, jobs, wall_cap_factor):
    from joblib import Parallel, delayed

    tasks = [(example, seed) for example in examples for seed in range(seeds)]
    # Results stream back in order: each mechanism's line is printed once its seeds are done, so a run cut short
    # still shows the mechanisms it finished.
    outcomes = Parallel(n_jobs=jobs, return_as="generator")(
        delayed(_seed_run)(example, seed, correct_budget if example.correct else budget, wall_cap_factor) for example, seed in tasks)
    table = Table(title=f"dpmech.verify.find_violation over seeds 0-{seeds - 1}: buggy mechanisms {budget:g} {_seconds(wall_cap_factor)} (to the first rejection), "
                        f"correct ones {correct_budget:g}, alpha 0.05, {jobs} job(s); '+' verdict matches the truth, 'X' does not")
    for column in ("mechanism", "truth", "claim (eps, delta)", "verdict per seed", "wrong", "max eps lower bound", "CPU s/seed (max)", "wall s/seed (max)"):
        table.add_column(column)
    false_alarms = missed = 0
    cpu_total = 0.0
    for example in examples:
        rows = []
        for seed in range(seeds):
            rows.append(next(outcomes))
            # A line per seed as it comes back: a run cut short still shows every seed it finished.
            rejected, bound, cpu, wall = rows[-1]
            print(f"seed {seed}: {example.name}: {'+' if rejected != example.correct else 'X'} rejected {rejected}, eps lower bound "
                  f"{format_down(bound, 4)}, CPU {cpu:.1f} s, wall {wall:.1f} s, load {os.getloadavg()[0]:.1f}", flush=True)
        matches = [rejected != example.correct for rejected, _, _, _ in rows]
        wrong = matches.count(False)
        false_alarms += wrong if example.correct else 0
        missed += 0 if example.correct else wrong
        cpu = [row[2] for row in rows]
        wall = [row[3] for row in rows]
        cpu_total += sum(cpu)
        cells = (
            example.name, ("correct: " if example.correct else "buggy: ") + example.truth, f"({example.epsilon:.4g}, {example.delta:g})",
            "".join("+" if match else "X" for match in matches), f"{wrong}/{seeds}" + (" (false alarm)" if example.correct and wrong else " (missed)" if wrong else ""),
            format_down(max(row[1] for row in rows), 4), f"{sum(cpu) / seeds:.1f} ({max(cpu):.1f})", f"{sum(wall) / seeds:.1f} ({max(wall):.1f})",
        )
        table.add_row(*cells)
        print("done: " + " | ".join(cells) + f" | load {os.getloadavg()[0]:.1f}", flush=True)
    Console(width=230).print(table)
    print(f"false alarms: {false_alarms}; missed violations: {missed}; over {len(examples)} mechanisms x {seeds} seeds; "
          f"CPU time of the runs {cpu_total:.0f} s; load average {os.getloadavg()[0]:.2f}")


def dpsniper_table(budget, seeds, wall_cap_factor, only=None):
    examples = (sparse_vector_examples(PUBLISHED_EPSILON, cutoff=1, num_queries=10, threshold=0.5)[:1]
                + sparse_vector_examples(PUBLISHED_EPSILON, cutoff=1, num_queries=10)[1:] + noisy_max_examples(PUBLISHED_EPSILON))
    examples = [example for example in examples if not only or only in example.name]
    table = Table(title=f"audit mode at DP-Sniper's settings (claimed eps {PUBLISHED_EPSILON:g}), budget {budget:g} {_seconds(wall_cap_factor)}, alpha 0.05, seeds 0-{seeds - 1}")
    for column in ("mechanism", "truth", f"verdicts at claim {PUBLISHED_EPSILON:g}", "dpmech eps lower bound (per seed)", "rounds' bound (max)",
                   "final samples/side (min-max), finalists", "time (max)", "pair, family (best seed)", "DP-Sniper eps_lcb", "dpmech / DP-Sniper (min, median, max)",
                   "StatDP eps_lcb"):
        table.add_column(column)
    for example in examples:
        reports, times = [], []
        for seed in range(seeds):
            report, elapsed = run(example, seed, budget, wall_cap_factor, stop_at_rejection=False)
            reports.append(report)
            times.append(elapsed)
        statdp, sniper = PUBLISHED.get(example.name, (None, None))
        bounds = sorted(report.epsilon_lower_bound for report in reports)
        ratios = ", ".join(format_down(value / sniper, 3) for value in (bounds[0], bounds[len(bounds) // 2], bounds[-1])) if sniper else "not evaluated"
        best = max(reports, key=lambda report: report.epsilon_lower_bound)
        rejections = sum(report.rejected for report in reports)
        verdict = f"{rejections}/{seeds} rejected" + (" (false alarm)" if example.correct and rejections else "" if example.correct or rejections == seeds else " (missed)")
        table.add_row(
            example.name, ("correct: " if example.correct else "buggy: ") + example.truth, verdict,
            ", ".join(format_down(report.epsilon_lower_bound, 4) for report in reports),
            format_down(max(report.search_epsilon_lower_bound for report in reports), 4),
            f"{min(report.final_samples for report in reports)}-{max(report.final_samples for report in reports)}, "
            f"{'/'.join(str(report.final_finalists) for report in reports)}",
            f"{max(times):.1f} s", f"{best.pair}, {best.family}", f"{sniper:g}" if sniper else "not evaluated", ratios,
            f"{statdp:g}" if statdp else "not evaluated",
        )
        Console(width=250).print(f"done: {example.name}", style="dim")
    Console(width=250).print(table)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=None, help="seconds per mechanism and seed (20; 2 with --false-alarms)")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per mechanism (1; 20 with --false-alarms; 3 with --dpsniper)")
    parser.add_argument("--only", default=None, help="run the examples whose name contains this")
    parser.add_argument("--without", default=None, help="leave out the examples whose name contains this, or that declare it as an option")
    parser.add_argument("--correct-budget", type=float, default=2.0, help="with --per-seed: seconds per correct mechanism and seed (2)")
    parser.add_argument("--jobs", type=int, default=1, help="with --per-seed: joblib processes (1; the machine is shared)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="what the budgets count: cpu (the run's CPU seconds, capped by its wall seconds / --wall-cap-factor; the default) or wall seconds")
    parser.add_argument("--wall-cap-factor", type=float, default=10.0, help="with --clock cpu: a run ends within about this many times its budget in wall seconds (10)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--false-alarms", action="store_true", help="correct mechanisms only, counting rejections over seeds")
    mode.add_argument("--dpsniper", action="store_true", help="SVT and noisy max at DP-Sniper's settings, audit mode")
    mode.add_argument("--per-seed", action="store_true", help="every mechanism at every seed, joblib over (mechanism, seed)")
    args = parser.parse_args(argv)
    if not args.wall_cap_factor >= 1.0 or args.wall_cap_factor == float("inf"):
        parser.error(f"--wall-cap-factor must be a finite number >= 1 (got {args.wall_cap_factor:g})")
    examples = [example for example in all_examples() if (not args.only or args.only in example.name)
                and (not args.without or (args.without not in example.name and args.without not in example.options))]
    wall_cap_factor = args.wall_cap_factor if args.clock == "cpu" else None
    if args.per_seed:
        per_seed_table(examples, args.seeds or 20, args.budget or 20.0, args.correct_budget, args.jobs, wall_cap_factor)
    elif args.dpsniper:
        dpsniper_table(args.budget or 20.0, args.seeds or 3, wall_cap_factor, args.only)
    elif args.false_alarms:
        false_alarm_table(examples, args.seeds or 20, args.budget or 2.0, wall_cap_factor)
    else:
        literature_table(examples, args.seeds or 1, args.budget or 20.0, wall_cap_factor)
    return 0


if __name__ == "__main__":
    sys.exit(main())
