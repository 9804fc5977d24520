"""Batched L2-regularised logistic regression in torch: B models at once over one pool of records.

Model b minimises, over the records of the pool (X, y) that its membership row selects,

    J_b(θ) = (1/n_b) Σ_i m_bi ℓ(θ; x̃_i, y_i) + (λ/2) ‖θ‖²,   n_b = Σ_i m_bi,   x̃ = (x, 1),

the objective of :class:`trainers.sklearn_adapter.LogisticRegressionTrainer` (a 0/1 membership
row is the record subset; a float row is a sample weighting). The intercept, when
``fit_intercept`` is set, is the weight of an appended constant coordinate and is regularised,
exactly as in the scikit-learn adapter, so both reach the same minimiser (to ~1e-10 in gradient;
the tests check 1e-6 in parameters).

Layouts. Models on large overlapping subsets of the pool (the shadow models of an audit) share
it: every pass is one GEMM over the n pool records, and every model starts from the pooled
optimum (all records, weight 1/n), close to its own. Models that each weight at most half of
the pool, with each record in at most two models on average (one head per client of a
federation, the pool being the clients' records side by side), are trained on their own
gathered records, (B, m, p) with m the largest record count (:func:`_own_records`), from θ = 0:
a pass costs O(B m C p), not O(B n C p), B times less for B disjoint clients. A batched Armijo
backtracking line search makes the iteration globally convergent from any start.

Solvers.

- Binary: Newton's method on (B, p, p) systems, p = d + 1. Per iteration: forming the Hessians
  costs O(B n p²) (one matmul of the (B, n) curvatures against the shared (n, p²) outer products
  when p <= B, else a batched matmul), the Cholesky factorisations O(B p³ / 3).
- Multinomial (C classes): the full Hessian is (C p) × (C p) per model, O(B (C p)²) memory and
  O(B n (C p)²) to form, 650 × 650 for the digits head (C = 10, p = 65): too much for thousands of
  heads. So the Newton system is solved by batched conjugate gradients with Hessian-vector
  products H v = (1/n_b) Σ_i m_bi (diag(p_i) − p_i p_iᵀ)(V x̃_i) x̃_iᵀ + λ V, which cost
  O(B n C p) each (two batched matmuls) and never form H (truncated Newton, Nocedal & Wright
  §7.1, forcing term min(0.5, sqrt(‖g‖))). On a shared pool the CG is preconditioned with the
  Cholesky factor of the single pooled Hessian at the pooled optimum, formed once in
  O(n (C p)²) and factored once in O((C p)³ / 3); applying it costs O(B (C p)²) per CG
  iteration. Every model's Hessian is close to the pooled one when the models train on large
  random subsets of the pool, and then 1–4 CG iterations per Newton step suffice. On own
  records (clients whose data, label skew included, differ) each model gets its own Kronecker
  preconditioner A_b ⊗ G_b + λI (:meth:`_MultinomialObjective.kronecker_factors`), 2–3 CG
  iterations per Newton step on the digits heads. Any SPD preconditioner keeps the answer
  exact; a poor one only costs iterations.

Certification (:func:`certify_minimisers`): float64 Newton until ‖∇J_b‖₂ plus its rounding
allowance is <= τ, then, for a model that does not get there, exact Newton steps on its own and
a long-double re-evaluation of the gradient; RuntimeError only if none certifies.

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
        self.feature_norms = torch.linalg.vector_norm(features, dim=-1)
        num_models, num_features = weights.shape[0], features.shape[-1]
        # Hessians as one GEMM against the shared outer products x̃ x̃ᵀ (memory n p²) when that is
        # smaller than the per-model weighted copies of X (memory B n p).
        self.outer_products = (
            (features.unsqueeze(2) * features.unsqueeze(1)).reshape(features.shape[0], num_features**2)
            if features.ndim == 2 and num_features <= num_models else None
        )

    def select(self, models):
        """The objective of the models at these indices alone."""
        features, labels = (self.features, self.labels) if self.features.ndim == 2 else (self.features[models], self.labels[models])
        return _BinaryObjective(features, labels, self.weights[models], self.regularization)

    def evaluate(self, theta):
        logits = (theta.unsqueeze(-2) @ self.features.transpose(-1, -2)).squeeze(-2)
        losses = torch.logaddexp(torch.zeros((), dtype=logits.dtype, device=logits.device), logits) - self.labels * logits
        value = (self.weights * losses).sum(dim=1) + 0.5 * self.regularization * (theta * theta).sum(dim=1)
        return value, torch.sigmoid(logits)

    def gradient(self, theta, probabilities):
        residuals = self.weights * (probabilities - self.labels)
        return (residuals.unsqueeze(-2) @ self.features).squeeze(-2) + self.regularization * theta

    def residual_norms(self, probabilities):
        return (probabilities - self.labels).abs()

    def newton_direction(self, theta, probabilities, gradient):
        curvature = self.weights * probabilities * (1.0 - probabilities)
        if self.outer_products is None:
            hessians = (self.features.transpose(-1, -2) * curvature.unsqueeze(-2)) @ self.features
        else:
            hessians = (curvature @ self.outer_products).reshape(-1, theta.shape[1], theta.shape[1])
        hessians.diagonal(dim1=-2, dim2=-1).add_(self.regularization)
        factors = torch.linalg.cholesky(hessians)
        return -torch.cholesky_solve(gradient.unsqueeze(-1), factors).squeeze(-1)


class _MultinomialObjective:
    """Multinomial loss; ``evaluate`` returns (J(θ), softmax(θ x̃)).

    Newton directions, by ``preconditioner`` and ``exact_newton``:

    - a Cholesky factor of one (C p) × (C p) matrix (the pooled Hessian): conjugate gradients
      preconditioned with it, shared by all models;
    - ``None`` with ``exact_newton``: exact directions from every model's own (C p) × (C p) Hessian
      (:meth:`hessian_factors`, O(B n (C p)²) to form);
    - ``None`` without ``exact_newton``: conjugate gradients preconditioned per model with the
      Kronecker approximation A_b ⊗ G_b + λI of its Hessian (:meth:`kronecker_factors`).
    """

    def __init__(self, features, labels, weights, regularization, num_classes, max_cg_iterations, preconditioner=None,
                 exact_newton=True):
        self.features, self.weights, self.regularization = features, weights, regularization
        self.feature_norms = torch.linalg.vector_norm(features, dim=-1)
        self.one_hot = torch.nn.functional.one_hot(labels, num_classes).transpose(-1, -2).to(features.dtype)
        self.labels, self.num_classes = labels, num_classes
        self.max_cg_iterations = max_cg_iterations
        self.preconditioner = preconditioner
        self.exact_newton = exact_newton
        self._feature_factor = None

    def select(self, models):
        """The objective of the models at these indices alone, with exact Newton directions while
        the (C p)² Hessian fits (C·p <= 2048), else Kronecker-preconditioned CG."""
        features, labels = (self.features, self.labels) if self.features.ndim == 2 else (self.features[models], self.labels[models])
        exact = self.num_classes * features.shape[-1] <= _FALLBACK_EXACT_NEWTON_MAX_PARAMETERS
        return _MultinomialObjective(features, labels, self.weights[models], self.regularization, self.num_classes,
                                     self.max_cg_iterations, None, exact)

    def evaluate(self, theta):
        logits = theta @ self.features.transpose(-1, -2)
        log_normalisers = torch.logsumexp(logits, dim=1, keepdim=True)
        losses = log_normalisers.squeeze(1) - (self.one_hot * logits).sum(dim=1)
        value = (self.weights * losses).sum(dim=1) + 0.5 * self.regularization * _weighted_sum(theta * theta)
        return value, torch.exp(logits - log_normalisers)

    def gradient(self, theta, probabilities):
        residuals = (probabilities - self.one_hot) * self.weights.unsqueeze(1)
        return residuals @ self.features + self.regularization * theta

    def residual_norms(self, probabilities):
        residuals = probabilities - self.one_hot
        return (residuals * residuals).sum(dim=1).sqrt()

    def hessian_factors(self, probabilities, weights):
        """Cholesky factors (B, C p, C p) of the Hessians of the models with these probabilities and
        weights, θ flattened class-major: H_b = Σ_i w_bi (diag(p_bi) − p_bi p_biᵀ) ⊗ x̃_i x̃_iᵀ + λI."""
        num_models, num_classes, _ = probabilities.shape
        num_features = self.features.shape[-1]
        size = num_classes * num_features
        weighted = probabilities * weights.unsqueeze(1)
        blocks = (self.features.transpose(-1, -2).unsqueeze(-3) * weighted.unsqueeze(-2)) @ self.features.unsqueeze(-3)
        hessian = torch.zeros((num_models, num_classes, num_features, num_classes, num_features),
                              dtype=probabilities.dtype, device=probabilities.device)
        classes = torch.arange(num_classes, device=probabilities.device)
        hessian[:, classes, :, classes, :] = blocks.transpose(0, 1)
        hessian = hessian.reshape(num_models, size, size)
        outer = (probabilities * weights.unsqueeze(1).sqrt()).unsqueeze(-1) * self.features.unsqueeze(-3)
        outer = outer.transpose(1, 2).reshape(num_models, -1, size)
        hessian = hessian - outer.transpose(-1, -2) @ outer
        hessian.diagonal(dim1=-2, dim2=-1).add_(self.regularization)
        return torch.linalg.cholesky(hessian)

    def hessian_factor(self, theta):
        """Cholesky factor of the first model's Hessian at theta[0] (the pooled preconditioner)."""
        probabilities = torch.softmax(theta[:1] @ self.features.transpose(-1, -2), dim=1)
        return self.hessian_factors(probabilities, self.weights[:1])[0]

    def kronecker_factors(self, probabilities):
        """Eigenvectors of A_b and G_b and the inverse eigenvalues of A_b ⊗ G_b + λI, the Kronecker
        approximation of H_b (the factorisation of Martens & Grosse 2015, "Optimizing neural
        networks with Kronecker-factored approximate curvature", for one layer).

        A_b = Σ_i w_bi D_bi with D_bi = diag(p_bi) − p_bi p_biᵀ at the current θ, and G_b =
        Σ_i w_bi x̃_i x̃_iᵀ (Σ_i w_bi = 1): exact when every record has the same D_bi. G_b and its
        eigendecomposition are formed once per objective in O(B n p² + B p³); A_b costs O(B n C²)
        per Newton step, and applying the inverse costs O(B (C² p + C p²)), below one
        Hessian-vector product. Weighting G_b by each record's curvature would track H_b more
        closely but costs O(B n p²) per step, more than the conjugate-gradient iterations it saves.
        """
        weighted = probabilities * self.weights.unsqueeze(1)
        class_factor = torch.diag_embed(weighted.sum(dim=-1)) - weighted @ probabilities.transpose(-1, -2)
        if self._feature_factor is None:
            gram = (self.features.transpose(-1, -2) * self.weights.unsqueeze(-2)) @ self.features
            self._feature_factor = torch.linalg.eigh(gram)
        feature_values, feature_vectors = self._feature_factor
        class_values, class_vectors = torch.linalg.eigh(class_factor)
        # Rounding can leave the PSD factors' zero eigenvalues slightly negative; the product stays >= 0.
        scale = torch.clamp(class_values, min=0.0).unsqueeze(-1) * torch.clamp(feature_values, min=0.0).unsqueeze(-2)
        return class_vectors, feature_vectors, 1.0 / (scale + self.regularization)

    def newton_direction(self, theta, probabilities, gradient):
        if self.preconditioner is None and self.exact_newton:
            factors = self.hessian_factors(probabilities, self.weights)
            flat = gradient.reshape(gradient.shape[0], -1, 1)
            return -torch.cholesky_solve(flat, factors).reshape(gradient.shape)
        weights = self.weights.unsqueeze(1)
        if self.preconditioner is None:
            class_vectors, feature_vectors, inverse_eigenvalues = self.kronecker_factors(probabilities)

            def precondition(vectors):
                rotated = class_vectors.transpose(-1, -2) @ vectors @ feature_vectors
                return class_vectors @ (rotated * inverse_eigenvalues) @ feature_vectors.transpose(-1, -2)
        else:
            def precondition(vectors):
                flat = vectors.reshape(vectors.shape[0], -1).T
                # contiguous: a batched matmul on the transposed layout is ~200x slower on CPU
                return torch.cholesky_solve(flat, self.preconditioner).T.contiguous().reshape(vectors.shape)

        def hessian_times(vectors):
            projected = vectors @ self.features.transpose(-1, -2)
            mixed = probabilities * (projected - (probabilities * projected).sum(dim=1, keepdim=True))
            return (mixed * weights) @ self.features + self.regularization * vectors

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
    """Per model, ‖∇J(θ)‖₂ as computed, and (``certify``) that plus a bound on its rounding error.

    The computed gradient (1/n_b) Σ_i m_bi r_i x̃_iᵀ + λθ differs from the exact one by at most
    γ_k·[Σ_i w_i ‖x̃_i‖(‖r_i‖ + ‖θ‖‖x̃_i‖ + 4) + λ‖θ‖], γ_k = k·u/(1 − k·u), k = n + (number of
    parameters) + 16, u the unit roundoff (Higham, Accuracy and Stability of Numerical Algorithms,
    2002, §3.1: sums and dot products of k terms; the ‖θ‖‖x̃_i‖ term is the logits' error passed
    through the sigmoid or softmax, whose Jacobian has norm <= 1; 4 covers exp, log and the
    normalisation of the weights). It is doubled for the second-order terms.
    """
    norms = torch.linalg.vector_norm(gradient.reshape(gradient.shape[0], -1), dim=1)
    if not certify:
        return norms, norms
    parameter_norms = torch.linalg.vector_norm(theta.reshape(theta.shape[0], -1), dim=1)
    feature_norms = objective.feature_norms
    residual_norms = objective.residual_norms(probabilities)
    per_record = residual_norms + parameter_norms.unsqueeze(1) * feature_norms + 4.0
    k = objective.features.shape[-2] + theta[0].numel() + 16
    unit_roundoff = torch.finfo(theta.dtype).eps / 2
    gamma = k * unit_roundoff / (1.0 - k * unit_roundoff)
    scale = (objective.weights * per_record * feature_norms).sum(dim=-1) + objective.regularization * parameter_norms
    return norms, norms + 2.0 * gamma * scale


