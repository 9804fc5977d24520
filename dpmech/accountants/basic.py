"""Basic composition: ε and δ add up (Dwork et al. 2006; Dwork & Roth 2014, Thm. 3.16).

This is how FedAUXfdp reports its total (ε_scores + ε_classes). Each event
needs its own (ε_i, δ_i):

* pure-ε and (ε, δ) events bring their own;
* Gaussian releases have a whole curve δ_i(ε_i), so the budget left after the
  fixed events is split evenly across the Gaussian releases (each of the
  ``count`` repetitions is one release) and each is evaluated exactly.

The result is a valid upper bound, usually far above the tight ones, and the
interval is [0, bound].
"""

from __future__ import annotations

import math

from ..events import ApproximateDpEvent, GaussianEvent, PureEpsilonEvent
from ..gaussian import gaussian_delta, gaussian_epsilon
from . import Interval


def _split(pairs):
    gaussians = [(event, count) for event, count in pairs if isinstance(event, GaussianEvent)]
    fixed_epsilon = math.fsum(
        count * event.epsilon for event, count in pairs if isinstance(event, (PureEpsilonEvent, ApproximateDpEvent))
    )
    fixed_delta = math.fsum(count * event.delta for event, count in pairs if isinstance(event, ApproximateDpEvent))
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
    share = remaining / releases
    total = fixed_epsilon + math.fsum(
        count * gaussian_epsilon(share, event.sigma, event.sensitivity) for event, count in gaussians
    )
    return Interval(0.0, total, total, True, f"delta split evenly: {share:.3g} per Gaussian release")


def delta(pairs, epsilon: float) -> Interval:
    gaussians, fixed_epsilon, fixed_delta, releases = _split(pairs)
    remaining = epsilon - fixed_epsilon
    if remaining < 0.0:
        return Interval(0.0, 1.0, 1.0, True, "the fixed events alone spend more than epsilon")
    if not gaussians:
        total = min(fixed_delta, 1.0)
        return Interval(0.0, total, total, True)
    share = remaining / releases
    total = fixed_delta + math.fsum(
        count * gaussian_delta(share, event.sigma, event.sensitivity) for event, count in gaussians
    )
    # Relative 1e-11 covers the evaluation error of each δ_i (see dpmech._newton).
    total = min(total * (1.0 + 1e-11), 1.0)
    return Interval(0.0, total, total, True, f"epsilon split evenly: {share:.3g} per Gaussian release")
