r"""What a Flower round of blind averaging costs: surviving honest noise shares and the encoding.

Dropouts (DP-Helmet Lemma 5.2 with the realised count). Each of the |U| users adds
N(0, σ_u² I) with σ_u = σ/√(t·|U|), so that t·|U| honest shares sum to the central σ. At least
⌈t·|U|⌉ users are honest; when n of them survive to the secure sum, the dropped |U| − n may all
have been honest, so only h = ⌈t·|U|⌉ − (|U| − n) honest shares are guaranteed in the sum
(:func:`guaranteed_honest_shares`). The sum then holds honest noise of std σ_u·√h against
sensitivity s (a record sits at one user), and the average over the n survivors the same ratio:
:func:`surviving_sum_event` is ``dpmech.mechanisms.blind_averaging_event`` with |U| replaced by n and t·|U|
by h. With |U| = 10, t = 0.5 calibrated to ε = 1 at δ = 1e-5, h = 4 / 3 / 2 / 1 gives
ε = 1.13 / 1.32 / 1.66 / 2.44 (tracker issue 17). A round refuses to release when h is below the
user's floor (:func:`require_honest_shares`).

Quantisation (certified, conservative). SecAgg+ sums integers, so every user rounds its noisy
share y_v = f_v + z_v to the grid γℤ (randomised rounding, :mod:`trainers.flower.encoding`)
before summation. That rounding acts on each share, not on the sum, so the sum of rounded shares
is NOT post-processing of the Gaussian secure sum, and the dropout accounting above does not
cover it. What is proven (:func:`quantised_sum_event`): fix the rounding thresholds r_v and the
share's own noise z_v. Rounding with a fixed threshold moves each coordinate by less than γ more
than its input moved, so the differing user's rounded share has L2 sensitivity below s + γ√d.
Every other user's rounded share is lattice-valued, and randomised rounding commutes with lattice
shifts, so the released sum is (in distribution) the rounding of one honest other user u's share
f_u + z_u plus lattice-valued terms: post-processing of (rounded share of v) + z_u, the Gaussian
mechanism with σ_u against s + γ√d (a mixture over (z_v, r_v) of such mechanisms); the event
uses s + 2γ√d, the second γ√d covering the floating-point evaluation of the rounding. It needs one
honest surviving share (h >= 1) and is weaker than the unquantised sum's guarantee by about
√(t·|U|); a tighter certified bound needs a lattice noise whose sum is accountable (distributed
discrete Gaussian, Kairouz, Liu & Steinke 2021; Skellam, Agarwal, Kairouz & Liu 2021), which
dpmech does not have yet. The unquantised-sum ε is therefore reported as an estimate of the
quantised round, never as its certified ε.

Clipping. SecAgg+ clips every coordinate to [−c, c] silently; a clipped share would change the
sensitivity. A user whose share leaves the range refuses to send it. The round with refusals, M',
differs from the round without them, M, as soon as ANY of the |U| users refuses, so the refusal
event of the round is E = ∪_u E_u, E_u the event that user u's share leaves [−c, c].
:mod:`trainers.flower.encoding` chooses c from the public model norm bound B and the noise tail so
that P(E_u) <= p/|U| for every user and every dataset; by the union bound P(E) <= Σ_u P(E_u) <= p.
(Per-user ranges at p/|U| rather than per-user p with the round charged |U|·p: p stays the one
number the encoding, :func:`mechanism_delta` and :func:`total_delta` share, see the encoding's
docstring.) M and M' run on the same randomness agree outside E, so under every dataset
P[M'(D) ∈ S] and P[M(D) ∈ S] differ by at most P(E) <= p, and if M is (ε, δ)-DP, M' is
(ε, δ + (1 + e^ε)·p)-DP: P[M'(D) ∈ S] <= P[M(D) ∈ S] + p <= e^ε·P[M(D') ∈ S] + δ + p <=
e^ε·(P[M'(D') ∈ S] + p) + δ + p (:func:`total_delta`). A per-user bound p charged once would
undercount: at |U| = 10, d = 20, σ_u = 1, B = 0.5, p = 0.01 and every coordinate at B, one share
is refused with probability 0.0047 but some share with 0.046 (tracker issue 31).

Distributed discrete Gaussian (``DpHelmetConfig(noise="discrete")``, certified at the target).
Each user rounds its model to the SecAgg+ grid γZ^d (nearest point) and adds an exact discrete
Gaussian share N_Z(0, σ²)^d in grid units (:func:`dpmech.distributed_discrete_gaussian.grid_share`);
the integer share passes SecAgg+'s quantiser unchanged and its modular sum does not wrap, so the
server unmasks exactly Σ shares. The sum of the h guaranteed honest shares is accounted by
Kairouz, Liu & Steinke 2021, Prop. 14 (:mod:`dpmech.distributed_discrete_gaussian`) against the
rounded sensitivity s/γ + √d: no loss from the quantisation beyond that √d, and the realised h
enters the accounting (:func:`discrete_sum_event`). σ² is calibrated at the user's dropout floor
h_min (the fewest honest shares the round releases with) and at the mechanism's δ, the target δ
less (1 + e^ε)·p (:func:`mechanism_delta`), so the released round is certified at the target
whenever it releases.
"""

