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
