r"""Randomized response for label differential privacy: RR, RRTop-k and RRWithPrior.

Mechanisms of Ghazi, Golowich, Kumar, Manurangsi & Zhang, "Deep Learning with
Label Differential Privacy" (NeurIPS 2021), used by FedGM (seed 003, Alg. 2
and 3) and implemented in ``google-research/label-dp``.

Neighbouring relation: label DP, i.e. replace-one on labels. Two datasets
are neighbours when they differ in the label of one example; the features,
and the priors computed from them, are the same in both. Every example's
label is randomised independently, so one call on a batch is ε-label-DP
with the ε of one example (parallel composition); randomising the same
example twice is two releases.

Priors. RRTop-k and RRWithPrior are ε-label-DP for every prior that does not
depend on the example's own label (for example a model trained on other
examples, or on an earlier stage's disjoint data). Passing a prior computed
from the true label voids the guarantee.

Scope. Label DP protects only the labels passed through these mechanisms;
features are public by assumption. Anything computed from the true labels
before randomisation (for example FedGM's synthetic images, distilled by
gradient matching on private (x, y) pairs) is not covered by the ε here.

Ties. Y_k, the k labels of highest prior, is read off a stable sort by
descending prior: among equal priors the lower label index comes first.
k* is the smallest k that attains the maximum weight. Both rules depend only
on the prior, so they cannot affect privacy.

Each sampler has an exact counterpart, ``*_distribution``, that returns the
(n, K) matrix of output probabilities, one row per example; the tests and
the verifier enumerate these.
"""

from __future__ import annotations

import numpy as np

from . import validation as check
from .events import REPLACE_ONE, PureEpsilonEvent

PRIOR_SUM_TOLERANCE = 1e-9


def _validated_num_classes(num_classes) -> int:
    return check.integer_scalar("num_classes", num_classes, 2)


def _labels_array(labels) -> np.ndarray:
    array = np.asarray(labels)
    if array.ndim != 1 or array.dtype.kind == "b":
        raise ValueError(
            f"labels must be a 1-D array of integer class indices (got dtype {array.dtype}, shape {array.shape})"
        )
    return array


def _validated_labels(labels, num_classes: int) -> np.ndarray:
    array = _labels_array(labels)
    if array.dtype.kind not in "iu" and array.size:
        array = np.asarray(check.integer_at_least("labels", array, 0))
    if array.size and (array.min() < 0 or array.max() >= num_classes):
        bad = array[(array < 0) | (array >= num_classes)][0]
        raise ValueError(f"labels must be integers in [0, {num_classes}) (got {bad!r})")
    return array.astype(np.int64)


def _validated_priors(priors, num_examples: int) -> np.ndarray:
    array = np.asarray(priors, dtype=float) if not isinstance(priors, np.ndarray) else priors.astype(float)
    if array.ndim != 2 or array.shape[0] != num_examples or array.shape[1] < 2:
        raise ValueError(
            f"priors must be an (n, K) array with one row per example (n = {num_examples}) and K >= 2 "
            f"columns (got shape {array.shape})"
        )
    check.non_negative("priors", array)
    row_sums = array.sum(axis=1)
    bad = np.abs(row_sums - 1.0) > PRIOR_SUM_TOLERANCE
    if np.any(bad):
        raise ValueError(
            f"priors must have rows that sum to 1 within {PRIOR_SUM_TOLERANCE:g} "
            f"(row {int(np.argmax(bad))} sums to {row_sums[bad][0]!r})"
        )
    return array


def _validated_label_inputs(labels, priors):
    labels_array = _labels_array(labels)
    priors = _validated_priors(priors, labels_array.shape[0])
    return _validated_labels(labels_array, priors.shape[1]), priors


def _keep_and_other(epsilon: float, k):
    """e^ε/(e^ε+k−1) and 1/(e^ε+k−1), written with e^{−ε} so large ε cannot overflow."""
    shrink = np.exp(-epsilon)
    keep = 1.0 / (1.0 + (np.asarray(k, dtype=float) - 1.0) * shrink)
    return keep, keep * shrink


def _prior_order(priors: np.ndarray) -> np.ndarray:
    """Labels by descending prior, ties to the lower label index (a stable sort of −prior)."""
    return np.argsort(-priors, axis=1, kind="stable")


def _ranks(order: np.ndarray) -> np.ndarray:
    """rank[i, j] = position of label j in row i of ``order``."""
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(order.shape[1])[None, :], axis=1)
    return ranks


