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


def poisson_subsampled_gaussian_delta(epsilon, mu, rate, direction):
    """δ(ε) of one Poisson-subsampled Gaussian, P = (1−q)N(0,1) + qN(μ,1) against Q = N(0,1).

    ``direction`` 'remove' is δ(P‖Q), 'add' is δ(Q‖P) (Zhu, Dong & Wang 2022, Sec. 5). The
    likelihood ratio 1 − q + q e^{μx − μ²/2} is increasing in x, so each hockey-stick
    integral is a difference of normal tails cut at the point where the ratio equals e^{±ε}.
    """
    with mpmath.workdps(DIGITS):
        epsilon, mu, rate = mpmath.mpf(epsilon), mpmath.mpf(mu), mpmath.mpf(rate)
        if direction == "remove":
            cut = (mpmath.log((mpmath.exp(epsilon) - 1 + rate) / rate) + mu**2 / 2) / mu
            tail = lambda shift: mpmath.ncdf(-(cut - shift))
            return (1 - rate) * tail(0) + rate * tail(mu) - mpmath.exp(epsilon) * tail(0)
        if direction != "add":
            raise ValueError(f"direction must be 'remove' or 'add' (got {direction!r})")
        inner = mpmath.exp(-epsilon) - 1 + rate
        if inner <= 0:
            return mpmath.mpf(0)
        cut = (mpmath.log(inner / rate) + mu**2 / 2) / mu
        head = lambda shift: mpmath.ncdf(cut - shift)
        return head(0) - mpmath.exp(epsilon) * ((1 - rate) * head(0) + rate * head(mu))


def finite_pairs_delta(atom_lists, epsilon):
    """δ(ε) of the composition of finite pairs, by exact enumeration of the composed loss.

    ``atom_lists`` holds one (loss, p_mass) sequence per composed pair (losses may be +∞);
    δ = Σ p (1 − e^{ε − L})_+ over the product law, with L = +∞ contributing its mass.
    """
    with mpmath.workdps(DIGITS):
        law = {mpmath.mpf(0): mpmath.mpf(1)}
        for atoms in atom_lists:
            composed = {}
            for loss, mass in law.items():
                for atom_loss, atom_mass in atoms:
                    if atom_mass == 0:
                        continue
                    key = loss + (mpmath.inf if atom_loss == float("inf") else mpmath.mpf(atom_loss))
                    composed[key] = composed.get(key, 0) + mass * mpmath.mpf(atom_mass)
            law = composed
        epsilon = mpmath.mpf(epsilon)
        total = mpmath.mpf(0)
        for loss, mass in law.items():
            if loss == mpmath.inf:
                total += mass
            elif loss > epsilon:
                total += mass * (1 - mpmath.exp(epsilon - loss))
        return total


def subsampled_gaussian_delta(epsilon, sigma, sampling_prob, adjacency, sensitivity=1):
    """Tight δ(ε) of one direction of the Poisson-subsampled Gaussian in dp_accounting's conventions.

    ``"remove"`` compares (1 − q)N(0, σ²) + qN(−Δ, σ²) with N(0, σ²), ``"add"`` N(0, σ²) with
    (1 − q)N(0, σ²) + qN(Δ, σ²): reflected and scaled by σ, these are the two directions of
    :func:`poisson_subsampled_gaussian_delta` with μ = Δ/σ.
    """
    with mpmath.workdps(DIGITS):
        mu = mpmath.mpf(sensitivity) / mpmath.mpf(sigma)
        return poisson_subsampled_gaussian_delta(epsilon, mu, sampling_prob, adjacency)


def renyi_divergence(order, p, q):
    """D_α(P ‖ Q) = log(Σ p_i^α q_i^{1−α})/(α − 1) of two finite distributions, as an mpmath number (α > 1)."""
    with mpmath.workdps(DIGITS):
        a = mpmath.mpf(order)
        total = mpmath.fsum(mpmath.mpf(x) ** a * mpmath.mpf(y) ** (1 - a) for x, y in zip(p, q) if x > 0)
        return mpmath.log(total) / (a - 1)


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
