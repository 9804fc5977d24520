"""Batched L2-regularised logistic regression in torch: B models at once over one shared pool.

Model b minimises, over the records of the pool (X, y) that its membership row selects,

    J_b(θ) = (1/n_b) Σ_i m_bi ℓ(θ; x̃_i, y_i) + (λ/2) ‖θ‖²,   n_b = Σ_i m_bi,   x̃ = (x, 1),

the objective of :class:`trainers.sklearn_adapter.LogisticRegressionTrainer` (a 0/1 membership
row is the record subset; a float row is a sample weighting). The intercept, when
``fit_intercept`` is set, is the weight of an appended constant coordinate and is regularised,
exactly as in the scikit-learn adapter, so both reach the same minimiser (to ~1e-10 in gradient;
the tests check 1e-6 in parameters).

Solvers. Both start every model from the pooled optimum (all records, weight 1/n), which is
close to each model's optimum when the models are trained on large overlapping subsets, as the
shadow models of an audit are; a batched Armijo backtracking line search makes the iteration
globally convergent from any start.

- Binary: Newton's method on (B, p, p) systems, p = d + 1. Per iteration: forming the Hessians
  costs O(B n p²) (one matmul of the (B, n) curvatures against the shared (n, p²) outer products
  when p <= B, else a batched matmul), the Cholesky factorisations O(B p³ / 3).
- Multinomial (C classes): the full Hessian is (C p) × (C p) per model, O(B (C p)²) memory and
  O(B (C p)³) to factor, 650 × 650 for the digits head (C = 10, p = 65): too much for thousands of
  heads. So the Newton system is solved by batched conjugate gradients with Hessian-vector
  products H v = (1/n_b) Σ_i m_bi (diag(p_i) − p_i p_iᵀ)(V x̃_i) x̃_iᵀ + λ V, which cost
  O(B n C p) each (two batched matmuls) and never form H (truncated Newton, Nocedal & Wright
  §7.1, forcing term min(0.5, sqrt(‖g‖))). The CG is preconditioned with the Cholesky factor of
  the single pooled Hessian at the pooled optimum, formed once in O(n (C p)²) and factored once in
  O((C p)³ / 3); applying it costs O(B (C p)²) per CG iteration. Every model's Hessian is close to
  the pooled one when the models train on large random subsets of the pool, and then 1–4 CG
  iterations per Newton step suffice (any SPD preconditioner keeps the answer exact; a poor one
  only costs iterations). Memory is O(B n C + (C p)²).

There are no Python loops over models: the loops run over Newton and CG iterations, and every
iteration updates all B models with batched tensor operations (converged models take zero steps).
"""

from __future__ import annotations

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

import dpmech.sensitivity
from dpmech import validation as check


_ARMIJO = 1e-4
_MAX_HALVINGS = 40


def _weighted_sum(values: torch.Tensor) -> torch.Tensor:
    return values.sum(dim=tuple(range(1, values.ndim)))


class _BinaryObjective:
    """Binary loss; ``evaluate`` returns (J(θ), sigmoid(θ·x̃)) so one pass serves value and gradient."""

    def __init__(self, features, labels, weights, regularization):
        self.features, self.labels, self.weights, self.regularization = features, labels, weights, regularization
        num_models, num_features = weights.shape[0], features.shape[1]
        # Hessians as one GEMM against the shared outer products x̃ x̃ᵀ (memory n p²) when that is
        # smaller than the per-model weighted copies of X (memory B n p).
        self.outer_products = (
            (features.unsqueeze(2) * features.unsqueeze(1)).reshape(features.shape[0], num_features**2)
            if num_features <= num_models else None
        )

    def evaluate(self, theta):
        logits = theta @ self.features.T
        losses = torch.logaddexp(torch.zeros((), dtype=logits.dtype, device=logits.device), logits) - self.labels * logits
        value = (self.weights * losses).sum(dim=1) + 0.5 * self.regularization * (theta * theta).sum(dim=1)
        return value, torch.sigmoid(logits)

    def gradient(self, theta, probabilities):
        return (self.weights * (probabilities - self.labels)) @ self.features + self.regularization * theta

    def residual_norms(self, probabilities):
        return (probabilities - self.labels).abs()

    def newton_direction(self, theta, probabilities, gradient):
        curvature = self.weights * probabilities * (1.0 - probabilities)
        if self.outer_products is None:
            hessians = (self.features.T.unsqueeze(0) * curvature.unsqueeze(1)) @ self.features
        else:
            hessians = (curvature @ self.outer_products).reshape(-1, theta.shape[1], theta.shape[1])
        hessians.diagonal(dim1=-2, dim2=-1).add_(self.regularization)
        factors = torch.linalg.cholesky(hessians)
        return -torch.cholesky_solve(gradient.unsqueeze(-1), factors).squeeze(-1)


