"""Run time and ε_lb of the audits estimators on the known-answer settings.

Settings (α = 0.05, fixed seeds):
* white-box Gaussian: IN ~ N(μ, 1), OUT ~ N(0, 1), N = 10^4 per side, μ in {1, 2, 3}, δ = 1e-5;
  true ε = dpmech.gaussian_epsilon(δ, σ = 1, sensitivity = μ);
* halved σ: claimed (ε, δ = 1e-5) calibrated by dpmech, scores drawn with σ/2;
* one-run label randomized response (binary, through dpmech.randomized_response), m = 10^5 canaries, all guessed,
  δ in {0, 1e-5}.

Each cell is the median over ``--repetitions`` data sets; "calls/s" is estimator calls per second
and "scores/s" the scores processed per second.

A second table times the statistics at 10^6 scores per side (IN ~ N(1, 1), OUT ~ N(0, 1)) against
``np.sort`` of the same 2·10^6 pooled scores, the best of ``--repetitions`` runs each, in wall-clock and
in this thread's CPU time (target: MIA metrics and the one-run bound within 3× the sort). Run it with
``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1``.

A third table times ``epsilon_one_run`` alone at 10^4, 10^5 and 10^6 scores per side against ``np.sort`` of
the same pooled scores, the three calls interleaved round by round (its fixed cost shows at the smaller sizes).

With ``--soundness N`` a further table gives, over N repetitions, the rate at which the certified
estimators exceed the truth: ε_lb > 0 on null scores (IN and OUT both N(0, 1), 1000 per side; one run of
2000 canaries with scores independent of membership) and ε_lb > ε at the claimed ε (one-run f-DP on exact
ε = 2 randomized response, m = 1000). Every rate must stay at or below α up to Monte-Carlo error.

    PYTHONPATH=. python benchmarks/audit_statistics.py [--repetitions 5] [--speed-only] [--soundness 2000]
"""

from __future__ import annotations

import argparse
import math
import os
import time

import numpy as np
from rich.console import Console
from rich.table import Table

import dpmech
from audits import AuditScores, epsilon_from_gdp, epsilon_lower_bound, epsilon_one_run, mia_metrics
from audits.attacks import label_randomized_response_scores

ALPHA = 0.05
DELTA = 1e-5


def _timed(function, datasets):
    values, seconds = [], 0.0
    for data in datasets:
        start = time.perf_counter()
        values.append(function(data))
        seconds += time.perf_counter() - start
    return values, seconds / len(datasets)


def _gaussian_rows(repetitions, rng):
    estimators = {
        ("clopper-pearson", "bonferroni"): lambda s: epsilon_lower_bound(s, alpha=ALPHA, delta=DELTA),
        ("clopper-pearson", "bonferroni, two-sided"): lambda s: epsilon_lower_bound(s, alpha=ALPHA, delta=DELTA,
                                                                                     two_sided=True),
        ("clopper-pearson", "split"): lambda s: epsilon_lower_bound(s, alpha=ALPHA, delta=DELTA,
                                                                     threshold_strategy="split", rng=0),
        ("jeffreys", "bonferroni"): lambda s: epsilon_lower_bound(s, alpha=ALPHA, delta=DELTA, interval="jeffreys"),
        ("gdp", "bonferroni"): lambda s: epsilon_from_gdp(s, alpha=ALPHA, delta=DELTA),
        ("gdp", "split"): lambda s: epsilon_from_gdp(s, alpha=ALPHA, delta=DELTA, threshold_strategy="split", rng=0),
        ("gdp", "uncorrected"): lambda s: epsilon_from_gdp(s, alpha=ALPHA, delta=DELTA,
                                                           threshold_strategy="uncorrected"),
    }
    rows = []
    for mu in (1.0, 2.0, 3.0):
        datasets = [AuditScores(rng.normal(mu, 1, 10_000), rng.normal(0, 1, 10_000), trials="independent") for _ in range(repetitions)]
        true_epsilon = dpmech.gaussian_epsilon(DELTA, sigma=1.0, sensitivity=mu)
        for (method, strategy), estimator in estimators.items():
            results, seconds = _timed(estimator, datasets)
            eps = float(np.median([r.eps_lb for r in results]))
            mu_ratio = f"{np.median([r.mu_lb for r in results]) / mu:.3f}" if method == "gdp" else "-"
            rows.append((f"Gaussian μ={mu:g}, N=1e4/side", method, strategy, results[0].valid_as, eps, true_epsilon,
                         mu_ratio, seconds, 20_000 / seconds))
        _, seconds = _timed(mia_metrics, datasets)
        auc = float(np.median([mia_metrics(d).auc for d in datasets]))
        rows.append((f"Gaussian μ={mu:g}, N=1e4/side", "MIA metrics", f"AUC={auc:.3f}", "-", float("nan"),
                     true_epsilon, "-", seconds, 20_000 / seconds))
    return rows


