"""The Gaussian core's upper bound on log δ against proven enclosures from python-flint's arb.

The reference is a ball that contains the exact log δ(ε; μ) for the given doubles ε and μ
(arb's interval arithmetic: erfc, exp, log and the confluent hypergeometric U carry rigorous error
bounds), computed at rising precision until it is narrow. Every path of the core is checked: the
float path for one point, the general array path (an array of μ), and the fused pass over an
array that shares one μ, whose error bound is read off the array's extreme ε.
"""

import math

import flint
import numpy as np
import pytest
from flint import arb
from hypothesis import assume, given
from hypothesis import strategies as st

from dpmech import gaussian_delta, gaussian_log_delta
from dpmech.gaussian import _log_delta_and_error, _log_delta_mu, _log_delta_upper_shared_mu
from tests.profiles import examples

_UNIT_ROUNDOFF = 2.0**-53


def _erfcx(z):
    """erfcx(z) = e^{z²} erfc(z) for an arb ball z >= 0: directly below 8, else U(½, ½, z²)/√π
    (erfc(z) = e^{−z²} U(½, ½, z²)/√π), which arb evaluates with a proven bound however large z is."""
    if z < 8:
        return (z * z).exp() * z.erfc()
    half = arb(1) / 2
    return (z * z).hypgeom_u(half, half) / arb.pi().sqrt()


def reference_log_delta(epsilon: float, mu: float, tolerance: float = 2.0**-60):
    """(lower, upper) doubles around the exact log δ(ε; μ) = log[Φ(a) − e^ε Φ(a − μ)], a = μ/2 − ε/μ.

    With x_a = −a/√2 and x_b = (μ − a)/√2: δ = ½e^{−a²/2}[erfcx(x_a) − erfcx(x_b)] for a <= 0 and
    δ = 1 − ½e^{−a²/2}[erfcx(−x_a) + erfcx(x_b)] for a > 0, both exact identities. The precision doubles
    until the ball's radius is below ``tolerance``·max(1, |log δ|); the ends are rounded outward, and the
    upper one is at most 0 (δ <= 1).
    """
    old = flint.ctx.prec
    try:
        prec = 128
        while prec <= 1 << 15:
            flint.ctx.prec = prec
            e, m = arb(epsilon), arb(mu)
            a = m / 2 - e / m
            root2 = arb(2).sqrt()
            x_a, x_b = -a / root2, (m - a) / root2
            if x_a >= 0:
                ball = (_erfcx(x_a) - _erfcx(x_b)).log() - a * a / 2 - arb(2).log()
            elif x_a < 0:
                ball = (1 - (-(a * a) / 2).exp() * (_erfcx(-x_a) + _erfcx(x_b)) / 2).log()
            else:  # the sign of a is not decided at this precision
                ball = arb.nan()
            if ball.is_finite() and float(ball.rad()) <= tolerance * max(1.0, abs(float(ball.mid()))):
                lower = math.nextafter(float(ball.lower()), -math.inf)
                return lower, min(math.nextafter(float(ball.upper()), math.inf), 0.0)
            prec *= 2
        raise ArithmeticError(f"no enclosure of log delta at epsilon={epsilon!r}, mu={mu!r}")
    finally:
        flint.ctx.prec = old


def _error(epsilon: float, mu: float) -> float:
    """The proven bound E on the evaluation error at one point (module docstring of dpmech.gaussian)."""
    return float(_log_delta_and_error(np.array([epsilon]), np.array([mu]))[1][0])


def _a_rounding(epsilon: float, mu: float) -> float:
    """The part of E that bounds the rounding of a = μ/2 − ε/μ (grows where ε/μ or |a| is huge)."""
    ratio = epsilon / mu
    size = abs(0.5 * mu - ratio)
    rounding = 16.0 * _UNIT_ROUNDOFF * (0.5 * mu + ratio + size)
    return (size + 1.0) * rounding + 16.0 * _UNIT_ROUNDOFF * size * size + rounding * rounding


def _check(values, epsilons, mu, slack):
    """Each value bounds the exact log δ from above, by at most 2E + slack (E at that point), and by a
    relative 3e-11 wherever the rounding of a costs less than 1e-11."""
    for value, epsilon in zip(np.atleast_1d(values), epsilons):
        value, epsilon = float(value), float(epsilon)
        lower, upper = reference_log_delta(epsilon, mu)
        assert math.isfinite(value) and value <= 0.0
        assert value >= upper, (epsilon, mu, value, upper)
        error = _error(epsilon, mu)
        assert value - lower <= 2.0 * error + slack + 1e-13 * abs(lower), (epsilon, mu, value, lower, error)
        evaluated = float(_log_delta_and_error(np.array([epsilon]), np.array([mu]))[0][0])
        if math.isfinite(evaluated):
            assert evaluated - error <= lower, (epsilon, mu, evaluated, error, lower)
        if _a_rounding(epsilon, mu) < 1e-11:
            assert value - lower <= 3e-11 + 1e-13 * abs(lower), (epsilon, mu, value, lower)


