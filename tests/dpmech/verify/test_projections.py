"""Projection events (StatDP's post-processings): exact statistics, the violations they expose, no false alarm."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpmech.verify import statistical_dp_test
from dpmech.verify.examples import noisy_max_examples
from dpmech.verify.projections import _code_values, _statistic_names, _statistics, projection_dp_test
from dpmech.verify.statistical import TAIL_COUNT, quantile_levels

ALPHA = 0.05
NOISY_MAX = {example.name: example for example in noisy_max_examples(0.5)}
ZEROS, ONES = np.zeros(5), np.ones(5)


def test_statistics_of_sparse_vector_outputs_are_exact():
    outputs = np.array([[0.0, 1.0, -1.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
    codes = np.array([0.0, 1.0])
    values, names = _statistics(outputs, codes), _statistic_names(3, codes)
    column = {name: values[:, index].tolist() for index, name in enumerate(names)}
    assert column["max x"] == [1.0, 1.0, 0.0] and column["min x"] == [-1.0, 0.0, 0.0] and column["sum x"] == [0.0, 2.0, 0.0]
    assert column["#(x[j] == 1)"] == [1.0, 2.0, 0.0] and column["first j with x[j] == 1"] == [1.0, 0.0, 3.0]  # 3 = none
    assert column["#(x[j] == 0)"] == [1.0, 1.0, 3.0] and column["first j with x[j] == 0"] == [0.0, 2.0, 0.0]
    assert np.array_equal(column["first x[j] not a code"], [-1.0, np.nan, np.nan], equal_nan=True)
    assert all(np.array_equal(_statistics(outputs, codes, columns=(index,))[:, 0], values[:, index], equal_nan=True) for index in range(len(names)))


def test_code_values_are_the_frequent_entries_only():
    pooled = np.r_[np.zeros(50), np.ones(30), np.linspace(2.0, 3.0, 1000)]
    assert _code_values(pooled).tolist() == [0.0, 1.0]


@given(st.integers(1, 10**7), st.integers(1, 200))
def test_quantile_levels_reach_the_tails_the_sample_supports(size, count):
    levels = quantile_levels(count, size)
    assert np.all((levels > 0) & (levels < 1)) and np.all(np.diff(levels) > 0)
    smallest = levels.min()
    # The deepest tail level still has TAIL_COUNT selection outputs beyond it, and the next one down would not.
    assert smallest * size >= TAIL_COUNT or smallest >= 1.0 / (count + 1)
    assert smallest / 2 * size < TAIL_COUNT or smallest < 1.0 / (count + 1)


@pytest.mark.parametrize("name", ["noisy max (laplace, index and value)", "noisy max (exponential, index and value)"])
def test_noisy_max_with_its_value_is_caught_by_the_low_tail_of_the_value(name):
    # On 0 vs 1 in every query the max shifts by 1; in its low tail all five noisy queries are low, ratio up to e^(2.5 eps).
    sampler = NOISY_MAX[name].sampler
    assert not statistical_dp_test(sampler, (ZEROS, ONES), 0.5, 0.0, num_samples=20_000, rng=0, alpha=ALPHA).rejected
    result = projection_dp_test(sampler, (ZEROS, ONES), 0.5, 0.0, num_samples=20_000, rng=0, alpha=ALPHA)
    assert result.rejected and result.epsilon_lower_bound > 0.5, result


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_false_alarm_on_report_noisy_max_index(seed):
    sampler = NOISY_MAX["noisy max (laplace, index)"].sampler
    for pair in ((ZEROS, ONES), (ONES, np.r_[2.0, np.zeros(4)])):
        assert not projection_dp_test(sampler, pair, 0.5, 0.0, num_samples=20_000, rng=seed, alpha=ALPHA).rejected


def test_outputs_that_are_not_numbers_have_no_statistics():
    sampler = lambda d, size, rng: [("a", int(x)) for x in rng.integers(0, 2, size)]  # noqa: E731
    result = projection_dp_test(sampler, (0, 1), 0.1, 0.0, num_samples=100, rng=0)
    assert not result.rejected and result.num_hypotheses == 0


@pytest.mark.parametrize("parameter, options", [("num_samples", {"num_samples": 0}), ("alpha", {"alpha": 0.0}), ("num_thresholds", {"num_thresholds": 0}), ("rng", {"rng": "seed"})])
def test_bad_input_raises_value_error_naming_the_parameter(parameter, options):
    arguments = {"num_samples": 100, "rng": 0} | options
    with pytest.raises(ValueError, match=parameter):
        projection_dp_test(NOISY_MAX["noisy max (laplace, value)"].sampler, (ZEROS, ONES), 0.5, 0.0, **arguments)
