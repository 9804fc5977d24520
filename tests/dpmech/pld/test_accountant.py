"""Certified intervals of dpmech.pld against exact references, anchors' known answers and guards."""

import math

import mpmath
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from dpmech import high_precision, pld
from tests.profiles import examples

STEP = 2e-3


def _contains(interval, reference):
    return interval.lower <= reference <= interval.upper


# --- exact references -----------------------------------------------------------------------------


@given(
    mu=st.floats(0.2, 3.0),
    count=st.integers(1, 40),
    epsilon=st.floats(0.0, 12.0),
)
@examples(0.2)
def test_composed_gaussians_contain_the_50_digit_delta(mu, count, epsilon):
    """k Gaussians with μ compose to one with μ√k (Dong, Roth & Su 2019): exact reference."""
    reference = high_precision.delta(epsilon, mu * math.sqrt(count))
    assume(reference > 1e-60)
    interval = pld.log_delta([(pld.GaussianPair(mu), count)], epsilon, STEP)
    assert interval.lower <= float(mpmath.log(reference)) <= interval.upper


@pytest.mark.parametrize("target", [1e-20, 1e-30])
def test_tiny_delta_is_carried_in_log_space_and_certified(target):
    mu = 1.0 * math.sqrt(10)
    epsilon = float(high_precision.epsilon(target, mu, 30.0))
    interval = pld.log_delta([(pld.GaussianPair(1.0), 10)], epsilon, 1e-3)
    assert interval.lower <= math.log(target) <= interval.upper
    assert interval.upper - interval.lower < 0.05  # a relative width of 5 % in δ itself at 1e-30
    answer = pld.epsilon([(pld.GaussianPair(1.0), 10)], target, 1e-3)
    assert answer.lower <= epsilon <= answer.upper


@given(
    mu=st.floats(0.3, 4.0),
    rate=st.floats(1e-3, 1.0),
    epsilon=st.floats(0.0, 6.0),
)
@examples(0.1)
def test_one_poisson_subsampled_gaussian_contains_the_50_digit_delta(mu, rate, epsilon):
    reference = max(
        high_precision.poisson_subsampled_gaussian_delta(epsilon, mu, rate, "remove"),
        high_precision.poisson_subsampled_gaussian_delta(epsilon, mu, rate, "add"),
    )
    assume(reference > 1e-100)
    pairs = pld.poisson_subsampled(pld.GaussianPair(mu), rate)
    interval = pld.log_delta([(pairs, 1)], epsilon, STEP)
    assert interval.lower <= float(mpmath.log(reference)) <= interval.upper


_finite_pairs = st.one_of(
    st.builds(pld.randomized_response_pair, st.floats(0.05, 3.0), st.integers(2, 4)),
    st.builds(pld.approximate_dp_pair, st.floats(0.0, 2.0), st.floats(0.0, 0.01)),
)


@given(
    pairs=st.lists(st.tuples(_finite_pairs, st.one_of(st.none(), st.floats(0.01, 1.0)), st.integers(1, 3)),
                   min_size=1, max_size=2),
    epsilon=st.floats(0.0, 4.0),
)
@examples(0.2)
def test_finite_pairs_composed_contain_the_exact_enumeration(pairs, epsilon):
    """Randomized response, generic (ε, δ) pairs and their Poisson subsamplings, composed exactly in mpmath."""
    ledger, references = [], []
    for pair, rate, count in pairs:
        directions = (pair, pld.reverse(pair)) if rate is None else pld.poisson_subsampled(pair, rate)
        ledger.append((directions, count))
    for direction in range(2):
        atom_lists = []
        for directions, count in ledger:
            loss, p, _ = directions[direction].atoms()
            atom_lists += [list(zip(loss.tolist(), p.tolist()))] * count
        references.append(high_precision.finite_pairs_delta(atom_lists, epsilon))
    reference = max(references)
    interval = pld.delta(ledger, epsilon, STEP)
    assert interval.lower <= float(reference) * (1 + 1e-12) + 1e-300
    assert float(reference) * (1 - 1e-12) <= interval.upper


def test_laplace_one_step_matches_its_closed_form():
    """δ(ε) = 1 − e^{(ε − 1/b)/2} for ε < 1/b (the Laplace mechanism's tight profile)."""
    scale = 0.8
    epsilons = np.array([0.0, 0.3, 0.9, 1.2])
    reference = -np.expm1((epsilons - 1 / scale) / 2)
    interval = pld.delta([(pld.LaplacePair(scale), 1)], epsilons, 1e-3)
    assert np.all(interval.lower <= reference) and np.all(reference <= interval.upper)
    assert np.all(interval.upper - interval.lower < 1e-3)


