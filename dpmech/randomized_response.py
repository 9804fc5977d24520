r"""Randomized response for label differential privacy: RR, RRTop-k and RRWithPrior.

Mechanisms of Ghazi, Golowich, Kumar, Manurangsi & Zhang, "Deep Learning with
Label Differential Privacy" (NeurIPS 2021), used by FedGM (Electronics 2024, Alg. 2
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

How the samplers draw, and floating point. RR over a set S of size k
(S = all K labels, or Y_k) is written as: with probability
u = k/(e^ε + k − 1) output a uniform draw from S, otherwise keep the label.
Then every other member of S has probability u/k = 1/(e^ε+k−1) and the
label e^ε/(e^ε+k−1), as claimed. This form needs one rounding direction
only: u is computed from expm1 (no cancellation), rounded *up*, and drawn
with :func:`dpmech.random_bits.exact_bernoulli`, which realises the double u
exactly; the uniform draw from S is exact (integer). A larger u only moves
the output toward uniform: the realised ratio k/u − (k − 1) is at most e^ε,
so the released mechanism is ε-DP whatever the rounding. (Comparing
``random()`` with the keep probability, as before, kept every label for
ε ≳ 37.4, where e^ε/(e^ε+K−1) rounds to 1: a deterministic release under a
pure-ε event.) A double cannot hold a u below 2⁻¹⁰⁷⁴ ≈ 4.9e-324; past
ε ≈ 744.4 + ln k, u is raised to 2⁻¹⁰⁷⁴, the labels change more often than
e^{−ε} suggests, and the mechanism is ε'-DP for ε' = ln(k·2¹⁰⁷⁴ − k + 1)
< ε: still within the claim. ``*_distribution`` reports the realised
probabilities, with any below 2⁻¹⁰⁷⁴ (possible only there) shown as 2⁻¹⁰⁷⁴.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import validation as check
from .events import REPLACE_ONE, NoPrivacyLossEvent, PureEpsilonEvent
from .random_bits import RngChoice, exact_bernoulli, random_source, uniform_below

PRIOR_SUM_TOLERANCE = 1e-9
# Labels are int64 and a uniform label draw must be exact: at most 2**53 classes.
MAX_NUM_CLASSES = 2**53
# randomized_response_distribution builds a dense (n, K) float matrix: at most 2**24 entries (128 MiB).
MAX_DISTRIBUTION_ENTRIES = 2**24
_SMALLEST_PROBABILITY = np.nextafter(0.0, 1.0)


def _validated_num_classes(num_classes: int) -> int:
    num_classes = check.integer_scalar("num_classes", num_classes, 2)
    if num_classes > MAX_NUM_CLASSES:
        raise ValueError(f"num_classes must be an integer in [2, 2**53] (got {num_classes!r})")
    return num_classes


def _validated_epsilon(epsilon: float) -> float:
    """One ε > 0 for the whole call: an array of ε would release several randomisations of each label."""
    value = check.positive("epsilon", epsilon)
    if np.ndim(value):
        raise ValueError(f"epsilon must be a single finite number > 0 (got an array of shape {np.shape(value)})")
    return float(value)


def _labels_array(labels: ArrayLike) -> NDArray[Any]:
    try:
        array = np.asarray(labels)
    except (TypeError, ValueError, OverflowError):
        raise ValueError("labels must be a 1-D array of integer class indices (got a ragged or non-numeric sequence)") from None
    if array.ndim != 1 or array.dtype.kind == "b":
        raise ValueError(
            f"labels must be a 1-D array of integer class indices (got dtype {array.dtype}, shape {array.shape})"
        )
    return array


def _validated_labels(labels: ArrayLike, num_classes: int) -> NDArray[np.int64]:
    array = _labels_array(labels)
    if array.dtype.kind not in "iu" and array.size:
        array = np.asarray(check.integer_at_least("labels", array, 0))
    if array.size and (array.min() < 0 or array.max() >= num_classes):
        bad = array[(array < 0) | (array >= num_classes)][0]
        raise ValueError(
            f"labels must be integers in [0, K) = [0, {num_classes}), K = num_classes or the number of prior "
            f"columns (got {bad!r})"
        )
    return array.astype(np.int64)


def _validated_priors(priors: ArrayLike, num_examples: int) -> NDArray[np.float64]:
    array = np.array(check.real_array("priors", priors, "an (n, K) array of probabilities"))
    if array.ndim != 2 or array.shape[0] != num_examples or array.shape[1] < 2:
        raise ValueError(
            f"priors must be an (n, K) array with one row per entry of labels (n = len(labels) = {num_examples}) "
            f"and K >= 2 columns (got shape {array.shape})"
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


def _validated_label_inputs(labels: ArrayLike, priors: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    labels_array = _labels_array(labels)
    priors = _validated_priors(priors, labels_array.shape[0])
    return _validated_labels(labels_array, priors.shape[1]), priors


def _uniform_probability(epsilon: float, k: int | NDArray[np.int64]) -> NDArray[np.float64]:
    """u = k/(e^ε + k − 1) rounded up, the probability of replacing the label by a uniform draw from k labels.

    For ε <= 700 the double evaluation k/(expm1(ε) + k) errs by at most 4
    rounding errors (expm1 is within 1 ulp); multiplying by 1 + 2⁻⁴⁸ and
    stepping one double up covers them. For ε > 700, u < k·e^{−ε} = 2^z with
    z = log2(k) − ε·log2(e), evaluated with a relative error far below the
    2⁻⁴⁰ added to |z|. u is at least 2⁻¹⁰⁷⁴ and at most 1.
    """
    k = np.asarray(k, dtype=float)
    if epsilon <= 700.0:
        estimate = k / (np.expm1(epsilon) + k)
    elif epsilon > 1e5:
        # k·e^{−ε} < 2^53·e^{−100000} is far below 2⁻¹⁰⁷⁴, and ε·log2(e) could overflow.
        estimate = np.zeros_like(k)
    else:
        exponent = np.log2(k) - epsilon * np.log2(np.e)
        estimate = np.exp2(exponent + np.abs(exponent) * 2.0**-40)
    upper = np.nextafter(estimate * (1.0 + 2.0**-48), np.inf)
    probability: NDArray[np.float64] = np.clip(upper, _SMALLEST_PROBABILITY, 1.0)
    return probability


def _keep_and_other(epsilon: float, k: int | NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The realised P[label] = (1 − u) + u/k and P[each other member] = u/k (≥ 2⁻¹⁰⁷⁴), with u rounded up.

    Written so that u = 1 (tiny ε) gives two equal doubles, the uniform channel it is.
    """
    k = np.asarray(k, dtype=float)
    uniform = _uniform_probability(epsilon, k)
    other = np.maximum(uniform / k, _SMALLEST_PROBABILITY)
    return (1.0 - uniform) + uniform / k, other


