"""The accountant ``"pld"``: composition through dp_accounting's privacy loss distributions (Koskela et al. 2020;
Doroshenko et al. 2022). Not to be confused with dpmech's own engine :mod:`dpmech.pld` (the ``"numeric"``
accountant).

A cross-check of :mod:`.exact`. Each event contributes the PLD of its dominating pair, which its module
builds (:meth:`~dpmech.events.base.PrivacyEvent.dp_accounting_pld`):

* Gaussians are merged first (exactly, μ = √(Σ kμᵢ²)) into one Gaussian PLD;
* K-ary randomized response: ``from_randomized_response`` with noise parameter
  K/(e^ε+K−1), the probability of answering uniformly at random;
* generic pure ε: binary randomized response, the worst ε-DP pair;
* generic (ε, δ): the four-point dominating pair (``from_privacy_parameters``);
* Laplace: ``from_laplace_mechanism`` with parameter b/Δ;
* the discrete Gaussian: ``from_discrete_gaussian_mechanism``, truncated where its pair still dominates the
  release (:mod:`dpmech.events.discrete_gaussian`);
* a Poisson-sampled Gaussian, Laplace or discrete Gaussian event (add/remove-one only):
  dp_accounting's subsampled PLD (``sampling_prob``), which holds both
  directions of the asymmetric pair (the discrete Gaussian's, of its truncated pair);
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
from typing import Any

from dp_accounting.pld import privacy_loss_distribution as pld_library

from ..events.base import PldBuilder
from ..interval import Interval
from . import EventCounts, GaussianCounts, gaussians_and_answers
from .exact import _composed_mu

DEFAULT_DISCRETIZATION = 1e-4
UPPER_MARGIN = 1e-8
# dp_accounting's Gaussian PLD spans privacy losses μ²/2 ± tμ, t ≈ 10 standard deviations (its default
# log-mass truncation e^-50), one point per discretisation step, built through Python dicts: beyond about
# 10^7 points it takes minutes and gigabytes (μ = 60 at 1e-4 asked for about 4·10^7 and 15 GB), so it is
# refused by name before dp_accounting is called.
MAX_GAUSSIAN_POINTS = 10**7
_TAIL_STANDARD_DEVIATIONS = 10.0
_NOTE = "lower end: dp_accounting's optimistic estimate (not proven)"


def _builders(pairs: EventCounts) -> tuple[GaussianCounts, list[tuple[PldBuilder, int]], set[str]]:
    """(Gaussian (μ, count) pairs, (PLD builder, count) pairs, refused names): each event asked for its
    :meth:`~dpmech.events.base.PrivacyEvent.dp_accounting_pld`; nothing is built here."""
    return gaussians_and_answers(pairs, lambda event: event.dp_accounting_pld())


def supports(pairs: EventCounts) -> bool:
    """Whether every event has a dp_accounting PLD (a dry run of the conversion the queries make)."""
    return not _builders(pairs)[2]


def _composed_pld(gaussians: GaussianCounts, builders: list[tuple[PldBuilder, int]], pessimistic: bool,
                  discretization: float) -> Any:
    """The composed PLD on one side, or None when nothing on that side has privacy loss."""
    plds = []
    for build, count in builders:
        pld = build(pessimistic, discretization)
        if pld is not None:
            plds.append(pld.self_compose(count) if count > 1 else pld)
    if gaussians:
        mu = _composed_mu(gaussians)
        points = (mu * mu + 2.0 * _TAIL_STANDARD_DEVIATIONS * mu) / discretization
        if points > MAX_GAUSSIAN_POINTS:
            raise ValueError(
                f"method 'pld': the composed Gaussian (μ = {mu:.4g}) needs a dp_accounting grid of about {points:.2g} "
                f"points at discretization {discretization:g} (limit {MAX_GAUSSIAN_POINTS:.0e}); use method='exact' "
                "or 'numeric', which account it without a grid of that size"
            )
        plds.append(
            pld_library.from_gaussian_mechanism(
                standard_deviation=1.0 / _composed_mu(gaussians),
                pessimistic_estimate=pessimistic,
                value_discretization_interval=discretization,
                use_connect_dots=pessimistic,
            )
        )
    if not plds:
        return None
    return functools.reduce(lambda left, right: left.compose(right), plds)


def _interval(pairs: EventCounts, query: str, value: float, discretization: float, cap: float) -> Interval:
    gaussians, builders, refused = _builders(pairs)
    if refused:
        raise ValueError(
            f"method 'pld' cannot account {', '.join(sorted(refused))} (it takes Poisson sampling of Gaussian, "
            "Laplace or discrete Gaussian events only): use method='numeric', which accounts every event with a dominating pair"
        )
    pessimistic = _composed_pld(gaussians, builders, True, discretization)
    if pessimistic is None:
        return Interval(0.0, 0.0, 0.0, True)
    estimate = getattr(pessimistic, query)(value)
    upper = min(estimate * (1.0 + UPPER_MARGIN), cap)
    optimistic = _composed_pld(gaussians, builders, False, discretization)
    lower = getattr(optimistic, query)(value) if optimistic is not None else 0.0
    return Interval(min(lower, upper), min(estimate, upper), upper, False, _NOTE)


def epsilon(pairs: EventCounts, delta: float, discretization: float = DEFAULT_DISCRETIZATION) -> Interval:
    return _interval(pairs, "get_epsilon_for_delta", delta, discretization, math.inf)


def delta(pairs: EventCounts, epsilon: float, discretization: float = DEFAULT_DISCRETIZATION) -> Interval:
    return _interval(pairs, "get_delta_for_epsilon", epsilon, discretization, 1.0)
