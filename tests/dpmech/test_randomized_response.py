"""Randomized response family: exact enumeration of every output distribution, samplers against it.

The label-DP guarantee is checked by enumerating the (K, K) channel of each
mechanism (rows: true label, columns: output) at Hypothesis-drawn
(K, ε, prior), independently of the library's own tie and k* rules.
"""

import importlib
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

import dpmech
from dpmech.randomized_response import worst_case_log_ratio

RATIO_RTOL = 1e-12


@st.composite
def label_settings(draw):
    """(K, ε, prior) with frequent exact ties in the prior, including zeros."""
    num_classes = draw(st.integers(2, 8))
    epsilon = draw(st.floats(0.01, 12.0))
    weights = np.array(draw(st.lists(st.integers(0, 4), min_size=num_classes, max_size=num_classes)), dtype=float)
    if weights.sum() == 0:
        weights[0] = 1.0
    return num_classes, epsilon, weights / weights.sum()


def reference_top_set(prior, k):
    """Y_k by the documented rule, written independently: descending prior, lower label first."""
    return sorted(range(len(prior)), key=lambda label: (-prior[label], label))[:k]


def reference_optimal_k(prior, epsilon, google_compat=False):
    """Weights w_k (1-based k) from the paper, or from label_dp/train.py (0-based loop, (k-1) in the denominator)."""
    order = reference_top_set(prior, len(prior))
    shrink = math.exp(-epsilon)
    if google_compat:
        return [sum(prior[j] for j in order[: i + 1]) / (1 + (i - 1) * shrink) for i in range(len(prior))]
    return [sum(prior[j] for j in order[:k]) * math.exp(epsilon) / (math.exp(epsilon) + k - 1) for k in range(1, len(prior) + 1)]


def channel(distribution_function, num_classes, *args, prior=None):
    """The (K, K) channel: row y is the output distribution for true label y."""
    labels = np.arange(num_classes)
    if prior is None:
        return distribution_function(labels, *args)
    return distribution_function(labels, np.tile(prior, (num_classes, 1)), *args)


def max_ratio(matrix):
    """max over outputs o and label pairs (y, y') of P[y, o]/P[y', o], inf where a zero meets a positive."""
    largest, smallest = matrix.max(axis=0), matrix.min(axis=0)
    support = largest > 0
    if np.any(smallest[support] == 0):
        return math.inf
    return float(np.max(largest[support] / smallest[support]))


def k_ary_rr_hockey_stick(epsilon, k, alpha):
    """H_α(P‖Q) of the k-ary RR pair P = (p, q, ..., q), Q = (q, p, q, ..., q)."""
    keep = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    other = 1.0 / (math.exp(epsilon) + k - 1)
    first = np.r_[keep, other, np.full(k - 2, other)]
    second = np.r_[other, keep, np.full(k - 2, other)]
    return np.maximum(first[None, :] - alpha[:, None] * second[None, :], 0.0).sum(axis=1)


# --- exact enumeration: worst-case ratio ---------------------------------------------------------


@given(label_settings())
def test_rr_channel_rows_and_worst_case_ratio_is_e_to_epsilon(setting):
    num_classes, epsilon, _ = setting
    matrix = channel(dpmech.mechanisms.randomized_response_distribution, num_classes, epsilon, num_classes)
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0, rtol=1e-14)
    assert np.all(np.diag(matrix) == matrix.max(axis=1))
    assert max_ratio(matrix) == pytest.approx(math.exp(epsilon), rel=RATIO_RTOL)
    assert worst_case_log_ratio(matrix) == pytest.approx(epsilon, rel=RATIO_RTOL)


