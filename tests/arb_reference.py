"""Proven references: enclosures of δ(ε) in ball arithmetic (python-flint's arb), not quadrature estimates.

An :class:`Enclosure` is an interval [lo, hi] of exact rationals proven to contain the exact δ; a
test verifies a certified interval [lower, upper] of dpmech with ``lower <= lo`` (then lower ≤ truth)
and ``hi <= upper`` (then truth ≤ upper). Every input is taken exactly (a double is a dyadic
rational; μ = Δ/σ and a sampling rate m/n are passed as fractions), and every rounding, truncated
series and quadrature error is inside arb's balls. An enclosure too wide for the precision asked
for is retried at twice the working precision, and refused (an error, never a loose answer) past
a cap.

The pair is one sampled Gaussian, P = (1−γ)N(0,1) + γN(μ,1) against Q = N(0,1) in both directions
(remove: x ∼ P, loss L(x) = log(1 − γ + γe^{μx−μ²/2}), increasing in x; add: x ∼ Q, loss −L(x)),
composed with unsampled events whose pairs are symmetric: Gaussians (one merged μ_r) and finite
atoms (K-ary randomized response, the four-point (ε, δ) pair of Kairouz, Oh & Viswanath, no loss).
By independence δ_dir(ε) = E_x[δ_rest(ε − s·L(x))], s = ±1, with
δ_rest(t) = P[L_r = ∞] + Σ_a m_a·g(t − a), g(t) = (1 − e^t)₊ without a Gaussian and
g(t) = Φ(μ_r/2 − t/μ_r) − e^tΦ(−μ_r/2 − t/μ_r) with one. δ is the larger direction.

* Without a Gaussian, each atom's term is a difference of normal tails at the point
  x*(t) = (log((e^t − 1 + γ)/γ) + μ²/2)/μ where L crosses t: closed forms in erfc, no integration.
* With a Gaussian, the integrand φ(x)e^{L(x)}δ_rest(ε − L(x)) (remove) or φ(x)δ_rest(ε + L(x)) (add)
  is analytic in the strip |Im x| < π/μ, so :meth:`flint.acb.integral` encloses it on [−T, T]; the
  tails beyond ±T are bounded above through monotonicity of δ_rest (decreasing) and of L
  (increasing) by (mass of the tail) × (δ_rest at the tail's end), and added to ``hi`` only.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import flint
from flint import acb, arb, fmpq

from dpmech import ApproximateDpEvent, GaussianEvent, NoPrivacyLossEvent, PureEpsilonEvent

#: Relative width an enclosure must reach (hi − lo ≤ WIDTH·hi) before it is returned.
WIDTH = Fraction(1, 10**24)
START_BITS = 128
MAX_BITS = 3072


class Undecided(ArithmeticError):
    """A comparison or a width the working precision cannot settle (the caller raises it)."""


@dataclass(frozen=True)
class Enclosure:
    """lo ≤ δ ≤ hi, proven; exact rationals."""

    lo: Fraction
    hi: Fraction

    def __contains__(self, value) -> bool:
        return self.lo <= Fraction(value) <= self.hi

    def inside(self, lower, upper) -> bool:
        """Whether [lower, upper] ⊇ [lo, hi], i.e. whether a claim lower ≤ δ ≤ upper is proven."""
        return Fraction(lower) <= self.lo and self.hi <= Fraction(upper)

    @property
    def relative_width(self) -> Fraction:
        return (self.hi - self.lo) / self.hi if self.hi > 0 else Fraction(0)

    def log_upper(self) -> Fraction:
        """A proven upper bound of log(hi) (−∞ is not representable: hi must be positive)."""
        if self.hi <= 0:
            raise ValueError("log of a zero upper end")
        with flint.ctx.workprec(128):
            return _fraction(_ball(self.hi).log().upper())

    def log_lower(self) -> Fraction:
        """A proven lower bound of log(lo) (lo must be positive)."""
        if self.lo <= 0:
            raise ValueError("log of a zero lower end")
        with flint.ctx.workprec(128):
            return _fraction(_ball(self.lo).log().lower())

    def __float__(self) -> float:
        return float((self.lo + self.hi) / 2)

    def __repr__(self) -> str:
        with flint.ctx.workprec(128):
            lo, hi = (_ball(end).str(16, radius=False) for end in (self.lo, self.hi))
        return f"Enclosure([{lo}, {hi}], relative width {_ball(self.relative_width).str(2, radius=False)})"


def exact(value) -> Fraction:
    """A float, int, Fraction or fmpq as the exact rational it is."""
    if isinstance(value, fmpq):
        return Fraction(int(value.p), int(value.q))
    return Fraction(value)


def _ball(value: Fraction) -> arb:
    return arb(fmpq(value.numerator, value.denominator))


def _fraction(ball: arb) -> Fraction:
    mantissa, exponent = ball.man_exp()
    mantissa, exponent = int(mantissa), int(exponent)
    return Fraction(mantissa * 2**exponent) if exponent >= 0 else Fraction(mantissa, 2**-exponent)


def _enclosure(lo: arb, hi: arb) -> Enclosure:
    """[lower end of lo, upper end of hi], clipped below at 0 (δ ≥ 0)."""
    if not (lo.is_finite() and hi.is_finite()):
        raise Undecided("non-finite ball")
    return Enclosure(max(Fraction(0), _fraction(lo.lower())), _fraction(hi.upper()))


# --- the rest's law: atoms {exact loss: mass ball}, +∞ mass, merged Gaussian μ_r² (exact) ---------------


def _event_atoms(event) -> dict:
    """Atoms of one event's dominating pair under P: {Fraction loss or None (= +∞): arb mass}."""
    if isinstance(event, NoPrivacyLossEvent):
        return {Fraction(0): arb(1)}
    epsilon = exact(event.epsilon)
    e = _ball(epsilon).exp()
    if isinstance(event, PureEpsilonEvent):
        outcomes = event.num_outcomes or 2
        other = 1 / (e + outcomes - 1)
        atoms = {epsilon: e * other, -epsilon: other}
        if outcomes > 2:
            atoms[Fraction(0)] = atoms.get(Fraction(0), arb(0)) + (outcomes - 2) * other
        return atoms
    if isinstance(event, ApproximateDpEvent):
        delta = _ball(exact(event.delta))
        atoms = {None: delta}
        for loss, mass in ((epsilon, (1 - delta) * e / (1 + e)), (-epsilon, (1 - delta) / (1 + e))):
            atoms[loss] = atoms.get(loss, arb(0)) + mass
        return atoms
    raise TypeError(f"not a finite-atom event: {type(event).__name__}")


