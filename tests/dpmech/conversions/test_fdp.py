"""f-DP trade-off curves and conversions: closed forms, 50-digit references, Neyman–Pearson enumeration, properties."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dpmech import gaussian_delta
from dpmech.conversions import fdp
from dpmech.conversions.privacy_loss import laplace_delta_for_epsilon
from tests.profiles import examples

ALPHAS = np.linspace(0.0, 1.0, 1001)


def _reference_gdp(alpha, mu):
    with mpmath.workdps(50):
        return mpmath.ncdf(-mpmath.sqrt(2) * mpmath.erfinv(2 * mpmath.mpf(alpha) - 1) - mu)


@pytest.mark.parametrize("alpha", [1e-300, 1e-12, 0.01, 0.3, 0.5, 0.9, 1 - 1e-9])
@pytest.mark.parametrize("mu", [0.1, 1.0, 3.0, 8.0])
def test_gdp_tradeoff_matches_50_digit_reference(alpha, mu):
    reference = float(_reference_gdp(alpha, mu))
    assert fdp.gdp_tradeoff(alpha, mu) == pytest.approx(reference, rel=1e-9, abs=1e-300)


def _neyman_pearson(p, q, alpha):
    """Exact T(P, Q)(α) of two distributions on a finite set, by the randomised likelihood-ratio test."""
    order = np.argsort(-(q / p))
    p, q = p[order], q[order]
    cumulative_p = np.concatenate([[0.0], np.cumsum(p)])
    cumulative_q = np.concatenate([[0.0], np.cumsum(q)])
    return 1.0 - np.interp(alpha, cumulative_p, cumulative_q)


@pytest.mark.parametrize("epsilon,k", [(0.5, 2), (1.0, 3), (2.0, 10), (0.0, 4), (5.0, 2)])
def test_randomized_response_tradeoff_equals_the_neyman_pearson_test(epsilon, k):
    keep, other = math.exp(epsilon) / (math.exp(epsilon) + k - 1), 1 / (math.exp(epsilon) + k - 1)
    p = np.full(k, other)
    p[0] = keep
    q = np.full(k, other)
    q[1] = keep
    np.testing.assert_allclose(fdp.randomized_response_tradeoff(ALPHAS, epsilon, k), _neyman_pearson(p, q, ALPHAS), atol=1e-12)
    if k == 2:
        np.testing.assert_allclose(fdp.randomized_response_tradeoff(ALPHAS, epsilon, k), fdp.approximate_dp_tradeoff(ALPHAS, epsilon, 0.0), atol=1e-12)


@pytest.mark.parametrize("mu", [0.1, 1.0, 2.5])
def test_laplace_tradeoff_equals_the_threshold_test_by_quadrature(mu):
    # Reject Lap(0,1) for x > t: α = P(X > t), β = Q(X <= t) with Q = Lap(μ, 1).
    thresholds = np.linspace(-20, 20, 4001)
    cdf = lambda x: np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0)), 1 - 0.5 * np.exp(-np.maximum(x, 0)))
    alpha, beta = 1 - cdf(thresholds), cdf(thresholds - mu)
    np.testing.assert_allclose(fdp.laplace_tradeoff(alpha, mu), beta, atol=1e-12)


def test_laplace_tradeoff_and_laplace_profile_agree_through_prop_2_12():
    mu = 1.3
    delta = fdp.profile_from_tradeoff(np.linspace(0, 1.3, 14), ALPHAS, fdp.laplace_tradeoff(ALPHAS, mu))
    exact = laplace_delta_for_epsilon(np.linspace(0, 1.3, 14), 1.0, mu)
    assert np.all(delta >= exact - 1e-12)
    np.testing.assert_allclose(delta, exact, atol=2e-3)


@given(mu=st.floats(0.05, 6.0), alpha=st.floats(0.0, 1.0))
def test_gdp_tradeoff_is_symmetric(mu, alpha):
    beta = fdp.gdp_tradeoff(alpha, mu)
    # f = f⁻¹ for G_μ: f(f(α)) = α.
    assert fdp.gdp_tradeoff(beta, mu) == pytest.approx(alpha, abs=1e-9)


@given(epsilon=st.floats(0.0, 5.0), delta=st.floats(0.0, 0.5), mu=st.floats(0.05, 5.0))
def test_tradeoff_curves_are_convex_non_increasing_and_below_one_minus_alpha(epsilon, delta, mu):
    for curve in (
        fdp.gdp_tradeoff(ALPHAS, mu),
        fdp.approximate_dp_tradeoff(ALPHAS, epsilon, delta),
        fdp.laplace_tradeoff(ALPHAS, mu),
        fdp.randomized_response_tradeoff(ALPHAS, epsilon, 5),
    ):
        assert np.all(np.diff(curve) <= 1e-12)
        assert np.all(np.diff(curve, 2) >= -1e-9)
        assert np.all(curve <= 1 - ALPHAS + 1e-12)
        assert np.all(curve >= 0)


@given(mu=st.floats(0.2, 4.0))
@examples(0.3)
def test_tradeoff_from_gaussian_profile_never_exceeds_gdp_and_approaches_it(mu):
    epsilons = np.linspace(0, 4 * mu + 4, 400)
    f = fdp.tradeoff_from_profile(ALPHAS, epsilons, gaussian_delta(epsilons, 1.0, mu))
    exact = fdp.gdp_tradeoff(ALPHAS, mu)
    assert np.all(f <= exact + 1e-12)
    assert np.max(exact - f) < 0.01
    assert np.all(np.diff(f, 2) >= -1e-9)  # convex


@given(mu=st.floats(0.2, 4.0), epsilon=st.floats(-1.0, 8.0))
@examples(0.3)
def test_round_trip_profile_tradeoff_profile_never_decreases_delta(mu, epsilon):
    epsilons = np.linspace(0, 4 * mu + 4, 200)
    grid = np.concatenate([[0.0], np.geomspace(1e-12, 0.5, 300), 1 - np.geomspace(0.5, 1e-12, 300)[1:], [1.0]])
    f = fdp.tradeoff_from_profile(grid, epsilons, gaussian_delta(epsilons, 1.0, mu))
    delta = fdp.profile_from_tradeoff(epsilon, grid, f)
    exact = gaussian_delta(max(epsilon, 0.0), 1.0, mu) if epsilon >= 0 else None
    if exact is not None:
        assert delta >= exact * (1 - 1e-9)
    assert delta >= -math.expm1(min(epsilon, 0.0)) - 1e-12


@given(mu=st.floats(0.2, 5.0), epsilon=st.floats(0.0, 10.0))
def test_profile_from_gdp_tradeoff_bounds_the_exact_gaussian_delta_from_above(mu, epsilon):
    grid = np.concatenate([[0.0], np.geomspace(1e-15, 0.5, 400), 1 - np.geomspace(0.5, 1e-15, 400)[1:], [1.0]])
    delta = fdp.profile_from_tradeoff(epsilon, grid, fdp.gdp_tradeoff(grid, mu))
    exact = fdp.gdp_delta(epsilon, mu)
    assert delta >= exact * (1 - 1e-9) - 1e-16
    assert delta <= exact + 1e-3


@pytest.mark.parametrize("epsilon,delta", [(1.0, 1e-5), (0.1, 1e-10), (8.0, 1e-6), (3.0, 0.3)])
def test_gdp_mu_is_the_largest_mu_meeting_the_target(epsilon, delta):
    mu = fdp.gdp_mu(epsilon, delta)
    with mpmath.workdps(50):
        from dpmech import high_precision

        assert high_precision.delta(epsilon, mu) <= delta
        assert high_precision.delta(epsilon, mu * (1 + 1e-9)) > delta
    assert fdp.gdp_epsilon(delta, mu) == pytest.approx(epsilon, rel=1e-8)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: fdp.gdp_tradeoff(1.5, 1.0), "alpha"),
        (lambda: fdp.gdp_tradeoff(0.5, -1.0), "mu"),
        (lambda: fdp.approximate_dp_tradeoff(0.5, 1.0, 1.5), "delta"),
        (lambda: fdp.randomized_response_tradeoff(0.5, 1.0, 1), "num_buckets"),
        (lambda: fdp.tradeoff_from_profile(0.5, [1.0, 2.0], [0.1]), "epsilons and deltas"),
        (lambda: fdp.profile_from_tradeoff(1.0, [0.0, 0.5, 0.9], [1.0, 0.3, 0.0]), "alpha_grid"),
        (lambda: fdp.gdp_mu(0.0, 1e-5), "epsilon"),
        (lambda: fdp.gdp_delta(True, 1.0), "epsilon"),
    ],
)
def test_bad_input_raises_value_error_naming_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@given(mu=st.floats(0.2, 4.0), alpha=st.floats(0.0, 1.0))
@examples(0.3)
def test_tradeoff_from_a_symmetric_profile_is_symmetric(mu, alpha):
    epsilons = np.linspace(0, 4 * mu + 4, 300)
    deltas = gaussian_delta(epsilons, 1.0, mu)
    beta = fdp.tradeoff_from_profile(alpha, epsilons, deltas)
    # f = f⁻¹: the point (β, α) lies on the curve too (where the curve is not flat at 0).
    if beta > 0:
        assert fdp.tradeoff_from_profile(beta, epsilons, deltas) == pytest.approx(alpha, abs=1e-9)


def test_profile_from_tradeoff_refuses_a_curve_that_is_not_convex_or_increases():
    grid = np.linspace(0, 1, 5)
    with pytest.raises(ValueError, match="convex"):
        fdp.profile_from_tradeoff(1.0, grid, [1.0, 0.5, 0.45, 0.1, 0.0])  # concave kink at 0.5
    with pytest.raises(ValueError, match="convex"):
        fdp.profile_from_tradeoff(1.0, grid, [0.9, 1.0, 0.5, 0.2, 0.0])


def test_gdp_tradeoff_matches_the_r_package_fdp():
    """fdp reference/gdp.md: gdp(1.0)() on α = 0, 0.01, ..., 1 (101 values, 10 decimals)."""
    from tests.dpmech.conversions import fdp_r_package_known_answers as r

    alphas = np.round(np.arange(101) * 0.01, 2)
    np.testing.assert_allclose(fdp.gdp_tradeoff(alphas, 1.0), r.GDP_1_BETA, rtol=0, atol=5.01e-11)


def test_laplace_tradeoff_matches_the_r_package_fdp():
    """fdp reference/lap.md: lap(1.0)() on its grid (35 values, 7 decimals)."""
    from tests.dpmech.conversions import fdp_r_package_known_answers as r

    alphas, betas = np.array(r.LAPLACE_1).T
    alphas[1] = 0.5 * math.exp(-1.0)  # printed rounded; the grid point is e^{−μ}/2
    np.testing.assert_allclose(fdp.laplace_tradeoff(alphas, 1.0), betas, rtol=0, atol=5.01e-8)


def test_approximate_dp_tradeoff_and_gdp_delta_match_the_r_package_fdp():
    """fdp reference/epsdelta.md and gdp_to_epsdelta.md."""
    from tests.dpmech.conversions import fdp_r_package_known_answers as r

    alphas, betas = np.array(r.EPSDELTA_1_001).T
    np.testing.assert_allclose(fdp.approximate_dp_tradeoff(alphas, 1.0, 0.01), betas, rtol=0, atol=5.01e-8)
    corner = 1 / (1 + math.e)  # the skeleton's kink, printed as 0.2689414
    assert corner == pytest.approx(r.EPSDELTA_1_SKELETON[1][0], abs=5e-8)
    assert fdp.approximate_dp_tradeoff(corner, 1.0, 0.0) == pytest.approx(r.EPSDELTA_1_SKELETON[1][1], abs=5e-8)
    # gdp_delta is dpmech's proven upper bound: at most its evaluation margin (~1e-11 relative) above the value.
    assert r.GDP_TO_EPSDELTA_MU_1_EPSILON_1 <= fdp.gdp_delta(1.0, 1.0) <= r.GDP_TO_EPSDELTA_MU_1_EPSILON_1 * (1 + 1e-10)
    from dpmech.directed_rounding import format_up

    assert format_up(fdp.gdp_delta(1.0, 1.0), 6) == str(r.GDP_TO_EPSDELTA_MU_1_EPSILON_1_ROUNDED_UP_6)


@given(sigma=st.floats(0.1, 50.0), sensitivity=st.floats(0.1, 5.0), k=st.integers(1, 1000), epsilon=st.floats(0.0, 10.0))
@example(sigma=45.0, sensitivity=0.5625, k=375, epsilon=8.0)
def test_gaussian_gdp_mu_gives_the_exact_gaussian_profile(sigma, sensitivity, k, epsilon):
    mu = fdp.gaussian_gdp_mu(sigma, sensitivity, k)
    # Both are upper bounds carrying the Gaussian core's proven error margin, which grows like 16u·a² in
    # log δ (a = μ/2 − ε/μ): at δ ≈ 3e-240 (a ≈ 33) the two differ by a relative 1e-12.
    assert fdp.gdp_delta(epsilon, mu) == pytest.approx(gaussian_delta(epsilon, sigma, sensitivity, k), rel=1e-10, abs=1e-300)
