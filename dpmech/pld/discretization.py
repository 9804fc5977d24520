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
* **Lower (rounding down).** The P-mass of each cell sits at its left end l_j. Its
  error is up to h per composition, so the lower end is the wider one.
* Tails outside the chosen window: the upper measure puts the mass below the window
  on its lowest point and the mass above it at +∞; the lower measure drops the mass
  below and puts the mass above on its highest point.

Every mass is taken on the safe side of its floating-point error bound: the cell
masses come from differences of log-CDFs whose error is bounded by the accuracy
premise of :mod:`dpmech.pld.pairs`, propagated by interval arithmetic.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .distribution import GridMeasure
from .pairs import LOG_ERROR

LOG_FLOOR = -740.0  # probabilities below e^-740 are beneath the smallest double
_LOG_HALF = math.log(0.5)
_COARSE_CELLS = 2048


def _log1mexp(x):
    """log(1 − e^x) for x <= 0 (−∞ at 0), accurate on both sides of −ln 2 (Mächler 2012)."""
    x = np.minimum(np.asarray(x, dtype=float), 0.0)
    with np.errstate(divide="ignore"):
        return np.where(x > -math.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def _error(log_value):
    return LOG_ERROR * np.maximum(1.0, np.abs(np.where(np.isfinite(log_value), log_value, 0.0)))


def _cell_log_masses(pair, edges, measure):
    """(low, high) bounds on log of the continuous mass of each cell (edges[j], edges[j+1]]."""
    log_cdf = pair.log_cdf(edges, measure)
    log_sf = pair.log_sf(edges, measure)
    cdf_error, sf_error = _error(log_cdf), _error(log_sf)
    with np.errstate(invalid="ignore"):
        # F(b) − F(a) in the lower half, S(a) − S(b) in the upper half: the smaller numbers cancel less.
        from_cdf = log_cdf[1:] <= _LOG_HALF
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


def discretize(pair, step, tilt, first, last):
    """(upper, lower) GridMeasures of ``pair`` on the grid points first·h, ..., last·h."""
    count = last - first + 1
    losses = (first + np.arange(count)) * step
    upper_masses = np.zeros(count)
    lower_masses = np.zeros(count)
    upper_infinity = lower_infinity = 0.0
    log_upper = np.full(count, -np.inf)
    log_lower = np.full(count, -np.inf)
    if pair.has_continuous_part() and count > 1:
        p_low, p_high = _cell_log_masses(pair, losses, "P")
        q_low, _ = _cell_log_masses(pair, losses, "Q")
        with np.errstate(invalid="ignore", over="ignore"):
            ratio = np.exp(np.minimum(losses[:-1] + q_low - p_high, 0.0))
            beta = np.clip((1.0 - ratio) / -math.expm1(-step) * (1 + 1e-12) + 1e-15, 0.0, 1.0)
        beta = np.where(np.isfinite(p_high), beta, 0.0)
        with np.errstate(divide="ignore"):
            log_upper[:-1] = p_high + np.log1p(-beta)
            log_upper[1:] = np.logaddexp(log_upper[1:], p_high + np.log(beta))
        log_lower[:-1] = p_low
        below_high = pair.log_cdf(losses[:1], "P")[0]
        above_high = pair.log_sf(losses[-1:], "P")[0]
        log_upper[0] = np.logaddexp(log_upper[0], below_high + _error(below_high))
        upper_infinity += math.exp(above_high + _error(above_high))
        log_lower[-1] = np.logaddexp(log_lower[-1], above_high - _error(above_high))
    elif pair.has_continuous_part():
        # A one-point window: every continuous mass is rounded to it or beyond.
        below = pair.log_cdf(losses[:1], "P")[0]
        above = pair.log_sf(losses[:1], "P")[0]
        log_upper[0] = below + _error(below)
        upper_infinity += math.exp(above + _error(above))
        log_lower[0] = below - _error(below)
    upper_masses = np.exp(log_upper)
    lower_masses = np.exp(log_lower)
    atom_loss, atom_p, _ = pair.atoms()
    for loss, mass in zip(atom_loss.tolist(), atom_p.tolist()):
        if mass <= 0.0:
            continue
        if loss == math.inf:
            upper_infinity += mass
            lower_infinity += mass
            continue
        if loss < losses[0]:
            upper_masses[0] += mass
            continue
        if loss > losses[-1]:
            upper_infinity += mass
            lower_masses[-1] += mass
            continue
        index = min(int(math.floor(loss / step)) - first, count - 1)
        while index > 0 and losses[index] > loss:
            index -= 1
        lower_masses[index] += mass
        gap = loss - losses[index]
        if gap <= 0.0 or index == count - 1:
            upper_masses[index] += mass
            continue
        beta = min(1.0, -math.expm1(-gap) / -math.expm1(-step) * (1 + 1e-12) + 1e-15)
        upper_masses[index] += mass * (1.0 - beta)
        upper_masses[index + 1] += mass * beta
    with np.errstate(divide="ignore"):
        upper = GridMeasure.from_log_masses(step, tilt, first, np.log(upper_masses), upper_infinity, True)
        lower = GridMeasure.from_log_masses(step, tilt, first, np.log(lower_masses), lower_infinity, False)
    return upper, lower


def _tail_point(function, measure, start, direction):
    """A t with function(t) <= LOG_FLOOR, found by doubling away from ``start``; ``direction`` is ±1."""
    width = 1.0
    for _ in range(60):
        point = start + direction * width
        if function(np.array([point]), measure)[0] <= LOG_FLOOR:
            return point
        width *= 2.0
    raise ValueError("the privacy-loss law has tails too heavy to discretise")


def loss_range(pair):
    """(low, high) outside which the continuous P-mass of L is below e^LOG_FLOOR on each side."""
    low, high = pair.support()
    centre = 0.0 if not (math.isfinite(low) and math.isfinite(high)) else 0.5 * (low + high)
    if not math.isfinite(low):
        low = _tail_point(pair.log_cdf, "P", min(centre, high) if math.isfinite(high) else centre, -1)
    if not math.isfinite(high):
        high = _tail_point(pair.log_sf, "P", max(centre, low), +1)
    return low, high


def coarse_law(pair):
    """(losses, log P-masses, log mass at +∞): a cheap sketch of the law of L to choose a tilt and a window.

    Continuous cells are represented by their right ends, so tilting by λ >= 0 overstates
    each cell's weight: windows chosen from the sketch are on the generous side.
    """
    atom_loss, atom_p, _ = pair.atoms()
    finite = np.isfinite(atom_loss) & (atom_p > 0)
    log_infinity = math.log(float(atom_p[atom_loss == math.inf].sum())) if np.any(atom_loss == math.inf) else -math.inf
    losses = [atom_loss[finite]]
    with np.errstate(divide="ignore"):
        log_masses = [np.log(atom_p[finite])]
    if pair.has_continuous_part():
        low, high = loss_range(pair)
        edges = np.linspace(low, high, _COARSE_CELLS + 1)
        log_cdf = pair.log_cdf(edges, "P")
        with np.errstate(invalid="ignore", divide="ignore"):
            cells = log_cdf[1:] + _log1mexp(np.minimum(log_cdf[:-1] - log_cdf[1:], 0.0))
        keep = np.isfinite(cells)
        losses.append(edges[1:][keep])
        log_masses.append(cells[keep])
    return np.concatenate(losses), np.concatenate(log_masses), log_infinity


def log_mgf(sketch, tilts):
    """log E_P[e^{λL}; L finite] of a coarse sketch for each λ in ``tilts``."""
    losses, log_masses, _ = sketch
    tilts = np.atleast_1d(np.asarray(tilts, dtype=float))
    return special.logsumexp(log_masses[None, :] + tilts[:, None] * losses[None, :], axis=1)


def window(sketch, tilt, tail):
    """(low, high) losses outside which the tilted sketch has at most ``tail`` of its mass on each side."""
    losses, log_masses, _ = sketch
    order = np.argsort(losses)
    losses, log_masses = losses[order], log_masses[order]
    log_tilted = log_masses + tilt * losses
    weights = np.exp(log_tilted - special.logsumexp(log_tilted))
    cumulative = np.cumsum(weights)
    low = int(np.searchsorted(cumulative, tail, side="left"))
    high = int(np.searchsorted(cumulative, cumulative[-1] - tail, side="left"))
    low = max(low - 1, 0)
    high = min(high + 1, losses.size - 1)
    return float(losses[low]), float(losses[high])
