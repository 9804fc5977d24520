"""Closed forms against proven references in ball arithmetic (python-flint's arb), at adversarial points.

Each reference takes its double inputs exactly (a double is a dyadic rational) and returns an
enclosure [lo, hi] of the exact value; the working precision doubles until the enclosure is
narrow (arb's balls contain every rounding). A bound that must not be optimistic is checked
against the enclosure's far end (an upper bound >= hi, a lower bound <= lo), and its tightness
against the near end.
"""

import math
from fractions import Fraction

import numpy as np
import pytest
from flint import arb, ctx, fmpq
from hypothesis import example, given
from hypothesis import strategies as st

from dpmech.conversions import fdp, renyi
from tests.profiles import examples

TINY = 5e-324


def _ball(value) -> arb:
    value = Fraction(value)
    return arb(fmpq(value.numerator, value.denominator))


def _fraction(ball: arb) -> Fraction:
    mantissa, exponent = (int(part) for part in ball.man_exp())
    return Fraction(mantissa * 2**exponent) if exponent >= 0 else Fraction(mantissa, 2**-exponent)


def _enclose(evaluate, bits=128, relative_bits=70, max_bits=1 << 14):
    """(lo, hi) Fractions around ``evaluate()``, an arb of a quantity known to be >= 0 (lo is clipped at 0).

    The precision doubles until the ball is relatively narrow, or narrower than 2^-1200 in absolute
    terms (far below any double's spacing: where the value is 0 no relative width can be reached).
    """
    while True:
        with ctx.workprec(bits):
            value = evaluate()
            if value.is_finite() and (value.rel_accuracy_bits() >= relative_bits or value.rad() < arb(2) ** -1200):
                return max(Fraction(0), _fraction(value.lower())), _fraction(value.upper())
        if bits >= max_bits:
            raise ArithmeticError(f"no narrow enclosure at {bits} bits: {value}")
        bits *= 2


def _decided(left, right):
    """Whether left > right, where arb can decide it; None where the balls overlap."""
    if left > right:
        return True
    if left <= right:
        return False
    return None


def _log_uniform(low_exponent, high_exponent):
    return st.floats(low_exponent, high_exponent).map(lambda exponent: 10.0**exponent)


# --- zcdp_epsilon: the infimum over α > 1 of Canonne, Kamath & Steinke 2020, Prop. 12 at r(α) = ρα --------


def _improved_conversion(rdp, log_inverse_delta, order):
    """ε(α) = r + log(1 − 1/α) − (log δ + log α)/(α − 1), the formula rdp_epsilon implements (arb)."""
    return rdp + (1 - 1 / order).log() + (log_inverse_delta - order.log()) / (order - 1)


