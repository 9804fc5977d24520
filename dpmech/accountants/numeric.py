r"""dpmech's own numeric privacy-loss-distribution accountant, for every event, sampled or not.

Truth. Each event is replaced by its dominating pair, which its module in
:mod:`dpmech.events` states
(:meth:`~dpmech.events.base.PrivacyEvent.privacy_loss_pair`; an event without
one is refused by name), and the composition of those pairs is accounted by
:mod:`dpmech.pld`; the interval returned contains the tight profile δ(ε) (or
its inverse ε(δ)) of that composition, as for :mod:`.exact`. The pairs of
the events dpmech defines, for instance:

* Gaussian: (N(μ, 1), N(0, 1)) with μ = Δ/σ; all Gaussians of a ledger are
  first merged into one with μ = √(Σ kᵢμᵢ²) (Dong, Roth & Su 2019, Cor. 3.3);
* Laplace: (Lap(1, b), Lap(0, b)) with b = scale/Δ (Koskela et al. 2021);
* pure ε with K outcomes: K-ary randomized response; a generic ε-DP event:
  binary randomized response (Kairouz, Oh & Viswanath 2015, Thm. 2.1);
* generic (ε, δ): the four-point pair of Kairouz et al. (2015);
* no privacy loss: nothing;
* ``PoissonSampledEvent(event, q)``, add/remove neighbours:
  (qP + (1−q)Q, Q) for the removal and its reverse for the addition, (P, Q)
  being the inner event's pair (Zhu, Dong & Wang 2022, Thm. 11);
* ``SampledWithoutReplacementEvent(event, m, n)``, replace-one neighbours:
  the same mixture with γ = m/n, in both orders (Balle, Barthe & Gaboardi
  2018, Thm. 10; Zhu et al. 2022, Sec. 5);
* ``RandomAllocationEvent(GaussianEvent, t)``, add/remove neighbours, one epoch:
  Q = N(0, I_t) against P = (1/t) Σ_i N(μe_i, I_t) for the removal and its reverse
  (Feldman & Shenfeld 2025), bounded above and below by the lattice pairs of
  :mod:`dpmech.pld.allocation`; k of t = km + r steps as r such epochs of m + 1 steps and k − r of m
  (concurrent composition, Vadhan & Zhang 2023; the proof is in the event's module).

A sampled event's inner event may be one of the unsampled kinds above, or a
self-composition of Gaussians (one Gaussian with μ√k, run on the one
sample); its relation must be the sampling's own (add/remove for Poisson,
replace-one without replacement), since the amplification theorems take the
inner pair under that relation. Anything else (nested sampling, a sampled
self-composition of other events) is refused by name.

Every mechanism of the ledger is composed in the same direction, and δ(ε)
is the larger of the two directions (Zhu et al. 2022, Sec. 3). The ledger
has already restated every event under its own relation
(:meth:`dpmech.PrivacyLedger._convert`).

Certification: the interval's two ends are the engine's certified bounds
(connect-the-dots upper measure, post-processing lower measure, FFT
round-off and aliasing bounded; see :mod:`dpmech.pld.accountant` and
:mod:`dpmech.pld.composition`), so ``certified`` is True. The estimate is the
connect-the-dots value itself (the upper end: what dp_accounting's
pessimistic PLD reports), never a midpoint of the two ends. Options:

* ``discretization``: the loss grid step. By default the step is chosen from the query: a pilot
  grid scaled to the composed loss, then steps refined until the interval is at most
  max(1e-4·ε, min(1e-3, 1e-2·ε)) wide for ε(δ), 1e-3 in log δ for δ(ε)
  (:func:`dpmech.pld.accountant.epsilon_goal`, ``log_delta_goal``); a given step is used as is;
* ``width``: refine the step until upper − lower is at most this (in ε for ε(δ), in log δ for
  δ(ε)), or raise a ValueError naming ``max_points`` when the grid that needs would exceed it;
* ``max_points``: the guard on the grid size (default 2^23 points, about
  64 MB per array). When the grid a query needs would exceed it, the step
  is coarsened to one that fits, with a note, unless ``discretization`` was
  given, in which case a ValueError names the step that would fit.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import pld
from .. import validation as check
from ..events.base import EnginePair, PrivacyEvent, UnboundedPrivacyLoss, UnsupportedEvent
from ..interval import Interval
from ..pld import accountant as engine
from . import EventCounts, GaussianCounts, known_events
from .exact import _composed_mu

_MAX_COARSENINGS = 4


def _convert(pairs: EventCounts) -> tuple[GaussianCounts, Counter[PrivacyEvent], dict[PrivacyEvent, EnginePair],
                                         set[str], bool]:
    """(Gaussian (μ, count) pairs, {event: count} of the others, {event: its pair}, refused names, whether some
    loss is unbounded).

    Each distinct event is asked once for its pair (:meth:`~dpmech.events.base.PrivacyEvent.privacy_loss_pair`);
    Gaussians are kept apart to be merged into one. Nothing is composed here.
    """
    gaussians: GaussianCounts = []
    counts: Counter[PrivacyEvent] = Counter()
    entries: dict[PrivacyEvent, EnginePair] = {}
    refused: set[str] = set()
    unbounded = False
    for event, count in known_events(pairs, refused):
        mu = event.gaussian_mu()
        if mu is not None:
            gaussians.append((mu, count))
            continue
        if event not in entries:
            try:
                entries[event] = event.privacy_loss_pair()
            except UnsupportedEvent:
                refused.add(event.describe())
                continue
            except UnboundedPrivacyLoss:
                unbounded = True
                entries[event] = None
        counts[event] += count
    return gaussians, counts, entries, refused, unbounded


def supports(pairs: EventCounts) -> bool:
    """Whether every event has a dominating pair this accountant composes (a dry run of :func:`engine_ledger`'s
    conversion)."""
    return not _convert(pairs)[3]


def engine_ledger(pairs: EventCounts) -> list[tuple[Any, int]]:
    """The ledger's (event, count) pairs as :mod:`dpmech.pld` entries ``[(pairs, count), ...]``.

    Equal events are merged into one entry with their counts added, and all Gaussians into
    one Gaussian. Raises ValueError for an unsupported event and
    :class:`~dpmech.events.UnboundedPrivacyLoss` for an event with unbounded privacy loss.
    """
    gaussians, counts, pairs_of, refused, unbounded = _convert(pairs)
    if refused:
        raise ValueError(
            f"method 'numeric' cannot account {', '.join(sorted(refused))}; it takes the events with a "
            "dominating pair: Gaussian, Laplace, pure epsilon, (epsilon, delta) and no-loss events, Poisson "
            "sampling (add-remove-one) or sampling without replacement (replace-one) of one of them (or of "
            "repeated Gaussians) stated under the sampling's relation, and random allocation of a Gaussian step"
        )
    if unbounded:
        raise UnboundedPrivacyLoss
    entries: list[tuple[Any, int]] = []
    if gaussians:
        mu = _composed_mu(gaussians)
        if not math.isfinite(mu):
            raise UnboundedPrivacyLoss
        entries.append((pld.GaussianPair(mu), 1))
    for event, count in counts.items():
        pair = pairs_of[event]
        if pair is not None:
            entries.append((pair, count))
    return entries


def _options(
    discretization: float | None, width: float | None, max_points: int
) -> tuple[float | None, bool, float | None, int]:
    given = discretization is not None
    step = None if discretization is None else check.positive("discretization", discretization)
    if width is not None:
        width = check.positive("width", width)
    max_points = check.integer_scalar("max_points", max_points, 16)
    return step, given, width, max_points


def _answer(
    entries: list[tuple[Any, int]],
    query: Callable[[Any, float], Any],
    target: float,
    tilt_at: dict[str, float],
    discretization: float | None,
    width: float | None,
    max_points: int,
    goal: Any,
) -> tuple[Any, str]:
    """The engine's certified answer, coarsening the step (with a note) when the grid would be too large."""
    step, given, width, max_points = _options(discretization, width, max_points)
    note = ""
    for _ in range(_MAX_COARSENINGS):
        try:
            answer = engine.refine(entries, query, target, width, step, max_points, tilt_at, goal)
            return answer, "; ".join(filter(None, [note, answer.note]))
        except pld.GridTooLarge as error:
            if given or width is not None:
                raise ValueError(f"max_points: {error}") from None
            step = error.suggested * 1.25
            note = (f"discretization coarsened to {step:.3g} to stay within max_points = {max_points} grid points"
                    " (pass a larger max_points for a narrower interval)")
    raise ValueError(f"max_points: no discretization up to {step:.3g} fits in {max_points} grid points")


