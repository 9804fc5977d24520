r"""Calibrating the Gaussian mechanism: the smallest σ for a target (ε, δ).

``method="analytic"`` inverts the tight profile of :mod:`dpmech.gaussian`
(Balle & Wang 2018, Alg. 1 solves the same equation by bisection). With
:math:`\mu = \Delta\sqrt{k}/\sigma`, :math:`\partial\delta/\partial\mu = \varphi(a)`
exactly (the two terms of :math:`\partial\delta` combine through
:math:`e^{\varepsilon}\varphi(b) = \varphi(a)`), so Newton's method on
:math:`\log\delta(\mu)` needs only quantities already computed. It starts at
the μ where :math:`\Phi(a)` equals the target δ; since δ ≤ Φ(a), that start lies
at or below the root, and the iterates approach it from below. A final step
moves μ down until δ is under the target by a relative 1e-11, a hundred times
the worst error of the δ evaluation, so the σ returned is never below the exact
σ, checked in 50-digit arithmetic by the tests, and exceeds it by about 1e-11.

``method="classic"`` is σ = Δ√k·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014,
Thm. A.1), the form FedAUXfdp and DP-Helmet's estimate use. The theorem holds
only for ε < 1, so larger ε is refused; it is looser than the analytic σ
everywhere it holds.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from . import _newton
from . import validation as check
from .gaussian import _LOG_SQRT_2PI, _log_delta_mu

METHODS = ("analytic", "classic")


def _log_delta_slope_in_log_mu(epsilon, mu, log_delta):
    """d log δ / d log μ = μ φ(a) / δ."""
    a = 0.5 * mu - epsilon / mu
    return mu * np.exp(-0.5 * a * a - _LOG_SQRT_2PI - log_delta)


def _log_mu_step(mu, excess, slope):
    return mu * np.exp(-excess / slope)


def _mu_for_target(epsilon, log_target):
    """Largest μ with log δ(ε; μ) <= log_target − margin, for scalars or flattened arrays.

    Newton's method runs in log μ, where log δ is closest to linear (3 to 4
    steps from the start below on the test grid of tests/dpmech/test_calibration.py).
    """
    if isinstance(epsilon, float):
        z = -float(special.ndtri(math.exp(log_target)))
        start = math.sqrt(z * z + 2.0 * epsilon) - z

        def evaluate(mu, _):
            log_delta = _log_delta_mu(epsilon, mu)
            a = 0.5 * mu - epsilon / mu
            return log_delta, mu * math.exp(-0.5 * a * a - _LOG_SQRT_2PI - log_delta)

        return _newton.solve(start, evaluate, lambda m, x, g: m * math.exp(-x / g), log_target)
    z = -special.ndtri(np.exp(log_target))

    def evaluate(mu, index):
        log_delta = _log_delta_mu(epsilon[index], mu)
        return log_delta, _log_delta_slope_in_log_mu(epsilon[index], mu, log_delta)

    return _newton.solve(np.sqrt(z * z + 2.0 * epsilon) - z, evaluate, _log_mu_step, log_target)


def calibrate_gaussian(epsilon, delta, sensitivity=1.0, compositions=1, method="analytic"):
    """Smallest noise σ for which k Gaussian releases are (ε, δ)-DP.

    The neighbouring relation is the one ``sensitivity`` was computed under.

    Args:
        epsilon: target ε > 0. ``method="classic"`` requires ε < 1.
        delta: target δ in (0, 1).
        sensitivity: L2 sensitivity Δ > 0 of one release.
        compositions: number k >= 1 of releases, each with this σ.
        method: ``"analytic"`` (tight, default) or ``"classic"`` (Dwork–Roth).

    Returns:
        σ as a float, or an array of the broadcast shape of the inputs.
        Analytic σ satisfies δ(ε; σ) <= delta in exact arithmetic and exceeds
        the exact smallest σ by a relative 1e-11 or less.
    """
    method = check.choice("method", method, METHODS)
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit_interval("delta", delta)
    sensitivity = check.positive("sensitivity", sensitivity)
    compositions = check.integer_at_least("compositions", compositions, 1)
    if isinstance(epsilon, float) and isinstance(delta, float) and isinstance(sensitivity, float) and isinstance(compositions, int):
        scale = sensitivity * math.sqrt(compositions)
        if method == "analytic":
            return scale / _mu_for_target(epsilon, math.log(delta))
    else:
        scale = sensitivity * np.sqrt(compositions)
    if method == "classic":
        if np.any(epsilon >= 1.0):
            raise ValueError(
                "epsilon must be < 1 for method='classic' (the Dwork-Roth bound is a theorem only "
                "there); use method='analytic' for epsilon >= 1"
            )
        return check.scalar_or_array(scale * np.sqrt(2.0 * np.log(1.25 / delta)) / epsilon)
    epsilon_b, log_target = np.broadcast_arrays(epsilon, np.log(delta))
    if epsilon_b.ndim == 0:
        mu = _mu_for_target(float(epsilon_b), float(log_target))
    else:
        mu = _mu_for_target(epsilon_b.ravel().copy(), log_target.ravel().copy()).reshape(epsilon_b.shape)
    # σ = scale/μ rounds once; the 1e-11 margin on μ absorbs it many times over.
    return check.scalar_or_array(scale / mu)


def split_gaussian_budget(epsilon, delta, shares):
    """Per-release targets (ε_i, δ_i) for m Gaussian releases that together are (ε, δ)-DP, tightly.

    Gaussian releases compose exactly through μ = √(Σ μ_i²) (Dong, Roth &
    Su 2019), so a total budget (ε, δ) is a total μ = 1/σ(ε, δ; Δ = 1), and a
    share w_i of μ² goes to release i: μ_i = μ·√(w_i/Σw). Release i is then
    calibrated at δ_i = δ/m and the ε_i at which a Gaussian with that μ_i has
    δ(ε_i) = δ_i. ``calibrate_gaussian(ε_i, δ_i, Δ_i)`` gives σ_i >= Δ_i/μ_i
    because μ_i is first shrunk by a relative 1e-9 (the inversions' error is
    about 1e-11), so the composition's tight ε at δ never exceeds ε.
    The neighbouring relation is that of the releases' sensitivities.

    Args:
        epsilon: total ε > 0.
        delta: total δ in (0, 1), at which the composition is evaluated.
        shares: m >= 1 positive weights, the shares of μ² (of the privacy loss variance).

    Returns:
        A list of m (ε_i, δ_i) pairs.
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit_interval("delta", delta)
    if np.ndim(epsilon) or np.ndim(delta):
        raise ValueError("epsilon and delta must be single numbers for split_gaussian_budget")
    weights = np.atleast_1d(check.positive("shares", shares))
    if weights.ndim != 1:
        raise ValueError(f"shares must be a 1-D list of positive weights (got shape {weights.shape})")
    from .gaussian import gaussian_epsilon

    total_mu = 1.0 / calibrate_gaussian(float(epsilon), float(delta))
    mus = total_mu * np.sqrt(weights / weights.sum()) * (1.0 - 1e-9)
    share_delta = float(delta) / weights.size
    return [(float(gaussian_epsilon(share_delta, 1.0, float(mu))), share_delta) for mu in mus]
