"""FedAUXfdp server accuracy in the shape of seed 000 Table 3, next to FedAVG+P and FedD+P.

Digits and MNIST-1D (generated locally), 20 clients, Dirichlet α in {0.01, 0.16, 10.24}, class ε
in {∞, 1, 0.5, 0.1} (δ = 1e-5), scoring head at (0.1, 1e-5) as in the seed. Class ε = ∞ means
the class heads are released WITHOUT noise (the scoring heads keep their noise), so that row has
no DP guarantee at all. A second table sets the seed's headline numbers (Tables 2 and 3,
ShuffleNet) next to this run's. Run: ``PYTHONPATH=. python benchmarks/seed_fedauxfdp.py [--repeats R]``.

``--fidelity`` runs seed 000's Table 3 protocol at scale instead: MNIST-1D generated locally
(``--samples``, cached), features of a small CNN trained on a public split only
(:mod:`trainers.features`, cached; every row minus the public mean embedding, then at norm 1, unless
``--feature-normalization unit`` or ``quantile``), 20 clients of ≥ 2,000 records, the paper's λ = 0.01 for both
heads (:meth:`FedAuxFdpConfig.paper`), D⁻ at the paper's ratio to the private data, scoring heads
at (0.1, 1e-5), class ε ∈ {1, 0.5, 0.1} and a fully non-private row (neither head noised), mean ±
std over ``--seeds`` × ``--draws`` runs; each client's heads are trained once per (α, seed) and
released ``--draws`` times, independently, at every budget (the release is the only step that
depends on ε; one noise draw per seed leaves the mean at the mercy of a few draws: the gap at
α = 0.01 moved by more than 10 pp between draws on the same partition). A last row, "seed-compat", emulates
FedAUX's code (scikit-learn ``C = 1/λ``: heads trained with λ/n, noise calibrated for λ, n times
too little): it has NO privacy guarantee and exists to show where the seed's "negligible DP cost"
comes from.

``--fidelity --tune`` chooses λ_s and λ_c per (α, seed, budget) instead, by
:func:`trainers.pipelines.fedauxfdp.tune_regularization` (its grid, rule and edge rule fixed in
advance, on the round's public sets only; the seed-compat row keeps the paper's 0.01), and prints the choices
and their public validation accuracy. ``--class-epsilons`` and ``--no-extra-rows`` cut the
budgets run, for time.

Measured for issue 16 (α = 0.01, class (0.5, 1e-5), 5 seeds × 3 draws, the same seeds and draws;
a loaded 2-core machine, so the wall times are provisional): at the paper's λ = 0.01 FedAUXfdp −
FedAVG+P is +34.2 ± 9.4 pp with the default "centered" features (63.3 vs 29.2 %) and +21.4 ±
10.2 pp with "unit" ones (39.9 vs 18.5 %), about 15 s per seed. The loss under "unit" is in the
teacher, not in the distillation: its certainty-weighted ensemble itself is right on 45–50 % of the
test points, and the class-head noise and the scoring-head noise each cost ~20 pp of it. With
``--tune`` FedAUXfdp reaches 89.6 ± 1.7 % but FedAVG+P 85.6 ± 4.6 % (+4.0 ± 4.1 pp): the
public-data choice, λ_c = 0.9 (past the initial grid, by the edge rule), makes every class head
nearly (1/λ_c)·(class mean − mean) of its client's records, and the average of those templates is
the class-mean classifier of the whole pool (cosine 0.999 with it, noiseless), which label skew
cannot hurt; certainty weighting then has little left to add.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time
import warnings

import numpy as np
from rich.console import Console
from rich.progress import track
from rich.table import Table

import seed_headlines  # a sibling module: the scripts run as `python benchmarks/NAME.py`
import dpmech
from trainers.data import load_digits_dataset, load_mnist1d, make_mnist1d
from trainers.features import pretrained_features
from trainers.pipelines import FedAuxFdpConfig, run_fedauxfdp
from trainers.pipelines.fedauxfdp import (
    certainty_diagnostics,
    client_settings,
    fedauxfdp_server,
    head_mechanisms,
    prepare_round,
    RegularizationGrid,
    release_client_heads,
    train_client_heads,
    tune_regularization,
    tuning_seed,
)
from trainers.pipelines._common import linear_accuracy

ALPHAS = (0.01, 0.16, 10.24)
CLASS_EPSILONS = (math.inf, 1.0, 0.5, 0.1)
METHODS = ("FedAVG+P", "FedD+P", "FedAUXfdp")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=1, help="seeds per cell (mean ± std when > 1)")
    parser.add_argument("--mnist1d-samples", type=int, default=10_000)
    parser.add_argument("--fidelity", action="store_true", help="seed 000 Table 3 at scale on public-CNN MNIST-1D features")
    parser.add_argument("--samples", type=int, default=100_000, help="--fidelity: MNIST-1D records generated")
    parser.add_argument("--public-samples", type=int, default=10_000, help="--fidelity: records that train the CNN only")
    parser.add_argument("--seeds", type=int, default=3, help="--fidelity: seeds per cell")
    parser.add_argument("--draws", type=int, default=3,
                        help="--fidelity: independent noise draws per seed and noisy budget (the release is the cheap step)")
    parser.add_argument("--num-clients", type=int, default=20)
    parser.add_argument("--alphas", type=float, nargs="+", default=ALPHAS, help="--fidelity: Dirichlet α values")
    parser.add_argument("--seed-compat-seeds", type=int, default=1,
                        help="--fidelity: seeds that also run the seed-compat row (its λ/n fits are slow)")
    parser.add_argument("--cnn-epochs", type=int, default=15)
    parser.add_argument("--cache-dir", default=".cache/dpmech-benchmarks", help="--fidelity: data and CNN cache")
    parser.add_argument("--device", default="cpu", help="--fidelity: torch device of the CNN")
    parser.add_argument("--feature-normalization", default="centered", choices=("centered", "unit", "quantile"),
                        help="--fidelity: every CNN feature row minus the public mean embedding, then at norm 1 "
                             "(centered), at norm 1 (unit), or one public scale then clipping (quantile)")
    parser.add_argument("--tune", action="store_true",
                        help="--fidelity: choose λ_s, λ_c per (α, seed, budget) on public data only "
                             "(tune_regularization, its pre-specified grid and edge rule) instead of the paper's 0.01")
    parser.add_argument("--tuning-draws", type=int, default=RegularizationGrid().draws,
                        help="--fidelity --tune: noise draws per grid point of the public simulation")
    parser.add_argument("--class-epsilons", type=float, nargs="+", default=None,
                        help="--fidelity: run only these class ε of the noisy budgets (default: 1 0.5 0.1); "
                             "the non-private and seed-compat rows stay unless --no-extra-rows")
    parser.add_argument("--no-extra-rows", action="store_true",
                        help="--fidelity: skip the non-private and seed-compat rows (time)")
    arguments = parser.parse_args()
    console = Console(width=200)
    if arguments.fidelity:
        fidelity(arguments, console)
        return
    datasets = {"digits": load_digits_dataset(), "MNIST-1D": make_mnist1d(arguments.mnist1d_samples)}
    cells = [(name, alpha, epsilon, seed) for name in datasets for epsilon in CLASS_EPSILONS for alpha in ALPHAS
             for seed in range(arguments.repeats)]
    accuracy, guarantees, client_sizes, diagnostics = {}, {}, {}, {}
    start = time.perf_counter()
    for name, alpha, epsilon, seed in track(cells, description="FedAUXfdp grid", console=console):
        result = run_fedauxfdp(datasets[name], FedAuxFdpConfig(alpha=alpha, class_epsilon=epsilon), seed=seed)
        diagnostics.setdefault((name, epsilon, alpha), []).append(certainty_diagnostics(
            result.messages, result.prepared.features.distillation,
            np.array([client["class_shares"] for client in result.per_client])))
        for method, value in (("FedAUXfdp", result.accuracy), *result.baselines.items()):
            accuracy.setdefault((name, method, epsilon, alpha), []).append(100 * value)
        guarantees[epsilon] = (result.guarantees["basic"].epsilon, result.guarantees["tight"].epsilon)
        client_sizes.setdefault(name, []).extend(client["num_records"] for client in result.per_client)
    table = Table(title=f"Server test accuracy (%), 20 clients, {arguments.repeats} seed(s); scoring heads (0.1, 1e-5)")
    table.add_column("method")
    table.add_column("class (ε, δ)")
    for name in datasets:
        for alpha in ALPHAS:
            table.add_column(f"{name} α={alpha:g}", justify="right")
    for epsilon in CLASS_EPSILONS:
        for method in METHODS:
            cells_text = []
            for name in datasets:
                for alpha in ALPHAS:
                    values = accuracy[(name, method, epsilon, alpha)]
                    cells_text.append(f"{np.mean(values):.1f}" + (f" ± {np.std(values):.1f}" if len(values) > 1 else ""))
            label = "None (no noise)" if epsilon == math.inf else f"({epsilon:g}, 1e-05)"
            table.add_row(method, label, *cells_text, end_section=method == METHODS[-1])
    console.print(table)
    console.print(diagnostics_table(diagnostics, tuple(datasets), arguments.repeats))
    budget = Table(title="Total guarantee per client record (replace-one), δ = 2e-5")
    for column in ("class (ε, δ)", "basic ε (ε_scores + ε_classes)", "tight ε (exact composition)"):
        budget.add_column(column, justify="right")
    for epsilon, (basic, tight) in guarantees.items():
        budget.add_row("None" if epsilon == math.inf else f"({epsilon:g}, 1e-05)", f"{basic:.4f}", f"{tight:.4f}")
    console.print(budget)
    console.print(headline_table(accuracy, guarantees, client_sizes, arguments.repeats))
    console.print(f"{len(cells)} runs in {time.perf_counter() - start:.0f} s")


def diagnostics_table(diagnostics, names, repeats):
    """FedAUXfdp's certainty diagnostics per (dataset, α, class ε), mean over seeds."""
    table = Table(title=f"FedAUXfdp certainty diagnostics on the distillation set (mean over {repeats} seed(s)): spread | "
                        "weighted true-class share | uniform (FedD+P) share; spread ≈ 0 or weighted ≈ uniform means the "
                        "certainty weighting does nothing")
    table.add_column("class (ε, δ)")
    for name in names:
        for alpha in ALPHAS:
            table.add_column(f"{name} α={alpha:g}", justify="right")
    for epsilon in CLASS_EPSILONS:
        table.add_row("None (no noise)" if epsilon == math.inf else f"({epsilon:g}, 1e-05)", *(
            diagnostic_cell(diagnostics[(name, epsilon, alpha)]) for name in names for alpha in ALPHAS))
    return table


