"""Numeric hockey-stick: the Gaussian by quadrature against dpmech.gaussian_delta, and a Laplace pair in closed form."""

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import dpmech
from dpmech.verify import density_hockey_stick, gaussian_hockey_stick


def log_uniform(low, high):
    return st.floats(math.log10(low), math.log10(high)).map(lambda x: 10.0**x)


@given(log_uniform(1e-4, 100.0), log_uniform(1e-2, 100.0), log_uniform(1e-2, 100.0))
def test_gaussian_quadrature_matches_the_analytic_delta_to_1e_9(epsilon, sigma, sensitivity):
    analytic = dpmech.gaussian_delta(epsilon, sigma, sensitivity)
    assume(analytic > 1e-290)
    assert gaussian_hockey_stick(epsilon, sigma, sensitivity) == pytest.approx(analytic, rel=1e-9)


@given(log_uniform(1e-2, 10.0), log_uniform(1e-10, 1e-1), log_uniform(1e-2, 1e2))
def test_output_perturbation_sigma_meets_its_delta_by_quadrature(epsilon, delta, sensitivity):
    mechanism = dpmech.GaussianOutputMechanism(sensitivity, epsilon, delta)
    assert gaussian_hockey_stick(epsilon, mechanism.sigma, sensitivity) <= delta * (1 + 1e-9)
    # ... and is not over-noised: a σ 0.1% smaller breaks the target.
    assert gaussian_hockey_stick(epsilon, mechanism.sigma * 0.999, sensitivity) > delta


def laplace_log_density(centre, scale):
    return lambda x: -np.abs(np.asarray(x, dtype=float) - centre) / scale - math.log(2.0 * scale)


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
    assert numeric == pytest.approx(expected, rel=1e-9, abs=1e-300)


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
