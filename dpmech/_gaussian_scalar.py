r"""The Gaussian mechanism's δ(ε), σ(ε, δ) and ε(δ) for one number each, on Python floats and :mod:`math` alone.

The formulas, the three evaluations of the bracket and the error bound E are those of
:mod:`dpmech.gaussian` (Balle & Wang 2018, Thm. 8), whose module docstring derives them; the array
path there imports numpy and scipy, this one neither, so that ``dpmech calibrate``, ``dpmech epsilon``
and ``dpmech delta`` start in a fraction of the time. Each function returns None where only the array
path decides (overflow territory, a Newton run that does not finish cleanly); the caller then takes the array path.

erfcx is :func:`dpmech._erfcx.erfcx` (relative error ρ <= 2⁻⁴⁸, proven there) in place of scipy's, so
the bound on the evaluated log δ adds :data:`ERFCX_LOG_ERROR` = 1300ρ (4.6e-12) to E. The largest
factor by which an evaluation magnifies a relative error of its erfcx values is 1252: the plain
difference erfcx(x_a) − erfcx(x_b) moves by at most ρ(erfcx(x_a) + erfcx(x_b)) <= 501ρ times itself
(each value is at most 251 times the difference, module docstring of :mod:`dpmech.gaussian`); above
the median, log(1 − q) moves by at most ρq/δ <= 230ρ; the short interval's
4/√π − 2Σw_i x_i erfcx(x_i) moves by 2ρΣw_i|x_i|erfcx(x_i), at most (2x² + 2)ρ <= 1252ρ times
Σw_i(2/√π − 2x_i erfcx(x_i)) for nodes x_i <= 25 (2x·erfcx(x)/(2/√π − 2x·erfcx(x)) <= 2x² + 2; the test
checks it on a grid). The far tail uses no erfcx.

The term (4.6e-12) also exceeds Newton's stopping spread (1e-12 in log δ) plus the difference between
this evaluation and the scipy one (at most 5.7e-13 in log δ on 20,000 random points across the
regions; the proven worst, 2·1252ρ = 8.9e-12, only near x = 25), so the σ and ε returned have been, on
every grid tested (6,000 random pairs each for σ and ε), at or above those of the scipy evaluation: a
wider bound, not a shifted one. That comparison is measured, not proven; soundness rests on E alone.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, overload

from ._erfcx import ERFCX_RELATIVE_ERROR, erfcx
from ._newton_scalar import LOG_DELTA_MARGIN, solve_scalar

if TYPE_CHECKING:  # the array path shares far_mean, far_log_bracket and error_bound; numpy is not loaded here
    import numpy as np
    from numpy.typing import NDArray

    _Floats = NDArray[np.float64]

SQRT2 = math.sqrt(2.0)
LOG_HALF = math.log(0.5)
HALF_LOG_2 = 0.5 * math.log(2.0)
LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
SHORT_INTERVAL = 0.1
# Below h = 0.1 the plain difference (and 1 − q above the median) still serves while x_b + 2 < 260·h:
# it then cancels by less than the worst factor (251, at x_a = 25, h = 0.1) of the region h > 0.1.
CANCELLATION = 260.0
CANCELLATION_OFFSET = 2.0
ASYMPTOTIC_FROM = 25.0
# (2n-1)!!/2^n for n = 1..8: the asymptotic series of 2/√π − 2x·erfcx(x).
ASYMPTOTIC_COEFFICIENTS = (0.5, 0.75, 1.875, 6.5625, 29.53125, 162.421875, 1055.7421875, 7918.06640625)
# c_n/(2n−1) with alternating signs (= ±c_{n−1}/2, exact): the series integrated term by term.
_FAR_COEFFICIENTS = tuple((-1.0) ** n * c / (2 * n + 1) for n, c in enumerate(ASYMPTOTIC_COEFFICIENTS))
UNIT_ROUNDOFF = 2.0**-53
LARGEST = sys.float_info.max
SMALLEST_NORMAL = sys.float_info.min
SUBNORMAL_BITS = 1074  # the subnormal doubles are the multiples of 2^-1074 below 2^-1022
# μ = Δ·√k/σ from exact mantissas takes at most four roundings of a relative u each.
UPWARD = 1.0 + 8.0 * UNIT_ROUNDOFF
# Past |a| = 1e154, a²/2 >= 5e307 and log δ <= log ½ − a²/2 is reported as this bound.
HUGE_A = 1e154
LOG_DELTA_FLOOR = -0.25 * LARGEST
ERFCX_LOG_ERROR = 1300.0 * ERFCX_RELATIVE_ERROR
# The methods of dpmech.calibrate_gaussian, here so that the CLI checks --method without loading numpy.
CALIBRATION_METHODS = ("analytic", "classic")
_QUANTILE_STEPS = 8


def _gauss_legendre(order: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Nodes and weights of ``order``-point Gauss–Legendre quadrature on [−1, 1], ascending: Newton's
    method on the Legendre polynomial P_n from Tricomi's estimate cos(π(i − ¼)/(n + ½)), w = 2/((1 − x²)P_n'(x)²)."""
    nodes, weights = [], []
    for index in range(1, order + 1):
        x = math.cos(math.pi * (index - 0.25) / (order + 0.5))
        for _ in range(100):
            previous, value = 1.0, x
            for degree in range(2, order + 1):
                previous, value = value, ((2 * degree - 1) * x * value - (degree - 1) * previous) / degree
            derivative = order * (x * value - previous) / (x * x - 1.0)
            moved = x - value / derivative
            if moved == x:
                break
            x = moved
        nodes.append(x)
        weights.append(2.0 / ((1.0 - x * x) * derivative * derivative))
    return tuple(reversed(nodes)), tuple(reversed(weights))


