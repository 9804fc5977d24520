r"""Exact composition of Gaussian releases.

A Gaussian release with sensitivity Δ and noise σ is μ-GDP with μ = Δ/σ, and
μ-GDP is exactly the privacy profile of that Gaussian (Dong, Roth & Su 2019,
Def. 2.7). Adaptive composition of μ_i-GDP mechanisms is exactly
:math:`\sqrt{\sum_i \mu_i^2}`-GDP (ibid., Cor. 3.3), so any ledger of Gaussian
events has the tight profile of one Gaussian with sensitivity
:math:`\sqrt{\sum_i k_i\,(\Delta_i/\sigma_i)^2}` and σ = 1. The neighbouring
relation is the one every Δ_i was computed under.
"""

from __future__ import annotations

import math

from .._newton import LOG_DELTA_MARGIN
from ..events import GaussianEvent
from ..gaussian import gaussian_epsilon, gaussian_log_delta
from . import Interval


def applies(pairs) -> bool:
    """Whether every event is Gaussian, so that the exact method applies."""
    return all(isinstance(event, GaussianEvent) for event, _ in pairs)


def composed_mu(pairs) -> float:
    """μ of the composition: √(Σ count·μ_i²)."""
    if not applies(pairs):
        kinds = sorted({type(event).__name__ for event, _ in pairs if not isinstance(event, GaussianEvent)})
        raise ValueError(
            f"method must be 'pld', 'prv', 'basic' or 'auto' for a ledger holding {', '.join(kinds)}; "
            "'exact' applies only to Gaussian events"
        )
    return math.sqrt(math.fsum(count * event.mu**2 for event, count in pairs))


def epsilon(pairs, delta: float) -> Interval:
    """Smallest ε with δ(ε) <= delta; the solver stops on the private side (see :mod:`dpmech._newton`)."""
    mu = composed_mu(pairs)
    if mu == 0.0:
        return Interval(0.0, 0.0, 0.0, True)
    value = gaussian_epsilon(delta, 1.0, mu)
    return Interval(value, value, value, True)


def delta(pairs, epsilon: float) -> Interval:
    """δ(ε), with the upper end raised by the evaluation's error margin (relative 1e-11)."""
    mu = composed_mu(pairs)
    if mu == 0.0:
        return Interval(0.0, 0.0, 0.0, True)
    log_delta = gaussian_log_delta(epsilon, 1.0, mu)
    return Interval(math.exp(log_delta - LOG_DELTA_MARGIN), math.exp(log_delta), math.exp(log_delta + LOG_DELTA_MARGIN), True)
