"""The golden cases: every ``dpmech`` command and every benchmark script, at options that run in seconds.

A benchmark left out, and why, is listed in ``tests/golden/test_golden.py``'s docstring.
"""

from __future__ import annotations

import pathlib

import numpy as np

from tests.golden import COMMAND_AND_MACHINE, ELAPSED, LOAD, PLATFORM, RATES, SECONDS, SPEED_RATIOS, TABLE_PADDING, VERSIONS, Case, Columns, Mask


def _scores(directory: pathlib.Path) -> None:
    """Members' scores N(1, 1) and non-members' N(0, 1), 500 each, seed 0: an attack that clearly works."""
    rng = np.random.default_rng(0)
    np.save(directory / "in.npy", rng.normal(1.0, 1.0, 500))
    np.save(directory / "out.npy", rng.normal(0.0, 1.0, 500))


def _help(command: str, slow: bool) -> Case:
    return Case(f"help-{command.replace(' ', '-')}", (*command.split(), "--help"), slow=slow)


# A tester budget (seconds) that its first test always overruns: no later test or final stage starts, so the printed
# samples and bounds are the first test's on any machine, whatever its speed and load.
TINY_BUDGET = "1e-6"

CLI = [
    # the default set: the scalar Gaussian commands, each as a table, as JSON and as an error exit
    Case("version", ("--version",)),
    Case("help", ("--help",)),
    _help("calibrate", slow=False),
    _help("epsilon", slow=False),
    _help("delta", slow=False),
    Case("calibrate-table", ("calibrate", "--epsilon", "1", "--delta", "1e-5", "--sensitivity", "2",
                             "--compositions", "3")),
    Case("calibrate-json", ("calibrate", "--epsilon", "0.3", "--delta", "1e-5", "--method", "classic",
                            "--compositions", "7", "--json")),
    Case("calibrate-bad-delta", ("calibrate", "--epsilon", "1", "--delta", "1.5"), stderr=True),
    Case("calibrate-missing-epsilon", ("calibrate", "--delta", "1e-5"), stderr=True),
    Case("epsilon-table", ("epsilon", "--sigma", "1", "--delta", "1e-5")),
    Case("epsilon-json", ("epsilon", "--sigma", "2", "--delta", "1e-6", "--sensitivity", "2", "--compositions", "10",
                          "--json")),
    Case("epsilon-bad-sigma", ("epsilon", "--sigma", "0", "--delta", "1e-5"), stderr=True),
    Case("delta-table", ("delta", "--sigma", "1", "--epsilon", "1")),
    Case("delta-json", ("delta", "--sigma", "0.5", "--epsilon", "3", "--compositions", "4", "--json")),
    Case("delta-bad-compositions", ("delta", "--sigma", "1", "--epsilon", "1", "--compositions", "1.5"), stderr=True),
    _help("dpsgd", slow=False),
    _help("dpsgd epsilon", slow=False),
    _help("dpsgd calibrate", slow=False),
    _help("verify", slow=False),
    _help("audit", slow=False),
    _help("run", slow=False),
    # the PLD engine's import and one accounting: 0.7 to 1.1 s of CPU alone, a fifth of the default set's budget
    Case("dpsgd-epsilon-table", ("dpsgd", "epsilon", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps",
                                 "1000", "--delta", "1e-5"), slow=True),
    Case("dpsgd-bad-steps", ("dpsgd", "epsilon", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "0",
                             "--delta", "1e-5"), stderr=True),
    # the slow set: commands whose interpreter loads the PLD engine, Hypothesis, scikit-learn or torch
    *(_help(f"audit {name}", slow=True) for name in ("gaussian-output", "randomized-response", "scores", "fedauxfdp",
                                                     "dphelmet", "fedmd-nfdp", "fedgm", "fedzda")),
    Case("dpsgd-epsilon-json", ("dpsgd", "epsilon", "--noise-multiplier", "1.1", "--batch-size", "256",
                                "--dataset-size", "60000", "--epochs", "2", "--delta", "1e-5", "--json"), slow=True),
    Case("dpsgd-epsilon-random-allocation", ("dpsgd", "epsilon", "--noise-multiplier", "2", "--batch-size", "10",
                                             "--dataset-size", "1000", "--epochs", "1", "--delta", "1e-5",
                                             "--sampling", "random-allocation"), slow=True, stderr=True),
    Case("dpsgd-epsilon-shuffle", ("dpsgd", "epsilon", "--noise-multiplier", "1", "--sampling-rate", "0.01",
                                   "--steps", "100", "--delta", "1e-5", "--sampling", "shuffle"),
         slow=True, stderr=True),
    Case("dpsgd-calibrate-table", ("dpsgd", "calibrate", "--epsilon", "1", "--sampling-rate", "0.01", "--steps",
                                   "1000", "--delta", "1e-5"), slow=True),
    Case("dpsgd-calibrate-json", ("dpsgd", "calibrate", "--epsilon", "3", "--batch-size", "64", "--dataset-size",
                                  "6400", "--steps", "500", "--delta", "1e-6", "--json"), slow=True),
    Case("verify-list", ("verify", "--list"), slow=True),
    Case("verify-randomized-response", ("verify", "randomized-response"), slow=True),
    Case("verify-nfdp-json", ("verify", "nfdp", "--json"), slow=True),
    Case("verify-unknown", ("verify", "no-such-check"), slow=True, stderr=True),
    # The literature's examples: the tester's budget is seconds, so only a search that ends at its first test prints
    # the same samples and bounds on every machine: at a budget of 1 µs (TINY_BUDGET) the first test always runs, no
    # later test starts past the budget, and no final stage does; each example prints one round, n = 1000 per side,
    # and the bound of its first test.
    Case("verify-examples-laplace-sum", ("verify", "--examples", "--only", "laplace sum", "--budget", TINY_BUDGET,
                                         "--seed", "1"), slow=True, masks=(SECONDS, *TABLE_PADDING)),
    Case("verify-examples-randomized-response-json", ("verify", "--examples", "--only", "randomized response",
                                                      "--budget", TINY_BUDGET, "--json"), slow=True, masks=(SECONDS,)),
    Case("audit-gaussian-output-table", ("audit", "gaussian-output", "--epsilon", "1", "--delta", "1e-5", "--trials",
                                         "1000"), slow=True),
    Case("audit-gaussian-output-json", ("audit", "gaussian-output", "--epsilon", "1", "--delta", "1e-5", "--trials",
                                        "2000", "--sigma-scale", "0.5", "--repetitions", "2", "--seed", "3", "--json"),
         slow=True),
    Case("audit-gaussian-output-bad-trials", ("audit", "gaussian-output", "--epsilon", "1", "--delta", "1e-5",
                                              "--trials", "0"), slow=True, stderr=True),
    Case("audit-randomized-response-table", ("audit", "randomized-response", "--epsilon", "1", "--num-classes", "4",
                                             "--canaries", "1000"), slow=True),
    Case("audit-randomized-response-json", ("audit", "randomized-response", "--epsilon", "2", "--num-classes", "2",
                                            "--canaries", "2000", "--delta", "1e-5", "--seed", "1", "--json"),
         slow=True),
    Case("audit-scores-table", ("audit", "scores", "in.npy", "out.npy", "--epsilon", "1", "--delta", "1e-5",
                                "--trials", "independent", "--out", "rep"), slow=True, inputs=_scores),
    Case("audit-scores-json", ("audit", "scores", "in.npy", "out.npy", "--epsilon", "1", "--delta", "1e-5",
                               "--estimator", "gdp", "--both-directions", "--json"), slow=True, inputs=_scores),
    # the main job at its smallest: DP-Helmet on digits without the ε curve; its report's path sets the table's width
    Case("run-dphelmet-digits", ("run", "--pipeline", "dphelmet", "--dataset", "digits", "--no-accuracy-curve",
                                 "--trials", "100", "--out", "rep"), slow=True, masks=TABLE_PADDING),
    Case("run-dphelmet-digits-json", ("run", "--pipeline", "dphelmet", "--dataset", "digits", "--no-accuracy-curve",
                                      "--epsilon", "2", "--seed", "1", "--trials", "100", "--json", "--out", "rep"),
         slow=True),
    Case("audit-dphelmet-digits-json", ("audit", "dphelmet", "--dataset", "digits", "--trials", "100", "--json"),
         slow=True),
    # the canary audit of the amplified claim, the selection sampled in every trial (3 of 10 users, replace-one)
    Case("audit-dphelmet-digits-uniform-selection", ("audit", "dphelmet", "--dataset", "digits", "--trials", "100",
                                                     "--client-sampling", "uniform", "--clients-per-round", "3"),
         slow=True),
    Case("audit-scores-missing-file", ("audit", "scores", "in.npy", "absent.npy"), slow=True, stderr=True,
         inputs=_scores),
    # The other pipelines' audits on digits at their fewest trials: each trains its pipeline's federation at the
    # pipeline's own configuration (the command has no option to shrink it), which is most of its cost.
    Case("audit-fedmd-nfdp-digits-json", ("audit", "fedmd-nfdp", "--dataset", "digits", "--trials", "10", "--json"),
         slow=True),
    Case("audit-fedauxfdp-digits", ("audit", "fedauxfdp", "--dataset", "digits", "--trials", "100"), slow=True),
    Case("audit-fedgm-digits", ("audit", "fedgm", "--dataset", "digits", "--trials", "10"), slow=True),
    Case("audit-fedzda-digits", ("audit", "fedzda", "--dataset", "digits", "--trials", "10"), slow=True),
    # The main job on two other pipelines at their fewest trials, without the ε curve
    Case("run-fedauxfdp-digits", ("run", "--pipeline", "fedauxfdp", "--dataset", "digits", "--no-accuracy-curve",
                                  "--trials", "100", "--out", "rep"), slow=True, masks=TABLE_PADDING),
    Case("run-fedmd-nfdp-digits-json", ("run", "--pipeline", "fedmd-nfdp", "--dataset", "digits",
                                        "--no-accuracy-curve", "--trials", "10", "--json", "--out", "rep"), slow=True),
    # The main job's round in Flower's simulation engine (Ray; its workers' CPU is not counted here), DP-Helmet over
    # SecAgg+ on digits; its report's path sets the table's width
    Case("run-dphelmet-digits-flower", ("run", "--engine", "flower", "--pipeline", "dphelmet", "--dataset", "digits",
                                        "--no-accuracy-curve", "--trials", "100", "--out", "rep"), slow=True,
         masks=TABLE_PADDING),
]