NODES, WEIGHTS = _gauss_legendre(8)
UNIT_NODES = tuple(0.5 * (1.0 + node) for node in NODES)
_TILTED_WEIGHTS = tuple(weight * node for weight, node in zip(WEIGHTS, UNIT_NODES))

@overload
def asymptotic_series(u: float) -> float: ...
@overload
def asymptotic_series(u: _Floats) -> _Floats: ...
def asymptotic_series(u: float | _Floats) -> float | _Floats:
    """Σ (−1)^{n+1} c_n u^{n−1}: the slope 2/√π − 2x·erfcx(x) is (2/√π)·u·series(u) at u = 1/x²,
    below 1e-18 relative error for x >= 25; floats or arrays."""
    series: float | _Floats = 0.0
    for coefficient in reversed(ASYMPTOTIC_COEFFICIENTS):
        series = coefficient - u * series
    return series


def far_mean(lower: float | _Floats, upper: float | _Floats) -> float | _Floats:
    """Mean of series(s²) over s in [lower, upper] (0 < lower <= upper <= 1/25), floats or arrays.

    In closed form for the truncated series: Σ (−1)^{n+1} c_n/(2n−1) · P_{2n−2}, with
    P_k = (upper^{k+1} − lower^{k+1})/(upper − lower) = Σ_j upper^j lower^{k−j}, built as
    P_k = upper²·P_{k−2} + lower^{k−1}·(upper + lower) from P_0 = 1. Every P_k is a sum of positive
    terms, so nothing cancels however close the ends are; the alternating sum is 0.5 within 1e-3.
    """
    ends, upper_squared, lower_squared = upper + lower, upper * upper, lower * lower
    power = lower
    complete: float | _Floats = 1.0
    total: float | _Floats = _FAR_COEFFICIENTS[0]
    for coefficient in _FAR_COEFFICIENTS[1:]:
        complete = upper_squared * complete + power * ends
        total = total + coefficient * complete
        power = power * lower_squared
    return total


@overload
def far_log_bracket(x_a: float, x_b: float, log_h: float, log: Callable[[float], float]) -> float: ...
@overload
def far_log_bracket(x_a: _Floats, x_b: _Floats, log_h: float | _Floats, log: Callable[[Any], Any]) -> _Floats: ...
def far_log_bracket(x_a: float | _Floats, x_b: float | _Floats, log_h: float | _Floats,
                    log: Callable[[Any], Any]) -> float | _Floats:
    """log[erfcx(x_a) − erfcx(x_b)] for x_a >= 25, x_b = x_a + h: (2/√π)·(1/x_a − 1/x_b)·mean, the length
    h/(x_a x_b) formed in logs (floats with ``log=math.log``, or arrays with ``numpy.log``)."""
    bracket: float | _Floats = log_h - log(x_a) - log(x_b) + log(TWO_OVER_SQRT_PI * far_mean(1.0 / x_b, 1.0 / x_a))
    return bracket