def _optimal_k(priors: np.ndarray, order: np.ndarray, epsilon: float, google_compat: bool) -> np.ndarray:
    """k* = argmax_k w_k per row, with w_k = e^ε/(e^ε+k−1)·Σ_{j∈Y_k} p_j (smallest k on ties).

    ``google_compat`` uses the denominator 1 + (k−2)e^{−ε} of
    ``label_dp/train.py`` (an off-by-one; see :func:`rr_with_prior`).
    """
    top_mass = np.cumsum(np.take_along_axis(priors, order, axis=1), axis=1)
    k = np.arange(1, priors.shape[1] + 1, dtype=float)
    offset = 2.0 if google_compat else 1.0
    weights = top_mass / (1.0 + (k - offset) * np.exp(-epsilon))
    return np.argmax(weights, axis=1) + 1


def _top_k_distribution(labels, priors, k, epsilon) -> np.ndarray:
    """Output probabilities of RRTop-k with one k per row."""
    rows = np.arange(labels.shape[0])
    ranks = _ranks(_prior_order(priors))
    in_top = ranks < k[:, None]
    label_in_top = in_top[rows, labels]
    keep, other = _keep_and_other(epsilon, k)
    fill = np.where(label_in_top, other, 1.0 / k)
    probabilities = np.where(in_top, fill[:, None], 0.0)
    probabilities[rows[label_in_top], labels[label_in_top]] = keep[label_in_top]
    return probabilities


def _sample_top_k(labels, priors, k, epsilon, rng) -> np.ndarray:
    """Draw RRTop-k outputs with one k per row, from two uniform draws per row (no probability matrix)."""
    rows = np.arange(labels.shape[0])
    order = _prior_order(priors)
    label_rank = _ranks(order)[rows, labels]
    label_in_top = label_rank < k
    keep, _ = _keep_and_other(epsilon, k)
    kept = label_in_top & (rng.random(labels.shape[0]) < keep)
    # A member of Y_k that is not kept moves to one of the k−1 others; a
    # non-member moves to one of all k. k = 1 keeps with probability 1, so
    # the bound max(k−1, 1) is only there to keep the draw well defined.
    draw_bound = np.where(label_in_top, np.maximum(k - 1, 1), k)
    position = rng.integers(0, draw_bound)
    position = position + (label_in_top & (position >= label_rank))
    return np.where(kept, labels, order[rows, position])


def randomized_response_distribution(labels, epsilon, num_classes) -> np.ndarray:
    """Exact output probabilities of K-ary randomized response, an (n, K) matrix.

    Row i is e^ε/(e^ε+K−1) at ``labels[i]`` and 1/(e^ε+K−1) elsewhere
    (Warner 1965; Ghazi et al. 2021, RR_ε). ε-label-DP: every ratio of two
    rows is at most e^ε, attained at the kept label.
    """
    epsilon = check.positive("epsilon", epsilon)
    num_classes = _validated_num_classes(num_classes)
    labels = _validated_labels(labels, num_classes)
    keep, other = _keep_and_other(epsilon, num_classes)
    probabilities = np.full((labels.shape[0], num_classes), float(other))
    probabilities[np.arange(labels.shape[0]), labels] = keep
    return probabilities


def randomized_response(labels, epsilon, num_classes, rng) -> np.ndarray:
    """K-ary randomized response: each label is kept with probability e^ε/(e^ε+K−1), else replaced.

    A replaced label is uniform over the K−1 other classes, so each is output
    with probability 1/(e^ε+K−1). ε-label-DP under replace-one on labels
    (see the module docstring); the ledger event is
    :func:`randomized_response_event`.

    Args:
        labels: 1-D integer array of class indices in [0, num_classes).
        epsilon: ε > 0.
        num_classes: K >= 2.
        rng: ``numpy.random.Generator`` or an integer seed.

    Returns:
        int64 array of the randomised labels, the shape of ``labels``.
    """
    epsilon = check.positive("epsilon", epsilon)
    num_classes = _validated_num_classes(num_classes)
    labels = _validated_labels(labels, num_classes)
    rng = check.generator("rng", rng)
    keep, _ = _keep_and_other(epsilon, num_classes)
    kept = rng.random(labels.shape[0]) < keep
    replacement = (labels + 1 + rng.integers(0, num_classes - 1, size=labels.shape[0])) % num_classes
    return np.where(kept, labels, replacement)


