"""Canary client for one-shot averaging: FedAvg+P and DP-Helmet's blind averaging, white-box.

Each of |U| clients releases its model θ_u plus independent Gaussian noise
N(0, σ_u² I), and the server averages. Two neighbouring worlds differ in one
client's model (the client holding the canary record, or under user-level
privacy the canary user). The released average is

    (1/|U|) Σ_u θ_u + N(0, (Σ_u σ_u²)/|U|² · I),

exactly, since sums of independent Gaussians are Gaussian; so drawing that
noise around the two averages samples the averaging mechanism itself (not
the trainers), and the Neyman–Pearson statistic is the projection on the
difference of the averages (:func:`~audits.attacks.gaussian_output.gaussian_output_scores`).
With blind averaging, dishonest users may drop their noise; this audit
draws the noise of the run it is given (pass the per-user σ that was added).
"""

from __future__ import annotations

import numpy as np

from dpmech import validation as check

from ..scores import AuditScores
from .gaussian_output import gaussian_output_scores


def average_noise_std(client_noise_std, num_clients: int) -> float:
    """Standard deviation √(Σ_u σ_u²)/|U| of the noise on the average (σ_u scalar or one per client)."""
    num_clients = check.integer_scalar("num_clients", num_clients, 1)
    stds = np.broadcast_to(check.non_negative("client_noise_std", client_noise_std), (num_clients,))
    total = float(np.sqrt(np.sum(np.square(stds))) / num_clients)
    if total <= 0.0:
        raise ValueError("client_noise_std must be > 0 for at least one client (the average would be noiseless)")
    return total


def averaging_canary_scores(models_without, models_with, client_noise_std, num_trials, rng) -> AuditScores:
    """IN/OUT scores of N released averages per world.

    Args:
        models_without: (|U|, ...) the clients' noise-free models without the canary.
        models_with: the same with the canary (typically one client's model differs).
        client_noise_std: σ_u each client adds, a scalar or one per client.
        num_trials: N >= 1 released averages per world.
        rng: ``numpy.random.Generator`` or seed.
    """
    without = np.asarray(models_without, dtype=float)
    with_canary = np.asarray(models_with, dtype=float)
    if without.ndim < 1 or without.shape != with_canary.shape:
        raise ValueError(
            f"models_without and models_with must be (clients, ...) arrays of one shape (got {without.shape} and {with_canary.shape})"
        )
    sigma = average_noise_std(client_noise_std, without.shape[0])
    return gaussian_output_scores(without.mean(axis=0), with_canary.mean(axis=0), sigma, num_trials, rng)
