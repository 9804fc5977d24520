"""One audit per seed pipeline on digits, and the throughput of batched shadow heads against scikit-learn.

Table 1: each pipeline of :mod:`audits.attacks.pipelines` audited once (seed 0, α = 0.05) at sizes
for two CPU cores: FedAUXfdp and DP-Helmet at the target (ε, δ) = (1, 1e-5) through
``trainers.pipelines.targets.pipeline_config`` with N = 10^4 canary releases per side (``--trials``; the
releases are drawn in blocks through each pipeline's release step, so 10^6 costs about 10 s of CPU for
FedAUXfdp); FedMD-NFDP with its default configuration and R = 150 independent private trainings per world;
FedGM (5 matching iterations, ε_label = 2) with m = 10^4 canary labels; Fed-ZDAC with its default
configuration. The estimator column names the threshold rule: FedAUXfdp's and DP-Helmet's GDP bound is
taken at one rule fixed by the canary pair before any release is drawn ("explicit", the midpoint of the
two worlds' projections; :func:`audits.attacks.pipelines.record.gdp_bound_at_midpoint`), and every GDP
ε_lb holds only under the GDP-shape assumption. CPU seconds are ``time.process_time`` of the audit.

Table 2: the searched canaries of FedAUXfdp and DP-Helmet (``audits.attacks.canary_search``), from the
audits' measurements: each head's displacement against its sensitivity bound (and, for FedAUXfdp's scoring head,
against the label-fixed sensitivity that caps it), the canary's μ against the claimed μ, and the ε of that μ, the
most any lower bound on this pair can reach.

Table 3: the same S shadow heads (multinomial L2 logistic regression, λ = 0.01, on Bernoulli(½)
halves of a pool of digits records scaled to the unit ball) trained in one batch by
``audits.attacks.shadow_heads.shadow_head_confidences`` (torch batched Newton-CG) and one by one
by ``trainers.sklearn_adapter.LogisticRegressionTrainer`` (L-BFGS), with the largest parameter
difference between the two.

    PYTHONPATH=. python benchmarks/audit_pipelines.py [--seed 0] [--shadows 32] [--pipelines fedauxfdp dphelmet]
        [--trials 100000] [--multinomial-bound radius]

``--multinomial-bound`` chooses FedAUXfdp's class-head bound in
:func:`dpmech.sensitivity.multinomial_logistic_regression_sensitivity` (default: the pipeline's own, the
weight-radius bound); ``--shadows 0`` skips Table 3.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time

import numpy as np
from rich.console import Console
from rich.table import Table

import dpmech
from audits.attacks.pipelines import PIPELINES, pipeline_parts
from audits.attacks.shadow_heads import shadow_head_confidences
from trainers.pipelines.fedauxfdp import FedAuxFdpConfig
from trainers.pipelines.targets import pipeline_config
from trainers.batched_logistic import BatchedLogisticRegression
from trainers.data import load_dataset
from trainers.sklearn_adapter import LogisticRegressionTrainer

ALPHA = 0.05
REGULARIZATION = 0.01


def _settings(trials: int = 10_000, multinomial_bound: str = dpmech.sensitivity.TIGHT_BOUND):
    _, gm_config, _ = pipeline_parts("fedgm")
    fedauxfdp = dataclasses.replace(pipeline_config("fedauxfdp", 1.0, 1e-5), multinomial_bound=multinomial_bound)
    return {
        "fedauxfdp": (fedauxfdp, {"trials": trials}),
        "dphelmet": (pipeline_config("dphelmet", 1.0, 1e-5), {"trials": trials}),
        "fedmd-nfdp": (None, {"trials": 150, "n_jobs": 2}),
        "fedgm": (gm_config(outer_iterations=5), {"trials": 10_000}),
        "fedzda": (None, {"trials": 10_000}),
    }


def pipeline_table(seed: int, console: Console, *, pipelines=PIPELINES, trials: int = 10_000,
                   multinomial_bound: str = dpmech.sensitivity.TIGHT_BOUND) -> dict:
    data = load_dataset("digits")
    table = Table(title=f"Pipeline audits on digits (seed {seed}, α = {ALPHA})")
    for column in ("pipeline", "claimed ε", "δ", "ε_lb", "estimator (threshold rule)", "valid_as", "trials / side",
                   "attack behind AUC and TPR", "AUC", "TPR @ 0.1% FPR", "CPU s"):
        table.add_column(column)
    audits = {}
    settings = _settings(trials, multinomial_bound)
    for name in pipelines:
        config, options = settings[name]
        start = time.process_time()
        audit = pipeline_parts(name)[0](data, config, seed=seed, alpha=ALPHA, **options)
        seconds = time.process_time() - start
        audits[name] = audit
        claimed = "none" if math.isinf(audit.eps_claimed) else f"{audit.eps_claimed:.4g}"
        estimator = audit.method if audit.result is None else f"{audit.method} ({audit.result.threshold_strategy})"
        if audit.method == "gdp":
            estimator += ", GDP-shape assumption"
        table.add_row(name, claimed, f"{audit.delta:.3g}", f"{audit.eps_lb:.4g}", estimator, audit.valid_as,
                      str(audit.threat_model.trials_per_side), audit.mia["attack"], f"{audit.mia['auc']:.3f}",
                      f"{audit.mia['tpr_at_0_1_percent_fpr']:.3f}", f"{seconds:.1f}")
    console.print(table)
    for name, audit in audits.items():
        console.print(f"[bold]{name}[/bold]: {audit.claim}")
        for note in audit.notes:
            console.print(f"  - {note}")
    return audits


CANARY_ROWS = {
    "fedauxfdp": (("scoring head displacement / bound", "canary_score_distance_over_bound"),
                  ("scoring head label-fixed sensitivity / bound", "score_head_label_fixed_sensitivity_over_bound"),
                  ("class head displacement / bound", "canary_class_distance_over_bound"),
                  ("canary μ / claimed μ", "canary_mu_over_claimed_mu"),
                  ("ε of the canary μ (ceiling of any eps_lb on this pair)", "epsilon_of_canary_mu"),
                  ("proposals retrained", "canary_proposals_retrained")),
    "dphelmet": (("user model displacement / local sensitivity", "canary_distance_over_local_sensitivity"),
                 ("canary μ / claimed μ (honest fraction t)", "canary_mu_over_claimed_mu"),
                 ("scored μ / claimed μ (colluders' noise removed)", "scored_mu_over_claimed_mu"),
                 ("ε of the scored μ (ceiling of any eps_lb on this pair)", "epsilon_of_scored_canary_mu"),
                 ("proposals retrained", "canary_proposals_retrained")),
}

# The measurement holding each audit's scored canary μ over its claimed μ.
CANARY_MU = {"fedauxfdp": "canary_mu_over_claimed_mu", "dphelmet": "scored_mu_over_claimed_mu"}


def canary_table(audits: dict, console: Console) -> None:
    """How far the searched canaries move the released parameters, from the audits' measurements."""
    table = Table(title="Searched canaries (audits.attacks.canary_search): achieved displacement against the bounds")
    for column in ("pipeline", "quantity", "value"):
        table.add_column(column)
    for name, rows in CANARY_ROWS.items():
        if name not in audits:
            continue
        measurements = audits[name].measurements
        for label, key in rows:
            if key in measurements:
                table.add_row(name, label, f"{measurements[key]:.4g}")
        audit = audits[name]
        if audit.mu_lb is not None and CANARY_MU[name] in measurements:
            # What the statistic loses on this pair: the μ the N releases certify against the pair's own μ.
            table.add_row(name, "μ_lb / canary μ (the statistic's share at N releases)",
                          f"{audit.mu_lb / (measurements[CANARY_MU[name]] * audit.mu_claimed):.4g}")
        # The canary audits' GDP bound holds only under the GDP-shape assumption: said beside the number.
        label = "eps_lb (GDP-shape assumption) / claimed ε" if audit.method == "gdp" else "eps_lb / claimed ε"
        table.add_row(name, label, f"{audit.eps_lb:.4g} / {audit.eps_claimed:.4g}")
    console.print(table)


