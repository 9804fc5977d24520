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


def gaussian_profile(t, mu):
    """δ_G(t) = Φ(μ/2 − t/μ) − e^t Φ(−μ/2 − t/μ) at any real t (valid for t < 0 too); (1 − e^t)₊ at μ = 0."""
    with mpmath.workdps(DIGITS):
        t, mu = mpmath.mpf(t), mpmath.mpf(mu)
        if mu == 0:
            return max(mpmath.mpf(0), 1 - mpmath.exp(t))
        return mpmath.ncdf(mu / 2 - t / mu) - mpmath.exp(t) * mpmath.ncdf(-mu / 2 - t / mu)


def event_atoms(event):
    """Privacy-loss atoms {loss: probability under P} of one event's dominating pair, in 50 digits.

    Gaussian events are not atoms (see :func:`ledger_delta`). K-ary RR: +ε, 0, −ε with
    probabilities p, (K−2)q, q; a generic ε-DP event is binary RR; a generic (ε, δ)
    event is the four-point pair of Kairouz, Oh & Viswanath (2015): +∞ with δ, ±ε with
    (1−δ)e^{±ε}/(1+e^ε); an event with no privacy loss is the point 0.
    """
    from .events import ApproximateDpEvent, NoPrivacyLossEvent, PureEpsilonEvent

    with mpmath.workdps(DIGITS):
        if isinstance(event, NoPrivacyLossEvent):
            return {mpmath.mpf(0): mpmath.mpf(1)}
        epsilon = mpmath.mpf(event.epsilon)
        if isinstance(event, PureEpsilonEvent):
            outcomes = event.num_outcomes or 2
            other = 1 / (mpmath.exp(epsilon) + outcomes - 1)
            atoms = {epsilon: mpmath.exp(epsilon) * other, -epsilon: other}
            if outcomes > 2:
                atoms[mpmath.mpf(0)] = (outcomes - 2) * other
            return atoms
        if isinstance(event, ApproximateDpEvent):
            delta = mpmath.mpf(event.delta)
            atoms = {mpmath.inf: delta}
            up = (1 - delta) * mpmath.exp(epsilon) / (1 + mpmath.exp(epsilon))
            down = (1 - delta) / (1 + mpmath.exp(epsilon))
            atoms[epsilon] = atoms.get(epsilon, 0) + up
            atoms[-epsilon] = atoms.get(-epsilon, 0) + down
            return atoms
    raise ValueError(f"event must be a finite-support dpmech event (got {type(event).__name__})")


def _convolve(left, right):
    out = {}
    for loss_a, p_a in left.items():
        for loss_b, p_b in right.items():
            loss = loss_a + loss_b
            out[loss] = out.get(loss, 0) + p_a * p_b
    return out


def ledger_delta(pairs, epsilon):
    """Tight δ(ε) of the composition of (event, count) pairs' dominating pairs, in 50 digits.

    Gaussians merge to one μ = √(Σ kμ²); finite atoms are convolved one repetition at a
    time (so keep counts small); δ(ε) = P[L = ∞] + Σ pⱼ δ_G(ε − lⱼ). Every pair is
    symmetric, so one direction suffices.
    """
    from .events import GaussianEvent

    with mpmath.workdps(DIGITS):
        mu_squared = mpmath.mpf(0)
        atoms = {mpmath.mpf(0): mpmath.mpf(1)}
        for event, count in pairs:
            if isinstance(event, GaussianEvent):
                mu_squared += count * (mpmath.mpf(event.sensitivity) / mpmath.mpf(event.sigma)) ** 2
                continue
            single = event_atoms(event)
            for _ in range(count):
                atoms = _convolve(atoms, single)
        mu = mpmath.sqrt(mu_squared)
        epsilon = mpmath.mpf(epsilon)
        total = mpmath.mpf(0)
        for loss, probability in atoms.items():
            total += probability if loss == mpmath.inf else probability * gaussian_profile(epsilon - loss, mu)
        return total


def ledger_epsilon(pairs, target_delta, high=1e4, steps=80):
    """The ε with :func:`ledger_delta` = target (0 if δ(0) <= target), by bisection on [0, high].

    Slow (each step evaluates :func:`ledger_delta`); tests should prefer checking
    ``ledger_delta`` at the ends of a returned interval.
    """
    with mpmath.workdps(DIGITS):
        target = mpmath.mpf(target_delta)
        if ledger_delta(pairs, 0) <= target:
            return mpmath.mpf(0)
        low, high = mpmath.mpf(0), mpmath.mpf(high)
        for _ in range(steps):
            middle = (low + high) / 2
            if ledger_delta(pairs, middle) > target:
                low = middle
            else:
                high = middle
        return (low + high) / 2
