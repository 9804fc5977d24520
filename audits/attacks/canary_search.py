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
the whitened norm Σ_h ‖Δθ_h / σ_h‖² over x′ in the ball (projected gradient ascent from several starts), every label,
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
from scipy.special import expit, softmax
from threadpoolctl import threadpool_limits

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

    def input_gradient_products(self, features: np.ndarray, labels: np.ndarray | int, vectors: np.ndarray) -> np.ndarray:
        """vᵀ d∇ℓ(θ̂; x, y)/dx for each row (B, d): the vector–Jacobian product of the parameter
        gradient with respect to the feature, one (x, y, v) per row (v of shape (P,)).

        Binary (w the weights, x̃ = (x, 1)): ∇ℓ = (p − y) x̃, so vᵀJ = p(1 − p)(v·x̃) w + (p − y) v[:d].
        Multinomial (W the (C, d) weights, rows v_c of v): ∇ℓ_c = (p_c − y_c) x̃, so
        vᵀJ = Σ_c (v_c·x̃) p_c (W_c − pᵀW) + Σ_c (p_c − y_c) v_c[:d].
        """
        inputs = self.inputs(features)
        dimension = inputs.shape[1] - 1
        labels = np.broadcast_to(labels if self.fixed_label is None else self.fixed_label, (inputs.shape[0],))
        probabilities = self.probabilities(inputs)
        if self.binary:
            weights = self.parameters[:dimension]
            along_input = np.sum(vectors * inputs, axis=1)
            return ((probabilities * (1.0 - probabilities) * along_input)[:, None] * weights[None, :]
                    + (probabilities - labels)[:, None] * vectors[:, :dimension])
        weights = self.parameters[:, :dimension]
        blocks = vectors.reshape(inputs.shape[0], self.parameters.shape[0], dimension + 1)
        weighted = np.einsum("bck,bk->bc", blocks, inputs) * probabilities
        residuals = probabilities - np.eye(self.parameters.shape[0])[labels]
        return (weighted @ weights - np.sum(weighted, axis=1, keepdims=True) * (probabilities @ weights)
                + np.einsum("bc,bcj->bj", residuals, blocks[:, :, :dimension]))

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


def _projected_ascent(objective: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], points: np.ndarray,
                      bound: float, *, max_iterations: int = 200, min_move: float = 1e-9,
                      min_gain: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
    """Projected gradient ascent on ‖x‖ <= ``bound``, each row its own problem, all rows at once.

    ``objective(points)`` returns (values (B,), gradients (B, d)). Each row moves to
    P(x + s·g) (P: :func:`dpmech.clip_features`, the exact projection onto the ball; g the gradient,
    less its normal part where x is on the sphere and g points out) when that
    increases its value by more than the relative ``min_gain``, and then takes the Barzilai–Borwein
    step s = ‖Δx‖²/(Δx·(−Δg)) (the spectral projected gradient of Birgin, Martínez & Raydan 2000,
    kept monotone); otherwise it halves s and stays. A row stops when its trial
    point moves less than ``min_move``·bound, or after ``max_iterations`` steps. Returns the points (inside the ball exactly) and their values.
    """
    def ascent_directions(points, gradients):
        # On the sphere with the gradient pointing out, only its tangential part can move the point:
        # the normal part would only be projected away (and would cap the step).
        outward = np.sum(gradients * points, axis=1)
        on_sphere = (np.sum(points**2, axis=1) >= (1.0 - 1e-12) * bound**2) & (outward > 0)
        return gradients - np.where(on_sphere, outward / bound**2, 0.0)[:, None] * points

    values, gradients = objective(points)
    directions = ascent_directions(points, gradients)
    norms = np.linalg.norm(directions, axis=1)
    steps = bound / np.where(norms > 0, norms, 1.0)
    active = norms > 0
    for _ in range(max_iterations):
        moved = dpmech.clip_features(points + steps[:, None] * directions, bound)
        # A row is done when its trial point no longer moves (a stationary point of the projected step).
        active &= np.linalg.norm(moved - points, axis=1) > min_move * bound
        if not np.any(active):
            break
        moved_values, moved_gradients = objective(moved)
        moved_directions = ascent_directions(moved, moved_gradients)
        # A relative gain below ``min_gain`` counts as none: rounding-level gains would keep growing the step.
        better = active & (moved_values > values * (1.0 + min_gain))
        # After a gain, the Barzilai–Borwein step ‖Δx‖²/(Δx·(−Δd)) (curvature of −f along the move);
        # doubling where that curvature is not positive.
        moves = moved - points
        curvatures = -np.sum(moves * (moved_directions - directions), axis=1)
        spectral = np.sum(moves**2, axis=1) / np.where(curvatures > 0, curvatures, 1.0)
        steps = np.where(better, np.where(curvatures > 0, spectral, 2.0 * steps), 0.5 * steps)
        points = np.where(better[:, None], moved, points)
        values = np.where(better, moved_values, values)
        directions = np.where(better[:, None], moved_directions, directions)
    return points, values


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

    def displacement_and_gradient(candidates, indices, candidate_labels):
        # Σ_h ‖O_h ∇ℓ_h(x′, y′) − r_h[i]‖² per row, and its gradient in x′ (Jᵀ(Oᵀm), one product per row).
        value, gradient = np.zeros(candidates.shape[0]), np.zeros(candidates.shape)
        for head, operator, removal in zip(heads, operators, removals):
            moved = head.gradients(candidates, candidate_labels) @ operator.T - removal[indices]
            value += np.sum(moved**2, axis=1)
            gradient += 2.0 * head.input_gradient_products(candidates, candidate_labels, moved @ operator)
        return value, gradient

    # The starts of each record: its own and opposite direction and two random directions, at the bound.
    directions = []
    for index in records:
        norm = float(np.linalg.norm(features[index]))
        own = features[index] / norm if norm > 0 else np.eye(dimension)[0]
        random_directions = rng.normal(size=(2, dimension))
        directions.append(np.vstack([-own, own, random_directions / np.linalg.norm(random_directions, axis=1, keepdims=True)]))
    num_starts = directions[0].shape[0]
    # Clipped: bound times a unit vector can come out an ulp above the bound, and a start can be the canary.
    start_block = dpmech.clip_features(bound * np.vstack(directions), bound).reshape(len(records), 1, num_starts, dimension)
    shape = (len(records), num_classes, num_starts)
    indices = np.broadcast_to(records[:, None, None], shape).ravel()
    candidate_labels = np.broadcast_to(np.arange(num_classes)[None, :, None], shape).ravel()
    starts = np.broadcast_to(start_block, shape + (dimension,)).reshape(-1, dimension)
    start_values, _ = displacement_and_gradient(starts, indices, candidate_labels)
    # Every start scored for every label at once; one ascent per (record, label) pair, from its best start.
    rows = np.arange(len(records) * num_classes) * num_starts + np.argmax(start_values.reshape(-1, num_starts), axis=1)
    indices, candidate_labels = indices[rows], candidate_labels[rows]
    # One BLAS thread: the products are small (tens of rows), and a pool's start-up and spinning
    # cost several times the arithmetic on a loaded machine.
    with threadpool_limits(1):
        candidates, values = _projected_ascent(
            lambda points: displacement_and_gradient(points, indices, candidate_labels), starts[rows], bound)
    proposals = [Canary(int(index), candidate, int(label), float(math.sqrt(value)), "influence")
                 for index, candidate, label, value in zip(indices, candidates, candidate_labels, values)]
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
