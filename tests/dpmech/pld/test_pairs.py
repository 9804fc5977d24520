"""The accuracy premise of dpmech.pld.pairs, checked against 50-digit mpmath, and the pairs' laws."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpmech import pld
from dpmech.pld.pairs import LOG_ERROR
from tests.profiles import examples

mpmath.mp.dps = 50


def _reference_gaussian_cdf(t, mu, measure, upper=False):
    """P(L <= t) (or P(L > t) when ``upper``) for L ~ N(±μ²/2, μ²)."""
    mean = mpmath.mpf(mu) ** 2 / 2 * (1 if measure == "P" else -1)
    z = (mpmath.mpf(t) - mean) / mu
    return mpmath.ncdf(-z if upper else z)


def _reference_mixture_cdf(t, mu, rate, measure, upper=False):
    """P(L <= t) (or > t) for the Poisson-subsampled Gaussian, L = log(1 − q + q e^{μx − μ²/2})."""
    t, mu, rate = mpmath.mpf(t), mpmath.mpf(mu), mpmath.mpf(rate)
    if rate < 1 and t <= mpmath.log(1 - rate):
        return mpmath.mpf(1 if upper else 0)
    u = mpmath.log((mpmath.exp(t) - (1 - rate)) / rate)
    q_part = _reference_gaussian_cdf(u, mu, "Q", upper)
    if measure == "Q":
        return q_part
    return rate * _reference_gaussian_cdf(u, mu, "P", upper) + (1 - rate) * q_part


def _within_premise(computed, reference):
    if reference == 0:
        return computed == -math.inf
    exact = float(mpmath.log(reference))
    return abs(computed - exact) <= LOG_ERROR * max(1.0, abs(exact))


@given(
    mu=st.floats(0.05, 20.0),
    t=st.floats(-300.0, 300.0),
    measure=st.sampled_from(["P", "Q"]),
)
def test_gaussian_log_cdf_and_sf_meet_the_accuracy_premise(mu, t, measure):
    pair = pld.GaussianPair(mu)
    cdf = _reference_gaussian_cdf(t, mu, measure)
    assert _within_premise(float(pair.log_cdf(np.array([t]), measure)[0]), cdf)
    assert _within_premise(float(pair.log_sf(np.array([t]), measure)[0]), _reference_gaussian_cdf(t, mu, measure, True))


@given(
    mu=st.floats(0.1, 5.0),
    rate=st.floats(1e-4, 1.0),
    t=st.floats(-5.0, 40.0),
    measure=st.sampled_from(["P", "Q"]),
)
@examples(0.5)
def test_subsampled_gaussian_log_cdf_and_sf_meet_the_accuracy_premise(mu, rate, t, measure):
    pair = pld.MixturePair(pld.GaussianPair(mu), rate)
    cdf = _reference_mixture_cdf(t, mu, rate, measure)
    survival = _reference_mixture_cdf(t, mu, rate, measure, upper=True)
    # Within 1e-9 of the support's floor the argument's own rounding dominates; no grid point sits there.
    floor = math.log1p(-rate) if rate < 1 else -math.inf
    if abs(t - floor) < 1e-9 * max(1.0, abs(floor)):
        return
    assert _within_premise(float(pair.log_cdf(np.array([t]), measure)[0]), cdf)
    assert _within_premise(float(pair.log_sf(np.array([t]), measure)[0]), survival)


@given(scale=st.floats(0.05, 50.0), fraction=st.floats(-1.0, 1.0), measure=st.sampled_from(["P", "Q"]))
def test_laplace_continuous_part_matches_its_density(scale, fraction, measure):
    """P_c(L <= t) integrates the Laplace density over x in (0, (bt + 1)/2], here in closed form per side."""
    pair = pld.LaplacePair(scale)
    t_double = fraction / scale
    edge = 1.0 / scale
    if abs(abs(t_double) - edge) <= 4 * math.ulp(edge):
        return  # the support's end 1/b is itself rounded; the atoms there are placed outward instead
    b, t = mpmath.mpf(scale), mpmath.mpf(t_double)
    x = min(max((b * t + 1) / 2, mpmath.mpf(0)), mpmath.mpf(1))
    if measure == "P":  # density e^{−(1−y)/b}/(2b) on (0, 1)
        below = (mpmath.exp(-(1 - x) / b) - mpmath.exp(-1 / b)) / 2
        above = (1 - mpmath.exp(-(1 - x) / b)) / 2
    else:  # density e^{−y/b}/(2b) on (0, 1)
        below = (1 - mpmath.exp(-x / b)) / 2
        above = (mpmath.exp(-x / b) - mpmath.exp(-1 / b)) / 2
    assert _within_premise(float(pair.log_cdf(np.array([t_double]), measure)[0]), below)
    assert _within_premise(float(pair.log_sf(np.array([t_double]), measure)[0]), above)


def test_laplace_atoms_and_continuous_part_sum_to_one():
    pair = pld.LaplacePair(0.7)
    _, p, q = pair.atoms()
    continuous_p = math.exp(pair.log_sf(np.array([-np.inf]), "P")[0])
    continuous_q = math.exp(pair.log_sf(np.array([-np.inf]), "Q")[0])
    assert p.sum() + continuous_p == pytest.approx(1.0, abs=1e-15)
    assert q.sum() + continuous_q == pytest.approx(1.0, abs=1e-15)


def test_reversed_pair_swaps_the_measures_and_negates_the_loss():
    mixture = pld.MixturePair(pld.GaussianPair(1.0), 0.1)
    reversed_pair = pld.reverse(mixture)
    t = np.array([-0.3, 0.0, 0.2])
    assert np.allclose(reversed_pair.log_cdf(t, "P"), mixture.log_sf(-t, "Q"))
    assert pld.reverse(reversed_pair) is mixture
    assert pld.reverse(pld.GaussianPair(1.0)).mu == 1.0


def test_randomized_response_pair_is_the_textbook_one():
    pair = pld.randomized_response_pair(math.log(3.0), categories=3)
    loss, p, _ = pair.atoms()
    assert np.allclose(np.sort(p), [0.2, 0.2, 0.6]) and np.allclose(np.sort(loss), [-math.log(3), 0, math.log(3)])


@given(epsilon=st.floats(5e-324, 1e-12), categories=st.integers(2, 5), approximate=st.booleans())
def test_a_tiny_epsilon_keeps_its_loss_and_its_delta(epsilon, categories, approximate):
    """ε = 1e-206 vanishes in log_p − log_q (−0.69 − (−0.69 − ε)): the losses must be ±ε themselves, and the
    certified δ(0) at least the true tanh(ε/2) (binary) or (e^ε − 1)/(e^ε + K − 1) (K-ary), not 0."""
    pair = pld.approximate_dp_pair(epsilon, 0.0) if approximate else pld.randomized_response_pair(epsilon, categories)
    loss, _, _ = pair.atoms()
    assert epsilon in loss.tolist() and -epsilon in loss.tolist()
    with mpmath.workdps(50):
        e = mpmath.exp(mpmath.mpf(epsilon))
        truth = (e - 1) / (e + (1 if approximate else categories - 1))
    interval = pld.delta((pair, 1), 0.0, discretization=2e-3)
    assert interval.upper >= truth and interval.lower <= truth


def test_a_loss_given_off_its_logs_is_refused():
    with pytest.raises(ValueError, match="loss"):
        pld.FinitePair(log_p=np.log([0.5, 0.5]), log_q=np.log([0.5, 0.5]), loss=[0.1, -0.1])


def test_a_loss_without_its_logs_is_refused():
    # FinitePair filled in log_p from p before it checked that the logs came with the loss, so a loss given
    # without them (the documented misuse) was accepted whenever it matched log p − log q.
    with pytest.raises(ValueError, match="loss must be given with log_p and log_q"):
        pld.FinitePair([0.5, 0.5], [0.5, 0.5], loss=[0.0, 0.0])


def test_approximate_dp_pair_has_delta_at_infinity():
    loss, p, _ = pld.approximate_dp_pair(1.0, 1e-6).atoms()
    assert p[loss == math.inf].sum() == 1e-6


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: pld.GaussianPair(0.0), "mu"),
        (lambda: pld.GaussianPair("1"), "mu"),
        (lambda: pld.LaplacePair(-1.0), "scale"),
        (lambda: pld.FinitePair([0.5, 0.5], [1.0]), "same length"),
        (lambda: pld.FinitePair([0.5, 0.4], [0.5, 0.5]), "sum to 1"),
        (lambda: pld.randomized_response_pair(1.0, categories=1), "categories"),
        (lambda: pld.approximate_dp_pair(1.0, 1.0), "delta"),
        (lambda: pld.MixturePair(pld.GaussianPair(1.0), 0.0), "rate"),
        (lambda: pld.MixturePair(pld.GaussianPair(1.0), 1.5), "rate"),
        (lambda: pld.MixturePair("gaussian", 0.5), "pair"),
        (lambda: pld.sampled_without_replacement(pld.GaussianPair(1.0), 11, 10), "sample_size"),
    ],
)
def test_bad_parameters_raise_naming_them(make, message):
    with pytest.raises(ValueError, match=message):
        make()
