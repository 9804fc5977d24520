r"""Tight privacy profile of the Gaussian mechanism.

Theorem (Balle & Wang 2018, Thm. 8; DP-Helmet Def. 3.13 "Δ-Gauss"; Sommer,
Meiser & Mohammadi 2019, Thm. 5). Let :math:`M(D) = f(D) + N(0, \sigma^2 I)`
where :math:`\|f(D) - f(D')\|_2 \le \Delta` for every pair of neighbouring
datasets. Then M is (ε, δ)-DP exactly for

.. math::
    \delta(\varepsilon) = \Phi\!\left(\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\right)
      - e^{\varepsilon}\,\Phi\!\left(-\frac{\Delta}{2\sigma} - \frac{\varepsilon\sigma}{\Delta}\right),

and no smaller δ holds. The neighbouring relation is whichever one Δ was
computed under (replace-one or add/remove-one); the formula is the same.

k releases with the same σ and sensitivity Δ compose *exactly* to one release
with sensitivity :math:`\Delta\sqrt{k}`: the privacy loss of each is
:math:`N(\mu^2/2, \mu^2)` with :math:`\mu = \Delta/\sigma`, and sums of
independent Gaussians are Gaussian (Dong, Roth & Su 2019, μ-GDP composition).
Everything below therefore works with the single parameter
:math:`\mu = \Delta\sqrt{k}/\sigma`.

Numerics. With :math:`a = \mu/2 - \varepsilon/\mu` and :math:`b = a - \mu`
the identity :math:`\varepsilon - b^2/2 = -a^2/2` gives the cancellation-free form

.. math::
    \delta = \tfrac12 e^{-a^2/2}\left[\operatorname{erfcx}(x_a) - \operatorname{erfcx}(x_a + h)\right],
    \qquad x_a = -a/\sqrt2,\; h = \mu/\sqrt2 .

The bracket is evaluated in one of three ways so that no step loses more than
a few hundred ulps:

* :math:`x_a \ge 25` (the far tail, any h): after the substitution s = 1/x the
  bracket is :math:`\int_{1/(x_a+h)}^{1/x_a} G(s^2)\,ds`, with G the asymptotic
  series of the slope below (within 3e-3 of constant there), integrated term by
  term in closed form (sums of positive powers of the two ends, so nothing
  cancels); the length :math:`h/(x_a(x_a+h))` is formed in logs, so nothing
  cancels or underflows however large :math:`x_a` is;
* the plain difference :math:`\operatorname{erfcx}(x_a) - \operatorname{erfcx}(x_b)`,
  :math:`x_b = x_a + h`, where :math:`x_a < 25` and h > 0.1 or :math:`x_b + 2 < 260h`:
  it then cancels by a factor of at most 251 (reached at :math:`x_a = 25`, h = 0.1).
  Above the median (a > 0, :math:`x_a < 0`) the same two erfcx values give
  :math:`\delta = 1 - \tfrac12 e^{-a^2/2}[\operatorname{erfcx}(-x_a) + \operatorname{erfcx}(x_b)]`
  (as :math:`\log(1 - q)`), whose cancellation :math:`q/\delta` is below 19 for
  h > 0.1 and below 230 where :math:`x_b + 2 < 260h` (δ >= 0.56h there). (The
  bracket form would multiply :math:`e^{-a^2/2}` by :math:`\approx 2e^{a^2/2}`,
  whose rounding breaks monotonicity of δ near 1.) Over an array with one μ this
  is one fused pass: one erfcx over :math:`|x_a|`, one over :math:`x_b`;
* otherwise (:math:`x_a < 25`, a short interval): as
  :math:`\int_{x_a}^{x_a+h} (2/\sqrt\pi - 2x\,\mathrm{erfcx}(x))\,dx`, a positive
  integrand, by 8-point Gauss–Legendre (the integrand is entire; 6 to 16 nodes
  give the same 3e-13 worst error).

δ is returned in log space by :func:`gaussian_log_delta`, so values far below
the smallest double (1e-308) keep an accurate logarithm.

One pair of floats takes :mod:`dpmech._gaussian_scalar`: the same three
evaluations on Python floats, with erfcx from :mod:`dpmech._erfcx` (math
alone, relative error at most 2⁻⁴⁸, proven there) in place of scipy's, so that
neither numpy nor scipy loads for one number; its E adds 1300·2⁻⁴⁸ = 4.6e-12,
the largest magnification of that error (derived there). scipy.special loads
only when an array is evaluated.

Soundness. Every public function returns an upper bound on the exact δ, and
the inversions an ε or σ on the safe side of the exact one, for every input
they accept:

* μ = Δ√k/σ is formed from exact frexp mantissas and rounded upward (δ grows
  with μ), so subnormal and huge Δ, σ and k lose nothing;
* the absolute error of the evaluated log δ is bounded (u = 2⁻⁵³) by
  :math:`E = 10^{-11} + 16u[(|a|+1)s + a^2] + (16us)^2`, :math:`s = \mu/2+\varepsilon/\mu+|a|`:
  1e-11 is over thirty times the worst error of the three evaluations seen against
  python-flint's arb enclosures at 10⁵ points (2.3e-13 in the plain difference,
  1.6e-13 above the median, 2.8e-13 by Gauss–Legendre; tests/dpmech/test_gaussian_arb.py
  keeps checking the bound); the second term is the rounding of
  :math:`a = \mu/2-\varepsilon/\mu` (which cancels when ε ≈ μ²/2) times
  :math:`|\partial\log\delta/\partial a| \le |a|+1`, and of a²/2; the last term is
  the second order of that rounding, which rules where it exceeds |a| (a rounds to 0
  while the exact a is −5e8 at ε = 5.000000000000001e49, μ = 1e25), so that the
  evaluated value minus E bounds log δ from below too.
  E grows with |a| and with ε/μ, so over an array with one μ its value at the
  largest |a| and largest ε/μ (both read off the extreme ε) bounds every point,
  and is used for all of them when it exceeds 1e-11 by at most 1e-12.
  :func:`gaussian_log_delta` returns the evaluated value plus E, checked against
  50-digit mpmath from subnormal to 1e300 in μ and up to 1e308 in ε, and against
  arb, by the tests;
* where |a| >= 1e154, a²/2 has no double; log δ <= log ½ − a²/2 is then
  reported as −4.49e307, still above it. :func:`gaussian_delta` never returns
  0 for a positive δ: the smallest subnormal 5e-324 bounds anything below it.
"""