# A model whose computed gradient norm is below this fraction of the tolerance stops its Newton
# steps: what keeps its bound above the tolerance is then the rounding allowance, which further
# steps do not shrink (certify_minimisers re-evaluates it in long double instead).
_SETTLED_FRACTION = 0.25


def _minimise(objective, theta, tol, max_iter, certify=True):
    """Batched Newton with Armijo backtracking until every model's gradient bound is <= tol.

    Returns (θ, iterations, per-model gradient bounds). The bound is ‖∇J(θ)‖₂ plus, when
    ``certify``, its rounding allowance (:func:`_gradient_bound`), so that a model whose bound is
    <= tol has ‖∇J(θ)‖₂ <= tol exactly. With ``certify``, a model also stops once its computed
    norm is <= tol/4 (:data:`_SETTLED_FRACTION`) and its bound may stay above tol. The pass that
    evaluates J at an accepted candidate also yields the probabilities for the next gradient and
    Hessian, so a Newton iteration without backtracking makes one forward pass.
    """
    shape = (-1,) + (1,) * (theta.ndim - 1)
    value, probabilities = objective.evaluate(theta)
    for iteration in range(max_iter + 1):
        gradient = objective.gradient(theta, probabilities)
        norms, bounds = _gradient_bound(objective, theta, probabilities, gradient, certify)
        converged = (bounds <= tol) | (norms <= _SETTLED_FRACTION * tol) if certify else bounds <= tol
        if bool(converged.all()) or iteration == max_iter:
            return theta, iteration, bounds
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