@given(label_settings())
def test_rr_top_k_support_is_documented_top_set_and_worst_case_ratio_is_e_to_epsilon(setting):
    num_classes, epsilon, prior = setting
    for k in range(1, num_classes + 1):
        matrix = channel(dpmech.mechanisms.rr_top_k_distribution, num_classes, k, epsilon, prior=prior)
        np.testing.assert_allclose(matrix.sum(axis=1), 1.0, rtol=1e-14)
        top = reference_top_set(prior, k)
        outside = np.setdiff1d(np.arange(num_classes), top)
        assert np.all(matrix[:, outside] == 0.0)
        for label in outside:
            np.testing.assert_allclose(matrix[label, top], 1.0 / k, rtol=1e-15)
        # k = 1 always outputs the top label: ratio 1. Otherwise two members of Y_k attain e^ε.
        expected = math.exp(epsilon) if k >= 2 else 1.0
        assert max_ratio(matrix) == pytest.approx(expected, rel=RATIO_RTOL)


@given(label_settings(), st.booleans())
def test_rr_with_prior_uses_the_optimal_k_and_worst_case_ratio_is_e_to_epsilon(setting, google_compat):
    num_classes, epsilon, prior = setting
    weights = reference_optimal_k(prior, epsilon, google_compat)
    optimal_k = int(dpmech.mechanisms.rr_with_prior_optimal_k(prior[None, :], epsilon, google_compat=google_compat)[0])
    best = max(weights)
    # k* attains the maximum weight (up to rounding in the cumulative sums).
    assert weights[optimal_k - 1] >= best * (1 - 1e-12)
    matrix = channel(dpmech.mechanisms.rr_with_prior_distribution, num_classes, epsilon, google_compat, prior=prior)
    np.testing.assert_array_equal(
        matrix, channel(dpmech.mechanisms.rr_top_k_distribution, num_classes, optimal_k, epsilon, prior=prior)
    )
    expected = math.exp(epsilon) if optimal_k >= 2 else 1.0
    assert max_ratio(matrix) == pytest.approx(expected, rel=RATIO_RTOL)


def test_rr_with_prior_paper_and_google_k_differ_on_a_known_prior():
    # ε = 1, p = (0.6, 0.3, 0.1): paper w = (0.600, 0.658, 0.576) -> k* = 2;
    # Google w = (0.6/(1 - e^{-1}), 0.9, 1/(1 + e^{-1})) = (0.949, 0.900, 0.731) -> k* = 1.
    prior = np.array([[0.6, 0.3, 0.1]])
    assert dpmech.mechanisms.rr_with_prior_optimal_k(prior, 1.0)[0] == 2
    assert dpmech.mechanisms.rr_with_prior_optimal_k(prior, 1.0, google_compat=True)[0] == 1


def test_uniform_prior_gives_k_star_equal_to_k():
    assert np.all(dpmech.mechanisms.rr_with_prior_optimal_k(np.full((3, 5), 0.2), 0.5) == 5)


def test_ties_in_the_prior_go_to_the_lower_label():
    prior = np.array([[0.1, 0.3, 0.3, 0.3]])
    matrix = dpmech.mechanisms.rr_top_k_distribution([0], prior, 2, 1.0)
    np.testing.assert_allclose(matrix[0], [0.0, 0.5, 0.5, 0.0])


def wrong_rr_top_k_distribution(labels, priors, k, epsilon):
    """The public variant that draws from ALL labels when y is not in Y_k (not DP)."""
    matrix = dpmech.mechanisms.rr_top_k_distribution(labels, priors, k, epsilon)
    num_classes = priors.shape[1]
    outside = matrix[np.arange(len(labels)), labels] == 0
    matrix[outside] = 1.0 / num_classes
    return matrix


@given(label_settings())
def test_the_wrong_variant_is_detected_as_not_dp(setting):
    num_classes, epsilon, prior = setting
    for k in range(1, num_classes):
        matrix = channel(wrong_rr_top_k_distribution, num_classes, k, epsilon, prior=prior)
        assert max_ratio(matrix) == math.inf
        assert worst_case_log_ratio(matrix) == math.inf


