"""Distributed DP-Helmet on Flower: every user's noisy share goes through SecAgg+, the server
learns only the sum of the encoded shares and divides by the number of survivors.

The ClientApp of user u runs the pipeline's own steps, in the order and with the Generators of
:func:`trainers.pipelines.dphelmet.run_dphelmet`: ``dphelmet_user`` (train, then the release step
``release_user_model``, which adds the noise share σ_u), so its noisy model is bit-identical to
the in-process run with the same seed and the same noise settings. Discrete shares are calibrated at
the floor h_min and the mechanism's δ, below the config's δ by (1 + e^ε)·p
(:func:`prepare_flower_round`), so σ² exceeds the in-process σ² at the config's δ (by 4·10⁻⁵
relative on digits at ε = 1) and the exact sampler draws other noise from the same Generator: only
the in-process run at γ, h_min and the mechanism's δ releases the same model. It then encodes the
share for SecAgg+ (:func:`~trainers.flower.encoding.randomised_rounding`, continuing the same
Generator) and hands it to Flower's ``secaggplus_mod``, which masks it. Its plaintext metrics carry
the release's accounting inputs (σ_u, s, d) and nothing computed from its data.

The ServerApp runs ``SecAggPlusWorkflow`` (weights fixed to 1 so that Flower's weighting is
exact) and builds the ledger from the survivors' reported settings and the realised number of
guaranteed honest shares (:mod:`trainers.flower.accounting`).
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Optional

import numpy as np

from dpmech import REPLACE_ONE, PrivacyLedger
from dpmech import validation as check
from dpmech.directed_rounding import format_up

from ..federation import PipelineResult, client_generators
from ..pipelines._common import linear_accuracy
from ..pipelines.dphelmet import (DISCRETE, DpHelmetConfig, PreparedUsers, discrete_user_settings, dphelmet_user,
                                  model_norm_bound, prepare_users, protection_notes)
from . import accounting
from .encoding import (SecAggEncoding, choose_encoding, discrete_encoding, discrete_range_fits, encode_grid_share,
                       randomised_rounding)


class SecureAggregationFailed(RuntimeError):
    """SecAgg+ could not reconstruct the sum (too few users survived for its threshold)."""


def user_generator(prepared: PreparedUsers, user: int) -> np.random.Generator:
    """User ``user``'s Generator in the in-process pipeline (``run_clients`` spawns one per user
    from ``prepared.user_seed``), rebuilt from a fresh copy of that seed so that it does not depend
    on how often the seed was spawned before."""
    seed = np.random.SeedSequence(prepared.user_seed.entropy, spawn_key=prepared.user_seed.spawn_key)
    return client_generators(seed, prepared.settings.config.num_users)[user]


def encoded_user_share(prepared: PreparedUsers, user: int, encoding: SecAggEncoding):
    """What user ``user``'s ClientApp hands to SecAgg+: (its release message, its encoded share).

    The release uses the user's in-process Generator (so the noisy model equals the in-process
    one); the rounding continues the same Generator after the release, independent of its draws.
    """
    rng = user_generator(prepared, user)
    message, _ = dphelmet_user(user, prepared.local(user), prepared.settings, rng)
    if "grid_share" in message.payload:
        return message, encode_grid_share(message.payload["grid_share"], encoding)
    return message, randomised_rounding(message.payload["noisy_model"], encoding, rng)


def user_client(prepared: PreparedUsers, encoding: SecAggEncoding, user: int, dropped_users=frozenset()):
    """User ``user``'s Flower client: its fit returns the encoded share with weight 1 and, in the
    clear, only the release's accounting inputs; a user in ``dropped_users`` vanishes after the key
    exchange (its fit raises), as a dropout does."""
    from flwr.client import NumPyClient

    settings = prepared.settings

    class DpHelmetUser(NumPyClient):
        def fit(self, parameters, config):
            if user in dropped_users:
                raise RuntimeError(f"user {user} dropped out")
            message, share = encoded_user_share(prepared, user, encoding)
            metrics = {"user": user, "user_noise_std": settings.user_noise_std,
                       "local_sensitivity": prepared.sensitivity, "dimension": int(share.size)}
            if settings.sigma_squared_grid is not None:
                metrics.update(randomness=message.events[0].description.rsplit("randomness: ", 1)[-1],
                               granularity=settings.granularity,
                               sigma_squared_numerator=settings.sigma_squared_grid.numerator,
                               sigma_squared_denominator=settings.sigma_squared_grid.denominator)
            # Weight 1 (= max_weight): Flower's weighting factor is then exactly 1.
            return [share], 1, metrics

    return DpHelmetUser().to_client()


def client_app(prepared: PreparedUsers, encoding: SecAggEncoding, dropped_users=frozenset()):
    """The DP-Helmet ClientApp with Flower's ``secaggplus_mod``; node ``partition-id`` u is user u."""
    from flwr.client import ClientApp
    from flwr.client.mod import secaggplus_mod

    def client_fn(context):
        return user_client(prepared, encoding, int(context.node_config["partition-id"]), dropped_users)

    return ClientApp(client_fn=client_fn, mods=[secaggplus_mod])


