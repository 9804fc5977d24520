"""50-digit reference values for the Gaussian mechanism (mpmath), to check any calibration against.

These are slow (milliseconds per value) and exist so that tests, benchmarks
and users can verify a σ, ε or δ independently of the double-precision code:
``high_precision.delta(epsilon, mu) <= target`` holding for a returned σ is
the "never under-noised" property. μ = Δ√k/σ throughout. Not imported by
``import dpmech``.
"""

from __future__ import annotations

import mpmath

DIGITS = 50


def delta(epsilon, mu):
    """δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) (Balle & Wang 2018), as an mpmath number."""
    with mpmath.workdps(DIGITS):
        epsilon, mu = mpmath.mpf(epsilon), mpmath.mpf(mu)
        return mpmath.ncdf(mu / 2 - epsilon / mu) - mpmath.exp(epsilon) * mpmath.ncdf(-mu / 2 - epsilon / mu)


def sigma(epsilon, target_delta, start):
    """The σ (sensitivity 1, one release) with δ(ε; σ) = target, by root finding from ``start``."""
    with mpmath.workdps(DIGITS):
        target = mpmath.log(mpmath.mpf(target_delta))
        return mpmath.findroot(lambda s: mpmath.log(delta(epsilon, 1 / s)) - target, mpmath.mpf(start))


def epsilon(target_delta, mu, start):
    """The ε with δ(ε; μ) = target, by root finding from ``start``."""
    with mpmath.workdps(DIGITS):
        target = mpmath.log(mpmath.mpf(target_delta))
        return mpmath.findroot(lambda e: mpmath.log(delta(e, mu)) - target, mpmath.mpf(start))


def _log_ncdf(x):
    """log Φ(x) at the working precision; past |x| = 1e4 by the asymptotic series (mpmath's erfc overflows there)."""
    if x > 0:
        return mpmath.log1p(-mpmath.exp(_log_ncdf(-x)))
    if x > -10_000:
        return mpmath.log(mpmath.ncdf(x))
    # Φ(x) = φ(x)/|x| · Σ (−1)^n (2n−1)!!/x^{2n}; the terms fall by at least 1e-8 each.
    u, term, series, n = 1 / (x * x), mpmath.mpf(1), mpmath.mpf(0), 0
    while abs(term) > mpmath.mpf(10) ** (-mpmath.mp.dps - 5):
        series += term
        n += 1
        term *= -(2 * n - 1) * u
    return -x * x / 2 - mpmath.log(-x) - mpmath.log(2 * mpmath.pi) / 2 + mpmath.log(series)


def log_delta(epsilon, mu):
    """log δ(ε; μ) to 50 significant digits at any double inputs (μ from subnormal to 1e308, ε up to 1e308).

    The working precision grows with the cancellation the formula suffers:
    a = μ/2 − ε/μ cancels by up to μ/|a| when ε ≈ μ²/2, Φ(a) − e^ε Φ(b) by up
    to |a|/μ, and ε against a²/2; mpmath's unbounded exponents hold δ far
    below the smallest double.
    """
    return _log_delta(epsilon, lambda: mpmath.mpf(mu), 0)


def log_delta_of_noise(epsilon, sigma, sensitivity=1.0, compositions=1):
    """As :func:`log_delta` with μ = Δ√k/σ formed exactly in the working precision (the quantity double code rounds)."""
    return _log_delta(
        epsilon,
        lambda: mpmath.mpf(sensitivity) * mpmath.sqrt(mpmath.mpf(compositions)) / mpmath.mpf(sigma),
        len(str(compositions)),
    )


def _log_delta(epsilon, make_mu, more_digits):
    with mpmath.workdps(40 + more_digits):
        mu = make_mu()
        epsilon = mpmath.mpf(epsilon)
        size_a = abs(mu / 2 - epsilon / mu) + 1

        def digits(value):
            return max(float(mpmath.log10(value)), 0.0)

        extra = 2 * digits(size_a) + digits(size_a / mu) + digits(mu) + digits(epsilon / mu + 1) + digits(epsilon + 1)
    with mpmath.workdps(DIGITS + 10 + more_digits + int(extra)):
        mu = make_mu()
        a = mu / 2 - epsilon / mu
        b = a - mu
        # δ = Φ(a) − e^ε Φ(b); both terms in logs so that neither overflows.
        log_first = _log_ncdf(a)
        log_second = epsilon + _log_ncdf(b)
        return +(log_first + mpmath.log(-mpmath.expm1(log_second - log_first)))
