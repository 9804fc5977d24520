r"""Certified δ(ε) and ε(δ) of a composition of dominating pairs.

A *ledger* is a sequence of ``(pairs, count)``: ``count`` >= 1 compositions of one
mechanism, ``pairs`` being either one :class:`~dpmech.pld.pairs.Pair` (its reverse is
taken for the other direction) or a tuple ``(first, second)`` of the mechanism's pairs
in the two directions of the neighbouring relation (e.g. the remove and add pairs of
:func:`~dpmech.pld.subsampling.poisson_subsampled`). Every mechanism of the ledger is
composed in the same direction, and δ(ε) is the larger of the two directions (a pair
of neighbours is fixed for the whole composition; Zhu, Dong & Wang 2022, Sec. 3).

The answer to every query is an :class:`Interval` proven to contain the exact value
for the composed dominating pairs, under the accuracy premise of
:mod:`dpmech.pld.pairs` (see :mod:`dpmech.pld.discretization` for the discretisation,
:mod:`dpmech.pld.distribution` for the floating-point error of the FFT and the tilt).
The upper end is the one to report as a privacy guarantee.

Guards: the grid size is estimated from a coarse sketch of each law before anything
large is allocated; a composition whose grid would exceed ``max_points`` raises
:class:`GridTooLarge` (a ``ValueError``) naming the discretisation to coarsen, which it
also carries as ``suggested`` so that a caller may coarsen instead of refusing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import validation as check
from . import discretization as grid
from .distribution import TAIL
from .pairs import Pair, reverse

DEFAULT_DISCRETIZATION = 1e-4
MAX_POINTS = 1 << 23
_TAIL_SIGMAS = 14.0  # a tilted tail of 1e-40 is about 13.2 standard deviations out
_TILTS = np.concatenate([[0.0], np.geomspace(1e-3, 1e3, 121)])
_TILT_SLACK = 0.01


class GridTooLarge(ValueError):
    """The grid a query needs exceeds ``max_points``; ``suggested`` is a discretisation that fits."""

    def __init__(self, message, suggested):
        super().__init__(message)
        self.suggested = suggested


@dataclass(frozen=True)
class Interval:
    """A certified enclosure lower <= truth <= upper (floats or arrays)."""

    lower: object
    upper: object


def _directions(pairs):
    if isinstance(pairs, Pair):
        return (pairs, reverse(pairs))
    if isinstance(pairs, tuple) and len(pairs) == 2 and all(isinstance(p, Pair) for p in pairs):
        return pairs
    raise ValueError(f"each ledger entry's pairs must be a Pair or a tuple of two Pairs (got {pairs!r})")


def _ledger(ledger):
    if isinstance(ledger, tuple) and len(ledger) == 2 and not isinstance(ledger[0], tuple):
        ledger = [ledger]
    entries = list(ledger)
    if not entries:
        raise ValueError("ledger must hold at least one (pairs, count) entry")
    result = []
    for entry in entries:
        if not (isinstance(entry, tuple) and len(entry) == 2):
            raise ValueError(f"each ledger entry must be a (pairs, count) tuple (got {entry!r})")
        result.append((_directions(entry[0]), check.integer_scalar("count", entry[1], 1)))
    return result


def _total_log_mgf(sketches, counts):
    """log E[e^{λL}] of the composed sketches at every λ of :data:`_TILTS`."""
    return sum(count * grid.log_mgf(sketch, _TILTS) for sketch, count in zip(sketches, counts))


def _chernoff_log_delta(total, epsilon):
    """min over λ of log E[e^{λ(L − ε)}] (``total`` from :func:`_total_log_mgf`): an estimate of log P(L > ε),
    used only to tilt."""
    objective = total - _TILTS * epsilon
    objective = objective[np.isfinite(objective)]
    return float(objective.min()) if objective.size else 0.0


def _choose_tilt(total, log_delta):
    """The λ of the tightest Chernoff bound ε(δ) on the composed law (``total`` from :func:`_total_log_mgf`):
    where the tilted bulk sits at ε(δ)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        objective = np.where(_TILTS > 0, (total - log_delta) / _TILTS, np.inf)
    objective = np.where(np.isfinite(objective), objective, np.inf)
    # The smallest λ whose bound on ε is within 0.01 of the best: for a bounded loss the bound keeps
    # improving as λ → ∞, but a steep tilt leaves the masses more than about 30/λ below the top under
    # the FFT's round-off, and the cuts then move them up to the top, above the ε asked about.
    best = float(objective.min())
    if not math.isfinite(best):
        return float(_TILTS[int(np.argmin(objective))])
    return float(_TILTS[int(np.argmax(objective <= best + _TILT_SLACK))])