def _halved_sigma_rows(repetitions, rng):
    rows = []
    for epsilon in (1.0, 2.0, 4.0):
        sigma = dpmech.calibrate_gaussian(epsilon, DELTA)
        datasets = [AuditScores(rng.normal(1.0, sigma / 2, 10_000), rng.normal(0.0, sigma / 2, 10_000),
                                trials="independent")
                    for _ in range(repetitions)]
        for method, estimator in (("clopper-pearson", lambda s: epsilon_lower_bound(s, alpha=ALPHA, delta=DELTA)),
                                  ("gdp", lambda s: epsilon_from_gdp(s, alpha=ALPHA, delta=DELTA))):
            results, seconds = _timed(estimator, datasets)
            eps = float(np.median([r.eps_lb for r in results]))
            detected = sum(r.eps_lb > epsilon for r in results)
            rows.append((f"σ/2, claimed ε={epsilon:g}", method, f"detected {detected}/{repetitions}",
                         results[0].valid_as, eps, epsilon, "-", seconds, 20_000 / seconds))
    return rows


def _randomized_response_rows(repetitions, rng):
    rows = []
    for epsilon in (0.25, 0.5, 1.0, 2.0, 3.0, 4.0):
        datasets = [label_randomized_response_scores(100_000, epsilon, 2, rng) for _ in range(repetitions)]
        for delta in (0.0, DELTA):
            results, seconds = _timed(
                lambda s: epsilon_one_run(s, alpha=ALPHA, delta=delta, threshold_strategy="explicit",
                                          guess_thresholds=[(-0.5, 0.5)]), datasets)
            eps = float(np.median([r.eps_lb for r in results]))
            rows.append((f"label RR ε={epsilon:g}, m=1e5, δ={delta:g}", "one-run", "explicit cuts ±0.5",
                         results[0].valid_as, eps, epsilon, "-", seconds, 100_000 / seconds))
    return rows


def _best_time(function, repetitions):
    """Best wall-clock and best thread CPU seconds over the repetitions.

    On a shared machine the CPU time of this (single-threaded) thread is the steadier measure: it does
    not count the time other processes hold the core.
    """
    best_wall = best_cpu = math.inf
    for _ in range(repetitions):
        wall, cpu = time.perf_counter(), time.thread_time()
        function()
        best_cpu = min(best_cpu, time.thread_time() - cpu)
        best_wall = min(best_wall, time.perf_counter() - wall)
    return best_wall, best_cpu


def _speed_table(repetitions, rng):
    size = 1_000_000
    scores = AuditScores(rng.normal(1, 1, size), rng.normal(0, 1, size), trials="independent")
    pooled = np.concatenate([scores.in_scores, scores.out_scores])
    sort_wall, sort_cpu = _best_time(lambda: np.sort(pooled), repetitions)
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    table = Table(title=f"cost at 10^6 scores per side against np.sort of 2·10^6 (best of {repetitions}; "
                        f"load average {load} on {os.cpu_count()} cores)")
    for column in ("statistic", "wall ms", "× np.sort", "CPU ms", "× np.sort (CPU)"):
        table.add_column(column, justify="left" if column == "statistic" else "right")
    table.add_row("np.sort (pooled)", f"{1e3 * sort_wall:.1f}", "1.00", f"{1e3 * sort_cpu:.1f}", "1.00")
    cases = {
        "mia_metrics (deterministic)": lambda: mia_metrics(scores),
        "mia_metrics (hull)": lambda: mia_metrics(scores, convention="hull"),
        "epsilon_one_run δ=0": lambda: epsilon_one_run(scores),
        "epsilon_one_run δ=1e-5": lambda: epsilon_one_run(scores, delta=DELTA),
        "epsilon_from_gdp": lambda: epsilon_from_gdp(scores, alpha=ALPHA, delta=DELTA),
        "epsilon_lower_bound": lambda: epsilon_lower_bound(scores, alpha=ALPHA, delta=DELTA),
    }
    for name, function in cases.items():
        wall, cpu = _best_time(function, repetitions)
        table.add_row(name, f"{1e3 * wall:.1f}", f"{wall / sort_wall:.2f}", f"{1e3 * cpu:.1f}", f"{cpu / sort_cpu:.2f}")
    return table