class _MultinomialObjective:
    """Multinomial loss; ``evaluate`` returns (J(θ), softmax(θ x̃)). Newton directions come from
    conjugate gradients preconditioned with a fixed Cholesky factor of one (C p) × (C p) matrix
    (the pooled Hessian), or are exact when that factor is ``None`` (used for the single pooled
    model, where forming H is cheap)."""

    def __init__(self, features, labels, weights, regularization, num_classes, max_cg_iterations, preconditioner=None,
                 exact_newton=True):
        self.features, self.weights, self.regularization = features, weights, regularization
        self.one_hot = torch.nn.functional.one_hot(labels, num_classes).T.to(features.dtype)
        self.max_cg_iterations = max_cg_iterations
        self.preconditioner = preconditioner
        # Without a factor: exact Newton (forms the (C p)² Hessian), or plain CG when that is too big.
        self.exact_newton = exact_newton

    def evaluate(self, theta):
        logits = theta @ self.features.T
        log_normalisers = torch.logsumexp(logits, dim=1, keepdim=True)
        losses = log_normalisers.squeeze(1) - (self.one_hot * logits).sum(dim=1)
        value = (self.weights * losses).sum(dim=1) + 0.5 * self.regularization * _weighted_sum(theta * theta)
        return value, torch.exp(logits - log_normalisers)

    def gradient(self, theta, probabilities):
        residuals = (probabilities - self.one_hot) * self.weights.unsqueeze(1)
        return residuals @ self.features + self.regularization * theta

    def residual_norms(self, probabilities):
        return torch.linalg.vector_norm(probabilities - self.one_hot, dim=1)

    def hessian_factor(self, theta):
        """Cholesky factor of the (C p) × (C p) Hessian of the first model at theta[0]:
        Σ_i w_i (diag(p_i) − p_i p_iᵀ) ⊗ x̃_i x̃_iᵀ + λ I, with θ flattened class-major."""
        probabilities = torch.softmax(theta[0] @ self.features.T, dim=0)
        num_classes, num_features = theta.shape[1:]
        blocks = (self.features.T.unsqueeze(0) * (probabilities * self.weights[0]).unsqueeze(1)) @ self.features
        hessian = torch.block_diag(*blocks.unbind(0))
        outer = (probabilities * self.weights[0].sqrt()).unsqueeze(2) * self.features.unsqueeze(0)
        outer = outer.permute(1, 0, 2).reshape(self.features.shape[0], num_classes * num_features)
        hessian = hessian - outer.T @ outer
        hessian.diagonal().add_(self.regularization)
        return torch.linalg.cholesky(hessian)

    def newton_direction(self, theta, probabilities, gradient):
        if self.preconditioner is None and self.exact_newton:
            factor = self.hessian_factor(theta)
            flat = gradient.reshape(gradient.shape[0], -1).T
            return -torch.cholesky_solve(flat, factor).T.contiguous().reshape(gradient.shape)
        weights = self.weights.unsqueeze(1)

        def hessian_times(vectors):
            projected = vectors @ self.features.T
            mixed = probabilities * (projected - (probabilities * projected).sum(dim=1, keepdim=True))
            return (mixed * weights) @ self.features + self.regularization * vectors

        def precondition(vectors):
            if self.preconditioner is None:
                return vectors
            flat = vectors.reshape(vectors.shape[0], -1).T
            # contiguous: a batched matmul on the transposed layout is ~200x slower on CPU
            return torch.cholesky_solve(flat, self.preconditioner).T.contiguous().reshape(vectors.shape)

        gradient_norm = _weighted_sum(gradient * gradient).sqrt()
        target = torch.clamp(gradient_norm.sqrt(), max=0.5) * gradient_norm
        shape = (-1,) + (1,) * (gradient.ndim - 1)
        direction = torch.zeros_like(gradient)
        residual = -gradient
        preconditioned = precondition(residual)
        search = preconditioned
        inner = _weighted_sum(residual * preconditioned)
        for _ in range(self.max_cg_iterations):
            active = _weighted_sum(residual * residual).sqrt() > target
            if not bool(active.any()):
                break
            product = hessian_times(search)
            curvature = _weighted_sum(search * product)
            step = torch.where(active, inner / torch.where(active, curvature, 1.0), 0.0)
            direction = direction + step.view(shape) * search
            residual = residual - step.view(shape) * product
            preconditioned = precondition(residual)
            new_inner = _weighted_sum(residual * preconditioned)
            ratio = torch.where(active, new_inner / torch.where(active, inner, 1.0), 0.0)
            search = preconditioned + ratio.view(shape) * search
            inner = new_inner
        return direction