def _prior_order(priors: NDArray[np.float64]) -> NDArray[np.int64]:
    """Labels by descending prior, ties to the lower label index (a stable sort of −prior)."""
    return np.argsort(-priors, axis=1, kind="stable")


def _ranks(order: NDArray[np.int64]) -> NDArray[np.int64]:
    """rank[i, j] = position of label j in row i of ``order``."""
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(order.shape[1])[None, :], axis=1)
    return ranks


def _optimal_k(priors: NDArray[np.float64], order: NDArray[np.int64], epsilon: float, google_compat: bool) -> NDArray[np.int64]:
    """k* = argmax_k w_k per row, with w_k = e^ε/(e^ε+k−1)·Σ_{j∈Y_k} p_j (smallest k on ties).

    ``google_compat`` uses the denominator 1 + (k−2)e^{−ε} of
    ``label_dp/train.py`` (an off-by-one; see :func:`rr_with_prior`).
    """
    top_mass = np.cumsum(np.take_along_axis(priors, order, axis=1), axis=1)
    k = np.arange(1, priors.shape[1] + 1, dtype=float)
    offset = 2.0 if google_compat else 1.0
    # 1 + (k − offset)e^{−ε} written as (1 − e^{−ε}) + (k − offset + 1)e^{−ε}: positive for every ε > 0,
    # where Google's k = 1 term 1 − e^{−ε} would round to 0 for ε below 1.1e-16.
    # Google's k = 1 weight may overflow to +inf for subnormal ε: it is then the largest, as it should be.
    with np.errstate(over="ignore"):
        weights = top_mass / (-np.expm1(-epsilon) + (k - offset + 1.0) * np.exp(-epsilon))
    best_k: NDArray[np.int64] = np.argmax(weights, axis=1) + 1
    return best_k


def _top_k_distribution(labels: NDArray[np.int64], priors: NDArray[np.float64], k: NDArray[np.int64], epsilon: float) -> NDArray[np.float64]:
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