def _long_double_gradient_bounds(objective, theta, models):
    """Certified ‖∇J_b(θ_b)‖₂ bounds of the ``models`` (index tensor) from a long-double evaluation.

    The same computation and allowance as :func:`_gradient_bound` in numpy's ``longdouble``
    (x87 80-bit on x86-64 Linux, unit roundoff 2⁻⁶⁴, 2048 times below float64's; on platforms
    where it is float64 the bound is float64's), θ and the features being exact in it, plus the
    error of the float64 weights themselves: w_i = m_i/Σ_j m_j rounded with relative error at most
    γ_{m+1} in float64 (a sum of at most m positive terms and one division; Higham 2002, §3.1),
    m the row length, which moves the loss part of the gradient by at most
    γ_{m+1}/(1 − γ_{m+1})·Σ_i ŵ_i ‖r_i‖‖x̃_i‖. Each bound is rounded up to float64.
    """
    index = models.cpu().numpy()
    long = np.longdouble
    features = objective.features.cpu().numpy().astype(long)
    features = features if features.ndim == 2 else features[index]
    shared = features.ndim == 2
    weights = objective.weights.cpu().numpy().astype(long)[index]
    parameters = theta.cpu().numpy().astype(long)[index]
    regularization = long(objective.regularization)
    if parameters.ndim == 2:
        labels = objective.labels.cpu().numpy().astype(long)
        labels = labels if labels.ndim == 1 else labels[index]
        logits = np.einsum("bp,np->bn" if shared else "bp,bnp->bn", parameters, features)
        with np.errstate(over="ignore"):  # exp(-z) = inf gives the exact limit sigmoid = 0
            residuals = 1 / (1 + np.exp(-logits)) - labels
        residual_norms = np.abs(residuals)
        gradient = np.einsum("bn,np->bp" if shared else "bn,bnp->bp", weights * residuals, features)
    else:
        one_hot = objective.one_hot.cpu().numpy().astype(long)
        one_hot = one_hot if one_hot.ndim == 2 else one_hot[index]
        logits = np.einsum("bcp,np->bcn" if shared else "bcp,bnp->bcn", parameters, features)
        exponentials = np.exp(logits - logits.max(axis=1, keepdims=True))
        residuals = exponentials / exponentials.sum(axis=1, keepdims=True) - one_hot
        residual_norms = np.sqrt((residuals * residuals).sum(axis=1))
        gradient = np.einsum("bcn,np->bcp" if shared else "bcn,bnp->bcp", residuals * weights[:, None, :], features)
    gradient = (gradient + regularization * parameters).reshape(len(index), -1)
    norms = np.sqrt((gradient * gradient).sum(axis=1))
    parameter_norms = np.sqrt((parameters * parameters).reshape(len(index), -1).sum(axis=1))
    feature_norms = np.sqrt((features * features).sum(axis=-1))
    per_record = residual_norms + parameter_norms[:, None] * feature_norms + 4
    k = features.shape[-2] + parameters[0].size + 16
    unit_roundoff = np.finfo(long).eps / 2
    gamma = k * unit_roundoff / (1 - k * unit_roundoff)
    scale = (weights * per_record * feature_norms).sum(axis=-1) + regularization * parameter_norms
    rows = weights.shape[1] + 1
    weight_gamma = long(rows * 2.0**-53) / (1 - long(rows * 2.0**-53))
    weight_error = weight_gamma / (1 - weight_gamma) * (weights * residual_norms * feature_norms).sum(axis=-1)
    bounds = norms + 2 * gamma * scale + weight_error
    rounded = bounds.astype(np.float64)
    rounded = np.where(rounded < bounds, np.nextafter(rounded, np.inf), rounded)
    return torch.as_tensor(rounded, dtype=torch.float64, device=theta.device)