@dataclass
class ServerRecord:
    """What the ServerApp saw and computed (filled during the run)."""

    replies: list = field(default_factory=list)
    stage_seconds: list = field(default_factory=list)
    aggregate: Optional[np.ndarray] = None
    survivor_metrics: list = field(default_factory=list)


class RecordingGrid:
    """A Flower Grid that records every reply it hands to the workflow (what the server holds)."""

    def __init__(self, grid, record: ServerRecord):
        self._grid = grid
        self._record = record

    def __getattr__(self, name):
        return getattr(self._grid, name)

    def send_and_receive(self, messages, *, timeout=None):
        start = time.perf_counter()
        replies = list(self._grid.send_and_receive(messages, timeout=timeout))
        self._record.stage_seconds.append(time.perf_counter() - start)
        self._record.replies.append(replies)
        return replies


def secure_aggregation_round(grid, context, encoding: SecAggEncoding, num_users: int, reconstruction_threshold: int,
                             shape, record: ServerRecord) -> None:
    """The ServerApp's work: one SecAgg+ round over all ``num_users`` users, recorded in ``record``."""
    from flwr.common import ndarrays_to_parameters, parameters_to_ndarrays
    from flwr.server import LegacyContext, ServerConfig
    from flwr.server.strategy import FedAvg
    from flwr.server.workflow import DefaultWorkflow, SecAggPlusWorkflow

    class SumKeepingFedAvg(FedAvg):
        def aggregate_fit(self, server_round, results, failures):
            # SecAgg+ hands every survivor's FitRes the same unmasked aggregate.
            record.aggregate = parameters_to_ndarrays(results[0][1].parameters)[0]
            record.survivor_metrics = [dict(fit_result.metrics) for _, fit_result in results]
            return super().aggregate_fit(server_round, results, failures)

    # The survivors' metrics are kept whole in ``record``; Flower's aggregate of them is unused (and
    # without an aggregation function FedAvg warns on every round).
    strategy = SumKeepingFedAvg(fraction_fit=1.0, fraction_evaluate=0.0, min_fit_clients=num_users,
                                min_available_clients=num_users,
                                initial_parameters=ndarrays_to_parameters([np.zeros(shape)]),
                                fit_metrics_aggregation_fn=lambda metrics: {})
    legacy = LegacyContext(context=context, config=ServerConfig(num_rounds=1), strategy=strategy)
    workflow = SecAggPlusWorkflow(num_shares=num_users, reconstruction_threshold=reconstruction_threshold,
                                  max_weight=1.0, **encoding.workflow_arguments())
    DefaultWorkflow(fit_workflow=workflow)(RecordingGrid(grid, record), legacy)


