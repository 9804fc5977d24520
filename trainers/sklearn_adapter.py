"""scikit-learn adapter: L2-regularised binary and multinomial logistic regression (L-BFGS).

The objective is the one the sensitivity bounds are proved for,

    J(θ) = (1/n) Σ_i ℓ(θ; x̃_i, y_i) + (λ/2) ‖θ‖²,   x̃ = (x, 1),

with the intercept as the weight of an appended constant coordinate, so it is regularised and
the bound covers it. scikit-learn is called with ``fit_intercept=False`` on x̃ and
``C = dpmech.sensitivity.sklearn_c(λ, n) = 1/(nλ)``. (scikit-learn minimises C Σ ℓ_i + ½‖θ‖²;
FedAUX's public code passes C = 1/λ, whose minimiser has an n times larger sensitivity, and leaves
the intercept unregularised, which no strong-convexity bound covers; see
/work/shared/reference/formulas.md §2.3.) Because ‖x‖ <= b implies ‖x̃‖ <= sqrt(b² + 1), the
sensitivity is requested from dpmech with ``feature_bound = sqrt(b² + 1)``.

The class set is public configuration (``num_classes``), never read from the private labels: a
client that holds no record of some class still fits the C-class objective. scikit-learn infers
the classes from ``y``, so every declared class is given one zero-weight placeholder row; a zero
sample weight removes the row from the loss exactly (scikit-learn normalises by the sum of sample
weights, which stays n), so the minimiser is that of J.

Precision: scikit-learn's L-BFGS also stops on a relative objective decrease of 64·eps, before
``tol`` is reached; on digits heads with λ = 0.01 its max-abs gradient is ~1e-8 and its
parameters differ from the exact minimiser by up to ~3.5e-7 (measured against
:class:`trainers.batched_logistic.BatchedLogisticRegression`, which stops at gradient 1e-10).
The sensitivity bound is about the exact minimiser; an approximate minimiser within e of it has
sensitivity at most Δ + 2e.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.utils.validation import check_is_fitted

import dpmech.sensitivity
from dpmech import validation as check

from ._features import (
    as_class_labels,
    as_feature_matrix,
    require_norms_within,
    with_bias_coordinate,
)


class LogisticRegressionTrainer(ClassifierMixin, BaseEstimator):
    """Binary (``num_classes=2``) or multinomial (``num_classes>=3``) L2 logistic regression.

    Parameters
    ----------
    regularization : float > 0
        λ of the mean-form objective J.
    num_classes : int >= 2
        The public number of classes; labels are integers in [0, num_classes).
    feature_bound : float > 0
        Public bound b on ‖x‖₂. Rows above it raise ValueError (clip them first).
    tol, max_iter :
        L-BFGS stopping rule, tight by default so the released parameters are the minimiser the
        sensitivity bound is about (to ~1e-10 in gradient).

    Attributes after ``fit``: ``parameters_`` of shape (1, d+1) for binary or (C, d+1) for
    multinomial (last column = intercept), ``coef_``, ``intercept_``, ``classes_``.

    Sensitivity (replace-one, ``sensitivity(n)``): binary ``binary_logistic_regression`` = 2L/(nλ)
    (Chaudhuri, Monteleoni & Sarwate 2011, Cor. 8) and multinomial
    ``multinomial_logistic_regression`` = 2√2·L/(nλ) (formulas.md §2.5), both with
    L = sqrt(b² + 1).
    """

    def __init__(self, regularization=0.01, num_classes=2, feature_bound=1.0, tol=1e-10, max_iter=10000):
        self.regularization = regularization
        self.num_classes = num_classes
        self.feature_bound = feature_bound
        self.tol = tol
        self.max_iter = max_iter

    def _checked_config(self):
        regularization = float(check.positive("regularization", self.regularization))
        num_classes = check.integer_scalar("num_classes", self.num_classes, 2)
        feature_bound = float(check.positive("feature_bound", self.feature_bound))
        tol = float(check.positive("tol", self.tol))
        max_iter = check.integer_scalar("max_iter", self.max_iter, 1)
        return regularization, num_classes, feature_bound, tol, max_iter

    def fit(self, X, y):
        regularization, num_classes, feature_bound, tol, max_iter = self._checked_config()
        features = as_feature_matrix("X", X)
        labels = as_class_labels("y", y, features.shape[0], num_classes)
        require_norms_within("X", features, feature_bound)
        num_records = features.shape[0]
        augmented = with_bias_coordinate(features)
        placeholders = np.zeros((num_classes, augmented.shape[1]))
        model = LogisticRegression(
            C=dpmech.sensitivity.sklearn_c(regularization, num_records),
            fit_intercept=False,
            solver="lbfgs",
            tol=tol,
            max_iter=max_iter,
        )
        model.fit(
            np.vstack([augmented, placeholders]),
            np.concatenate([labels, np.arange(num_classes)]),
            sample_weight=np.concatenate([np.ones(num_records), np.zeros(num_classes)]),
        )
        self.parameters_ = model.coef_.copy()
        self.coef_ = self.parameters_[:, :-1]
        self.intercept_ = self.parameters_[:, -1]
        self.classes_ = np.arange(num_classes)
        self.n_iter_ = model.n_iter_
        return self

    def decision_function(self, X):
        check_is_fitted(self, "parameters_")
        scores = as_feature_matrix("X", X) @ self.coef_.T + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict_proba(self, X):
        scores = self.decision_function(X)
        if scores.ndim == 1:
            positive = expit(scores)
            return np.column_stack([1.0 - positive, positive])
        return softmax(scores, axis=1)

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def train(self, features, labels) -> np.ndarray:
        """The :class:`trainers.protocol.Trainer` entry point: fit and return ``parameters_``."""
        return self.fit(features, labels).parameters_.copy()

    def sensitivity(self, n) -> float:
        regularization, num_classes, feature_bound, _, _ = self._checked_config()
        if num_classes == 2:
            return dpmech.sensitivity.logistic_regression_sensitivity(
                regularization, n, feature_bound, regularized_intercept=True
            )
        return dpmech.sensitivity.multinomial_logistic_regression_sensitivity(
            regularization, n, feature_bound, num_classes=num_classes, regularized_intercept=True
        )