# --- known answers from dp_accounting's own tests -------------------------------------------------
# google/differential-privacy, python/dp_accounting/dp_accounting/pld/pld_privacy_accountant_test.py


def test_dp_accounting_gaussian_basic():
    """test_gaussian_basic: σ = √3, three compositions: δ(1) = 0.126936 (to 1e-3 there)."""
    interval = pld.delta([(pld.GaussianPair(1 / math.sqrt(3)), 3)], 1.0, 1e-3)
    assert interval.lower <= 0.126936 + 1e-6 and 0.126936 - 1e-6 <= interval.upper


def test_dp_accounting_poisson_subsampled_gaussian():
    """test_poisson_subsampled_gaussian / test_self_composed_subsampled_gaussian: q = 0.2, σ = 0.5,
    three compositions: δ(1) = 0.15594 and ε(0.15594) = 1, to 1e-3 there. Finer: dp_accounting at
    discretisation 1e-5 gives 0.1559327759188, prv_accountant's estimate 0.1559327759168."""
    ledger = [(pld.poisson_subsampled(pld.GaussianPair(2.0), 0.2), 3)]
    interval = pld.delta(ledger, 1.0, 1e-3)
    assert 0.15594 - 1e-3 <= interval.lower and interval.upper <= 0.15594 + 1e-3
    assert interval.lower <= 0.155932775917 <= interval.upper
    assert interval.upper - interval.lower < 1e-6
    answer = pld.epsilon(ledger, 0.15594, 1e-3)
    assert answer.lower - 1e-4 <= 1.0 <= answer.upper + 1e-4


def test_dp_accounting_laplace_basic():
    """test_laplace_basic: Laplace 1 three times and 2 twice: the loss never exceeds 4, so δ(4) = 0."""
    ledger = [(pld.LaplacePair(1.0), 3), (pld.LaplacePair(2.0), 2)]
    interval = pld.delta(ledger, 4.0, 1e-4)
    assert interval.lower == 0.0 and interval.upper < 1e-4
    answer = pld.epsilon(ledger, 1e-14, 1e-4)
    assert answer.lower <= 4.0 <= answer.upper + 1e-12 and answer.upper < 4.0 + 1e-3


def test_dp_accounting_poisson_subsampled_laplace():
    """test_poisson_subsampled_laplace: q = 0.2, Laplace 0.5, three compositions: ε(1e-14) = 2.46964,
    3·log(1 + q(e² − 1)), the largest loss."""
    ledger = [(pld.poisson_subsampled(pld.LaplacePair(0.5), 0.2), 3)]
    answer = pld.epsilon(ledger, 1e-14, 1e-4)
    exact = 3 * math.log1p(0.2 * math.expm1(2.0))
    assert answer.lower <= exact <= answer.upper and answer.upper - exact < 1e-3


def test_issue_12_headline_subsampled_gaussian():
    """q = 0.01, σ = 1, 1000 steps, δ = 1e-5: ε = 1.82824 (dp_accounting's PLD and prv_accountant)."""
    ledger = [(pld.poisson_subsampled(pld.GaussianPair(1.0), 0.01), 1000)]
    answer = pld.epsilon(ledger, 1e-5)  # the default grid: refined to a width of at most 1e-3
    assert answer.lower <= 1.82825 and 1.82823 <= answer.upper
    assert answer.upper - answer.lower <= 1e-3
    coarse = pld.epsilon(ledger, 1e-5, 1e-3)  # a given step: one grid, two levels (about twice the error)
    assert coarse.lower <= 1.82825 and 1.82823 <= coarse.upper and coarse.upper - coarse.lower <= 2.2e-3


# --- the interval's behaviour ---------------------------------------------------------------------


def test_interval_shrinks_as_the_step_does():
    ledger = [(pld.poisson_subsampled(pld.GaussianPair(0.8), 0.05), 50)]
    widths = [np.subtract(*reversed(astuple)) for astuple in
              ((a.lower, a.upper) for a in (pld.epsilon(ledger, 1e-6, h) for h in (4e-3, 1e-3, 2.5e-4)))]
    assert widths[0] > widths[1] > widths[2] > 0


def test_width_request_is_met():
    ledger = [(pld.poisson_subsampled(pld.GaussianPair(1.0), 0.02), 100)]
    answer = pld.epsilon(ledger, 1e-6, width=2e-3)
    assert 0 < answer.upper - answer.lower <= 2e-3


def test_certified_upper_epsilon_meets_the_target_delta():
    ledger = [(pld.poisson_subsampled(pld.GaussianPair(1.2), 0.03), 200)]
    loss = pld.ComposedLoss(ledger, 1e-3, delta=1e-8)
    answer = loss.epsilon(1e-8)
    assert loss.delta(answer.upper).upper <= 1e-8
    assert loss.delta(answer.lower).lower > 1e-8


