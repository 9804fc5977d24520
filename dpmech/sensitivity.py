"""L2 sensitivity bounds of regularised empirical risk minimisers, and the conventions they rest on.

All bounds are for J(θ) = (1/n) Σ ℓ(θ; x_i, y_i) + (λ/2)‖θ‖² with
‖x_i‖ <= feature_bound, a public constant (clip with
:func:`dpmech.clipping.clip_features`), under the replace-one neighbouring
relation: two datasets of the same size n that differ in one record.
"""

from __future__ import annotations

import math

import numpy as np

from . import validation as check


def sklearn_c(regularization, n):
    """scikit-learn's ``C`` for the mean-form objective with L2 strength λ on n records.

    scikit-learn minimises C·Σ ℓ_i + ½‖θ‖², which is n·C times
    (1/n)Σ ℓ_i + (1/(2nC))‖θ‖², so the objective J above is C = 1/(nλ).
    FedAUX's public code uses C = 1/λ, i.e. the regulariser λ/n, whose
    sensitivity bound is 2/λ rather than 2/(nλ): its noise is n times too small.
    """
    regularization = check.positive("regularization", regularization)
    n = check.integer_at_least("n", n, 1)
    return 1.0 / (n * regularization)


SEED_BOUND = "seed"
TIGHT_BOUND = "tight"
MULTINOMIAL_BOUNDS = (TIGHT_BOUND, SEED_BOUND)


def _input_norm_bound(feature_bound, regularized_intercept) -> float:
    """Bound on ‖x̃‖ for the input the weights multiply: ‖x‖ <= feature_bound, plus a constant 1 if the intercept is a weight.

    A regularised intercept is the weight of a constant input coordinate 1,
    so x̃ = (x, 1) and ‖x̃‖ <= √(feature_bound² + 1). An intercept that is
    fitted but not regularised (scikit-learn's ``fit_intercept=True``) is not
    covered by any bound here: the objective is not strongly convex in it.
    Append a constant column and fit without intercept instead.
    """
    feature_bound = _scalar_positive("feature_bound", feature_bound)
    regularized_intercept = check.boolean("regularized_intercept", regularized_intercept)
    return math.hypot(feature_bound, 1.0) if regularized_intercept else feature_bound


def _scalar_positive(name, value) -> float:
    value = check.positive(name, value)
    if np.ndim(value):
        raise ValueError(f"{name} must be a single finite number > 0 (got an array of shape {np.shape(value)})")
    return float(value)


def regularized_erm_sensitivity(lipschitz, regularization, n) -> float:
    """L2 sensitivity 2L/(nλ) of the exact minimiser of a λ-strongly convex regularised ERM objective.

    Chaudhuri, Monteleoni & Sarwate (JMLR 2011), Corollary 8 and its proof:
    for J(θ) = (1/n)Σ ℓ(θ; z_i) + (λ/2)‖θ‖² with every ℓ(·; z) convex,
    differentiable and L-Lipschitz in θ, the minimisers on two datasets that
    differ in one record (replace-one) satisfy ‖θ* − θ'*‖ <= 2L/(nλ).
    The bound is for the exact argmin: an optimiser stopped early is not
    covered (use :func:`psgd_bolt_on_sensitivity` for projected SGD).
    Every released parameter must be regularised.

    Args:
        lipschitz: L > 0, the Lipschitz constant of each ℓ(·; z) in θ.
        regularization: λ > 0.
        n: number of records, n >= 1.
    """
    lipschitz = _scalar_positive("lipschitz", lipschitz)
    regularization = _scalar_positive("regularization", regularization)
    n = check.integer_scalar("n", n, 1)
    return 2.0 * lipschitz / (n * regularization)


def logistic_regression_sensitivity(regularization, n, feature_bound=1.0, *, regularized_intercept=False) -> float:
    """L2 sensitivity of regularised binary logistic regression: 2·‖x̃‖max/(nλ).

    The logistic loss log(1 + e^{−y θ·x̃}) has gradient −y σ(−y θ·x̃) x̃, of
    norm at most ‖x̃‖, so :func:`regularized_erm_sensitivity` applies with
    L = ‖x̃‖max (Chaudhuri et al. 2011, Cor. 8: 2/(nλ) for ‖x‖ <= 1; the
    scoring model of FedAUX, Sattler et al. 2021). Replace-one.

    With scikit-learn, fit ``LogisticRegression(C=sklearn_c(λ, n),
    fit_intercept=False)`` on features clipped to ``feature_bound`` (with a
    constant column appended when ``regularized_intercept``). FedAUX's
    public code uses C = 1/λ, which is the objective with λ/n, whose
    sensitivity is 2/λ, n times larger than the noise it adds for.

    Args:
        regularization: λ > 0 of the mean-form objective.
        n: number of records, n >= 1.
        feature_bound: public bound on ‖x‖, > 0.
        regularized_intercept: the intercept is a regularised weight of a
            constant input 1, so ‖x̃‖ <= √(feature_bound² + 1).
    """
    return regularized_erm_sensitivity(_input_norm_bound(feature_bound, regularized_intercept), regularization, n)


