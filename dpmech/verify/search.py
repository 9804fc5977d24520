r"""Hypothesis-guided search for the neighbouring pair that moves a trainer's parameters most.

Import explicitly (``from dpmech.verify.search import search_worst_neighbours``);
it imports Hypothesis. Hypothesis draws pairs from a strategy (for example
:func:`dpmech.verify.strategies.neighbouring_pairs`, which favours a record at
the norm bound with a different label) and its targeted phase climbs on
``hypothesis.target(distance / bound)``. The run is derandomised, so the
same arguments give the same answer. A search refutes a bound when it finds
a ratio above 1; a ratio below 1 is evidence, not proof.

Do not call this inside a function that is itself decorated with
``hypothesis.given``: Hypothesis does not nest.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings, target
from hypothesis import strategies as st

from .. import validation as check
from .sensitivity import DatasetPair, SensitivityReport, Trainer, _validated_bound, parameter_distance


def _replaced_index(pair: DatasetPair) -> int | None:
    (features, labels), (neighbour_features, neighbour_labels) = pair
    if np.shape(features) != np.shape(neighbour_features) or np.shape(labels) != np.shape(neighbour_labels):
        raise ValueError("pairs must be replace-one neighbours: two datasets of the same shape")
    differs = np.flatnonzero(np.any(np.asarray(features) != np.asarray(neighbour_features), axis=1)
                             | (np.asarray(labels) != np.asarray(neighbour_labels)))
    if differs.size > 1:
        raise ValueError(f"pairs must be replace-one neighbours (got datasets that differ in {differs.size} records)")
    return int(differs[0]) if differs.size else None


def _swapped(dataset: Any, first: int, second: int) -> tuple[Any, Any]:
    features, labels = np.array(dataset[0], copy=True), np.array(dataset[1], copy=True)
    features[[first, second]] = features[[second, first]]
    labels[[first, second]] = labels[[second, first]]
    return type(dataset)(features, labels) if hasattr(dataset, "_fields") else (features, labels)


def with_replaced_record_at(
    pairs: st.SearchStrategy[DatasetPair], positions: st.SearchStrategy[int]
) -> st.SearchStrategy[DatasetPair]:
    """Replace-one pairs whose differing record sits at a row drawn from ``positions``.

    A trainer whose visiting order depends only on n and its seed (PSGD's
    shuffle) treats rows unequally: the row that lands in the ragged last
    batch, or in the last step, moves θ differently. Swapping the same two
    rows in both datasets keeps them replace-one neighbours and puts the
    replaced record where the search should look.

    Args:
        pairs: a Hypothesis strategy of replace-one pairs ((X, y), (X', y')).
        positions: a strategy of row indices (each must be < n of the pair),
            for example ``st.sampled_from(rows_of_the_ragged_batch)``.
    """
    if not hasattr(pairs, "example") or not hasattr(positions, "example"):
        raise ValueError("pairs and positions must be Hypothesis strategies")

    @st.composite
    def moved(draw: st.DrawFn) -> DatasetPair:
        pair = draw(pairs)
        position = draw(positions)
        count = len(pair[0][1])
        if not 0 <= position < count:
            raise ValueError(f"positions must draw row indices in [0, {count - 1}] (got {position!r})")
        index = _replaced_index(pair)
        if index is None:
            return pair
        return _swapped(pair[0], index, position), _swapped(pair[1], index, position)

    return moved()


def search_worst_neighbours(
    train: Trainer, pairs: st.SearchStrategy[DatasetPair], bound: float, *, max_examples: int = 50
) -> tuple[SensitivityReport, DatasetPair]:
    """Largest ‖θ(D) − θ(D')‖₂ found over ``max_examples`` pairs drawn from the strategy ``pairs``.

    Args:
        train: callable (features, labels) -> parameters, as in
            :func:`dpmech.verify.sensitivity.empirical_sensitivity`.
        pairs: a Hypothesis strategy of ((X, y), (X', y')) pairs.
        bound: the claimed sensitivity Δ > 0.
        max_examples: number of pairs tried, >= 1.

    Returns:
        ``(report, worst_pair)``: a :class:`SensitivityReport` whose
        ``distances`` are in the order tried, and the pair attaining the worst.
    """
    bound = _validated_bound(bound)
    max_examples = check.integer_scalar("max_examples", max_examples, 1)
    if not callable(train):
        raise ValueError(f"train must be a callable (features, labels) -> parameters (got {train!r})")
    if not hasattr(pairs, "example"):
        raise ValueError(f"pairs must be a Hypothesis strategy of neighbouring pairs (got {pairs!r})")
    distances: list[float] = []
    tried: list[DatasetPair] = []

    @settings(
        max_examples=max_examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=(Phase.generate, Phase.target),
        suppress_health_check=list(HealthCheck),
    )
    @given(pairs)
    def explore(pair: DatasetPair) -> None:
        distance = parameter_distance(train, pair)
        target(distance / bound, label="measured / bound")
        distances.append(distance)
        tried.append(pair)

    explore()
    values = np.array(distances)
    worst = int(np.argmax(values))
    report = SensitivityReport(float(values[worst]), bound, float(values[worst] / bound), worst, values)
    return report, tried[worst]