def _interleaved_best_cpu(functions, repetitions):
    """Best thread CPU seconds of each function over ``repetitions`` rounds, each round calling every function once.

    Interleaved, a burst of load on the shared machine slows one call of each function rather than a whole run of
    one of them, so the ratios between them are steadier than those of back-to-back runs."""
    best = [math.inf] * len(functions)
    for _ in range(repetitions):
        for index, function in enumerate(functions):
            start = time.thread_time()
            function()
            best[index] = min(best[index], time.thread_time() - start)
    return best


def _one_run_scaling_table(repetitions, rng):
    """epsilon_one_run at δ = 0 and 1e-5 against np.sort of the same pooled scores, at 10^4, 10^5 and 10^6 per side
    (the three timed in interleaved rounds)."""
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    table = Table(title=f"epsilon_one_run (δ = {DELTA:g}, two-sided, 10 guess counts) against np.sort of the same "
                        f"pooled scores; IN ~ N(1, 1), OUT ~ N(0, 1); thread CPU time, best of {repetitions} interleaved rounds "
                        f"(load average {load} on {os.cpu_count()} cores)")
    for column in ("scores per side", "np.sort ms", "one-run δ=0 ms", "× sort", "one-run δ=1e-5 ms", "× sort"):
        table.add_column(column, justify="right")
    for size in (10_000, 100_000, 1_000_000):
        scores = AuditScores(rng.normal(1, 1, size), rng.normal(0, 1, size), trials="independent")
        pooled = np.concatenate([scores.in_scores, scores.out_scores])
        sort_cpu, pure_cpu, delta_cpu = _interleaved_best_cpu(
            (lambda: np.sort(pooled), lambda: epsilon_one_run(scores), lambda: epsilon_one_run(scores, delta=DELTA)),
            repetitions)
        table.add_row(f"{size:,}", f"{1e3 * sort_cpu:.3f}", f"{1e3 * pure_cpu:.2f}", f"{pure_cpu / sort_cpu:.2f}",
                      f"{1e3 * delta_cpu:.2f}", f"{delta_cpu / sort_cpu:.2f}")
    return table


def _one_run_analysis_rows(repetitions, rng):
    rows = []
    for epsilon in (1.0, 4.0):
        datasets = [label_randomized_response_scores(10_000, epsilon, 2, rng) for _ in range(repetitions)]
        for analysis in ("steinke", "f-dp"):
            results, seconds = _timed(
                lambda s, analysis=analysis: epsilon_one_run(s, alpha=ALPHA, delta=DELTA, threshold_strategy="explicit",
                                                             guess_thresholds=[(-0.5, 0.5)], analysis=analysis),
                datasets)
            eps = float(np.median([r.eps_lb for r in results]))
            rows.append((f"label RR ε={epsilon:g}, m=1e4, δ={DELTA:g}", f"one-run {analysis}", "explicit cuts ±0.5",
                         results[0].valid_as, eps, epsilon, "-", seconds, 10_000 / seconds))
    return rows


