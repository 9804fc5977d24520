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
more (or, when there is none, every other discrete one), u among a's values
and t among b's thresholds (its distinct values, or evenly spaced and tail
quantiles). The
statistics and thresholds come from the first half of a refit sample;
two-dimensional histograms of both halves give every event's counts in one
pass. The events are screened on the first half (counts shrunk by
``SCREEN_Z`` standard deviations), and the ``SCREENED`` best are ranked on
the second half (:func:`.candidates.refit_candidate`).

These are candidates only: the final stage (:mod:`.confirm`) counts them
on fresh outputs, so how they were chosen does not affect its level. NaN
in either statistic falls in no event.
"""

from __future__ import annotations

import numpy as np

from .candidates import NOMINAL_SAMPLES, refit_candidate
from .projections import _code_values, _statistic, _statistic_names, _thresholds
from .statistical import _rescored

# A statistic is a quadrant's discrete side when it takes at most this many values on the selection half.
DISCRETE_LIMIT = 64
# Evenly spaced quantiles per continuous statistic (tail quantiles are added, as for half-lines).
NUM_THRESHOLDS = 32
# Screening: counts shrunk by this many standard deviations (about a 5 % one-sided level), the best kept for ranking.
SCREEN_Z = 1.645
SCREENED = 256
# Code values and thresholds come from at most this many selection outputs per side (quantiles need no more).
THRESHOLD_ROWS = 16_384


def _bins(column, thresholds):
    """Bin j of a statistic holds (t_{j-1}, t_j], j = 0 … len(t); NaN gets its own last bin, len(t) + 1."""
    bins = np.searchsorted(thresholds, column, side="left")
    bins[np.isnan(column)] = thresholds.size + 1
    return bins


def _quadrant_counts(discrete_offsets, other_bins, num_values, num_bins, width):
    """Hit counts (4, num_values − 1, num_bins − 1) of {a <= u_i}, {a > u_i} (in that order) by {b <= t_j}, {b > t_j}.

    ``discrete_offsets`` is a's bin times ``width`` (>= num_bins + 1): a's and b's bins index one table, whose
    NaN row and column (bins num_values and num_bins) are dropped, so NaN falls in no quadrant.
    """
    table = np.bincount(discrete_offsets + other_bins, minlength=(num_values + 1) * width).reshape(num_values + 1, width)
    table = table[:num_values, :num_bins]
    at_most = np.cumsum(table, axis=0)[:-1]
    quadrants = []
    for rows in (at_most, table.sum(axis=0) - at_most):
        below = np.cumsum(rows, axis=1)[:, :-1]
        quadrants += [below, rows.sum(axis=1, keepdims=True) - below]
    return np.stack(quadrants)


def _screen_scores(heavy, light):
    """log of the heavy count shrunk down over the light count shrunk up, each by ``SCREEN_Z`` standard deviations."""
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.log(np.maximum(heavy - SCREEN_Z * np.sqrt(heavy), 0.0)) - np.log(light + SCREEN_Z * np.sqrt(light) + 1.0)
    return np.nan_to_num(score, nan=-np.inf, neginf=-np.inf)


def _quadrant_event(discrete, value, at_most, other, threshold, above, code_values, dimension):
    """Membership function of {a <= value (a > value when not ``at_most``), b <= threshold (> when ``above``)}; NaN in none."""

    def member(outputs):
        matrix = np.asarray(outputs).reshape(len(outputs), -1)
        if matrix.shape[1] != dimension or matrix.dtype.kind not in "biuf":
            return np.zeros(len(outputs), dtype=bool)
        matrix = matrix.astype(float, copy=False)
        first, second = _statistic(matrix, code_values, discrete), _statistic(matrix, code_values, other)
        inside = (first <= value) if at_most else (first > value)
        return inside & ((second > threshold) if above else (second <= threshold))

    return member


def quadrant_refit(first, second, delta, keep=None, nominal_samples=NOMINAL_SAMPLES):
    """The best quadrant event on a refit sample of numeric vector outputs (see the module docstring), or None.

    Args:
        first, second: outputs of D and of D' (numeric arrays, one row of d >= 2 coordinates per output).
        delta: the claimed δ.
        keep: a candidate chosen before; it competes on the same ranking half.
        nominal_samples: the N the ranking predicts the bound for.
    Returns a :class:`.candidates.Candidate` (with runners-up), ``keep`` rescored when no quadrant exists, or None.
    """
    half = min(len(first), len(second)) // 2
    matrices = [np.asarray(sample).reshape(len(sample), -1).astype(float, copy=False) for sample in (first, second)]
    dimension = matrices[0].shape[1]
    if half < 1 or dimension < 2:
        return None if keep is None else _rescored(first, second, delta, keep, nominal_samples)
    selection = [matrix[:half] for matrix in matrices]
    ranking = [matrix[half:2 * half] for matrix in matrices]
    code_values = _code_values(np.concatenate([matrix[:THRESHOLD_ROWS] for matrix in selection]).ravel())
    names = _statistic_names(dimension, code_values)
    # Bin j of a statistic holds (t_{j−1}, t_j] of its thresholds t (a discrete statistic's: its values but the largest).
    thresholds, bins, discrete = [], [], []
    for column in range(len(names)):
        columns = [_statistic(part, code_values, column) for part in selection + ranking]
        chosen_on = np.concatenate([values[:THRESHOLD_ROWS] for values in columns[:2]])
        edges = _thresholds(chosen_on, NUM_THRESHOLDS)
        thresholds.append(edges)
        bins.append([_bins(values, edges) for values in columns])
        if edges.size and np.unique(chosen_on[~np.isnan(chosen_on)]).size <= DISCRETE_LIMIT:
            discrete.append(column)
    # Discrete by discrete quadrants are the level sets' ground; with a continuous statistic, only it is paired.
    others = [column for column in range(len(names)) if thresholds[column].size and column not in discrete] or discrete
    if not discrete or len(set(others) | set(discrete)) < 2:
        return None if keep is None else _rescored(first, second, delta, keep, nominal_samples)
    width = max(thresholds[column].size for column in others) + 2
    blocks = []  # (discrete column, other column, per half and side the counts (4, u, t))
    for a in discrete:
        offsets = [bins[a][part] * width for part in range(4)]
        for b in others:
            if b != a:
                counts = [_quadrant_counts(offsets[part], bins[b][part], thresholds[a].size + 1, thresholds[b].size + 1, width)
                          for part in range(4)]
                blocks.append((a, b, counts))
    # Screen every quadrant, both orders, on the selection half; rank the best on the ranking half.
    screen = np.concatenate([np.concatenate([_screen_scores(counts[0], counts[1]).ravel(), _screen_scores(counts[1], counts[0]).ravel()])
                             for _, _, counts in blocks])
    best = np.argsort(-screen, kind="stable")[:SCREENED]
    best = best[np.isfinite(screen[best])]
    starts = np.cumsum([0] + [2 * counts[0].size for _, _, counts in blocks])
    events = {}  # (a, u, a <= u, b, t, b > t) -> (hits on D, hits on D', description), on the ranking half
    for flat in best.tolist():
        block = int(np.searchsorted(starts, flat, side="right") - 1)
        a, b, counts = blocks[block]
        # Each cell was screened in both orders; refit_candidate ranks both orders of each event again.
        quadrant, row, column = np.unravel_index((flat - starts[block]) % counts[0].size, counts[0].shape)
        at_most, above = quadrant < 2, quadrant % 2 == 1
        value, threshold = float(thresholds[a][row]), float(thresholds[b][column])
        description = f"{names[a]} {'<=' if at_most else '>'} {value:.6g} and {names[b]} {'>' if above else '<='} {threshold:.6g}"
        events[(a, value, at_most, b, threshold, above)] = (int(counts[2][quadrant, row, column]), int(counts[3][quadrant, row, column]), description)
    keys, tallies = list(events), list(events.values())
    if keep is not None:
        tallies.append((*(int(np.count_nonzero(keep.event(sample))) for sample in (first[half:2 * half], second[half:2 * half])), keep.description))
    if not tallies:
        return None
    hits_first, hits_second, descriptions = zip(*tallies)
    return refit_candidate(hits_first, hits_second, half, delta,
                           lambda index: keep.event if index == len(keys) else _quadrant_event(*keys[index], code_values, dimension),
                           list(descriptions), nominal_samples)