def diagnostic_cell(diagnostics):
    """"spread | weighted true-class share | uniform share", each the mean over the given diagnostics (seeds)."""
    return " | ".join(f"{np.mean([getattr(d, field) for d in diagnostics]):.3f}"
                      for field in ("spread", "weighted_true_class_share", "uniform_true_class_share"))


def budget_by_alpha_table(title, budgets, alphas, values, cell):
    """A row per budget that ``values`` (keyed by (budget label, α)) holds, a column per α, ``cell(values[(label, α)])``."""
    table = Table(title=title)
    table.add_column("budget")
    for alpha in alphas:
        table.add_column(f"α={alpha:g}", justify="right")
    for label, *_ in budgets:
        if (label, alphas[0]) in values:
            table.add_row(label, *(cell(values[(label, alpha)]) for alpha in alphas))
    return table


# (label, score ε, class ε, seed-compat): the fully non-private row releases neither head with noise
BUDGETS = (("non-private (no noise at all)", math.inf, math.inf, False), ("class (1, 1e-5)", 0.1, 1.0, False),
           ("class (0.5, 1e-5)", 0.1, 0.5, False), ("class (0.1, 1e-5)", 0.1, 0.1, False),
           ("seed-compat C = 1/λ, class 'ε = 0.5' (NO guarantee)", 0.1, 0.5, True))