def _rest_law(rest):
    atoms = {Fraction(0): arb(1)}
    mu_squared = Fraction(0)
    for event, count in rest:
        if isinstance(event, GaussianEvent):
            mu_squared += count * (exact(event.sensitivity) / exact(event.sigma)) ** 2
            continue
        single = _event_atoms(event)
        for _ in range(count):
            composed = {}
            for a, p_a in atoms.items():
                for b, p_b in single.items():
                    key = None if a is None or b is None else a + b
                    composed[key] = composed.get(key, arb(0)) + p_a * p_b
            atoms = composed
    infinite = atoms.pop(None, arb(0))
    return atoms, infinite, mu_squared


# --- normal tails, in real and complex balls -------------------------------------------------------------


def _upper_tail(x):
    """Φ̄(x) = P[N(0,1) > x] = erfc(x/√2)/2 (arb or acb)."""
    return (x / arb(2).sqrt()).erfc() / 2


def _ncdf(x):
    return _upper_tail(-x)


# --- closed form: atoms only ---------------------------------------------------------------------------


def _positive(value: arb) -> bool:
    if value > 0:
        return True
    if value <= 0:
        return False
    raise Undecided("sign of e^t − 1 + γ")


def _remove_term(t, mu, gamma):
    """E_P[(1 − e^{t−L})₊] = P(L > t) − e^t Q(L > t)."""
    inner = t.exp() - 1 + gamma
    if not _positive(inner):  # L > log(1 − γ) ≥ t everywhere
        return -t.expm1()
    cut = ((inner / gamma).log() + mu * mu / 2) / mu
    return (1 - gamma) * _upper_tail(cut) + gamma * _upper_tail(cut - mu) - t.exp() * _upper_tail(cut)