@overload
def error_bound(size_a: float, spread: float) -> float: ...
@overload
def error_bound(size_a: _Floats, spread: float | _Floats) -> _Floats: ...
def error_bound(size_a: float | _Floats, spread: float | _Floats) -> float | _Floats:
    """E = 1e-11 + 16u[(|a|+1)·spread + a²] + (16u·spread)², spread = μ/2 + ε/μ + |a| (module docstring of
    :mod:`dpmech.gaussian`); floats or arrays."""
    rounding = (16.0 * UNIT_ROUNDOFF) * spread
    return LOG_DELTA_MARGIN + (size_a + 1.0) * rounding + (16.0 * UNIT_ROUNDOFF) * size_a * size_a + rounding * rounding


def _short_log_bracket(x_a: float, h: float, log_h: float) -> float:
    """log[erfcx(x_a) − erfcx(x_a + h)] for a short interval (x_a < 25) by 8-point Gauss–Legendre on the slope
    2/√π − 2x·erfcx(x), from one erfcx per node x_i = x_a + h·t_i.

    Σ w_i (2/√π − 2x_i erfcx(x_i)) = 4/√π − 2[x_a Σ w_i erfcx(x_i) + h Σ w_i t_i erfcx(x_i)] (Σ w_i = 2):
    the one cancellation of the node-by-node form, now after the sums, with two sums from one pass. Where
    the interval reaches past 25, node by node, with the asymptotic series for the slope past 25 (the direct
    form cancels by 2x² there), as the array path does.
    """
    if x_a + h > ASYMPTOTIC_FROM:
        slopes = (TWO_OVER_SQRT_PI - 2.0 * x * erfcx(x) if x <= ASYMPTOTIC_FROM
                  else TWO_OVER_SQRT_PI / (x * x) * asymptotic_series(1.0 / (x * x))
                  for x in (x_a + h * node for node in UNIT_NODES))
        return log_h + math.log(0.5 * math.fsum(weight * slope for weight, slope in zip(WEIGHTS, slopes)))
    values = [erfcx(x_a + h * node) for node in UNIT_NODES]
    plain = math.fsum(weight * value for weight, value in zip(WEIGHTS, values))
    tilted = math.fsum(weight * value for weight, value in zip(_TILTED_WEIGHTS, values))
    return log_h + math.log(TWO_OVER_SQRT_PI - (x_a * plain + h * tilted))


def log_delta_and_error(epsilon: float, mu: float) -> tuple[float, float] | None:
    """(evaluated log δ(ε; μ), bound E + :data:`ERFCX_LOG_ERROR` on its absolute error) for floats ε >= 0,
    μ > 0; None where only the array path decides."""
    if not (mu < HUGE_A and epsilon / mu < HUGE_A):
        return None  # overflow territory: the array path handles it
    ratio = epsilon / mu
    a = 0.5 * mu - ratio
    size_a = abs(a)
    if not size_a < HUGE_A:
        return None
    x_a, h = -a / SQRT2, mu / SQRT2
    error = error_bound(size_a, 0.5 * mu + ratio + size_a) + ERFCX_LOG_ERROR
    if x_a >= ASYMPTOTIC_FROM:
        log_bracket: float | None = far_log_bracket(x_a, x_a + h, math.log(mu) - HALF_LOG_2, math.log)
    elif not (h > SHORT_INTERVAL or x_a + h + CANCELLATION_OFFSET < CANCELLATION * h):
        log_bracket = _short_log_bracket(x_a, h, math.log(mu) - HALF_LOG_2)
    elif a > 0.0:
        q = 0.5 * math.exp(-0.5 * a * a) * (erfcx(-x_a) + erfcx(x_a + h))
        return (math.log1p(-q), error) if q < 1.0 else None
    else:
        difference = erfcx(x_a) - erfcx(x_a + h)
        log_bracket = math.log(difference) if difference > 0.0 else None
    if log_bracket is None:
        return None
    return LOG_HALF - 0.5 * a * a + log_bracket, error


