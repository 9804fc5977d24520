r"""Certified δ(ε) and ε(δ) of a composition of dominating pairs.

A *ledger* is a sequence of ``(pairs, count)``: ``count`` >= 1 compositions of one
mechanism, ``pairs`` being either one :class:`~dpmech.pld.pairs.Pair` (its reverse is
taken for the other direction) or a tuple ``(first, second)`` of the mechanism's pairs
in the two directions of the neighbouring relation (e.g. the remove and add pairs of
:func:`~dpmech.pld.subsampling.poisson_subsampled`). Every mechanism of the ledger is
composed in the same direction, and δ(ε) is the larger of the two directions (a pair
of neighbours is fixed for the whole composition; Zhu, Dong & Wang 2022, Sec. 3).

The answer to every query is an :class:`~dpmech.interval.Interval` (certified; its estimate is its
upper end, the connect-the-dots value) proven to contain the exact value
for the composed dominating pairs, under the accuracy premise of
:mod:`dpmech.pld.pairs` (see :mod:`dpmech.pld.discretization` for the discretisation,
:mod:`dpmech.pld.composition` for the floating-point error of the FFT, the aliasing of
its cyclic grid and the tails, :mod:`dpmech.pld.distribution` for the tilt).
The upper end is the one to report as a privacy guarantee.

The grid. Both ends' errors are second order in the step h and grow about linearly with
the number of compositions, so no fixed step serves every query. Without a step, a query
starts on a pilot grid of :data:`PILOT_POINTS` points scaled to the composed law and
refines the step until the interval is as narrow as asked (:func:`refine`); the answers
of successive grids are intersected, so the interval never widens.

Guards: the grid size is estimated from a coarse sketch of each law before anything
large is allocated; a composition whose grid would exceed ``max_points`` raises
:class:`GridTooLarge` (a ``ValueError``) naming the discretisation to coarsen, which it
also carries as ``suggested`` so that a caller may coarsen instead of refusing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from .. import validation as check
from ..interval import Interval, certified_enclosure
from . import discretization as grid
from . import composition
from .composition import GridTooLarge
from .distribution import TAIL, BucketedPair, GridMeasure
from .pairs import CoarseLaw, FloatArray, Pair, reverse

DEFAULT_DISCRETIZATION = 1e-4
# The pilot grid of a query without a step: small enough to cost little, fine enough to aim from.
PILOT_POINTS = 1 << 13
_REFINEMENTS = 6
MAX_POINTS = 1 << 23
_TAIL_SIGMAS = 14.0  # a tilted tail of 1e-40 is about 13.2 standard deviations out
_TILTS = np.concatenate([[0.0], np.geomspace(1e-3, 1e3, 121)])
_TILT_SLACK = 0.01
_TILT_NATS = 3.0

# One ledger entry: a mechanism's pair (or its pairs in the two directions) and how many times it is composed.
LedgerEntry = tuple[Pair | tuple[Pair, Pair], int]
# A ledger: its entries, or one entry on its own.
Ledger = Sequence[LedgerEntry] | LedgerEntry
# A lower end not yet composed (ComposedLoss.lower): the single-step pairs, their counts and the coarsening ratio.
_PendingLower = tuple[Sequence[BucketedPair], list[int], int]


def _directions(pairs: object) -> tuple[Pair, Pair]:
    if isinstance(pairs, Pair):
        return (pairs, reverse(pairs))
    if isinstance(pairs, tuple) and len(pairs) == 2:
        first, second = pairs
        if isinstance(first, Pair) and isinstance(second, Pair):
            return (first, second)
    raise ValueError(f"each ledger entry's pairs must be a Pair or a tuple of two Pairs (got {pairs!r})")


def _ledger(ledger: Ledger) -> list[tuple[tuple[Pair, Pair], int]]:
    if isinstance(ledger, tuple) and len(ledger) == 2 and not isinstance(ledger[0], tuple):
        ledger = [ledger]
    entries: list[object] = list(ledger)
    if not entries:
        raise ValueError("ledger must hold at least one (pairs, count) entry")
    result = []
    for entry in entries:
        if not (isinstance(entry, tuple) and len(entry) == 2):
            raise ValueError(f"each ledger entry must be a (pairs, count) tuple (got {entry!r})")
        result.append((_directions(entry[0]), check.integer_scalar("count", entry[1], 1)))
    return result


def _total_log_mgf(sketches: Sequence[CoarseLaw], counts: Sequence[int]) -> FloatArray:
    """log E[e^{λL}] of the composed sketches at every λ of :data:`_TILTS`."""
    # Started from zeros (0 + x is x exactly) so that the sum is an array whatever the ledger's length.
    return sum((count * grid.log_mgf(sketch, _TILTS) for sketch, count in zip(sketches, counts)), np.zeros(_TILTS.size))


def _chernoff_log_delta(total: FloatArray, epsilon: float) -> float:
    """min over λ of log E[e^{λ(L − ε)}] (``total`` from :func:`_total_log_mgf`): an estimate of log P(L > ε),
    used only to tilt."""
    objective = total - _TILTS * epsilon
    objective = objective[np.isfinite(objective)]
    return float(objective.min()) if objective.size else 0.0


def _choose_tilt(total: FloatArray, log_delta: float) -> float:
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
    steep = float(_TILTS[int(np.argmax(objective <= best + _TILT_SLACK))])
    # A milder tilt suffices where its Chernoff bound on log δ is within _TILT_NATS of the best one (the
    # bulk still carries about e^-_TILT_NATS of the tilted mass above ε), and a steep tilt of a heavy-tailed
    # loss (a subsampled mechanism's) widens the composed window. It stays at least min(steep, 1): the
    # round-off added to every entry weighs about noise / (λh) against δ, so λ must not approach 0.
    within = objective <= best + np.maximum(_TILT_SLACK, _TILT_NATS / np.maximum(_TILTS, 1e-300))
    mild = float(_TILTS[int(np.argmax(within & (_TILTS >= min(steep, 1.0))))])
    return min(mild, steep)


def _loss_span(sketches: Sequence[CoarseLaw], counts: Sequence[int], tilt: float) -> float:
    """The width in loss of the widest convolution's grid, the composed tilted window plus one factor's (its
    points at step h are about span / h + 3), kept as a span so that one below the doubles' resolution at 3
    (ε of 1e-206) is not lost."""
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
    return 2.0 * (2 * _TAIL_SIGMAS * math.sqrt(variance) + 2 * widest)


class _Plan:
    """What a ledger's grids share whatever their step: its directions, sketches, counts and tilts."""

    def __init__(self, ledger: Ledger, epsilon: float | None = None, delta: float | None = None) -> None:
        entries = _ledger(ledger)
        self.counts = [count for _, count in entries]
        self.directions = [[pair_directions[0] for pair_directions, _ in entries]]
        if not all(pair.symmetric for pair in self.directions[0]):
            self.directions.append([pair_directions[1] for pair_directions, _ in entries])
        self.sketches = [[grid.coarse_law(pair) for pair in pairs] for pairs in self.directions]
        totals = [_total_log_mgf(sketches, self.counts) for sketches in self.sketches]
        if epsilon is not None:
            # Tilt both directions for the δ the answer will be, the larger direction's Chernoff bound at ε:
            # a direction whose own δ(ε) is far smaller (a bounded loss just above ε) would otherwise get a
            # tilt so steep that its whole window collapses onto its top point and its tail to +∞.
            log_target = min(0.0, max(_chernoff_log_delta(total, epsilon) for total in totals))
        else:
            log_target = math.log(delta if delta is not None else 1e-5)
        self.tilts = [_choose_tilt(total, log_target) for total in totals]
        # Tilted mass left outside each event's own window: the upper measure sends it to +∞ (at most
        # k·e^{s − λl} times it in real mass), the lower one drops it; 1e-10·δ/k of it is negligible, and
        # a heavy-tailed tilted loss (a subsampled one's) reaches twice as far for 1e-40 as for 1e-20.
        self.single_tail = min(max(1e-10 * math.exp(log_target) / max(self.counts), TAIL), 1e-20)
        # Real P-mass a pair that bounds a truncated law (random allocation) may send to +∞ in each event:
        # 1e-4 of the target δ over all the ledger's events together (it moves ε by about 1e-4/|d log δ/dε|,
        # a tenth of the default width or less). At 1e-6 the truncation of a short epoch at σ = 0.5 lay at a loss
        # of 15.6, twice the one where δ is decided, and the lattice reaching it was too coarse to narrow the
        # interval below 1.6e-3 (2 of 4 steps, δ = 1e-5).
        self.truncation = 1e-4 * math.exp(log_target) / sum(self.counts)
        # Grid points per unit step of the widest direction: points(h) is about span / h.
        self.span = max(_loss_span(sketches, self.counts, tilt) for sketches, tilt in zip(self.sketches, self.tilts))

    def pilot_step(self) -> float:
        """A step whose composed grid has about :data:`PILOT_POINTS` points (the span itself where that
        quotient underflows, and 1 where every loss is the same point, which any step holds exactly)."""
        step = self.span / PILOT_POINTS
        if step > 0.0:
            return step
        return self.span if self.span > 0.0 else 1.0


