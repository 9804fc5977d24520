"""Auditing Distributed DP-Helmet: a canary user through blind averaging, sampled through the pipeline's release step.

Two neighbouring worlds differ in user 0's data: one record replaced by a
canary at the norm bound with another label (record-level claim), or every
record's label shifted (user-level claim). User 0's PSGD model is trained
on both with the pipeline's own :func:`~trainers.pipelines.dphelmet.user_trainer`
and the same PSGD randomness, as the bolt-on sensitivity bound assumes. The
other users' models are the same in both worlds and shift both averages
equally, so they drop out of the projection statistic and are taken as 0.
Every user's message is then drawn by the pipeline's release step
:func:`~trainers.pipelines.dphelmet.release_user_model` and the server's
:func:`~trainers.pipelines.dphelmet.secure_average` forms the released
average; the claim (ε, δ, μ) is read from the ledger of the messages' own
events.

Statistics: the GDP estimator on the projection of the released averages
on the direction between the two worlds (certified under the GDP
assumption), and two release checks against the blind-averaging event
(certified or exact): the realised noise scale of the average
(:func:`audits.noise_scale.check_noise_scale`; with every user honest it
must be at least the event's σ, the honest users' noise) and the displacement
of the two worlds' averages against the event's sensitivity. α is split
evenly between the GDP bound and the noise-scale bound.
"""

from __future__ import annotations

import math

import numpy as np

from trainers.data import PrivateData
from trainers.federation import ledger_from_messages
from trainers.pipelines import dphelmet as pipeline
from trainers.pipelines.dphelmet import USER, DpHelmetConfig

from ...gdp import epsilon_from_gdp
from ...noise_scale import check_noise_scale
from ..threat_model import WHITE_BOX, ThreatModel
from .fedauxfdp import replace_with_canary
from .record import PipelineAudit, audit_generator, audit_inputs, displacement_check, mia_summary, projected_scores


def audit_dphelmet(data, config: DpHelmetConfig = DpHelmetConfig(), seed: int = 0, *, trials: int = 10_000,
                   alpha: float = 0.05) -> PipelineAudit:
    """Audit the DP-Helmet round that ``run_dphelmet(data, config, seed)`` runs (see the module docstring)."""
    config, seed, trials = audit_inputs(config, DpHelmetConfig, seed, trials, 100)
    rng = audit_generator(seed, 1)
    prepared = pipeline.prepare_users(data, config, seed)
    local = prepared.local(0)
    if config.privacy_unit == USER:
        neighbour = PrivateData(local.features, (local.labels + 1) % prepared.num_classes)
        canary = "user 0's whole dataset relabelled (every label shifted by one)"
    else:
        neighbour = replace_with_canary(local, 0, config.feature_bound, prepared.num_classes)
        canary = "one record of user 0 at the norm bound, opposite direction, other label"
    trainer_seed = int(rng.integers(2**62))
    model_without = pipeline.user_trainer(config, prepared.num_classes, trainer_seed).train(local.features, local.labels)
    model_with = pipeline.user_trainer(config, prepared.num_classes, trainer_seed).train(neighbour.features, neighbour.labels)
    distance = float(np.linalg.norm(model_with - model_without))
    measurements = {"canary_distance_over_local_sensitivity": distance / prepared.sensitivity,
                    "num_users": config.num_users, "user_noise_std": prepared.settings.user_noise_std}

    models_without = np.zeros((config.num_users,) + model_without.shape)
    models_with = models_without.copy()
    models_without[0], models_with[0] = model_without, model_with
    settings = prepared.settings

    def released_averages(models):
        averages, messages = [], []
        for _ in range(trials):
            messages = [pipeline.release_user_model(user, models[user], settings, rng) for user in range(config.num_users)]
            averages.append(pipeline.secure_average(messages))
        return np.stack(averages), messages

    out_averages, messages = released_averages(models_without)
    in_averages, _ = released_averages(models_with)
    scores = projected_scores(out_averages, in_averages, models_without.mean(axis=0), models_with.mean(axis=0))
    release_checks = {}
    if settings.user_noise_std > 0:
        (event,) = messages[0].events
        check_alpha = alpha / 2
        eps_claimed = ledger_from_messages(messages).epsilon(config.delta).epsilon
        result = epsilon_from_gdp(scores, alpha=check_alpha, delta=config.delta)
        eps_lb, mu_lb, mu_claimed, method, valid_as = result.eps_lb, result.mu_lb, event.mu, result.method, result.valid_as
        mia = mia_summary("white-box projection on the canary user's direction", scores)
        release_checks = {
            "average_noise_scale": check_noise_scale(out_averages, models_without.mean(axis=0), event.sigma,
                                                     alpha=check_alpha).as_dict(),
            "average_sensitivity": displacement_check(models_without.mean(axis=0), models_with.mean(axis=0),
                                                      event.sensitivity),
        }
    else:
        eps_claimed, mu_claimed, result, mu_lb, method, valid_as, eps_lb = math.inf, None, None, None, "none", "estimate", 0.0
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
        release_checks=release_checks,
    )