def _soundness_table(repetitions, rng):
    null_two_sample = {
        "cp bonferroni, δ=1e-5": lambda s, seed: epsilon_lower_bound(s, alpha=ALPHA, delta=DELTA),
        "cp bonferroni, complement=False": lambda s, seed: epsilon_lower_bound(s, alpha=ALPHA, complement=False),
        "gdp bonferroni": lambda s, seed: epsilon_from_gdp(s, alpha=ALPHA, delta=DELTA),
        "gdp bonferroni, one direction": lambda s, seed: epsilon_from_gdp(s, alpha=ALPHA, two_sided=False),
        "gdp split": lambda s, seed: epsilon_from_gdp(s, alpha=ALPHA, threshold_strategy="split", rng=seed),
    }
    null_one_run = {
        "one-run steinke": {},
        "one-run f-dp": {"analysis": "f-dp"},
        "one-run f-dp, δ=1e-5": {"analysis": "f-dp", "delta": DELTA},
        "one-run hull rules, split": {"guessing": "one-sided", "guess_rules": "hull", "threshold_strategy": "split"},
    }
    table = Table(title=f"soundness: P[ε_lb > truth] over {repetitions} repetitions (α = {ALPHA})")
    for column in ("estimator", "setting", "rate", "allowed (α)"):
        table.add_column(column, justify="left" if column in ("estimator", "setting") else "right")
    for name, estimator in null_two_sample.items():
        hits = sum(estimator(AuditScores(rng.normal(size=1000), rng.normal(size=1000), trials="independent"),
                             seed).eps_lb > 0 for seed in range(repetitions))
        table.add_row(name, "null, 1000/side", f"{hits / repetitions:.4f}", f"{ALPHA}")
    for name, options in null_one_run.items():
        hits = 0
        for seed in range(repetitions):
            is_in, values = rng.random(2000) < 0.5, rng.normal(size=2000)
            extra = {"rng": seed} if options.get("threshold_strategy") == "split" else {}
            scores = AuditScores(values[is_in], values[~is_in], trials="independent")
            hits += epsilon_one_run(scores, alpha=ALPHA, **options, **extra).eps_lb > 0
        table.add_row(name, "null, m=2000", f"{hits / repetitions:.4f}", f"{ALPHA}")
    hits = sum(epsilon_one_run(label_randomized_response_scores(1000, 2.0, 2, rng), alpha=ALPHA, analysis="f-dp",
                               threshold_strategy="explicit", guess_thresholds=[(-0.5, 0.5)]).eps_lb > 2.0
               for _ in range(repetitions))
    table.add_row("one-run f-dp", "RR ε=2, m=1000, at the claim", f"{hits / repetitions:.4f}", f"{ALPHA}")
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--speed-only", action="store_true", help="only the cost tables (10^6 scores per side, and one-run at 10^4..10^6)")
    parser.add_argument("--soundness", type=int, default=0, metavar="N",
                        help="also the soundness table over N repetitions")
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    if args.soundness:
        Console(width=200).print(_soundness_table(args.soundness, rng))
    Console(width=200).print(_speed_table(args.repetitions, rng))
    Console(width=200).print(_one_run_scaling_table(args.repetitions, rng))
    if args.speed_only:
        return
    table = Table(title=f"audits estimators (α={ALPHA}, median of {args.repetitions} data sets, seed {args.seed})")
    for column in ("setting", "estimator", "strategy", "valid_as", "ε_lb", "true/claimed ε", "ε_lb/ε", "μ_lb/μ",
                   "ms/call", "calls/s", "scores/s"):
        table.add_column(column, justify="right" if column not in ("setting", "estimator", "strategy") else "left")
    for row in _gaussian_rows(args.repetitions, rng) + _halved_sigma_rows(args.repetitions, rng) + \
            _randomized_response_rows(args.repetitions, rng) + _one_run_analysis_rows(args.repetitions, rng):
        setting, method, strategy, valid_as, eps, truth, mu_ratio, seconds, per_second = row
        table.add_row(setting, method, strategy, valid_as, "-" if math.isnan(eps) else f"{eps:.3f}", f"{truth:.3f}",
                      "-" if math.isnan(eps) else f"{eps / truth:.3f}", mu_ratio, f"{1e3 * seconds:.2f}",
                      f"{1 / seconds:.0f}", f"{per_second:.3g}")
    Console(width=200).print(table)


if __name__ == "__main__":
    main()