def _gradient_bound(objective, theta, probabilities, gradient, certify):
    """Per model, ‖∇J(θ)‖₂ as computed, plus (``certify``) a bound on its rounding error.

    The computed gradient (1/n_b) Σ_i m_bi r_i x̃_iᵀ + λθ differs from the exact one by at most
    γ_k·[Σ_i w_i ‖x̃_i‖(‖r_i‖ + ‖θ‖‖x̃_i‖ + 4) + λ‖θ‖], γ_k = k·u/(1 − k·u), k = n + (number of
    parameters) + 16, u the unit roundoff (Higham, Accuracy and Stability of Numerical Algorithms,
    2002, §3.1: sums and dot products of k terms; the ‖θ‖‖x̃_i‖ term is the logits' error passed
    through the sigmoid or softmax, whose Jacobian has norm <= 1; 4 covers exp, log and the
    normalisation of the weights). It is doubled for the second-order terms.
    """
    norms = torch.linalg.vector_norm(gradient.reshape(gradient.shape[0], -1), dim=1)
    if not certify:
        return norms
    parameter_norms = torch.linalg.vector_norm(theta.reshape(theta.shape[0], -1), dim=1)
    feature_norms = torch.linalg.vector_norm(objective.features, dim=1)
    residual_norms = objective.residual_norms(probabilities)
    per_record = residual_norms + parameter_norms.unsqueeze(1) * feature_norms + 4.0
    k = objective.features.shape[0] + theta[0].numel() + 16
    unit_roundoff = torch.finfo(theta.dtype).eps / 2
    gamma = k * unit_roundoff / (1.0 - k * unit_roundoff)
    scale = (objective.weights * per_record) @ feature_norms + objective.regularization * parameter_norms
    return norms + 2.0 * gamma * scale


def _minimise(objective, theta, tol, max_iter, certify=True):
    """Batched Newton with Armijo backtracking until every model's gradient bound is <= tol.

    Returns (θ, iterations, largest gradient bound). The bound is ‖∇J(θ)‖₂ plus, when
    ``certify``, its rounding allowance (:func:`_gradient_bound`), so that a model that stops
    has ‖∇J(θ)‖₂ <= tol exactly. The pass that evaluates J at an accepted candidate also yields
    the probabilities for the next gradient and Hessian, so a Newton iteration without
    backtracking makes one forward pass.
    """
    shape = (-1,) + (1,) * (theta.ndim - 1)
    value, probabilities = objective.evaluate(theta)
    for iteration in range(max_iter + 1):
        gradient = objective.gradient(theta, probabilities)
        bounds = _gradient_bound(objective, theta, probabilities, gradient, certify)
        converged = bounds <= tol
        if bool(converged.all()) or iteration == max_iter:
            return theta, iteration, float(bounds.max())
        direction = objective.newton_direction(theta, probabilities, gradient)
        direction = torch.where(converged.view(shape), 0.0, direction)
        slope = _weighted_sum(gradient * direction)
        # Rounding slack so that a tiny final Newton step is never rejected for a 1e-17 rise.
        slack = 64 * torch.finfo(theta.dtype).eps * value.abs()
        step = torch.ones_like(value)
        accepted = converged.clone()
        for halving in range(_MAX_HALVINGS):
            candidate = theta + step.view(shape) * direction
            candidate_value, candidate_probabilities = objective.evaluate(candidate)
            accepted = accepted | (candidate_value <= value + _ARMIJO * step * slope + slack)
            if bool(accepted.all()):
                break
            step = torch.where(accepted, step, 0.5 * step)
        if bool(accepted.all()):
            theta, value, probabilities = candidate, candidate_value, candidate_probabilities
        else:
            theta = theta + torch.where(accepted, step, 0.0).view(shape) * direction
            value, probabilities = objective.evaluate(theta)
    raise AssertionError("unreachable")


