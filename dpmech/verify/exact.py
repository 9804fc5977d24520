r"""Exact (ε, δ) checks of mechanisms with finitely many outputs, by summing the hockey-stick divergence.

A mechanism M is (ε, δ)-DP under a neighbouring relation exactly when, for
every pair of neighbours (D, D') in both orders,

.. math::
    H_{e^\varepsilon}(M(D) \,\|\, M(D')) = \sum_o \max\bigl(0,\; P[M(D) = o] - e^\varepsilon P[M(D') = o]\bigr) \le \delta

(Dwork & Roth 2014, Def. 2.4, rewritten as in Balle, Barthe & Gaboardi 2018,
Thm. 1). The maximum is attained by the witness set
S = {o : P[M(D) = o] > e^ε P[M(D') = o]}, for which
P[M(D) ∈ S] − e^ε P[M(D') ∈ S] equals the divergence. The checks here are
exact up to floating-point rounding of the probabilities the caller's
``mechanism`` returns; the relation is whatever the caller's pairs are.

A mechanism is given as a function ``dataset -> distribution``, where the
distribution is either a mapping outcome -> probability (outcomes missing
from one side have probability 0 there) or a 1-D probability vector over an
outcome list that is the same for every dataset.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import validation as check

# A distribution's probabilities must sum to 1 within this; rounding in a
# caller's enumeration stays far below it, a missing outcome does not.
DISTRIBUTION_SUM_TOLERANCE = 1e-9
# Default relative slack on e^ε: an outcome counts as violating only when its
# probability exceeds e^ε(1 + rtol) times its neighbour's, so that a ratio equal
# to e^ε in exact arithmetic (randomized response at its own ε) is not flagged
# for a rounding error in the last place.
DEFAULT_RTOL = 1e-12

# A mechanism's output distribution: outcome -> probability, or a 1-D probability vector.
Distribution: TypeAlias = Mapping[Hashable, float] | ArrayLike
# A mechanism as these checks take it: dataset -> distribution, the dataset of the caller's own type.
FiniteMechanism: TypeAlias = Callable[[Any], Distribution]


class DpViolation(AssertionError):
    """An (ε, δ) claim that a check refuted; carries the evidence.

    Attributes:
        epsilon, delta: the claim.
        measured_delta: the hockey-stick divergence found at ε (exact checks)
            or the lower confidence bound on it (statistical checks).
        excess: measured_delta − delta, > 0.
        witness: the outcomes (or events) whose set attains measured_delta.
        direction: ``"D -> D'"`` (P[M(D) ∈ S] too large) or ``"D' -> D"``.
    """

    def __init__(
        self,
        message: str,
        *,
        epsilon: float,
        delta: float,
        measured_delta: float,
        witness: Sequence[Any],
        direction: str,
    ) -> None:
        super().__init__(message)
        self.epsilon = epsilon
        self.delta = delta
        self.measured_delta = measured_delta
        self.excess = measured_delta - delta
        self.witness = witness
        self.direction = direction


@dataclass(frozen=True)
class HockeyStick:
    """H_{e^ε}(P ‖ Q) with the outcomes that attain it, in one direction."""

    divergence: float
    witness: tuple[Any, ...]


def _aligned(first: Distribution, second: Distribution) -> tuple[list[Any], NDArray[np.float64], NDArray[np.float64]]:
    """Two distributions as probability vectors over one outcome list."""
    outcomes: list[Any]
    if isinstance(first, Mapping) and isinstance(second, Mapping):
        outcomes = list(first) + [outcome for outcome in second if outcome not in first]
        p = np.array([first.get(outcome, 0.0) for outcome in outcomes], dtype=np.float64)
        q = np.array([second.get(outcome, 0.0) for outcome in outcomes], dtype=np.float64)
    elif isinstance(first, Mapping) or isinstance(second, Mapping):
        raise ValueError("distribution must be two mappings or two probability vectors, not one of each")
    else:
        p, q = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
        if p.ndim != 1 or p.shape != q.shape or p.size == 0:
            raise ValueError(
                f"distribution vectors must be non-empty, 1-D and of one length (got shapes {p.shape} and {q.shape})"
            )
        outcomes = list(range(p.size))
    for probabilities in (p, q):
        check.non_negative("distribution", probabilities)
        total = float(probabilities.sum())
        if abs(total - 1.0) > DISTRIBUTION_SUM_TOLERANCE:
            raise ValueError(f"distribution must sum to 1 within {DISTRIBUTION_SUM_TOLERANCE:g} (got a sum of {total!r})")
    return outcomes, p, q


def _validated_epsilon(epsilon: float) -> float:
    checked = check.non_negative("epsilon", epsilon)
    if np.ndim(checked):
        raise ValueError(f"epsilon must be a single finite number >= 0 (got an array of shape {np.shape(checked)})")
    return float(checked)


def _validated_rtol(rtol: float) -> float:
    checked = check.non_negative("rtol", rtol)
    if np.ndim(checked):
        raise ValueError("rtol must be a single finite number >= 0 (got an array)")
    return float(checked)


def _hockey_stick_vectors(
    outcomes: Sequence[Any], p: NDArray[np.float64], q: NDArray[np.float64], epsilon: float, rtol: float
) -> HockeyStick:
    with np.errstate(over="ignore"):
        scaled = math.exp(epsilon) * (1.0 + rtol) * q if epsilon < 709.0 else np.where(q > 0, np.inf, 0.0)
    excess = p - scaled
    violating = excess > 0.0
    witness = tuple(outcome for outcome, hit in zip(outcomes, violating) if hit)
    return HockeyStick(float(np.sum(excess[violating])), witness)


def hockey_stick_divergence(
    first: Distribution, second: Distribution, epsilon: float, *, rtol: float = DEFAULT_RTOL
) -> HockeyStick:
    """H_{e^ε}(P ‖ Q) = Σ_o max(0, P(o) − e^ε Q(o)) and the witness set {o : P(o) > e^ε Q(o)}.

    One direction only; :func:`privacy_profile` takes both. ``rtol`` scales
    e^ε by (1 + rtol) to absorb rounding (see ``DEFAULT_RTOL``); pass 0 for
    the plain sum.

    Args:
        first, second: two distributions, both mappings outcome -> probability
            or both 1-D probability vectors of one length, each summing to 1.
        epsilon: ε >= 0.
        rtol: relative slack on e^ε, >= 0.
    """
    epsilon = _validated_epsilon(epsilon)
    rtol = _validated_rtol(rtol)
    return _hockey_stick_vectors(*_aligned(first, second), epsilon, rtol)


def dataset_pair(pair: Any) -> tuple[Any, Any]:
    """``(dataset, neighbour)`` from ``pair``; ValueError naming ``pair`` when it is not two datasets."""
    try:
        dataset, neighbour = pair
    except (TypeError, ValueError):
        raise ValueError(f"pair must be a pair (dataset, neighbour) of two datasets (got {pair!r})") from None
    return dataset, neighbour


def _both_directions(
    mechanism: FiniteMechanism, pair: Any
) -> tuple[list[Any], NDArray[np.float64], NDArray[np.float64]]:
    if not callable(mechanism):
        raise ValueError(f"mechanism must be a callable dataset -> distribution (got {mechanism!r})")
    dataset, neighbour = dataset_pair(pair)
    outcomes, p, q = _aligned(mechanism(dataset), mechanism(neighbour))
    return outcomes, p, q


def privacy_profile(mechanism: FiniteMechanism, pair: Any, epsilon: float, *, rtol: float = DEFAULT_RTOL) -> float:
    """The smallest δ for which ``mechanism`` is (ε, δ)-DP on this pair: max of the divergence both ways.

    δ(ε) = max(H_{e^ε}(M(D) ‖ M(D')), H_{e^ε}(M(D') ‖ M(D))). Over all
    neighbouring pairs, the maximum of this is the mechanism's exact privacy
    profile; callers report it as the "worst measured" δ.

    Args:
        mechanism: callable dataset -> distribution (see the module docstring).
        pair: (D, D'), two neighbouring datasets under the caller's relation.
        epsilon: ε >= 0.
        rtol: relative slack on e^ε, as in :func:`hockey_stick_divergence`.
    """
    epsilon = _validated_epsilon(epsilon)
    rtol = _validated_rtol(rtol)
    outcomes, p, q = _both_directions(mechanism, pair)
    forward = _hockey_stick_vectors(outcomes, p, q, epsilon, rtol)
    backward = _hockey_stick_vectors(outcomes, q, p, epsilon, rtol)
    return max(forward.divergence, backward.divergence)


def _smallest_epsilon_one_way(p: NDArray[np.float64], q: NDArray[np.float64], delta: float) -> float:
    """Smallest ε >= 0 with Σ max(0, p − e^ε q) <= δ, exactly.

    As a function of t = e^ε the divergence is convex, decreasing and
    piecewise linear, with knots at the likelihood ratios p/q. Outcomes with
    q = 0 contribute their p at every t, so the answer is ∞ when they carry
    more than δ. Otherwise, with outcomes sorted by decreasing ratio and P_j,
    Q_j the sums of p and q over the first j, the divergence on the j-th
    piece is P_j − t Q_j, which crosses δ at t = (P_j − δ)/Q_j.
    """
    floor = float(np.sum(p[q == 0.0]))
    if floor > delta:
        return math.inf
    positive = (q > 0.0) & (p > 0.0)
    ratios = p[positive] / q[positive]
    if ratios.size == 0:
        return 0.0
    order = np.argsort(-ratios, kind="stable")
    ratios = ratios[order]
    mass_p = floor + np.cumsum(p[positive][order])
    mass_q = np.cumsum(q[positive][order])
    # Divergence at each knot t = ratios[j]: only the outcomes before j violate there.
    before_p = np.concatenate(([floor], mass_p[:-1]))
    before_q = np.concatenate(([0.0], mass_q[:-1]))
    at_knots = before_p - ratios * before_q
    above = np.flatnonzero(at_knots > delta)
    # The first knot (largest ratio) where the divergence exceeds δ bounds the
    # crossing from below; without one the crossing lies below the last knot.
    piece = above[0] - 1 if above.size else ratios.size - 1
    upper = ratios[piece]
    lower = ratios[piece + 1] if piece + 1 < ratios.size else 0.0
    t = min(max((mass_p[piece] - delta) / mass_q[piece], lower), upper)
    return max(math.log(t), 0.0) if t > 0.0 else 0.0


def smallest_epsilon(mechanism: FiniteMechanism, pair: Any, delta: float) -> float:
    """The smallest ε >= 0 for which ``mechanism`` is (ε, δ)-DP on this pair, both directions, exactly.

    At δ = 0 this is the largest log-ratio max_o |log P(o)/P'(o)| (∞ when one
    side puts mass where the other has none); see
    :func:`_smallest_epsilon_one_way` for δ > 0. Use it to report the worst
    measured ε against a claimed (ε, δ).

    Args:
        mechanism: callable dataset -> distribution.
        pair: (D, D').
        delta: δ in [0, 1] (δ = 1 always gives 0).
    """
    checked_delta = check.in_interval("delta", delta, 0.0, 1.0, low_open=False, high_open=False)
    if np.ndim(checked_delta):
        raise ValueError("delta must be a single number in [0, 1] (got an array)")
    _, p, q = _both_directions(mechanism, pair)
    return max(_smallest_epsilon_one_way(p, q, float(checked_delta)), _smallest_epsilon_one_way(q, p, float(checked_delta)))


def _describe_witness(witness: Sequence[Any], limit: int = 8) -> str:
    shown = ", ".join(repr(outcome) for outcome in witness[:limit])
    return "{" + shown + (f", ... ({len(witness)} outcomes)" if len(witness) > limit else "") + "}"


def assert_dp(
    mechanism: FiniteMechanism, pair: Any, epsilon: float, delta: float, *, rtol: float = DEFAULT_RTOL
) -> float:
    """Raise :class:`DpViolation` unless ``mechanism`` is (ε, δ)-DP on ``pair``, exactly, in both directions.

    The error names the direction, the witnessing set of outputs S and the
    size of the violation P[M(D) ∈ S] − e^ε P[M(D') ∈ S] − δ. On success it
    returns the measured δ(ε) (:func:`privacy_profile`), so callers can report
    the worst value over many pairs.

    Args:
        mechanism: callable dataset -> distribution (see the module docstring).
        pair: (D, D'), neighbours under the caller's relation.
        epsilon: claimed ε >= 0.
        delta: claimed δ in [0, 1].
        rtol: relative slack on e^ε for rounding, >= 0 (``DEFAULT_RTOL``).
    """
    epsilon = _validated_epsilon(epsilon)
    checked_delta = check.in_interval("delta", delta, 0.0, 1.0, low_open=False, high_open=False)
    if np.ndim(checked_delta):
        raise ValueError("delta must be a single number in [0, 1] (got an array)")
    delta = float(checked_delta)
    rtol = _validated_rtol(rtol)
    outcomes, p, q = _both_directions(mechanism, pair)
    directions = {
        "D -> D'": _hockey_stick_vectors(outcomes, p, q, epsilon, rtol),
        "D' -> D": _hockey_stick_vectors(outcomes, q, p, epsilon, rtol),
    }
    direction, worst = max(directions.items(), key=lambda item: item[1].divergence)
    if worst.divergence > delta:
        raise DpViolation(
            f"not ({epsilon:g}, {delta:g})-DP: in direction {direction} the set S = "
            f"{_describe_witness(worst.witness)} has P[M(D) in S] - e^eps P[M(D') in S] = "
            f"{worst.divergence:.6g}, exceeding delta by {worst.divergence - delta:.6g}",
            epsilon=epsilon,
            delta=delta,
            measured_delta=worst.divergence,
            witness=worst.witness,
            direction=direction,
        )
    return worst.divergence