def test_the_seeds_lost_superscript_would_not_be_e_to_epsilon_dp():
    # FedGM prints ε/(ε+k−1); read literally, the ratio of keep to other is ε, not e^ε,
    # and for ε < 1 it keeps the true label less often than any other.
    epsilon, k = 0.5, 3
    literal = np.full((k, k), 1.0 / (epsilon + k - 1))
    np.fill_diagonal(literal, epsilon / (epsilon + k - 1))
    assert worst_case_log_ratio(literal) == pytest.approx(math.log(1.0 / epsilon))
    assert np.all(np.diag(literal) < literal[0, 1])


@given(label_settings())
def test_rr_top_k_is_dominated_by_k_ary_randomized_response(setting):
    num_classes, epsilon, prior = setting
    alpha = np.exp(np.linspace(-epsilon - 1.0, epsilon + 1.0, 41))
    for k in range(2, num_classes + 1):
        matrix = channel(dpmech.mechanisms.rr_top_k_distribution, num_classes, k, epsilon, prior=prior)
        bound = k_ary_rr_hockey_stick(epsilon, k, alpha)
        divergence = np.maximum(matrix[:, None, None, :] - alpha[None, None, :, None] * matrix[None, :, None, :], 0.0)
        assert np.all(divergence.sum(axis=-1) <= bound[None, None, :] + 1e-14)
        event = dpmech.mechanisms.rr_top_k_event(epsilon, k)
        assert event.num_outcomes == k and event.neighbouring == dpmech.REPLACE_ONE


def test_events():
    assert dpmech.randomized_response_event(1.0, 10) == dpmech.PureEpsilonEvent(1.0, 10, dpmech.REPLACE_ONE)
    # k = 1 outputs the prior's top label whatever the label: no privacy loss at all.
    assert isinstance(dpmech.mechanisms.rr_top_k_event(1.0, 1), dpmech.NoPrivacyLossEvent)
    assert dpmech.mechanisms.rr_with_prior_event(2.0) == dpmech.PureEpsilonEvent(2.0, None, dpmech.REPLACE_ONE)
    assert dpmech.randomized_response_event(1.0, 10).keep_probability == pytest.approx(
        dpmech.mechanisms.randomized_response_distribution([0], 1.0, 10)[0, 0], rel=1e-15
    )


# --- samplers against the exact distributions (chi-square) ---------------------------------------

# Per configuration: N = 40,000 draws, Pearson chi-square over the outputs of positive
# probability, rejected at α = 1e-4; outputs of probability 0 must never occur. Seeds are fixed.
DRAWS_PER_CONFIGURATION = 40_000
ALPHA = 1e-4
PRIORS = np.array(
    [
        [0.05, 0.4, 0.25, 0.25, 0.05],
        [0.2, 0.2, 0.2, 0.2, 0.2],
        [0.7, 0.1, 0.1, 0.05, 0.05],
        [0.0, 0.0, 0.5, 0.0, 0.5],
    ]
)
LABELS = np.array([0, 3, 0, 1])


def assert_frequencies_match(samples, labels, priors, distribution):
    configurations = np.repeat(np.arange(len(labels)), DRAWS_PER_CONFIGURATION)
    for index in range(len(labels)):
        counts = np.bincount(samples[configurations == index], minlength=distribution.shape[1])
        expected = distribution[index] * DRAWS_PER_CONFIGURATION
        assert np.all(counts[expected == 0] == 0)
        positive = expected > 0
        if positive.sum() > 1:
            assert stats.chisquare(counts[positive], expected[positive]).pvalue > ALPHA


def batch():
    return np.repeat(LABELS, DRAWS_PER_CONFIGURATION), np.repeat(PRIORS, DRAWS_PER_CONFIGURATION, axis=0)


@pytest.mark.parametrize("epsilon", [0.3, 2.0])
def test_randomized_response_sampler_frequencies(epsilon):
    labels, _ = batch()
    samples = dpmech.randomized_response(labels, epsilon, 5, rng=20260101)
    assert_frequencies_match(samples, LABELS, PRIORS, dpmech.mechanisms.randomized_response_distribution(LABELS, epsilon, 5))


