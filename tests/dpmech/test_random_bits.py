"""Random sources and the exact Bernoulli draw: boundaries by constructed bit streams, frequencies by binomial tests."""

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from dpmech.random_bits import (
    RandomSource,
    exact_bernoulli,
    random_source,
    uniform_below,
    uniform_integers,
)


def stream(*words):
    """A source that returns the given words in order, then zeros."""
    supply = itertools.chain(words, itertools.repeat(0))
    return RandomSource(lambda count: np.array([next(supply) for _ in range(count)], dtype=np.uint64), "test", False)


@given(st.floats(5e-324, 1.0, exclude_max=True, allow_subnormal=True))
def test_all_zero_bits_accept_every_positive_probability_and_all_one_bits_reject_every_p_below_one(p):
    # U = 0.000… is below every p > 0; U = 0.111… is above every p < 1.
    assert exact_bernoulli([p], stream())[0]
    assert not exact_bernoulli([p], stream(*[2**64 - 1] * 40))[0]
    assert not exact_bernoulli([0.0], stream())[0] and exact_bernoulli([1.0], stream(2**64 - 1))[0]


@given(st.integers(2**52 + 1, 2**53 - 1), st.integers(0, 80))
def test_the_mantissa_comparison_is_exact_at_its_boundary(mantissa, leading_zeros):
    # p = m·2^−53·2^−L: the first word's top 53 bits equal to m − 1 accept, equal to m reject.
    p = float(np.ldexp(float(mantissa), -53 - leading_zeros))
    assert exact_bernoulli([p], stream((mantissa - 1) << 11))[0]
    assert not exact_bernoulli([p], stream(mantissa << 11))[0]
    # One set bit among the L leading bits rejects.
    if leading_zeros:
        position = leading_zeros - 1  # the last of the L bits
        word, bit = divmod(position, 64)
        words = [0] * (word + 1)
        words[word] = 1 << (63 - bit)
        assert not exact_bernoulli([p], stream(0, *words))[0]


@pytest.mark.parametrize("p", [0.3, 0.0875, 1e-3, 2.0**-12 * 0.7])
def test_frequencies_match_p(p):
    # 200,000 draws with a fixed seed; two-sided binomial test at α = 1e-6.
    draws = exact_bernoulli(np.full(200_000, p), random_source(20260123))
    assert stats.binomtest(int(draws.sum()), draws.size, p).pvalue > 1e-6


def test_sources_state_what_they_are_and_refuse_an_implicit_default():
    assert random_source("os").cryptographic and "os" in random_source("os").description
    seeded = random_source(3)
    assert not seeded.cryptographic and "not for real releases" in seeded.description
    np.testing.assert_array_equal(random_source(3).words(5), random_source(np.random.default_rng(3)).words(5))
    assert random_source("os").words(4).dtype == np.uint64
    for bad in (None, "OS", -1, True, 1.5):
        with pytest.raises(ValueError, match="rng"):
            random_source(bad)
    with pytest.raises(ValueError, match="probabilities"):
        exact_bernoulli([1.5], seeded)


@pytest.mark.parametrize("bound", [1, 2, 7, 1000, 2**31 + 11])
def test_uniform_integers_are_uniform_below_a_32_bit_bound(bound):
    draws = uniform_integers(bound, 60_000, random_source(11))
    assert draws.dtype == np.int64 and draws.min() >= 0 and draws.max() < bound
    cells = min(bound, 16)
    # Equal cells of [0, bound) when bound is a multiple of cells, else the exact cell sizes.
    edges = np.linspace(0, bound, cells + 1).round().astype(np.int64)
    expected = np.diff(edges) / bound * draws.size
    observed = np.histogram(draws, bins=edges)[0]
    if cells > 1:
        assert stats.chisquare(observed, expected).pvalue > 1e-6


def test_uniform_below_handles_bounds_beyond_32_bits_and_mixed_bounds():
    bounds = np.array([3 * 2**40 + 5, 2**62, 5, 1] * 20_000)
    draws = uniform_below(bounds, random_source(12))
    assert np.all((draws >= 0) & (draws < bounds))
    # The top bit of a draw below 2**62 is set half the time; below 3·2**40 + 5, a draw is below 2**40 a third of it.
    large = draws[bounds == 2**62]
    assert stats.binomtest(int(np.sum(large >= 2**61)), large.size, 0.5).pvalue > 1e-6
    third = draws[bounds == 3 * 2**40 + 5]
    assert stats.binomtest(int(np.sum(third < 2**40)), third.size, 2**40 / (3 * 2**40 + 5)).pvalue > 1e-6
    assert np.all(draws[bounds == 1] == 0)