# the server head is post-processing: a looser L-BFGS tolerance costs accuracy digits, not privacy
SERVER_TOLERANCE = 1e-6


def selected_budgets(arguments):
    """The rows of BUDGETS this run computes (``--class-epsilons``, ``--no-extra-rows``)."""
    rows = []
    for row in BUDGETS:
        label, score_epsilon, class_epsilon, compat = row
        extra = compat or class_epsilon == math.inf
        if extra and arguments.no_extra_rows:
            continue
        if not extra and arguments.class_epsilons is not None and class_epsilon not in arguments.class_epsilons:
            continue
        rows.append(row)
    if not rows:
        raise SystemExit("no budget left to run: check --class-epsilons (1 0.5 0.1) and --no-extra-rows")
    return tuple(rows)


def seed_compat_heads(heads):
    """FedAUX's code as run: scikit-learn ``C = 1/λ`` trains with the mean-form regularisation
    λ/n, while the noise is calibrated to 2L/(nλ); the true sensitivity is n times larger. The
    trained heads keep their (λ/n) parameters and are given the sensitivity for λ."""
    return dataclasses.replace(
        heads,
        score_sensitivity=heads.score_sensitivity / (heads.num_records + heads.num_negative),
        class_sensitivity=heads.class_sensitivity / heads.num_records,
    )