def _powers(low, high):
    return st.floats(low, high).map(lambda exponent: 10.0**exponent)


@st.composite
def points(draw):
    """(ε, μ) over the whole range: δ near 1 (above the median, a > 0), the plain difference, short
    intervals, the far tail; μ from 1e-300 to 1e150, δ from near 1 down to far below 1e-308."""
    mu = draw(st.one_of(_powers(-300.0, 150.0), _powers(-2.0, 2.0)))
    region = draw(st.sampled_from(["above", "near", "plain", "far", "any"]))
    if region == "above":
        a = 0.5 * mu * draw(st.floats(0.0, 1.0))
    elif region == "near":
        a = draw(st.floats(-1.0, 1.0)) * 10.0 ** draw(st.floats(-6.0, 0.0))
    elif region == "plain":
        a = -math.sqrt(2.0) * draw(st.floats(0.0, 25.0))
    elif region == "far":
        a = -draw(_powers(1.55, 150.0))
    else:
        epsilon = draw(st.one_of(st.just(0.0), _powers(-320.0, 300.0)))
        return epsilon, mu
    epsilon = mu * (0.5 * mu - a)
    assume(math.isfinite(epsilon))
    return max(epsilon, 0.0), mu


def _inside(epsilon, mu):
    """Where log δ has a double (|a| < 1e150) and the reference is quick."""
    return abs(0.5 * mu - epsilon / mu) < 1e150 and epsilon / mu < 1e150


@examples(1.0)
@given(points(), st.lists(st.floats(0.0, 4.0), min_size=1, max_size=4))
def test_shared_mu_pass_bounds_arb_from_above_and_tightly(point, factors):
    epsilon, mu = point
    assume(_inside(epsilon, mu))
    # The point among companions around it, so the array's extremes (and its one error bound) vary.
    companions = np.array([epsilon] + [epsilon * factor for factor in factors])
    companions = companions[[_inside(float(value), mu) for value in companions]]
    fast = _log_delta_upper_shared_mu(companions.copy(), mu)
    through_dispatch = _log_delta_mu(companions, mu)
    if fast is not None:
        np.testing.assert_array_equal(fast, through_dispatch)
        # The one bound for the whole array exceeds each point's own by at most 1e-12.
        _check(fast, companions, mu, 1e-12)
    _check(through_dispatch, companions, mu, 1e-12)


@examples(1.0)
@given(points())
def test_float_and_general_array_paths_bound_arb_from_above_and_tightly(point):
    epsilon, mu = point
    assume(_inside(epsilon, mu))
    _check([_log_delta_mu(epsilon, mu)], [epsilon], mu, 0.0)
    general = _log_delta_mu(np.array([epsilon, epsilon]), np.array([mu, mu]))
    _check(general, [epsilon, epsilon], mu, 0.0)


@pytest.mark.parametrize("mu", [1e-300, 1e-12, 0.0141, 0.0212, 0.1414, 0.1415, 1.0, 31.6, 1e4, 1e100])
def test_a_grid_of_arrays_across_every_region(mu):
    # For each μ, ε from 0 (δ near 1 or the total variation) into the far tail (δ far below 1e-308).
    scale = np.concatenate([[0.0], np.geomspace(1e-6, 1e6, 25)])
    epsilons = mu * (0.5 * mu + scale * math.sqrt(2.0))
    epsilons = np.concatenate([epsilons, [0.5 * mu * mu * 0.5]])
    epsilons = epsilons[[_inside(float(value), mu) for value in epsilons]]
    upper = gaussian_log_delta(epsilons, 1.0, mu)
    # μ is rounded upward from (sensitivity μ, σ = 1); δ grows with μ, so the bound still holds.
    for value, epsilon in zip(upper, epsilons):
        lower_end, upper_end = reference_log_delta(float(epsilon), mu)
        assert value >= upper_end
    delta = gaussian_delta(epsilons, 1.0, mu)
    assert np.all(delta > 0.0) and np.all(delta <= 1.0)
    np.testing.assert_array_equal(delta, np.minimum(np.nextafter(np.exp(upper), np.inf), 1.0))
    _check(_log_delta_mu(epsilons, mu), epsilons, mu, 1e-12)
