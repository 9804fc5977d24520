"""Extreme but valid inputs: limits are right and nothing returns NaN (found by fuzzing every public function)."""

import math

import numpy as np
import pytest

from dpmech.conversions import fdp, renyi
from dpmech.conversions import privacy_loss as pl


SMALLEST_POSITIVE = 5e-324


@pytest.mark.parametrize(
    "delta_function,arguments,bounded_loss",
    [
        (pl.gaussian_delta_for_epsilon, (1.0, 1.0, 0.3), False),
        (pl.laplace_delta_for_epsilon, (1.0, 1.0, 0.3), True),
        (pl.discrete_laplace_delta_for_epsilon, (1.0, 1, 0.3), True),
        (pl.mixture_gaussian_delta_for_epsilon, (1.0, [0.0, 1.0], [0.5, 0.5]), False),
    ],
)
@pytest.mark.parametrize("adjacency", ["add", "remove"])
def test_delta_is_zero_at_infinite_epsilon_and_one_at_minus_infinity(delta_function, arguments, bounded_loss, adjacency):
    result = delta_function(np.array([-math.inf, -800.0, 800.0, math.inf]), *arguments, adjacency=adjacency)
    # At ε = 800 a Gaussian's remove-direction δ is positive (its loss is unbounded) but far below every double:
    # it is the smallest positive double, never 0. A bounded loss (Laplace), or the add direction with q < 1
    # (loss at most −log(1 − q)), has δ(800) = 0 exactly.
    at_800 = SMALLEST_POSITIVE if not bounded_loss and adjacency == "remove" else 0.0
    np.testing.assert_array_equal(result, [1.0, 1.0, at_800, 0.0])


@pytest.mark.parametrize("epsilon", [800.0, 1e6])
def test_an_unbounded_loss_gives_a_positive_delta_at_every_finite_epsilon(epsilon):
    # Far below the smallest double (and below the resolution of log A − log B at ε = 1e6): 5e-324, never 0.
    assert pl.gaussian_delta_for_epsilon(epsilon, 1.0, 1.0, 1.0, "add") == SMALLEST_POSITIVE
    assert pl.gaussian_delta_for_epsilon(epsilon, 1.0, 1.0, 0.5, "add") == 0.0  # loss <= −log(1 − q): exactly 0
    assert pl.mixture_gaussian_delta_for_epsilon(epsilon, 1.0, [0.0, 1.0], [0.5, 0.5], "remove") == SMALLEST_POSITIVE
    assert pl.mixture_gaussian_delta_for_epsilon(epsilon, 1.0, [0.0, 1.0], [0.5, 0.5], "add") == 0.0  # loss <= log 2
    assert pl.mixture_gaussian_delta_for_epsilon(epsilon, 1.0, [1.0, 2.0], [0.5, 0.5], "add") == SMALLEST_POSITIVE


@pytest.mark.parametrize("q", [1.0, 0.3])
@pytest.mark.parametrize("adjacency", ["add", "remove"])
def test_truncated_discrete_gaussian_delta_at_infinite_epsilon_is_the_mass_of_infinite_loss(q, adjacency):
    sigma, sensitivity, bound = 0.8, 2, 3
    support = np.arange(-bound, bound + 1)
    mass = np.exp(-0.5 * support**2 / sigma**2)
    mass /= mass.sum()
    # Outputs that only the upper distribution can produce: the ends of the shifted support.
    if adjacency == "remove":  # upper = (1 − q)μ + qμ(· + Δ): x in [−T − Δ, −T) has lower mass 0
        expected = q * mass[:sensitivity].sum()
    else:  # upper = μ, lower = (1 − q)μ + qμ(· − Δ): infinite loss only when q = 1, at x in [−T, −T + Δ)
        expected = mass[:sensitivity].sum() if q == 1.0 else 0.0
    result = pl.discrete_gaussian_delta_for_epsilon(np.array([800.0, math.inf]), sigma, sensitivity, q, adjacency, bound)
    np.testing.assert_allclose(result, expected, rtol=1e-12, atol=0)
    assert pl.discrete_gaussian_delta_for_epsilon(-math.inf, sigma, sensitivity, q, adjacency, bound) == 1.0


@pytest.mark.parametrize("epsilon", [800.0, 1e6, -800.0])
def test_gaussian_replace_stays_finite_where_e_to_the_epsilon_overflows(epsilon):
    for q in (1.0, 0.5):
        result = pl.gaussian_delta_for_epsilon(epsilon, 1.0, 1.0, q, "replace")
        # the Gaussian's loss is unbounded: δ(ε) > 0 at every finite ε, here below every double
        assert result == (1.0 if epsilon < 0 else SMALLEST_POSITIVE)


def test_mixture_loss_at_infinite_x_is_its_limit():
    assert pl.mixture_gaussian_privacy_loss(math.inf, 1.0, [0.0, 1.0], [0.25, 0.75], "remove") == pytest.approx(math.log(0.25))
    assert pl.mixture_gaussian_privacy_loss(-math.inf, 1.0, [0.0, 1.0], [0.25, 0.75], "add") == pytest.approx(-math.log(0.25))


@pytest.mark.parametrize("mu", [800.0, 1e6, 1e300])
def test_laplace_tradeoff_is_one_at_alpha_zero_for_every_mu(mu):
    assert fdp.laplace_tradeoff(0.0, mu) == 1.0


@pytest.mark.parametrize("order", [1.0, 1.0 + 1e-15, 2.0, 1e300, math.inf])
@pytest.mark.parametrize("epsilon", [1e-12, 800.0, 1e300])
def test_pure_dp_rdp_is_finite_and_at_most_epsilon_for_huge_epsilon(order, epsilon):
    value = renyi.pure_dp_rdp(order, epsilon)
    assert 0.0 <= value <= epsilon * (1 + 1e-12)


def test_order_infinity_gives_pure_dp_in_the_conversions():
    epsilon, order = renyi.rdp_epsilon(1e-9, [2.0, math.inf], [5.0, 0.5])
    assert order == math.inf and epsilon == pytest.approx(0.5)
    assert renyi.rdp_delta(0.5, [2.0, math.inf], [5.0, 0.5])[0] == 0.0


def test_gaussian_rdp_refuses_infinite_orders_and_overflow():
    with pytest.raises(ValueError, match="orders must be finite"):
        renyi.gaussian_rdp(math.inf, 1.0)
    with pytest.raises(ValueError, match="overflows"):
        renyi.gaussian_rdp(2.0, 1e-300)
