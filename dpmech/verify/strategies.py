r"""Hypothesis strategies for DP tests: privacy parameters, bounded datasets and neighbouring pairs.

Import this module explicitly (``from dpmech.verify import strategies``): it
imports Hypothesis, which ``import dpmech`` and ``import dpmech.verify`` do not.

Datasets are :class:`Dataset` pairs (features (n, d), labels (n,)) with every
‖x_i‖₂ <= feature_bound, the public bound the sensitivity results of
:mod:`dpmech.sensitivity` assume. Records exactly at the bound are drawn
often, since they attain the worst case. Neighbouring relations are those of
:mod:`dpmech.events`: ``"replace-one"`` (same n, one record replaced) and
``"add-remove-one"`` (one record added or removed).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from hypothesis import strategies as st
from numpy.typing import NDArray

from .. import validation as check
from ..clipping import clip_features
from ..events import ADD_REMOVE_ONE, REPLACE_ONE

RELATIONS = (REPLACE_ONE, ADD_REMOVE_ONE)
SMALLEST_DELTA = 1e-300


class Dataset(NamedTuple):
    """A labelled dataset: features of shape (n, d) and integer labels of shape (n,)."""

    features: NDArray[np.float64]
    labels: NDArray[np.int64]


class PrivacyParams(NamedTuple):
    """An (ε, δ) pair."""

    epsilon: float
    delta: float


def _log_uniform(low: float, high: float) -> st.SearchStrategy[float]:
    return st.floats(math.log10(low), math.log10(high)).map(lambda exponent: 10.0**exponent)


def privacy_params(
    min_epsilon: float = 1e-6, max_epsilon: float = 100.0, min_delta: float = SMALLEST_DELTA, max_delta: float = 0.5
) -> st.SearchStrategy[PrivacyParams]:
    """(ε, δ) across their valid ranges, log-uniform, with the ends drawn too.

    ε in [min_epsilon, max_epsilon] (0 < min_epsilon <= max_epsilon, finite),
    δ in [min_delta, max_delta] within (0, 1); the default δ range reaches
    1e-300, so code that works with δ on a linear scale is exercised where it breaks.
    """
    min_epsilon = float(check.positive("min_epsilon", min_epsilon))
    max_epsilon = float(check.positive("max_epsilon", max_epsilon))
    if max_epsilon < min_epsilon:
        raise ValueError(f"max_epsilon must be >= min_epsilon = {min_epsilon:g} (got {max_epsilon!r})")
    min_delta = float(check.open_unit_interval("min_delta", min_delta))
    max_delta = float(check.open_unit_interval("max_delta", max_delta))
    if max_delta < min_delta:
        raise ValueError(f"max_delta must be >= min_delta = {min_delta:g} (got {max_delta!r})")
    epsilons = st.one_of(st.sampled_from([min_epsilon, max_epsilon]), _log_uniform(min_epsilon, max_epsilon))
    deltas = st.one_of(st.sampled_from([min_delta, max_delta]), _log_uniform(min_delta, max_delta))
    clipped_epsilon = epsilons.map(lambda e: min(max(e, min_epsilon), max_epsilon))
    clipped_delta = deltas.map(lambda d: min(max(d, min_delta), max_delta))
    return st.builds(PrivacyParams, clipped_epsilon, clipped_delta)


def _size(name: str, value: int | st.SearchStrategy[int], minimum: int) -> st.SearchStrategy[int]:
    if isinstance(value, st.SearchStrategy):
        return value
    return st.just(check.integer_scalar(name, value, minimum))


@st.composite
def _records(draw: st.DrawFn, count: int, dimension: int, num_classes: int, feature_bound: float) -> Dataset:
    """count records: a direction in [−1, 1]^d scaled to a norm in [0, bound], at the bound half the time."""
    directions = np.array(
        draw(st.lists(st.lists(st.floats(-1.0, 1.0), min_size=dimension, max_size=dimension), min_size=count, max_size=count)),
        dtype=float,
    ).reshape(count, dimension)
    at_bound = np.array(draw(st.lists(st.booleans(), min_size=count, max_size=count)), dtype=bool)
    fractions = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=count, max_size=count)), dtype=float)
    norms = np.linalg.norm(directions, axis=1)
    target = feature_bound * np.where(at_bound, 1.0, fractions)
    with np.errstate(invalid="ignore", divide="ignore"):
        features = np.where(norms[:, None] > 0, directions * (target / norms)[:, None], 0.0)
    # Rounding can put a scaled row an ulp outside the ball; pull it back in.
    over = np.linalg.norm(features, axis=1) > feature_bound
    features[over] *= np.nextafter(feature_bound, 0.0) / np.linalg.norm(features[over], axis=1)[:, None]
    labels = np.array(draw(st.lists(st.integers(0, num_classes - 1), min_size=count, max_size=count)), dtype=np.int64)
    return Dataset(features, labels)


def _validated_shape(
    n: int | st.SearchStrategy[int],
    d: int | st.SearchStrategy[int],
    num_classes: int | st.SearchStrategy[int],
    feature_bound: float,
    min_n: int = 1,
) -> tuple[st.SearchStrategy[int], st.SearchStrategy[int], st.SearchStrategy[int], float]:
    bound = check.positive("feature_bound", feature_bound)
    if np.ndim(bound):
        raise ValueError("feature_bound must be a single finite number > 0 (got an array)")
    return _size("n", n, min_n), _size("d", d, 1), _size("num_classes", num_classes, 2), float(bound)


def datasets(
    n: int | st.SearchStrategy[int],
    d: int | st.SearchStrategy[int],
    num_classes: int | st.SearchStrategy[int] = 2,
    feature_bound: float = 1.0,
) -> st.SearchStrategy[Dataset]:
    """Datasets of n records in d dimensions with labels in [0, num_classes) and ‖x_i‖₂ <= feature_bound.

    n, d and num_classes are integers (n >= 1, d >= 1, num_classes >= 2) or
    strategies for them; feature_bound > 0.
    """
    sizes, dimensions, classes, feature_bound = _validated_shape(n, d, num_classes, feature_bound)

    @st.composite
    def build(draw: st.DrawFn) -> Dataset:
        return draw(_records(draw(sizes), draw(dimensions), draw(classes), feature_bound))

    return build()


def _adversarial_replacement(
    draw: st.DrawFn, dataset: Dataset, index: int, num_classes: int, feature_bound: float
) -> tuple[NDArray[np.float64], int]:
    """A record at the norm bound, in the replaced record's direction or its opposite, with a different label."""
    original = dataset.features[index]
    # Scale by the largest entry first: the norm of a tiny vector (e.g. 1e-155)
    # squares into subnormals and loses the digits that make the result unit length.
    largest = np.max(np.abs(original))
    direction = original / largest if largest > 0 else np.eye(original.size)[0]
    direction = direction / np.linalg.norm(direction)
    sign = draw(st.sampled_from([1.0, -1.0]))
    shift = draw(st.integers(1, num_classes - 1))
    feature = clip_features(sign * np.nextafter(feature_bound, 0.0) * direction[None, :], feature_bound)[0]
    return feature, (int(dataset.labels[index]) + shift) % num_classes


