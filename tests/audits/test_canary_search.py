"""Canary search: valid neighbours, influence against exact retraining, searched canaries against the plain ones,
and the label-fixed logistic-regression sensitivity against exact retraining of adversarial neighbours."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dpmech
import dpmech.sensitivity
from audits.attacks.canary_search import (
    Canary,
    LogisticHead,
    plain_canaries,
    search_logistic_canaries,
    user_relabellings,
)
from audits.attacks.pipelines.dphelmet import search_dphelmet_canary
from audits.attacks.pipelines.fedauxfdp import search_fedauxfdp_canary
from trainers.pipelines.targets import pipeline_config
from tests.profiles import examples
from trainers.data import PrivateData, load_dataset
from trainers.pipelines import dphelmet, fedauxfdp
from trainers.sklearn_adapter import LogisticRegressionTrainer


@pytest.fixture(scope="module")
def digits():
    return load_dataset("digits")


def small_data(rng, n, d, num_classes, bound):
    features = dpmech.clip_features(rng.normal(scale=bound, size=(n, d)), bound)
    labels = np.concatenate([np.arange(num_classes), rng.integers(0, num_classes, n - num_classes)])
    return PrivateData(features, labels)


def yesterdays_canary(local, bound, num_classes):
    """The audits' canary before the search: record 0 at the bound opposite to itself, label shifted by C//2."""
    direction = -local.features[0] / np.linalg.norm(local.features[0])
    return Canary(0, bound * direction, int((local.labels[0] + num_classes // 2) % num_classes), math.nan, "old")


def assert_valid_neighbour(canary, local, bound, num_classes):
    neighbour = canary.neighbour(local)
    assert len(neighbour) == len(local)
    assert np.linalg.norm(canary.feature) <= bound
    assert 0 <= canary.label < num_classes
    changed = np.flatnonzero(np.any(neighbour.features != local.features, axis=1) | (neighbour.labels != local.labels))
    assert set(changed) <= {canary.index}


@examples(0.1)
@given(seed=st.integers(0, 2**32 - 1), regularization=st.floats(0.05, 3.0), bound=st.floats(0.5, 2.0),
       n=st.integers(8, 30))
def test_multinomial_influence_search_returns_valid_neighbours_that_retraining_confirms(seed, regularization, bound, n):
    rng = np.random.default_rng(seed)
    local = small_data(rng, n, 3, 3, bound)
    trainer = LogisticRegressionTrainer(regularization, 3, bound)
    theta = trainer.train(local.features, local.labels)
    head = LogisticHead(theta, local.features, local.labels, regularization, 1.0)
    proposals = search_logistic_canaries([head], local, bound, 3, rng, num_records=2, num_proposals=2)
    for canary in proposals:
        assert_valid_neighbour(canary, local, bound, 3)
        neighbour = canary.neighbour(local)
        exact = np.linalg.norm(trainer.train(neighbour.features, neighbour.labels) - theta)
        # First-order influence: accurate to second order in the (small) displacement.
        assert exact == pytest.approx(canary.predicted, rel=0.25, abs=1e-6)
        assert exact <= trainer.sensitivity(n)


@examples(0.2)
@given(seed=st.integers(0, 2**32 - 1), regularization=st.floats(0.02, 3.0), bound=st.floats(0.3, 3.0),
       n=st.integers(4, 20))
def test_label_fixed_sensitivity_bounds_the_searched_and_random_replacements(seed, regularization, bound, n):
    # Binary LR where the replaced record keeps label 1 (FedAUXfdp's scoring head): the searched
    # worst replacement and random ones, retrained exactly, stay within the label-fixed bound.
    rng = np.random.default_rng(seed)
    local = PrivateData(dpmech.clip_features(rng.normal(scale=bound, size=(n, 2)), bound), np.ones(n, dtype=np.int64))
    negatives = dpmech.clip_features(rng.normal(scale=bound, size=(n, 2)), bound)
    features = np.vstack([local.features, negatives])
    labels = np.concatenate([local.labels, np.zeros(n, dtype=np.int64)])
    trainer = LogisticRegressionTrainer(regularization, 2, bound)
    theta = trainer.train(features, labels)[0]
    head = LogisticHead(theta, features, labels, regularization, 1.0, fixed_label=1)
    canaries = search_logistic_canaries([head], local, bound, 2, rng, num_records=2, num_proposals=1)
    canaries += [Canary(int(rng.integers(n)), dpmech.clip_features(rng.normal(size=(1, 2)) * 2 * bound, bound)[0], 1,
                        math.nan, "random")]
    bound_with_optimisation_error = dpmech.sensitivity.approximate_minimizer_sensitivity(
        dpmech.sensitivity.fixed_label_logistic_regression_sensitivity(regularization, 2 * n, bound), trainer.gradient_tolerance, regularization)
    for canary in canaries:
        moved = features.copy()
        moved[canary.index] = canary.feature
        displacement = np.linalg.norm(trainer.train(moved, labels)[0] - theta)
        assert displacement <= bound_with_optimisation_error
    assert bound_with_optimisation_error < trainer.sensitivity(2 * n)


def test_plain_canaries_and_user_relabellings_are_valid_neighbours():
    rng = np.random.default_rng(3)
    local = small_data(rng, 12, 4, 3, 1.0)
    canaries = plain_canaries(local, 1.0, 3, num_records=2)
    assert len(canaries) == 2 * 2 * 2
    for canary in canaries:
        assert_valid_neighbour(canary, local, 1.0, 3)
        assert canary.label != local.labels[canary.index]
    proposals = user_relabellings(local, rng.normal(size=(3, 5)), 1.0, 3)
    assert len(proposals) == 2 * 3
    for _, neighbour in proposals:
        assert len(neighbour) == len(local)
        assert np.all(np.linalg.norm(neighbour.features, axis=1) <= 1.0)
    with pytest.raises(ValueError, match="feature_bound"):
        user_relabellings(local, rng.normal(size=(3, 5)), 0.1, 3)


def test_searched_fedauxfdp_canary_moves_the_whitened_heads_further_than_the_plain_canary(digits):
    config = pipeline_config("fedauxfdp", 1.0, 1e-5)
    prepared = fedauxfdp.prepare_round(digits, config, 0)
    settings = fedauxfdp.client_settings(config, prepared.num_classes)
    client = int(np.argmax(np.bincount(prepared.assignment, minlength=config.num_clients)))
    local = prepared.features.private.subset(np.flatnonzero(prepared.assignment == client))
    negative = prepared.features.negative.features
    without = fedauxfdp.train_client_heads(local, negative, settings)
    mechanisms = fedauxfdp.head_mechanisms(without, settings)
    search, with_canary = search_fedauxfdp_canary(local, negative, without, mechanisms, settings,
                                                  np.random.default_rng(0))
    assert_valid_neighbour(search.canary, local, config.feature_bound, prepared.num_classes)

    def whitened(canary):
        moved = fedauxfdp.train_client_heads(canary.neighbour(local), negative, settings)
        return math.hypot(np.linalg.norm(moved.score_head - without.score_head) / mechanisms.score.event.sigma,
                          np.linalg.norm(moved.class_head - without.class_head) / mechanisms.class_.event.sigma)

    assert search.displacement == pytest.approx(whitened(search.canary), rel=1e-6)
    assert np.array_equal(with_canary.class_head,
                          fedauxfdp.train_client_heads(search.canary.neighbour(local), negative, settings).class_head)
    assert search.displacement > 1.05 * whitened(yesterdays_canary(local, config.feature_bound, prepared.num_classes))
    assert search.displacement <= math.hypot(mechanisms.score.event.mu, mechanisms.class_.event.mu)


@pytest.mark.parametrize("unit", ["record", "user"])
def test_searched_dphelmet_canary_moves_the_user_model_further_than_the_plain_canary(digits, unit):
    config = dataclasses.replace(pipeline_config("dphelmet", 1.0, 1e-5), privacy_unit=unit)
    prepared = dphelmet.prepare_users(digits, config, 0)
    local = prepared.local(0)
    search = search_dphelmet_canary(local, config, prepared.num_classes, 7, np.random.default_rng(0))
    trainer = dphelmet.user_trainer(config, prepared.num_classes, 7)
    if unit == "record":
        assert_valid_neighbour(search.result.canary, local, config.feature_bound, prepared.num_classes)
        old = yesterdays_canary(local, config.feature_bound, prepared.num_classes).neighbour(local)
    else:
        old = PrivateData(local.features, (local.labels + 1) % prepared.num_classes)
    old_displacement = np.linalg.norm(trainer.train(old.features, old.labels) - search.model_without)
    assert search.result.displacement == pytest.approx(np.linalg.norm(search.model_with - search.model_without))
    assert search.result.displacement > (1.05 if unit == "record" else 1.5) * old_displacement
    assert search.result.displacement <= prepared.sensitivity


def test_dphelmet_huber_svm_search_uses_plain_proposals_within_the_bound(digits):
    config = dataclasses.replace(pipeline_config("dphelmet", 1.0, 1e-5), model="huber_svm", regularization=10.0,
                                 projection_radius=0.06)
    prepared = dphelmet.prepare_users(digits, config, 0)
    local = prepared.local(0)
    search = search_dphelmet_canary(local, config, prepared.num_classes, 3, np.random.default_rng(0))
    assert_valid_neighbour(search.result.canary, local, config.feature_bound, prepared.num_classes)
    assert search.result.canary.kind in ("opposite direction", "own direction")
    assert search.result.retrained == 2 * (prepared.num_classes - 1)
    assert 0.0 < search.result.displacement <= prepared.sensitivity


@examples(0.1)
@given(seed=st.integers(0, 2**32 - 1), num_classes=st.sampled_from([1, 2, 4]), fixed=st.booleans())
def test_input_gradient_products_match_central_differences_of_the_parameter_gradient(seed, num_classes, fixed):
    # vᵀ d∇ℓ(x)/dx against (vᵀ∇ℓ(x + h e_j) − vᵀ∇ℓ(x − h e_j)) / 2h, binary (num_classes = 1) and multinomial heads.
    rng = np.random.default_rng(seed)
    dimension, rows = 5, 3
    shape = (dimension + 1,) if num_classes == 1 else (num_classes, dimension + 1)
    head = LogisticHead(rng.normal(size=shape), rng.normal(size=(4, dimension)), np.zeros(4, dtype=np.int64), 1.0, 1.0,
                        fixed_label=1 if fixed else None)
    features = rng.normal(size=(rows, dimension))
    labels = rng.integers(0, max(num_classes, 2), rows)
    vectors = rng.normal(size=(rows, int(np.prod(shape))))
    step = 1e-6
    differences = np.stack([
        np.sum(vectors * (head.gradients(features + step * unit, labels) - head.gradients(features - step * unit, labels)),
               axis=1) / (2 * step)
        for unit in np.eye(dimension)], axis=1)
    np.testing.assert_allclose(head.input_gradient_products(features, labels, vectors), differences, rtol=1e-6, atol=1e-7)