from __future__ import annotations

import math
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _newton
from . import validation as check
from ._gaussian_scalar import ASYMPTOTIC_FROM as _ASYMPTOTIC_FROM
from ._gaussian_scalar import CANCELLATION as _CANCELLATION
from ._gaussian_scalar import CANCELLATION_OFFSET as _CANCELLATION_OFFSET
from ._gaussian_scalar import HALF_LOG_2 as _HALF_LOG_2
from ._gaussian_scalar import HUGE_A as _HUGE_A
from ._gaussian_scalar import LARGEST as _LARGEST
from ._gaussian_scalar import LOG_DELTA_FLOOR
from ._gaussian_scalar import LOG_HALF as _LOG_HALF
from ._gaussian_scalar import LOG_SQRT_2PI as _LOG_SQRT_2PI
from ._gaussian_scalar import SHORT_INTERVAL as _SHORT_INTERVAL
from ._gaussian_scalar import SMALLEST_NORMAL as _SMALLEST_NORMAL
from ._gaussian_scalar import SQRT2 as _SQRT2
from ._gaussian_scalar import SUBNORMAL_BITS as _SUBNORMAL_BITS
from ._gaussian_scalar import TWO_OVER_SQRT_PI as _TWO_OVER_SQRT_PI
from ._gaussian_scalar import UNIT_ROUNDOFF as _UNIT_ROUNDOFF
from ._gaussian_scalar import UNIT_NODES, WEIGHTS
from ._gaussian_scalar import UPWARD as _UPWARD
from ._gaussian_scalar import asymptotic_series as _asymptotic_series
from ._gaussian_scalar import delta_from_log_upper as _delta_from_log_upper_scalar
from ._gaussian_scalar import epsilon_for_mu as _epsilon_scalar
from ._gaussian_scalar import error_bound as _error_bound
from ._gaussian_scalar import far_log_bracket as _far_log_bracket
from ._gaussian_scalar import log_delta_and_error as _log_delta_and_error_scalar
from ._gaussian_scalar import log_delta_bounds
from ._gaussian_scalar import ratio_up as _ratio_up_scalar
from ._gaussian_scalar import root_parts as _root_parts_scalar
from ._gaussian_scalar import solver_log_target as _solver_log_target_scalar
from ._gaussian_scalar import upper_log_delta as _upper_scalar

