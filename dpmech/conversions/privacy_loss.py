r"""Privacy-loss functions, their inverses and hockey-stick divergences, in dp_accounting's conventions.

Setting (dp_accounting 0.6.0, ``pld/privacy_loss_mechanism.py``; Koskela,
Jälkö & Honkela 2020; Doroshenko et al. 2022, "Connect the Dots"). An
additive-noise mechanism releases f(D) + Z with Z drawn from a symmetric
noise density (or mass function) μ, and |f(D) − f(D')| <= Δ. With Poisson
subsampling of rate q the worst-case pair of output distributions is

* ``adjacency="remove"`` (D' has one record fewer):
  μ_upper(x) = (1 − q)μ(x) + qμ(x + Δ), μ_lower(x) = μ(x);
* ``adjacency="add"`` (D' has one record more):
  μ_upper(x) = μ(x), μ_lower(x) = (1 − q)μ(x) + qμ(x − Δ).

The privacy loss is ℓ(x) = ln(μ_upper(x)/μ_lower(x)), non-increasing in x for
the noises here. ``inverse_privacy_loss(ℓ)`` is the largest x with ℓ(x) >= ℓ
(±∞ where no finite x qualifies), and the hockey-stick divergence

.. math::
    \delta(\varepsilon) = \sup_S\, \mu_\text{upper}(S) - e^\varepsilon \mu_\text{lower}(S)
      = F_\text{upper}(x^*) - e^\varepsilon F_\text{lower}(x^*),\quad x^* = \ell^{-1}(\varepsilon),

is the tight δ of the (ε, δ)-DP guarantee for that direction (Balle et al.
2018, Thm. 1; a mechanism is (ε, δ)-DP under add/remove-one when δ bounds both
directions). ε may be negative, as in dp_accounting.

Numerics. Each δ is evaluated as a difference A − B of two positive terms
carried as logarithms, :math:`\delta = e^{\log A}(1 - e^{\log B - \log A})`,
with ``log_ndtr`` and closed-form log CDFs, so tails far below 1e-16 keep
their relative accuracy (dp_accounting subtracts two CDFs and loses every
digit once δ < 1e-16). Results are double-precision evaluations (relative
error about 1e-12 against 50-digit references, checked in the tests), not
directed-rounded bounds; a positive δ below the smallest double is returned as
that double (5e-324), never as 0.

Mechanisms: Gaussian (σ), Laplace (scale b), discrete Laplace (decay a), the discrete
Gaussian truncated to [−T, T] as dp_accounting analyses it (Canonne, Kamath & Steinke
2020), the mixture of Gaussians (a random sensitivity; dp_accounting's
``MixtureGaussianPrivacyLoss``), and K-ary randomized response (its exact privacy-loss distribution, as
dp_accounting's ``from_randomized_response`` builds it before discretisation).

Everything broadcasts over numpy arrays. The Gaussian also takes
``adjacency="replace"`` (replace-one with subsampling: μ_upper(x) = (1 − q)μ(x) + qμ(x + Δ),
μ_lower(x) = (1 − q)μ(x) + qμ(x − Δ)); dp_accounting offers it for no other noise here.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from .. import validation as check
from ._logspace import logsumexp

ADD = "add"
REMOVE = "remove"
REPLACE = "replace"
ADJACENCIES = (ADD, REMOVE)
_LOG_HALF = math.log(0.5)
# A positive δ below every double is returned as this, never as 0.
_SMALLEST_POSITIVE = math.nextafter(0.0, 1.0)

_Floats = NDArray[np.float64]
# A point, loss or ε: one number, or an array that the public functions broadcast over.
_Real = float | _Floats


def _not_nan(name: str, value: ArrayLike) -> _Floats:
    array = check.real_array(name, value)
    if np.any(np.isnan(array)):
        raise ValueError(f"{name} must be a real number in [-inf, inf], not NaN")
    return array


def _common(
    sensitivity: ArrayLike,
    sampling_prob: ArrayLike,
    adjacency: str,
    integer_sensitivity: bool = False,
    adjacencies: tuple[str, ...] = ADJACENCIES,
) -> tuple[_Floats, _Floats, str]:
    if integer_sensitivity:
        sensitivity = np.asarray(check.integer_at_least("sensitivity", sensitivity, 1), dtype=float)
    else:
        sensitivity = np.asarray(check.positive("sensitivity", sensitivity))
    sampling_prob = check.in_interval("sampling_prob", sampling_prob, 0.0, 1.0, low_open=True, high_open=False)
    adjacency = check.choice("adjacency", adjacency, adjacencies)
    return sensitivity, sampling_prob, adjacency


def _log_exp_minus(value: _Real, log_one_minus_q: _Real) -> _Floats:
    """log(e^value − (1 − q)) for value > log(1 − q), without overflow for large value."""
    with np.errstate(divide="ignore"):
        return value + np.log1p(-np.exp(log_one_minus_q - value))


def _log_difference_to_delta(log_a: _Real, log_b: _Real) -> _Floats:
    """e^log_a − e^log_b >= 0 from its logs; rounding cannot make it negative.

    A positive difference that underflows is the smallest positive double, never 0.
    """
    with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
        difference = log_b - log_a
        delta = np.exp(log_a) * -np.expm1(np.minimum(difference, 0.0))
    positive = np.isfinite(log_a) & (difference < 0)
    return np.where(np.isneginf(log_a), 0.0, np.where(positive, np.maximum(delta, _SMALLEST_POSITIVE), delta))


class _Noise:
    """A symmetric noise: REMOVE privacy loss without subsampling, its inverse, and log CDF."""

    discrete = False
    bounded_loss = False  # True where the loss is flat at ±its bound beyond x <= −Δ and x >= 0

    def loss(self, x: _Real, sensitivity: _Floats) -> _Floats:
        raise NotImplementedError

    def inverse(self, loss: _Real, sensitivity: _Floats) -> _Floats:
        raise NotImplementedError

    def log_cdf(self, x: _Real) -> _Floats:
        raise NotImplementedError


class _Gaussian(_Noise):
    def __init__(self, standard_deviation: _Real) -> None:
        self.sigma = standard_deviation

    def loss(self, x: _Real, sensitivity: _Floats) -> _Floats:
        return sensitivity * (-0.5 * sensitivity - x) / self.sigma**2

    def inverse(self, loss: _Real, sensitivity: _Floats) -> _Floats:
        return -0.5 * sensitivity - loss * self.sigma**2 / sensitivity

    def log_cdf(self, x: _Real) -> _Floats:
        log_cdf: _Floats = special.log_ndtr(x / self.sigma)
        return log_cdf


class _Laplace(_Noise):
    bounded_loss = True

    def __init__(self, parameter: _Real) -> None:
        self.scale = parameter

    def loss(self, x: _Real, sensitivity: _Floats) -> _Floats:
        # |x| − |x + Δ| piecewise, so that the flat parts are exactly ±Δ rather than a rounded difference.
        return np.clip(-2.0 * np.asarray(x, dtype=float) - sensitivity, -sensitivity, sensitivity) / self.scale

    def inverse(self, loss: _Real, sensitivity: _Floats) -> _Floats:
        # The loss's range is [−Δ/b, Δ/b]; compare in loss units, as the loss itself is computed.
        largest = sensitivity / self.scale
        middle = -0.5 * (sensitivity + loss * self.scale)
        return np.where(loss > largest, -np.inf, np.where(loss <= -largest, np.inf, middle))

    def log_cdf(self, x: _Real) -> _Floats:
        z = np.asarray(x, dtype=float) / self.scale
        with np.errstate(over="ignore"):
            return np.where(z < 0, _LOG_HALF + z, np.log1p(-0.5 * np.exp(-np.abs(z))))


class _DiscreteLaplace(_Noise):
    """Mass ∝ e^{−a|x|} on the integers (scipy's ``dlaplace(a)``)."""

    discrete = True
    bounded_loss = True

    def __init__(self, parameter: _Real) -> None:
        self.a = parameter

    def loss(self, x: _Real, sensitivity: _Floats) -> _Floats:
        return np.clip(-2.0 * np.asarray(x, dtype=float) - sensitivity, -sensitivity, sensitivity) * self.a

    def inverse(self, loss: _Real, sensitivity: _Floats) -> _Floats:
        largest = sensitivity * self.a
        middle = np.floor(-0.5 * (sensitivity + loss / self.a))
        return np.where(loss > largest, -np.inf, np.where(loss <= -largest, np.inf, middle))

    def log_cdf(self, x: _Real) -> _Floats:
        # P(X <= k) = e^{ak}/(1 + e^{-a}) for k < 0 and 1 − e^{−a(k+1)}/(1 + e^{−a}) for k >= 0.
        k = np.floor(np.asarray(x, dtype=float))
        log_norm = np.log1p(np.exp(-self.a))
        with np.errstate(over="ignore", invalid="ignore"):
            negative = self.a * k - log_norm
            positive = np.log1p(-np.exp(-self.a * (np.abs(k) + 1.0) - log_norm))
        log_cdf: _Floats = np.where(k < 0, negative, positive)
        return log_cdf


def _log_q(q: _Floats) -> tuple[_Floats, _Floats]:
    """log q and log(1 − q), the latter −inf at q = 1."""
    with np.errstate(divide="ignore"):
        return np.log(q), np.log1p(-q)


class _TruncatedDiscreteGaussian(_Noise):
    """Mass ∝ e^{−x²/(2σ²)} on the integers of [−T, T] (dp_accounting's ``DiscreteGaussianPrivacyLoss``).

    The loss is Gaussian-shaped inside, +∞ where only the shifted distribution's support
    remains and −∞ where only the unshifted one's does; it is undefined elsewhere.
    """

    discrete = True

    def __init__(self, sigma: float, truncation_bound: int) -> None:
        self.sigma, self.bound = sigma, truncation_bound
        support = np.arange(-truncation_bound, truncation_bound + 1)
        log_mass = np.concatenate([[-np.inf], -0.5 * np.square(support) / sigma**2])
        log_cdf = np.logaddexp.accumulate(log_mass)
        self.log_cdf_table = log_cdf - log_cdf[-1]  # index 0 is x = −T − 1

    def loss(self, x: _Real, sensitivity: _Floats) -> _Floats:
        x = np.asarray(x, dtype=float)
        if np.any((x > self.bound) | (x < -self.bound - sensitivity)):
            raise ValueError(
                f"x must lie where the truncated discrete Gaussian's loss is defined, [-T - Δ, T] for 'remove' "
                f"and [-T, T + Δ] for 'add' with T = truncation_bound = {self.bound}"
            )
        inside = sensitivity * (-0.5 * sensitivity - x) / self.sigma**2
        return np.where(x > self.bound - sensitivity, -np.inf, np.where(x < -self.bound, np.inf, inside))

    def inverse(self, loss: _Real, sensitivity: _Floats) -> _Floats:
        with np.errstate(invalid="ignore"):
            inside = np.floor(np.clip(-0.5 * sensitivity - loss * self.sigma**2 / sensitivity, -self.bound - 1.0, self.bound - sensitivity))
        return np.where(np.isneginf(loss), self.bound - sensitivity, inside)

    def log_cdf(self, x: _Real) -> _Floats:
        index = np.floor(np.clip(np.asarray(x, dtype=float), -self.bound - 1.0, float(self.bound))) + self.bound + 1.0
        log_cdf: _Floats = self.log_cdf_table[index.astype(np.int64)]
        return log_cdf


def _privacy_loss(noise: _Noise, x: _Real, sensitivity: _Floats, q: _Floats, adjacency: str) -> _Floats:
    log_q, log_one_minus_q = _log_q(q)
    if adjacency == REPLACE:
        return _privacy_loss(noise, x, sensitivity, q, REMOVE) + _privacy_loss(noise, x, sensitivity, q, ADD)
    if adjacency == REMOVE:
        return np.logaddexp(log_one_minus_q, log_q + noise.loss(x, sensitivity))
    return -np.logaddexp(log_one_minus_q, log_q + noise.loss(-x, sensitivity))


def _inverse_privacy_loss(noise: _Noise, loss: _Floats, sensitivity: _Floats, q: _Floats, adjacency: str) -> _Floats:
    """Largest x with ℓ(x) >= loss; raises where loss is outside the range of ℓ."""
    x = _inverse_privacy_loss_formula(noise, loss, sensitivity, q, adjacency)
    if not noise.bounded_loss:
        return x
    # A bounded loss reaches its largest value on a half-line ending at −Δ (remove) or 0 (add).
    # Comparing with that value as ℓ itself computes it keeps the round trip ℓ⁻¹(ℓ(x)) exact
    # there, where the subsampling transform's rounding would otherwise push it past the bound.
    largest = _privacy_loss(noise, -np.inf, sensitivity, q, adjacency)
    smallest = _privacy_loss(noise, np.inf, sensitivity, q, adjacency)
    edge = -sensitivity if adjacency == REMOVE else 0.0 * sensitivity
    return np.where(loss > largest, -np.inf, np.where(loss <= smallest, np.inf, np.where(loss == largest, edge, x)))


def _inverse_privacy_loss_formula(noise: _Noise, loss: _Floats, sensitivity: _Floats, q: _Floats, adjacency: str) -> _Floats:
    log_q, log_one_minus_q = _log_q(q)
    if adjacency == REPLACE:
        assert isinstance(noise, _Gaussian)  # the public functions offer replace-one for the Gaussian only
        return _gaussian_replace_inverse(noise, loss, sensitivity, log_q, log_one_minus_q)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if adjacency == REMOVE:
            if np.any(loss < log_one_minus_q):
                raise ValueError(f"privacy_loss must be >= log(1 - sampling_prob) for adjacency='remove' (got {float(np.min(loss))!r})")
            base = np.where(loss == log_one_minus_q, -np.inf, _log_exp_minus(loss, log_one_minus_q) - log_q)
            return noise.inverse(base, sensitivity)
        if np.any(loss > -log_one_minus_q):
            raise ValueError(f"privacy_loss must be <= -log(1 - sampling_prob) for adjacency='add' (got {float(np.max(loss))!r})")
        base = np.where(loss == -log_one_minus_q, np.inf, -(_log_exp_minus(-loss, log_one_minus_q) - log_q))
        return sensitivity + noise.inverse(base, sensitivity)


def _gaussian_replace_inverse(
    noise: _Gaussian, loss: _Floats, sensitivity: _Floats, log_q: _Floats, log_one_minus_q: _Floats
) -> _Floats:
    """x = σ²/Δ·(arsinh(−α sinh(ℓ/2)) − ℓ/2), α = e^{Δ²/(2σ²)}(1 − q)/q (dp_accounting's derivation).

    The replace-one loss −2Δx/σ² + log-ratio terms covers all of (−∞, ∞), so every loss
    has a finite inverse; α sinh(ℓ/2) is carried as a logarithm so that Δ/σ > 38 does not overflow.
    """
    sigma2 = noise.sigma**2
    half = 0.5 * np.abs(loss)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_y = (0.5 * np.square(sensitivity) / sigma2 + log_one_minus_q - log_q
                 + half + np.log1p(-np.exp(-2.0 * half)) + math.log(0.5))
        # arsinh(e^t) = t + log(1 + √(1 + e^{−2t})) for large t, direct otherwise.
        asinh = np.where(log_y > 0, log_y + np.log1p(np.sqrt(1.0 + np.exp(-2.0 * np.abs(log_y)))), np.arcsinh(np.exp(np.minimum(log_y, 0.0))))
        x = sigma2 / sensitivity * (-np.sign(loss) * asinh - 0.5 * loss)
    return np.where(np.isinf(loss), -loss, x)


def _delta_for_epsilon(noise: _Noise, epsilon: _Floats, sensitivity: _Floats, q: _Floats, adjacency: str) -> _Floats:
    """δ(ε) by the threshold rule; δ(−∞) = 1.

    δ(+∞) is the μ_upper-mass of infinite privacy loss: 0 for most noises, positive for the
    truncated discrete Gaussian, whose edges carry mass under one distribution only.
    """
    below = np.asarray(epsilon) == -np.inf
    delta = _delta_for_finite_epsilon(noise, np.where(below, 0.0, epsilon), sensitivity, q, adjacency)
    if isinstance(noise, _Gaussian):
        # The Gaussian's loss is unbounded (above, in the remove and replace directions, and in the add
        # direction without subsampling), so δ(ε) > 0 at every finite ε, however far below the smallest
        # double (or below the resolution of log A − log B); only the add direction with q < 1 stops at
        # −log(1 − q), where δ is 0 exactly.
        reached = np.isfinite(epsilon) & ((adjacency != ADD) | (q == 1.0) | (epsilon < -_log_q(q)[1]))
        delta = np.where(reached, np.maximum(delta, _SMALLEST_POSITIVE), delta)
    return np.where(below, 1.0, delta)


def _plus(log_factor: _Real, log_cdf: _Real) -> _Floats:
    """log_factor + log_cdf, −inf where the CDF is 0 (even when the factor is +inf, at ε = +∞)."""
    return np.where(np.isneginf(log_cdf), -np.inf, log_factor + log_cdf)


def _log_abs_expm1(value: _Floats) -> _Floats:
    """log|e^value − 1| without overflow (−inf at 0)."""
    with np.errstate(divide="ignore", over="ignore"):
        return np.where(value > 0, value + np.log1p(-np.exp(-np.abs(value))), np.log(-np.expm1(np.minimum(value, 0.0))))


def _delta_for_finite_epsilon(noise: _Noise, epsilon: _Floats, sensitivity: _Floats, q: _Floats, adjacency: str) -> _Floats:
    epsilon, sensitivity, q = np.broadcast_arrays(epsilon, sensitivity, q)
    log_q, log_one_minus_q = _log_q(q)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if adjacency == REPLACE:
            # F_u − e^ε F_l = qF(x+Δ) − e^ε qF(x−Δ) + (1 − q)(1 − e^ε)F(x), the last term on the side of its sign.
            x = _inverse_privacy_loss(noise, epsilon, sensitivity, q, REPLACE)
            log_middle = np.where(q < 1.0, _plus(log_one_minus_q + _log_abs_expm1(epsilon), noise.log_cdf(x)), -np.inf)
            log_a = np.logaddexp(log_q + noise.log_cdf(x + sensitivity), np.where(epsilon < 0, log_middle, -np.inf))
            log_b = np.logaddexp(_plus(log_q + epsilon, noise.log_cdf(x - sensitivity)), np.where(epsilon > 0, log_middle, -np.inf))
            return _log_difference_to_delta(log_a, log_b)
        if adjacency == REMOVE:
            # δ = q F(x* + Δ) − (e^ε − (1 − q)) F(x*); at ε <= log(1 − q) every x counts: δ = 1 − e^ε.
            trivial = epsilon <= log_one_minus_q
            safe_epsilon = np.where(trivial, 0.0, epsilon)
            x = _inverse_privacy_loss(noise, safe_epsilon, sensitivity, q, REMOVE)
            log_a = log_q + noise.log_cdf(x + sensitivity)
            log_b = _plus(_log_exp_minus(safe_epsilon, log_one_minus_q), noise.log_cdf(x))
            return np.where(trivial, -np.expm1(np.minimum(epsilon, 0.0)), _log_difference_to_delta(log_a, log_b))
        # δ = (1 − (1 − q)e^ε) F(x*) − q e^ε F(x* − Δ); zero once ε >= −log(1 − q) (q < 1).
        zero = (epsilon >= -log_one_minus_q) & (q < 1.0)
        safe_epsilon = np.where(zero, 0.0, epsilon)
        x = _inverse_privacy_loss(noise, safe_epsilon, sensitivity, q, ADD)
        log_a = np.where(q < 1.0, np.log1p(-np.exp(log_one_minus_q + safe_epsilon)), 0.0) + noise.log_cdf(x)
        log_b = _plus(log_q + safe_epsilon, noise.log_cdf(x - sensitivity))
        return np.where(zero, 0.0, _log_difference_to_delta(log_a, log_b))


def _x_argument(noise: _Noise, x: ArrayLike) -> _Floats:
    x = _not_nan("x", x)
    if noise.discrete and np.any(np.isfinite(x) & (x != np.floor(x))):
        raise ValueError("x must be an integer for discrete noise (the privacy loss is defined on the integers only)")
    return x


def _evaluate(
    query: Callable[[_Noise, _Floats, _Floats, _Floats, str], _Floats],
    checked: Callable[[_Noise, ArrayLike], _Floats],
    noise: _Noise,
    value: ArrayLike,
    sensitivity: ArrayLike,
    sampling_prob: ArrayLike,
    adjacency: str,
    integer_sensitivity: bool = False,
    adjacencies: tuple[str, ...] = ADJACENCIES,
) -> _Real:
    """``query`` (the loss, its inverse or δ(ε)) at ``checked(noise, value)``, as a float or an array: the public
    functions' shared body, which checks Δ, q and the adjacency (:func:`_common`) before ``value``."""
    sensitivity, q, adjacency = _common(sensitivity, sampling_prob, adjacency, integer_sensitivity, adjacencies)
    return check.scalar_or_array(query(noise, checked(noise, value), sensitivity, q, adjacency))


_loss = functools.partial(_evaluate, _privacy_loss, _x_argument)
_inverse = functools.partial(_evaluate, _inverse_privacy_loss, lambda noise, loss: _not_nan("privacy_loss", loss))
_delta = functools.partial(_evaluate, _delta_for_epsilon, lambda noise, epsilon: _not_nan("epsilon", epsilon))


_GAUSSIAN_ADJACENCIES = (ADD, REMOVE, REPLACE)


def gaussian_privacy_loss(
    x: ArrayLike, standard_deviation: ArrayLike, sensitivity: ArrayLike = 1.0, sampling_prob: ArrayLike = 1.0, adjacency: str = REMOVE
) -> _Real:
    """Privacy loss ℓ(x) of the (Poisson-subsampled) Gaussian mechanism, dp_accounting's ``GaussianPrivacyLoss``.

    Without subsampling ℓ(x) = Δ(−Δ/2 − x)/σ² for ``"remove"`` (μ_upper = N(−Δ, σ²),
    μ_lower = N(0, σ²)); with rate q, ln(1 − q + q e^{ℓ(x)}); ``"add"`` is −ℓ_remove(−x);
    ``"replace"`` the sum of both (module docstring; Balle & Wang 2018, Koskela et al. 2020).

    Args:
        x: points, any shape (±inf allowed).
        standard_deviation: σ > 0.
        sensitivity: Δ > 0.
        sampling_prob: q in (0, 1].
        adjacency: ``"add"``, ``"remove"`` or ``"replace"``.
    """
    noise = _Gaussian(check.positive("standard_deviation", standard_deviation))
    return _loss(noise, x, sensitivity, sampling_prob, adjacency, adjacencies=_GAUSSIAN_ADJACENCIES)


def gaussian_inverse_privacy_loss(
    privacy_loss: ArrayLike, standard_deviation: ArrayLike, sensitivity: ArrayLike = 1.0, sampling_prob: ArrayLike = 1.0, adjacency: str = REMOVE
) -> _Real:
    """The largest x with ℓ(x) >= privacy_loss for the subsampled Gaussian (±inf where none or all do).

    Closed form: the inverse of ln(1 − q + q e^{ℓ₀}) composed with ℓ₀⁻¹(v) = −Δ/2 − vσ²/Δ, and for
    ``"replace"`` x = σ²/Δ·(arsinh(−α sinh(v/2)) − v/2), α = e^{Δ²/(2σ²)}(1 − q)/q. Raises where
    the value lies outside the loss's range (below log(1 − q) for ``"remove"``, above −log(1 − q)
    for ``"add"``), as dp_accounting does. Arguments as in :func:`gaussian_privacy_loss`.
    """
    noise = _Gaussian(check.positive("standard_deviation", standard_deviation))
    return _inverse(noise, privacy_loss, sensitivity, sampling_prob, adjacency, adjacencies=_GAUSSIAN_ADJACENCIES)


def gaussian_delta_for_epsilon(
    epsilon: ArrayLike, standard_deviation: ArrayLike, sensitivity: ArrayLike = 1.0, sampling_prob: ArrayLike = 1.0, adjacency: str = REMOVE
) -> _Real:
    """Tight δ(ε) of one direction of the subsampled Gaussian, dp_accounting's ``get_delta_for_epsilon``.

    δ(ε) = F_upper(x*) − e^ε F_lower(x*) at x* = ℓ⁻¹(ε) (module docstring), evaluated in log space;
    at q = 1 it is Balle & Wang's analytic δ (:func:`dpmech.gaussian_delta`). ε may be negative
    (δ >= 1 − e^ε). Arguments as in :func:`gaussian_privacy_loss`.
    """
    noise = _Gaussian(check.positive("standard_deviation", standard_deviation))
    return _delta(noise, epsilon, sensitivity, sampling_prob, adjacency, adjacencies=_GAUSSIAN_ADJACENCIES)


def laplace_privacy_loss(
    x: ArrayLike, parameter: ArrayLike, sensitivity: ArrayLike = 1.0, sampling_prob: ArrayLike = 1.0, adjacency: str = REMOVE
) -> _Real:
    """Privacy loss of the (Poisson-subsampled) Laplace mechanism, dp_accounting's ``LaplacePrivacyLoss``.

    Noise density e^{−|x|/b}/(2b), b = ``parameter``. Without subsampling, ``"remove"``:
    ℓ(x) = (|x| − |x + Δ|)/b, which is Δ/b for x <= −Δ and −Δ/b for x >= 0; subsampling and
    ``"add"`` as in the module docstring.

    Args:
        x: points, any shape.
        parameter: Laplace scale b > 0.
        sensitivity: Δ > 0.
        sampling_prob: q in (0, 1].
        adjacency: ``"add"`` or ``"remove"``.
    """
    return _loss(_Laplace(check.positive("parameter", parameter)), x, sensitivity, sampling_prob, adjacency)


def laplace_inverse_privacy_loss(
    privacy_loss: ArrayLike, parameter: ArrayLike, sensitivity: ArrayLike = 1.0, sampling_prob: ArrayLike = 1.0, adjacency: str = REMOVE
) -> _Real:
    """The largest x with ℓ(x) >= privacy_loss for the subsampled Laplace mechanism (±inf at the flat ends).

    Arguments as in :func:`laplace_privacy_loss`; values outside the loss's range raise, as in dp_accounting.
    """
    return _inverse(_Laplace(check.positive("parameter", parameter)), privacy_loss, sensitivity, sampling_prob, adjacency)


def laplace_delta_for_epsilon(
    epsilon: ArrayLike, parameter: ArrayLike, sensitivity: ArrayLike = 1.0, sampling_prob: ArrayLike = 1.0, adjacency: str = REMOVE
) -> _Real:
    """Tight δ(ε) of one direction of the subsampled Laplace mechanism (module docstring); ε may be negative.

    Without subsampling δ(ε) = 1 − e^{(ε − Δ/b)/2} for |ε| <= Δ/b, 1 − e^ε below and 0 above. Arguments as in
    :func:`laplace_privacy_loss`.
    """
    return _delta(_Laplace(check.positive("parameter", parameter)), epsilon, sensitivity, sampling_prob, adjacency)


def discrete_laplace_privacy_loss(
    x: ArrayLike, parameter: ArrayLike, sensitivity: ArrayLike = 1, sampling_prob: ArrayLike = 1.0, adjacency: str = REMOVE
) -> _Real:
    """Privacy loss of the discrete Laplace mechanism (mass ∝ e^{−a|x|} on the integers), dp_accounting's conventions.

    ℓ(x) = a(|x| − |x + Δ|) for ``"remove"`` without subsampling, at integer x only.

    Args:
        x: integer points, any shape.
        parameter: decay a > 0.
        sensitivity: integer Δ >= 1.
        sampling_prob: q in (0, 1].
        adjacency: ``"add"`` or ``"remove"``.
    """
    noise = _DiscreteLaplace(check.positive("parameter", parameter))
    return _loss(noise, x, sensitivity, sampling_prob, adjacency, integer_sensitivity=True)


def discrete_laplace_inverse_privacy_loss(
    privacy_loss: ArrayLike, parameter: ArrayLike, sensitivity: ArrayLike = 1, sampling_prob: ArrayLike = 1.0, adjacency: str = REMOVE
) -> _Real:
    """The largest integer x with ℓ(x) >= privacy_loss for the discrete Laplace mechanism (±inf at the ends)."""
    noise = _DiscreteLaplace(check.positive("parameter", parameter))
    return _inverse(noise, privacy_loss, sensitivity, sampling_prob, adjacency, integer_sensitivity=True)


def discrete_laplace_delta_for_epsilon(
    epsilon: ArrayLike, parameter: ArrayLike, sensitivity: ArrayLike = 1, sampling_prob: ArrayLike = 1.0, adjacency: str = REMOVE
) -> _Real:
    """Tight δ(ε) of one direction of the subsampled discrete Laplace mechanism; ε may be negative."""
    noise = _DiscreteLaplace(check.positive("parameter", parameter))
    return _delta(noise, epsilon, sensitivity, sampling_prob, adjacency, integer_sensitivity=True)


REPLACE_ONE = "replace_one"
REPLACE_SPECIAL = "replace_special"


def randomized_response_privacy_losses(
    noise_parameter: float, num_buckets: int, relation: str = REPLACE_ONE, adjacency: str = REMOVE
) -> tuple[_Floats, _Floats]:
    """The exact privacy-loss distribution of K-ary randomized response, as (losses, probabilities).

    dp_accounting's ``from_randomized_response`` (``pld/privacy_loss_distribution.py``) before
    discretisation: R(x) outputs a uniform bucket with probability p (``noise_parameter``)
    and x otherwise, so Pr[R(x) = x] = a = 1 − p + p/K and every other bucket has p/K.

    * ``"replace_one"`` (x → x'): losses ln(a/(p/K)), its negative and 0 with probabilities
      a, p/K and (K − 2)p/K; the same in both directions.
    * ``"replace_special"`` (x → a special input whose output is uniform): ``adjacency="remove"``
      compares R(x) with uniform (losses ln(Ka) with probability a and ln p with 1 − a),
      ``"add"`` uniform with R(x) (losses −ln(Ka) with probability 1/K, −ln p with (K − 1)/K).

    Atoms of probability 0 are left out; probabilities sum to 1.

    Args:
        noise_parameter: p in (0, 1].
        num_buckets: K >= 2.
        relation: ``"replace_one"`` or ``"replace_special"``.
        adjacency: ``"remove"`` or ``"add"`` (matters only for ``"replace_special"``).
    """
    p = float(check.in_interval("noise_parameter", noise_parameter, 0.0, 1.0, low_open=True, high_open=False))
    k = check.integer_scalar("num_buckets", num_buckets, 2)
    relation = check.choice("relation", relation, (REPLACE_ONE, REPLACE_SPECIAL))
    adjacency = check.choice("adjacency", adjacency, ADJACENCIES)
    keep = 1.0 - p + p / k
    if relation == REPLACE_ONE:
        log_ratio = math.log1p(k * (1.0 - p) / p)
        losses = np.array([log_ratio, -log_ratio, 0.0])
        probabilities = np.array([keep, p / k, (k - 2) * p / k])
    elif adjacency == REMOVE:
        losses = np.array([math.log(k * keep), math.log(p)])
        probabilities = np.array([keep, (k - 1) * p / k])
    else:
        losses = np.array([-math.log(k * keep), -math.log(p)])
        probabilities = np.array([1.0 / k, (k - 1) / k])
    present = probabilities > 0
    return losses[present], probabilities[present]


def randomized_response_delta_for_epsilon(
    epsilon: ArrayLike, noise_parameter: float, num_buckets: int, relation: str = REPLACE_ONE, adjacency: str = REMOVE
) -> _Real:
    """Tight δ(ε) = Σ Pr[ℓ]·(1 − e^{ε − ℓ})₊ of K-ary randomized response; broadcasts over ε.

    Arguments as in :func:`randomized_response_privacy_losses`; ε may be negative.
    """
    epsilon = _not_nan("epsilon", epsilon)
    losses, probabilities = randomized_response_privacy_losses(noise_parameter, num_buckets, relation, adjacency)
    gap = np.minimum(np.asarray(epsilon)[..., None] - losses, 0.0)
    return check.scalar_or_array(np.sum(probabilities * -np.expm1(gap), axis=-1))


def _truncated_discrete_gaussian(sigma: float, sensitivity: int, truncation_bound: int | None) -> tuple[_TruncatedDiscreteGaussian, float]:
    sigma = float(check.positive("sigma", sigma))
    if truncation_bound is None:
        # Canonne, Kamath & Steinke's tail bound: mass beyond ⌈11.6σ⌉ is below 1e-30 (dp_accounting's default).
        truncation_bound = math.ceil(11.6 * sigma)
    bound = check.integer_scalar("truncation_bound", truncation_bound, 1)
    sensitivity = check.integer_scalar("sensitivity", sensitivity, 1)
    if 2 * bound < sensitivity:
        raise ValueError(f"truncation_bound must be at least sensitivity / 2 = {sensitivity / 2} (got {bound})")
    return _TruncatedDiscreteGaussian(sigma, bound), float(sensitivity)


def discrete_gaussian_privacy_loss(
    x: ArrayLike, sigma: float, sensitivity: int = 1, sampling_prob: ArrayLike = 1.0, adjacency: str = REMOVE, truncation_bound: int | None = None
) -> _Real:
    """Privacy loss ℓ(x) of the discrete Gaussian truncated to [−T, T] (dp_accounting's conventions).

    Canonne, Kamath & Steinke 2020 (the discrete Gaussian); the truncation is dp_accounting's:
    T = ⌈11.6σ⌉ unless given, so that the analysed mechanism samples from the truncated
    distribution (mass beyond T is below 1e-30). ``sigma`` is the scale parameter, not the
    standard deviation; sensitivity Δ is an integer; x an integer where ℓ is defined
    (ValueError elsewhere). Other arguments as in the module docstring; broadcasts over x.
    """
    noise, float_sensitivity = _truncated_discrete_gaussian(sigma, sensitivity, truncation_bound)
    return _loss(noise, x, float_sensitivity, sampling_prob, adjacency)


def discrete_gaussian_inverse_privacy_loss(
    privacy_loss: ArrayLike, sigma: float, sensitivity: int = 1, sampling_prob: ArrayLike = 1.0, adjacency: str = REMOVE, truncation_bound: int | None = None
) -> _Real:
    """The largest integer x with ℓ(x) >= privacy_loss for the truncated discrete Gaussian (see above)."""
    noise, float_sensitivity = _truncated_discrete_gaussian(sigma, sensitivity, truncation_bound)
    return _inverse(noise, privacy_loss, float_sensitivity, sampling_prob, adjacency)


def discrete_gaussian_delta_for_epsilon(
    epsilon: ArrayLike, sigma: float, sensitivity: int = 1, sampling_prob: ArrayLike = 1.0, adjacency: str = REMOVE, truncation_bound: int | None = None
) -> _Real:
    """Tight δ(ε) of one direction for the truncated discrete Gaussian (see above); ε may be negative."""
    noise, float_sensitivity = _truncated_discrete_gaussian(sigma, sensitivity, truncation_bound)
    return _delta(noise, epsilon, float_sensitivity, sampling_prob, adjacency)


def _mixture_arguments(
    standard_deviation: float, sensitivities: ArrayLike, sampling_probs: ArrayLike, adjacency: str
) -> tuple[float, _Floats, _Floats, str]:
    sigma = float(check.positive("standard_deviation", standard_deviation))
    sensitivities = np.atleast_1d(check.non_negative("sensitivities", sensitivities))
    probabilities = np.atleast_1d(check.in_interval("sampling_probs", sampling_probs, 0.0, 1.0, low_open=False, high_open=False))
    if sensitivities.ndim != 1 or sensitivities.shape != probabilities.shape:
        raise ValueError(
            f"sensitivities and sampling_probs must be 1-D arrays of one length (got shapes {sensitivities.shape} and {probabilities.shape})"
        )
    if abs(math.fsum(probabilities) - 1.0) > 1e-9:
        raise ValueError(f"sampling_probs must sum to 1 (got {math.fsum(probabilities)!r})")
    present = probabilities > 0
    sensitivities, probabilities = sensitivities[present], probabilities[present]
    if not np.any(sensitivities > 0):
        raise ValueError("sensitivities must include a positive value with positive probability")
    adjacency = check.choice("adjacency", adjacency, ADJACENCIES)
    return sigma, sensitivities, np.log(probabilities), adjacency


def _mixture_loss(x: _Real, sigma: float, sensitivities: _Floats, log_probabilities: _Floats, adjacency: str) -> _Floats:
    x = np.asarray(x, dtype=float)[..., None]
    sign = 1.0 if adjacency == ADD else -1.0
    with np.errstate(invalid="ignore"):
        exponents = np.where(sensitivities > 0, sensitivities * (sign * x - 0.5 * sensitivities) / sigma**2, 0.0)
    terms = logsumexp(log_probabilities + exponents)
    return terms if adjacency == REMOVE else -terms


def _mixture_inverse(loss: _Real, sigma: float, sensitivities: _Floats, log_probabilities: _Floats, adjacency: str) -> _Floats:
    """Largest x with ℓ(x) >= loss (±inf outside the loss's range), by bisection between closed-form brackets.

    Each component bounds the loss from one side: for REMOVE, ℓ(x) >= log p_j + t_j(x) with
    t_j(x) = c_j(−c_j/2 − x)/σ², and ℓ(x) <= log(p_0 + (1 − p_0)·max_{c>0} e^{t_c(x)}), p_0 the
    mass on c = 0; solving each for x brackets the root. ADD is REMOVE mirrored: ℓ_add(x) = −ℓ_remove(−x)
    with the sign of the loss flipped.
    """
    loss = np.asarray(loss, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        return _mixture_inverse_bisection(loss, sigma, sensitivities, log_probabilities, adjacency)


def _mixture_inverse_bisection(
    loss: _Floats, sigma: float, sensitivities: _Floats, log_probabilities: _Floats, adjacency: str
) -> _Floats:
    # Brackets of the REMOVE loss at ±loss; ADD mirrors them (ℓ_add(x) = −ℓ_remove(−x)).
    mirrored = -loss if adjacency == ADD else loss
    lower, upper, log_p0 = _mixture_bracket(mirrored, sigma, sensitivities, log_probabilities)
    if adjacency == ADD:
        lower, upper = -upper, -lower
    finite = np.isfinite(mirrored) & (mirrored > log_p0)
    # The brackets hold in exact arithmetic; a margin keeps rounding from putting the root outside.
    low = np.where(finite, lower - 1e-6 * (1.0 + np.abs(lower)), 0.0)
    high = np.where(finite, np.maximum(upper, lower) + 1e-6 * (1.0 + np.abs(upper)), 0.0)
    for _ in range(80):  # the bracket halves each step: from any width to one ulp
        middle = 0.5 * (low + high)
        reaches = _mixture_loss(middle, sigma, sensitivities, log_probabilities, adjacency) >= loss
        low, high = np.where(reaches, middle, low), np.where(reaches, high, middle)
    beyond = np.inf if adjacency == REMOVE else -np.inf
    return np.where(finite, low, np.where(mirrored <= log_p0, beyond, -beyond))


def _mixture_bracket(
    loss: _Floats, sigma: float, sensitivities: _Floats, log_probabilities: _Floats
) -> tuple[_Floats, _Floats, _Real]:
    """Closed-form [lower, upper] around the REMOVE inverse at ``loss`` (see :func:`_mixture_inverse`)."""
    positive = sensitivities > 0
    c, log_p = sensitivities[positive], log_probabilities[positive]
    log_p0 = logsumexp(log_probabilities[~positive]) if np.any(~positive) else -np.inf
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lower = np.max(sigma**2 / c * (log_p - loss[..., None]) - 0.5 * c, axis=-1)
        # T* = log((e^loss − p_0)/(1 − p_0)), the largest single-component exponent compatible with loss.
        top = _log_exp_minus(loss, log_p0) - np.log1p(-np.exp(log_p0))
        upper = np.max(-top[..., None] * sigma**2 / c - 0.5 * c, axis=-1)
    return lower, upper, log_p0


def mixture_gaussian_privacy_loss(
    x: ArrayLike, standard_deviation: float, sensitivities: ArrayLike, sampling_probs: ArrayLike, adjacency: str = REMOVE
) -> _Real:
    """Privacy loss of the mixture-of-Gaussians mechanism (dp_accounting's ``MixtureGaussianPrivacyLoss``).

    The released value is f + N(0, σ²) where the change of f caused by one record is c_j with
    probability p_j (Poisson subsampling is c ∈ {0, Δ} with probabilities 1 − q, q).
    ``"remove"``: μ_upper = Σ_j p_j N(−c_j, σ²), μ_lower = N(0, σ²); ``"add"``: μ_upper = N(0, σ²),
    μ_lower = Σ_j p_j N(c_j, σ²). ℓ(x) = ln(μ_upper(x)/μ_lower(x)), evaluated as a logsumexp.

    Args:
        x: points, any shape.
        standard_deviation: σ > 0.
        sensitivities: 1-D array of c_j >= 0, at least one positive.
        sampling_probs: 1-D array of p_j in [0, 1] summing to 1 (within 1e-9); zeros are dropped.
        adjacency: ``"add"`` or ``"remove"``.
    """
    sigma, c, log_p, adjacency = _mixture_arguments(standard_deviation, sensitivities, sampling_probs, adjacency)
    x = _not_nan("x", x)
    return check.scalar_or_array(_mixture_loss(x, sigma, c, log_p, adjacency))


def mixture_gaussian_inverse_privacy_loss(
    privacy_loss: ArrayLike, standard_deviation: float, sensitivities: ArrayLike, sampling_probs: ArrayLike, adjacency: str = REMOVE
) -> _Real:
    """The largest x with ℓ(x) >= privacy_loss for the mixture of Gaussians, to one ulp (bisection).

    dp_accounting answers to within 1e-6 only. The loss takes every value above log p_0
    (``"remove"``) or below −log p_0 (``"add"``), p_0 the probability of sensitivity 0; a value
    beyond that raises, the boundary itself gives ±inf.
    """
    sigma, c, log_p, adjacency = _mixture_arguments(standard_deviation, sensitivities, sampling_probs, adjacency)
    loss = _not_nan("privacy_loss", privacy_loss)
    log_p0 = logsumexp(log_p[c == 0]) if np.any(c == 0) else -np.inf
    if adjacency == REMOVE and np.any(loss < log_p0):
        raise ValueError(f"privacy_loss must be >= log(p_0) = {log_p0!r} for adjacency='remove', p_0 the probability of sensitivity 0")
    if adjacency == ADD and np.any(loss > -log_p0):
        raise ValueError(f"privacy_loss must be <= -log(p_0) = {-log_p0!r} for adjacency='add', p_0 the probability of sensitivity 0")
    return check.scalar_or_array(_mixture_inverse(loss, sigma, c, log_p, adjacency))


def mixture_gaussian_delta_for_epsilon(
    epsilon: ArrayLike, standard_deviation: float, sensitivities: ArrayLike, sampling_probs: ArrayLike, adjacency: str = REMOVE
) -> _Real:
    """Tight δ(ε) of one direction for the mixture of Gaussians; ε may be negative; broadcasts over ε.

    δ = F_upper(x*) − e^ε F_lower(x*) at x* = ℓ⁻¹(ε), both terms as logarithms (``log_ndtr``).
    """
    sigma, c, log_p, adjacency = _mixture_arguments(standard_deviation, sensitivities, sampling_probs, adjacency)
    epsilon = _not_nan("epsilon", epsilon)
    finite = np.isfinite(epsilon)
    epsilon_finite = np.where(finite, epsilon, 0.0)
    delta = _mixture_delta(epsilon_finite, sigma, c, log_p, adjacency)
    # The loss is unbounded, so δ(ε) > 0 at every finite ε, when the upper law has a shifted component
    # (remove: some c > 0) or the lower law has no unshifted one (add: no c = 0, else the loss stays
    # below −log p₀); there a δ below the smallest double, or below the resolution of log A − log B,
    # is that double.
    unbounded = np.any(c > 0) if adjacency == REMOVE else not np.any(c == 0)
    if unbounded:
        delta = np.where(finite, np.maximum(delta, _SMALLEST_POSITIVE), delta)
    return check.scalar_or_array(np.where(finite, delta, np.where(epsilon > 0, 0.0, 1.0)))


def _mixture_delta(epsilon: _Floats, sigma: float, c: _Floats, log_p: _Floats, adjacency: str) -> _Floats:
    x = _mixture_inverse(epsilon, sigma, c, log_p, adjacency)[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        if adjacency == REMOVE:
            log_a = logsumexp(log_p + special.log_ndtr((x + c) / sigma))
            log_b = epsilon + special.log_ndtr(x[..., 0] / sigma)
        else:
            log_a = special.log_ndtr(x[..., 0] / sigma)
            log_b = epsilon + logsumexp(log_p + special.log_ndtr((x - c) / sigma))
    return _log_difference_to_delta(log_a, log_b)
