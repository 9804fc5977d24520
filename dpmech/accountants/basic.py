"""Basic composition: ε and δ add up (Dwork et al. 2006; Dwork & Roth 2014, Thm. 3.16).

This is how FedAUXfdp reports its total (ε_scores + ε_classes). Each event
states its own (ε_i, δ_i), or its curve δ_i(ε_i), in its module
(:meth:`~dpmech.events.base.PrivacyEvent.basic_cost`):

* pure-ε and (ε, δ) events bring their own, a Laplace release Δ/b;
* a subsampled pure-ε, (ε, δ) or Laplace event is amplified to
  (log(1 + q(e^ε − 1)), qδ) with q the sampling probability (Poisson, under
  add/remove: Li, Qardaji & Su 2012) or the fraction m/n (without
  replacement, under replace-one: Balle, Barthe & Gaboardi 2018, Thm. 9);
* an epoch of random allocation costs its inner Gaussian release once (the epoch is a
  post-processing of that release: see :mod:`dpmech.events.random_allocation`);
* Gaussian releases have a whole curve δ_i(ε_i), so the budget left after the
  fixed events is split evenly across the Gaussian releases (each of the
  ``count`` repetitions is one release) and each is evaluated exactly.

The result is a valid upper bound, usually far above the tight ones, and the
interval is [0, bound].
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

from scipy import special

from ..events.base import CostCurve, FixedCost, UnsupportedEvent
from ..interval import Interval
from . import EventCounts, known_events


def _sum_up(terms: Iterable[Fraction]) -> float:
    """The smallest double >= the exact sum of ``terms`` (Fractions: one per ledger entry, not per datum)."""
    exact = sum(terms, Fraction(0))
    value = float(exact)
    return value if Fraction(value) >= exact else math.nextafter(value, math.inf)


def _costs(pairs: EventCounts) -> tuple[list[tuple[FixedCost, int]], list[tuple[CostCurve, int]], set[str]]:
    """(fixed (ε, δ) costs with counts, cost curves with counts, refused names): each event asked for its
    :meth:`~dpmech.events.base.PrivacyEvent.basic_cost`."""
    fixed: list[tuple[FixedCost, int]] = []
    curves: list[tuple[CostCurve, int]] = []
    refused: set[str] = set()
    for event, count in known_events(pairs, refused):
        try:
            cost = event.basic_cost()
        except UnsupportedEvent:
            refused.add(event.describe())
            continue
        if isinstance(cost, FixedCost):
            fixed.append((cost, count))
        else:
            curves.append((cost, count))
    return fixed, curves, refused


def supports(pairs: EventCounts) -> bool:
    """Whether every event has a basic cost (a dry run of the conversion :func:`epsilon` and :func:`delta` make)."""
    return not _costs(pairs)[2]


def _split(pairs: EventCounts) -> tuple[list[tuple[CostCurve, int]], float, float, int]:
    fixed, curves, refused = _costs(pairs)
    if refused:
        # Summing only the known types would silently drop a release's cost.
        raise ValueError(f"method 'basic' cannot account {', '.join(sorted(refused))}")
    fixed_epsilon = _sum_up(count * Fraction(cost.epsilon) for cost, count in fixed)
    fixed_delta = _sum_up(count * Fraction(cost.delta) for cost, count in fixed)
    releases = sum(count for _, count in curves)
    return curves, fixed_epsilon, fixed_delta, releases


def epsilon(pairs: EventCounts, delta: float) -> Interval:
    curves, fixed_epsilon, fixed_delta, releases = _split(pairs)
    if not curves:
        total = fixed_epsilon if fixed_delta <= delta else math.inf
        return Interval(0.0, total, total, True)
    remaining = delta - fixed_delta
    if remaining <= 0.0:
        return Interval(0.0, math.inf, math.inf, True, "the fixed events alone spend more than delta")
    # Rounded down twice so that the shares never add up to more than the budget left.
    share = math.nextafter(math.nextafter(remaining, 0.0) / releases, 0.0)
    total = fixed_epsilon + math.fsum(count * curve.epsilon(share) for curve, count in curves)
    total = total * (1.0 + 1e-15)
    return Interval(0.0, total, total, True, f"delta split evenly: {share:.3g} per Gaussian release")


def delta(pairs: EventCounts, epsilon: float) -> Interval:
    curves, fixed_epsilon, fixed_delta, releases = _split(pairs)
    remaining = epsilon - fixed_epsilon
    if remaining < 0.0:
        return Interval(0.0, 1.0, 1.0, True, "the fixed events alone spend more than epsilon")
    if not curves:
        total = min(fixed_delta, 1.0)
        return Interval(0.0, total, total, True)
    # Rounded down twice so that the shares never add up to more than the budget left.
    share = math.nextafter(math.nextafter(remaining, 0.0) / releases, 0.0)
    # In log space, so that a δ_i below the smallest double is not lost: Relative 1e-11 covers the
    # evaluation error of each δ_i (see dpmech._newton); a positive total never comes back as 0.
    logs = [math.log(count) + curve.log_delta(share) for curve, count in curves]
    if fixed_delta:
        logs.append(math.log(fixed_delta))
    log_total = float(special.logsumexp(logs)) + 1e-11
    total = math.exp(log_total)
    if total < 2.2250738585072014e-308:  # subnormal: exp may have dropped bits
        total = math.nextafter(total, math.inf)
    total = min(total, 1.0)
    return Interval(0.0, total, total, True, f"epsilon split evenly: {share:.3g} per Gaussian release")