# scipy.special (erfcx, ndtri) is imported inside the array functions only: one number at a time takes
# dpmech._gaussian_scalar, whose erfcx is on math alone, and ``dpmech calibrate`` never loads scipy.
_UNIT_NODES = np.array(UNIT_NODES, dtype=np.float64)
_WEIGHTS = np.array(WEIGHTS, dtype=np.float64)
_MAX_CHECK_STEPS = 64
# The float path of _log_delta_bounds, under the name dpmech.ledger imports.
_log_delta_bounds_scalar = log_delta_bounds
# A shared μ's array may use one error bound for every point when it exceeds the 1e-11 base by at most this.
_UNIFORM_ERROR_SLACK = 1e-12

_Floats = NDArray[np.float64]
# One number, or an array: the public functions broadcast, and one pair of floats takes a faster path.
_Real = float | _Floats


def _erfcx_slope(x: _Floats) -> _Floats:
    """−d/dx erfcx(x) = 2/√π − 2x·erfcx(x) > 0; past x = 25 the direct form cancels by 2x², so the series."""
    from scipy import special

    near = np.minimum(x, _ASYMPTOTIC_FROM)
    slopes: _Floats = _TWO_OVER_SQRT_PI - 2.0 * near * special.erfcx(near)
    far = x > _ASYMPTOTIC_FROM
    if np.any(far):
        u = 1.0 / np.square(x[far])
        slopes[far] = _TWO_OVER_SQRT_PI * u * _asymptotic_series(u)
    return slopes


def _short_log_bracket(x_a: _Floats, h: _Floats, log_h: _Floats) -> _Floats:
    """log[erfcx(x_a) − erfcx(x_a + h)] for 1-D arrays of short intervals (x_a < 25): 8-point Gauss–Legendre
    on the slope."""
    nodes = x_a[:, None] + h[:, None] * _UNIT_NODES
    return log_h + np.log(0.5 * (_erfcx_slope(nodes.ravel()).reshape(nodes.shape) @ _WEIGHTS))


def _fused_log_delta(a: _Floats, x_a: _Floats, x_b: _Floats, upper_half: bool, offset: _Real = 0.0) -> _Floats:
    """log δ + offset where the plain difference serves (module docstring), from one erfcx pass over |x_a|
    and one over x_b (1-D arrays; ``offset`` a float or an array like them).

    a <= 0: log ½ − x_a² + log[erfcx(x_a) − erfcx(x_b)] (x_a² = a²/2); a > 0:
    log(1 − ½e^{−a²/2}[erfcx(−x_a) + erfcx(x_b)]). ``upper_half``: whether any a > 0 may occur.
    Overwrites all three arrays; returns ``a``, now log δ + offset.
    """
    from scipy import special

    above = np.flatnonzero(a > 0.0) if upper_half else None
    if above is not None and above.size:
        a_above = a[above]
        np.abs(x_a, out=x_a)
    np.multiply(x_a, x_a, out=a)
    special.erfcx(x_a, out=x_a)
    special.erfcx(x_b, out=x_b)
    if above is not None and above.size:
        upper_values = np.log1p(-(0.5 * np.exp(-0.5 * a_above * a_above) * (x_a[above] + x_b[above])))
    np.subtract(x_a, x_b, out=x_a)
    np.log(x_a, out=x_a)
    if isinstance(offset, np.ndarray):  # a float, or a 1-D array like ``a``
        np.subtract(_LOG_HALF, a, out=a)
        a += offset
    else:
        np.subtract(_LOG_HALF + offset, a, out=a)
    a += x_a
    if above is not None and above.size:
        a[above] = upper_values + (offset[above] if isinstance(offset, np.ndarray) else offset)
    return a