def randomized_response_event(epsilon, num_classes) -> PureEpsilonEvent:
    """Ledger event of one :func:`randomized_response` call: K-ary RR, exactly, under replace-one."""
    return PureEpsilonEvent(epsilon, num_outcomes=_validated_num_classes(num_classes), neighbouring=REPLACE_ONE)


def _validated_k(k, num_classes: int) -> int:
    k = check.integer_scalar("k", k, 1)
    if k > num_classes:
        raise ValueError(f"k must be an integer in [1, K] = [1, {num_classes}] (got {k!r})")
    return k


def rr_top_k_distribution(labels, priors, k, epsilon) -> np.ndarray:
    """Exact output probabilities of RRTop-k, an (n, K) matrix (arguments as in :func:`rr_top_k`)."""
    epsilon = check.positive("epsilon", epsilon)
    labels, priors = _validated_label_inputs(labels, priors)
    k = _validated_k(k, priors.shape[1])
    return _top_k_distribution(labels, priors, np.full(labels.shape[0], k), epsilon)


def rr_top_k(labels, priors, k, epsilon, rng) -> np.ndarray:
    """RRTop-k (Ghazi et al. 2021, Alg. 2; FedGM Alg. 2): randomized response restricted to Y_k.

    Y_k is the set of the k labels of highest prior in the example's row of
    ``priors`` (ties: lower label index first).

    * y ∈ Y_k: output y with probability e^ε/(e^ε+k−1) and each other member
      of Y_k with probability 1/(e^ε+k−1).
    * y ∉ Y_k: output a uniform draw from Y_k.

    ε-label-DP for any label-independent prior: every output lies in Y_k,
    and an output's probability is at most e^ε/(e^ε+k−1) and at least
    1/(e^ε+k−1) over all labels (1/k lies between them). A public
    implementation draws uniformly from all K labels when y ∉ Y_k; an output
    outside Y_k then has probability 1/K under that label and 0 under a
    label in Y_k, so that variant is not ε-DP for any finite ε.

    Args:
        labels: 1-D integer array of n class indices in [0, K).
        priors: (n, K) array, one prior per example, rows non-negative and
            summing to 1 within 1e-9.
        k: size of Y_k, an integer in [1, K].
        epsilon: ε > 0.
        rng: ``numpy.random.Generator`` or an integer seed.

    Returns:
        int64 array of n randomised labels, each in Y_k of its row.
    """
    epsilon = check.positive("epsilon", epsilon)
    labels, priors = _validated_label_inputs(labels, priors)
    k = _validated_k(k, priors.shape[1])
    rng = check.generator("rng", rng)
    return _sample_top_k(labels, priors, np.full(labels.shape[0], k), epsilon, rng)


def rr_top_k_event(epsilon, k) -> PureEpsilonEvent:
    """Ledger event of one :func:`rr_top_k` call: k-ary randomized response, under replace-one.

    Claim: for all labels y, y' and all α >= 0 the hockey-stick divergence
    H_α(M_y ‖ M_y') = Σ_o (M_y(o) − α M_y'(o))_+ of RRTop-k is at most
    H_α(P ‖ Q) of the k-ary RR pair P = (p, q, …, q), Q = (q, p, q, …, q),
    p = e^ε/(e^ε+k−1), q = 1/(e^ε+k−1), whose value for α >= 1 is (p − α q)_+.
    So k-ary RR is a dominating pair, tighter than binary RR for k > 2.

    Proof for α >= 1. Both labels in Y_k: the rows are exactly the pair.
    Both outside: the rows are equal. y ∈ Y_k, y' ∉ Y_k: the rows are
    (p, q, …, q) and uniform 1/k on Y_k, with q <= 1/k <= p. Then
    H_α(M_y ‖ M_y') = (p − α/k)_+ <= (p − α q)_+, and
    H_α(M_y' ‖ M_y) = (k−1)(1/k − α q)_+ <= (p − α q)_+, because
    k(e^ε+k−1)·[(p − α q) − (k−1)(1/k − α q)] = e^ε − (k−1)² + α k(k−2),
    which is e^ε − 1 >= 0 at α = 1 and grows with α when k >= 2.
    For α < 1, H_α(A ‖ B) = 1 − α + α H_{1/α}(B ‖ A) and the pair is
    symmetric, so the α >= 1 case of the reversed labels gives it.
    The tests check the claim by exact enumeration.

    k = 1 outputs a constant, so any event is valid; the generic ε-DP event
    (binary RR) is returned for it.
    """
    k = check.integer_scalar("k", k, 1)
    return PureEpsilonEvent(epsilon, num_outcomes=k if k >= 2 else None, neighbouring=REPLACE_ONE)


