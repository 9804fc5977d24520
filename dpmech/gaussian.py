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

* ``h <= 0.1``: as :math:`\int_{x_a}^{x_a+h} (2/\sqrt\pi - 2x\,\mathrm{erfcx}(x))\,dx`,
  a positive integrand, by 8-point Gauss–Legendre (the integrand is entire; 6 to 16 nodes give the same 3e-13 worst error);
* ``h > 0.1`` and :math:`a \le 0`: the plain difference, which cancels by
  a factor of at most about :math:`\max(20, x_b/h)`, under 300 wherever δ >= 1e-300;
* ``h > 0.1`` and :math:`a > 0` (Φ(a) > 1/2): :math:`\log\Phi(a) + \log(1 - r)`
  with ``log_ndtr`` and a stable :math:`\log(1 - e^x)`; the ratio
  :math:`r = e^{\varepsilon}\Phi(b)/\Phi(a) \le 2e^{\mu^2/2}\Phi(-\mu) < 0.9` there.
  (The erfcx form would multiply :math:`e^{-a^2/2}` by :math:`\approx 2e^{a^2/2}`,
  whose rounding breaks monotonicity of δ near 1.)

δ is returned in log space by :func:`gaussian_log_delta`, so values far below
the smallest double (1e-308) keep an accurate logarithm.
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
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SHORT_INTERVAL = 0.1
_UPPER_HALF_FROM = 0.0
_ASYMPTOTIC_FROM = 25.0
_NODES, _WEIGHTS = leggauss(8)
_UNIT_NODES = 0.5 * (1.0 + _NODES)
# (2n-1)!!/2^n for n = 1..8: the asymptotic series of 2/√π − 2x·erfcx(x).
_ASYMPTOTIC_COEFFICIENTS = (0.5, 0.75, 1.875, 6.5625, 29.53125, 162.421875, 1055.7421875, 7918.06640625)


def _erfcx_slope(x: np.ndarray) -> np.ndarray:
    """−d/dx erfcx(x) = 2/√π − 2x·erfcx(x), which is positive for every real x."""
    x = np.asarray(x, dtype=float)
    if x.max(initial=-np.inf) <= _ASYMPTOTIC_FROM:
        return _TWO_OVER_SQRT_PI - 2.0 * x * special.erfcx(x)
    out = np.empty_like(x)
    far = x > _ASYMPTOTIC_FROM
    near_x = x[~far]
    out[~far] = _TWO_OVER_SQRT_PI - 2.0 * near_x * special.erfcx(near_x)
    # The direct form cancels by a factor 2x²; past x = 25 the series converges
    # to below 1e-18 relative with eight terms.
    u = 1.0 / np.square(x[far])
    series = np.zeros_like(u)
    for coefficient in reversed(_ASYMPTOTIC_COEFFICIENTS):
        series = coefficient - u * series
    out[far] = _TWO_OVER_SQRT_PI * u * series
    return out


def _log_bracket_short(x_a, h):
    """log[erfcx(x_a) − erfcx(x_a + h)] for h <= 0.1, by quadrature of a positive integrand."""
    if isinstance(x_a, float):
        nodes = x_a + h * _UNIT_NODES
        if x_a + h <= _ASYMPTOTIC_FROM:
            slopes = _TWO_OVER_SQRT_PI - 2.0 * nodes * special.erfcx(nodes)
        else:
            slopes = _erfcx_slope(nodes)
        return math.log(0.5 * h * float(slopes @ _WEIGHTS))
    x_a = np.asarray(x_a, dtype=float)
    h = np.asarray(h, dtype=float)
    nodes = x_a[..., None] + h[..., None] * _UNIT_NODES
    integral = 0.5 * h * (_erfcx_slope(nodes) @ _WEIGHTS)
    return np.log(integral)


def _log_bracket_difference(x_a, h):
    """log[erfcx(x_a) − erfcx(x_a + h)] for h > 0.1 and x_a >= 0."""
    return np.log(special.erfcx(x_a) - special.erfcx(x_a + h))