def _estimated_points(sketches, counts, tilt, step):
    """Grid points of the widest convolution: the composed tilted window plus one factor's."""
    variance, widest = 0.0, 0.0
    for sketch, count in zip(sketches, counts):
        left, right, log_masses, _ = sketch
        losses = 0.5 * (left + right)
        log_tilted = log_masses + tilt * losses
        weights = np.exp(log_tilted - log_tilted.max())
        weights /= weights.sum()
        mean = float((weights * losses).sum())
        variance += count * float((weights * np.square(losses - mean)).sum())
        low, high = grid.window(sketch, tilt, TAIL)
        widest = max(widest, high - low)
    return 2.0 * (2 * _TAIL_SIGMAS * math.sqrt(variance) + 2 * widest) / step + 3


class ComposedLoss:
    """The upper and lower grid measures of a ledger in both directions, for one tilt and step."""

    def __init__(self, ledger, discretization=DEFAULT_DISCRETIZATION, *, epsilon=None, delta=None,
                 max_points=MAX_POINTS, lower=True):
        self.step = float(check.positive("discretization", discretization))
        # Without the lower end (``lower=False``) every lower bound reported is the trivial 0.
        self.with_lower = check.boolean("lower", lower)
        max_points = check.integer_scalar("max_points", max_points, 16)
        entries = _ledger(ledger)
        counts = [count for _, count in entries]
        self.directions = []
        directions = [[pair_directions[0] for pair_directions, _ in entries]]
        if not all(pair.symmetric for pair in directions[0]):
            directions.append([pair_directions[1] for pair_directions, _ in entries])
        all_sketches = [[grid.coarse_law(pair) for pair in pairs] for pairs in directions]
        totals = [_total_log_mgf(sketches, counts) for sketches in all_sketches]
        if epsilon is not None:
            # Tilt both directions for the δ the answer will be, the larger direction's Chernoff bound at ε:
            # a direction whose own δ(ε) is far smaller (a bounded loss just above ε) would otherwise get a
            # tilt so steep that its whole window collapses onto its top point and its tail to +∞.
            log_target = min(0.0, max(_chernoff_log_delta(total, epsilon) for total in totals))
        else:
            log_target = math.log(delta if delta is not None else 1e-5)
        for pairs, sketches, total in zip(directions, all_sketches, totals):
            tilt = _choose_tilt(total, log_target)
            points = _estimated_points(sketches, counts, tilt, self.step)
            if points > max_points:
                suggested = self.step * points / max_points
                raise GridTooLarge(
                    f"discretization {self.step:g} needs about {points:.3g} grid points (limit max_points = "
                    f"{max_points}); use a discretization of at least {suggested:.3g}",
                    suggested,
                )
            upper = lower = None
            for pair, sketch, count in zip(pairs, sketches, counts):
                low, high = grid.window(sketch, tilt, TAIL)
                first = math.floor(low / self.step) - 1
                last = math.ceil(high / self.step) + 1
                if (last - first) * 2 > max_points:
                    raise GridTooLarge(
                        f"discretization {self.step:g} gives one event {last - first} grid points (limit "
                        f"max_points = {max_points}); use a coarser discretization",
                        self.step * (last - first) * 2 / max_points,
                    )
                single_upper, single_lower = grid.discretize(pair, self.step, tilt, first, last)
                single_upper = single_upper.power(count)
                upper = single_upper if upper is None else upper.compose(single_upper)
                if self.with_lower:
                    single_lower = single_lower.power(count)
                    lower = single_lower if lower is None else lower.compose(single_lower)
            self.directions.append((upper, lower))

    def log_delta(self, epsilon):
        """Interval of log δ(ε) (the larger direction), vectorised over ε >= 0."""
        values = check.non_negative("epsilon", epsilon)
        flat = np.atleast_1d(values).ravel()
        lower = np.array([max(self._lower_log_delta(low, e) for _, low in self.directions) for e in flat])
        upper = np.array([max(up.log_delta(e) for up, _ in self.directions) for e in flat])
        shape = np.shape(values)
        return Interval(check.scalar_or_array(lower.reshape(shape)), check.scalar_or_array(upper.reshape(shape)))

    def _lower_log_delta(self, lower, epsilon):
        return lower.log_delta(epsilon) if self.with_lower else -math.inf

    def _lower_epsilon(self, lower, log_target):
        return lower.epsilon(log_target) if self.with_lower else 0.0

    def delta(self, epsilon):
        """Interval of δ(ε); a positive lower end that underflows is returned as the smallest subnormal."""
        logs = self.log_delta(epsilon)
        with np.errstate(under="ignore"):
            lower = np.exp(logs.lower)
            upper = np.exp(logs.upper)
        upper = np.where((upper == 0) & np.isfinite(logs.upper), 5e-324, upper)
        return Interval(check.scalar_or_array(np.minimum(lower, upper)), check.scalar_or_array(np.minimum(upper, 1.0)))

    def epsilon(self, delta):
        """Interval of the smallest ε >= 0 with δ(ε) <= delta, vectorised over delta ∈ (0, 1)."""
        values = check.open_unit_interval("delta", delta)
        flat = np.log(np.atleast_1d(values).ravel())
        lower = np.array([max(self._lower_epsilon(low, t) for _, low in self.directions) for t in flat])
        upper = np.array([max(up.epsilon(t) for up, _ in self.directions) for t in flat])
        shape = np.shape(values)
        return Interval(check.scalar_or_array(lower.reshape(shape)), check.scalar_or_array(upper.reshape(shape)))