def rr_with_prior_optimal_k(priors, epsilon, google_compat=False) -> np.ndarray:
    """k* of RRWithPrior for each row of an (n, K) prior (see :func:`rr_with_prior`)."""
    epsilon = check.positive("epsilon", epsilon)
    google_compat = check.boolean("google_compat", google_compat)
    priors_array = np.asarray(priors, dtype=float)
    priors = _validated_priors(priors_array, priors_array.shape[0] if priors_array.ndim == 2 else -1)
    return _optimal_k(priors, _prior_order(priors), epsilon, google_compat)


def rr_with_prior_distribution(labels, priors, epsilon, google_compat=False) -> np.ndarray:
    """Exact output probabilities of RRWithPrior, an (n, K) matrix (arguments as in :func:`rr_with_prior`)."""
    epsilon = check.positive("epsilon", epsilon)
    google_compat = check.boolean("google_compat", google_compat)
    labels, priors = _validated_label_inputs(labels, priors)
    k = _optimal_k(priors, _prior_order(priors), epsilon, google_compat)
    return _top_k_distribution(labels, priors, k, epsilon)


def rr_with_prior(labels, priors, epsilon, rng, google_compat=False) -> np.ndarray:
    """RRWithPrior (Ghazi et al. 2021, Alg. 3; FedGM Alg. 3): RRTop-k with the k that maximises P[output = y].

    k* = argmax_{k ∈ [1, K]} w_k, w_k = e^ε/(e^ε+k−1) · Σ_{j∈Y_k} p_j, which is
    the probability that RRTop-k returns the true label when y is drawn from
    the prior; then RRTop-k* is applied. The FedGM PDF prints the factor as
    "ϵ/(ϵ+k−1)": the superscript was lost in typesetting, the factor is e^ε.

    ε-label-DP for any label-independent prior: k* depends only on the prior,
    and RRTop-k is ε-label-DP for every fixed k. The ledger event is the
    generic ε-DP one (:func:`rr_with_prior_event`) because k* varies per row.

    ``google_compat=True`` reproduces ``label_dp/train.py`` of
    google-research/label-dp, which divides the top-k mass by
    1 + (k−2)e^{−ε} instead of the paper's 1 + (k−1)e^{−ε} (an off-by-one
    in its 0-based loop; for k = 1 it divides p_1 by 1 − e^{−ε}). This
    changes k*, hence utility, but not privacy. The default is the paper.

    Args:
        labels: 1-D integer array of n class indices in [0, K).
        priors: (n, K) array, rows non-negative and summing to 1 within 1e-9.
        epsilon: ε > 0.
        rng: ``numpy.random.Generator`` or an integer seed.
        google_compat: use the reference code's k* instead of the paper's.

    Returns:
        int64 array of n randomised labels.
    """
    epsilon = check.positive("epsilon", epsilon)
    google_compat = check.boolean("google_compat", google_compat)
    labels, priors = _validated_label_inputs(labels, priors)
    rng = check.generator("rng", rng)
    k = _optimal_k(priors, _prior_order(priors), epsilon, google_compat)
    return _sample_top_k(labels, priors, k, epsilon, rng)


def rr_with_prior_event(epsilon) -> PureEpsilonEvent:
    """Ledger event of one :func:`rr_with_prior` call: generic ε-DP (binary RR dominates it), replace-one."""
    return PureEpsilonEvent(epsilon, neighbouring=REPLACE_ONE)


def worst_case_log_ratio(distribution) -> float:
    """ε of a finite mechanism given as a channel matrix: max over rows y, y' and columns o of log(P[y,o]/P[y',o]).

    Rows are the output distributions for each input (all inputs that are
    neighbours of each other, as labels are under label DP). Returns ``inf``
    when some output has positive probability under one row and zero under
    another; pure ε-DP holds exactly for ε >= the value returned.
    """
    matrix = np.asarray(distribution, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] < 1 or matrix.shape[1] < 1:
        raise ValueError(f"distribution must be a non-empty 2-D array (got shape {matrix.shape})")
    check.non_negative("distribution", matrix)
    largest = matrix.max(axis=0)
    smallest = matrix.min(axis=0)
    support = largest > 0
    if np.any(smallest[support] == 0):
        return float("inf")
    return float(np.max(np.log(largest[support]) - np.log(smallest[support])))
