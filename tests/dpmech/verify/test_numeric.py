"""Numeric hockey-stick: the Gaussian by quadrature against dpmech.gaussian_delta, and a Laplace pair in closed form."""

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import dpmech
from dpmech.verify import density_hockey_stick, gaussian_hockey_stick

from tests.profiles import examples


def log_uniform(low, high):
    return st.floats(math.log10(low), math.log10(high)).map(lambda x: 10.0**x)


@pytest.mark.slow  # 4.3 s of CPU in CI's default run (stop 39): the README's rule moves tests of 4 s or more
@examples(0.3)  # two quadratures per example: ~0.1 s of CPU each
@given(log_uniform(1e-4, 100.0), log_uniform(1e-2, 100.0), log_uniform(1e-2, 100.0))
def test_gaussian_quadrature_matches_the_analytic_delta_to_1e_9(epsilon, sigma, sensitivity):
    analytic = dpmech.gaussian_delta(epsilon, sigma, sensitivity)
    assume(analytic > 1e-290)
    assert gaussian_hockey_stick(epsilon, sigma, sensitivity) == pytest.approx(analytic, rel=1e-9)


@examples(0.25)  # a calibration and two quadratures per example: ~0.2 s of CPU each
@given(log_uniform(1e-2, 10.0), log_uniform(1e-10, 1e-1), log_uniform(1e-2, 1e2))
@pytest.mark.slow  # 6.63 s of CPU in CI's default run (2026-11-27): 5 s or more goes to the slow set
def test_output_perturbation_sigma_meets_its_delta_by_quadrature(epsilon, delta, sensitivity):
    mechanism = dpmech.GaussianOutputMechanism(sensitivity, epsilon, delta)
    assert gaussian_hockey_stick(epsilon, mechanism.sigma, sensitivity) <= delta * (1 + 1e-9)
    # ... and is not over-noised: a σ 0.1% smaller breaks the target.
    assert gaussian_hockey_stick(epsilon, mechanism.sigma * 0.999, sensitivity) > delta


def laplace_log_density(centre, scale):
    return lambda x: -np.abs(np.asarray(x, dtype=float) - centre) / scale - math.log(2.0 * scale)


@examples(0.5)
@given(st.floats(0.0, 5.0), log_uniform(0.1, 10.0), log_uniform(0.1, 10.0))
def test_generic_densities_reproduce_the_laplace_profile(epsilon, scale, sensitivity):
    # Laplace(0, b) vs Laplace(Δ, b): δ(ε) = max(0, 1 − e^{(ε − Δ/b)/2}); loss = ε at x = (Δ − εb)/2, kinks at 0 and Δ.
    expected = max(0.0, -math.expm1((epsilon - sensitivity / scale) / 2.0))
    points = [0.0, sensitivity]
    if epsilon < sensitivity / scale:
        points.append((sensitivity - epsilon * scale) / 2.0)
    numeric = density_hockey_stick(
        laplace_log_density(0.0, scale), laplace_log_density(sensitivity, scale), epsilon, points, scale=scale
    )
    # abs: at ε = Δ/b the loss equals ε on a half-line up to rounding, which adds ~1e-16 (never subtracts).
    assert numeric >= expected * (1 - 1e-9) - 1e-15
    assert numeric == pytest.approx(expected, rel=1e-9, abs=1e-15)


BAD_INPUTS = [
    ("epsilon", lambda: gaussian_hockey_stick(-1.0, 1.0)),
    ("sigma", lambda: gaussian_hockey_stick(1.0, 0.0)),
    ("sensitivity", lambda: gaussian_hockey_stick(1.0, 1.0, -2.0)),
    ("points", lambda: density_hockey_stick(np.negative, np.negative, 1.0, [math.inf])),
    ("scale", lambda: density_hockey_stick(np.negative, np.negative, 1.0, [0.0], scale=0.0)),
    ("first_log_density", lambda: density_hockey_stick(1.0, np.negative, 1.0, [0.0])),
    ("privacy_loss", lambda: density_hockey_stick(np.negative, np.negative, 1.0, [0.0], privacy_loss=2.0)),
]


@pytest.mark.parametrize("parameter, call", BAD_INPUTS, ids=[f"{name}-{i}" for i, (name, _) in enumerate(BAD_INPUTS)])
def test_bad_input_raises_value_error_naming_the_parameter(parameter, call):
    with pytest.raises(ValueError, match=parameter):
        call()


def test_finds_its_own_crossing_points_issue_11():
    # Issue 11: with points=[] the old code probed only x = 0, where L = 0.5 < ε, and returned 0.0.
    from scipy import stats

    numeric = density_hockey_stick(stats.norm(0, 1).logpdf, stats.norm(1, 1).logpdf, 1.0, points=[])
    assert numeric == pytest.approx(dpmech.gaussian_delta(1.0, 1.0, 1.0), rel=1e-9)


@examples(0.5)
@given(st.floats(0.0, 3.0), log_uniform(0.1, 10.0), log_uniform(0.1, 10.0), st.floats(-1e4, 1e4))
def test_crossing_points_found_for_the_laplace_pair_anywhere_on_the_line(epsilon, scale, sensitivity, centre):
    # No points given: the boundary (Δ − εb)/2 and the kinks are the scan's to find, relative to ``centre``.
    expected = max(0.0, -math.expm1((epsilon - sensitivity / scale) / 2.0))
    numeric = density_hockey_stick(
        laplace_log_density(centre, scale), laplace_log_density(centre + sensitivity, scale), epsilon, centre=centre, scale=scale
    )
    assert numeric == pytest.approx(expected, rel=1e-7, abs=1e-12)


def test_two_crossings_of_a_variance_change_are_both_found():
    # N(0, 1) vs N(0, 2²): L = ε at two symmetric points; the divergence is the mass of the two outer tails ... minus e^ε q.
    from scipy import stats

    epsilon = 0.3
    first, second = stats.norm(0, 2), stats.norm(0, 1)
    # log p − log q = −log 2 + x²·3/8 > ε  ⇔  |x| > c.
    c = math.sqrt((epsilon + math.log(2.0)) * 8.0 / 3.0)
    expected = 2.0 * (first.sf(c) - math.exp(epsilon) * second.sf(c))
    assert density_hockey_stick(first.logpdf, second.logpdf, epsilon) == pytest.approx(expected, rel=1e-9)