def _log1mexp(x):
    """log(1 − e^x) for x < 0, accurate on both sides of −ln 2 (Mächler 2012)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > -math.log(2.0), np.log(-np.expm1(np.minimum(x, -1e-300))), np.log1p(-np.exp(x)))


def _log_delta_upper_half(epsilon, mu, a):
    """log δ for a > 0 and μ > 0.14, where e^ε Φ(b) < 0.9·Φ(a)."""
    log_phi_a = special.log_ndtr(a)
    return log_phi_a + _log1mexp(epsilon + special.log_ndtr(a - mu) - log_phi_a)


def _log_delta_mu(epsilon, mu):
    """log δ(ε) of a Gaussian with μ = Δ√k/σ; broadcasts; inputs already validated.

    Two Python floats take a scalar path a few microseconds long.
    """
    if isinstance(epsilon, float) and isinstance(mu, float):
        a = 0.5 * mu - epsilon / mu
        x_a, h = -a / _SQRT2, mu / _SQRT2
        if h <= _SHORT_INTERVAL:
            return _LOG_HALF - 0.5 * a * a + _log_bracket_short(x_a, h)
        if x_a >= _UPPER_HALF_FROM:
            return _LOG_HALF - 0.5 * a * a + math.log(special.erfcx(x_a) - special.erfcx(x_a + h))
        return float(_log_delta_upper_half(epsilon, mu, a))
    epsilon, mu = np.broadcast_arrays(np.asarray(epsilon, dtype=float), np.asarray(mu, dtype=float))
    shape = epsilon.shape
    epsilon, mu = epsilon.ravel(), mu.ravel()
    a = 0.5 * mu - epsilon / mu
    x_a, h = -a / _SQRT2, mu / _SQRT2
    short = h <= _SHORT_INTERVAL
    upper_half = ~short & (x_a < _UPPER_HALF_FROM)
    if not np.any(short):
        # One pass of the common formula over everything, then the a > 0 entries
        # replaced; erfcx overflows there harmlessly before being overwritten.
        with np.errstate(over="ignore", invalid="ignore"):
            out = _LOG_HALF - 0.5 * np.square(a) + _log_bracket_difference(x_a, h)
    else:
        out = np.empty_like(a)
        middle = ~short & ~upper_half
        out[short] = _log_bracket_short(x_a[short], h[short])
        out[middle] = _log_bracket_difference(x_a[middle], h[middle])
        lower_half = ~upper_half
        out[lower_half] += _LOG_HALF - 0.5 * np.square(a[lower_half])
    if np.any(upper_half):
        out[upper_half] = _log_delta_upper_half(epsilon[upper_half], mu[upper_half], a[upper_half])
    return out.reshape(shape)


def _validated_mu(sigma, sensitivity, compositions):
    sigma = check.positive("sigma", sigma)
    sensitivity = check.positive("sensitivity", sensitivity)
    compositions = check.integer_at_least("compositions", compositions, 1)
    if isinstance(sigma, float) and isinstance(sensitivity, float) and isinstance(compositions, int):
        return sensitivity * math.sqrt(compositions) / sigma
    return sensitivity * np.sqrt(compositions) / sigma


def gaussian_log_delta(epsilon, sigma, sensitivity=1.0, compositions=1):
    """Natural log of the tight δ(ε) of the Gaussian mechanism (see the module docstring).

    Parameters broadcast against each other.

    Args:
        epsilon: ε >= 0. At ε = 0 the result is the total-variation distance.
        sigma: noise standard deviation σ > 0.
        sensitivity: L2 sensitivity Δ > 0 under the caller's neighbouring relation.
        compositions: number k >= 1 of releases with this σ and Δ, composed exactly.

    Returns:
        log δ as a float, or an array of the broadcast shape. It stays finite
        and accurate (relative error about 1e-13) far below log(1e-308).
    """
    epsilon = check.non_negative("epsilon", epsilon)
    mu = _validated_mu(sigma, sensitivity, compositions)
    if isinstance(epsilon, float) and isinstance(mu, float):
        return _log_delta_mu(epsilon, mu)
    return check.scalar_or_array(_log_delta_mu(epsilon, mu))


def _delta_mu(epsilon, mu):
    """δ(ε) for validated inputs; skips the logarithm when every entry is in the middle regime."""
    if isinstance(epsilon, float) and isinstance(mu, float):
        return math.exp(_log_delta_mu(epsilon, mu))
    epsilon, mu = np.broadcast_arrays(np.asarray(epsilon, dtype=float), np.asarray(mu, dtype=float))
    a = 0.5 * mu - epsilon / mu
    x_a, h = -a / _SQRT2, mu / _SQRT2
    if np.any(h <= _SHORT_INTERVAL):
        return np.exp(_log_delta_mu(epsilon, mu))
    # The log form's lower-half expression exponentiated term by term (exp(−a²/2)
    # underflows only where δ itself is below 1e-308), then the a > 0 entries replaced.
    with np.errstate(over="ignore", invalid="ignore"):
        delta = 0.5 * np.exp(-0.5 * np.square(a)) * (special.erfcx(x_a) - special.erfcx(x_a + h))
    upper_half = x_a < _UPPER_HALF_FROM
    if np.any(upper_half):
        delta[upper_half] = np.exp(_log_delta_upper_half(epsilon[upper_half], mu[upper_half], a[upper_half]))
    return delta


def gaussian_delta(epsilon, sigma, sensitivity=1.0, compositions=1):
    """Tight δ(ε) of the Gaussian mechanism, ``exp(gaussian_log_delta(...))``.

    δ(ε) = Φ(Δ'/(2σ) − εσ/Δ') − e^ε Φ(−Δ'/(2σ) − εσ/Δ') with Δ' = Δ√k
    (Balle & Wang 2018). Relative error at most about 1e-13 against 50-digit
    arithmetic wherever δ >= 1e-300; below that, use :func:`gaussian_log_delta`.
    Arguments are as in :func:`gaussian_log_delta` and broadcast.
    """
    epsilon = check.non_negative("epsilon", epsilon)
    mu = _validated_mu(sigma, sensitivity, compositions)
    return check.scalar_or_array(_delta_mu(epsilon, mu))


def _log_delta_slope_in_epsilon(epsilon, mu, log_delta):
    """d log δ / dε = −e^ε Φ(b) / δ, with e^ε Φ(b) = ½ e^{−a²/2} erfcx(x_b) (x_b > 0 always)."""
    a = 0.5 * mu - epsilon / mu
    x_b = (0.5 * mu + epsilon / mu) / _SQRT2
    return -np.exp(_LOG_HALF - 0.5 * a * a + np.log(special.erfcx(x_b)) - log_delta)


def _epsilon_step(epsilon, excess, slope):
    return np.maximum(epsilon - excess / slope, 0.0)


def _epsilon_for_mu(log_target, mu):
    """Smallest ε >= 0 with δ(ε; μ) <= e^log_target, for flattened arrays or scalars.

    log δ(ε) is convex and decreasing; Newton's method starts at the ε where
    Φ(a) equals the target, to the right of the root, and :mod:`dpmech._newton`
    finishes on the right of it.
    """
    if isinstance(mu, float):
        if _log_delta_mu(0.0, mu) <= log_target - _newton.LOG_DELTA_MARGIN:
            return 0.0
        z = -float(special.ndtri(math.exp(log_target)))
        start = max(mu * (z + 0.5 * mu), 0.0)

        def evaluate(epsilon, _):
            log_delta = _log_delta_mu(epsilon, mu)
            a = 0.5 * mu - epsilon / mu
            x_b = (0.5 * mu + epsilon / mu) / _SQRT2
            return log_delta, -math.exp(_LOG_HALF - 0.5 * a * a - log_delta) * special.erfcx(x_b)

        return _newton.solve(start, evaluate, lambda e, x, g: max(e - x / g, 0.0), log_target)
    epsilon = np.zeros_like(mu)
    open_ = _log_delta_mu(0.0, mu) > log_target - _newton.LOG_DELTA_MARGIN
    if np.any(open_):
        target, m = log_target[open_], mu[open_]
        z = -special.ndtri(np.exp(target))

        def evaluate(values, index):
            log_delta = _log_delta_mu(values, m[index])
            return log_delta, _log_delta_slope_in_epsilon(values, m[index], log_delta)

        epsilon[open_] = _newton.solve(np.maximum(m * (z + 0.5 * m), 0.0), evaluate, _epsilon_step, target)
    return epsilon


def gaussian_epsilon(delta, sigma, sensitivity=1.0, compositions=1):
    """Smallest ε >= 0 with δ(ε) <= delta for the Gaussian mechanism.

    Inverts the tight profile of :func:`gaussian_delta` (Balle & Wang 2018)
    by Newton's method, then moves each answer up until δ(ε) is below the
    target by a relative 1e-11, so the ε returned never understates the
    exact one. Returns 0 when the mechanism is already (0, delta)-DP.

    Args:
        delta: target δ in (0, 1).
        sigma, sensitivity, compositions: as in :func:`gaussian_delta`.
    """
    delta = check.open_unit_interval("delta", delta)
    mu = _validated_mu(sigma, sensitivity, compositions)
    if isinstance(delta, float) and isinstance(mu, float):
        return _epsilon_for_mu(math.log(delta), mu)
    log_target, mu = np.broadcast_arrays(np.log(delta), mu)
    if log_target.ndim == 0:
        return _epsilon_for_mu(float(log_target), float(mu))
    result = _epsilon_for_mu(log_target.ravel().copy(), mu.ravel().astype(float))
    return result.reshape(log_target.shape)
