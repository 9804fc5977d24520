"""dpmech._erfcx and the numpy-free scalar Gaussian path against python-flint's arb enclosures.

erfcx's relative error bound (2⁻⁴⁸) is proven in its module docstring under an assumption on the
platform's erfc and exp; these tests check the bound itself on a dense grid and on Hypothesis draws, so
a platform whose libm misses the assumption fails here. The magnification factor 1252 behind
dpmech._gaussian_scalar.ERFCX_LOG_ERROR is checked on a grid too.
"""

import math

import flint
import mpmath
import numpy as np
import pytest
from flint import arb
from hypothesis import given
from hypothesis import strategies as st
from numpy.polynomial.legendre import leggauss

from dpmech import _gaussian_scalar
from dpmech._erfcx import ERFCX_RELATIVE_ERROR, HIGHEST, LOWEST, erfcx
from dpmech.gaussian import _upper_quantile
from tests.dpmech.test_gaussian_arb import reference_log_delta
from tests.profiles import examples


def _reference(x: float) -> arb:
    """An arb ball around erfcx(x) at 200 bits: e^{x²}erfc(x) below 8, else U(½, ½, x²)/√π
    (erfc(x) = e^{−x²}U(½, ½, x²)/√π), which arb bounds rigorously however large x is."""
    old = flint.ctx.prec
    try:
        flint.ctx.prec = 200
        z = arb(x)
        if x < 8:
            return (z * z).exp() * z.erfc()
        half = arb(1) / 2
        return (z * z).hypgeom_u(half, half) / arb.pi().sqrt()
    finally:
        flint.ctx.prec = old


def _relative_error(x: float) -> float:
    exact = _reference(x)
    return float((abs((arb(erfcx(x)) - exact) / exact)).upper())


def test_erfcx_is_within_its_bound_on_a_dense_grid():
    grid = np.concatenate([np.linspace(LOWEST, 30.0, 2801), np.geomspace(10.0, HIGHEST, 300),
                           [math.nextafter(10.0, 0.0), 10.0, -0.05, 0.0, 5e-324, 25.0, HIGHEST]])
    worst = max(_relative_error(x) for x in grid.tolist())
    # Measured: 4.6u (u = 2^-53) on a grid of 33,000 points; the bound is 32u.
    assert worst <= ERFCX_RELATIVE_ERROR, worst / 2.0**-53


@examples(1.0)
@given(st.one_of(st.floats(LOWEST, 30.0), st.floats(-0.06, 1.0), st.floats(10.0, HIGHEST)))
def test_erfcx_is_within_its_bound_on_any_draw(x):
    assert _relative_error(x) <= ERFCX_RELATIVE_ERROR, x


@pytest.mark.parametrize("x", [math.nextafter(LOWEST, -math.inf), -30.0, math.nextafter(HIGHEST, math.inf), math.inf,
                               math.nan])
def test_erfcx_refuses_what_it_cannot_bound(x):
    with pytest.raises(ValueError, match="x must be in"):
        erfcx(x)


def test_erfcx_magnification_in_the_short_interval_stays_below_its_stated_factor():
    # ERFCX_LOG_ERROR = 1300ρ rests on 2x·erfcx(x)/(2/√π − 2x·erfcx(x)) <= 2x² + 2 <= 1252 for the nodes
    # x in [−0.05, 25] of the short interval.
    old = flint.ctx.prec
    flint.ctx.prec = 200
    try:
        for x in np.linspace(-0.05, 25.0, 2001).tolist():
            scaled = 2 * arb(x) * _reference(x)
            ratio = abs(scaled) / (2 / arb.pi().sqrt() - scaled)
            assert float(ratio.upper()) <= 2.0 * x * x + 2.0 <= 1252.0, x
    finally:
        flint.ctx.prec = old


def test_gauss_legendre_nodes_and_weights_against_40_digits():
    # numpy's leggauss, which the array path used before, is within 8e-15 of these weights; ours within 1e-15.
    with mpmath.workdps(40):
        for node, weight, estimate in zip(_gaussian_scalar.NODES, _gaussian_scalar.WEIGHTS, leggauss(8)[0]):
            exact = mpmath.findroot(lambda t: mpmath.legendre(8, t), float(estimate))
            exact_weight = 2 / ((1 - exact**2) * mpmath.diff(lambda t: mpmath.legendre(8, t), exact) ** 2)
            assert abs(node - exact) <= 2e-16 and abs(weight / exact_weight - 1) <= 2e-15, (node, weight)


# Not near log p = 0, where z from p = e^log p is ill-conditioned for both (1 − p loses its digits).
@pytest.mark.parametrize("log_probability", [-0.1, math.log(0.5), -1.0, -11.5, -100.0, -699.0, -700.0, -1e4])
def test_upper_quantile_matches_the_array_path(log_probability):
    # Only Newton's starting point, but the same start keeps the iterates (and σ) where scipy's ndtri put them.
    expected = float(_upper_quantile(np.array([log_probability]))[0])
    assert _gaussian_scalar.upper_quantile(log_probability) == pytest.approx(expected, rel=1e-14, abs=1e-14)


@examples(1.0)
@given(st.floats(24.8, 25.0, exclude_max=True), st.one_of(st.floats(1e-6, 0.1), st.floats(-12.0, -1.0).map(lambda e: 10.0**e)))
def test_scalar_short_interval_reaching_past_25_bounds_arb(x_a, h):
    # The short interval that straddles x = 25 takes the asymptotic slope past 25, node by node, on the
    # scalar path too (it deferred to the array path before); its E holds against arb from both sides.
    mu = h * math.sqrt(2.0)
    epsilon = mu * (0.5 * mu + x_a * math.sqrt(2.0))
    evaluated, error = _gaussian_scalar.log_delta_and_error(epsilon, mu)
    lower, upper = reference_log_delta(epsilon, mu)
    assert evaluated + error >= upper and evaluated - error <= lower, (epsilon, mu, evaluated, error, lower)
