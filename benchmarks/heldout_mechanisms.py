"""Held-out mechanisms for dpmech's black-box tester: bugs from the DP-testing literature and library bug reports.

Usage::

    python benchmarks/heldout_mechanisms.py [--seeds 3] [--budget 20] [--only NAME] [--jobs 1]

None of these is in :mod:`dpmech.verify.examples` (the mechanisms the tester
was tuned on): each is a sampler ``(dataset, size, rng) -> outputs``, its claim,
its true guarantee (derived in the comments beside it), and the candidate
neighbours a user would pass (:func:`dpmech.verify.statdp_pairs` for query
answers, :func:`dpmech.verify.record_neighbours` for datasets of records, a
hand pair for a scalar). The table runs :func:`dpmech.verify.find_violation`
at every seed on a CPU-seconds budget (``cpu_seconds_budget``, wall cap 10x)
and prints, per mechanism and seed, the verdict ("+" when it matches the
truth, "X" when not), the ε lower bound and the CPU seconds.

Eleven buggy mechanisms, five correct ones whose true ε (or δ(ε)) is exactly
the claim (a false alarm on them would be a tester bug).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from functools import partial

import numpy as np
from numpy.typing import NDArray

from dpmech.directed_rounding import format_down
from dpmech.calibration import calibrate_gaussian
from dpmech.gaussian import gaussian_delta
from dpmech.verify.budget_clock import cpu_seconds_budget
from dpmech.verify.examples import Example
from dpmech.verify.records import RecordBox, record_neighbours
from dpmech.verify.tester import find_violation, statdp_pairs

# The fixed-seed (no secrecy) subsample: records per dataset and the rate the amplification claim assumes.
SUBSAMPLE_RECORDS, SUBSAMPLE_RATE, SUBSAMPLE_BASE_EPSILON = 20, 0.1, 2.0
TOP_K_QUERIES, TOP_K = 10, 2
CATEGORIES = 4
# Gaussian with the classical sigma = sqrt(2 ln(1.25/delta))/eps (Dwork & Roth 2014, Thm A.1, proven for eps < 1).
CLASSICAL_EPSILON, CLASSICAL_DELTA = 10.0, 1e-5


def _laplace_count(count: int, size: int, rng: np.random.Generator, *, scale: float) -> NDArray[np.float64]:
    return count + rng.laplace(0.0, scale, size)


def _histogram(records: NDArray[np.int64], size: int, rng: np.random.Generator, *, scale: float) -> NDArray[np.float64]:
    counts = np.bincount(np.asarray(records, dtype=np.int64), minlength=5).astype(np.float64)
    return counts[None, :] + rng.laplace(0.0, scale, (size, counts.size))


def _winner_without_noise(queries: NDArray[np.float64], size: int, rng: np.random.Generator, *, scale: float) -> NDArray[np.float64]:
    """The index chosen on the exact scores; only the released value of the winner is noisy."""
    queries = np.asarray(queries, dtype=np.float64)
    index = int(np.argmax(queries))
    return np.stack([np.full(size, float(index)), queries[index] + rng.laplace(0.0, scale, size)], axis=1)


def _exponential_mechanism(utilities: NDArray[np.float64], size: int, rng: np.random.Generator, *, factor: float) -> NDArray[np.int64]:
    """P[i] ∝ exp(factor·u_i); McSherry & Talwar's factor is ε/(2Δ), the bug uses ε/Δ."""
    logits = factor * np.asarray(utilities, dtype=np.float64)
    probabilities = np.exp(logits - logits.max())
    return rng.choice(logits.size, size=size, p=probabilities / probabilities.sum())


def _one_shot_top_k(queries: NDArray[np.float64], size: int, rng: np.random.Generator, *, scale: float, k: int) -> NDArray[np.float64]:
    """Laplace(scale) on every query once; the k largest noisy values' indices and values, by decreasing value."""
    noisy = np.asarray(queries, dtype=np.float64)[None, :] + rng.laplace(0.0, scale, (size, len(queries)))
    order = np.argsort(-noisy, axis=1)[:, :k]
    return np.concatenate([order.astype(np.float64), np.take_along_axis(noisy, order, axis=1)], axis=1)


