r"""Calibrating the Gaussian mechanism: the smallest σ for a target (ε, δ).

``method="analytic"`` inverts the tight profile of :mod:`dpmech.gaussian`
(Balle & Wang 2018, Alg. 1 solves the same equation by bisection). With
:math:`\mu = \Delta\sqrt{k}/\sigma`, :math:`\partial\delta/\partial\mu = \varphi(a)`
exactly (the two terms of :math:`\partial\delta` combine through
:math:`e^{\varepsilon}\varphi(b) = \varphi(a)`), so Newton's method on
:math:`\log\delta(\mu)` needs only quantities already computed. It starts at
the μ where :math:`\Phi(a)` equals the target δ; since δ ≤ Φ(a), that start lies
at or below the root, and the iterates approach it from below. Newton's method
runs on the upper bound of :func:`dpmech.gaussian_log_delta` (the evaluated
log δ plus its proven error bound) and stops where that bound is at or below
the target; σ = Δ√k/μ is then rounded upward and checked once more through
the same μ the public functions form from it, so the σ returned is never
below the exact σ, for every input accepted (checked in 50-digit arithmetic
by the tests), and exceeds it by about 1e-11 relative for ordinary inputs.

One float pair takes :func:`dpmech._gaussian_scalar.calibrate_analytic`, the
same Newton method on Python floats without numpy or scipy (its bound on log δ
is wider by the error term of its erfcx, so its σ is at most about 1e-11
relative above the array path's); where it defers, the array path decides.

``method="classic"`` is σ = Δ√k·√(2 ln(1.25/δ))/ε (Dwork & Roth 2014,
Thm. A.1), the form FedAUXfdp and DP-Helmet's estimate use. The theorem holds
only for ε < 1, so larger ε is refused; it is looser than the analytic σ
everywhere it holds. Its σ is rounded upward too.

A σ beyond the largest double (ε of 1e-300 with a large sensitivity) is
refused with a ValueError naming epsilon and sensitivity.
"""

from __future__ import annotations

import fractions
import math

from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _newton
from . import validation as check
from ._gaussian_scalar import CALIBRATION_METHODS
from ._gaussian_scalar import LARGEST as _LARGEST
from ._gaussian_scalar import LOG_SQRT_2PI as _LOG_SQRT_2PI
from ._gaussian_scalar import UPWARD as _UPWARD
from ._gaussian_scalar import calibrate_analytic
from .gaussian import (
    _delta_from_log_upper,
    _epsilon_for_mu,
    _log_delta_evaluated_and_upper,
    _log_delta_mu,
    _ratio_up,
    _solver_log_target,
    _upper_quantile,
)

METHODS = CALIBRATION_METHODS
_MAX_ROUND_TRIP_STEPS = 64

_Floats = NDArray[np.float64]


