"""Auditing Distributed DP-Helmet: a canary user through blind averaging.

Two neighbouring worlds differ in user 0's data: one record replaced by a
canary at the norm bound with another label (record-level claim), or every
record's label shifted (user-level claim). User 0's PSGD model is trained
on both with the same PSGD randomness, as the bolt-on sensitivity bound
assumes. The other users' models are the same in both worlds and shift both
averages equally, so they drop out of the projection statistic and need not
be trained. The blind average's noise, √|U|·σ_u/|U| with the σ_u the pipeline
calibrates, is then sampled around the two averages
(:func:`~audits.attacks.averaging_canary.averaging_canary_scores`), and the
GDP estimator bounds μ against the claimed μ = s/σ of the sum.
"""

from __future__ import annotations

import math

import numpy as np

from dpmech import PrivacyLedger
from trainers.data import PrivateData
from trainers.pipelines.dphelmet import USER, DpHelmetConfig, _trainer, prepare_users

from ...gdp import epsilon_from_gdp
from ..averaging_canary import averaging_canary_scores
from ..threat_model import WHITE_BOX, ThreatModel
from .fedauxfdp import replace_with_canary
from .record import PipelineAudit, audit_generator, audit_inputs, mia_summary


def audit_dphelmet(data, config: DpHelmetConfig = DpHelmetConfig(), seed: int = 0, *, trials: int = 10_000,
                   alpha: float = 0.05) -> PipelineAudit:
    """Audit the DP-Helmet round that ``run_dphelmet(data, config, seed)`` runs (see the module docstring)."""
    config, seed, trials = audit_inputs(config, DpHelmetConfig, seed, trials, 100)
    rng = audit_generator(seed, 1)
    prepared = prepare_users(data, config, seed)
    local = prepared.local(0)
    if config.privacy_unit == USER:
        neighbour = PrivateData(local.features, (local.labels + 1) % prepared.num_classes)
        canary = "user 0's whole dataset relabelled (every label shifted by one)"
    else:
        neighbour = replace_with_canary(local, 0, config.feature_bound, prepared.num_classes)
        canary = "one record of user 0 at the norm bound, opposite direction, other label"
    trainer_seed = int(rng.integers(2**62))
    model_without = _trainer(config, prepared.num_classes, trainer_seed).train(local.features, local.labels)
    model_with = _trainer(config, prepared.num_classes, trainer_seed).train(neighbour.features, neighbour.labels)
    distance = float(np.linalg.norm(model_with - model_without))
    measurements = {"canary_distance_over_local_sensitivity": distance / prepared.sensitivity,
                    "num_users": config.num_users, "user_noise_std": prepared.settings.user_noise_std}

    models_without = np.zeros((config.num_users,) + model_without.shape)
    models_with = models_without.copy()
    models_without[0], models_with[0] = model_without, model_with
    user_noise_std = prepared.settings.user_noise_std
    if user_noise_std > 0:
        event = prepared.settings.event
        eps_claimed = PrivacyLedger().record(event).epsilon(config.delta).epsilon
        scores = averaging_canary_scores(models_without, models_with, user_noise_std, trials, rng)
        result = epsilon_from_gdp(scores, alpha=alpha, delta=config.delta)
        eps_lb, mu_lb, mu_claimed, method, valid_as = result.eps_lb, result.mu_lb, event.mu, result.method, result.valid_as
        mia = mia_summary("white-box projection on the canary user's direction", scores)
    else:
        eps_claimed, mu_claimed, result, mu_lb, method, valid_as, eps_lb = math.inf, None, None, None, "none", "estimate", 0.0
        scores = averaging_canary_scores(models_without, models_with, 1e-12, trials, rng)
        mia = mia_summary("white-box projection, no noise", scores)
    notes = [
        f"Canary: {canary}; PSGD randomness shared between the two worlds.",
        "Every user is taken to be honest in the sampled run (each adds σ_u); with dishonest users the "
        "guarantee still holds through the honest fraction t, and this run is noisier than the worst case.",
        "Other users' models cancel in the projection statistic and are not trained.",
    ]
    return PipelineAudit(
        pipeline="dphelmet",
        claim=("one user's whole dataset" if config.privacy_unit == USER else "one record of one user")
        + ", replace-one, through the blind average",
        eps_claimed=eps_claimed,
        delta=config.delta,
        eps_lb=eps_lb,
        method=method,
        valid_as=valid_as,
        alpha=alpha,
        mu_claimed=mu_claimed,
        mu_lb=mu_lb,
        mia=mia,
        threat_model=ThreatModel(WHITE_BOX, canary, 1, trials_per_side=trials),
        measurements=measurements,
        notes=tuple(notes),
        result=result,
        scores=scores,
    )