def server_app(encoding: SecAggEncoding, num_users: int, reconstruction_threshold: int, shape, record: ServerRecord):
    """The DP-Helmet ServerApp: :func:`secure_aggregation_round`."""
    from flwr.server import ServerApp

    app = ServerApp()

    @app.main()
    def main(grid, context):
        secure_aggregation_round(grid, context, encoding, num_users, reconstruction_threshold, shape, record)

    return app


def secure_sum(aggregate: np.ndarray, num_survivors: int, encoding: SecAggEncoding) -> np.ndarray:
    """The exact sum of the encoded shares from Flower's aggregate (their mean, times a rounded 1/n).

    The sum is a grid point, so rounding n·aggregate to the grid recovers it exactly while its
    magnitude is below 2⁵⁰·γ (always: it is at most |U|·c <= 2³²·γ).
    """
    step = encoding.grid_step
    return np.round(np.asarray(aggregate, dtype=np.float64) * num_survivors / step) * step


@dataclass(frozen=True)
class FlowerRound:
    """A Flower round: the pipeline result and what the deployment adds.

    ``survivors``: users whose masked share entered the sum; ``honest_shares`` h guaranteed among
    them; ``secure_sum`` the unmasked sum of their encoded shares; ``server_replies`` every reply
    the ServerApp received (the test of what the server holds); ``upload_bytes`` the payload bytes
    each user sent over the whole protocol; ``stage_seconds`` the wall time of each SecAgg+
    stage (setup, share keys, collect masked vectors — which includes training —, unmask);
    ``seconds`` the wall time of the simulation; ``settings`` the users' release settings (σ_u, or γ
    and σ² of the discrete shares) and ``local_sensitivity`` s, both public.
    """

    result: PipelineResult
    encoding: SecAggEncoding
    survivors: tuple
    honest_shares: int
    secure_sum: np.ndarray
    server_replies: tuple
    upload_bytes: dict
    stage_seconds: tuple
    seconds: float
    settings: object
    local_sensitivity: float


def _payload_bytes(value) -> int:
    if isinstance(value, (bytes, str)):
        return len(value)
    if isinstance(value, (list, tuple)):
        return sum(_payload_bytes(item) for item in value)
    return 8


def message_bytes(message) -> int:
    """Bytes of a Flower message's records (config values and arrays), without gRPC framing."""
    content = message.content
    total = sum(_payload_bytes(value) for record in content.config_records.values() for value in record.values())
    total += sum(len(array.data) for record in content.array_records.values() for array in record.values())
    total += sum(8 for record in content.metric_records.values() for _ in record.values())
    return total