def _sample_top_k(labels: NDArray[np.int64], priors: NDArray[np.float64], k: NDArray[np.int64], epsilon: float, rng: RngChoice) -> NDArray[np.int64]:
    """Draw RRTop-k outputs with one k per row, without a probability matrix (see the module docstring).

    A member of Y_k is replaced by a uniform draw from Y_k with probability
    u (rounded up, drawn exactly); a non-member always is.
    """
    rows = np.arange(labels.shape[0])
    order = _prior_order(priors)
    label_in_top = _ranks(order)[rows, labels] < k
    source = random_source(rng)
    replaced = ~label_in_top | exact_bernoulli(_uniform_probability(epsilon, k), source)
    position = uniform_below(k, source)
    return np.where(replaced, order[rows, position], labels)


def randomized_response_distribution(labels: ArrayLike, epsilon: float, num_classes: int) -> NDArray[np.float64]:
    """Exact output probabilities of K-ary randomized response, an (n, K) matrix.

    Row i is e^ε/(e^ε+K−1) at ``labels[i]`` and 1/(e^ε+K−1) elsewhere
    (Warner 1965; Ghazi et al. 2021, RR_ε). ε-label-DP: every ratio of two
    rows is at most e^ε, attained at the kept label.
    """
    epsilon = _validated_epsilon(epsilon)
    num_classes = _validated_num_classes(num_classes)
    labels = _validated_labels(labels, num_classes)
    if labels.shape[0] * num_classes > MAX_DISTRIBUTION_ENTRIES:
        raise ValueError(
            f"num_classes must be an integer in [2, {max(2, MAX_DISTRIBUTION_ENTRIES // labels.shape[0])}] for "
            f"{labels.shape[0]} labels: the dense (n, K) matrix is limited to 2**24 entries (got {num_classes}); "
            f"every row is e^ε/(e^ε+K−1) at its label and 1/(e^ε+K−1) elsewhere"
        )
    keep, other = _keep_and_other(epsilon, num_classes)
    probabilities = np.full((labels.shape[0], num_classes), float(other))
    probabilities[np.arange(labels.shape[0]), labels] = keep
    return probabilities


def randomized_response(labels: ArrayLike, epsilon: float, num_classes: int, rng: RngChoice) -> NDArray[np.int64]:
    """K-ary randomized response: each label is output with probability e^ε/(e^ε+K−1), each other class 1/(e^ε+K−1).

    Drawn as: with probability K/(e^ε+K−1), rounded up, a uniform class,
    otherwise the label (see the module docstring for why this form is
    floating-point safe). ε-label-DP under replace-one on labels
    (see the module docstring); the ledger event is
    :func:`randomized_response_event`.

    Args:
        labels: 1-D integer array of class indices in [0, num_classes).
        epsilon: ε > 0, one number for the whole batch.
        num_classes: K in [2, 2**53].
        rng: ``"os"`` (the OS CSPRNG, for real releases), a
            ``numpy.random.Generator`` or an integer seed (experiments).

    Returns:
        int64 array of the randomised labels, the shape of ``labels``.
    """
    epsilon = _validated_epsilon(epsilon)
    num_classes = _validated_num_classes(num_classes)
    labels = _validated_labels(labels, num_classes)
    source = random_source(rng)
    uniform = np.full(labels.shape[0], _uniform_probability(epsilon, num_classes))
    replaced = exact_bernoulli(uniform, source)
    return np.where(replaced, uniform_below(np.full(labels.shape[0], num_classes), source), labels)


def randomized_response_event(epsilon: float, num_classes: int) -> PureEpsilonEvent:
    """Ledger event of one :func:`randomized_response` call: K-ary RR, exactly, under replace-one."""
    return PureEpsilonEvent(epsilon, num_outcomes=_validated_num_classes(num_classes), neighbouring=REPLACE_ONE)


def _validated_k(k: int, num_classes: int) -> int:
    k = check.integer_scalar("k", k, 1)
    if k > num_classes:
        raise ValueError(f"k must be an integer in [1, K] = [1, {num_classes}] (got {k!r})")
    return k


def rr_top_k_distribution(labels: ArrayLike, priors: ArrayLike, k: int, epsilon: float) -> NDArray[np.float64]:
    """Exact output probabilities of RRTop-k, an (n, K) matrix (arguments as in :func:`rr_top_k`)."""
    epsilon = _validated_epsilon(epsilon)
    labels, priors = _validated_label_inputs(labels, priors)
    k = _validated_k(k, priors.shape[1])
    return _top_k_distribution(labels, priors, np.full(labels.shape[0], k), epsilon)


