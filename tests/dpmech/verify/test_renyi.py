"""Rényi, zCDP and GDP checks against closed forms; a zCDP claim catches the σ bug its (ε, δ) conversion hides."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from dpmech.verify import DpViolation
from dpmech.verify.renyi import assert_gdp, assert_zcdp, density_renyi_divergence, renyi_divergence
from tests.profiles import examples


def binary_rr(epsilon):
    keep = math.exp(epsilon) / (1.0 + math.exp(epsilon))
    return lambda bit: np.array([keep, 1 - keep]) if bit == 0 else np.array([1 - keep, keep])


@given(st.floats(0.01, 5.0), st.floats(1.01, 50.0))
def test_binary_rr_renyi_divergence_matches_its_closed_form(epsilon, order):
    keep = math.exp(epsilon) / (1.0 + math.exp(epsilon))
    expected = math.log(keep**order * (1 - keep) ** (1 - order) + (1 - keep) ** order * keep ** (1 - order)) / (order - 1)
    assert renyi_divergence(binary_rr(epsilon)(0), binary_rr(epsilon)(1), order) == pytest.approx(expected, rel=1e-10)


def test_missing_support_is_infinite_divergence():
    assert renyi_divergence({"a": 1.0}, {"a": 0.5, "b": 0.5}, 2.0) < math.inf
    assert renyi_divergence({"a": 0.5, "b": 0.5}, {"a": 1.0}, 2.0) == math.inf


@given(st.floats(0.1, 10.0), st.floats(1.1, 20.0))
@examples(0.1)
def test_gaussian_renyi_divergence_by_quadrature_is_alpha_delta_squared_over_two_sigma_squared(sigma, order):
    numeric = density_renyi_divergence(stats.norm(0, sigma).logpdf, stats.norm(1, sigma).logpdf, order, scale=sigma)
    assert numeric == pytest.approx(order / (2 * sigma**2), rel=1e-8)


def test_zcdp_claim_catches_sigma_ten_percent_too_small_by_quadrature():
    # ρ = Δ²/(2σ²) for the correct σ; at 0.9σ, D_α = α/(2·0.81σ²) > ρα at every order.
    sigma = 2.0
    rho = 1 / (2 * sigma**2)
    small = 0.9 * sigma
    divergence = density_renyi_divergence(stats.norm(0, small).logpdf, stats.norm(1, small).logpdf, 2.0, scale=small)
    assert divergence > rho * 2.0 * 1.2
    correct = density_renyi_divergence(stats.norm(0, sigma).logpdf, stats.norm(1, sigma).logpdf, 2.0, scale=sigma)
    assert correct <= rho * 2.0 * (1 + 1e-8)


def test_rr_is_zcdp_at_half_epsilon_squared_and_not_below():
    # ε-DP implies ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4): binary RR meets it, and fails a quarter of it.
    epsilon = 1.0
    checked = assert_zcdp(binary_rr(epsilon), [(0, 1)], epsilon**2 / 2)
    assert checked.largest <= epsilon**2 / 2 and checked.basis == "exact" and checked.certified
    with pytest.raises(DpViolation, match="zCDP"):
        assert_zcdp(binary_rr(epsilon), [(0, 1)], epsilon**2 / 8)


def test_gdp_check_accepts_rr_within_a_larger_mu_and_rejects_a_smaller_mu():
    # RR at ε has δ(0) = tanh(ε/2); μ-GDP with δ_μ(0) = 2Φ(μ/2) − 1 >= that passes, a smaller μ fails.
    epsilon = 1.0
    mu = 2 * stats.norm.ppf((1 + math.tanh(epsilon / 2)) / 2) * 1.5
    assert assert_gdp(binary_rr(epsilon), [(0, 1)], mu).largest <= 0
    with pytest.raises(DpViolation, match="GDP"):
        assert_gdp(binary_rr(epsilon), [(0, 1)], mu / 3)


@pytest.mark.parametrize("call", [lambda: renyi_divergence([1.0], [1.0], 1.0), lambda: assert_zcdp(binary_rr(1.0), [(0, 1)], -1.0), lambda: assert_gdp(binary_rr(1.0), [(0, 1)], 0.0)])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError, match="order|rho|mu"):
        call()
