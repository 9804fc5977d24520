"""50-digit reference values for the Gaussian mechanism (mpmath), to check any calibration against.

These are slow (milliseconds per value) and exist so that tests, benchmarks
and users can verify a σ, ε or δ independently of the double-precision code:
``high_precision.delta(epsilon, mu) <= target`` holding for a returned σ is
the "never under-noised" property. μ = Δ√k/σ throughout. Not imported by
``import dpmech``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import mpmath

DIGITS = 50


def delta(epsilon: float, mu: float) -> mpmath.mpf:
    """δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) (Balle & Wang 2018), as an mpmath number."""
    with mpmath.workdps(DIGITS):
        epsilon, mu = mpmath.mpf(epsilon), mpmath.mpf(mu)
        return mpmath.ncdf(mu / 2 - epsilon / mu) - mpmath.exp(epsilon) * mpmath.ncdf(-mu / 2 - epsilon / mu)


def sigma(epsilon: float, target_delta: float, start: float) -> mpmath.mpf:
    """The σ (sensitivity 1, one release) with δ(ε; σ) = target, by root finding from ``start``."""
    with mpmath.workdps(DIGITS):
        target = mpmath.log(mpmath.mpf(target_delta))
        return mpmath.findroot(lambda s: mpmath.log(delta(epsilon, 1 / s)) - target, mpmath.mpf(start))


def epsilon(target_delta: float, mu: float, start: float) -> mpmath.mpf:
    """The ε with δ(ε; μ) = target, by root finding from ``start``."""
    with mpmath.workdps(DIGITS):
        target = mpmath.log(mpmath.mpf(target_delta))
        return mpmath.findroot(lambda e: mpmath.log(delta(e, mu)) - target, mpmath.mpf(start))


def poisson_subsampled_gaussian_delta(epsilon: float, mu: float, rate: float, direction: str) -> mpmath.mpf:
    """δ(ε) of one Poisson-subsampled Gaussian, P = (1−q)N(0,1) + qN(μ,1) against Q = N(0,1).

    ``direction`` 'remove' is δ(P‖Q), 'add' is δ(Q‖P) (Zhu, Dong & Wang 2022, Sec. 5). The
    likelihood ratio 1 − q + q e^{μx − μ²/2} is increasing in x, so each hockey-stick
    integral is a difference of normal tails cut at the point where the ratio equals e^{±ε}.
    """
    with mpmath.workdps(DIGITS):
        epsilon, mu, rate = mpmath.mpf(epsilon), mpmath.mpf(mu), mpmath.mpf(rate)
        if direction == "remove":
            cut = (mpmath.log((mpmath.exp(epsilon) - 1 + rate) / rate) + mu**2 / 2) / mu

            def tail(shift: mpmath.mpf) -> mpmath.mpf:
                return mpmath.ncdf(-(cut - shift))

            return (1 - rate) * tail(0) + rate * tail(mu) - mpmath.exp(epsilon) * tail(0)
        if direction != "add":
            raise ValueError(f"direction must be 'remove' or 'add' (got {direction!r})")
        inner = mpmath.exp(-epsilon) - 1 + rate
        if inner <= 0:
            return mpmath.mpf(0)
        cut = (mpmath.log(inner / rate) + mu**2 / 2) / mu

        def head(shift: mpmath.mpf) -> mpmath.mpf:
            return mpmath.ncdf(cut - shift)

        return head(0) - mpmath.exp(epsilon) * ((1 - rate) * head(0) + rate * head(mu))


def finite_pairs_delta(atom_lists: Iterable[Iterable[tuple[float, float]]], epsilon: float) -> mpmath.mpf:
    """δ(ε) of the composition of finite pairs, by exact enumeration of the composed loss.

    ``atom_lists`` holds one (loss, p_mass) sequence per composed pair (losses may be +∞);
    δ = Σ p (1 − e^{ε − L})_+ over the product law, with L = +∞ contributing its mass.
    """
    with mpmath.workdps(DIGITS):
        law = {mpmath.mpf(0): mpmath.mpf(1)}
        for atoms in atom_lists:
            composed: dict[mpmath.mpf, mpmath.mpf] = {}
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


def subsampled_gaussian_delta(
    epsilon: float, sigma: float, sampling_prob: float, adjacency: str, sensitivity: float = 1
) -> mpmath.mpf:
    """Tight δ(ε) of one direction of the Poisson-subsampled Gaussian in dp_accounting's conventions.

    ``"remove"`` compares (1 − q)N(0, σ²) + qN(−Δ, σ²) with N(0, σ²), ``"add"`` N(0, σ²) with
    (1 − q)N(0, σ²) + qN(Δ, σ²): reflected and scaled by σ, these are the two directions of
    :func:`poisson_subsampled_gaussian_delta` with μ = Δ/σ.
    """
    with mpmath.workdps(DIGITS):
        mu = mpmath.mpf(sensitivity) / mpmath.mpf(sigma)
        return poisson_subsampled_gaussian_delta(epsilon, mu, sampling_prob, adjacency)


def renyi_divergence(order: float, p: Iterable[float], q: Iterable[float]) -> mpmath.mpf:
    """D_α(P ‖ Q) = log(Σ p_i^α q_i^{1−α})/(α − 1) of two finite distributions, as an mpmath number (α > 1)."""
    with mpmath.workdps(DIGITS):
        a = mpmath.mpf(order)
        total = mpmath.fsum(mpmath.mpf(x) ** a * mpmath.mpf(y) ** (1 - a) for x, y in zip(p, q) if x > 0)
        return mpmath.log(total) / (a - 1)


def _log_ncdf(x: mpmath.mpf) -> mpmath.mpf:
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


def log_delta(epsilon: float, mu: float) -> mpmath.mpf:
    """log δ(ε; μ) to 50 significant digits at any double inputs (μ from subnormal to 1e308, ε up to 1e308).

    The working precision grows with the cancellation the formula suffers:
    a = μ/2 − ε/μ cancels by up to μ/|a| when ε ≈ μ²/2, Φ(a) − e^ε Φ(b) by up
    to |a|/μ, and ε against a²/2; mpmath's unbounded exponents hold δ far
    below the smallest double.
    """
    return _log_delta(epsilon, lambda: mpmath.mpf(mu), 0)


def log_delta_of_noise(epsilon: float, sigma: float, sensitivity: float = 1.0, compositions: int = 1) -> mpmath.mpf:
    """As :func:`log_delta` with μ = Δ√k/σ formed exactly in the working precision (the quantity double code rounds)."""
    return _log_delta(
        epsilon,
        lambda: mpmath.mpf(sensitivity) * mpmath.sqrt(mpmath.mpf(compositions)) / mpmath.mpf(sigma),
        len(str(compositions)),
    )


def _log_delta(epsilon: float, make_mu: Callable[[], mpmath.mpf], more_digits: int) -> mpmath.mpf:
    with mpmath.workdps(40 + more_digits):
        mu = make_mu()
        epsilon = mpmath.mpf(epsilon)
        size_a = abs(mu / 2 - epsilon / mu) + 1

        def digits(value: mpmath.mpf) -> float:
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


def gaussian_profile(t: float, mu: float) -> mpmath.mpf:
    """δ_G(t) = Φ(μ/2 − t/μ) − e^t Φ(−μ/2 − t/μ) at any real t (valid for t < 0 too); (1 − e^t)₊ at μ = 0.

    The difference can cancel to far below its terms (small μ and t): the working precision grows
    until the result keeps DIGITS significant digits (up to 40·DIGITS; 0 is returned only if the
    terms agree there too).
    """
    digits = DIGITS
    while True:
        with mpmath.workdps(digits + 10):
            t_value, mu_value = mpmath.mpf(t), mpmath.mpf(mu)
            if mu_value == 0:
                return +max(mpmath.mpf(0), -mpmath.expm1(t_value))
            first = mpmath.ncdf(mu_value / 2 - t_value / mu_value)
            difference = first - mpmath.exp(t_value) * mpmath.ncdf(-mu_value / 2 - t_value / mu_value)
            if difference != 0 and abs(first / difference) < mpmath.mpf(10) ** (digits + 5 - DIGITS):
                return +difference
            if digits >= 40 * DIGITS:
                return +max(difference, mpmath.mpf(0))
        digits *= 2


def event_atoms(event: object) -> dict[mpmath.mpf, mpmath.mpf]:
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
        # ε is read inside each branch: an event of another kind (a GaussianEvent has no ε) reaches the
        # ValueError below rather than an AttributeError.
        if isinstance(event, PureEpsilonEvent):
            epsilon = mpmath.mpf(event.epsilon)
            outcomes = event.num_outcomes or 2
            other = 1 / (mpmath.exp(epsilon) + outcomes - 1)
            atoms = {epsilon: mpmath.exp(epsilon) * other, -epsilon: other}
            if outcomes > 2:
                atoms[mpmath.mpf(0)] = (outcomes - 2) * other
            return atoms
        if isinstance(event, ApproximateDpEvent):
            epsilon = mpmath.mpf(event.epsilon)
            delta = mpmath.mpf(event.delta)
            atoms = {mpmath.inf: delta}
            up = (1 - delta) * mpmath.exp(epsilon) / (1 + mpmath.exp(epsilon))
            down = (1 - delta) / (1 + mpmath.exp(epsilon))
            atoms[epsilon] = atoms.get(epsilon, 0) + up
            atoms[-epsilon] = atoms.get(-epsilon, 0) + down
            return atoms
    raise ValueError(f"event must be a finite-support dpmech event (got {type(event).__name__})")


def _convolve(left: dict[mpmath.mpf, mpmath.mpf], right: dict[mpmath.mpf, mpmath.mpf]) -> dict[mpmath.mpf, mpmath.mpf]:
    out: dict[mpmath.mpf, mpmath.mpf] = {}
    for loss_a, p_a in left.items():
        for loss_b, p_b in right.items():
            loss = loss_a + loss_b
            out[loss] = out.get(loss, 0) + p_a * p_b
    return out


def ledger_delta(pairs: Iterable[tuple[object, int]], epsilon: float) -> mpmath.mpf:
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


def ledger_epsilon(pairs: Iterable[tuple[object, int]], target_delta: float, high: float = 1e4, steps: int = 80) -> mpmath.mpf:
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
