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

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings, target

from .. import validation as check
from .sensitivity import SensitivityReport, _validated_bound, parameter_distance


def search_worst_neighbours(train, pairs, bound, *, max_examples=50):
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
    distances, tried = [], []

    @settings(
        max_examples=max_examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=(Phase.generate, Phase.target),
        suppress_health_check=list(HealthCheck),
    )
    @given(pairs)
    def explore(pair):
        distance = parameter_distance(train, pair)
        target(distance / bound, label="measured / bound")
        distances.append(distance)
        tried.append(pair)

    explore()
    values = np.array(distances)
    worst = int(np.argmax(values))
    report = SensitivityReport(float(values[worst]), bound, float(values[worst] / bound), worst, values)
    return report, tried[worst]