def test_vectorised_queries_match_scalar_ones():
    ledger = [(pld.GaussianPair(0.5), 4)]
    loss = pld.ComposedLoss(ledger, 1e-3, epsilon=1.0)
    many = loss.delta(np.array([0.5, 1.0, 2.0]))
    assert many.upper[1] == loss.delta(1.0).upper and many.lower[2] == loss.delta(2.0).lower


def test_mass_at_infinity_makes_epsilon_infinite():
    ledger = [(pld.approximate_dp_pair(1.0, 1e-3), 2)]
    assert pld.epsilon(ledger, 1e-4, 1e-3).lower == math.inf
    interval = pld.delta(ledger, 50.0, 1e-3)
    assert interval.lower <= 1 - (1 - 1e-3) ** 2 <= interval.upper


# --- guards and bad input --------------------------------------------------------------------------


def test_guard_refuses_before_allocating(monkeypatch):
    def no_fft(*args, **kwargs):
        raise AssertionError("an FFT ran before the guard")

    monkeypatch.setattr(np.fft, "rfft", no_fft)
    ledger = [(pld.poisson_subsampled(pld.GaussianPair(1.0), 0.01), 10**6)]
    with pytest.raises(ValueError, match="discretization"):
        pld.epsilon(ledger, 1e-5, 1e-7)


@pytest.mark.parametrize("pair", [pld.poisson_subsampled(pld.GaussianPair(1.0), 0.01), pld.LaplacePair(1.0),
                                  pld.randomized_response_pair(0.1)])
def test_a_count_of_10_to_the_20_is_refused_by_name_before_any_fft(monkeypatch, pair):
    """10^20 steps once reached a 2^35-point FFT on the fine grid of the two-level composition (a MemoryError)."""
    def no_fft(*args, **kwargs):
        raise AssertionError("an FFT ran before the guard")

    monkeypatch.setattr(np.fft, "rfft", no_fft)
    # A fine step meets the accountant's own grid guard first (which names max_points); any other, the count limit.
    with pytest.raises(ValueError, match="max_points = 8388608"):
        pld.epsilon([(pair, 10**20)], 1e-5, 1e-3)
    for step in (None, 10.0, 1e8):
        with pytest.raises(ValueError, match="count must be at most 1000000000000 .*got 100000000000000000000"):
            pld.epsilon([(pair, 10**20)], 1e-5, step)


def test_the_fine_level_window_is_refused_over_its_limit():
    """compose_upper and compose_lower check their own window (the grid guard of the accountant sees only the
    coarse one): a GridTooLarge naming the count, whose suggested step fits."""
    from dpmech.pld import composition
    from dpmech.pld.distribution import GridMeasure

    measure = GridMeasure.from_log_masses(1e-3, 0.0, -500, np.log(np.full(1001, 1 / 1001)), -math.inf, True)
    with pytest.raises(pld.GridTooLarge, match="count: composing 1000000 steps") as error:
        composition.compose_upper([measure], [10**6], max_points=1 << 12)
    assert error.value.suggested > 1e-3


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: pld.delta([(pld.GaussianPair(1.0), 0)], 1.0), "count"),
        (lambda: pld.delta([(pld.GaussianPair(1.0), 1)], -1.0), "epsilon"),
        (lambda: pld.epsilon([(pld.GaussianPair(1.0), 1)], 0.0), "delta"),
        (lambda: pld.epsilon([(pld.GaussianPair(1.0), 1)], 1e-5, -1e-3), "discretization"),
        (lambda: pld.epsilon([(pld.GaussianPair(1.0), 1)], 1e-5, width=0.0), "width"),
        (lambda: pld.delta([], 1.0), "ledger"),
        (lambda: pld.delta([("gaussian", 1)], 1.0), "Pair"),
        (lambda: pld.delta([(pld.GaussianPair(1.0), True)], 1.0), "count"),
    ],
)
def test_bad_input_raises_naming_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_issue_12_headline_at_delta_1e_20_where_prv_refuses():
    """A finite certified ε at δ = 1e-20 (the window must keep the tilted upper tail: summing it from
    the bottom, 1 − 1e-40 rounds to 1 and the tail went to +∞, giving ε = inf)."""
    ledger = [(pld.poisson_subsampled(pld.GaussianPair(1.0), 0.01), 1000)]
    answer = pld.epsilon(ledger, 1e-20)
    assert math.isfinite(answer.upper) and answer.upper - answer.lower <= 1e-3
    loss = pld.ComposedLoss(ledger, 1e-3, delta=1e-20)
    on_grid = loss.epsilon(1e-20)
    assert math.isfinite(on_grid.upper) and loss.delta(on_grid.upper).upper <= 1e-20