def epsilon(pairs: EventCounts, delta: float, discretization: float | None = None, width: float | None = None,
            max_points: int = engine.MAX_POINTS) -> Interval:
    """Certified interval of the smallest ε with δ(ε) <= ``delta`` for the composed dominating pairs."""
    delta = check.open_unit_interval("delta", delta)
    try:
        entries = engine_ledger(pairs)
    except UnboundedPrivacyLoss:
        return Interval(math.inf, math.inf, math.inf, True, "a Gaussian or Laplace scale near 0: no guarantee")
    if not entries:
        return Interval(0.0, 0.0, 0.0, True)
    answer, note = _answer(entries, lambda loss, d: loss.epsilon(d), delta, {"delta": delta},
                           discretization, width, max_points, engine.epsilon_goal)
    lower, upper = float(answer.lower), float(answer.upper)
    if math.isinf(upper):
        reason = ("the events' probability of unbounded privacy loss is at least delta" if math.isinf(lower) else
                  "the upper measure's mass at +inf (unbounded loss and cut tails) is at least delta")
        note = "; ".join(filter(None, [note, reason]))
    return Interval(lower, upper, upper, True, note)


def log_delta_interval(pairs: EventCounts, epsilon: float, discretization: float | None = None,
                       width: float | None = None, max_points: int = engine.MAX_POINTS) -> Interval:
    """Certified interval of log δ(ε), as an :class:`Interval` of logarithms (estimate: the connect-the-dots value)."""
    epsilon = check.non_negative("epsilon", epsilon)
    try:
        entries = engine_ledger(pairs)
    except UnboundedPrivacyLoss:
        return Interval(0.0, 0.0, 0.0, True, "a Gaussian or Laplace scale near 0: no guarantee")
    if not entries:
        return Interval(-math.inf, -math.inf, -math.inf, True)
    answer, note = _answer(entries, lambda loss, e: loss.log_delta(e), epsilon, {"epsilon": epsilon},
                           discretization, width, max_points, engine.log_delta_goal)
    lower, upper = min(float(answer.lower), 0.0), min(float(answer.upper), 0.0)
    return Interval(lower, upper, upper, True, note)


def delta(pairs: EventCounts, epsilon: float, discretization: float | None = None, width: float | None = None,
          max_points: int = engine.MAX_POINTS) -> Interval:
    """Certified interval of δ(ε); the upper end is rounded up and never 0 for a positive δ."""
    logs = log_delta_interval(pairs, epsilon, discretization, width, max_points)
    with np.errstate(under="ignore"):
        upper = min(math.exp(logs.upper), 1.0) if math.isfinite(logs.upper) else 0.0
    if math.isfinite(logs.upper):
        upper = min(max(math.nextafter(upper, math.inf), 5e-324), 1.0)
    lower = min(math.exp(logs.lower), upper)
    estimate = min(max(math.exp(logs.estimate), lower), upper)
    return Interval(lower, estimate, upper, True, logs.note)