def _log_delta_slope_in_log_mu(epsilon: _Floats, mu: _Floats, log_delta: _Floats) -> _Floats:
    """d log δ / d log μ = μ φ(a) / δ."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        a = 0.5 * mu - epsilon / mu
        return mu * np.exp(-0.5 * a * a - _LOG_SQRT_2PI - log_delta)


def _log_mu_step(mu: _Floats, excess: _Floats, slope: _Floats) -> _Floats:
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        moved = mu * np.exp(-excess / slope)
    return np.clip(np.where(np.isnan(moved), mu, moved), 5e-324, _LARGEST)


def _mu_for_target(epsilon: _Floats, log_target: _Floats) -> _Floats:
    """Largest μ with the upper bound on log δ(ε; μ) <= log_target, for flattened arrays.

    Newton's method runs in log μ, where log δ is closest to linear, from the μ
    where Φ(a) equals the target (at or below the root, since δ <= Φ(a)).
    """
    z = _upper_quantile(log_target)
    # μ² + 2zμ − 2ε = 0, solved without cancellation (z > 0 for δ < 1/2) or overflow (hypot).
    root = np.hypot(z, math.sqrt(2.0) * np.sqrt(epsilon))
    with np.errstate(under="ignore", divide="ignore", invalid="ignore"):
        start = np.where(z > 0.0, epsilon / (root + z) * 2.0, root - z)
    start = np.maximum(start, 5e-324)

    def evaluate(mu: _Floats, index: NDArray[np.integer[Any]]) -> tuple[_Floats, _Floats]:
        log_delta, upper = _log_delta_evaluated_and_upper(epsilon[index], mu)
        return upper, _log_delta_slope_in_log_mu(epsilon[index], mu, log_delta)

    return _newton.solve(start, evaluate, _log_mu_step, log_target, np.full_like(start, 5e-324), np.full_like(start, _LARGEST))


def _refuse_overflow(sigma: float | _Floats) -> None:
    if np.any(np.isinf(sigma)):
        raise ValueError(
            "epsilon is too small for this sensitivity and compositions: sigma would exceed the largest "
            "double (raise epsilon or lower sensitivity)"
        )


@overload
def calibrate_gaussian(
    epsilon: float, delta: float, sensitivity: float = 1.0, compositions: int = 1, method: str = "analytic"
) -> float: ...
@overload
def calibrate_gaussian(
    epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike = 1.0, compositions: ArrayLike = 1, method: str = "analytic"
) -> float | _Floats: ...
def calibrate_gaussian(
    epsilon: ArrayLike, delta: ArrayLike, sensitivity: ArrayLike = 1.0, compositions: ArrayLike = 1, method: str = "analytic"
) -> float | _Floats:
    """Smallest noise σ for which k Gaussian releases are (ε, δ)-DP, never below the exact one.

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
        the exact smallest σ by about a relative 1e-11 for ordinary inputs.

    Raises:
        ValueError: naming the parameter for bad input, and naming epsilon where σ would exceed the
        largest double.
    """
    method = check.choice("method", method, METHODS)
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit_interval("delta", delta)
    sensitivity = check.positive("sensitivity", sensitivity)
    compositions = check.integer_at_least("compositions", compositions, 1)
    if method == "classic":
        if np.any(np.asarray(epsilon) >= 1.0):
            raise ValueError(
                "epsilon must be < 1 for method='classic' (the Dwork-Roth bound is a theorem only "
                "there); use method='analytic' for epsilon >= 1"
            )
        # Every factor rounded upward: the log and sqrt by a relative 2u each, the product by 8u.
        factor = np.sqrt(2.0 * np.log(1.25 / np.asarray(delta)) * _UPWARD) * _UPWARD
        with np.errstate(over="ignore"):
            sigma = _ratio_up(sensitivity, compositions, epsilon) * factor * _UPWARD
        _refuse_overflow(sigma)
        return check.scalar_or_array(sigma)
    if isinstance(epsilon, float) and isinstance(delta, float) and isinstance(sensitivity, float) and isinstance(
            compositions, int):
        quick = calibrate_analytic(epsilon, delta, sensitivity, compositions)
        if quick is not None:
            return quick
    if isinstance(compositions, int):
        epsilon_b, delta_b, sensitivity_b = np.broadcast_arrays(epsilon, delta, sensitivity)
        compositions_b: int | NDArray[Any] = compositions
    else:
        epsilon_b, delta_b, sensitivity_b, compositions_b = np.broadcast_arrays(epsilon, delta, sensitivity,
                                                                                compositions)
    shape = epsilon_b.shape
    flat_epsilon, flat_delta = epsilon_b.ravel().astype(float), delta_b.ravel().astype(float)
    mu = _mu_for_target(flat_epsilon, _solver_log_target(flat_delta))
    flat_sensitivity = sensitivity_b.ravel().astype(float)
    flat_compositions = compositions_b if isinstance(compositions_b, int) else np.ravel(compositions_b).astype(float)
    sigma = np.atleast_1d(_ratio_up(flat_sensitivity, flat_compositions, mu))
    _refuse_overflow(sigma)
    # Checked through the δ that gaussian_delta reports at this σ (whose μ is rounded upward once more).
    for _ in range(_MAX_ROUND_TRIP_STEPS):
        log_delta = _log_delta_mu(flat_epsilon, _ratio_up(flat_sensitivity, flat_compositions, sigma))
        over = _delta_from_log_upper(log_delta) > flat_delta
        if not np.any(over):
            break
        sigma[over] = np.nextafter(sigma[over], np.inf) * _UPWARD
    else:
        raise ArithmeticError("calibrate_gaussian: the calibrated sigma failed its own check")
    _refuse_overflow(sigma)
    return float(sigma[0]) if not shape else sigma.reshape(shape)


def split_gaussian_budget(epsilon: float, delta: float, shares: ArrayLike) -> list[tuple[float, float]]:
    """Per-release targets (ε_i, δ_i) for m Gaussian releases that together are (ε, δ)-DP, tightly.

    Gaussian releases compose exactly through μ = √(Σ μ_i²) (Dong, Roth &
    Su 2019), so a total budget (ε, δ) is a total μ = 1/σ(ε, δ; Δ = 1), and a
    share w_i of μ² goes to release i: μ_i = μ·√(w_i/Σw). Release i is then
    calibrated at δ_i = δ/m and the ε_i at which a Gaussian with that μ_i has
    δ(ε_i) = δ_i. ``calibrate_gaussian(ε_i, δ_i, Δ_i)`` gives σ_i >= Δ_i/μ_i
    because μ_i is first shrunk by a relative 1e-9 (the inversions' error is
    about 1e-11), so the composition's tight ε at δ never exceeds ε. δ_i is
    δ/m rounded down, so that the δ_i never sum past δ.
    The neighbouring relation is that of the releases' sensitivities.

    Args:
        epsilon: total ε > 0.
        delta: total δ in (0, 1), at which the composition is evaluated.
        shares: m >= 1 positive weights, the shares of μ² (of the privacy loss variance).

    Returns:
        A list of m (ε_i, δ_i) pairs. A share so small that its release is already
        (0, δ_i)-DP gets ε_i = 0.
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit_interval("delta", delta)
    if np.ndim(epsilon) or np.ndim(delta):
        raise ValueError("epsilon and delta must be single numbers for split_gaussian_budget")
    weights = np.atleast_1d(check.positive("shares", shares))
    if weights.ndim != 1 or weights.size == 0:
        raise ValueError(f"shares must be a non-empty 1-D list of positive weights (got shape {weights.shape})")
    total_mu = _mu_for_target(np.array([float(epsilon)]), _solver_log_target(np.array([float(delta)])))[0]
    # Divided by the largest weight first, so that the sum cannot overflow.
    scaled = weights / weights.max()
    mus = total_mu * np.sqrt(scaled / scaled.sum()) * (1.0 - 1e-9)
    # δ_i = δ/m rounded down, so that the m shares never sum past δ; it must stay a positive double.
    share_delta = float(delta) / weights.size
    if fractions.Fraction(share_delta) * weights.size > fractions.Fraction(float(delta)):
        share_delta = math.nextafter(share_delta, 0.0)
    if share_delta == 0.0:
        raise ValueError(
            f"delta must be at least {weights.size} * 5e-324 to be split over {weights.size} shares (got {delta!r})"
        )
    epsilons = np.zeros_like(mus)
    positive = mus > 0.0
    targets = _solver_log_target(np.full(np.count_nonzero(positive), share_delta))
    epsilons[positive], _ = _epsilon_for_mu(targets, mus[positive])
    return [(float(value), share_delta) for value in epsilons]