def fidelity(arguments, console):
    """FedAUXfdp's Table 3 (Hoech et al. 2022) at scale (see the module docstring); prints the seed's table beside this run's."""
    start = time.perf_counter()
    data = load_mnist1d(arguments.samples, seed=0, cache_dir=arguments.cache_dir)
    pretrained = pretrained_features(data, arguments.public_samples, seed=0, cache_dir=arguments.cache_dir,
                                     device=arguments.device, epochs=arguments.cnn_epochs,
                                     normalization=arguments.feature_normalization)
    console.print(f"MNIST-1D {len(data)} records; CNN on {pretrained.public_indices.size} public records "
                  f"(public training accuracy {100 * pretrained.extractor.public_accuracy_:.1f} %, "
                  f"{'cached' if pretrained.extractor.from_cache_ else 'trained'}), "
                  f"{len(pretrained.data)} records left; features normalised '{arguments.feature_normalization}' "
                  f"(median norm {np.median(np.linalg.norm(pretrained.data.features, axis=1)):.3f}); "
                  f"{time.perf_counter() - start:.0f} s")
    base = FedAuxFdpConfig.paper(num_clients=arguments.num_clients)
    budgets = selected_budgets(arguments)
    grid = RegularizationGrid(draws=arguments.tuning_draws) if arguments.tune else None
    accuracy, diagnostics, sizes, wall, chosen, tuning_wall = {}, {}, {}, {}, {}, []
    alphas = tuple(arguments.alphas)
    for alpha in alphas:
        for seed in range(arguments.seeds):
            cell_start = time.perf_counter()
            config = dataclasses.replace(base, alpha=alpha)
            prepared = prepare_round(pretrained.data, config, seed)
            sets, assignment = prepared.features, prepared.assignment
            clients = [c for c in range(config.num_clients) if np.any(assignment == c)]
            local = {c: sets.private.subset(np.flatnonzero(assignment == c)) for c in clients}
            sizes.setdefault(alpha, []).extend(len(local[c]) for c in clients)
            shares = np.stack([np.bincount(local[c].labels, minlength=prepared.num_classes) / len(local[c]) for c in clients])
            trained = {}
            for label, score_epsilon, class_epsilon, compat in budgets:
                if compat and seed >= arguments.seed_compat_seeds:
                    continue
                budget_config = dataclasses.replace(config, score_epsilon=score_epsilon, class_epsilon=class_epsilon)
                if grid is not None and not compat:
                    tuning_start = time.perf_counter()
                    # public sets, the public private-pool size and the public config only (tune_regularization)
                    choice = tune_regularization(sets.negative, sets.distillation, len(sets.private), budget_config,
                                                 prepared.num_classes, tuning_seed(seed), grid)
                    tuning_wall.append(time.perf_counter() - tuning_start)
                    budget_config = dataclasses.replace(budget_config, score_regularization=choice.score_regularization,
                                                        class_regularization=choice.class_regularization)
                    chosen.setdefault((label, alpha), []).append(choice)
                settings = client_settings(budget_config, prepared.num_classes)
                key = (compat, settings.score_regularization, settings.class_regularization)
                if key not in trained:
                    if compat:
                        train_settings = [dataclasses.replace(settings,
                                                              score_regularization=settings.score_regularization / (len(local[c]) + len(sets.negative)),
                                                              class_regularization=settings.class_regularization / len(local[c]))
                                          for c in clients]
                        trained[key] = [seed_compat_heads(train_client_heads(local[c], sets.negative.features, s))
                                        for c, s in zip(clients, train_settings)]
                    else:
                        trained[key] = [train_client_heads(local[c], sets.negative.features, settings) for c in clients]
                # each draw is an independent release of the same trained heads (spawn gives new children);
                # without any noise every draw would be the same, so that row takes one
                noiseless = score_epsilon == math.inf and class_epsilon == math.inf
                for _ in range(1 if noiseless else arguments.draws):
                    client_rngs = [np.random.default_rng(child) for child in prepared.client_seed.spawn(len(clients))]
                    messages = [release_client_heads(c, heads, head_mechanisms(heads, settings), rng)
                                for c, heads, rng in zip(clients, trained[key], client_rngs)]
                    server = fedauxfdp_server(messages, sets.distillation.features, config.server_regularization,
                                              tolerance=SERVER_TOLERANCE)
                    for method, head in (("FedAUXfdp", server.fedauxfdp), ("FedD+P", server.fedd), ("FedAVG+P", server.fedavg)):
                        accuracy.setdefault((label, method, alpha), []).append(100 * linear_accuracy(head, sets.test))
                    diagnostics.setdefault((label, alpha), []).append(certainty_diagnostics(messages, sets.distillation, shares))
            wall.setdefault(alpha, []).append(time.perf_counter() - cell_start)
            console.print(f"α = {alpha:g}, seed {seed}: {time.perf_counter() - cell_start:.0f} s" + (
                "; λ (s, c) chosen on public data: " + ", ".join(
                    f"{label} ({chosen[(label, alpha)][-1].score_regularization:g}, "
                    f"{chosen[(label, alpha)][-1].class_regularization:g})"
                    for label, *_ in budgets if (label, alpha) in chosen) if grid is not None else ""))
    if arguments.seed_compat_seeds > 0 and any(compat for *_, compat in budgets):
        warnings.warn("seed-compat rows add n times too little noise (FedAUX's scikit-learn C = 1/λ): they carry NO "
                      "privacy guarantee", dpmech.NoGuaranteeWarning, stacklevel=1)
    table = Table(title=f"Seed 000 Table 3 protocol on public-CNN MNIST-1D features: server test accuracy (%), "
                        f"{arguments.num_clients} clients, mean ± std over {arguments.seeds} seed(s) × {arguments.draws} noise "
                        f"draw(s) (n = runs); scoring heads (0.1, 1e-5); "
                        + (f"λ_s, λ_c chosen per (α, seed, budget) on public data only (grid λ_s {grid.score_regularizations}, "
                           f"λ_c {grid.class_regularizations}, each edge extended up to {grid.edge_extensions}× by the "
                           f"edge rule; seed-compat at the paper's 0.01)" if grid is not None else
                           f"λ_s = λ_c = {base.score_regularization:g}") + f", server L2 {base.server_regularization:g}")
    table.add_column("method")
    table.add_column("budget")
    for alpha in alphas:
        table.add_column(f"α={alpha:g} here", justify="right")
        table.add_column(f"α={alpha:g} seed", justify="right")
    seed_values = seed_headlines.FEDAUXFDP
    for label, _, class_epsilon, compat in budgets:
        for method in METHODS:
            cells_text = []
            for alpha in alphas:
                values = accuracy.get((label, method, alpha), [])
                cells_text.append(f"{np.mean(values):.1f} ± {np.std(values):.1f} (n={len(values)})" if values else "—")
                key = (method, None if class_epsilon == math.inf else class_epsilon, alpha)
                cells_text.append(seed_values[key].printed if key in seed_values and not compat else "—")
            table.add_row(method, label, *cells_text, end_section=method == METHODS[-1])
    console.print(table)
    console.print(budget_by_alpha_table(
        "Certainty diagnostics on the distillation set (mean over seeds): spread | weighted true-class share | uniform "
        "(FedD+P) share", budgets, alphas, diagnostics, diagnostic_cell))
    if grid is not None:
        console.print(budget_by_alpha_table(
            "λ chosen on public data only (tune_regularization): (λ_s, λ_c) per seed, and the public validation accuracy "
            f"of the choice (mean over seeds); tuning {np.mean(tuning_wall):.0f} s per (α, seed, budget)",
            budgets, alphas, chosen,
            lambda choices: " ".join(f"({c.score_regularization:g}, {c.class_regularization:g})" for c in choices)
            + f" | {100 * np.mean([c.validation_accuracy[(c.score_regularization, c.class_regularization)] for c in choices]):.1f} %"))
    if 0.01 not in alphas or ("class (0.5, 1e-5)", "FedAUXfdp", 0.01) not in accuracy:
        console.print("Wall time per (α, seed), all budgets: " + ", ".join(
            f"α={alpha:g} {np.mean(wall[alpha]):.0f} s" for alpha in alphas) + f"; total {time.perf_counter() - start:.0f} s")
        return
    target = np.subtract(accuracy[("class (0.5, 1e-5)", "FedAUXfdp", 0.01)], accuracy[("class (0.5, 1e-5)", "FedAVG+P", 0.01)])
    per_seed = target.reshape(arguments.seeds, arguments.draws).mean(axis=1)
    for method in ("FedAUXfdp", "FedAVG+P"):
        values = np.reshape(accuracy[("class (0.5, 1e-5)", method, 0.01)], (arguments.seeds, arguments.draws)).mean(axis=1)
        console.print(f"{method} at α = 0.01, class (0.5, 1e-5), per-seed means over the draws: "
                      + ", ".join(f"{value:.1f}" for value in values) + " %")
    console.print(f"Target (issue 16): FedAUXfdp − FedAVG+P at α = 0.01, class (0.5, 1e-5), ≥ 2,000 records per client: "
                  f"{np.mean(target):+.1f} ± {np.std(target):.1f} pp over {target.size} runs ({arguments.seeds} seed(s) × "
                  f"{arguments.draws} draw(s); per-seed means {', '.join(f'{value:+.1f}' for value in per_seed)}) (seed: "
                  f"{seed_values[('FedAUXfdp', 0.5, 0.01)].value - seed_values[('FedAVG+P', 0.5, 0.01)].value:+.1f} pp); "
                  f"{seed_headlines.holds(np.mean(target) >= 25.0)} (≥ 25 pp). Records per client: "
                  + ", ".join(f"α={alpha:g} min {min(sizes[alpha])} mean {np.mean(sizes[alpha]):.0f}" for alpha in alphas)
                  + f" ({seed_headlines.holds(min(min(sizes[alpha]) for alpha in alphas) >= 2000)} ≥ 2,000)"
                  + f"; |D⁻| = {len(sets.negative)} ({len(sets.negative) / len(sets.private):.2f}× the private data), "
                  f"distillation {len(sets.distillation)}, test {len(sets.test)}.")
    console.print("Wall time per (α, seed), all budgets: " + ", ".join(
        f"α={alpha:g} {np.mean(wall[alpha]):.0f} s" for alpha in alphas) + f"; total {time.perf_counter() - start:.0f} s")