def _log_delta_and_error(epsilon: _Floats, mu: _Floats) -> tuple[_Floats, _Floats]:
    """(evaluated log δ, bound E on its absolute error) for validated 1-D float arrays with μ > 0 (μ may be inf).

    Entries with |a| >= 1e154 come back as (log δ <= 0 for a > 0, −inf for a < 0; E = 0).
    """
    if epsilon.size == 1:
        pair = _log_delta_and_error_scalar(float(epsilon[0]), float(mu[0]))
        if pair is not None:
            return np.array([pair[0]]), np.array([pair[1]])
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        ratio = epsilon / mu
        a = 0.5 * mu - ratio
        size_a = np.abs(a)
        huge = ~(size_a < _HUGE_A)
        x_a, h = -a / _SQRT2, mu / _SQRT2
        error = _error_bound(size_a, 0.5 * mu + ratio + size_a)
        error[huge] = 0.0
        log_delta = np.where(a > 0.0, 0.0, -np.inf)
        far = ~huge & (x_a >= _ASYMPTOTIC_FROM)
        short = ~huge & ~far & ~((h > _SHORT_INTERVAL) | (x_a + h + _CANCELLATION_OFFSET < _CANCELLATION * h))
        fused = ~huge & ~far & ~short
        if np.all(fused):
            return _fused_log_delta(a, x_a, x_a + h, True), error
        if np.any(fused):
            index = np.flatnonzero(fused)
            log_delta[index] = _fused_log_delta(a[index], x_a[index], x_a[index] + h[index], True)
        for region, bracket in ((short, _short_log_bracket), (far, None)):
            if np.any(region):
                index = np.flatnonzero(region)
                x, step, log_h = x_a[index], h[index], np.log(mu[index]) - _HALF_LOG_2
                log_bracket = bracket(x, step, log_h) if bracket else _far_log_bracket(x, x + step, log_h, np.log)
                log_delta[index] = _LOG_HALF - 0.5 * np.square(a[index]) + log_bracket
    return log_delta, error


def _log_delta_bounds(epsilon: _Floats, mu: _Floats) -> tuple[_Floats, _Floats, _Floats]:
    """(evaluated log δ, lower bound, upper bound on the exact log δ) from one evaluation, for validated
    1-D float arrays (μ > 0, possibly inf).

    The upper bound is never NaN or ±inf; the lower bound is −inf where nothing is proven; the
    evaluated value (for Newton slopes and estimates) may be −inf or NaN.
    """
    if epsilon.size == 1:
        bounds = _log_delta_bounds_scalar(float(epsilon[0]), float(mu[0]))
        if bounds is not None:
            log_delta_value, lower_value, upper_value = bounds
            return np.array([log_delta_value]), np.array([lower_value]), np.array([upper_value])
    log_delta, error = _log_delta_and_error(epsilon, mu)
    with np.errstate(invalid="ignore"):
        upper = log_delta + error
        lower = log_delta - error
    # −inf: |a| past 1e154, bounded by the floor. +inf or NaN: an error bound that overflowed, where
    # only log δ <= 0 is left (it holds everywhere).
    upper = np.where(np.isneginf(upper), LOG_DELTA_FLOOR, upper)
    upper = np.minimum(np.where(np.isnan(upper), 0.0, upper), 0.0)
    lower = np.where(np.isnan(lower) | np.isposinf(lower), -np.inf, np.minimum(lower, 0.0))
    return log_delta, lower, upper


def _log_delta_evaluated_and_upper(epsilon: _Floats, mu: _Floats) -> tuple[_Floats, _Floats]:
    """(evaluated log δ, upper bound on the exact log δ) for validated 1-D float arrays (μ > 0, possibly inf).

    The upper bound is never NaN or ±inf; the evaluated value (for Newton slopes) may be −inf.
    """
    log_delta, _, upper = _log_delta_bounds(epsilon, mu)
    return log_delta, upper