def neighbouring_pairs(
    n: int | st.SearchStrategy[int],
    d: int | st.SearchStrategy[int],
    num_classes: int | st.SearchStrategy[int] = 2,
    feature_bound: float = 1.0,
    relation: str = REPLACE_ONE,
) -> st.SearchStrategy[tuple[Dataset, Dataset]]:
    """Pairs (D, D') of neighbouring :class:`Dataset` s under ``relation``.

    * ``"replace-one"``: D has n records; D' replaces one of them by a
      different record (a draw equal to the old one is replaced by an
      adversarial record: an identical pair tests nothing). Half the
      time the new record is adversarial: at the norm bound, along or
      against the old feature, with a different label (for example a
      flipped binary label), which is where logistic-regression minimisers
      move most.
    * ``"add-remove-one"``: D has n records and D' is D with one record
      removed (n >= 2) or one record added; which of the two is drawn.

    Arguments as in :func:`datasets`; n >= 2 for add/remove.
    """
    relation = check.choice("relation", relation, RELATIONS)
    sizes, dimensions, classes, feature_bound = _validated_shape(
        n, d, num_classes, feature_bound, min_n=2 if relation == ADD_REMOVE_ONE else 1
    )

    @st.composite
    def build(draw: st.DrawFn) -> tuple[Dataset, Dataset]:
        size, dimension, count = draw(sizes), draw(dimensions), draw(classes)
        dataset = draw(_records(size, dimension, count, feature_bound))
        index = draw(st.integers(0, size - 1))
        if relation == ADD_REMOVE_ONE:
            if size >= 2 and draw(st.booleans()):
                kept = np.arange(size) != index
                return dataset, Dataset(dataset.features[kept], dataset.labels[kept])
            extra = draw(_records(1, dimension, count, feature_bound))
            return dataset, Dataset(
                np.insert(dataset.features, index, extra.features[0], axis=0),
                np.insert(dataset.labels, index, extra.labels[0], axis=0),
            )
        if draw(st.booleans()):
            feature, label = _adversarial_replacement(draw, dataset, index, count, feature_bound)
        else:
            record = draw(_records(1, dimension, count, feature_bound))
            feature, label = record.features[0], int(record.labels[0])
            if label == dataset.labels[index] and np.array_equal(feature, dataset.features[index]):
                feature, label = _adversarial_replacement(draw, dataset, index, count, feature_bound)
        features, labels = dataset.features.copy(), dataset.labels.copy()
        features[index], labels[index] = feature, label
        return dataset, Dataset(features, labels)

    return build()


def query_answer_pairs(
    num_queries: int | st.SearchStrategy[int] = 5, sensitivity: float = 1.0
) -> st.SearchStrategy[tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """Neighbouring query-answer vectors (D, D'), each answer moved by at most ``sensitivity``.

    Half the time one of StatDP's patterns (Ding et al. CCS 2018, Table 1,
    :func:`dpmech.verify.tester.statdp_pairs`: one above, one below, one
    above rest below, one below rest above, half half, all above, all
    below, X shape), scaled by ``sensitivity``; otherwise a drawn vector D
    and a D' whose every entry moves by a drawn amount in
    [−sensitivity, sensitivity], at the ends often. ``num_queries`` is an
    integer >= 2 or a strategy for one.
    """
    from .tester import statdp_pairs

    counts = _size("num_queries", num_queries, 2)
    checked_sensitivity = check.positive("sensitivity", sensitivity)
    if np.ndim(checked_sensitivity):
        raise ValueError("sensitivity must be a single finite number > 0 (got an array)")
    sensitivity = float(checked_sensitivity)

    @st.composite
    def build(draw: st.DrawFn) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        count = draw(counts)
        if draw(st.booleans()):
            _, first, second = draw(st.sampled_from(statdp_pairs(count)))
            return first * sensitivity, second * sensitivity
        answers = np.array(draw(st.lists(st.floats(-10.0, 10.0), min_size=count, max_size=count)))
        steps = st.one_of(st.sampled_from([-1.0, 0.0, 1.0]), st.floats(-1.0, 1.0))
        moves = np.array(draw(st.lists(steps, min_size=count, max_size=count))) * sensitivity
        return answers, answers + moves

    return build()