def _gaussian(centre: float, size: int, rng: np.random.Generator, *, sigma: float) -> NDArray[np.float64]:
    return centre + rng.normal(0.0, sigma, size)


def _prefix_subsample_sum(records: NDArray[np.float64], size: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """'Subsampling' that keeps the first q·n records every run (a head(), or a generator seeded by a constant)."""
    kept = records[: int(SUBSAMPLE_RATE * len(records))]
    return np.sum(kept) + rng.laplace(0.0, 1.0 / SUBSAMPLE_BASE_EPSILON, size)


def _randomized_response(label: int, size: int, rng: np.random.Generator, *, keep: float) -> NDArray[np.int64]:
    """Keep the label with probability ``keep``, else a uniform one of the other K − 1 categories."""
    others = (label + 1 + rng.integers(0, CATEGORIES - 1, size=size)) % CATEGORIES
    return np.where(rng.random(size) < keep, label, others)


def _discrete_laplace_sum(records: NDArray[np.int64], size: int, rng: np.random.Generator, *, scale: float) -> NDArray[np.int64]:
    """sum + Z with P[Z = z] ∝ exp(−|z|/scale): the difference of two geometrics on {1, 2, ...} with p = 1 − e^(−1/scale)."""
    success = -math.expm1(-1.0 / scale)
    return int(np.sum(records)) + rng.geometric(success, size) - rng.geometric(success, size)


def _clipped_after_noise(records: NDArray[np.float64], size: int, rng: np.random.Generator, *, epsilon: float) -> NDArray[np.float64]:
    """Mean of records meant to lie in [0, 1], noise for sensitivity 1/n, then the *release* clipped to [0, 1]."""
    records = np.asarray(records, dtype=np.float64)
    clipped: NDArray[np.float64] = np.clip(records.mean() + rng.laplace(0.0, 1.0 / (records.size * epsilon), size), 0.0, 1.0)
    return clipped


def _mean_with_exact_count(records: NDArray[np.float64], size: int, rng: np.random.Generator, *, epsilon: float) -> NDArray[np.float64]:
    """(noisy sum / n, n): the sum of records in [0, 1] with Laplace(1/ε), the count n released as it is."""
    records = np.asarray(records, dtype=np.float64)
    noisy_sum = records.sum() + rng.laplace(0.0, 1.0 / epsilon, size)
    return np.stack([noisy_sum / records.size, np.full(size, float(records.size))], axis=1)


def exponential_mechanism_pair_epsilon(epsilon: float, factor: float, pairs: list[tuple[str, NDArray[np.float64], NDArray[np.float64]]]) -> float:
    """The exact largest |ln P[i | u] − ln P[i | u']| of the exponential mechanism over ``pairs`` and outputs i."""
    worst = 0.0
    for _, first, second in pairs:
        logs = [factor * np.asarray(u) - np.logaddexp.reduce(factor * np.asarray(u)) for u in (first, second)]
        worst = max(worst, float(np.max(np.abs(logs[0] - logs[1]))))
    return worst


def heldout_examples() -> list[Example]:
    """The held-out table: eleven buggy mechanisms, then five correct near-tight ones."""
    queries5, queries10 = statdp_pairs(5), statdp_pairs(TOP_K_QUERIES)
    count_pair = [("add one record", 10, 11)]
    categories = np.arange(5)
    replace_categories = record_neighbours(categories, 10, "replace_one", rng=0)
    unit_add_remove = record_neighbours(RecordBox(0.0, 1.0), 10, "add_remove", rng=0)
    unit_replace = record_neighbours(RecordBox(0.0, 1.0), SUBSAMPLE_RECORDS, "replace_one", rng=0)
    wide_replace = record_neighbours(RecordBox(-10.0, 10.0), 10, "replace_one", rng=0)
    integer_add_remove = record_neighbours(np.array([1, 2, 3]), 10, "add_remove", rng=0)
    label_pairs = [(f"label {a} vs {b}", a, b) for a, b in ((0, 1), (0, 3), (2, 1))]
    gaussian_pair = [("shift by the sensitivity", 0.0, 1.0)]
    declared_gaussian = {"noise_family": "gaussian", "sensitivity": 1.0}
    classical_sigma = math.sqrt(2.0 * math.log(1.25 / CLASSICAL_DELTA)) / CLASSICAL_EPSILON
    amplified = math.log1p(SUBSAMPLE_RATE * math.expm1(SUBSAMPLE_BASE_EPSILON))
    em_pairs_epsilon = exponential_mechanism_pair_epsilon(1.0, 1.0, queries5)
    binary_keep = math.exp(1.0) / (1.0 + math.exp(1.0))
    return [
        # Laplace scale ε/Δ for Δ/ε (the inverse): at ε = 0.8 the scale is 0.8, so the count's loss is Δ/b = 1.25.
        Example("laplace count (scale eps/sens)", partial(_laplace_count, scale=0.8), 0.8, 0.0, False, "eps = 1/0.8 = 1.25", count_pair, "real"),
        # Replace-one moves two bins by 1 each (L1 shift 2); the noise is for add/remove's 1: ε_true = 2ε, attained.
        Example("histogram (add/remove scale, replace-one claim)", partial(_histogram, scale=1 / 0.5), 0.5, 0.0, False, "eps = 2 x 0.5 = 1", replace_categories, "vector"),
        # The argmax of the exact scores: the released index is a deterministic function of D (no finite ε).
        Example("noisy max (noise on the winner's value only)", partial(_winner_without_noise, scale=2 / 0.5), 0.5, 0.0, False, "not DP for any eps", queries5, "vector"),
        # exp(ε·u) for exp(ε·u/2): privacy loss ε(u_i − u'_i) + ln(Z'/Z) < 2ε, its supremum 2ε not attained; on StatDP's
        # patterns of 5 queries the largest loss is ln((1 + 4e²)/5) (one below rest above, output 0).
        Example("exponential mechanism (no factor 2)", partial(_exponential_mechanism, factor=1.0), 1.0, 0.0, False,
                f"sup eps = 2 (not attained); {em_pairs_epsilon:.4f} on StatDP's patterns", queries5),
        # One-shot top-k with Laplace(2k/ε) and the values: the released values' densities and the others' CDFs are each
        # (1/b)-Lipschitz in log, so the loss is at most n/b, attained on a set of positive probability (every
        # coordinate in the tail where its ratio is e^(1/b)): ε_true = n/b = nε/(2k).
        Example("one-shot top-k (laplace 2k/eps, indices and values)", partial(_one_shot_top_k, scale=2 * TOP_K / 0.5, k=TOP_K), 0.5, 0.0, False,
                f"eps = n/b = {TOP_K_QUERIES / (2 * TOP_K / 0.5):g}", queries10, "vector"),
        # sigma = sqrt(2 ln(1.25/δ))/ε at ε = 10: the analytic δ(10) is 2.27e-5 (Balle & Wang 2018, Thm 8), 2.3 times the claim.
        Example("gaussian (classical sigma at eps 10)", partial(_gaussian, sigma=classical_sigma), CLASSICAL_EPSILON, CLASSICAL_DELTA, False,
                f"delta(10) = {gaussian_delta(CLASSICAL_EPSILON, classical_sigma):.3g}", gaussian_pair, "real", declared_gaussian),
        # The first q·n records, the same every run: a record among them has the loss of Laplace(1/2) on a sum of [0, 1]
        # records, ε_true = 2, where the amplification claim is ln(1 + q(e² − 1)).
        Example("subsample (fixed subset, amplified claim)", _prefix_subsample_sum, amplified, 0.0, False, "eps = 2 (no amplification)", unit_replace, "real"),
        # Keep probability e^ε/(1 + e^ε) (binary RR) with K = 4: kept vs one other label: e^ε(K − 1), ε_true = ε + ln 3.
        Example("randomized response (binary keep prob, K=4)", partial(_randomized_response, keep=binary_keep), 1.0, 0.0, False,
                f"eps = 1 + ln 3 = {1 + math.log(3):.4f}", label_pairs),
        # Records in {1, 2, 3} under add/remove: the sum moves by up to 3; noise for the range width 2: ε_true = 1.5.
        Example("discrete laplace sum (sensitivity off by one)", partial(_discrete_laplace_sum, scale=2 / 1.0), 1.0, 0.0, False, "eps = 3/2 = 1.5", integer_add_remove),
        # Records in [−10, 10] unclipped: the mean moves by 20/n, noise for 1/n: ε_true = 20ε = 10 (no finite ε on R).
        Example("mean (clipped after noise)", partial(_clipped_after_noise, epsilon=0.5), 0.5, 0.0, False, "eps = 10 on [-10, 10] (no finite eps on R)", wide_replace, "real"),
        # Under add/remove the exact count differs deterministically: no finite ε.
        Example("mean (noisy sum, exact count)", partial(_mean_with_exact_count, epsilon=0.5), 0.5, 0.0, False, "not DP for any eps", unit_add_remove, "vector"),
        # Correct versions, true ε (or δ(ε)) exactly the claim.
        Example("laplace count (scale sens/eps)", partial(_laplace_count, scale=1 / 0.8), 0.8, 0.0, True, "eps = 0.8 (tight)", count_pair, "real"),
        Example("histogram (replace-one scale 2/eps)", partial(_histogram, scale=2 / 0.5), 0.5, 0.0, True, "eps = 0.5 (tight)", replace_categories, "vector"),
        Example("randomized response (K=4, e^eps/(e^eps+K-1))", partial(_randomized_response, keep=math.exp(1.0) / (math.exp(1.0) + CATEGORIES - 1)), 1.0, 0.0, True,
                "eps = 1 (tight)", label_pairs),
        Example("discrete laplace sum (sensitivity 3)", partial(_discrete_laplace_sum, scale=3 / 1.0), 1.0, 0.0, True, "eps = 1 (tight)", integer_add_remove),
        Example("gaussian (analytic sigma at eps 10)", partial(_gaussian, sigma=calibrate_gaussian(CLASSICAL_EPSILON, CLASSICAL_DELTA)), CLASSICAL_EPSILON, CLASSICAL_DELTA, True,
                "delta(10) = 1e-5 (tight)", gaussian_pair, "real", declared_gaussian),
    ]


def run_seed(example: Example, seed: int, budget: float) -> tuple[bool, float, float, str]:
    """find_violation on ``example`` at ``seed`` on a CPU-seconds budget: (rejected, ε lower bound, CPU s, pair and family)."""
    cpu_start = time.process_time()
    with cpu_seconds_budget(10.0):
        report = find_violation(example.sampler, example.pairs, example.epsilon, example.delta, rng=seed, budget_seconds=budget,
                                outputs=example.outputs, **example.options)
    return report.rejected, report.epsilon_lower_bound, time.process_time() - cpu_start, f"{report.pair}, {report.family}"


def main(argv: list[str] | None = None) -> int:
    return run_table(heldout_examples(), __doc__.splitlines()[0], argv)


def run_table(table: list[Example], description: str, argv: list[str] | None = None) -> int:
    """The command line of a held-out table: each mechanism at each seed, one line each, and the wrong verdicts."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=20.0, help="CPU seconds per mechanism and seed (20)")
    parser.add_argument("--only", default=None, help="run the mechanisms whose name contains this")
    parser.add_argument("--jobs", type=int, default=1, help="joblib processes (1; the machine is shared)")
    args = parser.parse_args(argv)
    examples = [example for example in table if not args.only or args.only in example.name]
    from joblib import Parallel, delayed

    tasks = [(example, seed) for example in examples for seed in range(args.seeds)]
    outcomes = Parallel(n_jobs=args.jobs, return_as="generator")(delayed(run_seed)(example, seed, args.budget) for example, seed in tasks)
    wrong = 0
    for example, seed in tasks:
        rejected, bound, cpu, where = next(outcomes)
        wrong += rejected == example.correct
        print(f"{example.name} | {'correct' if example.correct else 'buggy'}: {example.truth} | claim ({example.epsilon:.4g}, {example.delta:g}) | seed {seed}: "
              f"{'+' if rejected != example.correct else 'X'} rejected {rejected} | eps_lb {format_down(bound, 4)} | CPU {cpu:.1f} s | {where} | "
              f"load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"wrong verdicts (false alarms + misses): {wrong} of {len(tasks)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