@given(mu=st.floats(0.3, 2.0), count=st.integers(1, 30), log_delta=st.floats(-69.0, -5.0))
@examples(0.1)
def test_epsilon_interval_contains_the_50_digit_epsilon_down_to_1e_30(mu, count, log_delta):
    delta = math.exp(log_delta)
    total = mu * math.sqrt(count)
    start = total * (total / 2 + math.sqrt(-2 * log_delta))
    assume(float(high_precision.delta(0.0, total)) > delta)
    reference = float(high_precision.epsilon(delta, total, start))
    answer = pld.epsilon([(pld.GaussianPair(mu), count)], delta, STEP)
    assert answer.lower <= reference <= answer.upper


def test_sampling_without_replacement_meets_advanced_joint_convexity():
    """Balle, Barthe & Gaboardi 2018, Thm. 10: an (ε, δ)-DP mechanism on m of n records sampled without
    replacement is (log(1 + γ(e^ε − 1)), γδ)-DP under replace-one, γ = m/n; the mixture pair is tight there."""
    epsilon, delta, sample, source = 1.0, 1e-4, 10, 100
    gamma = sample / source
    pairs = pld.sampled_without_replacement(pld.approximate_dp_pair(epsilon, delta), sample, source)
    amplified = math.log1p(gamma * math.expm1(epsilon))
    # An atom sits exactly at the amplified ε: the upper end exceeds γδ by about its mass times the step.
    step = 1e-6
    interval = pld.delta([(pairs, 1)], amplified, step)
    assert interval.lower <= gamma * delta * (1 + 1e-9) <= interval.upper + 1e-15
    assert interval.upper <= gamma * delta + step


@pytest.mark.parametrize(
    "ledger, prv_event, delta",
    [
        ([(pld.LaplacePair(2.0), 50)], ("laplace", 0.5, 50), 1e-6),
        ([(pld.poisson_subsampled(pld.GaussianPair(1 / 0.8), 0.05), 200)], ("sgm", 0.8, 0.05, 200), 1e-6),
    ],
)
def test_interval_meets_prv_accountants_error_bars(ledger, prv_event, delta):
    """prv_accountant (Gopi, Lee & Wutschitz 2021) bounds ε within its eps_error: the intervals intersect."""
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import (
        LaplaceMechanism,
        PoissonSubsampledGaussianMechanism,
    )

    if prv_event[0] == "laplace":
        prv, count = LaplaceMechanism(mu=prv_event[1]), prv_event[2]
    else:
        prv, count = PoissonSubsampledGaussianMechanism(noise_multiplier=prv_event[1],
                                                        sampling_probability=prv_event[2]), prv_event[3]
    accountant = PRVAccountant(prvs=[prv], max_self_compositions=[count], eps_error=0.01, delta_error=delta / 1000)
    low, _, high = accountant.compute_epsilon(delta=delta, num_self_compositions=[count])
    answer = pld.epsilon(ledger, delta, 1e-3)
    assert answer.lower <= high and low <= answer.upper
    assert answer.upper - answer.lower < high - low


# --- masses far below the smallest double -------------------------------------------------------------


def test_laplace_with_a_huge_epsilon_keeps_its_tiny_q_masses():
    """Laplace with Δ/b = 800: δ(ε) = 1 − e^{(ε − 800)/2}. Its Q-masses near the top loss are e^-800: as
    doubles they were 0 (the lower end then read them as infinite loss: [800.3, 800.1] around 799.99998),
    and F-differences at the top of a continuous part of mass 1/2 had left them an error of 1e-12."""
    truth = 800.0 + 2 * math.log1p(-1e-5)
    answer = pld.epsilon([(pld.LaplacePair(1 / 800.0), 1)], 1e-5, 0.1)
    assert answer.lower <= truth <= answer.upper and answer.upper - answer.lower < 1e-5


def test_gaussian_with_a_huge_mu_keeps_its_tiny_q_masses():
    """μ = 40: the Q-masses near ε = 970 underflowed to 0 and the lower end came out at 1227.9."""
    reference = float(high_precision.epsilon(1e-5, 40.0, 3000.0))
    answer = pld.epsilon([(pld.GaussianPair(40.0), 1)], 1e-5, 1e-2)
    assert answer.lower <= reference <= answer.upper


def test_randomized_response_with_a_huge_epsilon_is_not_an_infinite_loss():
    """Binary RR with ε₀ = 800: δ(ε) = (1 − e^{ε − ε₀})/(1 + e^{−ε₀}), so ε(1e-5) = 800 + log(1 − 1e-5)."""
    truth = 800.0 + math.log1p(-1e-5)
    answer = pld.epsilon([(pld.randomized_response_pair(800.0), 1)], 1e-5, 0.1)
    assert answer.lower <= truth <= answer.upper and math.isfinite(answer.lower)
