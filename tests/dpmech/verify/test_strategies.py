"""Strategies: ranges, norm bounds, and the neighbouring relations they claim."""

import numpy as np
import pytest
from hypothesis import find, given
from hypothesis import strategies as st

from dpmech.verify import strategies
from dpmech.verify.strategies import datasets, neighbouring_pairs, privacy_params


@given(privacy_params())
def test_privacy_params_are_valid(params):
    assert 0 < params.epsilon <= 100 and 0 < params.delta < 1


def test_privacy_params_reach_tiny_delta_and_both_epsilon_ends():
    assert find(privacy_params(), lambda p: p.delta <= 1e-250).delta >= strategies.SMALLEST_DELTA
    assert find(privacy_params(), lambda p: p.epsilon <= 1e-5).epsilon >= 1e-6
    assert find(privacy_params(), lambda p: p.epsilon >= 50).epsilon <= 100


@given(datasets(7, 3, num_classes=4, feature_bound=2.5))
def test_datasets_have_the_shape_and_respect_the_bound(dataset):
    assert dataset.features.shape == (7, 3) and dataset.labels.shape == (7,)
    assert np.all(np.linalg.norm(dataset.features, axis=1) <= 2.5)
    assert dataset.labels.min() >= 0 and dataset.labels.max() < 4


def test_records_at_the_bound_are_drawn():
    dataset = find(datasets(3, 2, feature_bound=1.5), lambda d: np.any(np.linalg.norm(d.features, axis=1) > 1.5 * (1 - 1e-12)))
    assert np.linalg.norm(dataset.features, axis=1).max() <= 1.5


@given(neighbouring_pairs(5, 2, num_classes=3, feature_bound=1.0))
def test_replace_one_differs_in_exactly_one_record(pair):
    first, second = pair
    assert first.features.shape == second.features.shape
    changed = np.any(first.features != second.features, axis=1) | (first.labels != second.labels)
    # Exactly one: an identical pair (which the strategy drew before) is no test of a neighbouring relation.
    assert changed.sum() == 1
    assert np.all(np.linalg.norm(second.features, axis=1) <= 1.0)


def test_replace_one_draws_a_flipped_label_at_the_bound():
    def adversarial(pair):
        first, second = pair
        index = np.flatnonzero(first.labels != second.labels)
        return index.size == 1 and np.linalg.norm(second.features[index[0]]) > 1.0 - 1e-12

    find(neighbouring_pairs(4, 2), adversarial)


@given(neighbouring_pairs(4, 2, relation="add-remove-one"))
def test_add_remove_one_adds_or_removes_one_record(pair):
    first, second = pair
    small, large = sorted(pair, key=lambda d: len(d.labels))
    assert abs(len(first.labels) - len(second.labels)) == 1
    rows_large = {tuple(row) + (label,) for row, label in zip(large.features, large.labels)}
    assert all(tuple(row) + (label,) in rows_large for row, label in zip(small.features, small.labels))


BAD_INPUTS = [
    ("min_epsilon", lambda: privacy_params(min_epsilon=0.0)),
    ("max_epsilon", lambda: privacy_params(min_epsilon=2.0, max_epsilon=1.0)),
    ("min_delta", lambda: privacy_params(min_delta=0.0)),
    ("max_delta", lambda: privacy_params(max_delta=1.0)),
    ("n", lambda: datasets(0, 2)),
    ("d", lambda: datasets(3, 0)),
    ("num_classes", lambda: datasets(3, 2, num_classes=1)),
    ("feature_bound", lambda: datasets(3, 2, feature_bound=-1.0)),
    ("relation", lambda: neighbouring_pairs(3, 2, relation="swap")),
    ("n", lambda: neighbouring_pairs(1, 2, relation="add-remove-one")),
]


@pytest.mark.parametrize("parameter, call", BAD_INPUTS, ids=[f"{name}-{i}" for i, (name, _) in enumerate(BAD_INPUTS)])
def test_bad_input_raises_value_error_naming_the_parameter(parameter, call):
    with pytest.raises(ValueError, match=parameter):
        call()


@given(strategies.query_answer_pairs(st.integers(2, 8), sensitivity=0.5))
def test_query_answer_pairs_move_each_answer_by_at_most_the_sensitivity(pair):
    first, second = pair
    assert first.shape == second.shape and first.size >= 2
    assert np.all(np.abs(first - second) <= 0.5 * (1 + 1e-12))


def test_query_answer_pairs_refuse_a_bad_sensitivity():
    with pytest.raises(ValueError, match="sensitivity"):
        strategies.query_answer_pairs(5, sensitivity=0.0)
