r"""Quadrant events on two summary statistics of vector outputs: a refit for the final stage's race.

Many mechanisms release a discrete skeleton beside a few numbers: the sparse
vector technique with noisy values (which query was answered, and the
answer), report-noisy-max with its value (the index, and the maximum). Their
privacy loss is largest on a joint event, a late answer with a low value,
which no half-line on one statistic isolates and which a classifier trained
on a few thousand outputs does not find (the events are rare: p ≈ 10⁻³ on
SVT Alg. 3 at ε = 0.1). This module searches the events

    {a <= u, b <= t}, {a <= u, b > t}, {a > u, b <= t}, {a > u, b > t}

for every statistic a of :mod:`.projections` with at most ``DISCRETE_LIMIT``
distinct values (a position, a count, an index), every statistic b with
more (but a coordinate whose entries are codes more often than not: SVT's
x[j], whose values are the first entry that is no code; or, when there is
none, every other discrete one), u among a's values
and t among b's thresholds (its distinct values, or evenly spaced and tail
quantiles). The
statistics and thresholds come from the first half of a refit sample;
two-dimensional histograms of both halves give every event's counts in one
pass. The events are screened on the first half (counts shrunk by
``SCREEN_Z`` standard deviations), and the ``SCREENED`` best are ranked on
the second half (:func:`.candidates.refit_candidate`). An event with the same
hits as one screened before it on both halves and both sides is taken for the
same set under another name and left out, so that the runners-up are other sets.

These are candidates only: the final stage (:mod:`.confirm`) counts them
on fresh outputs, so how they were chosen does not affect its level. NaN
in either statistic falls in no event.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .candidates import NOMINAL_SAMPLES, Candidate, refit_candidate
from .projections import _code_values, _statistic, _statistic_names, _thresholds
from .statistical import _rescored, row_event

# A statistic is a quadrant's discrete side when it takes at most this many values on the selection half.
DISCRETE_LIMIT = 64
# Evenly spaced quantiles per continuous statistic (tail quantiles are added, as for half-lines).
NUM_THRESHOLDS = 32
# Screening: counts shrunk by this many standard deviations (about a 5 % one-sided level), the best kept for ranking.
SCREEN_Z = 1.645
SCREENED = 256
# A coordinate whose selection entries are codes more often than this is no quadrant's continuous side.
CODED_SHARE = 0.5
# Code values and thresholds come from at most this many selection outputs per side (quantiles need no more).
THRESHOLD_ROWS = 16_384


def _bins(column: NDArray[np.float64], thresholds: NDArray[np.float64]) -> NDArray[np.int64]:
    """Bin j of a statistic holds (t_{j-1}, t_j], j = 0 … len(t); NaN gets its own last bin, len(t) + 1."""
    bins = np.searchsorted(thresholds, column, side="left")
    bins[np.isnan(column)] = thresholds.size + 1
    return bins


def _table(discrete_offsets: NDArray[np.int64], other_bins: NDArray[np.int64], num_values: int, width: int) -> NDArray[np.int64]:
    """Joint histogram (num_values + 1, width) of a's bins (``discrete_offsets`` = a's bin × ``width``) and b's bins."""
    return np.bincount(discrete_offsets + other_bins, minlength=(num_values + 1) * width).reshape(num_values + 1, width)


def _quadrant_counts(table: NDArray[np.int64], num_values: int, num_bins: int) -> NDArray[np.int64]:
    """Hit counts (4, num_values − 1, num_bins − 1) of {a <= u_i}, {a > u_i} (in that order) by {b <= t_j}, {b > t_j}.

    ``table`` is :func:`_table`'s joint histogram: its NaN row and column (bins num_values and num_bins)
    are dropped, so NaN falls in no quadrant.
    """
    table = table[:num_values, :num_bins]
    at_most = np.cumsum(table, axis=0)[:-1]
    quadrants: list[NDArray[np.int64]] = []
    for rows in (at_most, table.sum(axis=0) - at_most):
        below = np.cumsum(rows, axis=1)[:, :-1]
        quadrants += [below, rows.sum(axis=1, keepdims=True) - below]
    return np.stack(quadrants)


def _screen_scores(heavy: NDArray[np.int64], light: NDArray[np.int64]) -> NDArray[np.float64]:
    """log of the heavy count shrunk down over the light count shrunk up, each by ``SCREEN_Z`` standard deviations."""
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.log(np.maximum(heavy - SCREEN_Z * np.sqrt(heavy), 0.0)) - np.log(light + SCREEN_Z * np.sqrt(light) + 1.0)
    scores: NDArray[np.float64] = np.nan_to_num(score, nan=-np.inf, neginf=-np.inf)
    return scores