_FLOAT32_WORKING_TOLERANCE = 1e-4
_EXACT_NEWTON_MAX_PARAMETERS = 2048


def logistic_objective(features, labels, weights, regularization, num_classes, max_cg_iterations=500,
                       preconditioner=None):
    """The batched mean-form objective J_b of B models on bias-augmented ``features`` (n, p).

    ``labels``: int64 tensor (n,); ``weights``: (B, n), each row summing to 1 (1/n_b on the
    records of model b); ``preconditioner``: the pooled Hessian's Cholesky factor (multinomial CG),
    or None for exact Newton directions when C·p <= 2048 (cheap for few models) and
    unpreconditioned CG above, where the (C p)² Hessian would not fit.
    """
    if num_classes == 2:
        return _BinaryObjective(features, labels.to(features.dtype), weights, regularization)
    exact_newton = num_classes * features.shape[1] <= _EXACT_NEWTON_MAX_PARAMETERS
    return _MultinomialObjective(features, labels, weights, regularization, num_classes, max_cg_iterations,
                                 preconditioner, exact_newton)


def certify_minimisers(objective, theta, gradient_tolerance, max_iter):
    """Newton-refine θ (float64) until ‖∇J_b(θ_b)‖₂ <= τ is certified for every model.

    Certified: the computed gradient norm plus its rounding allowance (:func:`_gradient_bound`)
    is <= τ = ``gradient_tolerance``. For a λ-strongly convex J_b that gives
    ‖θ_b − θ_b*‖₂ <= ‖∇J_b(θ_b)‖₂/λ <= τ/λ (see
    :func:`dpmech.sensitivity.approximate_minimizer_sensitivity`), which is what lets a trainer
    declare the exact minimiser's sensitivity plus 2τ/λ. Returns (θ, Newton iterations, the
    largest certified bound); RuntimeError if ``max_iter`` iterations do not reach τ.
    """
    if theta.dtype != torch.float64 or objective.features.dtype != torch.float64:
        raise ValueError("certify_minimisers needs float64 parameters and objective (float32 rounding exceeds τ)")
    theta, iterations, largest = _minimise(objective, theta, gradient_tolerance, max_iter, certify=True)
    if largest > gradient_tolerance:
        raise RuntimeError(
            f"Newton could not certify ‖∇J‖₂ <= gradient tolerance {gradient_tolerance:g} in {max_iter} iterations "
            f"(reached {largest:.3g}, gradient plus float64 rounding allowance); raise max_iter or the tolerance"
        )
    return theta, iterations, largest


