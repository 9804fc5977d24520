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


def subsampled_gaussian_delta(epsilon, sigma, sampling_prob, adjacency, sensitivity=1):
    """Tight δ(ε) of one direction of the Poisson-subsampled Gaussian, as an mpmath number.

    dp_accounting's conventions: ``"remove"`` compares (1 − q)N(0, σ²) + qN(−Δ, σ²) with N(0, σ²),
    ``"add"`` N(0, σ²) with (1 − q)N(0, σ²) + qN(Δ, σ²). The privacy loss is monotone, so
    δ = F_upper(x*) − e^ε F_lower(x*) at the x* where the loss equals ε, found by root finding.
    ε must lie inside the loss's range (above log(1 − q) for remove, below −log(1 − q) for add).
    """
    with mpmath.workdps(DIGITS):
        e, s, q, d = (mpmath.mpf(v) for v in (epsilon, sigma, sampling_prob, sensitivity))

        def ratio(x):  # μ(x + Δ)/μ(x) for the unit-shift Gaussian
            return mpmath.exp(d * (-d / 2 - x) / s**2)

        cdf = lambda x: mpmath.ncdf(x / s)
        if adjacency == "remove":
            loss = lambda x: mpmath.log(1 - q + q * ratio(x))
            upper, lower = (lambda x: (1 - q) * cdf(x) + q * cdf(x + d)), cdf
        else:
            loss = lambda x: -mpmath.log(1 - q + q * ratio(-x))
            upper, lower = cdf, (lambda x: (1 - q) * cdf(x) + q * cdf(x - d))
        x = mpmath.findroot(lambda t: loss(t) - e, mpmath.mpf(0), solver="secant")
        return upper(x) - mpmath.exp(e) * lower(x)


def renyi_divergence(order, p, q):
    """D_α(P ‖ Q) = log(Σ p_i^α q_i^{1−α})/(α − 1) of two finite distributions, as an mpmath number (α > 1)."""
    with mpmath.workdps(DIGITS):
        a = mpmath.mpf(order)
        total = mpmath.fsum(mpmath.mpf(x) ** a * mpmath.mpf(y) ** (1 - a) for x, y in zip(p, q) if x > 0)
        return mpmath.log(total) / (a - 1)