def run_flower_dphelmet(data, config: DpHelmetConfig = DpHelmetConfig(), seed: int = 0, *,
                        reconstruction_threshold: Optional[int] = None, minimum_honest_shares: Optional[int] = None,
                        clip_failure_probability: float = 1e-9, dropped_users=(),
                        backend_config: Optional[dict] = None) -> FlowerRound:
    """Run one DP-Helmet round in Flower's simulation engine with SecAgg+.

    ``reconstruction_threshold``: SecAgg+'s k in [2, |U| − 1] (default ⌊|U|/2⌋ + 1; Flower requires
    k below the number of shares, here |U|); fewer survivors raise
    :class:`SecureAggregationFailed`. ``minimum_honest_shares``: the floor h_min on h below which the
    round refuses to release (ValueError); default ⌈t·|U|⌉, every guaranteed honest share (no
    dropout of a possibly honest user is tolerated), as the in-process guarantee assumes. With
    ``config.noise == "discrete"`` the shares are calibrated at h_min, so a lower floor tolerates
    dropouts at the price of more noise per user. ``clip_failure_probability`` p: each user's range
    is chosen so that its share is refused with probability <= p/|U|, so that some user of the round
    refuses with probability <= p, and (1 + e^ε)·p is added to δ. ``dropped_users``: user indices that
    drop out after the key exchange.

    ``guarantees["tight"]``: the round's certified guarantee, the ledger's ε with δ + (1 + e^ε)·p
    (refusals, :func:`~trainers.flower.accounting.total_delta`). Continuous noise: the ledger holds
    GaussianEvent(σ_u, s + 2γ√d) (:func:`~trainers.flower.accounting.quantised_sum_event`), and
    "estimate (unquantised secure sum)" is the blind-averaging event with the realised h, which the
    quantisation is not proven to preserve. Discrete noise (``config.noise == "discrete"``): the
    ledger holds the distributed discrete Gaussian event with the realised h
    (:func:`~trainers.flower.accounting.discrete_sum_event`), calibrated to meet (ε, δ) at h_min.
    """
    from .simulation import simulate

    if not isinstance(config, DpHelmetConfig):
        raise ValueError(f"config must be a DpHelmetConfig (got {type(config).__name__})")
    if config.epsilon == float("inf"):
        raise ValueError("epsilon must be finite for a Flower round (SecAgg+ needs a noise bound for its range)")
    if config.clients_per_round is not None:
        # The Flower round trains and sums every user; a σ_u calibrated on the amplified k-of-n ledger
        # would under-noise it.
        raise ValueError(f"clients_per_round must be None for a Flower round (got {config.clients_per_round}): "
                         "client selection is not implemented on the Flower engine")
    num_users = config.num_users
    if num_users < 3:
        raise ValueError(f"num_users must be >= 3 for SecAgg+ (its threshold lies in [2, |U| - 1]; got {num_users})")
    threshold = num_users // 2 + 1 if reconstruction_threshold is None else reconstruction_threshold
    threshold = check.integer_scalar("reconstruction_threshold", threshold, 2)
    if threshold >= num_users:
        raise ValueError(f"reconstruction_threshold must be in [2, num_users - 1 = {num_users - 1}] (got {threshold})")
    if minimum_honest_shares is None:
        minimum_honest_shares = accounting.guaranteed_honest_shares(num_users, config.honest_fraction, num_users)
    minimum_honest_shares = check.integer_scalar("minimum_honest_shares", minimum_honest_shares, 1)
    dropped = frozenset(check.integer_scalar("dropped_users", user, 0) for user in dropped_users)
    if any(user >= num_users for user in dropped):
        raise ValueError(f"dropped_users must be user indices in [0, {num_users - 1}] (got {sorted(dropped)})")

    # A round that could not meet the floor even without dropouts is refused before it starts.
    accounting.require_honest_shares(
        accounting.guaranteed_honest_shares(num_users, config.honest_fraction, num_users), minimum_honest_shares)
    prepared, shape, encoding = prepare_flower_round(data, config, seed, clip_failure_probability,
                                                     minimum_honest_shares)
    record = ServerRecord()
    start = time.perf_counter()
    simulate(server_app(encoding, num_users, threshold, shape, record), client_app(prepared, encoding, dropped),
             num_users, backend_config)
    seconds = time.perf_counter() - start
    if record.aggregate is None:
        survivors = num_users - len(dropped)
        raise SecureAggregationFailed(
            f"SecAgg+ could not unmask the sum: {survivors} of {num_users} users survived, below the "
            f"reconstruction threshold {threshold}; nothing was released"
        )
    return released_round(prepared, config, seed, encoding, record, minimum_honest_shares, seconds)


