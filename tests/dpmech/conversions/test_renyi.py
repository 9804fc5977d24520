"""Rényi DP and zCDP curves and conversions: dp_accounting's known answers, mpmath, exact Gaussian ε, properties."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpmech import gaussian_epsilon, high_precision
from dpmech.conversions import renyi
from tests.profiles import examples

RR_ORDERS = [1.5, 2.5, 5, 50, 100, np.inf]
# dp_accounting 0.6.0, rdp/rdp_privacy_accountant_test.py, named parameters copied verbatim.
REPLACE_SPECIAL = [  # test_compute_rdp_randomized_response_replace_special
    ("small_eps", 0.3, 10, [1.5030552584146897, 1.7801182478869704, 1.9091969256833639, 1.9814516798923105, 1.9846954517418232, 1.9878743481543455]),
    ("medium_eps", 0.05, 20, [2.8985312222056674, 2.9615414620514047, 2.982908949957726, 2.994685471627712, 2.9952141594692665, 2.995732273553991]),
    ("large_eps", 0.01, 3, [3.851345343526459, 4.334924907685137, 4.503803908976894, 4.596895387863428, 4.601074578835478, 4.605170185988092]),
]
REPLACE_ONE = [  # test_compute_rdp_randomized_response_replace_one
    ("small_eps", 0.3, 10, [2.6946320226546314, 2.983865364028855, 3.11316970070507, 3.1854244842182466, 3.1886682560677593, 3.1918471524802814]),
    ("medium_eps", 0.05, 20, [5.850317703374384, 5.910360162307462, 5.930633082131939, 5.94180620835157, 5.942307807732949, 5.942799375126701]),
    ("large_eps", 0.01, 3, [5.684126770932727, 5.692634596034571, 5.695421239467805, 5.696956976543137, 5.697025920968522, 5.697093486505405]),
]


@pytest.mark.parametrize("relation,table", [("replace_special", REPLACE_SPECIAL), ("replace_one", REPLACE_ONE)])
def test_randomized_response_rdp_matches_dp_accounting_known_answers(relation, table):
    for _, p, k, expected in table:
        np.testing.assert_allclose(renyi.randomized_response_rdp(RR_ORDERS, p, k, relation), expected, rtol=1e-12)


def test_randomized_response_rdp_known_answers_at_order_infinity_and_boundaries():
    # test_compute_rdp_randomized_response_inf_order and test_compute_rdp_randomized_response_boundary
    assert renyi.randomized_response_rdp(np.inf, 0.1, 10, "replace_special") == pytest.approx(2.302585092994046, abs=1e-12)
    assert renyi.randomized_response_rdp(np.inf, 0.1, 10, "replace_one") == pytest.approx(4.51085950651685, abs=1e-12)
    for relation in ("replace_one", "replace_special"):
        np.testing.assert_array_equal(renyi.randomized_response_rdp([1.1, 1.2], 1.0, 2, relation), [0.0, 0.0])
        np.testing.assert_array_equal(renyi.randomized_response_rdp([1.1, 1.2], 0.1, 1, relation), [0.0, 0.0])


def test_rdp_epsilon_and_delta_match_dp_accounting_pure_dp_known_answer():
    # test_compute_epsilon_delta_pure_dp
    epsilon, order = renyi.rdp_epsilon(1e-5, np.arange(2, 33), [1.1] * 31)
    assert epsilon == pytest.approx(1.32783806176, abs=1e-10) and order == 32
    delta, order = renyi.rdp_delta(1.32783806176, np.arange(2, 33), [1.1] * 31)
    assert delta == pytest.approx(1e-5, rel=1e-7) and order == 32


def test_rdp_epsilon_and_delta_match_dp_accounting_gaussian_known_answer():
    # test_compute_epsilon_delta_gaussian: σ = 4.530877117 is (1, 1e-6)-DP through RDP.
    orders = 0.001 * np.arange(1000, 100000)
    rdp = renyi.gaussian_rdp(orders, 4.530877117)
    assert renyi.rdp_epsilon(1e-6, orders, rdp)[0] == pytest.approx(1.0, abs=1e-7)
    assert renyi.rdp_delta(1.0, orders, rdp)[0] == pytest.approx(1e-6, abs=1e-7)


@pytest.mark.parametrize("epsilon", [0.01, 1.0, 100.0])
def test_laplace_rdp_known_answer_properties(epsilon):
    # test_laplace: r(∞) = ε (pure DP), KL <= min(ε, ε²/2), and continuity of the formulas at α = 1 and 1.1.
    orders = np.array([1.0, 1 + 1e-6, 1.1 - 1e-6, 1.1 + 1e-6, 1e10])
    rdp = renyi.laplace_rdp(orders, 1 / epsilon)
    assert rdp[0] <= min(epsilon, epsilon**2 / 2)
    assert rdp[0] == pytest.approx(rdp[1], abs=1e-3)
    assert rdp[2] == pytest.approx(rdp[3], abs=1e-3)
    assert renyi.rdp_epsilon(1e-10, orders, rdp)[0] == pytest.approx(epsilon, rel=1e-6)


@pytest.mark.parametrize("order", [1.0 + 1e-9, 1.001, 1.5, 2.0, 10.0, 300.0])
@pytest.mark.parametrize("epsilon", [1e-3, 0.5, 3.0])
def test_pure_dp_curve_is_binary_randomized_response_to_50_digits(order, epsilon):
    with mpmath.workdps(50):
        e = mpmath.mpf(epsilon)
        keep = mpmath.exp(e) / (1 + mpmath.exp(e))
        reference = high_precision.renyi_divergence(order, [keep, 1 - keep], [1 - keep, keep])
    assert renyi.pure_dp_rdp(order, epsilon) == pytest.approx(float(reference), rel=1e-9)


@pytest.mark.parametrize("order", [1.0 + 1e-9, 1.01, 2.0, 20.0])
@pytest.mark.parametrize("epsilon", [0.01, 1.0, 5.0])
def test_laplace_rdp_matches_mironov_prop_6_to_50_digits(order, epsilon):
    with mpmath.workdps(50):
        a, e = mpmath.mpf(order), mpmath.mpf(epsilon)
        reference = mpmath.log(a / (2 * a - 1) * mpmath.exp((a - 1) * e) + (a - 1) / (2 * a - 1) * mpmath.exp(-a * e)) / (a - 1)
    assert renyi.laplace_rdp(order, 1.0, epsilon) == pytest.approx(float(reference), rel=1e-8)


@given(epsilon=st.floats(0.0, 20.0), order=st.floats(1.0, 1e4))
def test_pure_dp_curve_is_below_epsilon_and_the_zcdp_line(epsilon, order):
    value = renyi.pure_dp_rdp(order, epsilon)
    assert value <= epsilon * (1 + 1e-12) + 1e-300
    assert value <= order * renyi.pure_dp_zcdp(epsilon) * (1 + 1e-9) + 1e-300


@given(p=st.floats(0.01, 1.0), k=st.integers(2, 50), orders=st.lists(st.floats(1.0, 500.0), min_size=2, max_size=5))
def test_rdp_curves_are_non_decreasing_in_the_order(p, k, orders):
    orders = np.sort(orders)
    for relation in ("replace_one", "replace_special"):
        assert np.all(np.diff(renyi.randomized_response_rdp(orders, p, k, relation)) >= -1e-9)
    assert np.all(np.diff(renyi.laplace_rdp(orders, p)) >= -1e-9)


@given(sigma=st.floats(0.3, 50.0), delta=st.floats(1e-12, 0.1))
@examples(0.5)
def test_rdp_route_epsilon_is_never_below_the_exact_gaussian_epsilon(sigma, delta):
    rdp_route = renyi.gaussian_rdp_epsilon(delta, sigma)
    exact = gaussian_epsilon(delta, sigma)
    assert rdp_route >= exact
    orders = np.concatenate([np.linspace(1.01, 10, 100), np.geomspace(10, 1e5, 100)])
    assert rdp_route <= renyi.rdp_epsilon(delta, orders, renyi.gaussian_rdp(orders, sigma))[0] + 1e-9
    assert rdp_route <= renyi.zcdp_epsilon(1 / (2 * sigma**2), delta, "simple") + 1e-12


@given(rho=st.floats(1e-6, 100.0), delta=st.floats(1e-15, 0.5))
@examples(0.3)
def test_optimal_zcdp_conversion_is_monotone_and_at_most_the_simple_one(rho, delta):
    optimal = renyi.zcdp_epsilon(rho, delta)
    assert optimal <= renyi.zcdp_epsilon(rho, delta, "simple") + 1e-12
    assert renyi.zcdp_epsilon(rho * 1.1, delta) >= optimal - 1e-9
    assert renyi.zcdp_epsilon(rho, delta / 2) >= optimal - 1e-9


def test_zcdp_epsilon_broadcasts_and_classic_method_is_larger():
    result = renyi.zcdp_epsilon(np.array([0.1, 1.0, 10.0]), np.array([[1e-5], [1e-9]]))
    assert result.shape == (2, 3)
    orders = np.arange(2, 64)
    rdp = renyi.gaussian_rdp(orders, 2.0)
    assert renyi.rdp_epsilon(1e-6, orders, rdp, "classic")[0] > renyi.rdp_epsilon(1e-6, orders, rdp)[0]


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: renyi.gaussian_rdp(0.5, 1.0), "orders"),
        (lambda: renyi.gaussian_rdp(2.0, 0.0), "sigma"),
        (lambda: renyi.laplace_rdp(2.0, -1.0), "scale"),
        (lambda: renyi.randomized_response_rdp(2.0, 0.0, 3), "noise_parameter"),
        (lambda: renyi.randomized_response_rdp(2.0, 0.5, 0), "num_buckets"),
        (lambda: renyi.randomized_response_rdp(2.0, 0.5, 3, "add"), "relation"),
        (lambda: renyi.rdp_epsilon(0.0, [2.0], [1.0]), "delta"),
        (lambda: renyi.rdp_epsilon(1e-5, [2.0, 3.0], [1.0]), "orders and rdp"),
        (lambda: renyi.rdp_epsilon(1e-5, [2.0], [-1.0]), "rdp"),
        (lambda: renyi.zcdp_epsilon(-1.0, 1e-5), "rho"),
        (lambda: renyi.zcdp_epsilon(1.0, 1e-5, "best"), "method"),
    ],
)
def test_bad_input_raises_value_error_naming_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_order_one_gives_kl_and_infinity_gives_the_largest_loss():
    assert renyi.pure_dp_rdp(1.0, 2.0) == pytest.approx(2.0 * math.tanh(1.0))
    assert renyi.pure_dp_rdp(np.inf, 2.0) == 2.0


@given(epsilon=st.floats(0.001, 30.0), k=st.integers(2, 100))
def test_noise_parameter_of_epsilon_rr_gives_epsilon_at_order_infinity_and_dpmech_probabilities(epsilon, k):
    from dpmech.mechanisms import randomized_response_distribution

    p = renyi.randomized_response_noise_parameter(epsilon, k)
    assert renyi.randomized_response_rdp(np.inf, p, k) == pytest.approx(epsilon, rel=1e-9)
    keep = randomized_response_distribution(np.array([0]), epsilon, k)[0, 0]
    assert 1 - p + p / k == pytest.approx(keep, rel=1e-12)
    if k == 2:  # binary RR is the extremal ε-DP mechanism: its curve is the pure-DP curve
        assert renyi.randomized_response_rdp(3.0, p, 2) == pytest.approx(renyi.pure_dp_rdp(3.0, epsilon), rel=1e-9)


@given(sigma=st.floats(0.5, 20.0), delta=st.floats(1e-12, 0.1))
def test_rdp_epsilon_and_delta_are_consistent_and_improved_beats_classic(sigma, delta):
    orders = np.concatenate([np.linspace(1.05, 10, 60), np.geomspace(10, 1e4, 60)])
    rdp = renyi.gaussian_rdp(orders, sigma)
    epsilon, _ = renyi.rdp_epsilon(delta, orders, rdp)
    assert epsilon <= renyi.rdp_epsilon(delta, orders, rdp, "classic")[0]
    if epsilon > 0:
        assert renyi.rdp_delta(epsilon, orders, rdp)[0] <= delta * (1 + 1e-9)
