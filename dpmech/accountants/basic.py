"""Basic composition: ε and δ add up (Dwork et al. 2006; Dwork & Roth 2014, Thm. 3.16).

This is how FedAUXfdp reports its total (ε_scores + ε_classes). Each event
needs its own (ε_i, δ_i):

* pure-ε and (ε, δ) events bring their own, a Laplace release Δ/b;
* a subsampled pure-ε, (ε, δ) or Laplace event is amplified to
  (log(1 + q(e^ε − 1)), qδ) with q the sampling probability (Poisson, under
  add/remove: Li, Qardaji & Su 2012) or the fraction m/n (without
  replacement, under replace-one: Balle, Barthe & Gaboardi 2018, Thm. 9);
* Gaussian releases have a whole curve δ_i(ε_i), so the budget left after the
  fixed events is split evenly across the Gaussian releases (each of the
  ``count`` repetitions is one release) and each is evaluated exactly.

The result is a valid upper bound, usually far above the tight ones, and the
interval is [0, bound].
"""

from __future__ import annotations

import math

from ..events import (
    ApproximateDpEvent,
    GaussianEvent,
    LaplaceEvent,
    NoPrivacyLossEvent,
    PoissonSampledEvent,
    PureEpsilonEvent,
    SampledWithoutReplacementEvent,
)
from ..gaussian import gaussian_delta, gaussian_epsilon
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


def supports(pairs) -> bool:
    return all(isinstance(event, (GaussianEvent, NoPrivacyLossEvent)) or _fixed_cost(event) is not None
               for event, _ in pairs)


def _split(pairs):
    unknown = sorted({type(event).__name__ for event, _ in pairs
                      if not isinstance(event, (GaussianEvent, NoPrivacyLossEvent)) and _fixed_cost(event) is None})
    if unknown:
        # Summing only the known types would silently drop a release's cost.
        raise ValueError(f"method 'basic' cannot account {', '.join(unknown)}")
    gaussians = [(event, count) for event, count in pairs if isinstance(event, GaussianEvent)]
    costs = [(_fixed_cost(event), count) for event, count in pairs
             if not isinstance(event, (GaussianEvent, NoPrivacyLossEvent))]
    fixed_epsilon = math.fsum(count * cost[0] for cost, count in costs)
    fixed_delta = math.fsum(count * cost[1] for cost, count in costs)
    # fsum rounds to nearest; one ulp up keeps the sums on the safe side.
    fixed_epsilon = math.nextafter(fixed_epsilon, math.inf) if fixed_epsilon else 0.0
    fixed_delta = math.nextafter(fixed_delta, math.inf) if fixed_delta else 0.0
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
    total = fixed_delta + math.fsum(
        count * gaussian_delta(share, event.sigma, event.sensitivity) for event, count in gaussians
    )
    # Relative 1e-11 covers the evaluation error of each δ_i (see dpmech._newton).
    total = min(total * (1.0 + 1e-11), 1.0)
    return Interval(0.0, total, total, True, f"epsilon split evenly: {share:.3g} per Gaussian release")