def upper_log_delta(epsilon: float, mu: float) -> tuple[float, float] | None:
    """(evaluated log δ, upper bound min(log δ + E, 0)) for floats, or None where only the array path decides."""
    pair = log_delta_and_error(epsilon, mu)
    if pair is None or not math.isfinite(pair[0]) or not math.isfinite(pair[1]):
        return None
    return pair[0], min(pair[0] + pair[1], 0.0)


def log_delta_bounds(epsilon: float, mu: float) -> tuple[float, float, float] | None:
    """(evaluated log δ, lower bound, upper bound on the exact log δ) for one pair of floats; None to defer."""
    pair = log_delta_and_error(epsilon, mu)
    if pair is None:
        return None
    log_delta, error = pair
    upper, lower = log_delta + error, log_delta - error
    upper = LOG_DELTA_FLOOR if upper == -math.inf else (0.0 if math.isnan(upper) else min(upper, 0.0))
    lower = -math.inf if (math.isnan(lower) or lower == math.inf) else min(lower, 0.0)
    return log_delta, lower, upper


def root_parts(compositions: int) -> tuple[float, int]:
    """(root, exponent) with √k <= root·2^exponent, for a Python int k >= 1 of any size."""
    if compositions.bit_length() <= 1000:
        # float(k) and the root round by a relative 1.5u at most, inside the upward factor.
        return math.sqrt(float(compositions)), 0
    shift = (compositions.bit_length() - 104) // 2
    # (k >> 2s) + 1 >= k/4^s, whose root times 2^s is >= √k.
    return math.sqrt(float((compositions >> (2 * shift)) + 1)), shift


def ratio_up(numerator: float, compositions: int, denominator: float) -> float:
    """numerator·√compositions/denominator rounded upward from exact frexp mantissas; inf on overflow."""
    root, root_exponent = root_parts(compositions)
    numerator_mantissa, numerator_exponent = math.frexp(numerator)
    denominator_mantissa, denominator_exponent = math.frexp(denominator)
    mantissa = numerator_mantissa * root / denominator_mantissa * UPWARD
    exponent = numerator_exponent - denominator_exponent + root_exponent
    try:
        value = math.ldexp(mantissa, exponent)
    except OverflowError:
        return math.inf
    if value < SMALLEST_NORMAL:
        # ldexp rounds to nearest below the normal range: round the mantissa up onto that grid instead
        # (at most one ulp above, not one and a half, so a σ → μ round trip can come back to μ).
        return math.ldexp(max(math.ceil(math.ldexp(mantissa, exponent + SUBNORMAL_BITS)), 1), -SUBNORMAL_BITS)
    return value


def solver_log_target(delta: float) -> float:
    """The log δ the inversions aim at: log(delta) lowered so that exp and its ulp up stay <= delta.

    log rounds by a relative u and exp by an ulp; below 1e-305 the ulps of δ are coarse, so half of δ.
    """
    log_delta = math.log(delta) - (math.log(2.0) if delta < 1e-305 else 0.0)
    return log_delta - (4.0 * UNIT_ROUNDOFF) * (abs(log_delta) + 2.0)


def delta_from_log_upper(log_delta: float) -> float:
    """exp of an upper bound on log δ <= 0, one ulp up (exp is within an ulp), so never 0 and never below δ."""
    return min(math.nextafter(math.exp(log_delta), math.inf), 1.0) if log_delta > -745.2 else 5e-324


def upper_quantile(log_probability: float) -> float:
    """z with Φ(−z) = e^log_probability, a Newton start only: past e^−700 by Φ(−z) ≈ φ(z)/z (one correction).

    Above e^−700, Newton's method on log Φ(−z) = log_probability from the rational estimate of
    Abramowitz & Stegun 26.2.23 (within 4.5e-4), with Φ(−z) = ½ erfcx(z/√2) e^{−z²/2} for z >= 0.
    """
    if not log_probability > -700.0:
        rough = math.sqrt(-2.0 * log_probability)
        return math.sqrt(max(rough * rough - 2.0 * math.log(rough) - 2.0 * LOG_SQRT_2PI, 1.0))
    probability = math.exp(log_probability)
    tail = min(probability, 1.0 - probability)
    t = math.sqrt(-2.0 * math.log(tail))
    z = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1.0 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t**3)
    z = z if probability <= 0.5 else -z
    for _ in range(_QUANTILE_STEPS):
        if z >= 0.0:
            # log Φ(−z) and Φ(−z)/φ(z) = √(π/2)·erfcx(z/√2), without underflow.
            scaled = erfcx(z / SQRT2)
            log_tail = math.log(0.5 * scaled) - 0.5 * z * z
            ratio = math.sqrt(0.5 * math.pi) * scaled
        else:
            upper = 0.5 * math.erfc(z / SQRT2)
            log_tail = math.log(upper)
            ratio = upper * math.exp(0.5 * z * z + LOG_SQRT_2PI)
        moved = z + (log_tail - log_probability) * ratio
        if moved == z:
            break
        z = moved
    return z


