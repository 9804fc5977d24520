"""The pluggable trainer protocol: a trainer maps (X, y, config) to parameters and declares its
L2 sensitivity through :mod:`dpmech.sensitivity`.

A trainer holds its configuration (λ, bounds, class set, seed) as attributes, so that
``train(features, labels)`` is a function of the data and the public configuration only, and
``sensitivity(n)`` is a function of the public configuration and the record count n only. A user
plugs in their own learner by writing a class with these two methods; nothing else is needed.

The sensitivity must be a bound that :mod:`dpmech.sensitivity` proves for the parameters ``train``
actually returns (a solver stopped at a certified gradient tolerance τ adds 2τ/λ,
:func:`dpmech.sensitivity.approximate_minimizer_sensitivity`), under the replace-one
neighbouring relation (one record of the n changed, n fixed),
which is the relation every bound in :mod:`dpmech.sensitivity` is stated for. A trainer never
computes its own bound: it names the dpmech function and passes n, λ and its public bounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from dpmech import REPLACE_ONE
from dpmech import validation as check


@runtime_checkable
class Trainer(Protocol):
    """What every trainer provides.

    ``train`` returns the parameters as one float array (any shape); the Gaussian output
    perturbation that follows treats it as a vector in the Euclidean norm of ``sensitivity``.
    ``sensitivity(n)`` returns the L2 sensitivity of ``train`` on n records, replace-one.
    """

    def train(self, features, labels) -> np.ndarray: ...

    def sensitivity(self, n: int) -> float: ...


@dataclass(frozen=True)
class TrainedParameters:
    """Parameters of one trained model together with the privacy facts the release needs."""

    parameters: np.ndarray
    sensitivity: float
    num_records: int
    relation: str = REPLACE_ONE


def train_with_sensitivity(trainer: Trainer, features, labels) -> TrainedParameters:
    """Run ``trainer`` on (features, labels) and attach its declared sensitivity for n = len(labels).

    Raises ``TypeError`` when ``trainer`` does not implement :class:`Trainer`, and ``ValueError``
    when the data is empty, the row counts differ, or the declared sensitivity is not a positive
    finite number.
    """
    if not isinstance(trainer, Trainer):
        raise TypeError(
            f"trainer must implement train(features, labels) and sensitivity(n) (got {type(trainer).__name__})"
        )
    features = np.asarray(features)
    labels = np.asarray(labels)
    if features.ndim != 2 or features.shape[0] == 0:
        raise ValueError(f"features must be a non-empty 2-d array (got shape {features.shape})")
    if labels.shape != (features.shape[0],):
        raise ValueError(f"labels must have shape ({features.shape[0]},) to match features (got {labels.shape})")
    num_records = features.shape[0]
    sensitivity = check.positive("sensitivity", trainer.sensitivity(num_records))
    parameters = np.asarray(trainer.train(features, labels), dtype=float)
    return TrainedParameters(parameters=parameters, sensitivity=float(sensitivity), num_records=num_records)