class ComposedLoss:
    """The upper and lower grid measures of a ledger in both directions, for one tilt and step.

    Every entry's single-step measures are discretised on their own window, then the whole
    ledger is composed by one FFT (:mod:`.composition`): the cost does not grow with the counts.
    """

    def __init__(self, ledger: Ledger, discretization: float = DEFAULT_DISCRETIZATION, *, epsilon: float | None = None,
                 delta: float | None = None, max_points: int = MAX_POINTS, lower: bool = True,
                 plan: _Plan | None = None) -> None:
        self.step = float(check.positive("discretization", discretization))
        # Without the lower end (``lower=False``) every lower bound reported is the trivial 0.
        self.with_lower = check.boolean("lower", lower)
        max_points = check.integer_scalar("max_points", max_points, 16)
        plan = _Plan(ledger, epsilon, delta) if plan is None else plan
        counts = plan.counts
        ratio = composition.coarsening_ratio(counts)
        points = plan.span / (self.step * ratio) + 3
        if points > max_points:
            raise GridTooLarge(
                f"discretization {self.step:g} needs about {points:.3g} grid points (limit max_points = "
                f"{max_points}); use a discretization of at least {plan.span / max_points:.3g}",
                plan.span / max_points,
            )
        self.uppers: list[GridMeasure] = []
        self._lowers: list[BucketedPair | _PendingLower] = []
        for pairs, sketches, tilt in zip(plan.directions, plan.sketches, plan.tilts):
            uppers, lowers = [], []
            for pair, sketch in zip(pairs, sketches):
                low, high = grid.window(sketch, tilt, plan.single_tail)
                first = math.floor(low / self.step) - 1
                last = math.ceil(high / self.step) + 1
                if (last - first) * 2 > max_points:
                    raise GridTooLarge(
                        f"discretization {self.step:g} gives one event {last - first} grid points (limit "
                        f"max_points = {max_points}); use a coarser discretization",
                        self.step * (last - first) * 2 / max_points,
                    )
                single_upper, single_lower = grid.discretize(pair, self.step, tilt, first, last, plan.truncation)
                uppers.append(single_upper)
                lowers.append(single_lower)
            if counts == [1]:  # one event once: nothing to compose
                self.uppers.append(uppers[0])
                self._lowers.append(lowers[0])
                continue
            coarse_uppers, coarse_counts = composition.in_two_levels(uppers, counts, ratio, composition.compose_upper,
                                                                     composition.coarsen_upper)
            cumulant = composition.Cumulant(coarse_uppers, coarse_counts)
            first, size = composition.window(coarse_uppers, coarse_counts, cumulant)
            if size > max_points:
                suggested = self.step * size / max_points
                raise GridTooLarge(
                    f"discretization {self.step:g} needs {size} grid points (limit max_points = {max_points}); "
                    f"use a discretization of at least {suggested:.3g}",
                    suggested,
                )
            self.uppers.append(composition.compose(coarse_uppers, coarse_counts, first, size, cumulant))
            self._lowers.append((lowers, counts, ratio))

    def lower(self, index: int) -> BucketedPair:
        """The lower :class:`~.distribution.BucketedPair` of direction ``index``, composed when first asked for:
        a direction whose upper answer is below another's lower answer never needs its own."""
        lower = self._lowers[index]
        if isinstance(lower, tuple):
            lowers, counts, ratio = lower
            coarse_lowers, coarse_counts = composition.in_two_levels(lowers, counts, ratio, composition.compose_lower,
                                                                     composition.coarsen_lower)
            lower = self._lowers[index] = composition.compose_lower(coarse_lowers, coarse_counts)
        return lower

    def _ends(self, upper_answer: Callable[[GridMeasure], float],
              lower_answer: Callable[[BucketedPair], float]) -> tuple[float | None, float]:
        """(lower, upper) ends over the directions: the larger of each; a direction's lower is composed only
        when its upper end exceeds the largest lower end so far (its own lower end is below its upper)."""
        uppers = [upper_answer(up) for up in self.uppers]
        if not self.with_lower:
            return None, max(uppers)
        best = -math.inf
        for index in sorted(range(len(uppers)), key=lambda i: -uppers[i]):
            if uppers[index] <= best:
                break
            best = max(best, lower_answer(self.lower(index)))
        return best, max(uppers)

    def log_delta(self, epsilon: ArrayLike) -> Interval:
        """Interval of log δ(ε) (the larger direction), vectorised over ε >= 0."""
        values = check.non_negative("epsilon", epsilon)
        ends = [self._ends(lambda up: up.log_delta(e), lambda low: low.log_delta(e))
                for e in np.atleast_1d(values).ravel().tolist()]
        lower = np.array([-math.inf if low is None else low for low, _ in ends])
        upper = np.array([up for _, up in ends])
        shape = np.shape(values)
        return certified_enclosure(check.scalar_or_array(lower.reshape(shape)),
                                   check.scalar_or_array(upper.reshape(shape)))

    def delta(self, epsilon: ArrayLike) -> Interval:
        """Interval of δ(ε); a positive lower end that underflows is returned as the smallest subnormal."""
        logs = self.log_delta(epsilon)
        with np.errstate(under="ignore"):
            lower = np.exp(logs.lower)
            upper = np.exp(logs.upper)
        upper = np.where((upper == 0) & np.isfinite(logs.upper), 5e-324, upper)
        return certified_enclosure(check.scalar_or_array(np.minimum(lower, upper)),
                                   check.scalar_or_array(np.minimum(upper, 1.0)))

    def epsilon(self, delta: ArrayLike) -> Interval:
        """Interval of the smallest ε >= 0 with δ(ε) <= delta, vectorised over delta ∈ (0, 1)."""
        values = check.open_unit_interval("delta", delta)
        ends = [self._ends(lambda up: up.epsilon(t), lambda low: low.epsilon(t))
                for t in np.log(np.atleast_1d(values).ravel()).tolist()]
        lower = np.array([0.0 if low is None else max(low, 0.0) for low, _ in ends])
        upper = np.array([up for _, up in ends])
        shape = np.shape(values)
        return certified_enclosure(check.scalar_or_array(lower.reshape(shape)),
                                   check.scalar_or_array(upper.reshape(shape)))