def prepare_flower_round(data, config: DpHelmetConfig, seed: int, clip_failure_probability: float,
                         minimum_honest_shares: int = 1):
    """(prepared users, model shape (C, d + 1), SecAgg+ encoding): the public preparation that the
    ServerApp and every ClientApp derive alike from (data, config, seed, p, h_min).

    Discrete noise: the shares are calibrated at h_min honest shares and the mechanism's δ
    (:func:`~trainers.flower.accounting.mechanism_delta`) on the grid γ = ``config.granularity``
    (a power of two whose range must hold the share: ValueError naming the finest that does) or,
    for ``None``, the finest power-of-two grid whose SecAgg+ range holds the share.
    """
    if config.noise != DISCRETE:
        prepared = prepare_users(data, config, seed)
        shape = (prepared.num_classes, prepared.features.test.features.shape[1] + 1)
        encoding = choose_encoding(model_norm_bound(config, prepared.num_classes), prepared.settings.user_noise_std,
                                   int(np.prod(shape)), config.num_users, clip_failure_probability)
        return prepared, shape, encoding
    # The public preparation (split, records, sensitivity, seeds) does not depend on the noise.
    public = prepare_users(data, dataclasses.replace(config, noise="continuous", granularity=None), seed)
    shape = (public.num_classes, public.features.test.features.shape[1] + 1)
    dimension = int(np.prod(shape))
    bound = model_norm_bound(config, public.num_classes)
    mechanism_delta = accounting.mechanism_delta(config.delta, config.epsilon, clip_failure_probability)
    quantization_range = 2**22

    def settings_at(granularity):
        settings = discrete_user_settings(config, public.num_classes, public.sensitivity, dimension, granularity,
                                          minimum_honest_shares, mechanism_delta)
        fits = discrete_range_fits(granularity, bound, settings.sigma_squared_grid, dimension, config.num_users,
                                   clip_failure_probability, quantization_range)
        return settings, fits

    # From the grid whose c = γq/2 is the smallest power of two >= B; each doubling of γ doubles c.
    granularity = 2.0 ** (math.ceil(math.log2(bound)) + 1 - round(math.log2(quantization_range)))
    settings, fits = settings_at(granularity)
    while not fits:
        granularity *= 2.0
        if granularity > 2.0**38:
            raise ValueError("the model norm bound and the noise fit SecAgg+'s range at no granularity")
        settings, fits = settings_at(granularity)
    if config.granularity is not None:
        if config.granularity < granularity:
            raise ValueError(f"granularity {config.granularity!r} is too fine for SecAgg+'s range of "
                             f"{quantization_range} steps; the finest power of two that holds the share is {granularity!r}")
        granularity = config.granularity
        settings, fits = settings_at(granularity)
        if not fits:
            raise ValueError(f"granularity {granularity!r} does not fit SecAgg+'s range (the noise tail is too wide)")
    encoding = discrete_encoding(granularity, config.num_users, clip_failure_probability, quantization_range)
    return dataclasses.replace(public, settings=settings), shape, encoding


def _reported_settings(metrics) -> tuple:
    keys = ("user_noise_std", "local_sensitivity", "dimension", "granularity", "sigma_squared_numerator",
            "sigma_squared_denominator", "randomness")
    reported = {tuple(m.get(key) for key in keys) for m in metrics}
    if len(reported) != 1:
        raise ValueError(f"survivors report different release settings {sorted(reported, key=str)}; account them per user")
    return reported.pop()