def epsilon_for_mu(delta: float, mu: float) -> float | None:
    """Smallest ε >= 0 with the upper bound on log δ(ε; μ) at most log ``delta`` (the array path's Newton
    method, :func:`dpmech.gaussian._epsilon_for_mu`), checked through :func:`delta_from_log_upper`; None to defer."""
    log_target = solver_log_target(delta)
    at_zero = upper_log_delta(0.0, mu)
    if at_zero is None:
        return None
    if at_zero[1] <= log_target:
        return 0.0
    z = upper_quantile(log_target)
    start = min(max(mu * z + 0.5 * mu * mu, 0.0), LARGEST)

    def evaluate(epsilon: float) -> tuple[float, float] | None:
        pair = upper_log_delta(epsilon, mu)
        if pair is None:
            return None
        a = 0.5 * mu - epsilon / mu
        x_b = (0.5 * mu + epsilon / mu) / SQRT2  # below 2e154: upper_log_delta deferred past μ, ε/μ = 1e154
        # d log δ / dε = −e^ε Φ(b)/δ, with e^ε Φ(b) = ½ e^{−a²/2} erfcx(x_b).
        slope = -math.exp(min(LOG_HALF - 0.5 * a * a + math.log(erfcx(x_b)) - pair[0], 700.0))
        return pair[1], slope

    def step(epsilon: float, excess: float, slope: float) -> float:
        moved = epsilon - excess / slope if slope < 0.0 else epsilon
        return min(max(moved, 0.0), LARGEST) if math.isfinite(moved) else epsilon

    epsilon = solve_scalar(start, evaluate, step, log_target, 0.0)
    if epsilon is None:
        return None
    final = upper_log_delta(epsilon, mu)
    if final is None or delta_from_log_upper(final[1]) > delta:
        return None
    return epsilon


def calibrate_analytic(epsilon: float, delta: float, sensitivity: float, compositions: int) -> float | None:
    """The analytic σ (:func:`dpmech.calibrate_gaussian`) for floats ε, δ, Δ > 0 and an int k >= 1, checked
    through the μ that the public functions form from it; None to defer to the array path."""
    log_target = solver_log_target(delta)
    z = upper_quantile(log_target)
    # μ² + 2zμ − 2ε = 0, solved without cancellation (z > 0 for δ < 1/2) or overflow (hypot).
    root = math.hypot(z, SQRT2 * math.sqrt(epsilon))
    start = max(epsilon / (root + z) * 2.0 if z > 0.0 else root - z, 5e-324)

    def evaluate(mu: float) -> tuple[float, float] | None:
        pair = upper_log_delta(epsilon, mu)
        if pair is None:
            return None
        # d log δ / d log μ = μ φ(a) / δ.
        a = 0.5 * mu - epsilon / mu
        slope = mu * math.exp(min(-0.5 * a * a - LOG_SQRT_2PI - pair[0], 700.0))
        return pair[1], slope

    def step(mu: float, excess: float, slope: float) -> float:
        if not slope > 0.0:
            return mu
        moved = mu * math.exp(min(max(-excess / slope, -700.0), 700.0))
        return min(max(moved, 5e-324), LARGEST)

    mu = solve_scalar(start, evaluate, step, log_target, LARGEST)
    if mu is None:
        return None
    sigma = ratio_up(sensitivity, compositions, mu)
    if not math.isfinite(sigma):
        return None
    final = upper_log_delta(epsilon, ratio_up(sensitivity, compositions, sigma))
    if final is None or delta_from_log_upper(final[1]) > delta:
        return None
    return sigma