def shadow_table(seed: int, num_shadows: int, pool: int, console: Console) -> None:
    data = load_dataset("digits")
    rng = np.random.default_rng(seed)
    rows = rng.choice(len(data), pool, replace=False)
    scaled = data.features[rows] / 16.0
    features = dpmech.clip_features(scaled / np.max(np.linalg.norm(scaled, axis=1)), 1.0)
    labels = data.labels[rows]

    # One small fit first, so that torch's one-off start-up cost is not counted against the batch.
    shadow_head_confidences(features[:50], labels[:50], 4, 10, REGULARIZATION, np.random.default_rng(seed))
    start = time.perf_counter()
    _, membership = shadow_head_confidences(features, labels, num_shadows, 10, REGULARIZATION, np.random.default_rng(seed))
    batched_seconds = time.perf_counter() - start
    batched = BatchedLogisticRegression(regularization=REGULARIZATION, num_classes=10).fit(features, labels, membership)

    start = time.perf_counter()
    looped = np.stack([
        LogisticRegressionTrainer(regularization=REGULARIZATION, num_classes=10).fit(features[mask], labels[mask]).parameters_
        for mask in membership
    ])
    sklearn_seconds = time.perf_counter() - start
    difference = float(np.max(np.abs(batched.parameters_.cpu().numpy() - looped)))

    table = Table(title=f"Shadow heads: {num_shadows} multinomial heads (10 classes, d = 64, λ = {REGULARIZATION}) "
                        f"on halves of {pool} records")
    for column in ("trainer", "seconds", "heads / s", "speed-up"):
        table.add_column(column)
    table.add_row("batched (torch, shadow_head_confidences)", f"{batched_seconds:.2f}",
                  f"{num_shadows / batched_seconds:.1f}", f"{sklearn_seconds / batched_seconds:.1f}×")
    table.add_row("scikit-learn loop (LogisticRegressionTrainer)", f"{sklearn_seconds:.2f}",
                  f"{num_shadows / sklearn_seconds:.1f}", "1.0×")
    console.print(table)
    console.print(f"largest |parameter difference| batched vs scikit-learn: {difference:.2e}")


