"""50-digit mpmath references for the Gaussian mechanism, shared by the dpmech tests."""

import mpmath

mpmath.mp.dps = 50


def delta(epsilon, mu):
    """δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) for μ = Δ√k/σ, in 50-digit arithmetic."""
    epsilon, mu = mpmath.mpf(epsilon), mpmath.mpf(mu)
    return mpmath.ncdf(mu / 2 - epsilon / mu) - mpmath.exp(epsilon) * mpmath.ncdf(-mu / 2 - epsilon / mu)


def exact_sigma(epsilon, target_delta, start):
    """The σ (sensitivity 1) with δ(ε; σ) = target, by 50-digit root finding from ``start``."""
    target = mpmath.log(mpmath.mpf(float(target_delta)))
    return mpmath.findroot(lambda s: mpmath.log(delta(epsilon, 1 / s)) - target, mpmath.mpf(float(start)))


def exact_epsilon(target_delta, mu, start):
    """The ε with δ(ε; μ) = target, by 50-digit root finding from ``start``."""
    target = mpmath.log(mpmath.mpf(float(target_delta)))
    return mpmath.findroot(lambda e: mpmath.log(delta(e, mu)) - target, mpmath.mpf(float(start)))