def headline_table(accuracy, guarantees, client_sizes, repeats):
    """FedAUXfdp's headline numbers (Hoech et al. 2022) next to this run's (mean over seeds per cell)."""
    names = tuple(client_sizes)

    def ours(method, epsilon, alpha):
        return {name: float(np.mean(accuracy[(name, method, epsilon, alpha)])) for name in names}

    def gap(first, second):
        return {name: first[name] - second[name] for name in names}

    def text(values, unit="%"):
        return " / ".join(f"{name} {value:+.1f}" if unit == "pp" else f"{name} {value:.1f}" for name, value in values.items()) + f" {unit}"

    headline = seed_headlines.FEDAUXFDP
    defaults = FedAuxFdpConfig()
    scale = ("CIFAR-10 on a contrastively pretrained ShuffleNet, ~2,500 records per client (50,000 / 20), vs "
             + ", ".join(f"{name} ({np.mean(sizes):.0f} records per client)" for name, sizes in client_sizes.items())
             + f" on public PCA({defaults.num_components}) features; λ = 0.01 there vs score λ "
             f"{defaults.score_regularization:g}, class λ {defaults.class_regularization:g} here (σ ∝ 1/(nλ)); "
             f"{repeats} seed(s) here vs the seed's ± over an unstated number of runs.")
    private_level = max(max(ours(method, 0.5, alpha).values()) for method in METHODS for alpha in ALPHAS)
    snr = ("With a mean-form regularised objective ‖w‖ ≤ O(1/λ) while σ ∝ 1/(nλ), so a class head's signal-to-noise "
           "is at most of order n whatever λ is: ~2,500 records per client there vs "
           + " / ".join(f"{np.mean(sizes):.0f}" for sizes in client_sizes.values()) + " here"
           + (", which leaves every method here close to chance (10 %) at (0.5, 1e-5)." if private_level < 25.0 else "."))
    fedauxfdp = ours("FedAUXfdp", 0.5, 0.01)
    rows = [("FedAUXfdp, α = 0.01, class (0.5, 1e-5)", headline[("FedAUXfdp", 0.5, 0.01)].describe(), text(fedauxfdp),
             "n/a (level)", scale)]
    how = {"FedAVG+P": "the average of the clients' λ = 1 linear heads", "FedD+P": "a head distilled from the clients' heads"}
    for method in ("FedAVG+P", "FedD+P"):
        ours_gap = gap(fedauxfdp, ours(method, 0.5, 0.01))
        no_noise_gap = gap(ours("FedAUXfdp", math.inf, 0.01), ours(method, math.inf, 0.01))
        seed_gap = headline[("FedAUXfdp", 0.5, 0.01)].value - headline[(method, 0.5, 0.01)].value
        rows.append((f"FedAUXfdp − {method}, α = 0.01 (the abstract's claim: significantly better on non-IID data)",
                     f"{seed_gap:+.1f} pp ({headline[('FedAUXfdp', 0.5, 0.01)].printed} vs {headline[(method, 0.5, 0.01)].printed})\n"
                     f"[{headline[(method, 0.5, 0.01)].source}]",
                     text(ours_gap, "pp"), seed_headlines.holds(all(value > 0 for value in ours_gap.values())),
                     "Where this says NO the seed's central claim is NOT reproduced here. Without class noise "
                     f"{method} ({how[method]}, on 16 PCA features) reaches {text(ours(method, math.inf, 0.01))} at α = 0.01, "
                     f"so it does not collapse under heterogeneity as in the seed ({headline[(method, 0.5, 0.01)].printed}), and "
                     f"FedAUXfdp − {method} is {text(no_noise_gap, 'pp')} even then (its certainty-score weights come from "
                     "scoring heads noised at (0.1, 1e-5) on a few dozen to a few hundred records). Scale: first row."))
    iid_gap = gap(ours("FedAUXfdp", 0.5, 10.24), ours("FedAVG+P", 0.5, 10.24))
    rows.append(("FedAUXfdp − FedAVG+P, α = 10.24 (near IID)",
                 f"{headline[('FedAUXfdp', 0.5, 10.24)].value - headline[('FedAVG+P', 0.5, 10.24)].value:+.1f} pp "
                 f"({headline[('FedAUXfdp', 0.5, 10.24)].printed} vs {headline[('FedAVG+P', 0.5, 10.24)].printed})\n[seed 000 Table 2]",
                 text(iid_gap, "pp"), seed_headlines.holds(all(value < 0 for value in iid_gap.values())) + " (FedAVG+P ahead)",
                 "The seed itself has FedAVG+P ahead on near-IID data; the sign is what is compared. " + scale))
    for alpha in (0.01, 10.24):
        cost = gap(ours("FedAUXfdp", math.inf, alpha), ours("FedAUXfdp", 0.5, alpha))
        none, private = headline[("FedAUXfdp", None, alpha)], headline[("FedAUXfdp", 0.5, alpha)]
        rows.append((f"accuracy lost to class DP (0.5, 1e-5), α = {alpha:g} (abstract: 'negligible at all levels')",
                     f"{none.value - private.value:+.1f} pp ({none.printed} → {private.printed})\n[seed 000 Table 3]",
                     text(cost, "pp"), seed_headlines.holds(all(value <= 2.0 for value in cost.values())) + " (≤ 2 pp)",
                     ("The seed's own Table 3 loses 3.7 pp (ShuffleNet) and 3.6 pp (MobileNetv2) at α = 10.24, which "
                      "is not 'negligible'. " if alpha == 10.24 else "")
                     + snr))
    robust = gap(ours("FedAUXfdp", 0.1, 0.01), ours("FedAUXfdp", 0.1, 10.24))
    rows.append(("class (0.1, 1e-5): α = 0.01 minus α = 10.24 (seed: non-IID clients lose less)",
                 f"{headline[('FedAUXfdp', 0.1, 0.01)].value - headline[('FedAUXfdp', 0.1, 10.24)].value:+.1f} pp "
                 f"({headline[('FedAUXfdp', 0.1, 0.01)].printed} vs {headline[('FedAUXfdp', 0.1, 10.24)].printed})\n[seed 000 Table 3]",
                 text(robust, "pp"), seed_headlines.holds(all(value > 0 for value in robust.values())),
                 "The seed's explanation: fewer classes per client give a smaller sensitivity bound (its √C factor); this "
                 "run uses the tight multinomial bound 2√2‖x̃‖/(nλ), which has no C, so that advantage is absent here. "
                 + ("Every (0.1, 1e-5) cell here is within 10 pp of chance, so this difference carries no signal."
                    if max(max(ours("FedAUXfdp", 0.1, alpha).values()) for alpha in (0.01, 10.24)) < 20.0 else "")))
    basic, tight = guarantees[0.5]
    rows.append(("total ε per client record at class (0.5, 1e-5), scores (0.1, 1e-5)", seed_headlines.FEDAUXFDP_TOTAL_EPSILON.describe(),
                 f"basic {basic:.4f}, tight {tight:.4f} (δ = 2e-5, replace-one)",
                 seed_headlines.holds(abs(basic - seed_headlines.FEDAUXFDP_TOTAL_EPSILON.value) < 1e-9) + " (basic sum)",
                 "The seed sums ε (basic composition), as dpmech's basic column does; exact composition of the two Gaussian "
                 "releases certifies a smaller ε at the same δ."))
    return seed_headlines.comparison_table("Seed 000 (FedAUXfdp) headline vs this run (accuracy in %, pp = percentage points)", rows)


if __name__ == "__main__":
    main()