def _log_delta_upper_shared_mu(epsilon: _Floats, mu: float) -> _Floats | None:
    """The upper bound on log δ for a 1-D float array of ε (validated) and one float μ; None to defer.

    One fused pass (:func:`_fused_log_delta`) over the whole array, where every point that is not in the
    far tail takes the plain difference (far-tail points, x_a >= 25, are overwritten from their own
    subset); None where some point needs the short-interval quadrature. E is increasing in |a| and in ε/μ,
    so E at the largest |a| and the largest ε/μ over the array, both read off its extreme ε, bounds it at
    every point; that one number is used when it exceeds the 1e-11 base by at most 1e-12, else E per point.
    """
    if not 0.0 < mu < _HUGE_A:
        return None
    low, high = float(epsilon.min()), float(epsilon.max())
    ratio_high = high / mu
    # a = μ/2 − ε/μ is non-increasing in ε also after rounding, so these are the extremes of the a below.
    a_high, a_low = 0.5 * mu - low / mu, 0.5 * mu - ratio_high
    size = max(abs(a_high), abs(a_low))
    if not (ratio_high < _HUGE_A and size < _HUGE_A):
        return None
    h = mu / _SQRT2
    # Every point that is not far must take the plain difference: h > 0.1, or x_b + 2 < 260·h at the
    # largest x_b (x_a + h rounds monotonically, so the largest x_a gives it).
    if not (h > _SHORT_INTERVAL or min(-a_low / _SQRT2, _ASYMPTOTIC_FROM) + h + _CANCELLATION_OFFSET
            < _CANCELLATION * h):
        return None
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        a = np.divide(epsilon, mu)
        error: _Real = _error_bound(size, 0.5 * mu + ratio_high + size)
        if error > _newton.LOG_DELTA_MARGIN + _UNIFORM_ERROR_SLACK:
            size_a = np.abs(np.subtract(0.5 * mu, a))
            error = _error_bound(size_a, 0.5 * mu + a + size_a)
        np.subtract(0.5 * mu, a, out=a)
        x_a = np.divide(a, -_SQRT2)
        far = None
        if -a_low / _SQRT2 >= _ASYMPTOTIC_FROM:
            far = np.flatnonzero(x_a >= _ASYMPTOTIC_FROM)
            a_far, x_far = a[far], x_a[far]
            far_values = _LOG_HALF - 0.5 * np.square(a_far) + _far_log_bracket(
                x_far, x_far + h, math.log(mu) - _HALF_LOG_2, np.log) + (error[far] if isinstance(error, np.ndarray) else error)
        upper = _fused_log_delta(a, x_a, np.add(x_a, h), a_high > 0.0, error)
        if far is not None:
            upper[far] = far_values
        # log δ + E passes 0 only above the median (a > 0) or where E may pass log 2 (log δ <= log ½ elsewhere);
        # fmin: log δ <= 0 holds everywhere, also in place of a NaN (none is expected here).
        if a_high > 0.0 or isinstance(error, np.ndarray) or not error < 0.5:
            np.fmin(upper, 0.0, out=upper)
        return upper


def _log_delta_mu(epsilon: _Real, mu: _Real) -> _Real:
    """An upper bound on log δ(ε; μ), never NaN or ±inf; inputs validated (μ > 0, possibly inf), broadcast.

    A float for two scalar inputs, else an array of the broadcast shape.
    """
    scalar = np.ndim(epsilon) == 0 and np.ndim(mu) == 0
    if scalar:
        pair = _upper_scalar(float(epsilon), float(mu))
        if pair is not None:
            return pair[1]
    elif np.ndim(mu) == 0 and np.size(epsilon) > 1:
        epsilon = np.asarray(epsilon, dtype=float)
        upper = _log_delta_upper_shared_mu(epsilon.ravel(), float(mu))
        if upper is not None:
            return upper.reshape(epsilon.shape)
    epsilon, mu = np.broadcast_arrays(np.asarray(epsilon, dtype=float), np.asarray(mu, dtype=float))
    _, upper = _log_delta_evaluated_and_upper(epsilon.ravel(), mu.ravel())
    return float(upper[0]) if scalar else upper.reshape(epsilon.shape)


