"""Auditing Distributed DP-Helmet: a canary user through blind averaging, sampled through the pipeline's release step.

Two neighbouring worlds differ in user 0's data: the neighbour that moves
user 0's PSGD model furthest, found by :func:`search_dphelmet_canary` (record
level: influence proposals at the trained Softmax-SLP model and plain
proposals at the norm bound with every other label; user level: relabellings,
with and without negated features), each retrained exactly with the
pipeline's own :func:`~trainers.pipelines.dphelmet.user_trainer` and the same
PSGD randomness, as the bolt-on sensitivity bound assumes. The search fixes
the pair before any release is drawn, from its own random stream, so the
releases stay independent draws of the two fixed worlds and the GDP bound
stays certified (:mod:`audits.attacks.canary_search`). The
other users' models are the same in both worlds and shift both averages
equally, so they drop out of the projection statistic and are taken as 0.
Every user's message is then drawn by the pipeline's release step
:func:`~trainers.pipelines.dphelmet.release_user_model` and the server's
:func:`~trainers.pipelines.dphelmet.secure_average` forms the released
average; the claim (ε, δ, μ) is read from the ledger of the messages' own
events.

Threat model: the claim holds with only ⌈t|U|⌉ honest users, whatever the
others do, so the audit lets the other users (not user 0) collude with the
server and reveal their noise shares; the auditor subtracts them from each
released average, leaving exactly the honest noise the event's σ accounts for.

Every user's release step is called on its model stacked once per release, in
blocks: it adds independent noise to every coordinate, so each row is an
independent release and N releases cost N/block calls per user.

Statistics: the GDP estimator on the projection of the released averages
(colluders' shares removed) on the direction between the two worlds, at the
one rule "IN if the projection exceeds half the distance", fixed by the pair
before any release is drawn (:func:`~audits.attacks.pipelines.record.gdp_bound_at_midpoint`;
certified under the GDP assumption: for a fixed pair the scores are
independent draws of the two hypotheses), and two release checks against the blind-averaging event
(certified or exact): the realised noise scale of the average
(:func:`audits.noise_scale.check_noise_scale`; with every user honest it
must be at least the event's σ, the honest users' noise) and the displacement
of the two worlds' averages against the event's sensitivity. α is split
evenly between the GDP bound and the noise-scale bound.

With client selection (``clients_per_round`` or ``participation_probability``) the claim is the
amplified one and :func:`audit_selected_round` samples the selection in every trial: the released
law is then a mixture of Gaussians, and the bound is the assumption-free Clopper–Pearson one at a
threshold planned before any release is drawn (:func:`planned_threshold`).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

import dpmech
from dpmech import ADD_REMOVE_ONE, PrivacyLedger
from dpmech import validation as check
from dpmech.client_selection import client_selection_event
from dpmech.statistics import clopper_pearson_upper
from trainers.data import LabelledData, PrivateData
from trainers.federation import ledger_from_messages
from trainers.pipelines import dphelmet as pipeline
from trainers.pipelines.dphelmet import USER, DpHelmetConfig
from trainers.psgd import SOFTMAX

from ...epsilon_bounds import epsilon_from_error_rates, epsilon_lower_bound
from ...noise_scale import check_noise_scale
from ..canary_search import (LogisticHead, SearchResult, plain_canaries, retrain_best, search_logistic_canaries,
                             user_relabellings)
from ..threat_model import WHITE_BOX, ThreatModel
from .record import (
    RELEASE_BLOCK_ELEMENTS,
    PipelineAudit,
    audit_generator,
    audit_inputs,
    displacement_check,
    gdp_bound_at_midpoint,
    mia_summary,
    projected_scores,
)


@dataclass(frozen=True)
class DpHelmetCanary:
    """The searched neighbour of user 0 and the two worlds' PSGD models (same shuffles)."""

    description: str
    result: SearchResult
    model_without: np.ndarray
    model_with: np.ndarray


