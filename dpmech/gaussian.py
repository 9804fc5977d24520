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

The bracket is evaluated in one of four ways so that no step loses more than
a few hundred ulps:

* :math:`x_a \ge 25` (the far tail, any h): after the substitution s = 1/x the
  bracket is :math:`\int_{1/(x_a+h)}^{1/x_a} G(s^2)\,ds`, with G the asymptotic
  series of the slope below (within 3e-3 of constant there), by Gauss–Legendre;
  the length :math:`h/(x_a(x_a+h))` is formed in logs, so nothing cancels or
  underflows however large :math:`x_a` is;
* ``h <= 0.1``, :math:`x_a < 25`: as :math:`\int_{x_a}^{x_a+h} (2/\sqrt\pi - 2x\,\mathrm{erfcx}(x))\,dx`,
  a positive integrand, by 8-point Gauss–Legendre (the integrand is entire; 6 to 16 nodes give the same 3e-13 worst error);
* ``h > 0.1`` and :math:`0 \le x_a < 25`: the plain difference, which cancels by
  a factor of at most :math:`x_b/h < 260`;
* ``h > 0.1`` and :math:`a > 0` (Φ(a) > 1/2): :math:`\log\Phi(a) + \log(1 - r)`
  with ``log_ndtr`` and a stable :math:`\log(1 - e^x)`; the ratio
  :math:`r = e^{\varepsilon}\Phi(b)/\Phi(a) \le 2e^{\mu^2/2}\Phi(-\mu) < 0.9` there.
  (The erfcx form would multiply :math:`e^{-a^2/2}` by :math:`\approx 2e^{a^2/2}`,
  whose rounding breaks monotonicity of δ near 1.)

δ is returned in log space by :func:`gaussian_log_delta`, so values far below
the smallest double (1e-308) keep an accurate logarithm.

Soundness. Every public function returns an upper bound on the exact δ, and
the inversions an ε or σ on the safe side of the exact one, for every input
they accept:

* μ = Δ√k/σ is formed from exact frexp mantissas and rounded upward (δ grows
  with μ), so subnormal and huge Δ, σ and k lose nothing;
* the absolute error of the evaluated log δ is bounded (u = 2⁻⁵³) by
  :math:`E = 10^{-11} + 16u[(|a|+1)(\mu/2+\varepsilon/\mu+|a|) + a^2]`:
  1e-11 is thirty times the worst error of the bracket, erfcx and log_ndtr seen
  against 50-digit arithmetic; the second term is the rounding of
  :math:`a = \mu/2-\varepsilon/\mu` (which cancels when ε ≈ μ²/2) times
  :math:`|\partial\log\delta/\partial a| \le |a|+1`, and of a²/2. In the
  :math:`\Phi(a)(1-r)` form, :math:`\log r = \varepsilon+\log\Phi(b)-\log\Phi(a)`
  adds terms of size ε that cancel; it is lowered by its rounding bound
  :math:`16u[\varepsilon + b^2 + (|b|+1)(\mu/2+\varepsilon/\mu+|a|+|b|)]` before
  :math:`\log(1-r)` is taken, which is then an upper bound (and at worst 0:
  δ <= Φ(a)). :func:`gaussian_log_delta` returns this upper bound, checked
  against 50-digit mpmath from subnormal to 1e300 in μ and up to 1e308 in ε by
  the tests;
* where |a| >= 1e154, a²/2 has no double; log δ <= log ½ − a²/2 is then
  reported as −4.49e307, still above it. :func:`gaussian_delta` never returns
  0 for a positive δ: the smallest subnormal 5e-324 bounds anything below it.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.polynomial.legendre import leggauss
from scipy import special

from . import _newton
from . import validation as check

