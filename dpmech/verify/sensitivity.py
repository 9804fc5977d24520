r"""Empirical L2 sensitivity of a training function on neighbouring datasets.

A sensitivity bound Δ claims ‖θ(D) − θ(D')‖₂ <= Δ for every pair of
neighbouring datasets (replace-one for the bounds of
:mod:`dpmech.sensitivity`). Training on given pairs and measuring the
distance can refute a bound (a measured distance above it) and shows how
tight it is (the ratio measured/bound); it cannot prove one. Search for
adversarial pairs with :func:`dpmech.verify.search.search_worst_neighbours`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import validation as check


# A training run: (features, labels) -> parameters; a dataset is (features, labels), a pair two neighbours.
Trainer = Callable[[Any, Any], ArrayLike]
DatasetPair = tuple[tuple[Any, Any], tuple[Any, Any]]


class SensitivityViolation(AssertionError):
    """A measured ‖θ(D) − θ(D')‖ above the claimed bound; carries the report."""

    def __init__(self, message: str, report: SensitivityReport) -> None:
        super().__init__(message)
        self.report = report


@dataclass(frozen=True)
class SensitivityReport:
    """Largest measured ‖θ(D) − θ(D')‖₂ over the pairs tried, against the claimed bound.

    Attributes:
        worst_distance: the largest distance measured.
        bound: the claimed sensitivity Δ.
        ratio: worst_distance / bound (> 1 refutes the bound, up to the
            trainer's optimisation error).
        worst_index: position of the worst pair in the pairs given.
        distances: every measured distance, in the order of the pairs.
    """

    worst_distance: float
    bound: float
    ratio: float
    worst_index: int
    distances: NDArray[np.float64]


def _validated_bound(bound: float) -> float:
    bound = check.positive("bound", bound)
    if np.ndim(bound):
        raise ValueError("bound must be a single finite number > 0 (got an array)")
    return float(bound)


def parameter_distance(train: Trainer, pair: DatasetPair) -> float:
    """‖θ(D) − θ(D')‖₂ over all parameters flattened together, for one pair ((X, y), (X', y'))."""
    if not callable(train):
        raise ValueError(f"train must be a callable (features, labels) -> parameters (got {train!r})")
    try:
        (features, labels), (neighbour_features, neighbour_labels) = pair
    except (TypeError, ValueError):
        raise ValueError("pair must be ((features, labels), (features', labels')), two neighbouring datasets") from None
    first = np.asarray(train(features, labels), dtype=float)
    second = np.asarray(train(neighbour_features, neighbour_labels), dtype=float)
    if first.shape != second.shape:
        raise ValueError(f"train must return parameters of one shape on both datasets (got {first.shape} and {second.shape})")
    return float(np.linalg.norm((first - second).ravel()))


def empirical_sensitivity(train: Trainer, pairs: Iterable[DatasetPair], bound: float) -> SensitivityReport:
    """Train on both datasets of every pair and report the largest parameter distance against ``bound``.

    Args:
        train: callable (features, labels) -> parameter array, deterministic
            (same data, same output), trained to the precision the bound assumes
            (an exact minimiser; a minimiser certified to ‖∇J‖₂ <= τ against a
            bound that adds 2τ/λ, as the logistic-regression trainers declare;
            or the exact PSGD schedule).
        pairs: iterable of ((X, y), (X', y')), neighbours under the bound's
            relation (replace-one for :mod:`dpmech.sensitivity`).
        bound: the claimed L2 sensitivity Δ > 0.
    """
    bound = _validated_bound(bound)
    distances = np.array([parameter_distance(train, pair) for pair in pairs], dtype=float)
    if distances.size == 0:
        raise ValueError("pairs must hold at least one pair of neighbouring datasets (got none)")
    worst = int(np.argmax(distances))
    return SensitivityReport(float(distances[worst]), bound, float(distances[worst] / bound), worst, distances)


def assert_sensitivity(train: Trainer, pairs: Iterable[DatasetPair], bound: float, *, atol: float = 0.0) -> SensitivityReport:
    """:func:`empirical_sensitivity`, raising :class:`SensitivityViolation` if a distance exceeds bound + atol.

    ``atol`` >= 0 allows for the trainer's optimisation error (an L-BFGS run to
    gradient norm g moves the minimiser by at most g/λ for a λ-strongly convex
    objective); it is never added to the reported ratio.
    """
    atol = check.non_negative("atol", atol)
    report = empirical_sensitivity(train, pairs, bound)
    if report.worst_distance > report.bound + atol:
        raise SensitivityViolation(
            f"measured sensitivity {report.worst_distance:.6g} exceeds the bound {report.bound:.6g} "
            f"(ratio {report.ratio:.6g}) on pair {report.worst_index}",
            report,
        )
    return report