def _zcdp_reference(rho, delta):
    """(lo, hi, scale): an enclosure of inf_{α>1} max(ε(α), 0) (0 under Bretagnolle–Huber) and the size of its terms.

    Analytic optimum: with u = α − 1, L = log(1/δ), dε/du = ρ + (log(1 + u) − L)/u², so ε is
    unimodal with its minimum at the root u* of φ(u) = ρu² + log(1 + u) − L, where
    ε = ρ(1 + 2u*) − log(1 + 1/u*), increasing in u*. u* is bracketed by bisection in t = log u
    with every sign decided by arb; the bracket's ends give the enclosure. The formula ε(α) itself
    is also evaluated at the bracket (it must agree with the closed form there).
    """
    bits = 256
    while True:
        with ctx.workprec(bits):
            rho_ball, delta_ball = _ball(rho), _ball(delta)
            log_inverse = -delta_ball.log()
            divergence_small = _decided(delta_ball * delta_ball, -(-rho_ball).expm1())
            if divergence_small is None:
                bits *= 2
                continue
            if divergence_small:
                return Fraction(0), Fraction(0), Fraction(0)

            def phi(t):
                u = t.exp()
                return rho_ball * u * u + u.log1p() - log_inverse

            # each of ρu² and log(1 + u) alone is at most L at the root, and at least L/2 for one of them
            low = min((log_inverse / (2 * rho_ball)).sqrt(), (log_inverse / 2).expm1()).log().lower()
            high = min((log_inverse / rho_ball).sqrt(), log_inverse.expm1()).log().upper()
            assert phi(low) < 0 < phi(high)
            for _ in range(bits // 2):
                middle = ((low + high) / 2).mid()
                sign = phi(middle)
                if sign < 0:
                    low = middle
                elif sign > 0:
                    high = middle
                else:
                    break
            u_low, u_high = low.exp(), high.exp()
            closed_low = rho_ball * (1 + 2 * u_low) - (1 / u_low).log1p()
            closed_high = rho_ball * (1 + 2 * u_high) - (1 / u_high).log1p()
            value = arb.union(closed_low, closed_high)
            formula = _improved_conversion(rho_ball * (1 + u_high), log_inverse, 1 + u_high)
            if (value.rel_accuracy_bits() < 80 and not value.contains(0)) or formula.rel_accuracy_bits() < 80:
                bits *= 2
                continue
            # the closed form and the formula agree at the optimum (to the bracket's width)
            assert (formula - value).abs_upper() <= value.abs_upper() * arb(2) ** -60
            scale = rho_ball * (1 + u_high) + (log_inverse + u_high.log1p()) / u_high + (1 / u_high).log1p()
            lo, hi = (max(Fraction(0), _fraction(end)) for end in (value.lower(), value.upper()))
            return lo, hi, _fraction(scale.upper())


@given(rho=_log_uniform(-20.0, 4.0), delta=_log_uniform(-300.0, math.log10(0.5)))
@example(rho=0.5e-16, delta=1e-10)  # μ = 1e-8: the old grid stopped at α − 1 ≈ 1.8e6 and returned 181× the infimum
@example(rho=1e-20, delta=1e-300)
@example(rho=1e4, delta=0.5)
@example(rho=1e-20, delta=1e-10)  # below e^{−2L}: the optimum sits near u = e^L, where ε crosses 0
@examples(0.5)
def test_optimal_zcdp_epsilon_is_the_proven_infimum_rounded_up(rho, delta):
    lo, hi, scale = _zcdp_reference(rho, delta)
    result = renyi.zcdp_epsilon(rho, delta)
    assert Fraction(result) >= hi
    assert Fraction(result) - hi <= scale * Fraction(1, 10**12)


def test_optimal_zcdp_epsilon_at_the_reported_point_and_the_extremes_of_its_inputs():
    lo, hi, _ = _zcdp_reference(0.5e-16, 1e-10)
    result = renyi.zcdp_epsilon(0.5e-16, 1e-10)
    assert hi <= Fraction(result) <= hi * (1 + Fraction(1, 10**12))
    assert float(hi) == pytest.approx(2.3173526572e-08, rel=1e-9)
    for rho, delta in [(TINY, 1e-300), (1e300, TINY), (1e-300, 1 - 2**-53), (1e-300, TINY)]:
        lo, hi, scale = _zcdp_reference(rho, delta)
        result = renyi.zcdp_epsilon(rho, delta)
        assert hi <= Fraction(result) <= hi + scale * Fraction(1, 10**12)
    assert renyi.zcdp_epsilon(0.0, 1e-10) == 0.0


# --- laplace_rdp and pure_dp_rdp: Mironov 2017, Prop. 6, and Bun & Steinke 2016, Prop. 3.3 ----------------


def _laplace_reference(order, scale, sensitivity):
    """Mironov's D_α(Lap(0, b) ‖ Lap(Δ, b)) with ε = Δ/b exact, e^{(α−1)ε} factored out of the log."""
    epsilon = Fraction(sensitivity) / Fraction(scale)
    if order == math.inf:
        return epsilon, epsilon

    def evaluate():
        e, a = _ball(epsilon), _ball(order)
        if order == 1.0:
            return (-e).expm1() + e
        u = a - 1
        return e + (a / (2 * a - 1) + u / (2 * a - 1) * (-(2 * a - 1) * e).exp()).log() / u

    return _enclose(evaluate)


def _pure_dp_reference(order, epsilon):
    """Bun & Steinke's (1/(α−1)) log((e^{αε} + e^{(1−α)ε})/(1 + e^ε)), e^{(α−1)ε} factored out of the log."""
    if order == math.inf or epsilon == 0:
        return Fraction(epsilon), Fraction(epsilon)

    def evaluate():
        e, a = _ball(epsilon), _ball(order)
        if order == 1.0:
            return e * (e / 2).tanh()
        u = a - 1
        return e + ((e.exp() + (-2 * u * e).exp()) / (1 + e.exp())).log() / u

    return _enclose(evaluate)


ORDERS = st.one_of(st.just(1.0), st.just(math.inf), st.floats(-16.0, 300.0).map(lambda exponent: 1.0 + 10.0**exponent))


def _assert_rounded_up(result, lo, hi, epsilon, relative=Fraction(3, 10**12)):
    # above the enclosure, or at least ε, which bounds D_α of every ε-DP mechanism (D_α <= D_∞ = ε)
    assert Fraction(result) >= hi or Fraction(result) >= epsilon
    # tight: a relative 1e-12 plus the next double (one subnormal step where the truth underflows)
    assert Fraction(result) <= hi * (1 + relative) + Fraction(2 * TINY)


@given(order=ORDERS, scale=_log_uniform(-300.0, 300.0), sensitivity=_log_uniform(-300.0, 300.0))
@example(order=2.0, scale=1.0, sensitivity=1e-12)  # the old form lost 2.5e-4 relative here, and everything at 1e-16
@example(order=1.5, scale=1.0, sensitivity=1e-16)
@example(order=1.0, scale=1.0, sensitivity=1e-300)
@example(order=1.0 + 1e-16, scale=1e300, sensitivity=1e-300)  # ε underflows: the true r is below the smallest double
@example(order=1e300, scale=1e-8, sensitivity=1e-300)
@examples(0.5)
def test_laplace_rdp_is_mironov_closed_form_rounded_up(order, scale, sensitivity):
    if not math.isfinite(sensitivity / scale):
        return
    lo, hi = _laplace_reference(order, scale, sensitivity)
    _assert_rounded_up(renyi.laplace_rdp(order, scale, sensitivity), lo, hi, Fraction(sensitivity) / Fraction(scale))


@given(order=ORDERS, epsilon=st.one_of(st.just(0.0), _log_uniform(-320.0, 300.0)))
@example(order=2.0, epsilon=1e-3)
@example(order=1.0000000000000002, epsilon=9.08059167574005)  # a target() search's worst for the old form: 5.0e-15 below
@example(order=1.0 + 2**-40, epsilon=0.0625)
@examples(0.5)
def test_pure_dp_rdp_is_bun_steinke_closed_form_rounded_up(order, epsilon):
    lo, hi = _pure_dp_reference(order, epsilon)
    _assert_rounded_up(renyi.pure_dp_rdp(order, epsilon), lo, hi, Fraction(epsilon))


def test_pure_dp_rdp_is_rounded_up_on_a_grid_of_orders_down_to_one():
    orders = np.concatenate([[1.0, 1.0 + 1e-12], 1.0 + np.geomspace(1e-9, 1e6, 40)])
    for epsilon in (1e-3, 0.37, 2.5, 40.0):
        values = renyi.pure_dp_rdp(orders, epsilon)
        for order, value in zip(orders, values):
            lo, hi = _pure_dp_reference(order, epsilon)
            _assert_rounded_up(value, lo, hi, Fraction(epsilon))


# --- trade-off curves: rounded down ---------------------------------------------------------------------


def _gdp_reference(alpha, mu):
    """Φ(Φ⁻¹(1 − α) − μ) = erfc(μ/√2 − erfcinv(2α))/2 (Φ(x) = erfc(−x/√2)/2, Φ⁻¹(α) = −√2 erfcinv(2α))."""
    if alpha == 0:
        return Fraction(1), Fraction(1)
    if alpha == 1:
        return Fraction(0), Fraction(0)

    def evaluate():
        root = arb(2).sqrt()
        return (_ball(mu) / root - (2 * _ball(alpha)).erfcinv()).erfc() / 2

    return _enclose(evaluate)


def _laplace_tradeoff_reference(alpha, mu):
    def evaluate():
        a, m = _ball(alpha), _ball(mu)
        if 2 * a < (-m).exp():
            return 1 - m.exp() * a
        if 2 * alpha <= 1:
            return (-m).exp() / (4 * a)
        return (-m).exp() * (1 - a)

    if alpha == 0:
        return Fraction(1), Fraction(1)
    return _enclose(evaluate)


def _randomized_response_tradeoff_reference(alpha, epsilon, k):
    def evaluate():
        a, e = _ball(alpha), _ball(epsilon)
        keep = e.exp() / (e.exp() + k - 1)
        other = 1 / (e.exp() + k - 1)
        return arb(0).max(1 - e.exp() * a).max(1 - keep + other - a).max((-e).exp() * (1 - a))

    if alpha == 0:
        return Fraction(1), Fraction(1)
    return _enclose(evaluate)


ALPHAS = st.one_of(_log_uniform(-300.0, 0.0), st.floats(0.0, 1.0), st.floats(-16.0, -0.3).map(lambda exponent: 1.0 - 10.0**exponent))


@given(alpha=ALPHAS, mu=st.one_of(_log_uniform(-6.0, 1.5), st.floats(0.0, 40.0)))
@example(alpha=0.8641040578085897, mu=1.0)  # ndtri's worst relative error in a scan
@example(alpha=0.9999999999927505, mu=9.971933461424387)  # a target() search's worst for the old form: 2.8e-14 above
@example(alpha=1 - 1e-16, mu=1.0)
@example(alpha=1e-300, mu=37.0)
@examples(0.5)
def test_gdp_tradeoff_is_rounded_down(alpha, mu):
    lo, hi = _gdp_reference(alpha, mu)
    result = fdp.gdp_tradeoff(alpha, mu)
    assert Fraction(result) <= lo
    # The margin is about 16 ulps of (1 + z²) plus the Mills ratio times z's error: 2e-11 at |z| = 48. scipy's
    # ndtr returns 0 below z ≈ −37.7, where Φ(z) is subnormal: an absolute slack of the smallest normal double.
    assert Fraction(result) >= lo * (1 - Fraction(1, 10**10)) - Fraction(2.0**-1022)


@given(alpha=ALPHAS, mu=st.one_of(st.just(0.0), _log_uniform(-8.0, 2.8)))
@example(alpha=0.25, mu=0.5)
@example(alpha=0.5411666557568507, mu=0.5411666557568507)  # a target() search's worst for the old form: 1.8e-16 above
@examples(0.5)
def test_laplace_tradeoff_is_rounded_down(alpha, mu):
    lo, _ = _laplace_tradeoff_reference(alpha, mu)
    result = fdp.laplace_tradeoff(alpha, mu)
    assert Fraction(result) <= lo
    assert Fraction(result) >= lo - Fraction(1, 10**13) * (1 + lo) - Fraction(2 * TINY)


@given(alpha=ALPHAS, epsilon=st.one_of(st.just(0.0), _log_uniform(-8.0, 2.8)), k=st.integers(2, 1000))
@example(alpha=0.0861111842502389, epsilon=5.286973347001362, k=23)  # a target() search's worst for the old form: 2.4e-15 above
@examples(0.5)
def test_randomized_response_tradeoff_is_rounded_down(alpha, epsilon, k):
    lo, _ = _randomized_response_tradeoff_reference(alpha, epsilon, k)
    result = fdp.randomized_response_tradeoff(alpha, epsilon, k)
    assert Fraction(result) <= lo
    assert Fraction(result) >= lo - Fraction(1, 10**13) * 4 - Fraction(2 * TINY)


# --- δ never 0 where the truth is positive --------------------------------------------------------------


def test_rdp_delta_underflow_is_the_smallest_positive_double_not_zero():
    # log δ = (α − 1)(r − ε + log(1 − 1/α)) − log α is about −2000 here: far below the smallest double.
    delta, order = renyi.rdp_delta(1000.0, [2.0, 3.0], [0.1, 0.1])
    assert delta == TINY and order == 3.0
    assert renyi.rdp_delta(1000.0, [2.0, math.inf], [0.1, 0.1])[0] == 0.0  # pure DP at ε >= r(∞): exactly 0


@given(epsilon=st.floats(0.0, 1e4), rdp=st.floats(0.0, 50.0), order=st.floats(1.01, 1e4))
def test_rdp_delta_is_above_its_formula_in_arb_and_positive(epsilon, rdp, order):
    delta, _ = renyi.rdp_delta(epsilon, [order], [rdp])
    if rdp == 0:  # one law: δ = 0 exactly
        assert delta == 0.0
        return
    assert delta > 0
    with ctx.workprec(256):
        e, r, a = _ball(epsilon), _ball(rdp), _ball(order)
        log_delta = ((a - 1) * (r - e + (1 - 1 / a).log()) - a.log()).min((-(-r).expm1()).log() / 2).min(arb(0))
        assert _ball(delta).log() >= log_delta.upper() or delta == TINY


@given(delta=_log_uniform(-300.0, math.log10(0.5)), rdp=st.one_of(st.just(0.0), _log_uniform(-12.0, 3.0)), order=st.floats(-12.0, 8.0).map(lambda exponent: 1.0 + 10.0**exponent))
@example(delta=1e-5, rdp=1.1, order=32.0)
def test_rdp_epsilon_at_one_order_is_above_its_formula_in_arb(delta, rdp, order):
    epsilon, _ = renyi.rdp_epsilon(delta, [order], [rdp])
    with ctx.workprec(512):
        d, r = _ball(delta), _ball(rdp)
        if rdp == 0 or _decided(d * d, -(-r).expm1()):  # Bretagnolle–Huber (or one law): ε = 0 is proven
            assert epsilon == 0.0
            return
        exact = _improved_conversion(r, -d.log(), _ball(order)).max(arb(0))
        assert Fraction(epsilon) >= _fraction(exact.upper())
        assert Fraction(epsilon) <= _fraction(exact.upper()) * (1 + Fraction(1, 10**12)) + Fraction(1, 10**14) * _fraction((r + (-d.log() + _ball(order).log()) / (_ball(order) - 1)).upper())