def main(seed: int = 0, num_shadows: int = 32, pool: int = 600, *, pipelines=PIPELINES, trials: int = 10_000,
         multinomial_bound: str = dpmech.sensitivity.TIGHT_BOUND) -> None:
    console = Console()
    audits = pipeline_table(seed, console, pipelines=pipelines, trials=trials, multinomial_bound=multinomial_bound)
    canary_table(audits, console)
    if num_shadows > 0:
        shadow_table(seed, num_shadows, pool, console)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shadows", type=int, default=32)
    parser.add_argument("--pool", type=int, default=600)
    parser.add_argument("--pipelines", nargs="+", choices=PIPELINES, default=list(PIPELINES))
    parser.add_argument("--trials", type=int, default=10_000, help="canary releases per side for FedAUXfdp and DP-Helmet")
    parser.add_argument("--multinomial-bound", choices=dpmech.sensitivity.MULTINOMIAL_BOUNDS,
                        default=FedAuxFdpConfig.multinomial_bound,
                        help="FedAUXfdp's class-head sensitivity bound (default: the pipeline's own)")
    arguments = parser.parse_args()
    main(arguments.seed, arguments.shadows, arguments.pool, pipelines=arguments.pipelines, trials=arguments.trials,
         multinomial_bound=arguments.multinomial_bound)