_FLOAT32_WORKING_TOLERANCE = 1e-4
# Gathered per-model records (B, m, p) at most this many elements (512 MiB in float64).
_OWN_RECORDS_MAX_ELEMENTS = 2**26


def _own_records(weights, num_features):
    """Indices (B, m) of every model's records, or None when the models share the pool.

    When every model weights at most half of the pool and a record is in at most two models on
    average (one client's block of a federated pool, say), each model is trained on its own
    gathered records (B, m, p), m the largest record count: a pass costs O(B m C p) instead of
    O(B n C p) over the shared pool, B times less for B disjoint clients. Row b lists its records
    with positive weight in pool order, then records of weight 0 (which add nothing to any sum)
    up to m. Models on overlapping subsets of a pool (audit shadows on random halves) keep the
    shared layout, one GEMM over the pool, and the pooled optimum, close to each of them, as
    their warm start.
    """
    selected = weights > 0
    counts = selected.sum(dim=1)
    width = int(counts.max())
    num_records = weights.shape[1]
    if (2 * width > num_records or int(counts.sum()) > 2 * num_records
            or weights.shape[0] * width * num_features > _OWN_RECORDS_MAX_ELEMENTS):
        return None
    return torch.argsort((~selected).to(torch.int8), dim=1, stable=True)[:, :width]