def search_dphelmet_canary(local: PrivateData, config: DpHelmetConfig, num_classes: int, trainer_seed: int,
                           rng: np.random.Generator) -> DpHelmetCanary:
    """The neighbour of user 0's data that moves its PSGD model furthest, by exact retraining.

    Record level: influence proposals at the trained model for Softmax-SLP (whose PSGD
    approximates the multinomial objective with λ = Λ) and plain proposals (a record's opposite
    and own direction at the bound, every other label), each retrained with the user's PSGD and
    the same shuffles (``trainer_seed``), as the bolt-on bound assumes. User level: the
    relabellings of :func:`audits.attacks.canary_search.user_relabellings`. Soundness: the search
    fixes the pair before any release is drawn (:mod:`audits.attacks.canary_search`).
    """
    def train(data):
        with pipeline._one_torch_thread():
            return pipeline.user_trainer(config, num_classes, trainer_seed).train(data.features, data.labels)

    model_without = train(local)
    if config.relation == ADD_REMOVE_ONE:
        # Add/remove-one users: the other world lacks user 0, so its model is absent (0) and the furthest
        # neighbour is the dataset, the user's own or a relabelling, whose model is longest.
        proposals = [("user 0's own data", local)] + user_relabellings(local, model_without, config.feature_bound,
                                                                       num_classes)
        trained = {}

        def model_norm(proposal):
            trained[id(proposal)] = train(proposal[1])
            return float(np.linalg.norm(trained[id(proposal)]))

        result = retrain_best(proposals, model_norm)
        return DpHelmetCanary(f"user 0 present with {result.canary[0]} or absent, the longest model of "
                              f"{result.retrained} exactly retrained datasets", result,
                              np.zeros_like(model_without), trained[id(result.canary)])
    if config.privacy_unit == USER:
        proposals = user_relabellings(local, model_without, config.feature_bound, num_classes)
    else:
        proposals = plain_canaries(local, config.feature_bound, num_classes, num_records=1)
        if config.model == SOFTMAX:
            head = LogisticHead(model_without, local.features, local.labels, config.regularization, 1.0)
            proposals = search_logistic_canaries([head], local, config.feature_bound, num_classes, rng) + proposals
    models = {}

    def displacement(proposal):
        neighbour = proposal[1] if config.privacy_unit == USER else proposal.neighbour(local)
        models[id(proposal)] = train(neighbour)
        return float(np.linalg.norm(models[id(proposal)] - model_without))

    result = retrain_best(proposals, displacement)
    if config.privacy_unit == USER:
        description = f"user 0's whole dataset replaced: {result.canary[0]}"
    else:
        description = (f"record {result.canary.index} of user 0 replaced by a feature of norm "
                       f"{np.linalg.norm(result.canary.feature):.4g} with label {result.canary.label} "
                       f"({result.canary.kind} proposal)")
    return DpHelmetCanary(description + f", the furthest of {result.retrained} exactly retrained proposals",
                          result, model_without, models[id(result.canary)])


