"""scikit-learn adapter: L2-regularised binary and multinomial logistic regression (L-BFGS).

The objective is the one the sensitivity bounds are proved for,

    J(θ) = (1/n) Σ_i ℓ(θ; x̃_i, y_i) + (λ/2) ‖θ‖²,   x̃ = (x, 1),

with the intercept as the weight of an appended constant coordinate, so it is regularised and
the bound covers it. scikit-learn is called with ``fit_intercept=False`` on x̃ and
``C = dpmech.sensitivity.sklearn_c(λ, n) = 1/(nλ)``. (scikit-learn minimises C Σ ℓ_i + ½‖θ‖²;
FedAUX's public code (Sattler et al. 2021) passes C = 1/λ, i.e. the sum-form objective
Σ ℓ_i + (λ/2)‖θ‖², whose minimiser has an n times larger sensitivity, 2L/λ, and leaves the
intercept unregularised, which no strong-convexity bound covers.) Because ‖x‖ <= b implies ‖x̃‖ <= sqrt(b² + 1), the
sensitivity is requested from dpmech with ``feature_bound = sqrt(b² + 1)``.

The class set is public configuration (``num_classes``), never read from the private labels: a
client that holds no record of some class still fits the C-class objective. scikit-learn infers
the classes from ``y``, so every declared class is given one zero-weight placeholder row; a zero
sample weight removes the row from the loss exactly (scikit-learn normalises by the sum of sample
weights, which stays n), so the minimiser is that of J.

Precision: scikit-learn's L-BFGS also stops on a relative objective decrease of 64·eps, before
``tol`` is reached (on digits heads with λ = 0.01 its max-abs gradient is ~1e-8), so its answer
certifies nothing. After it, ``fit`` evaluates ∇J(θ̂) in float64 and refines θ̂ by Newton steps
(:func:`trainers.batched_logistic.certify_minimisers`) until ‖∇J(θ̂)‖₂ <= τ is certified,
rounding error included, or raises RuntimeError. Then ‖θ̂ − θ*‖₂ <= τ/λ by strong convexity and
``sensitivity(n)`` reports Δ + 2τ/λ (:func:`dpmech.sensitivity.approximate_minimizer_sensitivity`).
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression

import dpmech.sensitivity
from dpmech import validation as check

from ._features import prediction_data, require_norms_within, training_data, with_bias_coordinate
from .batched_logistic import certify_minimisers, logistic_objective
from .threads import limited_threads


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
        L-BFGS stopping rule (scikit-learn's; it certifies nothing).
    gradient_tolerance : float > 0
        τ, the public gradient tolerance: ``fit`` certifies ‖∇J(θ̂)‖₂ <= τ in float64 (Newton
        refinement after L-BFGS, at most ``max_newton_iter`` steps, else RuntimeError), and
        ``sensitivity`` adds 2τ/λ. The default 1e-9 makes 2τ/λ a fraction τn/L of the exact bound
        2L/(nλ): 7.1e-10·n for binary LR with ‖x‖ <= 1 (L = √2; 7e-6 at n = 10⁴), half that for
        multinomial (L = 2).
    multinomial_bound : "tight" or "seed"
        Which proven multinomial bound ``sensitivity`` reports (see
        :func:`dpmech.sensitivity.multinomial_logistic_regression_sensitivity`).
    threads : int >= 1 or None
        Threads of the BLAS/OpenMP and torch pools during ``fit`` (:func:`trainers.threads.limited_threads`;
        None leaves them alone).

    Attributes after ``fit``: ``parameters_`` of shape (1, d+1) for binary or (C, d+1) for
    multinomial (last column = intercept), ``coef_``, ``intercept_``, ``classes_`` (always
    ``arange(num_classes)``: the class set is public, never read from ``y``), ``n_features_in_``.
    Prediction before ``fit`` raises ``sklearn.exceptions.NotFittedError``. scikit-learn's
    estimator checks pass except those that assume classes learnt from ``y``
    (tests/trainers/test_estimator_conventions.py lists them with the reasons).

    Sensitivity (replace-one, ``sensitivity(n)``): Δ + 2τ/λ, with Δ the exact minimiser's binary
    ``logistic_regression_sensitivity`` = 2L/(nλ) (Chaudhuri, Monteleoni & Sarwate 2011, Cor. 8)
    or multinomial ``multinomial_logistic_regression_sensitivity`` = 2√2·L/(nλ) (the √2 is
    ‖p − e_y‖₂ <= √2; see that function), both with L = sqrt(b² + 1), and 2τ/λ the certified
    optimisation error of both neighbours' releases.
    """

    def __init__(self, regularization=0.01, num_classes=2, feature_bound=1.0, tol=1e-10, max_iter=10000,
                 gradient_tolerance=1e-9, max_newton_iter=20, multinomial_bound="tight", threads=1):
        self.regularization = regularization
        self.num_classes = num_classes
        self.feature_bound = feature_bound
        self.tol = tol
        self.max_iter = max_iter
        self.gradient_tolerance = gradient_tolerance
        self.max_newton_iter = max_newton_iter
        self.multinomial_bound = multinomial_bound
        self.threads = threads

    def _checked_config(self):
        regularization = float(check.positive("regularization", self.regularization))
        num_classes = check.integer_scalar("num_classes", self.num_classes, 2)
        feature_bound = float(check.positive("feature_bound", self.feature_bound))
        tol = float(check.positive("tol", self.tol))
        max_iter = check.integer_scalar("max_iter", self.max_iter, 1)
        return regularization, num_classes, feature_bound, tol, max_iter

    def fit(self, X, y):
        with limited_threads(self.threads):
            return self._fit(X, y)

    def _fit(self, X, y):
        regularization, num_classes, feature_bound, tol, max_iter = self._checked_config()
        gradient_tolerance = float(check.positive("gradient_tolerance", self.gradient_tolerance))
        max_newton_iter = check.integer_scalar("max_newton_iter", self.max_newton_iter, 1)
        check.choice("multinomial_bound", self.multinomial_bound, dpmech.sensitivity.MULTINOMIAL_BOUNDS)
        features, labels = training_data(self, X, y, num_classes)
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
        weights = torch.full((1, num_records), 1.0 / num_records, dtype=torch.float64)
        objective = logistic_objective(torch.as_tensor(augmented), torch.as_tensor(labels), weights, regularization,
                                       num_classes)
        start = torch.as_tensor(model.coef_, dtype=torch.float64)[None]
        refined, self.n_newton_iter_, self.gradient_norm_bound_ = certify_minimisers(
            objective, start if num_classes > 2 else start[0], gradient_tolerance, max_newton_iter
        )
        self.parameters_ = refined.reshape(model.coef_.shape).numpy()
        self.coef_ = self.parameters_[:, :-1]
        self.intercept_ = self.parameters_[:, -1]
        self.classes_ = np.arange(num_classes)
        self.n_iter_ = model.n_iter_
        return self

    def decision_function(self, X):
        scores = prediction_data(self, X) @ self.coef_.T + self.intercept_
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict_proba(self, X):
        scores = self.decision_function(X)
        if scores.ndim == 1:
            positive = expit(scores)
            return np.column_stack([1.0 - positive, positive])
        return softmax(scores, axis=1)

    def predict(self, X):
        # Scores first: they raise NotFittedError before ``classes_`` is looked up.
        scores = self.predict_proba(X)
        return self.classes_[np.argmax(scores, axis=1)]

    def train(self, features, labels) -> np.ndarray:
        """The :class:`trainers.protocol.Trainer` entry point: fit and return ``parameters_``."""
        return self.fit(features, labels).parameters_.copy()

    def sensitivity(self, n) -> float:
        """Δ + 2τ/λ on n records, replace-one (class docstring)."""
        regularization, num_classes, feature_bound, _, _ = self._checked_config()
        gradient_tolerance = float(check.positive("gradient_tolerance", self.gradient_tolerance))
        if num_classes == 2:
            exact = dpmech.sensitivity.logistic_regression_sensitivity(
                regularization, n, feature_bound, regularized_intercept=True
            )
        else:
            exact = dpmech.sensitivity.multinomial_logistic_regression_sensitivity(
                regularization, n, feature_bound, num_classes=num_classes, regularized_intercept=True,
                bound=self.multinomial_bound,
            )
        return dpmech.sensitivity.approximate_minimizer_sensitivity(exact, gradient_tolerance, regularization)