def refine(ledger, query, target, width, discretization, max_points, tilt_at):
    """``query(loss, target)`` on the ComposedLoss at ``discretization`` (default :data:`DEFAULT_DISCRETIZATION`),
    or, with ``width``, from a step of 1e-3 refined until every answer's upper − lower is at most ``width``.

    ``tilt_at`` names the ε or δ (``{"epsilon": e}`` or ``{"delta": d}``) the grid is tilted towards."""
    if width is None:
        step = DEFAULT_DISCRETIZATION if discretization is None else discretization
        return query(ComposedLoss(ledger, step, max_points=max_points, **tilt_at), target)
    width = check.positive("width", width)
    step = 1e-3 if discretization is None else check.positive("discretization", discretization)
    for _ in range(8):
        answer = query(ComposedLoss(ledger, step, max_points=max_points, **tilt_at), target)
        achieved = float(np.max(np.asarray(answer.upper) - np.asarray(answer.lower)))
        if achieved <= width:
            return answer
        # Both ends' errors are second order in the step for continuous laws (the width quarters when the
        # step halves), at worst first order for atoms that straddle cells: aim by the square root.
        step *= max(0.1, min(0.9, 0.9 * math.sqrt(width / achieved)))
    raise ValueError(f"width {width:g} was not reached by discretization {step:g}; ask for a wider interval")


def delta(ledger, epsilon, discretization=None, *, width=None, max_points=MAX_POINTS):
    """Certified Interval of δ(ε) for the composed ledger, vectorised over ε.

    With ``width`` the step is refined until upper − lower <= width (for every ε).
    """
    eps = check.non_negative("epsilon", epsilon)
    tilt_at = {"epsilon": float(np.median(eps))}
    return refine(ledger, lambda loss, e: loss.delta(e), eps, width, discretization, max_points, tilt_at)


def log_delta(ledger, epsilon, discretization=None, *, width=None, max_points=MAX_POINTS):
    """Certified Interval of log δ(ε): carries a δ far below the smallest double.

    With ``width`` the step is refined until upper − lower <= width in log δ (a relative width in δ).
    """
    eps = check.non_negative("epsilon", epsilon)
    tilt_at = {"epsilon": float(np.median(eps))}
    return refine(ledger, lambda loss, e: loss.log_delta(e), eps, width, discretization, max_points, tilt_at)


def epsilon(ledger, delta, discretization=None, *, width=None, max_points=MAX_POINTS):
    """Certified Interval of ε(δ) for the composed ledger, vectorised over δ ∈ (0, 1)."""
    target = check.open_unit_interval("delta", delta)
    tilt_at = {"delta": float(np.exp(np.median(np.log(target))))}
    return refine(ledger, lambda loss, d: loss.epsilon(d), target, width, discretization, max_points, tilt_at)
