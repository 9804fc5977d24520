"""Gaussian output perturbation and feature clipping."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

import dpmech
from dpmech.output_perturbation import rounded_grid_sensitivity


@given(st.floats(0.05, 20.0), st.floats(1e-12, 0.5), st.floats(1e-3, 1e3), st.sampled_from(["analytic", "classic"]))
def test_sigma_is_calibrate_gaussian_and_the_event_carries_it(epsilon, delta, sensitivity, method):
    if method == "classic" and epsilon >= 1.0:
        with pytest.raises(ValueError, match="epsilon"):
            dpmech.GaussianOutputMechanism(sensitivity, epsilon, delta, method)
        return
    mechanism = dpmech.GaussianOutputMechanism(sensitivity, epsilon, delta, method)
    assert mechanism.sigma == dpmech.calibrate_gaussian(epsilon, delta, sensitivity, method=method)
    assert mechanism.event == dpmech.GaussianEvent(mechanism.sigma, sensitivity)
    assert dpmech.gaussian_delta(epsilon, mechanism.sigma, sensitivity) <= delta


def test_release_adds_noise_of_the_calibrated_variance_to_any_shape():
    # N = 3 * 40 * 50 = 6,000 noise coordinates; variance against σ² by the chi-square
    # interval at α = 1e-4, mean by a z-test at α = 1e-4; fixed seed.
    mechanism = dpmech.GaussianOutputMechanism(0.02, 1.0, 1e-5, neighbouring=dpmech.REPLACE_ONE)
    params = np.arange(6000.0).reshape(3, 40, 50)
    released = mechanism.release(params, rng=20260102)
    assert released.shape == params.shape
    noise = (released - params).ravel()
    statistic = np.sum(noise**2) / mechanism.sigma**2
    assert stats.chi2.ppf(5e-5, noise.size) < statistic < stats.chi2.ppf(1 - 5e-5, noise.size)
    assert abs(noise.mean()) / (mechanism.sigma / math.sqrt(noise.size)) < stats.norm.ppf(1 - 5e-5)
    assert np.ndim(mechanism.release(3.0, 0)) == 0
    np.testing.assert_array_equal(mechanism.release(params, 4), mechanism.release(params, np.random.default_rng(4)))
    assert mechanism.event.neighbouring == dpmech.REPLACE_ONE


@given(st.integers(1, 20), st.integers(1, 5), st.floats(1e-3, 1e3), st.integers(0, 2**32 - 1))
def test_clip_features_bounds_every_row_and_keeps_rows_inside(n, dimension, bound, seed):
    rng = np.random.default_rng(seed)
    features = rng.normal(scale=bound * rng.uniform(0.1, 3.0), size=(n, dimension))
    clipped = dpmech.clip_features(features, bound)
    norms = np.linalg.norm(features, axis=1)
    assert np.all(np.linalg.norm(clipped, axis=1) <= bound * (1 + 1e-15))
    np.testing.assert_array_equal(clipped[norms <= bound], features[norms <= bound])
    outside = norms > bound
    np.testing.assert_allclose(clipped[outside] * (norms[outside] / bound)[:, None], features[outside], rtol=1e-13)


def test_clipping_each_record_keeps_neighbours_neighbours_unlike_max_norm_normalisation():
    features = np.array([[0.5, 0.0], [0.0, 0.8], [3.0, 4.0]])
    neighbour = features.copy()
    neighbour[2] = [0.3, 0.4]
    changed = lambda a, b: int(np.sum(np.any(a != b, axis=1)))
    assert changed(dpmech.clip_features(features, 1.0), dpmech.clip_features(neighbour, 1.0)) == 1
    normalise = lambda x: x / np.linalg.norm(x, axis=1).max()  # FedAUXfdp eq. 4
    assert changed(normalise(features), normalise(neighbour)) == 3


BAD_INPUTS = [
    ("sensitivity", lambda: dpmech.GaussianOutputMechanism(0.0, 1.0, 1e-5)),
    ("epsilon", lambda: dpmech.GaussianOutputMechanism(1.0, -1.0, 1e-5)),
    ("delta", lambda: dpmech.GaussianOutputMechanism(1.0, 1.0, 1.0)),
    ("method", lambda: dpmech.GaussianOutputMechanism(1.0, 1.0, 1e-5, method="exact")),
    ("neighbouring", lambda: dpmech.GaussianOutputMechanism(1.0, 1.0, 1e-5, neighbouring="swap")),
    ("params", lambda: dpmech.GaussianOutputMechanism(1.0, 1.0, 1e-5).release([1.0, np.nan], 0)),
    ("rng", lambda: dpmech.GaussianOutputMechanism(1.0, 1.0, 1e-5).release([1.0], None)),
    ("bound", lambda: dpmech.clip_features(np.ones((2, 2)), 0.0)),
    ("features", lambda: dpmech.clip_features(np.ones(3), 1.0)),
    ("features", lambda: dpmech.clip_features([[np.inf, 0.0]], 1.0)),
]


@pytest.mark.parametrize("parameter, call", BAD_INPUTS, ids=[f"{name}-{i}" for i, (name, _) in enumerate(BAD_INPUTS)])
def test_bad_input_raises_value_error_naming_the_parameter(parameter, call):
    with pytest.raises(ValueError, match=parameter):
        call()


def test_clipped_rows_never_exceed_the_bound_in_floating_point():
    # bound/‖x‖ rounds: without care about a quarter of rows land 1-2 ulps above the bound.
    rng = np.random.default_rng(0)
    features = rng.normal(size=(100_000, 5)) * rng.uniform(1, 100, (100_000, 1))
    original = np.linalg.norm(features, axis=1)
    for bound in (1.0, 0.3, 34.854):
        norms = np.linalg.norm(dpmech.clip_features(features, bound), axis=1)
        assert np.all(norms <= bound)
        assert np.all(norms[original > bound] > bound * (1 - 1e-14))


# --- sampler="discrete": grid release with exact discrete Gaussian noise --------------------------------


@given(
    st.integers(1, 6),
    st.floats(1e-3, 10.0),
    st.sampled_from([2.0**-8, 2.0**-3, 0.37, 1.0]),
    st.integers(0, 2**32),
)
def test_rounding_to_the_grid_never_exceeds_the_stated_grid_sensitivity(dimension, sensitivity, granularity, seed):
    # ‖round(x/γ) − round(x'/γ)‖₂ <= Δ/γ + √d (and ⌊Δ/γ⌋ + 1 in one dimension) for ‖x − x'‖₂ <= Δ.
    grid_sensitivity = rounded_grid_sensitivity(sensitivity, granularity, dimension)
    rng = np.random.default_rng(seed)
    x = rng.uniform(-50, 50, size=(2000, dimension))
    direction = rng.normal(size=(2000, dimension))
    direction *= (sensitivity * rng.uniform(0.0, 1.0, size=(2000, 1))) / np.linalg.norm(direction, axis=1, keepdims=True)
    neighbour = x + direction
    assert np.all(np.linalg.norm(neighbour - x, axis=1) <= sensitivity * (1 + 1e-12))
    moved = np.linalg.norm(np.rint(x / granularity) - np.rint(neighbour / granularity), axis=1)
    assert np.all(moved <= grid_sensitivity)


def test_discrete_release_lies_on_the_grid_and_its_noise_has_the_calibrated_scale():
    granularity = 2.0**-6
    mechanism = dpmech.GaussianOutputMechanism(0.5, 1.0, 1e-5, sampler="discrete", granularity=granularity, dimension=20_000)
    params = np.linspace(-3, 3, 20_000).reshape(100, 200)
    released, randomness = mechanism.release_with_randomness(params, rng=20260301)
    assert released.shape == params.shape and "numpy-generator" in randomness
    grid = released / granularity
    np.testing.assert_array_equal(grid, np.rint(grid))
    noise = grid - np.rint(params / granularity)
    sigma_squared = float(mechanism.sigma_squared_grid)
    # The variance of N_Z(0, σ²) is within 1e-6 of σ² once σ >= 2 (CKS 2020, Prop. 19); chi-square band at α = 1e-4.
    statistic = np.sum(noise**2) / sigma_squared
    assert stats.chi2.ppf(5e-5, noise.size) < statistic < stats.chi2.ppf(1 - 5e-5, noise.size)
    np.testing.assert_array_equal(mechanism.release(params, 3), mechanism.release(params, np.random.default_rng(3)))


def test_discrete_event_meets_the_target_and_names_sampler_grid_and_randomness():
    mechanism = dpmech.GaussianOutputMechanism(1.0, 0.8, 1e-6, sampler="discrete", granularity=0.01, dimension=1,
                                               neighbouring=dpmech.REPLACE_ONE)
    _, randomness = mechanism.release_with_randomness([0.3], "os")
    event = mechanism.event_with_randomness(randomness)
    assert isinstance(event, dpmech.ApproximateDpEvent)
    assert event.epsilon == 0.8 and 0 < event.delta <= 1e-6 and event.neighbouring == dpmech.REPLACE_ONE
    assert "os-csprng" in event.description and "discrete Gaussian" in event.description
    # In one dimension the discrete noise costs about as much as the continuous one.
    assert mechanism.sigma <= dpmech.calibrate_gaussian(0.8, 1e-6, 1.0) * 1.02


DISCRETE_BAD = [
    ("sampler", lambda: dpmech.GaussianOutputMechanism(1.0, 1.0, 1e-5, sampler="float")),
    ("granularity", lambda: dpmech.GaussianOutputMechanism(1.0, 1.0, 1e-5, sampler="discrete", dimension=3)),
    ("granularity", lambda: dpmech.GaussianOutputMechanism(1.0, 1.0, 1e-5, granularity=0.1)),
    ("granularity", lambda: dpmech.GaussianOutputMechanism(1.0, 1.0, 1e-5, sampler="discrete", granularity=-1.0, dimension=3)),
    ("dimension", lambda: dpmech.GaussianOutputMechanism(1.0, 1.0, 1e-5, sampler="discrete", granularity=0.1, dimension=0)),
    ("params", lambda: dpmech.GaussianOutputMechanism(1.0, 1.0, 1e-5, sampler="discrete", granularity=0.1, dimension=3)
     .release(np.zeros(4), 0)),
    ("rng", lambda: dpmech.GaussianOutputMechanism(1.0, 1.0, 1e-5, sampler="discrete", granularity=0.1, dimension=3)
     .release(np.zeros(3), None)),
]


@pytest.mark.parametrize("parameter, call", DISCRETE_BAD, ids=[f"{name}-{i}" for i, (name, _) in enumerate(DISCRETE_BAD)])
def test_discrete_bad_input_names_the_parameter(parameter, call):
    with pytest.raises(ValueError, match=parameter):
        call()
