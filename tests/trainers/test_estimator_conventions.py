"""scikit-learn's estimator checks on the DP trainers, and the conventions a DP estimator keeps.

The checks run on instances whose public configuration covers scikit-learn's test data: three
declared classes and, for the L-BFGS trainer, a feature bound above the norms of its blobs (the
PSGD trainers clip inputs to ``input_clip`` as part of their algorithm). Each check that cannot
apply to a DP estimator is listed with the reason; every other check must pass.
"""

import numpy as np
import pytest
import torch
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

import dpmech
from trainers.batched_logistic import BatchedLogisticRegression
from trainers.psgd import HuberSVMTrainer, SoftmaxSLPTrainer
from trainers.sklearn_adapter import LogisticRegressionTrainer

# The class set is public configuration (``num_classes``; labels 0, ..., C − 1): classes learnt
# from the labels present in y would make the released model's shape depend on the private data.
PUBLIC_CLASS_SET = {
    "check_classifiers_classes": "string labels: the classes are the public integers 0..num_classes-1, never read from y",
    "check_dtype_object": "y takes 4 values, one outside the declared num_classes = 3, and is refused with ValueError",
    "check_classifiers_train": "expects classes_ and the output shapes to follow the labels present in y (a binary "
                               "problem given to a declared 3-class model)",
}
LOGISTIC_ONLY = {
    "check_decision_proba_consistency": "a binary problem given to a declared 3-class model: predict_proba[:, 1] is "
                                        "one of three softmax outputs, not monotone in a binary decision function",
}


def _expected_failed_checks(estimator):
    if isinstance(estimator, LogisticRegressionTrainer):
        return PUBLIC_CLASS_SET | LOGISTIC_ONLY
    return PUBLIC_CLASS_SET


@parametrize_with_checks(
    [
        LogisticRegressionTrainer(num_classes=3, feature_bound=1e3),
        SoftmaxSLPTrainer(num_classes=3, epochs=2),
        HuberSVMTrainer(num_classes=3, epochs=2),
    ],
    expected_failed_checks=_expected_failed_checks,
)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


ESTIMATORS = [
    LogisticRegressionTrainer(num_classes=3),
    SoftmaxSLPTrainer(num_classes=3, epochs=1),
    HuberSVMTrainer(num_classes=3, epochs=1),
]


def _data(rows=30, columns=4, seed=0):
    rng = np.random.default_rng(seed)
    features = rng.normal(size=(rows, columns))
    features /= np.maximum(1.0, np.linalg.norm(features, axis=1, keepdims=True))
    return features, rng.integers(0, 3, size=rows)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=type)
def test_unfitted_estimators_raise_not_fitted_error(estimator):
    features, _ = _data()
    for method in ("predict", "decision_function"):
        with pytest.raises(NotFittedError):
            getattr(estimator, method)(features)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=type)
def test_fit_records_the_feature_count_and_predict_refuses_another(estimator):
    features, labels = _data()
    fitted = estimator.fit(features, labels)
    assert fitted.n_features_in_ == 4
    assert np.array_equal(fitted.classes_, np.arange(3))
    with pytest.raises(ValueError, match="features"):
        fitted.predict(features[:, :3])


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=type)
def test_labels_outside_the_public_class_set_are_refused_not_recoded(estimator):
    features, labels = _data()
    with pytest.raises(ValueError, match=r"y must be integers in \[0, 2\]"):
        estimator.fit(features, np.where(labels == 0, 3, labels))
    with pytest.raises(ValueError, match="Unknown label type"):
        estimator.fit(features, labels + 0.5)


def test_features_above_the_public_bound_are_refused_by_the_lbfgs_trainer():
    # scikit-learn's check data has norms far above 1: the default bound refuses it explicitly
    # instead of clipping behind the user's back.
    features, labels = _data()
    with pytest.raises(ValueError, match="feature_bound=1"):
        LogisticRegressionTrainer(num_classes=3).fit(3 * features, labels)


@pytest.mark.parametrize("estimator", ESTIMATORS[1:], ids=type)
def test_psgd_trainers_clip_inputs_to_the_public_clip_as_their_algorithm_states(estimator):
    features, labels = _data()
    scaled = estimator.fit(10 * features, labels).parameters_
    clipped = estimator.fit(dpmech.clip_features(10 * features, estimator.input_clip), labels).parameters_
    assert np.array_equal(scaled, clipped)


def test_batched_models_raise_not_fitted_error_and_check_the_feature_count():
    features, labels = _data()
    labels = labels % 2
    model = BatchedLogisticRegression()
    with pytest.raises(NotFittedError):
        model.decision_function(features)
    model.fit(features, labels, torch.ones((2, 30), dtype=torch.bool))
    assert model.n_features_in_ == 4
    with pytest.raises(ValueError, match="features"):
        model.predict(features[:, :3])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("estimator", ESTIMATORS, ids=type)
def test_fit_runs_under_the_requested_thread_pools_and_restores_them(estimator, threads, monkeypatch):
    from threadpoolctl import threadpool_info

    import trainers.psgd
    import trainers.sklearn_adapter

    estimator = clone(estimator)
    seen = []
    module = trainers.sklearn_adapter if isinstance(estimator, LogisticRegressionTrainer) else trainers.psgd
    target = "certify_minimisers" if module is trainers.sklearn_adapter else "projected_sgd"
    original = getattr(module, target)

    def recording(*args, **kwargs):
        seen.append((torch.get_num_threads(), [pool["num_threads"] for pool in threadpool_info()]))
        return original(*args, **kwargs)

    monkeypatch.setattr(module, target, recording)
    before = (torch.get_num_threads(), [pool["num_threads"] for pool in threadpool_info()])
    features, labels = _data()
    estimator.set_params(threads=threads).fit(features, labels)
    assert seen and seen[0][0] == threads and all(count <= threads for count in seen[0][1])
    assert (torch.get_num_threads(), [pool["num_threads"] for pool in threadpool_info()]) == before
    with pytest.raises(ValueError, match="threads"):
        estimator.set_params(threads=0).fit(features, labels)