@pytest.mark.parametrize("k", [1, 2, 4])
def test_rr_top_k_sampler_frequencies(k):
    labels, priors = batch()
    samples = dpmech.mechanisms.rr_top_k(labels, priors, k, 1.0, rng=np.random.default_rng(7))
    assert_frequencies_match(samples, LABELS, PRIORS, dpmech.mechanisms.rr_top_k_distribution(LABELS, PRIORS, k, 1.0))


@pytest.mark.parametrize("google_compat", [False, True])
def test_rr_with_prior_sampler_frequencies(google_compat):
    labels, priors = batch()
    samples = dpmech.mechanisms.rr_with_prior(labels, priors, 0.8, rng=11, google_compat=google_compat)
    distribution = dpmech.mechanisms.rr_with_prior_distribution(LABELS, PRIORS, 0.8, google_compat=google_compat)
    assert_frequencies_match(samples, LABELS, PRIORS, distribution)


def test_samplers_take_the_os_csprng():
    labels = np.arange(2000) % 5
    priors = np.tile(PRIORS[0], (2000, 1))
    for out in (
        dpmech.randomized_response(labels, 1.0, 5, "os"),
        dpmech.mechanisms.rr_top_k(labels, priors, 3, 1.0, "os"),
        dpmech.mechanisms.rr_with_prior(labels, priors, 1.0, "os"),
    ):
        assert out.dtype == np.int64 and np.all((out >= 0) & (out < 5)) and np.any(out != labels)


def test_samplers_are_reproducible_from_a_seed_and_take_a_generator():
    labels = np.arange(50) % 5
    priors = np.tile(PRIORS[0], (50, 1))
    for sample in (
        lambda rng: dpmech.randomized_response(labels, 1.0, 5, rng),
        lambda rng: dpmech.mechanisms.rr_top_k(labels, priors, 3, 1.0, rng),
        lambda rng: dpmech.mechanisms.rr_with_prior(labels, priors, 1.0, rng),
    ):
        np.testing.assert_array_equal(sample(3), sample(np.random.default_rng(3)))
        assert sample(3).dtype == np.int64


def test_empty_batch():
    assert dpmech.mechanisms.rr_with_prior(np.zeros(0, dtype=int), np.zeros((0, 3)), 1.0, 0).shape == (0,)


# --- bad input --------------------------------------------------------------------------------------

GOOD_PRIORS = np.array([[0.5, 0.3, 0.2], [0.2, 0.3, 0.5]])
GOOD_LABELS = np.array([0, 2])

