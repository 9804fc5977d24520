"""Basic composition: ε and δ add up (Dwork et al. 2006; Dwork & Roth 2014, Thm. 3.16).

This is how FedAUXfdp reports its total (ε_scores + ε_classes). Each event
needs its own (ε_i, δ_i):

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
from fractions import Fraction

from scipy import special

from ..events import (
    ApproximateDpEvent,
    GaussianEvent,
    LaplaceEvent,
    NoPrivacyLossEvent,
    PoissonSampledEvent,
    PureEpsilonEvent,
    RandomAllocationEvent,
    SampledWithoutReplacementEvent,
)
from ..gaussian import gaussian_epsilon, gaussian_log_delta
from . import Interval


def _fixed_cost(event):
    """(ε, δ) of an event with a fixed cost, or None; amplified for a sampled pure, (ε, δ) or Laplace event."""
    if isinstance(event, (PureEpsilonEvent, LaplaceEvent)):
        return event.epsilon, 0.0
    if isinstance(event, ApproximateDpEvent):
        return event.epsilon, event.delta
    if isinstance(event, (PoissonSampledEvent, SampledWithoutReplacementEvent)):
        inner = _fixed_cost(event.event)
        if inner is None:
            return None
        rate = event.sampling_probability if isinstance(event, PoissonSampledEvent) else event.sampling_fraction
        epsilon = math.nextafter(math.log1p(rate * math.expm1(inner[0])), math.inf)
        delta = math.nextafter(rate * inner[1], math.inf) if inner[1] else 0.0
        return epsilon, delta
    return None


def _sum_up(terms) -> float:
    """The smallest double >= the exact sum of ``terms`` (Fractions: one per ledger entry, not per datum)."""
    exact = sum(terms, Fraction(0))
    value = float(exact)
    return value if Fraction(value) >= exact else math.nextafter(value, math.inf)


def _as_release(pairs):
    """The pairs with each epoch of random allocation replaced by its inner release (its basic cost)."""
    return [(event.event if isinstance(event, RandomAllocationEvent) else event, count) for event, count in pairs]


def supports(pairs) -> bool:
    pairs = _as_release(pairs)
    return all(isinstance(event, (GaussianEvent, NoPrivacyLossEvent)) or _fixed_cost(event) is not None
               for event, _ in pairs)


def _split(pairs):
    pairs = _as_release(pairs)
    unknown = sorted({type(event).__name__ for event, _ in pairs
                      if not isinstance(event, (GaussianEvent, NoPrivacyLossEvent)) and _fixed_cost(event) is None})
    if unknown:
        # Summing only the known types would silently drop a release's cost.
        raise ValueError(f"method 'basic' cannot account {', '.join(unknown)}")
    gaussians = [(event, count) for event, count in pairs if isinstance(event, GaussianEvent)]
    costs = [(_fixed_cost(event), count) for event, count in pairs
             if not isinstance(event, (GaussianEvent, NoPrivacyLossEvent))]
    fixed_epsilon = _sum_up(count * Fraction(cost[0]) for cost, count in costs)
    fixed_delta = _sum_up(count * Fraction(cost[1]) for cost, count in costs)
    releases = sum(count for _, count in gaussians)
    return gaussians, fixed_epsilon, fixed_delta, releases


def epsilon(pairs, delta: float) -> Interval:
    gaussians, fixed_epsilon, fixed_delta, releases = _split(pairs)
    if not gaussians:
        total = fixed_epsilon if fixed_delta <= delta else math.inf
        return Interval(0.0, total, total, True)
    remaining = delta - fixed_delta
    if remaining <= 0.0:
        return Interval(0.0, math.inf, math.inf, True, "the fixed events alone spend more than delta")
    # Rounded down twice so that the shares never add up to more than the budget left.
    share = math.nextafter(math.nextafter(remaining, 0.0) / releases, 0.0)
    total = fixed_epsilon + math.fsum(
        count * gaussian_epsilon(share, event.sigma, event.sensitivity) for event, count in gaussians
    )
    total = total * (1.0 + 1e-15)
    return Interval(0.0, total, total, True, f"delta split evenly: {share:.3g} per Gaussian release")


def delta(pairs, epsilon: float) -> Interval:
    gaussians, fixed_epsilon, fixed_delta, releases = _split(pairs)
    remaining = epsilon - fixed_epsilon
    if remaining < 0.0:
        return Interval(0.0, 1.0, 1.0, True, "the fixed events alone spend more than epsilon")
    if not gaussians:
        total = min(fixed_delta, 1.0)
        return Interval(0.0, total, total, True)
    # Rounded down twice so that the shares never add up to more than the budget left.
    share = math.nextafter(math.nextafter(remaining, 0.0) / releases, 0.0)
    # In log space, so that a δ_i below the smallest double is not lost: Relative 1e-11 covers the
    # evaluation error of each δ_i (see dpmech._newton); a positive total never comes back as 0.
    logs = [math.log(count) + gaussian_log_delta(share, event.sigma, event.sensitivity) for event, count in gaussians]
    if fixed_delta:
        logs.append(math.log(fixed_delta))
    log_total = float(special.logsumexp(logs)) + 1e-11
    total = math.exp(log_total)
    if total < 2.2250738585072014e-308:  # subnormal: exp may have dropped bits
        total = math.nextafter(total, math.inf)
    total = min(total, 1.0)
    return Interval(0.0, total, total, True, f"epsilon split evenly: {share:.3g} per Gaussian release")
