r"""Events on summary statistics of vector outputs: StatDP's post-processings as an event family.

StatDP (Ding, Wang, Wang, Zhang & Kifer, CCS 2018, §4) turns a vector
output into a number before choosing an event: one entry, the number of
entries equal to a value, the position of the first such entry, ... On the
sparse vector technique and report-noisy-max these are where the
violations live (e.g. "the max value is below t", "the first ⊤ is at
position 4"), and a singleton event on the whole vector dilutes them among
many outcomes. For numeric outputs of d coordinates this module uses the
statistics

* every coordinate x_j (of more than ``COORDINATE_LIMIT`` coordinates, the
  ``COORDINATE_LIMIT`` whose selection means differ most between the
  neighbours in units of their pooled standard deviation: each coordinate
  costs ~186 hypotheses, and at 700 coordinates one test took 4 s of CPU
  against a 1 s budget; the mean-difference and Fisher projections still
  see every coordinate);
* for d > 1: max_j x_j, min_j x_j, Σ_j x_j; and for each value v that is
  among the 8 most frequent entries of the selection sample and makes up
  at least 1 % of its entries (⊤/⊥/"halted" codes, a released 0): the
  count #{j : x_j = v} and the first position min{j : x_j = v} (d when
  there is none); and, when there are such values, the first entry that is
  none of them (NaN when there is none: SVT's released answer);
* with ``outputs="vector"`` (real vectors such as a noisy histogram), for
  d > 1 also the norms |x|_1, |x|_2, |x|_inf and the projections w·x on two
  unit directions learned on the selection sample: the difference of the
  two neighbours' means, and Fisher's discriminant direction (Fisher 1936);
  for additive noise the shift f(D) − f(D′) spread over several
  coordinates (a record in two bins) is seen whole along them;

and the half-lines {s <= t}, {s > t} on each statistic s, at every
distinct value of s in the selection sample when there are at most 64,
else at its evenly spaced and tail quantiles
(:func:`.statistical.quantile_levels`). The statistics and thresholds
depend on the selection sample only (±inf values are outcomes of
their own: the half-lines single them out); the decision is
:func:`.statistical.decide` on a fresh test sample, so the test is valid
at level α for every mechanism. NaN falls in neither half-line.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any, TypeGuard

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import validation as check
from .statistical import (
    StatisticalTestResult,
    _draw,
    decide,
    quantile_levels,
    row_event,
    split_sample_arguments,
)

# Values that count as codes: at most this many, each at least this share of the selection entries.
MOST_FREQUENT_VALUES = 8
SMALLEST_VALUE_SHARE = 0.01
# A statistic with at most this many distinct selection values is thresholded at each of them.
DISTINCT_LIMIT = 64
OUTPUT_KINDS = ("discrete", "vector")
# Real vectors (outputs="vector") also get these norms and projections on the directions learned on the selection sample.
NORM_NAMES = ("|x|_1", "|x|_2", "|x|_inf")
DIRECTION_NAMES = ("mean-difference direction", "Fisher direction")
# Fisher's direction solves a d × d system: up to this many coordinates.
FISHER_DIMENSION = 512
# Half-lines on at most this many coordinates of wider outputs (chosen on the selection sample; see the docstring).
COORDINATE_LIMIT = 64


def _numeric(sample: object) -> TypeGuard[NDArray[Any]]:
    return isinstance(sample, np.ndarray) and sample.dtype.kind in "biuf"


def _code_values(pooled: NDArray[np.float64]) -> NDArray[np.float64]:
    """The frequent entries of the selection sample: the values whose counts and first positions are statistics."""
    values, counts = np.unique(pooled[~np.isnan(pooled)], return_counts=True)
    order = np.argsort(-counts, kind="stable")[:MOST_FREQUENT_VALUES]
    keep = counts[order] >= SMALLEST_VALUE_SHARE * pooled.size
    return values[order][keep]


def _statistic_names(dimension: int, code_values: NDArray[np.float64], directions: NDArray[np.float64] | None = None) -> list[str]:
    """The names of :func:`_statistics`' columns for outputs of ``dimension`` coordinates.

    ``directions``: None, or (k, d) unit directions for real vectors: the norms and the projections on them follow.
    """
    names = [f"x[{j}]" if dimension > 1 else "x" for j in range(dimension)]
    if dimension > 1:
        names += ["max x", "min x", "sum x"]
        for value in code_values.tolist():
            names += [f"#(x[j] == {value:g})", f"first j with x[j] == {value:g}"]
        if code_values.size:
            names.append("first x[j] not a code")
        if directions is not None:
            names += list(NORM_NAMES) + [f"{name} . x" for name in DIRECTION_NAMES[:len(directions)]]
    return names


def _statistic(matrix: NDArray[np.float64], code_values: NDArray[np.float64], column: int, directions: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """Column ``column`` of :func:`_statistics` alone (an event's membership needs one)."""
    dimension = matrix.shape[1]
    if column < dimension:
        return matrix[:, column]
    column -= dimension
    if column < 3:
        reductions: tuple[Callable[..., NDArray[np.float64]], ...] = (np.max, np.min, np.sum)
        with np.errstate(invalid="ignore"):
            return reductions[column](matrix, axis=1)
    column -= 3
    if column < 2 * code_values.size:
        equal: NDArray[np.bool_] = matrix == code_values[column // 2]
        if column % 2 == 0:
            counts: NDArray[np.float64] = equal.sum(axis=1).astype(np.float64)
            return counts
        first_positions: NDArray[np.float64] = np.where(equal.any(axis=1), equal.argmax(axis=1), dimension).astype(np.float64)
        return first_positions
    column -= 2 * code_values.size
    if code_values.size:
        if column == 0:
            # The first entry that is no code: SVT's released answer beside its ⊥ and "halted" codes.
            plain = ~np.isin(matrix, code_values)
            return np.where(plain.any(axis=1), matrix[np.arange(len(matrix)), plain.argmax(axis=1)], np.nan)
        column -= 1
    with np.errstate(invalid="ignore", over="ignore"):
        if column < len(NORM_NAMES):
            norms: NDArray[np.float64] = np.linalg.norm(matrix, ord=(1, 2, np.inf)[column], axis=1)
            return norms
        # The norms and projections are columns only when directions were given (see _statistic_names).
        assert directions is not None
        projections: NDArray[np.float64] = matrix @ directions[column - len(NORM_NAMES)]
        return projections


def _statistics(
    matrix: NDArray[np.float64], code_values: NDArray[np.float64], columns: Iterable[int] | None = None, directions: NDArray[np.float64] | None = None
) -> NDArray[np.float64]:
    """(n, s) statistics of n outputs with d coordinates (names: :func:`_statistic_names`), or only ``columns`` of them."""
    if columns is None:
        columns = range(len(_statistic_names(matrix.shape[1], code_values, directions)))
    return np.column_stack([_statistic(matrix, code_values, column, directions) for column in columns]).astype(float)


def _directions(selection_first: NDArray[np.float64], selection_second: NDArray[np.float64]) -> NDArray[np.float64]:
    """Unit directions learned on the selection sample: the difference of the means, and Fisher's discriminant.

    Fisher's w = (Σ + λI)⁻¹(m − m′) (Fisher 1936), Σ the pooled covariance, λ = 10⁻⁶·tr(Σ)/d, for d up to
    ``FISHER_DIMENSION``. Non-finite entries are left out of the means and covariance; a direction that is
    zero or not finite is dropped. For additive i.i.d. noise the best half-line on a linear statistic lies
    along the shift f(D) − f(D′), which both estimate.
    """
    finite = [np.where(np.isfinite(sample), sample, np.nan) for sample in (selection_first, selection_second)]
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column's mean is NaN: its direction is dropped
        means = [np.nanmean(sample, axis=0) for sample in finite]
    difference = means[0] - means[1]
    directions = [difference]
    dimension = difference.size
    if dimension <= FISHER_DIMENSION and np.all(np.isfinite(difference)):
        centred = np.concatenate([np.nan_to_num(sample - mean) for sample, mean in zip(finite, means)])
        covariance = centred.T @ centred / max(len(centred) - 2, 1)
        ridge = 1e-6 * max(np.trace(covariance) / dimension, np.finfo(float).tiny)
        directions.append(np.linalg.solve(covariance + ridge * np.eye(dimension), difference))
    kept = [direction / np.linalg.norm(direction) for direction in directions
            if np.all(np.isfinite(direction)) and np.linalg.norm(direction) > 0]
    return np.array(kept).reshape(len(kept), dimension)


def _thresholds(column: NDArray[np.float64], num_thresholds: int) -> NDArray[np.float64]:
    """Thresholds t of the half-lines {s <= t}, {s > t} on one statistic's selection values.

    Finite values give their distinct values or quantiles; ±inf are outcomes
    of their own (an overflowed sum, a norm of an infinite entry): −inf as a
    threshold makes {s <= −inf} = {s = −inf}, and the largest finite value
    makes {s > t} = {s = +inf}. NaN falls in neither half-line.
    """
    finite = column[np.isfinite(column)]
    has_positive, has_negative = bool(np.any(column == np.inf)), bool(np.any(column == -np.inf))
    if finite.size == 0:
        # Only infinities (and NaN): {s = −inf} separates them when both signs occur.
        return np.array([-np.inf]) if has_positive and has_negative else np.empty(0)
    distinct = np.unique(finite)
    if distinct.size <= DISTINCT_LIMIT:
        # {s <= largest finite} holds for every non-NaN output unless +inf occurs.
        thresholds = distinct if has_positive else distinct[:-1]
    else:
        levels: NDArray[np.float64] = quantile_levels(num_thresholds, finite.size)
        thresholds = np.quantile(finite, levels)
        if has_positive:
            thresholds = np.append(thresholds, distinct[-1])
    if has_negative:
        thresholds = np.append(thresholds, -np.inf)
    return np.unique(thresholds)


def projection_dp_test(
    sampler: Callable[[Any, int, np.random.Generator], Any],
    pair: Any,
    epsilon: float,
    delta: float,
    *,
    num_samples: int,
    rng: np.random.Generator | int,
    alpha: float = 0.05,
    num_thresholds: int = 32,
    outputs: str = "discrete",
) -> StatisticalTestResult:
    """Test "``sampler`` is (ε, δ)-DP on ``pair``" with half-lines on summary statistics of its outputs; see the module docstring.

    Outputs that are not numeric arrays (tuples of mixed types, strings)
    have no statistics: the test then has no event and never rejects (it
    still draws its samples).

    Args:
        sampler: callable (dataset, size, rng) -> size outputs.
        pair: (D, D'), neighbours under the caller's relation.
        epsilon: claimed ε >= 0.
        delta: claimed δ in [0, 1).
        num_samples: outputs per dataset, for selection and again for the test, >= 1.
        rng: ``numpy.random.Generator`` or integer seed.
        alpha: level in (0, 1): a true claim is rejected with probability <= alpha.
        num_thresholds: evenly spaced quantiles per continuous statistic, >= 1.
        outputs: ``"discrete"`` (the statistics above) or ``"vector"``: real vectors of one length (a
            noisy histogram), whose statistics also include the norms |x|_1, |x|_2, |x|_inf and the
            projections on the mean-difference and Fisher directions of the selection sample; other
            outputs raise ValueError.
    """
    dataset, neighbour, epsilon, delta, num_samples, rng, alpha, num_thresholds = split_sample_arguments(
        sampler, pair, epsilon, delta, num_samples, rng, alpha, num_thresholds)
    kind = check.choice("outputs", outputs, OUTPUT_KINDS)

    selection = [_draw(sampler, data, num_samples, rng, "discrete") for data in (dataset, neighbour)]
    test = [_draw(sampler, data, num_samples, rng, "discrete") for data in (dataset, neighbour)]
    samples = selection + test
    if not all(_numeric(sample) for sample in samples) or len({sample.shape[1:] for sample in samples}) != 1:
        if kind == "vector":
            shapes = sorted({str(getattr(sample, "shape", "not an array")) for sample in samples})
            raise ValueError(f"sampler must return real vectors of one length when outputs='vector' (got {', '.join(shapes)})")
        return StatisticalTestResult(False, 0.0, 0.0, "no numeric outputs: no statistics", "D -> D'", (0, 0), 0, num_samples, alpha, epsilon, delta)
    matrices = [sample.reshape(num_samples, -1).astype(float) for sample in samples]
    code_values = _code_values(np.concatenate([matrices[0], matrices[1]]).ravel())
    directions = _directions(matrices[0], matrices[1]) if kind == "vector" else None
    statistics = [_statistics(matrix, code_values, directions=directions) for matrix in matrices]
    names = _statistic_names(matrices[0].shape[1], code_values, directions)
    pooled = np.vstack(statistics[:2])
    dimension = matrices[0].shape[1]
    skipped = set(range(dimension)) - set(_separating_coordinates(matrices[0], matrices[1]).tolist())
    event_names: list[str] = []
    counts_first: list[NDArray[np.int64]] = []
    counts_second: list[NDArray[np.int64]] = []
    events: list[tuple[int, float, bool]] = []
    for column, name in enumerate(names):
        if column in skipped:
            continue
        thresholds = _thresholds(pooled[:, column], num_thresholds)
        if thresholds.size == 0:
            continue
        event_names += [f"{name} <= {t:.6g}" for t in thresholds.tolist()] + [f"{name} > {t:.6g}" for t in thresholds.tolist()]
        events += [(column, t, False) for t in thresholds.tolist()] + [(column, t, True) for t in thresholds.tolist()]
        for values, counts in zip(statistics[2:], (counts_first, counts_second)):
            numbers = np.sort(values[:, column][~np.isnan(values[:, column])])
            at_most = np.searchsorted(numbers, thresholds, side="right")
            counts.append(np.concatenate([at_most, numbers.size - at_most]))
    if not event_names:
        return StatisticalTestResult(False, 0.0, 0.0, "no statistic varies: no event", "D -> D'", (0, 0), 0, num_samples, alpha, epsilon, delta)
    return decide(np.concatenate(counts_first), np.concatenate(counts_second), event_names, num_samples, epsilon, delta, alpha,
                  event_of=lambda index: _statistic_event(*events[index], code_values, matrices[0].shape[1], directions))


def _separating_coordinates(first: NDArray[np.float64], second: NDArray[np.float64]) -> NDArray[np.intp]:
    """The coordinates that get half-lines: all of at most ``COORDINATE_LIMIT``, else the ``COORDINATE_LIMIT`` whose
    selection means differ most in units of their pooled standard deviation (NaN and ±inf entries left out)."""
    dimension = first.shape[1]
    if dimension <= COORDINATE_LIMIT:
        return np.arange(dimension)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        finite = [np.where(np.isfinite(matrix), matrix, np.nan) for matrix in (first, second)]
        means = [np.nanmean(matrix, axis=0) for matrix in finite]
        spread = np.sqrt(0.5 * (np.nanvar(finite[0], axis=0) + np.nanvar(finite[1], axis=0)))
        separation = np.abs(means[0] - means[1]) / np.where(spread > 0, spread, 1.0)
    separation = np.where(np.isfinite(separation), separation, 0.0)
    return np.sort(np.argsort(-separation, kind="stable")[:COORDINATE_LIMIT])


def _statistic_event(
    column: int, threshold: float, above: bool, code_values: NDArray[np.float64], dimension: int, directions: NDArray[np.float64] | None = None
) -> Callable[[ArrayLike], NDArray[np.bool_]]:
    """Membership function of {s_column > threshold} (``above``) or {s_column <= threshold}; NaN in neither."""

    def on_side(matrix: NDArray[Any]) -> NDArray[np.bool_]:
        values = _statistic(matrix.astype(float), code_values, column, directions)
        return values > threshold if above else values <= threshold

    return row_event(dimension, on_side)
