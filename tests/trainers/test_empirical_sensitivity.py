"""Every trainer's parameters move at most its declared sensitivity on searched neighbouring datasets.

The relation is replace-one (the relation of every bound in dpmech.sensitivity): D and D′ have the
same n and differ in one record. Hypothesis draws the configuration (tiny n down to 1, batch sizes
that do not divide n or exceed it, several epochs) and the pair from dpmech.verify's strategies:
records at the norm bound, the replaced record at the bound with another label (a negation half
the time), and, for PSGD, the replaced record moved into the ragged last batch of some epoch or to
any other position of the shuffle (:func:`dpmech.verify.search.with_replaced_record_at`).
``hypothesis.target`` climbs on measured/declared, as :func:`dpmech.verify.search.search_worst_neighbours`
does. A ratio above 1 is a privacy bug; PSGD's arithmetic rounding gets a 1e-9 relative slack, the
logistic regressions none beyond 1e-12 (their declared Δ + 2τ/λ already covers the solver).
"""

import numpy as np
import pytest
from hypothesis import given, target
from hypothesis import strategies as st

from dpmech.verify.search import with_replaced_record_at
from dpmech.verify.sensitivity import parameter_distance
from dpmech.verify.strategies import neighbouring_pairs
from trainers.batched_logistic import BatchedLogisticRegression
from trainers.psgd import HuberSVMTrainer, SoftmaxSLPTrainer, shuffled_batches
from trainers.sklearn_adapter import LogisticRegressionTrainer

from tests.profiles import examples


@st.composite
def psgd_cases(draw):
    # Tiny n (1–3) and up to 24: the under-noising of a one-record batch grows like n/6 here.
    n = draw(st.one_of(st.integers(1, 3), st.integers(1, 24)))
    # n − 1 leaves a one-record last batch, the case where averaging over the batch's own size
    # under-noises most; any other size, b > n included, the rest of the time.
    batch_size = draw(st.one_of(st.just(max(1, n - 1)), st.integers(1, n + 3)))
    epochs = draw(st.integers(1, 3))
    num_classes = draw(st.integers(2, 3))
    common = dict(num_classes=num_classes, regularization=draw(st.floats(0.1, 8.0)), input_clip=1.0,
                  projection_radius=draw(st.floats(0.05, 1.0)), epochs=epochs, batch_size=batch_size,
                  seed=draw(st.integers(0, 2**16)))
    if draw(st.booleans()):
        trainer = SoftmaxSLPTrainer(**common)
    else:
        trainer = HuberSVMTrainer(huber_h=draw(st.floats(0.05, 0.5)), **common)
    last_batches = sorted({int(i) for epoch in shuffled_batches(n, batch_size, epochs, trainer.seed) for i in epoch[-1]})
    positions = st.one_of(st.sampled_from(last_batches), st.integers(0, n - 1))
    # Records up to 3x the clip half the time: PSGD clips them explicitly to input_clip.
    scale = draw(st.sampled_from([1.0, 3.0]))
    pair = draw(with_replaced_record_at(neighbouring_pairs(n, 2, num_classes, scale), positions))
    return trainer, pair


@examples(0.3)
@given(psgd_cases())
def test_psgd_trainers_move_at_most_their_sensitivity(case):
    trainer, pair = case
    n = len(pair[0].labels)
    bound = trainer.sensitivity(n)
    distance = parameter_distance(trainer.train, pair)
    target(distance / bound, label="measured / declared")
    assert distance <= bound * (1 + 1e-9)


@st.composite
def logistic_cases(draw, max_n=6):
    n = draw(st.integers(1, max_n))
    num_classes = draw(st.integers(2, 4))
    regularization = draw(st.floats(0.05, 2.0))
    feature_bound = draw(st.sampled_from([0.5, 1.0, 2.0]))
    pair = draw(neighbouring_pairs(n, 2, num_classes, feature_bound))
    return num_classes, regularization, feature_bound, pair


@examples(0.3)
@given(logistic_cases())
def test_logistic_regression_moves_at_most_its_sensitivity(case):
    num_classes, regularization, feature_bound, pair = case
    trainer = LogisticRegressionTrainer(regularization=regularization, num_classes=num_classes, feature_bound=feature_bound)
    bound = trainer.sensitivity(len(pair[0].labels))
    distance = parameter_distance(trainer.train, pair)
    target(distance / bound, label="measured / declared")
    assert distance <= bound * (1 + 1e-12)


@examples(0.3)
@given(logistic_cases())
def test_batched_logistic_regression_moves_at_most_its_sensitivity(case):
    num_classes, regularization, feature_bound, ((features, labels), (neighbour_features, neighbour_labels)) = case
    n = len(labels)
    # One pool of n + 1 records and two models: D (the pool without the new record) and D′
    # (without the replaced one), so one fit trains both neighbours.
    index = int(np.flatnonzero(np.any(features != neighbour_features, axis=1) | (labels != neighbour_labels))[0]) \
        if np.any(features != neighbour_features) or np.any(labels != neighbour_labels) else 0
    pool = np.vstack([features, neighbour_features[index:index + 1]])
    pool_labels = np.concatenate([labels, neighbour_labels[index:index + 1]])
    membership = np.ones((2, n + 1), dtype=bool)
    membership[0, n] = False
    membership[1, index] = False
    trainer = BatchedLogisticRegression(regularization=regularization, num_classes=num_classes, feature_bound=feature_bound)
    parameters = trainer.fit(pool, pool_labels, membership).parameters_.numpy()
    bound = trainer.sensitivity(n)
    distance = float(np.linalg.norm((parameters[0] - parameters[1]).ravel()))
    target(distance / bound, label="measured / declared")
    assert distance <= bound * (1 + 1e-12)


@pytest.mark.parametrize("num_classes", [2, 3])
def test_logistic_trainers_refuse_records_above_the_feature_bound(num_classes):
    features = np.array([[0.6, 0.8], [0.6, 0.8000001], [0.0, 0.5]])
    labels = np.array([0, 1, 1])
    with pytest.raises(ValueError, match="feature_bound"):
        LogisticRegressionTrainer(num_classes=num_classes, feature_bound=1.0).fit(features, labels)
    with pytest.raises(ValueError, match="feature_bound"):
        BatchedLogisticRegression(num_classes=num_classes, feature_bound=1.0).fit(features, labels, np.ones((1, 3)))