class BatchedLogisticRegression(BaseEstimator):
    """Train B L2-regularised logistic regressions at once over a shared pool (torch, CPU or CUDA).

    Parameters
    ----------
    regularization : float > 0
        λ of every model's mean-form objective.
    num_classes : int >= 2
        2 gives binary LR with labels in {0, 1}; C >= 3 gives C-class multinomial LR.
    fit_intercept : bool
        Append the regularised constant coordinate (the intercept is the last parameter).
    tol : float > 0
        τ, the public gradient tolerance: ``fit`` certifies ‖∇J_b(θ̂_b)‖₂ <= τ for every model in
        float64, rounding error included (:func:`certify_minimisers`), so θ̂_b is within τ/λ of
        the exact minimiser and ``sensitivity`` adds 2τ/λ. The default 1e-9 makes 2τ/λ a fraction
        τn/L of the exact bound 2L/(nλ): 7.1e-10·n for binary LR with ‖x̃‖ <= √2 (7e-6 at
        n = 10⁴), half that for multinomial.
    max_iter : int >= 1
        Newton iterations; RuntimeError if the tolerance is not met by then. With float32,
        Newton runs in float32 to a working tolerance max(τ, 1e-4) and then in float64 to τ; the
        released ``parameters_`` are float64 (casting back would move them off the certificate).
    max_cg_iterations : int >= 1
        Conjugate-gradient iterations per Newton step (multinomial only).
    feature_bound : float > 0 or None
        Public bound on ‖x‖₂; needed for ``sensitivity``; when set, ``fit`` rejects rows above it.
    device, dtype :
        Torch device ("cpu", "cuda", ...) and floating dtype (float64 by default).

    ``fit(X, y, membership)``: X of shape (n, d), y of shape (n,), membership of shape (B, n),
    boolean or non-negative weights with positive row sums. Sets ``parameters_`` of shape (B, p)
    for binary or (B, C, p) for multinomial, p = d + fit_intercept, on ``device``.
    """

    def __init__(
        self,
        regularization=0.01,
        num_classes=2,
        fit_intercept=True,
        tol=1e-9,
        max_iter=100,
        max_cg_iterations=500,
        feature_bound=None,
        device="cpu",
        dtype=torch.float64,
    ):
        self.regularization = regularization
        self.num_classes = num_classes
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.max_cg_iterations = max_cg_iterations
        self.feature_bound = feature_bound
        self.device = device
        self.dtype = dtype

    def _checked_config(self):
        regularization = float(check.positive("regularization", self.regularization))
        num_classes = check.integer_scalar("num_classes", self.num_classes, 2)
        tol = float(check.positive("tol", self.tol))
        max_iter = check.integer_scalar("max_iter", self.max_iter, 1)
        max_cg_iterations = check.integer_scalar("max_cg_iterations", self.max_cg_iterations, 1)
        if self.dtype not in (torch.float32, torch.float64):
            raise ValueError(f"dtype must be torch.float32 or torch.float64 (got {self.dtype!r})")
        if not isinstance(self.fit_intercept, bool):
            raise ValueError(f"fit_intercept must be True or False (got {self.fit_intercept!r})")
        return regularization, num_classes, tol, max_iter, max_cg_iterations

    def _features(self, X, dtype=None):
        features = torch.as_tensor(X, dtype=self.dtype if dtype is None else dtype, device=self.device)
        if features.ndim != 2 or features.shape[0] == 0 or features.shape[1] == 0:
            raise ValueError(f"X must be a non-empty 2-d array (got shape {tuple(features.shape)})")
        if not bool(torch.isfinite(features).all()):
            raise ValueError("X must be finite (it contains NaN or inf)")
        return features

    def fit(self, X, y, membership):
        regularization, num_classes, tol, max_iter, max_cg_iterations = self._checked_config()
        # The certificate and the norm check are on the data as given (float64); float32 is a warm start.
        features = self._features(X, torch.float64)
        num_records = features.shape[0]
        self.n_features_in_ = features.shape[1]
        if self.feature_bound is not None:
            bound = float(check.positive("feature_bound", self.feature_bound))
            largest = float(torch.linalg.vector_norm(features, dim=1).max())
            if largest > bound * (1.0 + 4 * torch.finfo(torch.float64).eps):
                raise ValueError(f"X has a row of norm {largest:.6g} above feature_bound={bound:g}; clip it first")
        if self.fit_intercept:
            features = torch.cat([features, torch.ones_like(features[:, :1])], dim=1)
        labels = torch.as_tensor(np.asarray(y) if not torch.is_tensor(y) else y, device=self.device)
        if labels.shape != (num_records,):
            raise ValueError(f"y must have shape ({num_records},) (got {tuple(labels.shape)})")
        if labels.is_floating_point() and not bool((labels == labels.round()).all()):
            raise ValueError(f"y must be integers in [0, {num_classes - 1}]")
        labels = labels.to(torch.int64)
        if int(labels.min()) < 0 or int(labels.max()) >= num_classes:
            raise ValueError(f"y must be integers in [0, {num_classes - 1}] (got values in [{int(labels.min())}, {int(labels.max())}])")
        weights = self._weights(membership, num_records, self.dtype)

        def objective(row_weights, preconditioner=None):
            return logistic_objective(features.to(row_weights.dtype), labels, row_weights, regularization, num_classes,
                                      max_cg_iterations, preconditioner)

        # float64 Newton runs to the certified tolerance; float32 runs to a working tolerance and the
        # certificate comes from a float64 refinement (float32's rounding allowance exceeds tol).
        certify = self.dtype == torch.float64
        working_tolerance = tol if certify else max(tol, _FLOAT32_WORKING_TOLERANCE)
        shape = (1, features.shape[1]) if num_classes == 2 else (1, num_classes, features.shape[1])
        pooled_weights = torch.full((1, num_records), 1.0 / num_records, dtype=self.dtype, device=self.device)
        pooled_objective = objective(pooled_weights)
        pooled, _, _ = _minimise(pooled_objective, torch.zeros(shape, dtype=self.dtype, device=self.device),
                                 working_tolerance, max_iter, certify)
        preconditioner = pooled_objective.hessian_factor(pooled) if num_classes > 2 else None
        start = pooled.expand((weights.shape[0],) + shape[1:]).clone()
        theta, self.n_iter_, _ = _minimise(objective(weights, preconditioner), start, working_tolerance, max_iter, certify)
        if not certify:
            weights = self._weights(membership, num_records, torch.float64)
            preconditioner = None if preconditioner is None else preconditioner.to(torch.float64)
            theta = theta.to(torch.float64)
        self.parameters_, refinements, self.gradient_norm_bound_ = certify_minimisers(
            objective(weights, preconditioner), theta, tol, max_iter
        )
        self.n_iter_ += refinements
        self.pooled_parameters_ = pooled[0]
        return self

    def _weights(self, membership, num_records, dtype):
        mask = torch.as_tensor(membership, device=self.device)
        if mask.ndim != 2 or mask.shape[1] != num_records or mask.shape[0] == 0:
            raise ValueError(f"membership must have shape (B, {num_records}) with B >= 1 (got {tuple(mask.shape)})")
        mask = mask.to(dtype)
        if not bool(torch.isfinite(mask).all()) or bool((mask < 0).any()):
            raise ValueError("membership must be boolean or finite non-negative weights")
        totals = mask.sum(dim=1, keepdim=True)
        if bool((totals <= 0).any()):
            raise ValueError("membership must select at least one record in every row (a row sums to 0)")
        return mask / totals

    def decision_function(self, X) -> torch.Tensor:
        """Logits of every model on X: (B, n) for binary, (B, n, C) for multinomial."""
        check_is_fitted(self, "parameters_")
        features = self._features(X, self.parameters_.dtype)
        if features.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {features.shape[1]} features, but the models were fitted on {self.n_features_in_} features")
        if self.fit_intercept:
            features = torch.cat([features, torch.ones_like(features[:, :1])], dim=1)
        logits = self.parameters_ @ features.T
        return logits if logits.ndim == 2 else logits.transpose(1, 2)

    def predict(self, X) -> torch.Tensor:
        """Predicted labels of every model on X, shape (B, n)."""
        logits = self.decision_function(X)
        return (logits > 0).to(torch.int64) if logits.ndim == 2 else logits.argmax(dim=2)

    def sensitivity(self, n) -> float:
        """Replace-one L2 sensitivity of one model trained on n records (needs ``feature_bound``).

        Δ + 2τ/λ: Δ = 2L/(nλ) (binary) or 2√2·L/(nλ) (multinomial) of the exact minimiser,
        L = ‖x̃‖max (Chaudhuri et al. 2011, Cor. 8; the multinomial √2 in
        :func:`dpmech.sensitivity.multinomial_logistic_regression_sensitivity`), plus twice the certified
        distance τ/λ of each released model from its minimiser (``tol``).
        """
        regularization, num_classes, tol, _, _ = self._checked_config()
        if self.feature_bound is None:
            raise ValueError("feature_bound must be set (a public bound on ‖x‖₂) to declare a sensitivity")
        bound = float(check.positive("feature_bound", self.feature_bound))
        if num_classes == 2:
            exact = dpmech.sensitivity.logistic_regression_sensitivity(
                regularization, n, bound, regularized_intercept=self.fit_intercept
            )
        else:
            exact = dpmech.sensitivity.multinomial_logistic_regression_sensitivity(
                regularization, n, bound, num_classes=num_classes, regularized_intercept=self.fit_intercept
            )
        return dpmech.sensitivity.approximate_minimizer_sensitivity(exact, tol, regularization)