def audit_dphelmet(data, config: DpHelmetConfig = DpHelmetConfig(), seed: int = 0, *, trials: int = 10_000,
                   alpha: float = 0.05) -> PipelineAudit:
    """Audit the DP-Helmet round that ``run_dphelmet(data, config, seed)`` runs (see the module docstring);
    with client selection, :func:`audit_selected_round`."""
    config, seed, trials = audit_inputs(config, DpHelmetConfig, seed, trials, 100)
    if config.selection is not None:
        return audit_selected_round(data, config, seed, trials, alpha)
    rng = audit_generator(seed, 1)
    prepared = pipeline.prepare_users(data, config, seed)
    local = prepared.local(0)
    trainer_seed = int(rng.integers(2**62))
    search = search_dphelmet_canary(local, config, prepared.num_classes, trainer_seed, audit_generator(seed, 2))
    model_without, model_with = search.model_without, search.model_with
    canary = search.description
    measurements = {"canary_distance_over_local_sensitivity": search.result.displacement / prepared.sensitivity,
                    "canary_proposals_retrained": search.result.retrained,
                    "num_users": config.num_users, "user_noise_std": prepared.settings.user_noise_std}
    measurements["honest_users"] = min(config.num_users, math.ceil(config.honest_fraction * config.num_users))
    models_without = np.zeros((config.num_users,) + model_without.shape)
    models_with = models_without.copy()
    models_without[0], models_with[0] = model_without, model_with
    settings = prepared.settings

    # The claim holds with only ⌈t|U|⌉ honest users; the others may collude with the server and
    # reveal their noise shares, which the auditor then subtracts from the released average.
    honest_users = measurements["honest_users"]

    block = max(1, RELEASE_BLOCK_ELEMENTS // (model_without.size * config.num_users))

    def released_blocks(models):
        """Per block of at most ``block`` releases: (released averages, the same with the colluders' shares
        removed, the users' messages). Each user's release step gets its model stacked once per release: it
        adds independent noise to every coordinate, so each row is an independent release."""
        for start in range(0, trials, block):
            count = min(block, trials - start)
            stacked = np.broadcast_to(models[:, None], (config.num_users, count) + model_without.shape)
            messages = [pipeline.release_user_model(user, stacked[user], settings, rng) for user in range(config.num_users)]
            averages = pipeline.secure_average(messages)
            colluders_noise = sum((messages[user].payload["noisy_model"] - stacked[user]
                                   for user in range(honest_users, config.num_users)),
                                  start=np.zeros(stacked.shape[1:])) / config.num_users
            yield averages, averages - colluders_noise, messages

    out_blocks = released_blocks(models_without)
    # The noise-scale check reads the first block (min(N, block) averages); every block is projected.
    out_averages, first_honest_averages, messages = next(out_blocks)
    centre_without, centre_with = models_without.mean(axis=0), models_with.mean(axis=0)
    scores = projected_scores(itertools.chain([first_honest_averages], (honest for _, honest, _ in out_blocks)),
                              (honest for _, honest, _ in released_blocks(models_with)), centre_without, centre_with)
    release_checks = {}
    if settings.user_noise_std > 0:
        (event,) = messages[0].events
        check_alpha = alpha / 2
        eps_claimed = ledger_from_messages(messages).epsilon(config.delta).epsilon
        result = gdp_bound_at_midpoint(scores, float(np.linalg.norm(centre_with - centre_without)), alpha=check_alpha,
                                       delta=config.delta)
        mu_claimed = event.mu
        # The canary's μ through the average, displacement/|U| against the event's σ (t|U| honest
        # users), and against the noise left in the scored releases (⌈t|U|⌉ honest users, σ_u each).
        # The ε of the latter is what any estimator could reach on this pair with unlimited releases.
        average_displacement = search.result.displacement / config.num_users
        scored_mu = average_displacement / (settings.user_noise_std * math.sqrt(honest_users) / config.num_users)
        measurements["canary_mu_over_claimed_mu"] = average_displacement / event.sigma / event.mu
        measurements["scored_mu_over_claimed_mu"] = scored_mu / event.mu
        measurements["epsilon_of_scored_canary_mu"] = float(dpmech.gaussian_epsilon(config.delta, 1.0, scored_mu))
        mia = mia_summary("white-box projection on the canary user's direction", scores)
        release_checks = {
            "average_noise_scale": check_noise_scale(out_averages, centre_without, event.sigma,
                                                     alpha=check_alpha).as_dict(),
            "average_sensitivity": displacement_check(centre_without, centre_with, event.sensitivity),
        }
    else:
        eps_claimed, mu_claimed, result = math.inf, None, None
        mia = mia_summary("white-box projection, no noise", scores)
    notes = [
        f"Canary: {canary}; PSGD randomness shared between the two worlds.",
        f"Users {honest_users}..{config.num_users - 1} are taken to collude with the server: their noise shares "
        f"are subtracted from each released average before scoring, leaving the ⌈t|U|⌉ = {honest_users} honest "
        "users' noise, the worst case the claim covers. The noise-scale check is on the full average.",
        "Other users' models cancel in the projection statistic and are not trained.",
    ]
    return PipelineAudit(
        pipeline="dphelmet",
        claim=("one user's whole dataset" if config.privacy_unit == USER else "one record of one user")
        + ", replace-one, through the blind average",
        eps_claimed=eps_claimed,
        delta=config.delta,
        alpha=alpha,
        mu_claimed=mu_claimed,
        mia=mia,
        threat_model=ThreatModel(WHITE_BOX, canary, 1, trials_per_side=trials),
        measurements=measurements,
        notes=tuple(notes),
        result=result,
        scores=scores,
        release_checks=release_checks,
    )


def planned_threshold(out_law: tuple[Sequence[float], Sequence[float]], in_law: tuple[Sequence[float], Sequence[float]],
                      noise_std: float, trials: int, *, alpha: float, delta: float) -> float:
    """The one threshold of the rule "IN if score > t", planned before any release is drawn.

    ``out_law`` and ``in_law`` are (weights, centres) of the scores' Gaussian mixtures (common scale
    ``noise_std``), known from the canary pair, the noise and the selection law alone. The threshold
    maximises the ε bound of :func:`audits.epsilon_bounds.epsilon_lower_bound` ("explicit", one threshold:
    Clopper–Pearson bounds at α/2 each, Jagielski, Ullman & Oprea 2020; Kairouz, Oh & Viswanath 2015) that
    the expected counts of ``trials`` draws per side would give, over a grid from the lowest centre − 4σ to
    the highest + 8σ. Planning on expected counts only chooses the rule: the bound itself is then computed
    from the drawn scores, whose law does not enter it."""
    from scipy.stats import norm

    noise_std = float(check.positive("noise_std", noise_std))
    trials = check.integer_scalar("trials", trials, 1)
    alpha = float(check.open_unit_interval("alpha", alpha))
    delta = float(check.in_interval("delta", delta, 0.0, 1.0, low_open=False, high_open=True))
    laws = []
    for name, (weights, centres) in (("out_law", out_law), ("in_law", in_law)):
        weights, centres = np.asarray(weights, dtype=float), np.asarray(centres, dtype=float)
        if (weights.ndim != 1 or weights.shape != centres.shape or not np.all(np.isfinite(centres))
                or np.any(weights < 0) or not math.isclose(float(weights.sum()), 1.0, rel_tol=1e-12)):
            raise ValueError(f"{name} must be (weights, centres): equal-length 1-D arrays, finite centres and "
                             f"weights >= 0 summing to 1 (got {(weights, centres)!r})")
        laws.append((weights, centres))
    (out_weights, out_centres), (in_weights, in_centres) = laws
    centres = np.concatenate([out_centres, in_centres])
    grid = np.linspace(centres.min() - 4.0 * noise_std, centres.max() + 8.0 * noise_std, 2001)
    false_positive_rate = norm.sf((grid[:, None] - out_centres) / noise_std) @ out_weights
    false_negative_rate = norm.cdf((grid[:, None] - in_centres) / noise_std) @ in_weights
    expected = [np.minimum(np.rint(trials * rate), trials) for rate in (false_positive_rate, false_negative_rate)]
    bounds = [clopper_pearson_upper(count, trials, alpha / 2) for count in expected]
    return float(grid[int(np.argmax(epsilon_from_error_rates(*bounds, delta)))])


def audit_selected_round(data: LabelledData, config: DpHelmetConfig, seed: int, trials: int,
                         alpha: float) -> PipelineAudit:
    """Audit a DP-Helmet round with client selection against its amplified claim, sampling the selection.

    The claim is the round's event (:func:`dpmech.client_selection.client_selection_event`): k of |U| users
    (replace-one: user 0 holds its data or the searched neighbour in both worlds) or each user with
    probability q (add/remove-one: user 0, with the dataset of longest model, is present or absent). In each
    trial the users of the round are drawn by the pipeline's :func:`~trainers.pipelines.dphelmet.selection_masks`
    from the audit's Generator, so user 0 takes part with probability k/|U| or q, and the release is formed
    from the users' :func:`~trainers.pipelines.dphelmet.release_user_model` calls: the selected users' sum over
    k, or over q|U| with the shares of :func:`~trainers.pipelines.dphelmet.poisson_settings` for the trial's m
    (an empty round through :func:`~trainers.pipelines.dphelmet.poisson_average`). The auditor sees only the
    released model, the adversary the amplified claim covers (the pipeline's notes): no share is removed.

    The scores (projections on the direction between the two worlds' selected-case centres) are then a
    mixture of Gaussians, not GDP-shaped, so the GDP estimator does not apply: ``eps_lb`` is the Clopper–Pearson
    bound at one threshold planned before any release is drawn (:func:`planned_threshold`), certified for
    independent trials with no assumption on the privacy curve. α is split evenly between it and the noise-scale
    check of the releases' residuals against the selected users' event.
    """
    if config.epsilon == math.inf:
        raise ValueError("config.epsilon must be finite to audit a round with client selection (got ∞: no claim)")
    poisson = config.participation_probability is not None
    rng = audit_generator(seed, 1)
    prepared = pipeline.prepare_users(data, config, seed)
    trainer_seed = int(rng.integers(2**62))
    search = search_dphelmet_canary(prepared.local(0), config, prepared.num_classes, trainer_seed,
                                    audit_generator(seed, 2))
    settings, num_users = prepared.settings, config.num_users
    shape = search.model_without.shape
    # The release is the selected users' sum over this public denominator (secure_average over k, or q|U|).
    denominator = config.poisson_denominator if poisson else config.participants
    law = config.participation_probability if poisson else config.participants / num_users
    models = {side: np.zeros((num_users,) + shape) for side in ("out", "in")}
    models["out"][0], models["in"][0] = search.model_without, search.model_with
    centre_without, centre_with = search.model_without / denominator, search.model_with / denominator
    distance = float(np.linalg.norm(centre_with - centre_without))
    measurements = {"canary_distance_over_local_sensitivity": search.result.displacement / prepared.sensitivity,
                    "canary_proposals_retrained": search.result.retrained, "num_users": num_users,
                    "participation_law": law}
    event = settings.event  # the selected users' release, before the selection's amplification
    # The released noise per coordinate is the same for every selection: k shares of σ_u over k, or
    # (σq|U|)²/t on the sum over q|U| (poisson_settings: one share of a one-user round is all of it).
    noise_std = (pipeline.poisson_settings(settings, 1).user_noise_std / denominator if poisson else
                 settings.user_noise_std * math.sqrt(config.participants) / denominator)
    # The score laws: selected, user 0's centre projects to 0 (OUT) or the distance (IN); not selected, both
    # worlds put the same point (user 0's model absent) at -centre_without·direction.
    direction = (centre_with - centre_without).ravel() / distance
    unselected = float(-centre_without.ravel() @ direction)
    out_law = ([1.0], [0.0]) if poisson else ([law, 1.0 - law], [0.0, unselected])
    in_law = ([law, 1.0 - law], [distance, unselected])
    threshold = planned_threshold(out_law, in_law, noise_std, trials, alpha=alpha / 2, delta=config.delta)
    block = max(1, RELEASE_BLOCK_ELEMENTS // (search.model_without.size * num_users))
    participation = {"out": [], "in": []}
    residual_blocks = []

    def released_blocks(side):
        """Per block of at most ``block`` trials: the released models, each from a freshly drawn selection."""
        for start in range(0, trials, block):
            count = min(block, trials - start)
            masks = pipeline.selection_masks(num_users, count, rng, clients_per_round=config.clients_per_round,
                                             participation_probability=config.participation_probability)
            if poisson and side == "out":
                masks[:, 0] = False  # user 0 is absent from this world: its coin is not used
            participation[side].append(masks[:, 0])
            releases = np.empty((count,) + shape)
            # Poisson shares depend on the trial's m; uniform rounds all have m = k.
            sizes = masks.sum(axis=1)
            for size in np.unique(sizes):
                rows = np.flatnonzero(sizes == size)
                round_settings = pipeline.poisson_settings(settings, int(size)) if poisson else settings
                if size == 0:
                    # An empty Poisson round: the pipeline releases the zero model with the round's noise.
                    releases[rows] = pipeline.poisson_average([], round_settings, (rows.size,) + shape, rng)
                    continue
                stacked = np.broadcast_to(models[side][:, None], (num_users, rows.size) + shape)
                messages = [pipeline.release_user_model(user, stacked[user], round_settings, rng)
                            for user in range(num_users)]
                selected = masks[rows].T.reshape((num_users, rows.size) + (1,) * len(shape))
                # The sum over the trial's selected users only (secure summation of their messages).
                total = np.sum(np.stack([message.payload["noisy_model"] for message in messages]) * selected, axis=0)
                releases[rows] = (pipeline.poisson_average([dataclasses.replace(messages[0], payload={"noisy_model": total})],
                                                           round_settings, (rows.size,) + shape, rng) if poisson
                                  else total / denominator)
            if not residual_blocks:
                # The noise-scale check reads the first block of OUT releases, each less its own centre.
                centres = masks[:, 0].reshape((count,) + (1,) * len(shape)) * models[side][0] / denominator
                residual_blocks.append(releases - centres)
            yield releases

    scores = projected_scores(released_blocks("out"), released_blocks("in"), centre_without, centre_with)
    result = epsilon_lower_bound(scores, alpha=alpha / 2, delta=config.delta, threshold_strategy="explicit",
                                 thresholds=np.array([threshold]))
    eps_claimed = PrivacyLedger(config.relation).record(prepared.round_event).epsilon(config.delta).epsilon
    unamplified = PrivacyLedger(config.relation).record(event).epsilon(config.delta).epsilon
    in_participation = np.concatenate(participation["in"])
    measurements.update({
        "canary_participation_in": float(in_participation.mean()),
        "canary_participation_out": float(np.concatenate(participation["out"]).mean()),
        "release_noise_std": noise_std,
        "planned_threshold": threshold,
        "epsilon_claimed_without_selection": float(unamplified),
        # The ε of the round's event for the scored pair (the canary's distance against the released noise,
        # selected with the round's law): at least what any estimator could reach on this pair with unlimited trials.
        "epsilon_of_scored_canary": float(PrivacyLedger(config.relation).record(client_selection_event(
            dpmech.GaussianEvent(noise_std, distance, neighbouring=config.relation), rounds=1,
            **({"participation_probability": law} if poisson else
               {"clients_per_round": config.participants, "num_clients": num_users}))).epsilon(config.delta).epsilon),
    })
    (residuals,) = residual_blocks
    release_checks = {
        "average_noise_scale": check_noise_scale(residuals, np.zeros(shape), event.sigma, alpha=alpha / 2).as_dict(),
        "average_sensitivity": displacement_check(centre_without, centre_with, event.sensitivity),
    }
    relation = "add/remove-one" if poisson else "replace-one"
    selection_text = (f"each user independently with probability q = {law:g} (Poisson)" if poisson else
                      f"{config.participants} of {num_users} users uniformly without replacement")
    notes = [
        f"Canary: {search.description}; PSGD randomness shared between the two worlds.",
        f"The audit samples the client selection in every trial with its own Generator, {selection_text}: the "
        f"canary user took part in a fraction {in_participation.mean():.4f} of the {trials} IN trials (law {law:.4g}).",
        "With client selection the scores are a mixture of Gaussians, not GDP-shaped, so ε_lb is the "
        "assumption-free Clopper–Pearson bound at one threshold planned from the pair, the noise and the selection "
        "law before any release was drawn (no GDP-shape assumption).",
        "The auditor sees only the released model, the adversary the amplified claim covers: no user's noise share "
        "is removed, so the scored noise is every selected user's, above the honest noise the event counts.",
        "Other users' models cancel in the projection statistic and are not trained.",
    ]
    return PipelineAudit(
        pipeline="dphelmet",
        claim=f"one user's whole dataset, {relation}, through the blind average of the users selected by "
              f"{selection_text} (amplified)",
        eps_claimed=eps_claimed,
        delta=config.delta,
        alpha=alpha,
        mu_claimed=None,
        mia=mia_summary("white-box projection on the canary user's direction, selection sampled", scores),
        threat_model=ThreatModel(WHITE_BOX, search.description, 1, trials_per_side=trials),
        measurements=measurements,
        notes=tuple(notes),
        result=result,
        scores=scores,
        release_checks=release_checks,
    )
