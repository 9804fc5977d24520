"""Auditing FedMD-NFDP: a canary record added to one party, R independent private trainings per world.

Claim audited: the pipeline's ``party_guarantee(n, config)`` (NFDP, Sun & Lyu 2021, Theorem 1 or 2) for the
party with the fewest records (the pipeline's worst party), under add/remove-one with n the size
of the smaller dataset. Everything the party releases is a function of its subsample, so the
claim covers the party's trained model too; the audit looks at that model (white-box), which is
within the claim's scope and gives the strongest test.

Canary: one record the party's data does not resemble: a checkerboard at the data's maximum
value, labelled with the party's rarest class. World IN is the party's data plus the canary
(n + 1 records), world OUT the data alone (n records). Each of R runs per world is an
independent run of the pipeline's own initial phase
(:func:`trainers.pipelines.fedmd_nfdp.initial_phase`: transfer learning on the public set, a
fresh ``dpmech.mechanisms.nfdp_subsample``, T1 epochs on it) from its own seed; the score is the trained
model's log-probability of the canary's label on the canary (a negative loss: higher means IN).
The collaboration rounds only revisit the same subsample and are left out: the claim already
fails to exclude what the initial phase reveals.

Two bounds from the same scores, both Clopper–Pearson with Bonferroni threshold selection
(certified: the runs are independent):

* at the claimed δ = k/n (or 1 − ((n−1)/n)^k): the claim is valid, so the bound cannot exceed it;
  the canary is disclosed only when sampled, with probability about k/(n+1) <= δ.
* at a meaningful δ = 1/(10 n): when sampled, the canary is learnt (TPR ≈ P[sampled] at FPR ≈ 0),
  so ε must be large; the claimed ε does not hold with any δ that is small against 1/n. That is
  the vacuity of the guarantee (:mod:`dpmech.nfdp`): its whole content sits in δ >= 1/n.
"""

from __future__ import annotations

import numpy as np

from trainers import networks
from trainers.data import split_federated
from trainers.federation import run_clients
from trainers.pipelines import fedmd_nfdp as pipeline
from trainers.pipelines.fedmd_nfdp import FedMdNfdpConfig
from trainers.pipelines.registry import get_pipeline

from ...epsilon_bounds import epsilon_lower_bound
from ...loss import negative_loss
from ...scores import AuditScores
from ..threat_model import WHITE_BOX, ThreatModel
from .record import PipelineAudit, audit_inputs, mia_summary

MEANINGFUL_DELTA_FACTOR = 0.1  # the meaningful δ is this fraction of 1/n