def _quadrant_event(
    discrete: int,
    value: float,
    at_most: bool,
    other: int,
    threshold: float,
    above: bool,
    code_values: NDArray[np.float64],
    dimension: int,
) -> Callable[[ArrayLike], NDArray[np.bool_]]:
    """Membership function of {a <= value (a > value when not ``at_most``), b <= threshold (> when ``above``)}; NaN in none."""

    def in_quadrant(matrix: NDArray[Any]) -> NDArray[np.bool_]:
        reals = matrix.astype(np.float64, copy=False)
        first, second = _statistic(reals, code_values, discrete), _statistic(reals, code_values, other)
        inside = (first <= value) if at_most else (first > value)
        return inside & ((second > threshold) if above else (second <= threshold))

    return row_event(dimension, in_quadrant)


class QuadrantTally:
    """Joint histograms of the quadrant statistics over every batch added: a quadrant refit whose cost grows with the new outputs.

    :meth:`start` fixes the layout on a first batch (code values, statistics, thresholds, which are
    discrete) from its selection half; :meth:`add` splits each batch of equal size per side into a
    selection and a ranking half and adds their joint histograms; :meth:`candidate` screens and ranks
    on all the halves added so far, as :func:`quadrant_refit` does on one sample. The race of
    :mod:`.confirm` refits its pairs on pools that grow round by round: on the histograms a round costs
    the fresh outputs' statistics, not the whole pool's.
    """

    def __init__(
        self,
        code_values: NDArray[np.float64],
        dimension: int,
        names: list[str],
        thresholds: list[NDArray[np.float64]],
        discrete: list[int],
        others: list[int],
        keep: Candidate | None,
    ) -> None:
        self.code_values, self.dimension, self.names = code_values, dimension, names
        self.thresholds, self.keep = thresholds, keep
        self.width = max(thresholds[column].size for column in others) + 2
        self.blocks = [(a, b) for a in discrete for b in others if b != a]
        # Per block and part (selection D, selection D', ranking D, ranking D'): the joint histogram.
        self.tables = [[np.zeros((thresholds[a].size + 2, self.width), dtype=np.int64) for _ in range(4)] for a, _ in self.blocks]
        self.keep_hits: list[int] = [0, 0]
        self.size = 0  # outputs per side added (both halves)

    @classmethod
    def start(cls, first: ArrayLike, second: ArrayLike, keep: Candidate | None = None) -> QuadrantTally | None:
        """A tally with the layout chosen on this batch's selection half, the batch added; None when no quadrant exists."""
        matrices = _matrices(first, second)
        half = len(matrices[0]) // 2
        dimension = matrices[0].shape[1]
        if half < 1 or dimension < 2:
            return None
        selection = [matrix[:min(half, THRESHOLD_ROWS)] for matrix in matrices]
        code_values = _code_values(np.concatenate(selection).ravel())
        names = _statistic_names(dimension, code_values)
        thresholds: list[NDArray[np.float64]] = []
        discrete: list[int] = []
        coded: list[int] = []
        for column in range(len(names)):
            chosen_on = np.concatenate([_statistic(part, code_values, column) for part in selection])
            thresholds.append(_thresholds(chosen_on, NUM_THRESHOLDS))
            # _thresholds keeps every distinct value but the largest when there are at most DISTINCT_LIMIT of them.
            if thresholds[-1].size and np.unique(chosen_on[~np.isnan(chosen_on)]).size <= DISCRETE_LIMIT:
                discrete.append(column)
            elif column < dimension and np.isin(chosen_on, code_values).mean() > CODED_SHARE:
                coded.append(column)
        # Discrete by discrete quadrants are the level sets' ground; with a continuous statistic, only it is paired. A
        # coordinate that is mostly codes (SVT's answer j: ⊥, halted, or a value) is left out: its values are in the
        # first entry that is no code, and its histograms would cost more than all the summary statistics'.
        others = [column for column in range(len(names)) if thresholds[column].size and column not in discrete + coded] or discrete
        if not discrete or len(set(others) | set(discrete)) < 2:
            return None
        tally = cls(code_values, dimension, names, thresholds, discrete, others, keep)
        tally.add(*matrices)
        return tally

    def add(self, first: ArrayLike, second: ArrayLike) -> None:
        """Add a batch: the same number of outputs of D and of D' (an odd last row of each is left out)."""
        matrices = _matrices(first, second)
        half = len(matrices[0]) // 2
        parts = [matrix[:half] for matrix in matrices] + [matrix[half:2 * half] for matrix in matrices]
        columns = sorted({column for block in self.blocks for column in block})
        bins = {column: [_bins(_statistic(part, self.code_values, column), self.thresholds[column]) for part in parts] for column in columns}
        offsets = {a: [part * self.width for part in bins[a]] for a, _ in self.blocks}
        for (a, b), tables in zip(self.blocks, self.tables):
            for part, table in enumerate(tables):
                table += _table(offsets[a][part], bins[b][part], self.thresholds[a].size + 1, self.width)
        if self.keep is not None:
            for side in (0, 1):
                self.keep_hits[side] += int(np.count_nonzero(self.keep.event(parts[2 + side])))
        self.size += 2 * half

    def candidate(self, delta: float, nominal_samples: int = NOMINAL_SAMPLES) -> Candidate | None:
        """The best quadrant event on the halves added (see the module docstring), the ``keep`` event competing; or None."""
        half = self.size // 2
        thresholds, names = self.thresholds, self.names
        blocks = [(a, b, [_quadrant_counts(table, thresholds[a].size + 1, thresholds[b].size + 1) for table in tables])
                  for (a, b), tables in zip(self.blocks, self.tables)]
        # Screen every quadrant, both orders, on the selection half; rank the best on the ranking half.
        screen = np.concatenate([np.concatenate([_screen_scores(counts[0], counts[1]).ravel(), _screen_scores(counts[1], counts[0]).ravel()])
                                 for _, _, counts in blocks])
        best = np.argsort(-screen, kind="stable")[:SCREENED]
        best = best[np.isfinite(screen[best])]
        starts = np.cumsum([0] + [2 * counts[0].size for _, _, counts in blocks])
        aliases: set[tuple[int, ...]] = set()  # the hits (selection D, D', ranking D, D') of the sets named so far
        events: dict[tuple[int, float, bool, int, float, bool], tuple[int, int, str]] = {}  # (a, u, a <= u, b, t, b > t) -> (hits on D, hits on D', description), on the ranking half
        for flat in best.tolist():
            block = int(np.searchsorted(starts, flat, side="right") - 1)
            a, b, counts = blocks[block]
            # Each cell was screened in both orders; refit_candidate ranks both orders of each event again.
            quadrant, row, column = np.unravel_index((flat - starts[block]) % counts[0].size, counts[0].shape)
            at_most, above = quadrant < 2, quadrant % 2 == 1
            value, threshold = float(thresholds[a][row]), float(thresholds[b][column])
            description = f"{names[a]} {'<=' if at_most else '>'} {value:.6g} and {names[b]} {'>' if above else '<='} {threshold:.6g}"
            hits = tuple(int(counts[part][quadrant, row, column]) for part in range(4))
            # One set often has several names (on SVT Alg. 3, "#(x[j] == -1) <= 5 and sum x <= t" and "#(x[j] == 0) > 2
            # and sum x <= t"): with the same hits on all four parts it is taken for the same set, named once (the best
            # screened name), so that the runners-up the final stage counts beside the best are other sets, not aliases
            # that each take a share of its β. A wrong merge only loses a candidate: the final stage decides alone.
            if hits not in aliases:
                aliases.add(hits)
                events[(a, value, at_most, b, threshold, above)] = (hits[2], hits[3], description)
        keys, tallies = list(events), list(events.values())
        keep = self.keep
        if keep is not None:
            tallies.append((self.keep_hits[0], self.keep_hits[1], keep.description))
        if not tallies:
            return None
        hits_first, hits_second, descriptions = zip(*tallies)

        def event_of(index: int) -> Callable[[Any], NDArray[np.bool_]]:
            # Index len(keys) is the kept candidate, appended after the quadrants.
            if keep is not None and index == len(keys):
                return keep.event
            return _quadrant_event(*keys[index], self.code_values, self.dimension)

        return refit_candidate(hits_first, hits_second, half, delta, event_of, list(descriptions), nominal_samples)


def _matrices(first: ArrayLike, second: ArrayLike) -> list[NDArray[np.float64]]:
    """Both sides as float matrices of one row per output, cut to the same length."""
    arrays = [np.asarray(sample) for sample in (first, second)]
    size = min(len(arrays[0]), len(arrays[1]))
    return [array[:size].reshape(size, -1).astype(np.float64, copy=False) for array in arrays]


def quadrant_refit(
    first: ArrayLike, second: ArrayLike, delta: float, keep: Candidate | None = None, nominal_samples: int = NOMINAL_SAMPLES
) -> Candidate | None:
    """The best quadrant event on a refit sample of numeric vector outputs (see the module docstring), or None.

    Args:
        first, second: outputs of D and of D' (numeric arrays, one row of d >= 2 coordinates per output).
        delta: the claimed δ.
        keep: a candidate chosen before; it competes on the same ranking half.
        nominal_samples: the N the ranking predicts the bound for.
    Returns a :class:`.candidates.Candidate` (with runners-up), ``keep`` rescored when no quadrant exists, or None.
    """
    tally = QuadrantTally.start(first, second, keep)
    if tally is None:
        return None if keep is None else _rescored(first, second, delta, keep, nominal_samples)
    return tally.candidate(delta, nominal_samples)