BAD_INPUTS = [
    ("labels", lambda: dpmech.randomized_response([0, 3], 1.0, 3, 0)),
    ("labels", lambda: dpmech.randomized_response([-1, 0], 1.0, 3, 0)),
    ("labels", lambda: dpmech.randomized_response([0.5, 1], 1.0, 3, 0)),
    ("labels", lambda: dpmech.randomized_response([[0, 1]], 1.0, 3, 0)),
    ("labels", lambda: dpmech.randomized_response(np.array([True, False]), 1.0, 3, 0)),
    ("labels", lambda: dpmech.mechanisms.rr_top_k([0, 3], GOOD_PRIORS, 2, 1.0, 0)),
    ("num_classes", lambda: dpmech.randomized_response([0], 1.0, 1, 0)),
    ("epsilon", lambda: dpmech.randomized_response([0], 0.0, 3, 0)),
    ("epsilon", lambda: dpmech.mechanisms.rr_top_k(GOOD_LABELS, GOOD_PRIORS, 2, -1.0, 0)),
    ("epsilon", lambda: dpmech.mechanisms.rr_with_prior(GOOD_LABELS, GOOD_PRIORS, math.inf, 0)),
    ("priors", lambda: dpmech.mechanisms.rr_top_k(GOOD_LABELS, [[0.6, 0.5, -0.1], [0.2, 0.3, 0.5]], 2, 1.0, 0)),
    ("priors", lambda: dpmech.mechanisms.rr_top_k(GOOD_LABELS, [[0.5, 0.3, 0.2 + 1e-8], [0.2, 0.3, 0.5]], 2, 1.0, 0)),
    ("priors", lambda: dpmech.mechanisms.rr_with_prior(GOOD_LABELS, GOOD_PRIORS[:1], 1.0, 0)),
    ("priors", lambda: dpmech.mechanisms.rr_with_prior(GOOD_LABELS, [[np.nan, 0.5, 0.5], [0.2, 0.3, 0.5]], 1.0, 0)),
    ("priors", lambda: dpmech.mechanisms.rr_with_prior_optimal_k([0.5, 0.5], 1.0)),
    ("k", lambda: dpmech.mechanisms.rr_top_k(GOOD_LABELS, GOOD_PRIORS, 0, 1.0, 0)),
    ("k", lambda: dpmech.mechanisms.rr_top_k(GOOD_LABELS, GOOD_PRIORS, 4, 1.0, 0)),
    ("k", lambda: dpmech.mechanisms.rr_top_k_distribution(GOOD_LABELS, GOOD_PRIORS, 1.5, 1.0)),
    ("rng", lambda: dpmech.mechanisms.rr_top_k(GOOD_LABELS, GOOD_PRIORS, 2, 1.0, None)),
    ("rng", lambda: dpmech.randomized_response([0], 1.0, 3, -1)),
    ("google_compat", lambda: dpmech.mechanisms.rr_with_prior(GOOD_LABELS, GOOD_PRIORS, 1.0, 0, google_compat=1)),
    ("distribution", lambda: worst_case_log_ratio([[0.5, -0.1]])),
]


@pytest.mark.parametrize("parameter, call", BAD_INPUTS, ids=[f"{name}-{i}" for i, (name, _) in enumerate(BAD_INPUTS)])
def test_bad_input_raises_value_error_naming_the_parameter(parameter, call):
    with pytest.raises(ValueError, match=parameter):
        call()


# --- issue 11: floating point at large ε, one release per label, bounded memory ----------------------

RR_MODULE = importlib.import_module("dpmech.randomized_response")


@pytest.mark.parametrize("epsilon", [37.5, 40.0, 100.0, 800.0])
def test_samplers_can_still_change_a_label_at_large_epsilon(monkeypatch, epsilon):
    # Before: the keep probability rounded to 1 for ε ≳ 37.4 and no label ever changed, under a pure-ε event.
    # The replacement is now an exact Bernoulli draw of a positive probability; forcing that event (as
    # a lucky bit stream would) must reach a uniform replacement.
    seen = []

    def replacement_happens(probabilities, source):
        seen.append(np.min(probabilities))
        return np.ones(np.shape(probabilities), dtype=bool)

    monkeypatch.setattr(RR_MODULE, "exact_bernoulli", replacement_happens, raising=False)
    labels = np.zeros(200, dtype=np.int64)
    priors = np.tile([0.4, 0.3, 0.2, 0.1], (200, 1))
    assert np.any(dpmech.randomized_response(labels, epsilon, 4, 0) != labels)
    assert np.any(dpmech.mechanisms.rr_top_k(labels, priors, 3, epsilon, 0) != labels)
    assert np.any(dpmech.mechanisms.rr_with_prior(labels, np.tile([0.25, 0.25, 0.25, 0.25], (200, 1)), epsilon, 0) != labels)
    assert len(seen) == 3 and min(seen) > 0


@given(st.integers(2, 10**6), st.floats(30.0, 1e300))
def test_randomized_response_distribution_at_large_epsilon_is_positive_and_within_epsilon(num_classes, epsilon):
    # Before: 1/(e^ε+K−1) underflowed to 0 past ε ≈ 745, a deterministic channel (ratio ∞) under a pure-ε event.
    matrix = dpmech.mechanisms.randomized_response_distribution([0, 1], epsilon, num_classes if num_classes < 2**23 else 2)
    assert np.all(matrix > 0)
    assert worst_case_log_ratio(matrix) <= epsilon * (1 + 1e-12)