def nfdp_canary(features: np.ndarray, labels: np.ndarray, num_classes: int):
    """A checkerboard at the data's maximum value, labelled with the rarest class among ``labels``."""
    width = features.shape[1]
    pattern = (np.arange(width) + np.arange(width) // max(int(round(np.sqrt(width))), 1)) % 2
    canary = np.where(pattern == 1, float(np.max(features)), float(np.min(features)))
    label = int(np.argmin(np.bincount(labels, minlength=num_classes)))
    return canary, label


def _canary_run(features, labels, public_features, public_labels, canary, canary_label, party, config, torch_threads,
                rng):
    """One independent initial phase of ``party``; (score of the canary, whether the canary was sampled)."""
    with networks.torch_threads(torch_threads):
        _, subsample, logits = pipeline.initial_phase(features, labels, public_features, public_labels, canary[None, :],
                                              party, config, "cpu", rng)
    canary_index = features.shape[0] - 1
    return float(negative_loss(logits, np.array([canary_label]))[0]), bool(np.any(subsample == canary_index))


def audit_fedmd_nfdp(data, config: FedMdNfdpConfig | None = None, seed: int = 0, *, trials: int = 150,
                     alpha: float = 0.05, n_jobs: int | None = None, torch_threads: int = 1) -> PipelineAudit:
    """Audit the NFDP guarantee of the worst party of ``run_fedmd_nfdp(split_federated(data, seed), config, seed)``.

    Args:
        data: a :class:`trainers.data.LabelledData`, split by ``split_federated(data, seed)`` as for the run.
        config: :class:`FedMdNfdpConfig` (default: its defaults).
        seed: root seed; the party partition is the pipeline's, the runs' seeds derive from it.
        trials: R, independent private trainings per world (2R in all: the expensive step).
        alpha: significance of both bounds.
        n_jobs: joblib workers for the runs (None: the active joblib configuration).
        torch_threads: torch threads per run.

    Returns:
        :class:`PipelineAudit` whose ``eps_lb`` is the bound at the claimed δ; ``measurements`` hold
        the bound at δ = 1/(10 n) and how often the canary was sampled.
    """
    config, seed, trials = audit_inputs(config, FedMdNfdpConfig, seed, trials, 10)
    split = split_federated(data, seed)
    public = split.distillation
    # Refused before any training, as by the run: every party's first step trains on the public labels.
    public_labels = public.required_labels(get_pipeline("fedmd-nfdp").public_labels_use)
    clients = pipeline.party_datasets(split, config, seed)
    party = int(np.argmin([len(client) for client in clients]))
    local = clients[party]
    n = len(local)
    if not config.replacement and config.subsample_size > n:
        raise ValueError(f"subsample_size must be <= the audited party's record count {n} without replacement "
                         f"(got {config.subsample_size})")
    claim = pipeline.party_guarantee(n, config)
    canary, canary_label = nfdp_canary(split.private.features, local.labels, config.num_classes)
    worlds = {
        "in": (np.vstack([local.features, canary[None, :]]), np.append(local.labels, canary_label)),
        "out": (local.features, local.labels),
    }
    runs_seed = np.random.SeedSequence([seed, 2])
    arguments = [(*worlds[world], public.features, public_labels, canary, canary_label, party, config,
                  torch_threads)
                 for world in ("in", "out") for _ in range(trials)]
    outcomes = run_clients(_canary_run, arguments, runs_seed, n_jobs=n_jobs)
    score_values = np.array([score for score, _ in outcomes])
    sampled = np.array([was_sampled for _, was_sampled in outcomes[:trials]])
    scores = AuditScores(score_values[:trials], score_values[trials:], trials="independent")

    at_claim = epsilon_lower_bound(scores, alpha=alpha, delta=claim.delta)
    meaningful_delta = MEANINGFUL_DELTA_FACTOR / n
    at_meaningful = epsilon_lower_bound(scores, alpha=alpha, delta=meaningful_delta)
    sampled_scores = scores.in_scores[sampled]
    measurements = {
        "party": party,
        "party_records": n,
        "architecture": config.architecture(party),
        "subsample_size": config.subsample_size,
        "replacement": config.replacement,
        "runs_per_world": trials,
        "canary_label": canary_label,
        "canary_sampled_runs": int(sampled.sum()),
        "canary_sampling_probability": config.subsample_size / (n + 1) if not config.replacement
        else float(-np.expm1(config.subsample_size * np.log1p(-1.0 / (n + 1)))),
        "fraction_of_sampled_runs_above_every_out_score": float(np.mean(sampled_scores > scores.out_scores.max()))
        if sampled_scores.size else 0.0,
        "delta_claimed": claim.delta,
        "eps_lb_at_claimed_delta": at_claim.eps_lb,
        "meaningful_delta": meaningful_delta,
        "eps_lb_at_meaningful_delta": at_meaningful.eps_lb,
        "eps_lb_at_meaningful_delta_valid_as": at_meaningful.valid_as,
    }
    refuted = at_meaningful.eps_lb > claim.epsilon
    notes = (
        f"Canary: a checkerboard at the data's maximum value with the party's rarest label {canary_label}, added to "
        f"party {party} (n = {n}); {trials} independent initial phases per world, fresh NFDP subsample each.",
        f"At the claimed δ = {claim.delta:.4g} the bound is ε_lb = {at_claim.eps_lb:.4g} <= claimed ε = "
        f"{claim.epsilon:.4g}: the audit cannot refute the claim, which is valid (the canary leaks only when "
        f"sampled, with probability about {measurements['canary_sampling_probability']:.3g} <= δ).",
        f"At a meaningful δ = 1/(10n) = {meaningful_delta:.3g} the same scores give ε_lb = {at_meaningful.eps_lb:.4g} "
        + (f"> claimed ε = {claim.epsilon:.4g}: when sampled the canary is learnt and exposed "
           f"({measurements['fraction_of_sampled_runs_above_every_out_score']:.0%} of the sampled runs score above "
           "every OUT run), so the claimed ε holds only with δ >= 1/n: the claim is true and vacuous."
           if refuted else
           f"<= claimed ε = {claim.epsilon:.4g}: these runs do not show the vacuity at δ = 1/(10n) (too few runs "
           "or the canary is not learnt when sampled); the claim's δ >= 1/n remains vacuous by construction "
           "(dpmech.nfdp)."),
        claim.warning,
    )
    return PipelineAudit(
        pipeline="fedmd-nfdp",
        claim=f"NFDP Theorem {2 if config.replacement else 1}: one record of party {party} (n = {n}, "
              f"k = {config.subsample_size}), add/remove-one, (ε, δ) = ({claim.epsilon:.4g}, {claim.delta:.4g})",
        eps_claimed=claim.epsilon,
        delta=claim.delta,
        alpha=alpha,
        mu_claimed=None,
        mia=mia_summary("white-box canary: log-probability of the canary's label", scores),
        threat_model=ThreatModel(WHITE_BOX, "added checkerboard record with the party's rarest label", 2 * trials,
                                 trials_per_side=trials),
        measurements=measurements,
        notes=notes,
        result=at_claim,
        scores=scores,
    )
