"""Empirical sensitivity: scikit-learn logistic regression against dpmech.sensitivity's bounds.

DP-Helmet's PSGD is checked with the trainers' own PSGD in tests/trainers/test_verification.py.

The worst measured/bound ratios are printed (run with -s to see them).
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression

from dpmech import sensitivity
from dpmech.verify import SensitivityViolation, assert_sensitivity, empirical_sensitivity
from dpmech.verify.search import search_worst_neighbours, with_replaced_record_at
from dpmech.verify.strategies import neighbouring_pairs

SLACK = 1e-6  # relative, for L-BFGS stopped at tol = 1e-10


def sklearn_trainer(regularization, c=None):
    def train(features, labels):
        strength = sensitivity.sklearn_c(regularization, len(labels)) if c is None else c
        return LogisticRegression(C=strength, fit_intercept=False, tol=1e-10, max_iter=10_000).fit(features, labels).coef_

    return train


def all_classes(num_classes):
    return lambda pair: all(np.unique(d.labels).size == num_classes for d in pair)


@pytest.mark.parametrize("num_classes, regularization, n", [(2, 0.5, 6), (3, 0.2, 6), (5, 1.0, 8)])
def test_sklearn_logistic_regression_within_its_bound_on_searched_neighbours(num_classes, regularization, n):
    pairs = neighbouring_pairs(n, 2, num_classes, 1.0).filter(all_classes(num_classes))
    if num_classes == 2:
        bound = sensitivity.logistic_regression_sensitivity(regularization, n)
    else:
        bound = sensitivity.multinomial_logistic_regression_sensitivity(regularization, n)
        seed = sensitivity.multinomial_logistic_regression_sensitivity(regularization, n, num_classes=num_classes, bound="seed")
        assert bound <= seed  # 2√2/(λn) <= 2√C/(λn)
    report, worst_pair = search_worst_neighbours(sklearn_trainer(regularization), pairs, bound, max_examples=30)
    print(f"\nLR C={num_classes} lambda={regularization} n={n}: worst measured/bound = {report.ratio:.4f}")
    assert report.ratio <= 1 + SLACK
    assert report.ratio > 0.05  # the search moved the minimiser at all
    assert_sensitivity(sklearn_trainer(regularization), [worst_pair], bound, atol=SLACK * bound)


def test_fedaux_c_is_refuted_by_the_checker():
    # C = 1/λ is the objective with λ/n: the minimiser moves past 2/(λn) on a flipped label at the norm bound.
    n, regularization = 20, 1.0
    rng = np.random.default_rng(0)
    features = rng.normal(size=(n, 2))
    features /= np.linalg.norm(features, axis=1, keepdims=True)
    labels = (features[:, 0] > 0).astype(int)
    neighbour_labels = labels.copy()
    neighbour_labels[0] = 1 - labels[0]
    pair = ((features, labels), (features, neighbour_labels))
    bound = sensitivity.logistic_regression_sensitivity(regularization, n)
    with pytest.raises(SensitivityViolation) as caught:
        assert_sensitivity(sklearn_trainer(regularization, c=1.0 / regularization), [pair], bound)
    assert caught.value.report.ratio > 1.5
    assert empirical_sensitivity(sklearn_trainer(regularization), [pair], bound).ratio < 1


BAD_INPUTS = [
    ("bound", lambda: empirical_sensitivity(lambda x, y: x, [((1, 1), (1, 1))], 0.0)),
    ("pairs", lambda: empirical_sensitivity(lambda x, y: np.zeros(1), [], 1.0)),
    ("pair", lambda: empirical_sensitivity(lambda x, y: np.zeros(1), [3], 1.0)),
    ("train", lambda: empirical_sensitivity(None, [((1, 1), (1, 1))], 1.0)),
    ("atol", lambda: assert_sensitivity(lambda x, y: np.zeros(1), [((1, 1), (1, 1))], 1.0, atol=-1.0)),
    ("max_examples", lambda: search_worst_neighbours(lambda x, y: np.zeros(1), neighbouring_pairs(2, 1), 1.0, max_examples=0)),
    ("pairs", lambda: search_worst_neighbours(lambda x, y: np.zeros(1), [1, 2], 1.0)),
]


@pytest.mark.parametrize("parameter, call", BAD_INPUTS, ids=[f"{name}-{i}" for i, (name, _) in enumerate(BAD_INPUTS)])
def test_bad_input_raises_value_error_naming_the_parameter(parameter, call):
    with pytest.raises(ValueError, match=parameter):
        call()


@given(st.data())
def test_replaced_record_moves_to_the_drawn_row_and_pairs_stay_neighbours(data):
    n = data.draw(st.integers(1, 6))
    position = data.draw(st.integers(0, n - 1))
    first, second = data.draw(with_replaced_record_at(neighbouring_pairs(n, 2, 3, 1.0), st.just(position)))
    differs = np.flatnonzero(np.any(first.features != second.features, axis=1) | (first.labels != second.labels))
    assert differs.size == 0 or differs.tolist() == [position]
    assert np.all(np.linalg.norm(first.features, axis=1) <= 1.0) and np.all(np.linalg.norm(second.features, axis=1) <= 1.0)


@given(st.data())
def test_replaced_record_position_refuses_pairs_that_are_not_replace_one(data):
    dataset = (np.zeros((3, 2)), np.zeros(3, dtype=int))
    two_changes = (np.ones((3, 2)), np.zeros(3, dtype=int))
    with pytest.raises(ValueError, match="replace-one"):
        data.draw(with_replaced_record_at(st.just((dataset, two_changes)), st.just(0)))
    with pytest.raises(ValueError, match="positions"):
        data.draw(with_replaced_record_at(st.just((dataset, dataset)), st.just(3)))
