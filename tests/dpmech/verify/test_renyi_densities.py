"""White-box zCDP and GDP checks of continuous laws: certified lower bounds from a finite partition."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from dpmech.gaussian import gaussian_delta
from dpmech.verify import DpViolation, RENYI_ORDERS, assert_gdp, assert_zcdp
from dpmech.verify.renyi import partition_hockey_stick_lower_bound, partition_renyi_lower_bound

from tests.profiles import examples


@examples(0.4)
@given(st.floats(0.5, 5.0), st.floats(1.25, 16.0))
def test_partition_renyi_is_a_lower_bound_close_to_the_gaussian_formula(sigma, order):
    # D_α(N(0, σ²) ‖ N(1, σ²)) = α/(2σ²) (Mironov 2017, Prop. 7). The tilted law sits α/σ <= 32 σ out, inside
    # the partition's quantiles (log-odds ±600); further out the bound stays a bound but loosens.
    exact = order / (2 * sigma**2)
    bound = partition_renyi_lower_bound(stats.norm(0.0, sigma), stats.norm(1.0, sigma), order)
    assert bound <= exact
    assert bound >= 0.99 * exact


@examples(0.4)
@given(st.floats(0.3, 5.0), st.floats(0.0, 4.0))
def test_partition_hockey_stick_is_a_lower_bound_close_to_the_gaussian_profile(sigma, epsilon):
    exact = gaussian_delta(epsilon, sigma, 1.0)
    bound = partition_hockey_stick_lower_bound(stats.norm(0.0, sigma), stats.norm(1.0, sigma), epsilon)
    assert bound <= exact
    assert bound >= 0.99 * exact  # cells at log-odds spacing 0.2 in the tails lose under 1 % of δ


def test_assert_zcdp_on_densities_refutes_ninety_percent_sigma_and_passes_the_correct_one():
    assert assert_zcdp(lambda centre: stats.norm(centre, 1.0), [(0.0, 1.0)], 0.5).largest <= 0.5
    with pytest.raises(DpViolation, match="0.5-zCDP: on pair .*D_[0-9.]+ >= "):
        assert_zcdp(lambda centre: stats.norm(centre, 0.9), [(0.0, 1.0)], 0.5)


def test_assert_gdp_on_densities():
    assert assert_gdp(lambda centre: stats.norm(centre, 1.0), [(0.0, 1.0)], 1.0).largest <= 0.0
    with pytest.raises(DpViolation, match="1-GDP"):
        assert_gdp(lambda centre: stats.norm(centre, 0.9), [(0.0, 1.0)], 1.0)


def test_laplace_partition_bound_below_its_renyi_curve():
    # Mironov 2017, Prop. 6, Laplace of scale 1 and shift 1 at α = 2: ε + log(1 + (e^{−3ε} − 1)/3), ε = 1.
    import math
    exact = 1.0 + math.log(1 + (math.exp(-3.0) - 1) / 3)
    bound = partition_renyi_lower_bound(stats.laplace(0.0, 1.0), stats.laplace(1.0, 1.0), 2.0)
    assert exact * 0.99 <= bound <= exact


def test_orders_are_public():
    assert RENYI_ORDERS[0] > 1.0


def test_partition_rejects_non_distributions():
    with pytest.raises(ValueError, match="frozen"):
        partition_renyi_lower_bound(lambda x: x, stats.norm(), 2.0)


@examples(0.6)
@given(st.floats(0.1, 5.0), st.floats(1.01, 64.0))
def test_partition_renyi_never_exceeds_the_gaussian_formula(sigma, order):
    exact = order / (2 * sigma**2)
    assert partition_renyi_lower_bound(stats.norm(0.0, sigma), stats.norm(1.0, sigma), order) <= exact
    assert partition_renyi_lower_bound(stats.norm(1.0, sigma), stats.norm(0.0, sigma), order) <= exact


@pytest.mark.slow
def test_log_density_callables_get_a_quadrature_estimate_labelled_as_such():
    # scipy's quadrature has no proven error bound: the result and the violation say "estimate", never "certified".
    passed = assert_zcdp(lambda centre: stats.norm(centre, 1.0).logpdf, [(0.0, 1.0)], 0.5)
    assert passed.basis == "quadrature estimate (not certified)" and not passed.certified
    assert passed.largest == pytest.approx(0.5, rel=1e-8)  # D_α = α/2 for unit Gaussians at distance 1 (Mironov 2017)
    assert "~ 0.5 (quadrature estimate (not certified))" in passed.statement()
    with pytest.raises(DpViolation, match=r"D_1.25 ~ 0.7716.* \(quadrature estimate \(not certified\)\)"):
        assert_zcdp(lambda centre: stats.norm(centre, 0.9).logpdf, [(0.0, 1.0)], 0.5)
    gdp = assert_gdp(lambda centre: stats.norm(centre, 1.0).logpdf, [(0.0, 1.0)], 1.0)
    assert not gdp.certified and abs(gdp.largest) < 1e-9
    with pytest.raises(DpViolation, match=r"1-GDP.*delta\(0\) ~ .*\(quadrature estimate \(not certified\)\)"):
        assert_gdp(lambda centre: stats.norm(centre, 0.9).logpdf, [(0.0, 1.0)], 1.0)


def test_scipy_laws_are_certified_lower_bounds_shown_rounded_down():
    checked = assert_zcdp(lambda centre: stats.norm(centre, 1.0), [(0.0, 1.0)], 0.5)
    assert checked.basis == "certified lower bound" and checked.certified and checked.largest <= 0.5
    shown = float(checked.statement().split(">= ")[1].split(" ")[0])
    assert shown <= checked.largest  # a lower bound printed never claims more than was shown
    with pytest.raises(DpViolation, match=r"D_[0-9.]+ >= [0-9.]+ > rho \* alpha = .* \(certified lower bound\)"):
        assert_zcdp(lambda centre: stats.norm(centre, 0.9), [(0.0, 1.0)], 0.5)


@pytest.mark.slow
def test_a_check_over_pairs_of_several_kinds_is_only_as_strong_as_its_weakest_value():
    # A mechanism giving a scipy law on one pair and a log-density on another: the whole result is an estimate.
    def mechanism(centre):
        return stats.norm(centre, 1.0) if centre < 2.0 else stats.norm(centre, 1.0).logpdf

    checked = assert_zcdp(mechanism, [(0.0, 1.0), (2.0, 3.0)], 0.5)
    assert checked.basis == "quadrature estimate (not certified)" and not checked.certified