# Exact Newton costs O(n (C p)²) per step to form the Hessian, Kronecker-preconditioned CG about
# six passes of O(n C p): exact is cheaper only for the smallest heads.
_EXACT_NEWTON_MAX_PARAMETERS = 32
# The certification fallback (a few stalled models) forms exact Hessians up to this size (32 MiB each).
_FALLBACK_EXACT_NEWTON_MAX_PARAMETERS = 2048


def logistic_objective(features: torch.Tensor, labels: torch.Tensor, weights: torch.Tensor, regularization: float,
                       num_classes: int, max_cg_iterations: int = 500, preconditioner: torch.Tensor | None = None,
                       exact_newton: bool | None = None) -> _BinaryObjective | _MultinomialObjective:
    """The batched mean-form objective J_b of B models on bias-augmented ``features``.

    ``features``: (n, p) shared by all models, or (B, m, p), model b's own records (then
    ``labels`` is (B, m)); ``labels``: int64 tensor (n,); ``weights``: (B, n) or (B, m), each row
    summing to 1 (1/n_b on the records of model b); ``preconditioner``: the pooled Hessian's
    Cholesky factor (multinomial CG), or None. Without one, multinomial directions are exact
    Newton (every model's (C p)² Hessian) when ``exact_newton``, else conjugate gradients with the
    per-model Kronecker preconditioner. ``exact_newton=None`` picks exact Newton for C·p <= 32,
    where forming the Hessian costs less than the conjugate-gradient passes, and CG otherwise.
    """
    if num_classes == 2:
        return _BinaryObjective(features, labels.to(features.dtype), weights, regularization)
    if exact_newton is None:
        exact_newton = num_classes * features.shape[-1] <= _EXACT_NEWTON_MAX_PARAMETERS
    return _MultinomialObjective(features, labels, weights, regularization, num_classes, max_cg_iterations,
                                 preconditioner, exact_newton)


