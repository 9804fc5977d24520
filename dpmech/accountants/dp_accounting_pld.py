"""Composition through dp_accounting's privacy loss distributions (Koskela et al. 2020; Doroshenko et al. 2022).

A cross-check of :mod:`.exact`. Each event contributes the PLD of its dominating pair:

* Gaussians are merged first (exactly, μ = √(Σ kμᵢ²)) into one Gaussian PLD;
* K-ary randomized response: ``from_randomized_response`` with noise parameter
  K/(e^ε+K−1), the probability of answering uniformly at random;
* generic pure ε: binary randomized response, the worst ε-DP pair;
* generic (ε, δ): the four-point dominating pair (``from_privacy_parameters``);
* Laplace: ``from_laplace_mechanism`` with parameter b/Δ;
* a Poisson-sampled Gaussian or Laplace event (add/remove-one only):
  dp_accounting's subsampled PLD (``sampling_prob``), which holds both
  directions of the asymmetric pair;
* an event with no privacy loss: nothing.

Upper end: dp_accounting's pessimistic PLDs, constructed to upper-bound δ(ε)
for any discretisation; their double-precision evaluation is not bounded by
dp_accounting (Gaussian σ = 0.1, δ = 1e-3 came out at 80.03252609319975,
below the exact 80.03252609421008), so the upper end is raised by a relative
:data:`UPPER_MARGIN`, far above the relative 1e-11 errors seen.

Lower end: an estimate, never certified. It uses optimistic PLDs of the
Gaussian and K-ary randomized-response events only (a generic ε or (ε, δ)
event may be a mechanism that reveals nothing, and the outputs of a
sub-composition are a post-processing of the whole); dp_accounting does not
prove its optimistic δ a lower bound (its tail truncation gave 1463.2776 for
Gaussian σ = 0.02 plus one RR, above the exact 1462.3181, and δ below about
1e-15 is floored).

A Gaussian with large μ has a wide privacy-loss support: 1000 composed unit
Gaussians take about a minute at the default discretisation. Use ``exact``
there; ``auto`` does.
"""

from __future__ import annotations

import functools
import math

from dp_accounting.pld import common
from dp_accounting.pld import privacy_loss_distribution as pld_library

from ..events import (
    ApproximateDpEvent,
    GaussianEvent,
    LaplaceEvent,
    NoPrivacyLossEvent,
    PoissonSampledEvent,
    PureEpsilonEvent,
)
from . import Interval
from .exact import composed_mu

DEFAULT_DISCRETIZATION = 1e-4
UPPER_MARGIN = 1e-8
SUPPORTED = (GaussianEvent, LaplaceEvent, PureEpsilonEvent, ApproximateDpEvent, NoPrivacyLossEvent)
_NOTE = "lower end: dp_accounting's optimistic estimate (not proven)"


def _supported(event) -> bool:
    if isinstance(event, PoissonSampledEvent):
        return isinstance(event.event, (GaussianEvent, LaplaceEvent))
    return isinstance(event, SUPPORTED)


def supports(pairs) -> bool:
    return all(_supported(event) for event, _ in pairs)


def _event_pld(event, count, pessimistic, discretization):
    sampling = 1.0
    if isinstance(event, PoissonSampledEvent):
        sampling, event = event.sampling_probability, event.event
    if isinstance(event, GaussianEvent):
        pld = pld_library.from_gaussian_mechanism(
            standard_deviation=event.sigma / event.sensitivity,
            pessimistic_estimate=pessimistic,
            value_discretization_interval=discretization,
            sampling_prob=sampling,
            use_connect_dots=pessimistic,
        )
    elif isinstance(event, LaplaceEvent):
        pld = pld_library.from_laplace_mechanism(
            parameter=event.scale / event.sensitivity,
            pessimistic_estimate=pessimistic,
            value_discretization_interval=discretization,
            sampling_prob=sampling,
            use_connect_dots=pessimistic,
        )
    elif isinstance(event, PureEpsilonEvent):
        outcomes = event.num_outcomes or 2
        pld = pld_library.from_randomized_response(
            noise_parameter=outcomes / (math.exp(event.epsilon) + outcomes - 1),
            num_buckets=outcomes,
            pessimistic_estimate=pessimistic,
            value_discretization_interval=discretization,
        )
    else:
        pld = pld_library.from_privacy_parameters(
            common.DifferentialPrivacyParameters(event.epsilon, event.delta),
            value_discretization_interval=discretization,
        )
    return pld.self_compose(count) if count > 1 else pld


def _composed_pld(pairs, pessimistic, discretization):
    gaussians = [(event, count) for event, count in pairs if isinstance(event, GaussianEvent)]
    others = [(event, count) for event, count in pairs
              if not isinstance(event, (GaussianEvent, NoPrivacyLossEvent))]
    plds = [_event_pld(event, count, pessimistic, discretization) for event, count in others]
    if gaussians:
        plds.append(
            pld_library.from_gaussian_mechanism(
                standard_deviation=1.0 / composed_mu(gaussians),
                pessimistic_estimate=pessimistic,
                value_discretization_interval=discretization,
                use_connect_dots=pessimistic,
            )
        )
    if not plds:
        return None
    return functools.reduce(lambda left, right: left.compose(right), plds)


def _interval(pairs, query, value, discretization, cap):
    unknown = sorted({type(event).__name__ for event, _ in pairs if not _supported(event)})
    if unknown:
        raise ValueError(
            f"method 'pld' cannot account {', '.join(unknown)} (it takes Poisson sampling of Gaussian or "
            "Laplace events only)"
        )
    pessimistic = _composed_pld(pairs, True, discretization)
    if pessimistic is None:
        return Interval(0.0, 0.0, 0.0, True)
    estimate = getattr(pessimistic, query)(value)
    upper = min(estimate * (1.0 + UPPER_MARGIN), cap)
    exact_kinds = [
        (event, count)
        for event, count in pairs
        if isinstance(event, (GaussianEvent, LaplaceEvent, PoissonSampledEvent))
        or (isinstance(event, PureEpsilonEvent) and event.num_outcomes)
    ]
    optimistic = _composed_pld(exact_kinds, False, discretization)
    lower = getattr(optimistic, query)(value) if optimistic is not None else 0.0
    return Interval(min(lower, upper), min(estimate, upper), upper, False, _NOTE)


def epsilon(pairs, delta: float, discretization: float = DEFAULT_DISCRETIZATION) -> Interval:
    return _interval(pairs, "get_epsilon_for_delta", delta, discretization, math.inf)


def delta(pairs, epsilon: float, discretization: float = DEFAULT_DISCRETIZATION) -> Interval:
    return _interval(pairs, "get_delta_for_epsilon", epsilon, discretization, 1.0)