def _root_parts(compositions: int | _Floats) -> tuple[_Real, int]:
    """(root, exponent) with √k <= root·2^exponent (a Python int of any size), or √k for a float array."""
    if isinstance(compositions, int):
        return _root_parts_scalar(compositions)
    return np.sqrt(compositions), 0


@overload
def _ratio_up(numerator: float, compositions: int, denominator: float) -> float: ...
@overload
def _ratio_up(numerator: _Real, compositions: int | _Floats, denominator: _Real) -> _Real: ...
def _ratio_up(numerator: _Real, compositions: int | _Floats, denominator: _Real) -> _Real:
    """numerator·√compositions/denominator rounded upward from exact frexp mantissas; inf on overflow."""
    if isinstance(numerator, float) and isinstance(denominator, float) and isinstance(compositions, int):
        return _ratio_up_scalar(numerator, compositions, denominator)
    root, root_exponent = _root_parts(compositions)
    numerator_mantissas, numerator_exponents = np.frexp(numerator)
    denominator_mantissas, denominator_exponents = np.frexp(denominator)
    mantissas = numerator_mantissas * root / denominator_mantissas * _UPWARD
    exponents = numerator_exponents - denominator_exponents + root_exponent
    with np.errstate(over="ignore", under="ignore"):
        # ldexp overflows to inf; below the normal range it rounds to nearest, so the mantissa is rounded
        # up onto that grid instead.
        values: _Floats = np.ldexp(mantissas, np.clip(exponents, -10_000, 10_000))
        subnormal = values < _SMALLEST_NORMAL
        if np.any(subnormal):
            units = np.ceil(np.ldexp(mantissas, np.clip(exponents + _SUBNORMAL_BITS, -10_000, 10_000)))
            values = np.where(subnormal, np.ldexp(np.maximum(units, 1.0), -_SUBNORMAL_BITS), values)
    return float(values) if np.ndim(values) == 0 else values


def _validated_mu(sigma: ArrayLike, sensitivity: ArrayLike, compositions: ArrayLike) -> _Real:
    """μ = Δ√k/σ rounded upward (δ grows with μ); inf where it exceeds the largest double."""
    sigma = check.positive("sigma", sigma)
    sensitivity = check.positive("sensitivity", sensitivity)
    compositions = check.integer_at_least("compositions", compositions, 1)
    return _ratio_up(sensitivity, compositions, sigma)


@overload
def gaussian_log_delta(epsilon: float, sigma: float, sensitivity: float = 1.0, compositions: int = 1) -> float: ...
@overload
def gaussian_log_delta(
    epsilon: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike = 1.0, compositions: ArrayLike = 1
) -> _Real: ...
def gaussian_log_delta(
    epsilon: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike = 1.0, compositions: ArrayLike = 1
) -> _Real:
    """An upper bound on the natural log of the tight δ(ε) of the Gaussian mechanism (module docstring).

    Parameters broadcast against each other.

    Args:
        epsilon: ε >= 0. At ε = 0 the result is the total-variation distance.
        sigma: noise standard deviation σ > 0.
        sensitivity: L2 sensitivity Δ > 0 under the caller's neighbouring relation.
        compositions: number k >= 1 of releases with this σ and Δ, composed exactly.

    Returns:
        log δ as a float, or an array of the broadcast shape: never below the
        exact value, above it by the proven evaluation error bound (about 1e-11
        for ordinary inputs), finite far below log(1e-308) (at worst the floor
        −4.49e307, which still bounds δ from above).
    """
    epsilon = check.non_negative("epsilon", epsilon)
    mu = _validated_mu(sigma, sensitivity, compositions)
    return _log_delta_mu(epsilon, mu)


