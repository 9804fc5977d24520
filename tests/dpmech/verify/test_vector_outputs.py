"""outputs="vector": real vectors (a noisy histogram) tested through norms and learned linear directions."""

import numpy as np
import pytest

from dpmech.verify.projections import _directions, _statistic_names, _statistics, projection_dp_test
from dpmech.verify.tester import find_violation

EPSILON = 0.5
HISTOGRAM = np.array([5.0, 3.0, 0.0, 7.0, 2.0, 1.0])
# One record adds 1 to two bins: L1 sensitivity 2.
PAIRS = [("record in bins 0 and 1", HISTOGRAM, HISTOGRAM + np.r_[1.0, 1.0, 0.0, 0.0, 0.0, 0.0]),
         ("record in bins 2 and 5", HISTOGRAM, HISTOGRAM + np.r_[0.0, 0.0, 1.0, 0.0, 0.0, 1.0])]


def noisy_histogram(scale):
    return lambda counts, size, rng: np.asarray(counts, float)[None, :] + rng.laplace(0.0, scale, (size, len(counts)))


BUGGY = noisy_histogram(1.0 / EPSILON)  # calibrated for L1 sensitivity 1: true eps = 2·0.5 = 1
CORRECT = noisy_histogram(2.0 / EPSILON)  # calibrated for the sensitivity 2 the records have


def test_vector_statistics_are_the_norms_and_the_projections_on_the_learned_directions():
    outputs = np.array([[3.0, -4.0, 0.0], [1.0, 1.0, -1.0]])
    directions = np.array([[1.0, 0.0, 0.0], [0.0, 0.6, 0.8]])
    names = _statistic_names(3, np.empty(0), directions)
    values = _statistics(outputs, np.empty(0), directions=directions)
    column = {name: values[:, index].tolist() for index, name in enumerate(names)}
    assert column["|x|_1"] == [7.0, 3.0] and column["|x|_2"] == [5.0, pytest.approx(3.0**0.5)] and column["|x|_inf"] == [4.0, 1.0]
    assert column["mean-difference direction . x"] == [3.0, 1.0] and column["Fisher direction . x"] == pytest.approx([-2.4, -0.2])
    assert all(np.array_equal(_statistics(outputs, np.empty(0), columns=(index,), directions=directions)[:, 0], values[:, index])
               for index in range(len(names)))


def test_learned_directions_point_along_the_shift_and_skip_non_finite_entries():
    rng = np.random.default_rng(0)
    first, second = rng.normal(0.0, 1.0, (20_000, 4)), rng.normal(0.0, 1.0, (20_000, 4)) + np.r_[1.0, 1.0, 0.0, 0.0]
    first[0, 2] = np.inf
    directions = _directions(first, second)
    assert directions.shape == (2, 4) and np.allclose(np.linalg.norm(directions, axis=1), 1.0)
    assert np.all(np.abs(directions @ np.r_[-1.0, -1.0, 0.0, 0.0] / 2**0.5 - 1.0) < 0.01)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_vector_statistics_catch_noise_calibrated_for_one_bin_where_the_summaries_alone_do_not(seed):
    vector = projection_dp_test(BUGGY, PAIRS[0][1:], EPSILON, 0.0, num_samples=10_000, rng=seed, outputs="vector")
    summaries = projection_dp_test(BUGGY, PAIRS[0][1:], EPSILON, 0.0, num_samples=10_000, rng=seed)
    assert vector.rejected and EPSILON < vector.epsilon_lower_bound <= 1.0, vector
    assert "direction" in vector.witness and not summaries.rejected


# One round of 10,000 outputs per side and no final stage: the same tests on every machine, whatever its speed.
PLAN = {"budget_seconds": 600.0, "initial_samples": 10_000, "max_samples": 10_000, "final_share": 0.0, "outputs": "vector"}


def test_a_noisy_histogram_calibrated_for_one_bin_is_refuted():
    report = find_violation(BUGGY, PAIRS, EPSILON, 0.0, rng=0, **PLAN)
    assert report.rejected and EPSILON < report.epsilon_lower_bound <= 1.0, report


@pytest.mark.parametrize("seed", [0, 1])
def test_a_correctly_calibrated_noisy_histogram_is_not_refuted(seed):
    report = find_violation(CORRECT, PAIRS, EPSILON, 0.0, rng=seed, **PLAN)
    assert not report.rejected and report.epsilon_lower_bound <= EPSILON, report


def test_vector_outputs_must_be_real_vectors_and_need_more_than_singletons():
    with pytest.raises(ValueError, match="outputs='vector'"):
        projection_dp_test(lambda d, size, rng: ["a"] * size, (0, 1), 1.0, 0.0, num_samples=10, rng=0, outputs="vector")
    with pytest.raises(ValueError, match="outputs"):
        projection_dp_test(BUGGY, PAIRS[0][1:], 1.0, 0.0, num_samples=10, rng=0, outputs="real")
    with pytest.raises(ValueError, match="families"):
        find_violation(BUGGY, PAIRS, 1.0, 0.0, rng=0, families=("cheap",), outputs="vector")
    with pytest.raises(ValueError, match="outputs"):
        find_violation(BUGGY, PAIRS, 1.0, 0.0, rng=0, outputs="vectors")


def test_wide_outputs_get_half_lines_on_the_coordinates_that_separate_the_neighbours():
    # 300 bins, Laplace(0.5) noise, the neighbours differ in bin 237 only: 2-DP, claimed 1-DP. Of the 300 coordinates
    # the 64 whose selection means differ most carry half-lines (COORDINATE_LIMIT); bin 237 is among them.
    from dpmech.verify.projections import COORDINATE_LIMIT, _separating_coordinates, projection_dp_test

    def histogram(x, size, rng):
        outputs = rng.laplace(0.0, 0.5, (size, 300))
        outputs[:, 237] += x
        return outputs

    rng = np.random.default_rng(0)
    chosen = _separating_coordinates(histogram(0, 2000, rng), histogram(1, 2000, rng))
    assert chosen.size == COORDINATE_LIMIT and 237 in chosen.tolist()
    report = projection_dp_test(histogram, (0, 1), 1.0, 0.0, num_samples=4000, rng=1, outputs="vector")
    assert report.rejected
    assert _separating_coordinates(np.zeros((5, 64)), np.ones((5, 64))).tolist() == list(range(64))