def rr_top_k(labels: ArrayLike, priors: ArrayLike, k: int, epsilon: float, rng: RngChoice) -> NDArray[np.int64]:
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
        rng: ``"os"`` (the OS CSPRNG, for real releases), a
            ``numpy.random.Generator`` or an integer seed (experiments).

    Returns:
        int64 array of n randomised labels, each in Y_k of its row.
    """
    epsilon = _validated_epsilon(epsilon)
    labels, priors = _validated_label_inputs(labels, priors)
    k = _validated_k(k, priors.shape[1])
    return _sample_top_k(labels, priors, np.full(labels.shape[0], k), epsilon, rng)


def rr_top_k_event(epsilon: float, k: int) -> NoPrivacyLossEvent | PureEpsilonEvent:
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

    k = 1 outputs the prior's top label whatever the true label, so the release
    reveals nothing about it: a :class:`~dpmech.events.NoPrivacyLossEvent`.
    """
    epsilon = check.positive("epsilon", epsilon)
    k = check.integer_scalar("k", k, 1)
    if k == 1:
        return NoPrivacyLossEvent("RRTop-k with k = 1 outputs the prior's top label")
    return PureEpsilonEvent(epsilon, num_outcomes=k, neighbouring=REPLACE_ONE)


def rr_with_prior_optimal_k(priors: ArrayLike, epsilon: float, google_compat: bool = False) -> NDArray[np.int64]:
    """k* of RRWithPrior for each row of an (n, K) prior (see :func:`rr_with_prior`)."""
    epsilon = _validated_epsilon(epsilon)
    google_compat = check.boolean("google_compat", google_compat)
    priors_array = check.real_array("priors", priors, "an (n, K) array of probabilities")
    if priors_array.ndim != 2:
        raise ValueError(f"priors must be an (n, K) array, one row per example (got shape {priors_array.shape})")
    priors = _validated_priors(priors_array, priors_array.shape[0])
    return _optimal_k(priors, _prior_order(priors), epsilon, google_compat)


def rr_with_prior_distribution(labels: ArrayLike, priors: ArrayLike, epsilon: float, google_compat: bool = False) -> NDArray[np.float64]:
    """Exact output probabilities of RRWithPrior, an (n, K) matrix (arguments as in :func:`rr_with_prior`)."""
    epsilon = _validated_epsilon(epsilon)
    google_compat = check.boolean("google_compat", google_compat)
    labels, priors = _validated_label_inputs(labels, priors)
    k = _optimal_k(priors, _prior_order(priors), epsilon, google_compat)
    return _top_k_distribution(labels, priors, k, epsilon)


def rr_with_prior(
    labels: ArrayLike, priors: ArrayLike, epsilon: float, rng: RngChoice, google_compat: bool = False
) -> NDArray[np.int64]:
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
        rng: ``"os"`` (the OS CSPRNG, for real releases), a
            ``numpy.random.Generator`` or an integer seed (experiments).
        google_compat: use the reference code's k* instead of the paper's.

    Returns:
        int64 array of n randomised labels.
    """
    epsilon = _validated_epsilon(epsilon)
    google_compat = check.boolean("google_compat", google_compat)
    labels, priors = _validated_label_inputs(labels, priors)
    random_source(rng)  # refuse a bad rng before any work
    k = _optimal_k(priors, _prior_order(priors), epsilon, google_compat)
    return _sample_top_k(labels, priors, k, epsilon, rng)


def rr_with_prior_event(epsilon: float) -> PureEpsilonEvent:
    """Ledger event of one :func:`rr_with_prior` call: generic ε-DP (binary RR dominates it), replace-one."""
    return PureEpsilonEvent(epsilon, neighbouring=REPLACE_ONE)


def worst_case_log_ratio(distribution: ArrayLike) -> float:
    """ε of a finite mechanism given as a channel matrix: max over rows y, y' and columns o of log(P[y,o]/P[y',o]).

    Rows are the output distributions for each input (all inputs that are
    neighbours of each other, as labels are under label DP). Returns ``inf``
    when some output has positive probability under one row and zero under
    another; pure ε-DP holds exactly for ε >= the value returned.
    """
    matrix = check.real_array("distribution", distribution, "a 2-D array of probabilities")
    if matrix.ndim != 2 or matrix.shape[0] < 1 or matrix.shape[1] < 1:
        raise ValueError(f"distribution must be a non-empty 2-D array (got shape {matrix.shape})")
    check.non_negative("distribution", matrix)
    largest = matrix.max(axis=0)
    smallest = matrix.min(axis=0)
    support = largest > 0
    if np.any(smallest[support] == 0):
        return float("inf")
    return float(np.max(np.log(largest[support]) - np.log(smallest[support])))