@overload
def gaussian_delta(epsilon: float, sigma: float, sensitivity: float = 1.0, compositions: int = 1) -> float: ...
@overload
def gaussian_delta(
    epsilon: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike = 1.0, compositions: ArrayLike = 1
) -> _Real: ...
def gaussian_delta(
    epsilon: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike = 1.0, compositions: ArrayLike = 1
) -> _Real:
    """An upper bound on the tight δ(ε) of the Gaussian mechanism, never 0: ``exp(gaussian_log_delta(...))`` rounded up.

    δ(ε) = Φ(Δ'/(2σ) − εσ/Δ') − e^ε Φ(−Δ'/(2σ) − εσ/Δ') with Δ' = Δ√k
    (Balle & Wang 2018). Above the exact δ by a relative 1e-11 or so for
    ordinary inputs; where δ is below the smallest double, 5e-324 (use
    :func:`gaussian_log_delta` for its size). Arguments are as in
    :func:`gaussian_log_delta` and broadcast.
    """
    log_delta = gaussian_log_delta(epsilon, sigma, sensitivity, compositions)
    if isinstance(log_delta, float):
        return _delta_from_log_upper_scalar(log_delta)
    # _delta_from_log_upper in place (the array is gaussian_log_delta's own).
    with np.errstate(under="ignore"):
        np.exp(log_delta, out=log_delta)
    log_delta.view(np.int64)[...] += 1
    return np.minimum(log_delta, 1.0, out=log_delta)


def _delta_from_log_upper(log_delta: _Real) -> _Floats:
    """exp of an upper bound on log δ, one ulp up (exp is within an ulp), so never 0 and never below δ.

    One ulp up is the next bit pattern: exp of a log δ <= 0 is a double in [0, 1], where the int64
    view orders the doubles and + 1 is nextafter(·, inf), 0 included (to 2⁻¹⁰⁷⁴).
    """
    with np.errstate(under="ignore"):
        delta = np.exp(log_delta, out=np.empty(np.shape(log_delta)))
    delta.view(np.int64)[...] += 1
    return np.minimum(delta, 1.0, out=delta)


@overload
def _solver_log_target(delta: float) -> float: ...
@overload
def _solver_log_target(delta: _Floats) -> _Floats: ...
def _solver_log_target(delta: _Real) -> _Real:
    """The log δ the inversions aim at: log(delta) lowered so that exp and its ulp up stay <= delta.

    log rounds by a relative u and exp by an ulp; below 1e-305 the ulps of δ are coarse, so half of δ.
    """
    if isinstance(delta, float):
        return _solver_log_target_scalar(delta)
    deltas = np.asarray(delta, dtype=float)
    log_deltas: _Floats = np.log(deltas) - np.where(deltas < 1e-305, math.log(2.0), 0.0)
    return log_deltas - (4.0 * _UNIT_ROUNDOFF) * (np.abs(log_deltas) + 2.0)


def _log_delta_slope_in_epsilon(epsilon: _Floats, mu: _Floats, log_delta: _Floats) -> _Floats:
    """d log δ / dε = −e^ε Φ(b) / δ, with e^ε Φ(b) = ½ e^{−a²/2} erfcx(x_b) (x_b > 0 always)."""
    from scipy import special

    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        a = 0.5 * mu - epsilon / mu
        x_b = (0.5 * mu + epsilon / mu) / _SQRT2
        slope: _Floats = -np.exp(_LOG_HALF - 0.5 * a * a + np.log(special.erfcx(x_b)) - log_delta)
        return slope


def _epsilon_step(epsilon: _Floats, excess: _Floats, slope: _Floats) -> _Floats:
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        moved = epsilon - excess / slope
    return np.clip(np.where(np.isnan(moved), epsilon, moved), 0.0, _LARGEST)


def _upper_quantile(log_probability: _Floats) -> _Floats:
    """z with Φ(−z) = e^log_probability, a Newton start only: past e^−700 by Φ(−z) ≈ φ(z)/z (one correction)."""
    from scipy import special

    with np.errstate(under="ignore"):
        direct = -special.ndtri(np.exp(np.maximum(log_probability, -700.0)))
    rough = np.sqrt(-2.0 * np.minimum(log_probability, -700.0))
    tail = np.sqrt(np.maximum(rough * rough - 2.0 * np.log(rough) - 2.0 * _LOG_SQRT_2PI, 1.0))
    return np.where(log_probability > -700.0, direct, tail)