# What every benchmark prints that varies between runs of the same code: its timings and the versions it names.
TIMED = (SECONDS, ELAPSED, RATES, SPEED_RATIOS, VERSIONS, LOAD, PLATFORM, *TABLE_PADDING)
# Tables' timed columns: seconds, rates, speed-ups and multiples of a timed reference. A bare "ratio" column is
# timed in some scripts and a ratio of noise scales in others: a case names its own.
TIMED_COLUMNS = Columns("timed columns", r"(?i).*(\bs\b|seconds|\bms\b|/ ?s\b|per (cpu )?second|time|wall|cpu|"
                                         r"speed-?up|× ?(np\.)?sort).*")


def _benchmark(name: str, script: str, *arguments: str, masks: tuple[Mask | Columns, ...] = (),
               columns: int = 300) -> Case:
    # wide enough that no table of a benchmark wraps: a timed cell's width would move the wraps
    return Case(name, (f"benchmarks/{script}.py", *arguments), slow=True, masks=(TIMED_COLUMNS, *TIMED, *masks),
                columns=columns)


BENCHMARKS = [
    _benchmark("bench-conversions-quick", "conversions", "--quick"),
    _benchmark("bench-gaussian-core", "gaussian_core", "--runs", "1",
               masks=(Mask("ours/peer time ratio", r"(?<=<seconds>) [\d.]+$", " <ratio>"),)),
    _benchmark("bench-discrete-noise-quick", "discrete_noise", "--quick",
               masks=(Columns("throughput ratio", "relative to numpy float"),)),
    _benchmark("bench-seed-nfdp-table2", "seed_nfdp_table2"),
    _benchmark("bench-batched-heads", "batched_heads", "--sizes", "30", "--heads", "3", "--repeats", "1",
               masks=(Columns("time ratios", "ratio.*"), *COMMAND_AND_MACHINE)),
    _benchmark("bench-batched-logistic", "batched_logistic", "--heads", "8", "--sklearn-heads", "2", "--sizes", "50",
               "--repeats", "1", masks=COMMAND_AND_MACHINE),
    _benchmark("bench-audit-statistics", "audit_statistics", "--repetitions", "1"),
    _benchmark("bench-audit-pipelines-fedgm", "audit_pipelines", "--pipelines", "fedgm", "--trials", "1000",
               "--shadows", "4", "--pool", "100"),
    _benchmark("bench-audit-pipelines-dphelmet", "audit_pipelines", "--pipelines", "dphelmet", "--trials", "1000",
               "--shadows", "0"),
    _benchmark("bench-verification", "verification", "--skip-thorough"),
    _benchmark("bench-seed-fedgm-quick", "seed_fedgm", "--quick"),
    # section 3's rows: events, then seconds, seconds, the growth of the total (from the second row) and the peak RSS
    _benchmark("bench-exact-accountant-quick", "exact_accountant", "--quick",
               masks=(Mask("scaling rows' seconds, growth and memory", r"^(\d+)(?: [\d.]+){3,4} (?=\()",
                           r"\1 <timed> "),)),
    _benchmark("bench-pld-quick", "pld", "--quick", masks=(Columns("time ratio", "ratio"),)),
    _benchmark("bench-pld-heterogeneous", "pld", "--only", "heterogeneous", "--repeats", "1",
               masks=(Columns("time ratio", "ratio"),)),
    _benchmark("bench-pld-tiny-delta", "pld", "--only", "tiny_delta", "--repeats", "1",
               masks=(Columns("time ratio", "ratio"),)),
    # Its widest table passes 300 columns when a timed cell is long (a CI run wrapped one cell and the next did not).
    _benchmark("bench-accounting-quick", "accounting", "--quick", columns=600),
    _benchmark("bench-seed-fedauxfdp", "seed_fedauxfdp"),
    _benchmark("bench-seed-fedzda-small", "seed_fedzda", "--seeds", "1", "--clients", "4", "--rounds", "2",
               "--augmentation-start", "1", "--zsdg-iterations", "5", "--oracle-epochs", "1", "--oracle-samples", "4"),
    # The tester's tables at a budget of 1 µs: every mechanism at its first test (see TINY_BUDGET)
    _benchmark("bench-verification-literature-tiny-budget", "verification_literature", "--seeds", "1", "--budget",
               TINY_BUDGET),
    _benchmark("bench-heldout-mechanisms-tiny-budget", "heldout_mechanisms", "--seeds", "1", "--budget", TINY_BUDGET),
    _benchmark("bench-heldout-mechanisms-more-tiny-budget", "heldout_mechanisms_more", "--seeds", "1", "--budget",
               TINY_BUDGET),
    # Fed-ZDAC against FedAvg at one seed, its quickest form (the default's nine runs took over 60 s of CPU)
    _benchmark("bench-seed-pipelines-two-zdac-one-seed", "seed_pipelines_two", "--zdac-seeds", "1"),
    # the seed's protocol at its smallest: 500 MNIST-1D records generated, a CNN of one epoch on 100 public ones, two
    # users, softmax, one PSGD epoch, one seed (the default run trains 66 DP-Helmet rounds, over 60 s of CPU)
    _benchmark("bench-seed-dphelmet-fidelity-tiny", "seed_dphelmet", "--fidelity", "--samples", "500",
               "--public-samples", "100", "--users", "2", "--seeds", "1", "--epochs", "1", "--cnn-epochs", "1",
               "--models", "softmax", "--cache-dir", "cache"),
]

CASES = [*CLI, *BENCHMARKS]