def multinomial_logistic_regression_sensitivity(
    regularization, n, feature_bound=1.0, *, num_classes=None, regularized_intercept=False, bound=TIGHT_BOUND
) -> float:
    """L2 sensitivity of regularised multinomial (softmax) logistic regression with C weight vectors.

    The gradient of the cross-entropy in the (C, d) weight matrix W is
    (p − e_y) x̃ᵀ, whose Frobenius norm is ‖p − e_y‖·‖x̃‖, and
    ‖p − e_y‖² = (1 − p_y)² + Σ_{j≠y} p_j² <= 2(1 − p_y)² <= 2. So the loss
    is √2·‖x̃‖-Lipschitz and :func:`regularized_erm_sensitivity` gives

    * ``bound="tight"`` (default): 2√2·‖x̃‖max/(nλ), independent of C;
    * ``bound="seed"``: 2√C·‖x̃‖max/(nλ), FedAUXfdp's Theorem 1 (Hoech et al.
      2022, seed 000, stated for ‖x‖ <= 1, scaled here by ‖x̃‖max). It is
      valid, since √C >= √2, but looser for C > 2; it stays available to
      reproduce the paper.

    Replace-one. The regulariser must cover every released weight (see
    :func:`logistic_regression_sensitivity` for intercepts and scikit-learn).

    Args:
        regularization: λ > 0.
        n: number of records, n >= 1.
        feature_bound: public bound on ‖x‖, > 0.
        num_classes: C >= 2; required for ``bound="seed"``, checked if given.
        regularized_intercept: as in :func:`logistic_regression_sensitivity`.
        bound: ``"tight"`` or ``"seed"``.
    """
    bound = check.choice("bound", bound, MULTINOMIAL_BOUNDS)
    if num_classes is not None:
        num_classes = check.integer_scalar("num_classes", num_classes, 2)
    if bound == SEED_BOUND:
        if num_classes is None:
            raise ValueError("num_classes must be an integer >= 2 when bound='seed' (got None)")
        gradient_factor = math.sqrt(num_classes)
    else:
        gradient_factor = math.sqrt(2.0)
    lipschitz = gradient_factor * _input_norm_bound(feature_bound, regularized_intercept)
    return regularized_erm_sensitivity(lipschitz, regularization, n)


def psgd_bolt_on_sensitivity(lipschitz, strong_convexity, n) -> float:
    """L2 sensitivity 2L/(nΛ) of projected SGD on a strongly convex objective (bolt-on DP).

    Wu, Li, Kumar, Chaudhuri, Jha & Naughton (SIGMOD 2017), the strongly
    convex case of their PSGD analysis; DP-Helmet (seed 002) Thm 3.12.
    Assumptions: each per-record objective f(θ; z) = ℓ(θ; z) + (Λ/2)‖θ‖² is
    Λ-strongly convex, β-smooth and L-Lipschitz on the ball of radius R;
    PSGD starts from the same point on both datasets, visits the records in
    the same data-independent order, one record per step, for any number of
    passes, uses η_t = min(1/β, 1/(Λt)) with t = 1, 2, … the global step,
    and projects onto the R-ball after every step. Replace-one.

    tensorflow/privacy's BoltOn divides this bound by the batch size; that
    is not covered by the theorem and under-noises by the batch size.

    Args:
        lipschitz: L > 0 on the R-ball (including the regulariser's ΛR).
        strong_convexity: Λ > 0.
        n: number of records, n >= 1.
    """
    lipschitz = _scalar_positive("lipschitz", lipschitz)
    strong_convexity = _scalar_positive("strong_convexity", strong_convexity)
    n = check.integer_scalar("n", n, 1)
    return 2.0 * lipschitz / (n * strong_convexity)


def softmax_slp_lipschitz(feature_bound, radius, regularization, *, regularized_intercept=True) -> float:
    """L = √2·c' + RΛ of DP-Helmet's Softmax-SLP objective on the R-ball (seed 002, Thm 4.1).

    Per record, f(W; x, y) = CE(softmax(W x̃), y) + (Λ/2)‖W‖²_F. The gradient
    is (p − e_y) x̃ᵀ + ΛW, of norm at most √2·c' + ΛR for ‖W‖_F <= R, with
    c' = √(c² + 1) when the bias is a regularised weight of a constant
    input (DP-Helmet's model; its code uses c, which omits the bias input).
    """
    radius = _scalar_positive("radius", radius)
    regularization = _scalar_positive("regularization", regularization)
    return math.sqrt(2.0) * _input_norm_bound(feature_bound, regularized_intercept) + radius * regularization