from __future__ import annotations

import math

import numpy as np

import dpmech
import dpmech.blind_averaging
import dpmech.distributed_discrete_gaussian
from dpmech import REPLACE_ONE, GaussianEvent
from dpmech import validation as check


def guaranteed_honest_shares(num_users, honest_fraction, num_survivors) -> int:
    """h = ⌈t·|U|⌉ − (|U| − n), at least 0: honest noise shares guaranteed among n survivors.

    The guarantee assumes at least a fraction t of the |U| users is honest (Lemma 5.2); the dropped
    users may all be honest, so each dropout can remove one honest share.
    """
    num_users = check.integer_scalar("num_users", num_users, 1)
    honest_fraction = float(check.in_interval("honest_fraction", honest_fraction, 0.0, 1.0,
                                              low_open=True, high_open=False))
    num_survivors = check.integer_scalar("num_survivors", num_survivors, 0)
    if num_survivors > num_users:
        raise ValueError(f"num_survivors must be <= num_users = {num_users} (got {num_survivors})")
    # ⌈t·|U|⌉ computed so that a t·|U| that is an integer up to rounding (0.3·10) is not bumped up.
    honest = math.ceil(round(honest_fraction * num_users, 9))
    return max(0, honest - (num_users - num_survivors))


def require_honest_shares(honest_shares, minimum_honest_shares) -> int:
    """Refuse (ValueError) to release a sum with fewer than ``minimum_honest_shares`` >= 1 honest shares."""
    honest_shares = check.integer_scalar("honest_shares", honest_shares, 0)
    minimum_honest_shares = check.integer_scalar("minimum_honest_shares", minimum_honest_shares, 1)
    if honest_shares < minimum_honest_shares:
        raise ValueError(
            f"only {honest_shares} honest noise shares are guaranteed in the secure sum, below the floor "
            f"minimum_honest_shares = {minimum_honest_shares}: the round refuses to release"
        )
    return honest_shares


def surviving_sum_event(user_noise_std, local_sensitivity, num_survivors, honest_shares,
                        neighbouring=REPLACE_ONE) -> GaussianEvent:
    """The unquantised secure average of n survivors with h >= 1 guaranteed honest shares.

    GaussianEvent(σ_u·√h/n, s/n): ``dpmech.mechanisms.blind_averaging_event`` with |U| replaced by n and t·|U|
    by h (DP-Helmet Lemmas 5.1-5.2 with the realised counts), replace-one, a record at one user.
    σ is stepped down two ulps (three roundings of at most half an ulp each) and s/n up one (one
    rounding), so the event never overstates the noise nor understates the sensitivity.
    """
    user_noise_std = float(check.positive("user_noise_std", user_noise_std))
    local_sensitivity = float(check.positive("local_sensitivity", local_sensitivity))
    num_survivors = check.integer_scalar("num_survivors", num_survivors, 1)
    honest_shares = check.integer_scalar("honest_shares", honest_shares, 1)
    if honest_shares > num_survivors:
        raise ValueError(f"honest_shares must be <= num_survivors = {num_survivors} (got {honest_shares})")
    sigma = user_noise_std * math.sqrt(honest_shares) / num_survivors
    sigma = math.nextafter(math.nextafter(sigma, 0.0), 0.0)
    sensitivity = math.nextafter(local_sensitivity / num_survivors, math.inf)
    return GaussianEvent(sigma, sensitivity, neighbouring=neighbouring)


def quantised_sum_event(user_noise_std, local_sensitivity, grid_step, dimension,
                        neighbouring=REPLACE_ONE) -> GaussianEvent:
    """Certified event of the sum of randomised-rounded shares: GaussianEvent(σ_u, s + 2γ√d).

    Proof in the module docstring; it holds with at least one honest surviving share. The
    sensitivity is rounded up (``math.nextafter``) so that the float sum never undershoots.
    """
    user_noise_std = float(check.positive("user_noise_std", user_noise_std))
    local_sensitivity = float(check.positive("local_sensitivity", local_sensitivity))
    grid_step = float(check.positive("grid_step", grid_step))
    dimension = check.integer_scalar("dimension", dimension, 1)
    inflated = local_sensitivity + 2.0 * grid_step * math.sqrt(dimension)
    return GaussianEvent(user_noise_std, math.nextafter(inflated, math.inf), neighbouring=neighbouring)


def total_delta(delta, clip_failure_probability, epsilon) -> float:
    """δ + (1 + e^ε)·p, rounded up: the δ of an (ε, δ)-DP round in which some user refuses with probability <= p.

    p bounds the refusal of the whole round (any of its |U| users), not of one user's share; the
    encodings of :mod:`trainers.flower.encoding` give each user p/|U| so that their round has p.
    """
    delta = float(check.open_unit_interval("delta", delta))
    failure = float(check.in_interval("clip_failure_probability", clip_failure_probability, 0.0, 1.0,
                                      low_open=False, high_open=True))
    epsilon = float(check.non_negative("epsilon", epsilon))
    total = math.nextafter(delta + math.nextafter((1.0 + math.exp(epsilon)) * failure, math.inf), math.inf)
    if not total < 1.0:
        raise ValueError(f"delta + (1 + e^epsilon)·clip_failure_probability must be < 1 "
                         f"(got {delta!r} + (1 + e^{epsilon!r})·{failure!r})")
    return total