def _add_term(t, mu, gamma):
    """E_Q[(1 − e^{t+L})₊] = Q(L < −t) − e^t P(L < −t)."""
    inner = (-t).exp() - 1 + gamma
    if not _positive(inner):  # −L < −log(1 − γ) ≤ t everywhere
        return arb(0)
    cut = ((inner / gamma).log() + mu * mu / 2) / mu
    head = _ncdf(cut)
    return head - t.exp() * ((1 - gamma) * head + gamma * _ncdf(cut - mu))


# --- with a Gaussian in the rest: rigorous quadrature ----------------------------------------------------


def _gaussian_profile(t, mu_r):
    """δ_G(t) = Φ(μ/2 − t/μ) − e^tΦ(−μ/2 − t/μ), entire in t (arb or acb)."""
    return _ncdf(mu_r / 2 - t / mu_r) - t.exp() * _ncdf(-mu_r / 2 - t / mu_r)


def _integrated(epsilon, mu, gamma, atoms, mu_r, sign, bits, floor):
    """[lo, hi] balls of E_x[Σ_a m_a δ_G(ε − a − s·L(x))] (the +∞ atom is added by the caller).

    The tails beyond ±T are made negligible against the larger of the value and ``floor``, a proven
    lower bound of δ from the other terms (a direction far below the other needs no relative accuracy).
    """
    shifts = [(_ball(loss), mass) for loss, mass in atoms.items()]
    half_mu_squared = mu * mu / 2
    strip = arb.pi() / mu

    def ratio(x):  # e^{L(x)}, the likelihood ratio dP/dQ
        return 1 - gamma + gamma * (mu * x - half_mu_squared).exp()

    def loss(x, analytic=None):
        return ratio(x).log() if analytic is None else ratio(x).log(analytic=analytic)

    def rest(t):  # δ_rest without its +∞ atom, at a real or complex t
        total = arb(0)
        for a, mass in shifts:
            total = total + mass * _gaussian_profile(t - a, mu_r)
        return total

    def integrand(x, analytic):
        if analytic and not abs(x.imag) < strip:
            return acb(arb.nan(), arb.nan())
        inner = ratio(x)
        value = inner.log(analytic=analytic)
        density = (-x * x / 2).exp() / (2 * arb.pi()).sqrt()  # of Q; P's is density · e^{L}
        if sign > 0:
            return density * inner * rest(epsilon - value)
        return density * rest(epsilon + value)

    def p_above(c):  # P(x > c) under the remove direction's P (mixture), or Q
        return (1 - gamma) * _upper_tail(c) + gamma * _upper_tail(c - mu) if sign > 0 else _upper_tail(c)

    def p_below(c):
        return (1 - gamma) * _ncdf(c) + gamma * _ncdf(c - mu) if sign > 0 else _ncdf(c)

    total_mass = sum((mass for mass in atoms.values()), arb(0))
    tolerance = arb(2) ** -(bits // 2 + 32)  # 2^-96 at the start: far below WIDTH
    share = arb(10) ** -30  # of the value, for the tails beyond ±T

    def piece(a, b, known):
        """∫_a^b; ``known`` (a proven part of δ) and a look at the integrand on a grid set the absolute
        tolerance, which only steers the work: the enclosure is proven whatever it is."""
        look = max(integrand(acb(a + (b - a) * k / 32), False).real.abs_upper() for k in range(33))
        scale = (look * (b - a) / 32).max(known)
        # python-flint swallows an exception raised in the integrand (the integral is then garbage):
        # record it and raise it here.
        failures = []

        def guarded(x, analytic):
            try:
                return integrand(x, analytic)
            except BaseException as error:
                failures.append(error)
                raise

        value = acb.integral(guarded, a, b, rel_tol=tolerance, abs_tol=scale * tolerance)
        if failures:
            raise failures[0]
        if not value.imag.contains(0):
            raise Undecided("imaginary part of a real integral")
        return value.real

    half = arb(8)
    value = piece(-half, half, floor)
    while True:
        # δ_rest is decreasing and L increasing: on x < −T (remove) δ_rest(ε − L(x)) ≤ δ_rest(ε − L(−T)),
        # on x > T (add) δ_rest(ε + L(x)) ≤ δ_rest(ε + L(T)); elsewhere δ_rest ≤ its total mass.
        if sign > 0:
            tails = p_below(-half) * rest(epsilon - loss(-half)) + p_above(half) * total_mass
        else:
            tails = p_below(-half) * total_mass + p_above(half) * rest(epsilon + loss(half))
        tails = tails.upper()
        if tails <= value.max(floor) * share:
            return value, value + tails
        if half >= 256:
            raise Undecided(f"tails beyond ±{half}")
        known = value.abs_lower().max(floor)
        value = value + piece(-2 * half, -half, known) + piece(half, 2 * half, known)
        half = 2 * half


# --- δ(ε) ------------------------------------------------------------------------------------------------


def _sampled_delta_at(epsilon, mu, gamma, rest, bits):
    atoms, infinite, mu_r_squared = _rest_law(rest)
    epsilon, mu, gamma = _ball(epsilon), _ball(mu), _ball(gamma)
    bounds = []
    for sign in (1, -1):  # remove, add
        if mu_r_squared == 0:
            term = _remove_term if sign > 0 else _add_term
            value = infinite
            for loss, mass in atoms.items():
                value += mass * term(epsilon - _ball(loss), mu, gamma)
            bounds.append((value, value))
        else:
            floor = infinite + max((lo for lo, _ in bounds), default=arb(0))
            lo, hi = _integrated(epsilon, mu, gamma, atoms, _ball(mu_r_squared).sqrt(), sign, bits, floor.lower())
            bounds.append((infinite + lo, infinite + hi))
    (remove_lo, remove_hi), (add_lo, add_hi) = bounds
    return _enclosure(remove_lo.max(add_lo), remove_hi.max(add_hi))


def sampled_delta(epsilon, mu, rate, rest=(), width=WIDTH) -> Enclosure:
    """Proven enclosure of the tight δ(ε) of ((1−γ)N(0,1) + γN(μ,1) vs N(0,1)) ⊗ rest, both directions.

    ``epsilon``, ``mu`` and ``rate`` are taken exactly (floats, ints, Fractions or fmpq: pass μ = Δ/σ
    and a without-replacement rate m/n as Fractions); ``rest`` is a sequence of (event, count) of
    unsampled Gaussian, pure-ε, (ε, δ) and no-loss events. The enclosure's relative width is at
    most ``width`` (else the working precision doubles, up to a cap, then Undecided is raised).
    """
    epsilon, mu, rate = exact(epsilon), exact(mu), exact(rate)
    if not (mu > 0 and 0 < rate <= 1 and epsilon >= 0):
        raise ValueError("need μ > 0, 0 < γ ≤ 1 and ε ≥ 0")
    bits = START_BITS
    while True:
        try:
            with flint.ctx.workprec(bits):
                enclosure = _sampled_delta_at(epsilon, mu, rate, rest, bits)
            if enclosure.hi == 0 or enclosure.relative_width <= width:
                return enclosure
        except Undecided:
            if bits >= MAX_BITS:
                raise
        if bits >= MAX_BITS:
            raise Undecided(f"no enclosure of relative width {float(width):.0e} at {bits} bits: {enclosure!r}")
        bits *= 2