def _intersection(first: Interval | None, second: Interval) -> Interval:
    """Both intervals certified, so their intersection is: refinement never widens the answer."""
    if first is None:
        return second
    return certified_enclosure(check.scalar_or_array(np.maximum(first.lower, second.lower)),
                               check.scalar_or_array(np.minimum(first.upper, second.upper)))


def epsilon_goal(answer: Interval) -> np.ndarray:
    """The default width of ε(δ): max(1e-4·ε, min(1e-3, 1e-2·ε)), ε the upper end (relative at both ends)."""
    upper = np.asarray(answer.upper, dtype=float)
    return np.maximum(1e-4 * upper, np.minimum(1e-3, 1e-2 * upper))


def log_delta_goal(answer: Interval) -> np.ndarray:
    """The default width of log δ(ε): 1e-3, δ to about 0.1 % however small it is."""
    return np.full(np.shape(answer.upper), 1e-3)


def delta_goal(answer: Interval) -> np.ndarray:
    """The default width of δ(ε): 1e-3 of its upper end."""
    return 1e-3 * np.asarray(answer.upper, dtype=float)


def refine(ledger: Ledger, query: Callable[[ComposedLoss, Any], Interval], target: float | FloatArray, width: float | None,
           discretization: float | None, max_points: int, tilt_at: dict[str, float],
           goal: Callable[[Interval], np.ndarray] = epsilon_goal) -> Interval:
    """``query(loss, target)``: at ``discretization`` when it is given without ``width``; otherwise on grids
    refined until every answer's upper − lower is at most ``width`` (or, without it, ``goal(answer)``).

    Without a step the first grid is a pilot of about :data:`PILOT_POINTS` points scaled to the composed
    law, so the step is relative to the loss asked about rather than absolute. Both ends' errors are
    second order in the step for continuous laws (the width quarters when the step halves): each next
    step aims by the square root, and the answers are intersected, so the width never grows. With
    ``width``, a step whose grid would exceed ``max_points`` raises a ValueError naming the limit
    before any work; without it the last answer is returned. ``tilt_at`` names the ε or δ
    (``{"epsilon": e}`` or ``{"delta": d}``) the grid is tilted towards.
    """
    if width is not None:
        width = check.positive("width", width)
    plan = _Plan(ledger, **tilt_at)
    if width is None and discretization is not None:
        return query(ComposedLoss(ledger, discretization, max_points=max_points, plan=plan), target)
    step = plan.pilot_step() if discretization is None else check.positive("discretization", discretization)
    best, excess = None, math.inf
    for _ in range(_REFINEMENTS):
        best = _intersection(best, query(ComposedLoss(ledger, step, max_points=max_points, plan=plan), target))
        achieved = np.asarray(best.upper, dtype=float) - np.asarray(best.lower, dtype=float)
        wanted = np.full(achieved.shape, width) if width is not None else goal(best)
        open_ = np.isfinite(achieved) & (achieved > wanted)
        if not np.any(open_):
            return best
        # A finer step shrinks the width (about fourfold for continuous laws, by the step's own factor, at
        # most 0.7, where atoms straddle cells); where it did not shrink by a tenth, the grid is not what
        # limits it (one tilt serving ε far from its own, a lower end lost below the doubles), and a finer
        # one would only cost more.
        previous, excess = excess, float(np.max(achieved[open_] / wanted[open_]))
        if excess > 0.9 * previous:
            message = (f"the interval stopped narrowing at discretization {step:.3g} (width {float(np.max(achieved)):.3g}): "
                       "the step is not what limits it")
            if width is None:
                return certified_enclosure(best.lower, best.upper, message)
            raise ValueError(f"width {width:g} was not reached: {message}; ask for a wider interval")
        factor = float(np.min(np.sqrt(wanted[open_] / achieved[open_])))
        finer = step * max(0.03, min(0.7, 0.75 * factor))
        smallest = plan.span / (composition.coarsening_ratio(plan.counts) * (max_points - 3))
        if finer < smallest:
            if width is None:
                return certified_enclosure(best.lower, best.upper,
                                           f"discretization coarsened to {step:.3g} (the default width needs about {finer:.3g}) "
                                f"to stay within max_points = {max_points} grid points (pass a larger max_points "
                                "for a narrower interval)")
            reachable = float(np.max(achieved)) * (smallest / step) ** 2
            raise ValueError(
                f"width {width:g} needs a discretization of about {finer:.3g}, whose grid exceeds max_points = "
                f"{max_points}; the narrowest width within it is about {reachable:.3g} (raise max_points or "
                "ask for a wider interval)"
            )
        step = finer
    if width is None:
        assert best is not None  # the loop above ran _REFINEMENTS >= 1 times
        return best
    raise ValueError(f"width {width:g} was not reached by discretization {step:g}; ask for a wider interval")