def softmax_slp_smoothness(feature_bound, regularization, *, regularized_intercept=True) -> float:
    """β = c'²/2 + Λ, a smoothness constant of the Softmax-SLP objective.

    The Hessian of the cross-entropy in W is (diag(p) − ppᵀ) ⊗ x̃x̃ᵀ; by
    Gershgorin each eigenvalue of diag(p) − ppᵀ is at most
    max_i 2 p_i (1 − p_i) <= 1/2, so β <= ‖x̃‖²/2 + Λ. DP-Helmet's code uses
    a larger β, which only shortens the steps.
    """
    regularization = _scalar_positive("regularization", regularization)
    return 0.5 * _input_norm_bound(feature_bound, regularized_intercept) ** 2 + regularization


def softmax_slp_sensitivity(regularization, n, feature_bound, radius, *, regularized_intercept=True) -> float:
    """Δ = 2(√2·c' + RΛ)/(nΛ) of DP-Helmet's Softmax-SLP-SGD (seed 002, Thm 4.1).

    :func:`psgd_bolt_on_sensitivity` with L from :func:`softmax_slp_lipschitz`;
    one bound for all C classes (no √C factor). c' = √(c² + 1) when the bias
    is a regularised input coordinate. PSGD must use η_t = min(1/β, 1/(Λt))
    with β from :func:`softmax_slp_smoothness` and project (W, b) onto the
    Frobenius R-ball after every step. Replace-one.
    """
    lipschitz = softmax_slp_lipschitz(feature_bound, radius, regularization, regularized_intercept=regularized_intercept)
    return psgd_bolt_on_sensitivity(lipschitz, regularization, n)


def huber_svm_lipschitz(feature_bound, radius, regularization, *, regularized_intercept=True) -> float:
    """L = c' + RΛ of one one-vs-rest Huber-SVM objective on the R-ball (DP-Helmet Example 3.16).

    The Huber loss has |ℓ'(z)| <= 1 and z = y θ·x̃, so its gradient has norm
    at most c' = ‖x̃‖max; the regulariser adds ΛR on the R-ball.
    """
    radius = _scalar_positive("radius", radius)
    regularization = _scalar_positive("regularization", regularization)
    return _input_norm_bound(feature_bound, regularized_intercept) + radius * regularization


def huber_svm_smoothness(feature_bound, regularization, huber_width, *, regularized_intercept=True) -> float:
    """β = c'²/(2h) + Λ of one Huber-SVM objective (DP-Helmet Example 3.16; tensorflow/privacy StrongConvexHuber).

    The Huber loss with width h has ℓ'' <= 1/(2h), so the Hessian is at most
    ‖x̃‖²/(2h) + Λ. DP-Helmet's code inflates β further, which only shortens
    the steps.
    """
    regularization = _scalar_positive("regularization", regularization)
    huber_width = _scalar_positive("huber_width", huber_width)
    return _input_norm_bound(feature_bound, regularized_intercept) ** 2 / (2.0 * huber_width) + regularization


def huber_svm_sensitivity(
    regularization, n, feature_bound, radius, *, num_classes=1, regularized_intercept=True
) -> float:
    """L2 sensitivity √C·2(c' + RΛ)/(nΛ) of C one-vs-rest Huber SVMs trained by PSGD (DP-Helmet Ex. 3.16).

    Each class's model has sensitivity Δ_k = 2L/(nΛ), L from
    :func:`huber_svm_lipschitz` (:func:`psgd_bolt_on_sensitivity`). One record
    enters all C one-vs-rest problems, so the stacked C models move by at
    most √C·Δ_k. For Gaussian noise of the same σ on every class, one
    release with sensitivity √C·Δ_k and C releases with Δ_k compose to the
    same privacy loss; ``num_classes=1`` gives Δ_k. Each class must run its
    own PSGD with step η_t (DP-Helmet's SVM code averages the C objectives,
    which takes steps η_t/C: still private, but not the analysed schedule).
    Replace-one.

    Args:
        regularization: Λ > 0.
        n: number of records, n >= 1.
        feature_bound: c > 0, the public bound on ‖x‖.
        radius: R > 0, the projection radius of each class's (w_k, b_k).
        num_classes: C >= 1 one-vs-rest models released together.
        regularized_intercept: the bias is a regularised input coordinate.
    """
    num_classes = check.integer_scalar("num_classes", num_classes, 1)
    lipschitz = huber_svm_lipschitz(feature_bound, radius, regularization, regularized_intercept=regularized_intercept)
    return math.sqrt(num_classes) * psgd_bolt_on_sensitivity(lipschitz, regularization, n)


def user_level_sensitivity(radius) -> float:
    """2R: the sensitivity of one user's model when the whole local dataset may change (DP-Helmet Cor. 5.5).

    Any learner whose output lies in the R-ball moves by at most 2R,
    whatever the data. This is for the unscaled model; DP-Helmet's newest
    code multiplies each model by its local size N_u, which makes it
    2·N_max·R, so its "2R" comment is stale for that variant. Averaging |U|
    users divides it by |U| (:func:`dpmech.blind_averaging.average_sensitivity`);
    the seed's "2R/N" should read 2R/|U| on the average.
    """
    return 2.0 * _scalar_positive("radius", radius)