def mechanism_delta(delta, epsilon, clip_failure_probability) -> float:
    """δ − (1 + e^ε)·p, rounded down: the δ to calibrate the shares at so that the round with refusals meets δ.

    p: the round's refusal probability (some user refuses), as for :func:`total_delta`.
    """
    delta = float(check.open_unit_interval("delta", delta))
    epsilon = float(check.positive("epsilon", epsilon))
    failure = float(check.in_interval("clip_failure_probability", clip_failure_probability, 0.0, 1.0,
                                      low_open=False, high_open=True))
    # The relative 1e-9 leaves room for total_delta's own upward roundings: total_delta(result, p, ε) <= δ.
    remaining = math.nextafter(delta - (1.0 + math.exp(epsilon)) * failure * (1.0 + 1e-9), 0.0)
    if not remaining > 0.0:
        raise ValueError(f"clip_failure_probability must be below delta/(1 + e^epsilon) = "
                         f"{delta / (1.0 + math.exp(epsilon)):.3g} (got {failure!r})")
    return remaining


def discrete_sum_event(settings, local_sensitivity, dimension, honest_shares, randomness: str):
    """The (ε, δ) event of the sum of discrete shares with ``honest_shares`` h >= 1 guaranteed honest.

    ``settings``: the users' :class:`~trainers.pipelines.dphelmet.UserSettings` (γ, σ² and the event's δ);
    ``randomness``: the users' randomness source as their releases state it.
    """
    honest_shares = check.integer_scalar("honest_shares", honest_shares, 1)
    return dpmech.blind_averaging.discrete_blind_averaging_event(
        settings.event.delta, settings.sigma_squared_grid, local_sensitivity, settings.granularity, dimension,
        honest_shares, neighbouring=REPLACE_ONE, randomness=randomness)


def dropout_table(epsilon, delta, local_sensitivity, num_users, honest_fraction, num_dropped) -> np.ndarray:
    """ε of the unquantised secure average at ``delta`` after 0, 1, ... ``num_dropped`` dropouts.

    Rows (dropped, surviving, honest shares h, ε); rows with h = 0 have ε = ∞ (no guarantee).
    """
    num_dropped = check.integer_scalar("num_dropped", num_dropped, 0)
    num_users = check.integer_scalar("num_users", num_users, 1)
    if num_dropped >= num_users:
        raise ValueError(f"num_dropped must be < num_users = {num_users} (got {num_dropped})")
    user_noise_std = dpmech.mechanisms.calibrate_user_noise(epsilon, delta, local_sensitivity, num_users, honest_fraction)
    rows = []
    for dropped in range(num_dropped + 1):
        survivors = num_users - dropped
        honest = guaranteed_honest_shares(num_users, honest_fraction, survivors)
        if honest == 0:
            rows.append((dropped, survivors, 0, math.inf))
            continue
        event = surviving_sum_event(user_noise_std, local_sensitivity, survivors, honest)
        guarantee = dpmech.PrivacyLedger(REPLACE_ONE).record(event).epsilon(delta)
        rows.append((dropped, survivors, honest, guarantee.epsilon))
    return np.array(rows, dtype=float)


def discrete_dropout_table(epsilon, delta, grid_sensitivity, dimension, num_users, honest_fraction,
                           minimum_honest_shares, num_dropped) -> np.ndarray:
    """Certified ε at ``delta`` of discrete shares calibrated at the floor h_min, after 0 .. ``num_dropped`` dropouts.

    Rows (dropped, surviving, honest shares h, ε, released): ε is the certified ε of the sum with h
    honest shares (∞ for h = 0); released is 1 when h >= h_min, 0 when the round refuses.
    ``grid_sensitivity``: Δ₂ of the rounded model in grid units.
    """
    num_dropped = check.integer_scalar("num_dropped", num_dropped, 0)
    num_users = check.integer_scalar("num_users", num_users, 1)
    if num_dropped >= num_users:
        raise ValueError(f"num_dropped must be < num_users = {num_users} (got {num_dropped})")
    floor = check.integer_scalar("minimum_honest_shares", minimum_honest_shares, 1)
    sigma_squared = dpmech.distributed_discrete_gaussian.calibrate_distributed_discrete_gaussian(
        epsilon, delta, grid_sensitivity, floor, dimension)
    rows = []
    for dropped in range(num_dropped + 1):
        survivors = num_users - dropped
        honest = guaranteed_honest_shares(num_users, honest_fraction, survivors)
        value = (dpmech.distributed_discrete_gaussian.distributed_discrete_gaussian_epsilon(
            delta, sigma_squared, honest, grid_sensitivity, dimension) if honest >= 1 else math.inf)
        rows.append((dropped, survivors, honest, value, float(honest >= floor)))
    return np.array(rows, dtype=float)