def released_round(prepared, config, seed, encoding, record, minimum_honest_shares, seconds) -> FlowerRound:
    """The round's release from what the ServerApp recorded: refuses below the floor, accounts the
    survivors' reported settings with the realised honest shares, and unmasks the exact sum."""
    metrics = record.survivor_metrics
    survivors = tuple(sorted(int(m["user"]) for m in metrics))
    user_noise_std, sensitivity, dimension, granularity, numerator, denominator, randomness = _reported_settings(metrics)
    honest = accounting.guaranteed_honest_shares(config.num_users, config.honest_fraction, len(survivors))
    accounting.require_honest_shares(honest, minimum_honest_shares)

    total = secure_sum(record.aggregate, len(survivors), encoding)
    average = total / len(survivors)
    failure = encoding.clip_failure_probability
    settings = prepared.settings
    if settings.sigma_squared_grid is not None:
        if (granularity, Fraction(numerator, denominator)) != (settings.granularity, settings.sigma_squared_grid):
            raise ValueError("survivors report a grid or share variance other than the round's public settings")
        event = accounting.discrete_sum_event(settings, sensitivity, dimension, honest, randomness)
        ledger = PrivacyLedger(REPLACE_ONE).record(event)
        mechanism_delta = accounting.mechanism_delta(config.delta, config.epsilon, failure)
        mechanism = ledger.epsilon(mechanism_delta)
        guarantees = {"tight": dataclasses.replace(
            mechanism, delta=accounting.total_delta(mechanism_delta, failure, mechanism.epsilon), log_delta=None,
            note=f"distributed discrete Gaussian, {honest} honest shares; δ includes (1 + e^ε)·p for refusals")}
        noise_note = (f"Shares: model rounded to γ = {encoding.grid_step:.3g} plus N_Z(0, {settings.sigma_squared_grid}) "
                      f"grid units each, calibrated at the floor of {minimum_honest_shares} honest shares; certified "
                      f"by the distributed discrete Gaussian (KLS 2021 Prop. 14) with the realised h = {honest}.")
    else:
        ledger = PrivacyLedger(REPLACE_ONE).record(
            accounting.quantised_sum_event(user_noise_std, sensitivity, encoding.grid_step, dimension))
        unquantised = PrivacyLedger(REPLACE_ONE).record(
            accounting.surviving_sum_event(user_noise_std, sensitivity, len(survivors), honest))
        certified = ledger.epsilon(config.delta)
        estimate = unquantised.epsilon(config.delta)
        guarantees = {
            "tight": dataclasses.replace(
                certified, delta=accounting.total_delta(config.delta, failure, certified.epsilon), log_delta=None,
                note="quantised sum of continuous shares: one honest share against s + 2γ√d"),
            # Proven for the unquantised secure sum only, not for the rounded shares this round sums.
            "estimate (unquantised secure sum)": dataclasses.replace(
                estimate, certified=False, delta=accounting.total_delta(config.delta, failure, estimate.epsilon),
                log_delta=None,
                note="estimate: the guarantee of the unquantised secure sum; the quantised sum is not proven to meet it"),
        }
        noise_note = ("Certified: the sum of randomised-rounded continuous shares, from one honest share (σ_u) against "
                      "s + 2γ√d. The unquantised secure sum's ε is an ESTIMATE for this round: rounding each share is "
                      "not post-processing of the sum.")
    notes = (
        *protection_notes(config, prepared.sensitivity),
        f"Flower SecAgg+ round: {len(survivors)} of {config.num_users} users survived; h = {honest} honest noise "
        f"shares guaranteed (t = {config.honest_fraction:g}); floor {minimum_honest_shares}.",
        f"Shares on the grid γ = {encoding.grid_step:.3g} in [-{encoding.clipping_range:g}, "
        f"{encoding.clipping_range:g}]; probability that some user refuses its share <= p = {format_up(failure, 3)} "
        f"(p/|U| per user), (1 + e^ε)·p added to δ.",
        noise_note,
    )
    upload = {}
    for replies in record.replies:
        for reply in replies:
            if not reply.has_error():
                node = reply.metadata.src_node_id
                upload[node] = upload.get(node, 0) + message_bytes(reply)
    result = PipelineResult(
        pipeline="dphelmet", accuracy=linear_accuracy(average, prepared.features.test), baselines={},
        per_client=[{"client": user, "num_records": int(prepared.shares[user].size), "user_noise_std": user_noise_std}
                    for user in survivors], ledger=ledger,
        messages=(), guarantees=guarantees, notes=notes,
        config={**dataclasses.asdict(config), "engine": "flower"}, seed=seed,
    )
    return FlowerRound(result, encoding, survivors, honest, total, tuple(tuple(r) for r in record.replies),
                       upload, tuple(record.stage_seconds), seconds, prepared.settings, prepared.sensitivity)