def delta(ledger: Ledger, epsilon: ArrayLike, discretization: float | None = None, *, width: float | None = None,
          max_points: int = MAX_POINTS) -> Interval:
    """Certified Interval of δ(ε) for the composed ledger, vectorised over ε.

    With ``width`` the step is refined until upper − lower <= width (for every ε); with neither it is
    refined until the width is 1e-3 of δ (:func:`delta_goal`).
    """
    return _refine_at_epsilon(ledger, lambda loss, e: loss.delta(e), epsilon, width, discretization, max_points,
                              delta_goal)


def log_delta(ledger: Ledger, epsilon: ArrayLike, discretization: float | None = None, *, width: float | None = None,
              max_points: int = MAX_POINTS) -> Interval:
    """Certified Interval of log δ(ε): carries a δ far below the smallest double.

    With ``width`` the step is refined until upper − lower <= width in log δ (a relative width in δ);
    with neither, until :func:`log_delta_goal`.
    """
    return _refine_at_epsilon(ledger, lambda loss, e: loss.log_delta(e), epsilon, width, discretization, max_points,
                              log_delta_goal)


def _refine_at_epsilon(ledger: Ledger, query: Callable[[ComposedLoss, Any], Interval], epsilon: ArrayLike,
                       width: float | None, discretization: float | None, max_points: int,
                       goal: Callable[[Interval], np.ndarray]) -> Interval:
    """:func:`refine` of a δ-side ``query`` at the checked ε >= 0, the grid tilted towards their median."""
    eps = check.non_negative("epsilon", epsilon)
    return refine(ledger, query, eps, width, discretization, max_points, {"epsilon": float(np.median(eps))}, goal)


def epsilon(ledger: Ledger, delta: ArrayLike, discretization: float | None = None, *, width: float | None = None,
            max_points: int = MAX_POINTS) -> Interval:
    """Certified Interval of ε(δ) for the composed ledger, vectorised over δ ∈ (0, 1).

    With neither ``discretization`` nor ``width`` the step is refined until the width is at most
    max(1e-4·ε, min(1e-3, 1e-2·ε)) (:func:`epsilon_goal`) or the grid reaches ``max_points``.
    """
    target = check.open_unit_interval("delta", delta)
    tilt_at = {"delta": float(np.exp(np.median(np.log(target))))}
    return refine(ledger, lambda loss, d: loss.epsilon(d), target, width, discretization, max_points, tilt_at,
                  epsilon_goal)
