r"""Canaries designed for the release: the replaced record that moves the released parameters furthest.

Relation. Replace-one: a neighbour of the local dataset D is D with one record z_i = (x_i, y_i)
replaced by z′ = (x′, y′), ‖x′‖ <= b (the public feature bound), y′ any class. Every canary
returned here is such a neighbour (``x′`` is clipped to the ball after the search).

Soundness. The search only chooses WHICH neighbouring pair (D, D′) is tested, from the public
bound and the trained models; the audit then samples independent releases of the release step
around the two fixed trained worlds. For a fixed pair those scores are independent draws of the
two hypotheses, so the certified GDP bound on them holds whatever pair was chosen (the choice is
made before any release is drawn, with a stream independent of the releases). A correct
mechanism's ε bounds every pair, the chosen one included.

Logistic-regression heads (FedAUXfdp). The mean objective J(θ) = (1/n) Σ ℓ(θ; z) + (λ/2)‖θ‖²
with minimiser θ̂ moves, to first order, by

    Δθ ≈ −H⁻¹ (∇ℓ(θ̂; z′) − ∇ℓ(θ̂; z_i)) / n,      H = ∇²J(θ̂)

(the influence function, Koh & Liang 2017). A release of several heads is scored by the
projection statistic in the metric that whitens each head by its own σ, so the search maximises
the whitened norm Σ_h ‖Δθ_h / σ_h‖² over x′ in the ball (SLSQP from several starts), every label,
and the records with the largest removal influence; the best few proposals are then retrained
exactly with the pipeline's own training step and the largest exact displacement wins.

Projected SGD (DP-Helmet). Softmax-SLP-SGD approximates the minimiser of the same multinomial
objective (λ = Λ), so the influence proposals apply at the trained model; they are joined by the
plain proposals (the record's opposite direction and its own direction at the norm bound, every
other label) and all are retrained exactly with the user's PSGD and its shuffles, which is cheap
at these sizes. At user level the neighbour is any dataset of N records: relabellings (every
shift, and each record to the class the model finds least likely), with or without negated
features, retrained exactly.

Label-fixed scoring head. In FedAUXfdp's scoring head every private record has label 1 (local vs
public negatives), so a replacement cannot change a label; the pipeline releases it with
:func:`dpmech.sensitivity.fixed_label_logistic_regression_sensitivity`, the sensitivity that this
restriction allows (the generic bound 2L/(nλ) exceeds it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, softmax

import dpmech
from dpmech import validation as check
from trainers.data import PrivateData


@dataclass(frozen=True)
class Canary:
    """A replace-one neighbour: record ``index`` replaced by (``feature``, ``label``).

    ``predicted`` is the influence approximation of the (whitened) displacement, NaN for a plain
    proposal that was not predicted; ``kind`` says how the proposal was made.
    """

    index: int
    feature: np.ndarray
    label: int
    predicted: float
    kind: str

    def neighbour(self, local: PrivateData) -> PrivateData:
        """``local`` with record ``index`` replaced by the canary."""
        features = local.features.copy()
        labels = local.labels.copy()
        features[self.index] = self.feature
        labels[self.index] = self.label
        return PrivateData(features, labels)


@dataclass(frozen=True)
class LogisticHead:
    """One released logistic-regression head, as the influence search sees it.

    ``parameters``: θ̂ of shape (d + 1,) (binary, logit of class 1) or (C, d + 1) (multinomial);
    ``features``/``labels``: every record of its mean objective (n rows), the local records FIRST
    (row i of the local data is row i here); ``regularization`` λ; ``scale``: the whitening
    factor of its release (1/σ, or 1/sensitivity for a head released without noise);
    ``fixed_label``: the label a replaced local record has in this head whatever its class
    (FedAUXfdp's scoring head: 1), or None when it is the record's class label.
    """

    parameters: np.ndarray
    features: np.ndarray
    labels: np.ndarray
    regularization: float
    scale: float
    fixed_label: int | None = None

    @property
    def binary(self) -> bool:
        return self.parameters.ndim == 1

    def inputs(self, features) -> np.ndarray:
        features = np.atleast_2d(features)
        return np.hstack([features, np.ones((features.shape[0], 1))])

    def probabilities(self, inputs) -> np.ndarray:
        if self.binary:
            return expit(inputs @ self.parameters)
        return softmax(inputs @ self.parameters.T, axis=1)

    def gradients(self, features, labels) -> np.ndarray:
        """∇ℓ(θ̂; x, y) for each row (B, P), P = the number of parameters."""
        inputs = self.inputs(features)
        labels = np.broadcast_to(labels if self.fixed_label is None else self.fixed_label, (inputs.shape[0],))
        probabilities = self.probabilities(inputs)
        if self.binary:
            return (probabilities - labels)[:, None] * inputs
        residuals = probabilities - np.eye(self.parameters.shape[0])[labels]
        return (residuals[:, :, None] * inputs[:, None, :]).reshape(inputs.shape[0], -1)

    def gradient_jacobian(self, feature, label) -> np.ndarray:
        """d∇ℓ(θ̂; x, y)/dx at one feature vector x (P, d), P = the number of parameters."""
        inputs = self.inputs(feature)[0]
        label = label if self.fixed_label is None else self.fixed_label
        dimension = inputs.size - 1
        probabilities = self.probabilities(inputs[None, :])[0]
        if self.binary:
            return (probabilities * (1.0 - probabilities) * np.outer(inputs, self.parameters[:dimension])
                    + (probabilities - label) * np.eye(inputs.size, dimension))
        covariance = np.diag(probabilities) - np.outer(probabilities, probabilities)
        residual = probabilities - np.eye(probabilities.size)[label]
        jacobian = np.einsum("cj,k->ckj", covariance @ self.parameters[:, :dimension], inputs)
        jacobian += residual[:, None, None] * np.eye(inputs.size, dimension)[None, :, :]
        return jacobian.reshape(self.parameters.size, dimension)

    def hessian(self) -> np.ndarray:
        """∇²J(θ̂) = λI + (1/n) Σ_i (diag(p_i) − p_i p_iᵀ) ⊗ x̃_i x̃_iᵀ (binary: p_i(1 − p_i) x̃_i x̃_iᵀ)."""
        inputs = self.inputs(self.features)
        probabilities = self.probabilities(inputs)
        count = inputs.shape[0]
        if self.binary:
            curvature = (inputs * (probabilities * (1.0 - probabilities))[:, None]).T @ inputs / count
        else:
            covariances = np.einsum("ia,ab->iab", probabilities, np.eye(probabilities.shape[1])) \
                - probabilities[:, :, None] * probabilities[:, None, :]
            curvature = np.einsum("iab,ij,ik->ajbk", covariances, inputs, inputs).reshape(
                self.parameters.size, self.parameters.size) / count
        return curvature + self.regularization * np.eye(self.parameters.size)

    def influence(self) -> np.ndarray:
        """The whitened influence operator scale · H⁻¹ / n (P, P)."""
        return self.scale * np.linalg.inv(self.hessian()) / self.features.shape[0]


def search_logistic_canaries(heads: Sequence[LogisticHead], local: PrivateData, feature_bound: float,
                             num_classes: int, rng: np.random.Generator, *, num_records: int = 4,
                             num_proposals: int = 3) -> list[Canary]:
    """The ``num_proposals`` replacements with the largest predicted whitened displacement, best first.

    Maximises Σ_h ‖scale_h H_h⁻¹ (∇ℓ_h(z′) − ∇ℓ_h(z_i)) / n_h‖² (module docstring) over ‖x′‖ <= b
    (``feature_bound``), every label y′ and the ``num_records`` local records with the largest
    removal influence ‖scale_h H_h⁻¹ ∇ℓ_h(z_i) / n_h‖. ``rng`` draws the random starting directions.
    """
    bound = float(check.positive("feature_bound", feature_bound))
    num_classes = check.integer_scalar("num_classes", num_classes, 2)
    num_records = check.integer_scalar("num_records", num_records, 1)
    num_proposals = check.integer_scalar("num_proposals", num_proposals, 1)
    if not heads:
        raise ValueError("heads must hold at least one LogisticHead")
    features, labels = local.features, local.labels
    dimension = features.shape[1]
    operators = [head.influence() for head in heads]

    # removals[h][i] = scale_h H_h⁻¹ ∇ℓ_h(z_i) / n_h: record i's own influence on head h.
    removals = [head.gradients(features, labels) @ operator.T for head, operator in zip(heads, operators)]
    removal_norms = np.sqrt(sum(np.sum(block**2, axis=1) for block in removals))
    records = np.argsort(-removal_norms, kind="stable")[:num_records]

    def displacement_squared(candidates, index, label):
        return sum(np.sum((head.gradients(candidates, label) @ operator.T - removal[index])**2, axis=1)
                   for head, operator, removal in zip(heads, operators, removals))

    def negative_objective(x, index, label):
        value, gradient = 0.0, np.zeros(dimension)
        for head, operator, removal in zip(heads, operators, removals):
            moved = operator @ head.gradients(x, label)[0] - removal[index]
            value += moved @ moved
            # Jᵀ(Oᵀm) rather than (OJ)ᵀm: a matrix-vector product instead of a P×P×d one.
            gradient += 2.0 * head.gradient_jacobian(x, label).T @ (operator.T @ moved)
        return -value, -gradient

    ball = [{"type": "ineq", "fun": lambda x: bound**2 - x @ x, "jac": lambda x: -2.0 * x}]
    proposals = []
    for index in records:
        norm = float(np.linalg.norm(features[index]))
        own = features[index] / norm if norm > 0 else np.eye(dimension)[0]
        random_directions = rng.normal(size=(2, dimension))
        # Clipped: bound times a unit vector can come out an ulp above the bound, and a start can be the canary.
        starts = dpmech.clip_features(
            bound * np.vstack([-own, own, random_directions / np.linalg.norm(random_directions, axis=1, keepdims=True)]),
            bound)
        for label in range(num_classes):
            start = starts[int(np.argmax(displacement_squared(starts, index, label)))]
            solution = minimize(negative_objective, start, args=(index, label), jac=True, method="SLSQP",
                                constraints=ball, options={"maxiter": 100, "ftol": 1e-12})
            # SLSQP may end a hair outside the ball; the clip keeps the canary a valid neighbour.
            candidates = np.vstack([dpmech.clip_features(solution.x[None, :], bound), start[None, :]])
            values = displacement_squared(candidates, index, label)
            best = int(np.argmax(values))
            proposals.append(Canary(int(index), candidates[best], label, float(math.sqrt(values[best])), "influence"))
    proposals.sort(key=lambda canary: -canary.predicted)
    return proposals[:num_proposals]


def plain_canaries(local: PrivateData, feature_bound: float, num_classes: int, *, num_records: int = 4) -> list[Canary]:
    """Replacements of the ``num_records`` largest-norm records by their own and their opposite
    direction at the norm bound, with every other label (unpredicted proposals)."""
    bound = float(check.positive("feature_bound", feature_bound))
    num_records = check.integer_scalar("num_records", num_records, 1)
    norms = np.linalg.norm(local.features, axis=1)
    canaries = []
    for index in np.argsort(-norms, kind="stable")[:num_records]:
        direction = local.features[index] / norms[index] if norms[index] > 0 else np.eye(local.features.shape[1])[0]
        for sign, kind in ((-1.0, "opposite direction"), (1.0, "own direction")):
            feature = dpmech.clip_features(sign * bound * direction[None, :], bound)[0]
            for label in range(num_classes):
                if label != local.labels[index]:
                    canaries.append(Canary(int(index), feature, label, math.nan, kind))
    return canaries


@dataclass(frozen=True)
class SearchResult:
    """The exactly retrained winner of a canary search.

    ``canary``: the chosen neighbour; ``displacement``: its exact (whitened) displacement, the
    value the audit sees; ``retrained``: how many proposals were retrained exactly;
    ``displacements``: each retrained proposal's exact displacement, in proposal order.
    """

    canary: object
    displacement: float
    retrained: int
    displacements: tuple


def retrain_best(proposals: Sequence, displacement: Callable[[object], float]) -> SearchResult:
    """Retrain each proposal exactly (``displacement(proposal)``) and keep the largest."""
    if not proposals:
        raise ValueError("proposals must hold at least one canary")
    values = tuple(float(displacement(proposal)) for proposal in proposals)
    best = int(np.argmax(values))
    return SearchResult(proposals[best], values[best], len(values), values)


def user_relabellings(local: PrivateData, model: np.ndarray, feature_bound: float, num_classes: int) -> list:
    """User-level proposals: every label shift, and each record to the class ``model`` finds least
    likely, each with the user's features and with the features negated (same norms, so inside
    ``feature_bound``). Each proposal is a (description, PrivateData) pair."""
    bound = float(check.positive("feature_bound", feature_bound))
    if np.any(np.linalg.norm(local.features, axis=1) > bound):
        raise ValueError(f"local features must lie within feature_bound = {bound:g}")
    scores = np.hstack([local.features, np.ones((len(local), 1))]) @ np.asarray(model, dtype=float).T
    relabellings = [(f"labels shifted by {shift}", (local.labels + shift) % num_classes) for shift in range(1, num_classes)]
    relabellings.append(("each label set to the class the model finds least likely", np.argmin(scores, axis=1)))
    proposals = []
    for description, labels in relabellings:
        proposals.append((description, PrivateData(local.features, labels)))
        proposals.append((description + ", features negated", PrivateData(-local.features, labels)))
    return proposals
