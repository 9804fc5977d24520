"""Privacy-loss functions against dp_accounting's known answers, 50-digit references and its live code."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from dpmech import high_precision
from dpmech.conversions import privacy_loss as pl
from tests.dpmech.conversions import dp_accounting_known_answers as known
from tests.profiles import examples

FUNCTIONS = {
    "gaussian": (pl.gaussian_privacy_loss, pl.gaussian_inverse_privacy_loss, pl.gaussian_delta_for_epsilon),
    "laplace": (pl.laplace_privacy_loss, pl.laplace_inverse_privacy_loss, pl.laplace_delta_for_epsilon),
    "discrete_laplace": (
        pl.discrete_laplace_privacy_loss,
        pl.discrete_laplace_inverse_privacy_loss,
        pl.discrete_laplace_delta_for_epsilon,
    ),
}


def _rows(kind, which, table):
    return [pytest.param(kind, which, *row, id=f"{kind}-{which}-{i}") for i, row in enumerate(table)]


CASES = (
    _rows("laplace", 0, known.TEST_LAPLACE_PRIVACY_LOSS)
    + _rows("laplace", 1, known.TEST_LAPLACE_INVERSE_PRIVACY_LOSS)
    + _rows("laplace", 2, known.TEST_LAPLACE_GET_DELTA_FOR_EPSILON)
    + _rows("gaussian", 0, known.TEST_GAUSSIAN_PRIVACY_LOSS)
    + _rows("gaussian", 1, known.TEST_GAUSSIAN_INVERSE_PRIVACY_LOSS)
    + _rows("gaussian", 2, known.TEST_GAUSSIAN_GET_DELTA_FOR_EPSILON)
    + _rows("discrete_laplace", 0, known.TEST_DISCRETE_LAPLACE_PRIVACY_LOSS)
    + _rows("discrete_laplace", 1, known.TEST_DISCRETE_LAPLACE_INVERSE_PRIVACY_LOSS)
    + _rows("discrete_laplace", 2, known.TEST_DISCRETE_LAPLACE_GET_DELTA_FOR_EPSILON)
)
VECTOR_CASES = (
    _rows("laplace", 2, known.TEST_LAPLACE_GET_DELTA_FOR_EPSILON_VECTORIZED)
    + _rows("gaussian", 2, known.TEST_GAUSSIAN_GET_DELTA_FOR_EPSILON_VECTORIZED)
    + _rows("discrete_laplace", 2, known.TEST_DISCRETE_LAPLACE_GET_DELTA_FOR_EPSILON_VECTORIZED)
)


@pytest.mark.parametrize("kind,which,parameter,sensitivity,sampling_prob,adjacency,argument,expected", CASES)
def test_dp_accounting_known_answers(kind, which, parameter, sensitivity, sampling_prob, adjacency, argument, expected):
    """dp_accounting privacy_loss_mechanism_test.py: test_<mechanism>_{privacy_loss,inverse_privacy_loss,get_delta_for_epsilon}."""
    function = FUNCTIONS[kind][which]
    result = function(argument, parameter, sensitivity, sampling_prob, adjacency)
    if math.isinf(expected):
        assert result == expected
    else:
        assert result == pytest.approx(expected, abs=5e-8)


@pytest.mark.parametrize("kind,which,parameter,sensitivity,sampling_prob,adjacency,epsilons,expected", VECTOR_CASES)
def test_dp_accounting_known_answers_vectorised(kind, which, parameter, sensitivity, sampling_prob, adjacency, epsilons, expected):
    """dp_accounting privacy_loss_mechanism_test.py: test_<mechanism>_get_delta_for_epsilon_vectorized."""
    result = FUNCTIONS[kind][2](np.array(epsilons), parameter, sensitivity, sampling_prob, adjacency)
    assert result.shape == (len(epsilons),)
    np.testing.assert_allclose(result, expected, rtol=0, atol=5e-8)


@pytest.mark.parametrize("adjacency", ["add", "remove"])
@pytest.mark.parametrize(
    "epsilon,sigma,q",
    [(1.0, 1.0, 1.0), (5.0, 0.5, 1.0), (30.0, 0.5, 1.0), (0.5, 2.0, 0.1), (3.0, 1.0, 0.01), (8.0, 0.8, 0.5), (-0.2, 1.0, 0.3)],
)
def test_gaussian_delta_matches_50_digit_reference_far_into_the_tail(epsilon, sigma, q, adjacency):
    if adjacency == "add" and q < 1 and epsilon >= -math.log1p(-q):
        # Every output has loss below −log(1 − q) <= ε there: δ is exactly 0.
        assert pl.gaussian_delta_for_epsilon(epsilon, sigma, 1.0, q, adjacency) == 0.0
        return
    reference = high_precision.subsampled_gaussian_delta(epsilon, sigma, q, adjacency)
    result = pl.gaussian_delta_for_epsilon(epsilon, sigma, 1.0, q, adjacency)
    assert result == pytest.approx(float(reference), rel=1e-10)
    assert result > 0


def test_gaussian_delta_at_q_one_equals_the_analytic_gaussian_profile():
    from dpmech import gaussian_delta

    epsilons = np.linspace(0, 20, 41)
    for adjacency in ("add", "remove"):
        # gaussian_delta is a proven upper bound, its evaluation margin (~1e-11 relative) above the value.
        tight, upper = pl.gaussian_delta_for_epsilon(epsilons, 0.7, 1.3, 1.0, adjacency), gaussian_delta(epsilons, 0.7, 1.3)
        assert np.all(tight <= upper * (1 + 1e-13))
        np.testing.assert_allclose(tight, upper, rtol=1e-9)


@given(
    x=st.floats(-30, 30),
    parameter=st.floats(0.1, 10),
    sensitivity=st.floats(0.1, 5),
    q=st.floats(0.01, 1.0),
    adjacency=st.sampled_from(["add", "remove"]),
    kind=st.sampled_from(["gaussian", "laplace"]),
)
def test_inverse_is_the_largest_x_whose_loss_reaches_the_value(x, parameter, sensitivity, q, adjacency, kind):
    loss, inverse, _ = FUNCTIONS[kind]
    value = loss(x, parameter, sensitivity, q, adjacency)
    if not math.isfinite(value):
        return
    x_star = inverse(value, parameter, sensitivity, q, adjacency)
    tolerance = 1e-9 * (1 + abs(value))
    # Near the loss's supremum or infimum the inverse is ill-conditioned in x, so compare losses.
    if math.isfinite(x_star):
        assert loss(x_star, parameter, sensitivity, q, adjacency) >= value - tolerance
        step = 1e-6 * (1 + abs(x_star))
        assert loss(x_star + step, parameter, sensitivity, q, adjacency) <= value + tolerance
    elif x_star == -math.inf:
        # Only a value that rounded onto the loss's supremum −log(1 − q) (add) has no x reaching it.
        assert adjacency == "add" and q < 1 and value >= -math.log1p(-q) - tolerance
    else:
        assert x_star == math.inf


@given(
    epsilon=st.floats(-3, 10),
    parameter=st.floats(0.2, 5),
    sensitivity=st.integers(1, 4),
    q=st.floats(0.05, 1.0),
    adjacency=st.sampled_from(["add", "remove"]),
    kind=st.sampled_from(["gaussian", "laplace", "discrete_laplace"]),
)
def test_delta_matches_dp_accounting_and_is_a_hockey_stick_divergence(epsilon, parameter, sensitivity, q, adjacency, kind):
    from dp_accounting.pld import privacy_loss_mechanism as m

    classes = {"gaussian": m.GaussianPrivacyLoss, "laplace": m.LaplacePrivacyLoss, "discrete_laplace": m.DiscreteLaplacePrivacyLoss}
    theirs = classes[kind](parameter, sensitivity=sensitivity, sampling_prob=q, adjacency_type=m.AdjacencyType[adjacency.upper()])
    ours = FUNCTIONS[kind][2](epsilon, parameter, sensitivity, q, adjacency)
    assert 0.0 <= ours <= 1.0
    assert ours >= -np.expm1(min(epsilon, 0.0)) * (1 - 1e-12) - 1e-15  # δ(ε) >= 1 − e^ε
    assert ours == pytest.approx(theirs.get_delta_for_epsilon(epsilon), abs=1e-9, rel=1e-7)


@given(parameter=st.floats(0.2, 5), sensitivity=st.integers(1, 4), q=st.floats(0.05, 1.0), adjacency=st.sampled_from(["add", "remove"]))
def test_discrete_laplace_delta_equals_exact_enumeration(parameter, sensitivity, q, adjacency):
    support = np.arange(-200, 201)
    mass = stats.dlaplace.pmf(support, parameter)
    shifted = stats.dlaplace.pmf(support + sensitivity if adjacency == "remove" else support - sensitivity, parameter)
    mixture = (1 - q) * mass + q * shifted
    upper, lower = (mixture, mass) if adjacency == "remove" else (mass, mixture)
    epsilons = np.linspace(-1, 3, 9)
    exact = np.maximum(upper[None, :] - np.exp(epsilons)[:, None] * lower[None, :], 0).sum(axis=1)
    np.testing.assert_allclose(pl.discrete_laplace_delta_for_epsilon(epsilons, parameter, sensitivity, q, adjacency), exact, atol=1e-12)


def test_delta_is_monotone_non_increasing_in_epsilon():
    epsilons = np.linspace(-5, 40, 2001)
    for kind in FUNCTIONS:
        for adjacency in ("add", "remove"):
            delta = FUNCTIONS[kind][2](epsilons, 0.6, 1, 0.3, adjacency)
            assert np.all(np.diff(delta) <= 1e-300)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: pl.gaussian_privacy_loss(0.0, 0.0), "standard_deviation"),
        (lambda: pl.gaussian_privacy_loss(0.0, 1.0, -1.0), "sensitivity"),
        (lambda: pl.laplace_delta_for_epsilon(0.0, 1.0, 1.0, 0.0), "sampling_prob"),
        (lambda: pl.laplace_delta_for_epsilon(0.0, 1.0, 1.0, 1.5), "sampling_prob"),
        (lambda: pl.laplace_delta_for_epsilon(0.0, 1.0, 1.0, 1.0, "replace"), "adjacency"),
        (lambda: pl.laplace_delta_for_epsilon(float("nan"), 1.0), "epsilon"),
        (lambda: pl.discrete_laplace_privacy_loss(0.5, 1.0), "x must be an integer"),
        (lambda: pl.discrete_laplace_privacy_loss(0, 1.0, 1.5), "sensitivity"),
        (lambda: pl.gaussian_inverse_privacy_loss(3.0, 1.0, 1.0, 0.5, "add"), "privacy_loss"),
        (lambda: pl.gaussian_inverse_privacy_loss(-3.0, 1.0, 1.0, 0.5, "remove"), "privacy_loss"),
        (lambda: pl.gaussian_privacy_loss("1", 1.0), "x"),
    ],
)
def test_bad_input_raises_value_error_naming_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def _rounded_pmf(noise_parameter, num_buckets, relation, adjacency, interval, rounding):
    losses, probabilities = pl.randomized_response_privacy_losses(noise_parameter, num_buckets, relation, adjacency)
    pmf = {}
    for loss, probability in zip(rounding(losses / interval).astype(int), probabilities):
        pmf[int(loss)] = pmf.get(int(loss), 0.0) + probability
    return pmf


@pytest.mark.parametrize(
    "row,interval,rounding",
    [(row, 1.0, np.ceil) for row in known.RANDOMIZED_RESPONSE_PESSIMISTIC]
    + [(row, 1.0, np.floor) for row in known.RANDOMIZED_RESPONSE_OPTIMISTIC]
    + [(dict(row, noise_parameter=0.2, num_buckets=4), row["value_discretization_interval"], np.ceil) for row in known.RANDOMIZED_RESPONSE_DISCRETIZATION],
)
def test_randomized_response_losses_match_dp_accounting_discretised_pmfs(row, interval, rounding):
    """privacy_loss_distribution_test.py: test_randomized_response_{pessimistic,optimistic,discretization}."""
    directions = [("remove", row["expected_rounded_pmf"])]
    if "expected_rounded_pmf_add" in row:
        directions.append(("add", row["expected_rounded_pmf_add"]))
    for adjacency, expected in directions:
        pmf = _rounded_pmf(row["noise_parameter"], row["num_buckets"], row["neighbor_rel"], adjacency, interval, rounding)
        assert pmf.keys() == expected.keys()
        for loss, probability in expected.items():
            assert pmf[loss] == pytest.approx(probability, abs=1e-12)


@given(
    p=st.floats(0.01, 0.99),  # dp_accounting refuses p = 1 (our loss is then 0 everywhere)
    k=st.integers(2, 20),
    relation=st.sampled_from(["replace_one", "replace_special"]),
    adjacency=st.sampled_from(["add", "remove"]),
)
@examples(0.3)  # dp_accounting builds a PLD per example
def test_randomized_response_delta_equals_enumeration_and_is_below_dp_accounting_pessimistic_pld(p, k, relation, adjacency):
    from dp_accounting import privacy_accountant
    from dp_accounting.pld import privacy_loss_distribution

    keep = 1 - p + p / k
    truth = np.full(k, p / k)
    truth[0] = keep
    if relation == "replace_one":
        other = np.roll(truth, 1)
    else:
        other = np.full(k, 1.0 / k)
    upper, lower = (truth, other) if adjacency == "remove" or relation == "replace_one" else (other, truth)
    epsilons = np.linspace(-1, 4, 11)
    exact = np.maximum(upper[None, :] - np.exp(epsilons)[:, None] * lower[None, :], 0).sum(axis=1)
    ours = pl.randomized_response_delta_for_epsilon(epsilons, p, k, relation, adjacency)
    np.testing.assert_allclose(ours, exact, atol=1e-14)
    relations = {"replace_one": privacy_accountant.NeighboringRelation.REPLACE_ONE,
                 "replace_special": privacy_accountant.NeighboringRelation.REPLACE_SPECIAL}
    pld = privacy_loss_distribution.from_randomized_response(p, k, value_discretization_interval=1e-4, neighboring_relation=relations[relation])
    if relation == "replace_one" or adjacency == "remove":
        theirs = np.array([pld.get_delta_for_epsilon(float(e)) for e in epsilons[epsilons >= 0]])
        # dp_accounting reports the larger of the two directions; its pessimistic rounding only adds.
        both = np.maximum(ours, pl.randomized_response_delta_for_epsilon(epsilons, p, k, relation, "add"))[epsilons >= 0]
        assert np.all(both <= theirs + 1e-12)
        np.testing.assert_allclose(both, theirs, atol=1e-3)


@pytest.mark.parametrize(
    "which,sigma,sensitivity,q,adjacency,argument,expected",
    [("loss", *row) for row in known.TEST_DISCRETE_GAUSSIAN_PRIVACY_LOSS]
    + [("inverse", *row) for row in known.TEST_DISCRETE_GAUSSIAN_INVERSE_PRIVACY_LOSS],
)
def test_discrete_gaussian_loss_and_inverse_match_dp_accounting(which, sigma, sensitivity, q, adjacency, argument, expected):
    """privacy_loss_mechanism_test.py: test_discrete_gaussian_privacy_loss and test_discrete_gaussian_inverse_privacy_loss."""
    function = pl.discrete_gaussian_privacy_loss if which == "loss" else pl.discrete_gaussian_inverse_privacy_loss
    result = function(argument, sigma, sensitivity, q, adjacency)
    assert result == expected if math.isinf(expected) else result == pytest.approx(expected, abs=5e-8)


@pytest.mark.parametrize(
    "sigma,sensitivity,bound,q,adjacency,epsilons,expected",
    [(*row[:5], [row[5]], [row[6]]) for row in known.TEST_DISCRETE_GAUSSIAN_GET_DELTA_FOR_EPSILON]
    + list(known.TEST_DISCRETE_GAUSSIAN_GET_DELTA_FOR_EPSILON_VECTORIZED),
)
def test_discrete_gaussian_delta_matches_dp_accounting(sigma, sensitivity, bound, q, adjacency, epsilons, expected):
    """privacy_loss_mechanism_test.py: test_discrete_gaussian_get_delta_for_epsilon(_vectorized)."""
    result = pl.discrete_gaussian_delta_for_epsilon(np.array(epsilons), sigma, sensitivity, q, adjacency, bound)
    np.testing.assert_allclose(result, expected, rtol=0, atol=5e-8)


@pytest.mark.parametrize("sigma,sensitivity,q,adjacency,x", known.TEST_DISCRETE_GAUSSIAN_PRIVACY_LOSS_VALUE_ERRORS)
def test_discrete_gaussian_loss_is_refused_where_undefined(sigma, sensitivity, q, adjacency, x):
    """privacy_loss_mechanism_test.py: test_discrete_gaussian_privacy_loss_value_errors."""
    with pytest.raises(ValueError, match="x must"):
        pl.discrete_gaussian_privacy_loss(x, sigma, sensitivity, q, adjacency)


@given(sigma=st.floats(0.3, 4.0), sensitivity=st.integers(1, 3), q=st.floats(0.05, 1.0), adjacency=st.sampled_from(["add", "remove"]))
def test_discrete_gaussian_delta_equals_exact_enumeration(sigma, sensitivity, q, adjacency):
    bound = math.ceil(11.6 * sigma)
    support = np.arange(-bound - sensitivity, bound + sensitivity + 1)
    mass = np.where(np.abs(support) <= bound, np.exp(-0.5 * support**2 / sigma**2), 0.0)
    mass /= mass.sum()
    shift = sensitivity if adjacency == "remove" else -sensitivity
    shifted = np.roll(mass, -shift)  # mass at x + shift; the padding keeps the roll from wrapping support
    mixture = (1 - q) * mass + q * shifted
    upper, lower = (mixture, mass) if adjacency == "remove" else (mass, mixture)
    epsilons = np.linspace(-1, 3, 9)
    exact = np.maximum(upper[None, :] - np.exp(epsilons)[:, None] * lower[None, :], 0).sum(axis=1)
    ours = pl.discrete_gaussian_delta_for_epsilon(epsilons, sigma, sensitivity, q, adjacency)
    np.testing.assert_allclose(ours, exact, atol=1e-12)


@pytest.mark.parametrize("row", known.MIXTURE_PRIVACY_LOSS, ids=lambda row: row["testcase_name"])
def test_mixture_privacy_loss_matches_dp_accounting(row):
    """privacy_loss_mechanism_test.py: MixtureGaussianPrivacyLossTest.test_privacy_loss."""
    result = pl.mixture_gaussian_privacy_loss(row["x"], row["standard_deviation"], row["sensitivities"], row["sampling_probs"], row["adjacency_type"])
    assert result == pytest.approx(row["expected_privacy_loss"], abs=5e-8)


@pytest.mark.parametrize("row", known.MIXTURE_GET_DELTA_FOR_EPSILON, ids=lambda row: row["testcase_name"])
def test_mixture_delta_matches_dp_accounting(row):
    """privacy_loss_mechanism_test.py: MixtureGaussianPrivacyLossTest.test_get_delta_for_epsilon."""
    result = pl.mixture_gaussian_delta_for_epsilon(row["epsilon"], row["standard_deviation"], row["sensitivities"], row["sampling_probs"], row["adjacency_type"])
    assert result == pytest.approx(row["expected_delta"], abs=5e-8)


@given(
    sigma=st.floats(0.3, 5.0),
    q=st.floats(0.01, 1.0),
    adjacency=st.sampled_from(["add", "remove"]),
    epsilon=st.floats(-2.0, 6.0),
    x=st.floats(-10.0, 10.0),
)
@examples(0.5)
def test_mixture_with_sensitivities_zero_and_one_is_the_subsampled_gaussian(sigma, q, adjacency, epsilon, x):
    args = (sigma, [0.0, 1.0], [1 - q, q], adjacency)
    assert pl.mixture_gaussian_privacy_loss(x, *args) == pytest.approx(pl.gaussian_privacy_loss(x, sigma, 1.0, q, adjacency), rel=1e-12, abs=1e-12)
    assert pl.mixture_gaussian_delta_for_epsilon(epsilon, *args) == pytest.approx(
        pl.gaussian_delta_for_epsilon(epsilon, sigma, 1.0, q, adjacency), rel=1e-9, abs=1e-15
    )


@given(
    sigma=st.floats(0.3, 5.0),
    weights=st.lists(st.floats(0.05, 1.0), min_size=2, max_size=4),
    adjacency=st.sampled_from(["add", "remove"]),
    x=st.floats(-8.0, 8.0),
)
@examples(0.5)
def test_mixture_inverse_is_the_largest_x_reaching_the_loss(sigma, weights, adjacency, x):
    sensitivities = np.arange(len(weights), dtype=float)  # includes sensitivity 0
    probabilities = np.array(weights) / math.fsum(weights)
    value = pl.mixture_gaussian_privacy_loss(x, sigma, sensitivities, probabilities, adjacency)
    x_star = pl.mixture_gaussian_inverse_privacy_loss(value, sigma, sensitivities, probabilities, adjacency)
    if math.isfinite(x_star):
        assert pl.mixture_gaussian_privacy_loss(x_star, sigma, sensitivities, probabilities, adjacency) >= value
        step = 1e-9 * (1 + abs(x_star))
        assert pl.mixture_gaussian_privacy_loss(x_star + step, sigma, sensitivities, probabilities, adjacency) <= value
    else:  # the loss rounded onto its limit log p_0 (remove) or −log p_0 (add)
        log_p0 = math.log(probabilities[0])
        assert value == pytest.approx(log_p0 if adjacency == "remove" else -log_p0, abs=1e-12)


def test_mixture_refuses_probabilities_that_do_not_sum_to_one_and_zero_sensitivity_only():
    with pytest.raises(ValueError, match="sampling_probs must sum to 1"):
        pl.mixture_gaussian_privacy_loss(0.0, 1.0, [0.0, 1.0], [0.5, 0.6])
    with pytest.raises(ValueError, match="positive value"):
        pl.mixture_gaussian_privacy_loss(0.0, 1.0, [0.0, 1.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="privacy_loss must be >= log"):
        pl.mixture_gaussian_inverse_privacy_loss(math.log(0.2) - 0.1, 1.0, [0.0, 1.0], [0.2, 0.8])


@given(
    epsilons=st.lists(st.floats(-2.0, 6.0), min_size=1, max_size=4),
    parameters=st.lists(st.floats(0.3, 3.0), min_size=1, max_size=3),
    kind=st.sampled_from(["gaussian", "laplace"]),
    adjacency=st.sampled_from(["add", "remove"]),
)
def test_array_results_equal_the_scalar_ones_entry_by_entry_to_a_few_ulps(epsilons, parameters, kind, adjacency):
    function = FUNCTIONS[kind][2]
    grid = function(np.array(epsilons)[:, None], np.array(parameters)[None, :], 1.0, 0.4, adjacency)
    assert grid.shape == (len(epsilons), len(parameters))
    for i, epsilon in enumerate(epsilons):
        for j, parameter in enumerate(parameters):
            scalar = function(epsilon, parameter, 1.0, 0.4, adjacency)
            assert isinstance(scalar, float)
            # numpy's vectorised exp/log loops and its one-element path may differ by a few ulps.
            assert grid[i, j] == pytest.approx(scalar, rel=1e-12, abs=0.0)
