r"""From a dominating pair to an upper and a lower :class:`~dpmech.pld.distribution.GridMeasure`.

Write y = e^{−L}. The composed δ(ε) = E[(1 − e^{ε} Π y_i)_+] is, in each y_i with the
others fixed, decreasing and convex, and in each L_i increasing. Hence, for every ε ∈ ℝ
and every number of compositions:

* **Upper (connect the dots; Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022).** The
  P-mass of a loss L in the cell [l_j, l_{j+1}] is split between the two ends with
  weights 1 − β and β, β = (1 − e^{l_j − L})/(1 − e^{−h}), which keeps E[y] and spreads y
  (Jensen: δ can only grow). Summed over the cell, β_j = (1 − e^{l_j}Q_j/P_j)/(1 − e^{−h})
  with P_j, Q_j the cell's P- and Q-masses. Moving mass to a larger loss also makes δ grow,
  so we may use any β ≥ β_j: we use the largest one the error bounds on P_j and Q_j allow.
  The error of this discretisation is O(h²) per composition.
* **Lower (post-processing; see :class:`~dpmech.pld.distribution.BucketedPair`).** Each
  loss is mapped to its cell index, the tails outside the window to the end cells, and
  the pair of laws of the index under P and Q is composed exactly (up to the bounds).
* Tails outside the chosen window: the upper measure puts the mass below the window
  on its lowest point and the mass above it at +∞. The buckets drop them: mapping every loss
  outside the window to one more symbol ⊥ is a post-processing, and leaving ⊥'s own term
  (p_⊥ − e^ε q_⊥)_+ >= 0 out of the sum only lowers the lower bound. (Merging a tail into an
  end bucket instead would put the whole Q-law of a loss far above its mean, e^{(λ+1)l} times
  heavier after tilting, into the bottom bucket, where it swamps every other Q-mass.)

Every mass is taken on the safe side of its floating-point error bound: the cell
masses come from differences of log-CDFs whose error is bounded by the accuracy
premise of :mod:`dpmech.pld.pairs`, propagated by interval arithmetic.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from .distribution import MOVED_TOLERANCE, TAIL, BucketedPair, GridMeasure, log_sum_exp, log_sum_exp_bound
from .pairs import LOG_ERROR, CoarseLaw, FloatArray, Pair

LOG_FLOOR = -740.0  # probabilities below e^-740 are beneath the smallest double
_LOG_HALF = math.log(0.5)
_COARSE_CELLS = 2048


def _log1mexp(x: ArrayLike) -> FloatArray:
    """log(1 − e^x) for x <= 0 (−∞ at 0), accurate on both sides of −ln 2 (Mächler 2012)."""
    exponent = np.minimum(np.asarray(x, dtype=float), 0.0)
    with np.errstate(divide="ignore"):
        result: FloatArray = np.where(exponent > -math.log(2.0), np.log(-np.expm1(exponent)), np.log1p(-np.exp(exponent)))
    return result


def _error(log_value: ArrayLike) -> FloatArray:
    return LOG_ERROR * np.maximum(1.0, np.abs(np.where(np.isfinite(log_value), log_value, 0.0)))


def _cell_log_masses(pair: Pair, edges: FloatArray, measure: str) -> tuple[FloatArray, FloatArray]:
    """(low, high) bounds on log of the continuous mass of each cell (edges[j], edges[j+1]]."""
    log_cdf = pair.log_cdf(edges, measure)
    log_sf = pair.log_sf(edges, measure)
    cdf_error, sf_error = _error(log_cdf), _error(log_sf)
    with np.errstate(invalid="ignore"):
        # F(b) − F(a) where F(b) <= S(a), else S(a) − S(b): the smaller numbers cancel less. (Not a fixed
        # threshold at 1/2: a continuous part of total mass 1/2, as Laplace's, has F = 1/2 at its top, where
        # F-differences left an absolute error of 1e-12 in cells whose Q-mass is e^-800.)
        from_cdf = log_cdf[1:] <= log_sf[:-1]
        big = np.where(from_cdf, log_cdf[1:], log_sf[:-1])
        small = np.where(from_cdf, log_cdf[:-1], log_sf[1:])
        big_error = np.where(from_cdf, cdf_error[1:], sf_error[:-1])
        small_error = np.where(from_cdf, cdf_error[:-1], sf_error[1:])
        gap = small - big
        gap = np.where(np.isfinite(big), np.where(np.isfinite(small), gap, -np.inf), 0.0)
        high = big + big_error + _log1mexp(gap - big_error - small_error)
        low = big - big_error + _log1mexp(np.minimum(gap + big_error + small_error, 0.0))
    empty = ~np.isfinite(big)
    high[empty], low[empty] = -np.inf, -np.inf
    return low, high


def discretize(pair: Pair, step: float, tilt: float, first: int, last: int,
               tail: float = TAIL) -> tuple[GridMeasure, BucketedPair]:
    """(upper GridMeasure, lower BucketedPair) of ``pair`` on the grid points first·h, ..., last·h.

    A pair that supplies its own bounding pairs (:meth:`~dpmech.pld.pairs.Pair.bounding_pairs`, with at most
    ``tail`` of P-mass unbounded) gives the upper measure from one and the buckets from the other.
    """
    upper_pair, lower_pair = pair.bounding_pairs(step, tilt, tail, (first * step, last * step))
    if upper_pair is not pair or lower_pair is not pair:
        return _discretized(upper_pair, step, tilt, first, last)[0], _discretized(lower_pair, step, tilt, first, last)[1]
    return _discretized(pair, step, tilt, first, last)


def _discretized(pair: Pair, step: float, tilt: float, first: int, last: int) -> tuple[GridMeasure, BucketedPair]:
    count = last - first + 1
    # Float indices: first + j is exact (far below 2^53), and the product is then a float64 array.
    losses = (first + np.arange(count, dtype=np.float64)) * step
    log_upper = np.full(count, -np.inf)
    log_p = np.full(count, -np.inf)  # lower bounds of the P-mass of each bucket
    log_q = np.full(count, -np.inf)  # upper bounds of its Q-mass
    # The masses at +∞ in logs, each a list of log terms summed at the end, rounded to its side.
    upper_infinity_logs: list[float] = []
    lower_infinity_logs: list[float] = []
    if pair.has_continuous_part():
        if count > 1:
            p_low, p_high = _cell_log_masses(pair, losses, "P")
            q_low, q_high = _cell_log_masses(pair, losses, "Q")
            with np.errstate(invalid="ignore", over="ignore"):
                ratio = np.exp(np.minimum(losses[:-1] + q_low - p_high, 0.0))
                beta = np.clip((1.0 - ratio) / -math.expm1(-step) * (1 + 1e-12) + 1e-15, 0.0, 1.0)
            beta = np.where(np.isfinite(p_high), beta, 0.0)
            with np.errstate(divide="ignore"):
                log_upper[:-1] = p_high + np.log1p(-beta)
                log_upper[1:] = np.logaddexp(log_upper[1:], p_high + np.log(beta))
            log_p[:-1], log_q[:-1] = p_low, q_high
        # Outside the window: the upper measure rounds the mass below up to the first point and sends
        # the mass above to +∞; the buckets merge each tail into their end bucket.
        below_p = float(pair.log_cdf(losses[:1], "P")[0])
        above_p = float(pair.log_sf(losses[-1:], "P")[0])
        log_upper[0] = np.logaddexp(log_upper[0], below_p + _error(below_p))
        upper_infinity_logs.append(above_p + float(_error(above_p)))
    # The masses stay in logs: a Q-mass near a large loss is e^{-l} times the P-mass and would underflow
    # (and then be under-counted by the upper Q measure) long before its tilted value does.
    atom_loss, atom_log_p, atom_log_q = (np.asarray(values, dtype=float) for values in pair.log_atoms())
    # Q-mass where P has none falls in a bucket with no P-mass: it never counts.
    kept = atom_log_p > -np.inf
    atom_loss, atom_log_p, atom_log_q = atom_loss[kept], atom_log_p[kept], atom_log_q[kept]
    infinite = atom_loss == math.inf
    upper_infinity_logs.extend(atom_log_p[infinite].tolist())
    lower_infinity_logs.extend(atom_log_p[infinite].tolist())
    # Outside the window: dropped from the buckets (see above); the upper measure keeps them.
    below = ~infinite & (atom_loss < losses[0])
    above = ~infinite & (atom_loss > losses[-1])
    if np.any(below):
        log_upper[0] = np.logaddexp(log_upper[0], log_sum_exp(atom_log_p[below]) + 4 * math.log2(below.sum() + 1) * 2.0**-53)
    upper_infinity_logs.extend(atom_log_p[above].tolist())
    inside = ~(infinite | below | above)
    loss, log_mass, log_q_mass = atom_loss[inside], atom_log_p[inside], atom_log_q[inside]
    index = np.minimum(np.floor(loss / step).astype(np.int64) - first, count - 1)
    late = (index > 0) & (losses[index] > loss)
    while np.any(late):
        index[late] -= 1
        late = (index > 0) & (losses[index] > loss)
    np.logaddexp.at(log_p, index, log_mass)
    np.logaddexp.at(log_q, index, log_q_mass)
    gap = loss - losses[index]
    whole = (gap <= 0.0) | (index == count - 1)
    np.logaddexp.at(log_upper, index[whole], log_mass[whole])
    split = ~whole
    with np.errstate(divide="ignore"):
        beta = np.minimum(1.0, -np.expm1(-gap[split]) / -math.expm1(-step) * (1 + 1e-12) + 1e-15)
        np.logaddexp.at(log_upper, index[split], log_mass[split] + np.log1p(-beta))
        np.logaddexp.at(log_upper, index[split] + 1, log_mass[split] + np.log(beta))
    with np.errstate(divide="ignore"):
        upper = GridMeasure.from_log_masses(step, tilt, first, log_upper, min(log_sum_exp_bound(upper_infinity_logs, True), 0.0),
                                            True)
        lower = BucketedPair(
            GridMeasure.from_log_masses(step, tilt, first, log_p, log_sum_exp_bound(lower_infinity_logs, False), False),
            GridMeasure.from_log_masses(step, tilt + 1.0, first, log_q, -math.inf, True, tails_dropped=True),
        )
    return upper, lower


def _tail_point(function: Callable[[ArrayLike, str], FloatArray], measure: str, start: float, direction: int) -> float:
    """A t with function(t) <= LOG_FLOOR, found by doubling away from ``start``; ``direction`` is ±1."""
    width = 1.0
    for _ in range(60):
        point = start + direction * width
        if function(np.array([point]), measure)[0] <= LOG_FLOOR:
            return point
        width *= 2.0
    raise ValueError("the privacy-loss law has tails too heavy to discretise")


def loss_range(pair: Pair) -> tuple[float, float]:
    """(low, high) outside which the continuous P-mass of L is below e^LOG_FLOOR on each side."""
    low, high = pair.support()
    centre = 0.0 if not (math.isfinite(low) and math.isfinite(high)) else 0.5 * (low + high)
    if not math.isfinite(low):
        low = _tail_point(pair.log_cdf, "P", min(centre, high) if math.isfinite(high) else centre, -1)
    if not math.isfinite(high):
        high = _tail_point(pair.log_sf, "P", max(centre, low), +1)
    return low, high


def _quantiles(pair: Pair, low: float, high: float, log_levels: FloatArray, use_sf: bool) -> FloatArray:
    """Losses where log P_c(L <= t) (or log P_c(L > t)) reaches each level, by vectorised bisection."""
    function = pair.log_sf if use_sf else pair.log_cdf
    left = np.full(log_levels.shape, low)
    right = np.full(log_levels.shape, high)
    for _ in range(28):  # a sketch (it only places the tilt and the window): 2^-28 of the range is plenty
        middle = 0.5 * (left + right)
        above = function(middle, "P") > log_levels
        if use_sf:
            left, right = np.where(above, middle, left), np.where(above, right, middle)
        else:
            left, right = np.where(above, left, middle), np.where(above, middle, right)
    quantiles: FloatArray = 0.5 * (left + right)
    return quantiles


def coarse_law(pair: Pair) -> CoarseLaw:
    """(left, right, log P-mass) of cells sketching the law of L, and the log mass at +∞.

    Continuous cells are cut at quantiles, dense in the bulk and log-spaced in the tails,
    so that E[e^{λL}] from the cells' midpoints is accurate where the bulk is narrow
    (a subsampled mechanism's loss). Atoms are cells of zero width. Used only to choose
    a tilt and a window, never as a bound.
    """
    own = pair.sketch()
    if own is not None:
        return own
    atom_loss, atom_p, _ = pair.atoms()
    finite = np.isfinite(atom_loss) & (atom_p > 0)
    at_infinity = atom_p[atom_loss == math.inf]
    log_infinity = math.log(float(at_infinity.sum())) if at_infinity.size and at_infinity.sum() > 0 else -math.inf
    lefts, rights = [atom_loss[finite]], [atom_loss[finite]]
    with np.errstate(divide="ignore"):
        log_masses = [np.log(atom_p[finite])]
    if pair.has_continuous_part():
        low, high = loss_range(pair)
        log_total = float(pair.log_sf(np.array([low]), "P")[0])
        levels = np.concatenate([np.linspace(LOG_FLOOR, -12.0, 128), np.log(np.linspace(math.exp(-12.0), 0.5, 1024))])
        levels = levels[levels < log_total]
        lower_edges = _quantiles(pair, low, high, levels, use_sf=False)
        upper_edges = _quantiles(pair, low, high, levels[::-1], use_sf=True)
        edges = np.unique(np.concatenate([[low], lower_edges, upper_edges, [high], np.linspace(low, high, 257)]))
        _, cells = _cell_log_masses(pair, edges, "P")  # from the survival function in the upper tail
        keep = np.isfinite(cells)
        lefts.append(edges[:-1][keep])
        rights.append(edges[1:][keep])
        log_masses.append(cells[keep])
    return np.concatenate(lefts), np.concatenate(rights), np.concatenate(log_masses), log_infinity


def log_mgf(sketch: CoarseLaw, tilts: ArrayLike) -> FloatArray:
    """log E_P[e^{λL}; L finite] of a coarse sketch (cell midpoints) for each λ in ``tilts``."""
    left, right, log_masses, _ = sketch
    middle = 0.5 * (left + right)
    tilts = np.atleast_1d(np.asarray(tilts, dtype=float))
    exponents = log_masses[None, :] + tilts[:, None] * middle[None, :]
    largest = exponents.max(axis=1, keepdims=True)
    log_mgfs: FloatArray = largest[:, 0] + np.log(np.exp(exponents - largest).sum(axis=1))
    return log_mgfs


def window(sketch: CoarseLaw, tilt: float, tail: float) -> tuple[float, float]:
    """(low, high) losses outside which the tilted sketch has at most ``tail`` of its mass on each side."""
    left, right, log_masses, _ = sketch
    order = np.argsort(0.5 * (left + right))
    left, right, log_masses = left[order], right[order], log_masses[order]
    log_tilted = log_masses + tilt * right
    log_total = log_sum_exp(log_tilted)
    weights = np.exp(log_tilted - log_total)
    from_top = np.cumsum(weights[::-1])[::-1]  # 1 − 1e-40 is 1 in double precision
    # The mass below the window is moved up to its lowest point: where that adds more than
    # MOVED_TOLERANCE of the tilted weight, the window reaches down until it adds less than ``tail``
    # (see GridMeasure.cut_points).
    moved = np.full(left.size, -np.inf)
    moved[1:] = np.logaddexp.accumulate(log_masses[:-1]) + tilt * left[1:] - log_total
    low = int(np.searchsorted(np.cumsum(weights), tail, side="left"))
    if moved[min(low, left.size - 1)] > math.log(MOVED_TOLERANCE):
        low = max(int(np.searchsorted(moved, math.log(tail), side="right")) - 1, 0)
    beyond = np.flatnonzero(from_top > tail)
    high = int(beyond[-1]) if beyond.size else right.size - 1
    return float(left[low]), float(right[high])
