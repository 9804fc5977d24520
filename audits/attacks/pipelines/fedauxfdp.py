"""Auditing FedAUXfdp: a white-box canary on one client's two released heads, and LiRA on its class head.

Canary (certified under the GDP assumption). The audited client's records are
replaced in one place by a canary at the public norm bound pointing against
the record it replaces, with another label (replace-one, the relation of the
claim). Both heads are trained on the two neighbouring datasets by the
pipeline's own :func:`trainers.pipelines.fedauxfdp.train_client_heads`; the
release is then sampled, not retrained: the client sends the scoring head
plus N(0, σ_s² I) and the class head plus N(0, σ_c² I), and dividing each by
its σ maps that release one-to-one onto (θ_s/σ_s, θ_c/σ_c) + N(0, I). So the
audit draws that whitened release around the two worlds and bounds μ with
the GDP estimator; the claim is μ = √((Δ_s/σ_s)² + (Δ_c/σ_c)²), the tight
composition the pipeline reports. A trained pair lies inside the sensitivity
bound, so ε_lb sits below ε even for a correct implementation; the record
states how far inside (``measurements``).

LiRA (an estimate). Natural records: the client's own records (members of its
class head) and as many test records. Shadow class heads are trained in one
batch on Bernoulli(½) halves of that pool by the torch batched LR and
released through the client's own mechanism (σ_c), then scored by LiRA
online with the leave-one-out evaluation.
"""

from __future__ import annotations

import math

import numpy as np

import dpmech
from dpmech import validation as check
from trainers.data import PrivateData
from trainers.pipelines.fedauxfdp import FedAuxFdpConfig, client_settings, prepare_round, train_client_heads

from ...gdp import epsilon_from_gdp
from ...lira import leave_one_out_scores
from ..gaussian_output import gaussian_output_scores
from ..shadow_heads import shadow_head_confidences
from ..threat_model import WHITE_BOX, ThreatModel
from .record import PipelineAudit, audit_generator, audit_inputs, mia_summary


def replace_with_canary(local: PrivateData, index: int, feature_bound: float, num_classes: int) -> PrivateData:
    """``local`` with record ``index`` replaced by a canary at the norm bound, opposite in direction, another label."""
    features = local.features.copy()
    labels = local.labels.copy()
    original = features[index]
    norm = float(np.linalg.norm(original))
    direction = -original / norm if norm > 0 else np.eye(features.shape[1])[0]
    features[index] = dpmech.clip_features(feature_bound * direction[None, :], feature_bound)[0]
    labels[index] = (labels[index] + num_classes // 2) % num_classes
    return PrivateData(features, labels)


def audit_fedauxfdp(data, config: FedAuxFdpConfig = FedAuxFdpConfig(), seed: int = 0, *, trials: int = 10_000,
                    num_shadows: int = 64, alpha: float = 0.05, device: str = "cpu") -> PipelineAudit:
    """Audit the FedAUXfdp round that ``run_fedauxfdp(data, config, seed)`` runs (see the module docstring).

    The audited client is the one with the most records; everything random derives from ``seed``.
    """
    config, seed, trials = audit_inputs(config, FedAuxFdpConfig, seed, trials, 100)
    num_shadows = check.integer_scalar("num_shadows", num_shadows, 8)
    rng = audit_generator(seed, 1)
    prepared = prepare_round(data, config, seed)
    settings = client_settings(config, prepared.num_classes)
    sets = prepared.features
    client = int(np.argmax(np.bincount(prepared.assignment, minlength=config.num_clients)))
    local = sets.private.subset(np.flatnonzero(prepared.assignment == client))
    neighbour = replace_with_canary(local, 0, config.feature_bound, prepared.num_classes)
    without = train_client_heads(local, sets.negative.features, settings)
    with_canary = train_client_heads(neighbour, sets.negative.features, settings)

    noisy = math.isfinite(config.score_epsilon) and math.isfinite(config.class_epsilon)
    measurements = {
        "client": client,
        "client_records": without.num_records,
        "canary_score_distance_over_bound": float(
            np.linalg.norm(with_canary.score_head - without.score_head) / without.score_sensitivity),
        "canary_class_distance_over_bound": float(
            np.linalg.norm(with_canary.class_head - without.class_head) / without.class_sensitivity),
    }
    class_mechanism = None
    if noisy:
        score_mechanism = dpmech.GaussianOutputMechanism(without.score_sensitivity, config.score_epsilon,
                                                         config.score_delta, method=config.calibration)
        class_mechanism = dpmech.GaussianOutputMechanism(without.class_sensitivity, config.class_epsilon,
                                                         config.class_delta, method=config.calibration)

        def whitened(heads):
            return np.concatenate([heads.score_head.ravel() / score_mechanism.sigma,
                                   heads.class_head.ravel() / class_mechanism.sigma])

        ledger = dpmech.PrivacyLedger().record(score_mechanism.event).record(class_mechanism.event)
        eps_claimed = ledger.epsilon(config.total_delta).epsilon
        mu_claimed = math.hypot(score_mechanism.event.mu, class_mechanism.event.mu)
        scores = gaussian_output_scores(whitened(without), whitened(with_canary), 1.0, trials, rng)
        result = epsilon_from_gdp(scores, alpha=alpha, delta=config.total_delta)
        eps_lb, mu_lb, method, valid_as = result.eps_lb, result.mu_lb, result.method, result.valid_as
    else:
        eps_claimed, mu_claimed, result, scores = math.inf, None, None, None
        eps_lb, mu_lb, method, valid_as = 0.0, None, "none", "estimate"

    pool_test = sets.test.subset(rng.choice(len(sets.test), min(len(sets.test), without.num_records), replace=False))
    pool_features = np.vstack([local.features, pool_test.features])
    pool_labels = np.concatenate([local.labels, pool_test.labels])
    confidences, membership = shadow_head_confidences(
        pool_features, pool_labels, num_shadows, prepared.num_classes, config.class_regularization, rng,
        mechanism=class_mechanism, device=device,
    )
    _, lira_scores = leave_one_out_scores(confidences, membership, mode="online")
    mia = mia_summary(f"LiRA online, {num_shadows} shadow class heads, leave-one-out", lira_scores)

    notes = [
        f"Canary: record 0 of client {client} replaced by a feature at the norm bound {config.feature_bound:g}, "
        "opposite to it, with another label (replace-one).",
        "The canary audit samples the released heads around the two trained worlds; the trained pair sits "
        "inside the sensitivity bound (see measurements), so eps_lb is below the claim even when the code is right.",
        "LiRA scores of natural records (members of the class head vs test records) are not independent trials: "
        "AUC and TPR are estimates.",
    ]
    if not noisy:
        notes.append("A head is released without noise (ε = ∞): there is no guarantee to audit; only LiRA runs.")
    return PipelineAudit(
        pipeline="fedauxfdp",
        claim=f"one record of client {client}, replace-one: scoring head + class head, tight composition",
        eps_claimed=eps_claimed,
        delta=config.total_delta,
        eps_lb=eps_lb,
        method=method,
        valid_as=valid_as,
        alpha=alpha,
        mu_claimed=mu_claimed,
        mu_lb=mu_lb,
        mia=mia,
        threat_model=ThreatModel(WHITE_BOX, "record at the norm bound, opposite direction, other label", 1,
                                 trials_per_side=trials),
        measurements=measurements,
        notes=tuple(notes),
        result=result,
        scores=scores if scores is not None else lira_scores,
    )
