"""Grey-box noise-scale check: catches σ 10 % too small at 10⁵ samples; never refutes a calibrated mechanism."""

import math

import numpy as np
import pytest

import dpmech
from dpmech.verify.greybox import needed_scale, noise_scale_test

SIGMA = dpmech.calibrate_gaussian(1.0, 1e-5, 1.0)


def gaussian(sigma):
    return lambda centre, size, rng: centre + rng.normal(0.0, sigma, size=size)


@pytest.mark.parametrize("centre", [None, 3.0])
def test_gaussian_with_sigma_ten_percent_too_small_is_refuted(centre):
    # True δ(1) of 0.9σ is ~5e-5 against the claimed 1e-5: invisible to event tests below ~10⁷ samples.
    assert dpmech.gaussian_delta(1.0, 0.9 * SIGMA, 1.0) > 4e-5
    result = noise_scale_test(gaussian(0.9 * SIGMA), 3.0, "gaussian", 1.0, 1e-5, 1.0, num_samples=100_000, rng=0, centre=centre)
    assert result.rejected and result.scale_upper_bound < result.scale_needed


def test_calibrated_gaussian_is_never_refuted_over_seeds():
    # 40 seeds at α = 0.05 with σ exactly the calibrated one: each rejection has probability <= α; > 7 has p < 1%.
    rejections = sum(
        noise_scale_test(gaussian(SIGMA), 0.0, "gaussian", 1.0, 1e-5, 1.0, num_samples=2000, rng=seed).rejected for seed in range(40)
    )
    assert rejections <= 7


def test_laplace_with_the_wrong_scale_is_refuted_and_the_right_one_is_not():
    laplace = lambda b: lambda centre, size, rng: centre + rng.laplace(0.0, b, size=(size, 3))  # noqa: E731
    wrong = noise_scale_test(laplace(1.8), np.zeros(3), "laplace", 0.5, 0.0, 1.0, num_samples=20_000, rng=0, centre=0.0)
    right = noise_scale_test(laplace(2.0), np.zeros(3), "laplace", 0.5, 0.0, 1.0, num_samples=20_000, rng=0, centre=0.0)
    assert wrong.rejected and not right.rejected
    assert needed_scale("laplace", 0.5, 0.0, 1.0) == 2.0


def test_needed_laplace_scale_is_the_exact_threshold_of_the_profile():
    # δ(ε) = 1 − e^{(ε − Δ/b)/2} equals the claimed δ at the needed b.
    epsilon, delta, sensitivity = 0.7, 0.01, 2.0
    b = needed_scale("laplace", epsilon, delta, sensitivity)
    assert -math.expm1((epsilon - sensitivity / b) / 2.0) == pytest.approx(delta, rel=1e-12)


@pytest.mark.parametrize(
    "parameter, call",
    [
        ("family", lambda: noise_scale_test(gaussian(1.0), 0.0, "cauchy", 1.0, 1e-5, 1.0, num_samples=10, rng=0)),
        ("centre", lambda: noise_scale_test(gaussian(1.0), 0.0, "laplace", 1.0, 0.0, 1.0, num_samples=10, rng=0)),
        ("sensitivity", lambda: noise_scale_test(gaussian(1.0), 0.0, "gaussian", 1.0, 1e-5, 0.0, num_samples=10, rng=0)),
        ("num_samples", lambda: noise_scale_test(gaussian(1.0), 0.0, "gaussian", 1.0, 1e-5, 1.0, num_samples=1, rng=0)),
        ("epsilon", lambda: noise_scale_test(gaussian(1.0), 0.0, "laplace", 0.0, 0.0, 1.0, num_samples=10, rng=0, centre=0.0)),
    ],
)
def test_bad_input_raises_value_error_naming_the_parameter(parameter, call):
    with pytest.raises(ValueError, match=parameter):
        call()