def _epsilon_for_mu(log_target: _Floats, mu: _Floats) -> tuple[_Floats, NDArray[np.bool_]]:
    """Smallest ε >= 0 with the upper bound on log δ(ε; μ) <= log_target, for 1-D arrays.

    log δ(ε) is convex and decreasing; Newton's method starts at the ε where
    Φ(a) equals the target, to the right of the root, and :mod:`dpmech._newton`
    finishes where the upper bound is below the target. Entries whose ε would
    exceed the largest double are reported by the caller (``unreachable``).
    """
    epsilon = np.zeros_like(mu)
    open_ = _log_delta_mu(0.0, mu) > log_target
    unreachable = open_ & (_log_delta_mu(_LARGEST, mu) > log_target)
    open_ &= ~unreachable
    if np.any(open_):
        target, m = log_target[open_], mu[open_]
        z = _upper_quantile(target)
        with np.errstate(over="ignore"):
            start = np.clip(m * z + 0.5 * m * m, 0.0, _LARGEST)

        def evaluate(values: _Floats, index: NDArray[np.integer[Any]]) -> tuple[_Floats, _Floats]:
            log_delta, upper = _log_delta_evaluated_and_upper(values, m[index])
            return upper, _log_delta_slope_in_epsilon(values, m[index], log_delta)

        epsilon[open_] = _newton.solve(start, evaluate, _epsilon_step, target, np.full_like(m, _LARGEST), np.zeros_like(m))
    return epsilon, unreachable


@overload
def gaussian_epsilon(delta: float, sigma: float, sensitivity: float = 1.0, compositions: int = 1) -> float: ...
@overload
def gaussian_epsilon(
    delta: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike = 1.0, compositions: ArrayLike = 1
) -> _Real: ...
def gaussian_epsilon(
    delta: ArrayLike, sigma: ArrayLike, sensitivity: ArrayLike = 1.0, compositions: ArrayLike = 1
) -> _Real:
    """Smallest ε >= 0 with δ(ε) <= delta for the Gaussian mechanism, never below the exact one.

    Inverts the upper bound of :func:`gaussian_log_delta` on the tight profile
    (Balle & Wang 2018) by Newton's method and stops where that bound is below
    the target, so the exact δ at the returned ε is below ``delta``. Returns 0
    when the mechanism is already (0, delta)-DP.

    Args:
        delta: target δ in (0, 1).
        sigma, sensitivity, compositions: as in :func:`gaussian_delta`.

    Raises:
        ValueError: naming sigma where ε would exceed the largest double (μ = Δ√k/σ beyond about 1.9e154).
    """
    delta = check.open_unit_interval("delta", delta)
    mu = _validated_mu(sigma, sensitivity, compositions)
    scalar = np.ndim(delta) == 0 and np.ndim(mu) == 0
    if scalar:
        quick = _epsilon_scalar(float(delta), float(mu))
        if quick is not None:
            return quick
    delta, mu = np.broadcast_arrays(np.asarray(delta, dtype=float), mu)
    shape = delta.shape
    delta, mu = delta.ravel(), mu.ravel().astype(float)
    epsilon, unreachable = _epsilon_for_mu(_solver_log_target(delta), mu)
    if np.any(unreachable):
        worst = float(mu.ravel()[unreachable][0])
        raise ValueError(
            "sigma must be larger relative to sensitivity*sqrt(compositions): the epsilon at this delta "
            f"exceeds the largest double (mu = sensitivity*sqrt(compositions)/sigma = {worst:.6g}; "
            "at most about 1.9e154 is supported)"
        )
    # Checked through the δ that gaussian_delta reports at this ε.
    for _ in range(_MAX_CHECK_STEPS):
        over = _delta_from_log_upper(_log_delta_mu(epsilon, mu)) > delta
        if not np.any(over):
            break
        epsilon[over] = np.minimum(np.nextafter(epsilon[over], np.inf) * _UPWARD, _LARGEST)
    else:
        raise ArithmeticError("gaussian_epsilon: the epsilon failed its own check")
    return float(epsilon[0]) if scalar else epsilon.reshape(shape)