_SQRT2 = math.sqrt(2.0)
_LOG_HALF = math.log(0.5)
_HALF_LOG_2 = 0.5 * math.log(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SHORT_INTERVAL = 0.1
_UPPER_HALF_FROM = 0.0
_ASYMPTOTIC_FROM = 25.0
_NODES, _WEIGHTS = leggauss(8)
_UNIT_NODES = 0.5 * (1.0 + _NODES)
# (2n-1)!!/2^n for n = 1..8: the asymptotic series of 2/√π − 2x·erfcx(x).
_ASYMPTOTIC_COEFFICIENTS = (0.5, 0.75, 1.875, 6.5625, 29.53125, 162.421875, 1055.7421875, 7918.06640625)
_UNIT_ROUNDOFF = 2.0**-53
_LARGEST = float(np.finfo(float).max)
_SMALLEST_NORMAL = float(np.finfo(float).tiny)
# μ = Δ·√k/σ from exact mantissas takes at most four roundings of a relative u each.
_UPWARD = 1.0 + 8.0 * _UNIT_ROUNDOFF
# Past |a| = 1e154, a²/2 >= 5e307 and log δ <= log ½ − a²/2 is reported as this bound.
_HUGE_A = 1e154
LOG_DELTA_FLOOR = -0.25 * _LARGEST
_MAX_CHECK_STEPS = 64


def _asymptotic_series(u):
    """Σ (−1)^{n+1} c_n u^{n−1}: the slope 2/√π − 2x·erfcx(x) is (2/√π)·u·series(u) at u = 1/x²,
    below 1e-18 relative error for x >= 25."""
    series = np.zeros_like(u)
    for coefficient in reversed(_ASYMPTOTIC_COEFFICIENTS):
        series = coefficient - u * series
    return series


def _erfcx_slope(x):
    """−d/dx erfcx(x) = 2/√π − 2x·erfcx(x) > 0; past x = 25 the direct form cancels by 2x², so the series."""
    near = np.minimum(x, _ASYMPTOTIC_FROM)
    slopes = _TWO_OVER_SQRT_PI - 2.0 * near * special.erfcx(near)
    far = x > _ASYMPTOTIC_FROM
    if np.any(far):
        u = 1.0 / np.square(x[far])
        slopes[far] = _TWO_OVER_SQRT_PI * u * _asymptotic_series(u)
    return slopes


def _log_bracket(x_a, h, log_h):
    """log[erfcx(x_a) − erfcx(x_a + h)] for 1-D arrays with h > 0; log_h is log h, exact also for subnormal h."""
    out = np.empty_like(x_a)
    far = x_a >= _ASYMPTOTIC_FROM
    short = ~far & (h <= _SHORT_INTERVAL)
    middle = ~far & ~short
    if np.any(far):
        x, step = x_a[far], h[far]
        upper, lower = 1.0 / x, 1.0 / (x + step)
        nodes = lower[:, None] + (upper - lower)[:, None] * _UNIT_NODES
        mean = 0.5 * (_asymptotic_series(np.square(nodes)) @ _WEIGHTS)
        out[far] = log_h[far] - np.log(x) - np.log(x + step) + np.log(_TWO_OVER_SQRT_PI * mean)
    if np.any(short):
        nodes = x_a[short][:, None] + h[short][:, None] * _UNIT_NODES
        out[short] = log_h[short] + np.log(0.5 * (_erfcx_slope(nodes.ravel()).reshape(nodes.shape) @ _WEIGHTS))
    if np.any(middle):
        out[middle] = np.log(special.erfcx(x_a[middle]) - special.erfcx(x_a[middle] + h[middle]))
    return out


def _log1mexp(x):
    """log(1 − e^x) for x < 0, accurate on both sides of −ln 2 (Mächler 2012)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > -math.log(2.0), np.log(-np.expm1(np.minimum(x, -1e-300))), np.log1p(-np.exp(x)))


def _log_delta_and_error_scalar(epsilon: float, mu: float):
    """:func:`_log_delta_and_error` for one pair of floats, the same formulas on Python floats (microseconds)."""
    if not (mu < _HUGE_A and epsilon / mu < _HUGE_A):
        return None  # overflow territory: the array path handles it
    ratio = epsilon / mu
    a = 0.5 * mu - ratio
    size_a = abs(a)
    if not size_a < _HUGE_A:
        return None
    x_a, h = -a / _SQRT2, mu / _SQRT2
    spread = 0.5 * mu + ratio + size_a
    error = _newton.LOG_DELTA_MARGIN + (16.0 * _UNIT_ROUNDOFF) * (size_a + 1.0) * spread + (
        16.0 * _UNIT_ROUNDOFF) * size_a * size_a
    if x_a < _UPPER_HALF_FROM and h > _SHORT_INTERVAL:
        b = a - mu
        log_phi_a = float(special.log_ndtr(a))
        log_ratio = epsilon + float(special.log_ndtr(b)) - log_phi_a
        ratio_error = (16.0 * _UNIT_ROUNDOFF) * (epsilon + b * b + (abs(b) + 1.0) * (spread + abs(b)))
        evaluated = log_phi_a + _log1mexp_scalar(min(log_ratio, -1e-300))
        upper = log_phi_a + _log1mexp_scalar(min(log_ratio - ratio_error, -1e-300))
        return evaluated, error + (upper - evaluated)
    if x_a >= _ASYMPTOTIC_FROM or h <= _SHORT_INTERVAL or mu < _SMALLEST_NORMAL:
        log_bracket = float(_log_bracket(np.array([x_a]), np.array([h]), np.array([math.log(mu) - _HALF_LOG_2]))[0])
    else:
        log_bracket = math.log(float(special.erfcx(x_a)) - float(special.erfcx(x_a + h)))
    return _LOG_HALF - 0.5 * a * a + log_bracket, error


def _upper_scalar(epsilon: float, mu: float):
    """(evaluated log δ, upper bound) for floats, or None where only the array path decides."""
    pair = _log_delta_and_error_scalar(epsilon, mu)
    if pair is None or not math.isfinite(pair[0]) or not math.isfinite(pair[1]):
        return None
    return pair[0], min(pair[0] + pair[1], 0.0)


def _log1mexp_scalar(x: float) -> float:
    return math.log(-math.expm1(x)) if x > -math.log(2.0) else math.log1p(-math.exp(x))


def _log_delta_and_error(epsilon, mu):
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
        log_h = np.log(mu) - _HALF_LOG_2
        upper_half = ~huge & (x_a < _UPPER_HALF_FROM) & (h > _SHORT_INTERVAL)
        lower_half = ~huge & ~upper_half
        log_delta = np.where(a > 0.0, 0.0, -np.inf)
        spread = 0.5 * mu + ratio + size_a
        error = _newton.LOG_DELTA_MARGIN + (16.0 * _UNIT_ROUNDOFF) * (size_a + 1.0) * spread + (16.0 * _UNIT_ROUNDOFF) * np.square(size_a)
        error[huge] = 0.0
        if np.any(lower_half):
            log_delta[lower_half] = (_LOG_HALF - 0.5 * np.square(a[lower_half])
                                     + _log_bracket(x_a[lower_half], h[lower_half], log_h[lower_half]))
        if np.any(upper_half):
            e, m, a_half = epsilon[upper_half], mu[upper_half], a[upper_half]
            b = a_half - m
            log_phi_a = special.log_ndtr(a_half)
            log_ratio = e + special.log_ndtr(b) - log_phi_a
            # log r = ε + log Φ(b) − log Φ(a) adds terms of size ε that cancel against b²/2; a lower bound
            # on r gives an upper bound on log(1 − r), and log(1 − r) <= 0 whatever r is (δ <= Φ(a)).
            ratio_error = (16.0 * _UNIT_ROUNDOFF) * (e + np.square(b) + (np.abs(b) + 1.0) * (spread[upper_half] + np.abs(b)))
            evaluated = log_phi_a + _log1mexp(np.minimum(log_ratio, -1e-300))
            upper = log_phi_a + _log1mexp(np.minimum(log_ratio - ratio_error, -1e-300))
            log_delta[upper_half] = evaluated
            error[upper_half] += upper - evaluated
    return log_delta, error


def _log_delta_bounds(epsilon, mu):
    """(evaluated log δ, lower bound, upper bound on the exact log δ) from one evaluation, for validated
    1-D float arrays (μ > 0, possibly inf).

    The upper bound is never NaN or ±inf; the lower bound is −inf where nothing is proven; the
    evaluated value (for Newton slopes and estimates) may be −inf or NaN.
    """
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


def _log_delta_evaluated_and_upper(epsilon, mu):
    """(evaluated log δ, upper bound on the exact log δ) for validated 1-D float arrays (μ > 0, possibly inf).

    The upper bound is never NaN or ±inf; the evaluated value (for Newton slopes) may be −inf.
    """
    log_delta, _, upper = _log_delta_bounds(epsilon, mu)
    return log_delta, upper


def _log_delta_mu(epsilon, mu):
    """An upper bound on log δ(ε; μ), never NaN or ±inf; inputs validated (μ > 0, possibly inf), broadcast.

    A float for two scalar inputs, else an array of the broadcast shape.
    """
    scalar = np.ndim(epsilon) == 0 and np.ndim(mu) == 0
    if scalar:
        pair = _upper_scalar(float(epsilon), float(mu))
        if pair is not None:
            return pair[1]
    epsilon, mu = np.broadcast_arrays(np.asarray(epsilon, dtype=float), np.asarray(mu, dtype=float))
    _, upper = _log_delta_evaluated_and_upper(epsilon.ravel(), mu.ravel())
    return float(upper[0]) if scalar else upper.reshape(epsilon.shape)


def _root_parts(compositions):
    """(root, exponent) with √k <= root·2^exponent (a Python int of any size), or √k for a float array."""
    if isinstance(compositions, int):
        if compositions.bit_length() <= 1000:
            # float(k) and the root round by a relative 1.5u at most, inside the upward factor.
            return math.sqrt(float(compositions)), 0
        shift = (compositions.bit_length() - 104) // 2
        # (k >> 2s) + 1 >= k/4^s, whose root times 2^s is >= √k.
        return math.sqrt(float((compositions >> (2 * shift)) + 1)), shift
    return np.sqrt(compositions), 0


def _ratio_up(numerator, compositions, denominator):
    """numerator·√compositions/denominator rounded upward from exact frexp mantissas; inf on overflow."""
    root, root_exponent = _root_parts(compositions)
    if isinstance(numerator, float) and isinstance(denominator, float) and isinstance(root, float):
        numerator_mantissa, numerator_exponent = math.frexp(numerator)
        denominator_mantissa, denominator_exponent = math.frexp(denominator)
        mantissa = numerator_mantissa * root / denominator_mantissa * _UPWARD
        exponent = numerator_exponent - denominator_exponent + root_exponent
        try:
            value = math.ldexp(mantissa, exponent)
        except OverflowError:
            return math.inf
        return math.nextafter(value, math.inf) if value < _SMALLEST_NORMAL else value
    numerator_mantissa, numerator_exponent = np.frexp(numerator)
    denominator_mantissa, denominator_exponent = np.frexp(denominator)
    mantissa = numerator_mantissa * root / denominator_mantissa * _UPWARD
    exponent = numerator_exponent - denominator_exponent + root_exponent
    with np.errstate(over="ignore", under="ignore"):
        # ldexp overflows to inf; below the normal range it rounds to nearest, so one ulp more.
        value = np.ldexp(mantissa, np.clip(exponent, -10_000, 10_000))
        value = np.where(value < _SMALLEST_NORMAL, np.nextafter(value, np.inf), value)
    return float(value) if np.ndim(value) == 0 else value


def _validated_mu(sigma, sensitivity, compositions):
    """μ = Δ√k/σ rounded upward (δ grows with μ); inf where it exceeds the largest double."""
    sigma = check.positive("sigma", sigma)
    sensitivity = check.positive("sensitivity", sensitivity)
    compositions = check.integer_at_least("compositions", compositions, 1)
    return _ratio_up(sensitivity, compositions, sigma)


def gaussian_log_delta(epsilon, sigma, sensitivity=1.0, compositions=1):
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


def gaussian_delta(epsilon, sigma, sensitivity=1.0, compositions=1):
    """An upper bound on the tight δ(ε) of the Gaussian mechanism, never 0: ``exp(gaussian_log_delta(...))`` rounded up.

    δ(ε) = Φ(Δ'/(2σ) − εσ/Δ') − e^ε Φ(−Δ'/(2σ) − εσ/Δ') with Δ' = Δ√k
    (Balle & Wang 2018). Above the exact δ by a relative 1e-11 or so for
    ordinary inputs; where δ is below the smallest double, 5e-324 (use
    :func:`gaussian_log_delta` for its size). Arguments are as in
    :func:`gaussian_log_delta` and broadcast.
    """
    log_delta = gaussian_log_delta(epsilon, sigma, sensitivity, compositions)
    if isinstance(log_delta, float):
        return min(math.nextafter(math.exp(log_delta), math.inf), 1.0) if log_delta > -745.2 else 5e-324
    return _delta_from_log_upper(log_delta)


def _delta_from_log_upper(log_delta):
    """exp of an upper bound on log δ, one ulp up (exp is within an ulp), so never 0 and never below δ."""
    with np.errstate(under="ignore"):
        return np.minimum(np.nextafter(np.exp(log_delta), np.inf), 1.0)


def _solver_log_target(delta):
    """The log δ the inversions aim at: log(delta) lowered so that exp and its ulp up stay <= delta.

    log rounds by a relative u and exp by an ulp; below 1e-305 the ulps of δ are coarse, so half of δ.
    """
    if isinstance(delta, float):
        log_delta = math.log(delta) - (math.log(2.0) if delta < 1e-305 else 0.0)
        return log_delta - (4.0 * _UNIT_ROUNDOFF) * (abs(log_delta) + 2.0)
    delta = np.asarray(delta, dtype=float)
    log_delta = np.log(delta) - np.where(delta < 1e-305, math.log(2.0), 0.0)
    return log_delta - (4.0 * _UNIT_ROUNDOFF) * (np.abs(log_delta) + 2.0)


def _log_delta_slope_in_epsilon(epsilon, mu, log_delta):
    """d log δ / dε = −e^ε Φ(b) / δ, with e^ε Φ(b) = ½ e^{−a²/2} erfcx(x_b) (x_b > 0 always)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        a = 0.5 * mu - epsilon / mu
        x_b = (0.5 * mu + epsilon / mu) / _SQRT2
        return -np.exp(_LOG_HALF - 0.5 * a * a + np.log(special.erfcx(x_b)) - log_delta)


def _epsilon_step(epsilon, excess, slope):
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        moved = epsilon - excess / slope
    return np.clip(np.where(np.isnan(moved), epsilon, moved), 0.0, _LARGEST)


def _upper_quantile(log_probability):
    """z with Φ(−z) = e^log_probability, a Newton start only: past e^−700 by Φ(−z) ≈ φ(z)/z (one correction)."""
    with np.errstate(under="ignore"):
        direct = -special.ndtri(np.exp(np.maximum(log_probability, -700.0)))
    rough = np.sqrt(-2.0 * np.minimum(log_probability, -700.0))
    tail = np.sqrt(np.maximum(rough * rough - 2.0 * np.log(rough) - 2.0 * _LOG_SQRT_2PI, 1.0))
    return np.where(log_probability > -700.0, direct, tail)


def _epsilon_for_mu(log_target, mu):
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

        def evaluate(values, index):
            log_delta, upper = _log_delta_evaluated_and_upper(values, m[index])
            return upper, _log_delta_slope_in_epsilon(values, m[index], log_delta)

        epsilon[open_] = _newton.solve(start, evaluate, _epsilon_step, target, np.full_like(m, _LARGEST), np.zeros_like(m))
    return epsilon, unreachable


def _epsilon_scalar(delta: float, mu: float):
    """gaussian_epsilon for one float pair on Python floats, checked as the array path checks; None to defer."""
    log_target = float(_solver_log_target(delta))
    at_zero = _upper_scalar(0.0, mu)
    if at_zero is None:
        return None
    if at_zero[1] <= log_target:
        return 0.0
    z = float(_upper_quantile(np.array([log_target]))[0])
    start = min(max(mu * z + 0.5 * mu * mu, 0.0), _LARGEST)

    def evaluate(epsilon):
        pair = _upper_scalar(epsilon, mu)
        if pair is None:
            return None
        a = 0.5 * mu - epsilon / mu
        x_b = (0.5 * mu + epsilon / mu) / _SQRT2
        with np.errstate(all="ignore"):
            slope = -math.exp(min(_LOG_HALF - 0.5 * a * a + math.log(float(special.erfcx(x_b))) - pair[0], 700.0))
        return pair[1], slope

    def step(epsilon, excess, slope):
        moved = epsilon - excess / slope if slope < 0.0 else epsilon
        return min(max(moved, 0.0), _LARGEST) if math.isfinite(moved) else epsilon

    epsilon = _newton.solve_scalar(start, evaluate, step, log_target, 0.0)
    if epsilon is None:
        return None
    final = _upper_scalar(epsilon, mu)
    if final is None or min(float(np.nextafter(math.exp(final[1]), math.inf)), 1.0) > delta:
        return None
    return epsilon


def gaussian_epsilon(delta, sigma, sensitivity=1.0, compositions=1):
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