@given(st.floats(5e-324, 1e300), st.integers(2, 2**53))
def test_uniform_replacement_probability_is_an_upper_bound_in_the_unit_interval(epsilon, k):
    # u = k/(e^ε+k−1) rounded up is what makes the sampler ε-DP whatever the rounding (50-digit check).
    uniform = float(RR_MODULE._uniform_probability(epsilon, k))
    with mpmath.workdps(50):
        exact = mpmath.mpf(k) / (mpmath.exp(mpmath.mpf(epsilon)) + k - 1)
        assert uniform >= exact
        assert uniform <= 1.0
        if exact > 1e-300:
            # Past ε = 700, e^ε overflows and u comes from a log₂-domain upper bound, a little looser.
            slack = mpmath.mpf(2) ** -40 if epsilon <= 700 else mpmath.mpf(1e-8)
            assert uniform <= exact * (1 + slack)


ONE_RELEASE_PER_LABEL = [
    ("epsilon", lambda: dpmech.randomized_response([1], [1.0, 2.0], 10, 0)),
    ("epsilon", lambda: dpmech.mechanisms.randomized_response_distribution([1], [1.0, 2.0], 10)),
    ("epsilon", lambda: dpmech.mechanisms.rr_top_k([1], [[0.5, 0.5]], 2, [1.0, 2.0], 0)),
    ("epsilon", lambda: dpmech.mechanisms.rr_top_k_distribution([1], [[0.5, 0.5]], 2, np.array([1.0, 2.0]))),
    ("epsilon", lambda: dpmech.mechanisms.rr_with_prior([1], [[0.5, 0.5]], [1.0, 2.0], 0)),
    ("epsilon", lambda: dpmech.mechanisms.rr_with_prior_distribution([1], [[0.5, 0.5]], [1.0, 2.0])),
    ("epsilon", lambda: dpmech.mechanisms.rr_with_prior_optimal_k([[0.5, 0.5]], [1.0, 2.0])),
    ("num_classes", lambda: dpmech.mechanisms.randomized_response_distribution([1], 1.0, 10**12)),
    ("num_classes", lambda: dpmech.randomized_response([1], 1.0, 2**60, 0)),
    ("labels", lambda: dpmech.mechanisms.rr_top_k([], [[0.5, 0.5]], 2, 1.0, 0)),
]


@pytest.mark.parametrize(
    "parameter, call", ONE_RELEASE_PER_LABEL, ids=[f"{name}-{i}" for i, (name, _) in enumerate(ONE_RELEASE_PER_LABEL)]
)
def test_an_array_of_epsilon_or_a_huge_matrix_is_refused(parameter, call):
    # Before: an array ε broadcast into several randomisations of one label, counted as one release,
    # and K = 10**12 tried to allocate a 7 TiB matrix.
    with pytest.raises(ValueError, match=parameter):
        call()


def test_sampler_reaches_one_random_draw_per_label_and_huge_num_classes_works():
    out = dpmech.randomized_response(np.arange(5), 1.0, 2**40, 3)
    assert out.shape == (5,) and out.dtype == np.int64 and np.all((out >= 0) & (out < 2**40))


def test_google_compat_k_star_is_defined_at_subnormal_epsilon():
    # 1 − e^{−ε} rounded to 0 for ε < 1.1e-16: 0/0 weights. Now the weights stay finite or +inf, never NaN.
    with np.errstate(divide="raise", invalid="raise"):
        optimal_k = dpmech.mechanisms.rr_with_prior_optimal_k([[0.0, 0.5, 0.5], [0.5, 0.5, 0.0]], 5e-324, google_compat=True)
    assert np.all((optimal_k >= 1) & (optimal_k <= 3))
