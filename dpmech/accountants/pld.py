"""Composition through dp_accounting's privacy loss distributions (Koskela et al. 2020; Doroshenko et al. 2022).

Each event contributes the PLD of its dominating pair:

* Gaussians are merged first (exactly, see :mod:`.exact`) into one Gaussian PLD;
* K-ary randomized response: ``from_randomized_response`` with noise parameter
  K/(e^ε+K−1), the probability of answering uniformly at random;
* generic pure ε: binary randomized response, the worst ε-DP pair;
* generic (ε, δ): the four-point dominating pair (``from_privacy_parameters``).

The upper end uses pessimistic PLDs, which dp_accounting constructs to
upper-bound δ(ε) for any discretisation. The lower end uses optimistic PLDs
of the Gaussian and randomized-response events and leaves the generic (ε, δ)
events out: the released outputs of a sub-composition are a post-processing
of the whole, so its profile bounds the composition's from below, and a
generic (ε, δ) event may be a mechanism that reveals nothing.

A Gaussian with large μ has a wide privacy-loss support: 1000 composed unit
Gaussians take about a minute at the default discretisation (dp_accounting's
own accountant, about 20 s for the upper end alone). Use ``exact`` there;
``auto`` does.
"""

from __future__ import annotations

import functools
import math

from dp_accounting.pld import common
from dp_accounting.pld import privacy_loss_distribution as pld_library

from ..events import ApproximateDpEvent, GaussianEvent, PureEpsilonEvent
from . import Interval
from .exact import composed_mu

DEFAULT_DISCRETIZATION = 1e-4


def _event_pld(event, count, pessimistic, discretization):
    if isinstance(event, PureEpsilonEvent):
        outcomes = event.num_outcomes or 2
        pld = pld_library.from_randomized_response(
            noise_parameter=outcomes / (math.exp(event.epsilon) + outcomes - 1),
            num_buckets=outcomes,
            pessimistic_estimate=pessimistic,
            value_discretization_interval=discretization,
        )
    elif isinstance(event, ApproximateDpEvent):
        pld = pld_library.from_privacy_parameters(
            common.DifferentialPrivacyParameters(event.epsilon, event.delta),
            value_discretization_interval=discretization,
        )
    else:
        raise ValueError(f"method 'pld' cannot account {type(event).__name__}")
    return pld.self_compose(count) if count > 1 else pld


def _composed_pld(pairs, pessimistic, discretization):
    gaussians = [(event, count) for event, count in pairs if isinstance(event, GaussianEvent)]
    others = [(event, count) for event, count in pairs if not isinstance(event, GaussianEvent)]
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


def _interval(pairs, query, value, discretization):
    if not pairs:
        return Interval(0.0, 0.0, 0.0, True)
    upper = getattr(_composed_pld(pairs, True, discretization), query)(value)
    exact_kinds = [(event, count) for event, count in pairs if not isinstance(event, ApproximateDpEvent)]
    optimistic = _composed_pld(exact_kinds, False, discretization)
    lower = getattr(optimistic, query)(value) if optimistic is not None else 0.0
    return Interval(min(lower, upper), upper, upper, True)


def epsilon(pairs, delta: float, discretization: float = DEFAULT_DISCRETIZATION) -> Interval:
    return _interval(pairs, "get_epsilon_for_delta", delta, discretization)


def delta(pairs, epsilon: float, discretization: float = DEFAULT_DISCRETIZATION) -> Interval:
    return _interval(pairs, "get_delta_for_epsilon", epsilon, discretization)