def certify_minimisers(objective: _BinaryObjective | _MultinomialObjective, theta: torch.Tensor,
                       gradient_tolerance: float, max_iter: int) -> tuple[torch.Tensor, int, float]:
    """Newton-refine θ (float64) until ‖∇J_b(θ_b)‖₂ <= τ is certified for every model.

    Certified: the computed gradient norm plus its rounding allowance (:func:`_gradient_bound`)
    is <= τ = ``gradient_tolerance``. For a λ-strongly convex J_b that gives
    ‖θ_b − θ_b*‖₂ <= ‖∇J_b(θ_b)‖₂/λ <= τ/λ (see
    :func:`dpmech.sensitivity.approximate_minimizer_sensitivity`), which is what lets a trainer
    declare the exact minimiser's sensitivity plus 2τ/λ. Returns (θ, Newton iterations, the
    largest certified bound).

    A model not certified after ``max_iter`` batched iterations gets up to ``max_iter`` more
    Newton steps on its own, with exact directions from its full Hessian (Cholesky, for
    C·p <= 2048; the batched directions are truncated conjugate gradients), and a model whose float64 rounding allowance
    alone exceeds τ (large n and ‖θ‖: the allowance grows as n‖θ‖, and small λ or a small
    feature bound b make ‖θ‖ large) is re-evaluated in long double
    (:func:`_long_double_gradient_bounds`). RuntimeError, naming the models and the bounds
    reached, only if none of these certifies τ.
    """
    if theta.dtype != torch.float64 or objective.features.dtype != torch.float64:
        raise ValueError("certify_minimisers needs float64 parameters and objective (float32 rounding exceeds τ)")
    theta, iterations, bounds = _minimise(objective, theta, gradient_tolerance, max_iter, certify=True)
    failing = torch.nonzero(bounds > gradient_tolerance).flatten()
    if len(failing):
        refined, more, refined_bounds = _minimise(objective.select(failing), theta[failing], gradient_tolerance,
                                                  max_iter, certify=True)
        theta, bounds = theta.index_copy(0, failing, refined), bounds.index_copy(0, failing, refined_bounds)
        iterations += more
        failing = failing[refined_bounds > gradient_tolerance]
    if len(failing):
        extended = torch.minimum(bounds[failing], _long_double_gradient_bounds(objective, theta, failing))
        bounds = bounds.index_copy(0, failing, extended)
        failing = failing[extended > gradient_tolerance]
    if len(failing):
        reached = ", ".join(f"model {int(model)}: {float(bounds[model]):.3g}" for model in failing[:10])
        raise RuntimeError(
            f"Newton could not certify ‖∇J‖₂ <= gradient tolerance {gradient_tolerance:g} for {len(failing)} model(s) "
            f"in {max_iter} batched and {max_iter} exact iterations, with float64 and long-double rounding allowances "
            f"(bounds reached: {reached}); raise max_iter or the tolerance"
        )
    return theta, iterations, float(bounds.max())


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
        Newton iterations, batched; a model not certified by then gets up to ``max_iter`` exact
        Newton steps on its own and a long-double re-evaluation (:func:`certify_minimisers`), and
        RuntimeError names it if none certifies τ. With float32,
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
    for binary or (B, C, p) for multinomial, p = d + fit_intercept, on ``device``;
    ``gradient_norm_bound_``, the largest certified ‖∇J_b‖₂; ``n_iter_``, the Newton iterations;
    ``pooled_parameters_``, the pooled warm start on a shared pool, None when every model was
    trained on its own records (module docstring, Layouts).
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
        own = _own_records(weights, features.shape[1])
        if own is not None:
            features, labels, weights = features[own], labels[own], weights.gather(1, own)

        def objective(row_weights, preconditioner=None):
            return logistic_objective(features.to(row_weights.dtype), labels, row_weights, regularization, num_classes,
                                      max_cg_iterations, preconditioner)

        # float64 Newton runs to the certified tolerance; float32 runs to a working tolerance and the
        # certificate comes from a float64 refinement (float32's rounding allowance exceeds tol).
        certify = self.dtype == torch.float64
        working_tolerance = tol if certify else max(tol, _FLOAT32_WORKING_TOLERANCE)
        shape = (features.shape[-1],) if num_classes == 2 else (num_classes, features.shape[-1])
        preconditioner = None
        if own is None:
            pooled_weights = torch.full((1, num_records), 1.0 / num_records, dtype=self.dtype, device=self.device)
            pooled_objective = objective(pooled_weights)
            pooled, _, _ = _minimise(pooled_objective, torch.zeros((1,) + shape, dtype=self.dtype, device=self.device),
                                     working_tolerance, max_iter, certify)
            preconditioner = pooled_objective.hessian_factor(pooled) if num_classes > 2 else None
            start = pooled.expand((weights.shape[0],) + shape).clone()
            self.pooled_parameters_ = pooled[0]
        else:
            start = torch.zeros((weights.shape[0],) + shape, dtype=self.dtype, device=self.device)
            self.pooled_parameters_ = None
        theta, self.n_iter_, _ = _minimise(objective(weights, preconditioner), start, working_tolerance, max_iter, certify)
        if not certify:
            weights = self._weights(membership, num_records, torch.float64)
            weights = weights if own is None else weights.gather(1, own)
            preconditioner = None if preconditioner is None else preconditioner.to(torch.float64)
            theta = theta.to(torch.float64)
        self.parameters_, refinements, self.gradient_norm_bound_ = certify_minimisers(
            objective(weights, preconditioner), theta, tol, max_iter
        )
        self.n_iter_ += refinements
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
