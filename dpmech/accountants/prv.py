"""Composition through prv_accountant (Gopi, Lee & Wutschitz 2021), a cross-check of :mod:`.exact`.

prv_accountant returns (lower, estimate, upper) with error bounds controlled
by ``eps_error`` and ``delta_error``. Gaussians are merged exactly into one
Gaussian first (μ = √(Σ kμᵢ²)); events with no privacy loss are left out.
prv_accountant has no K-ary randomized response, so a
:class:`~dpmech.events.PureEpsilonEvent` enters as its generic ε-DP mechanism
(binary randomized response), which dominates K-ary randomized response: the
upper end stays valid, and the lower end is then no lower bound at all
(10 × RR(ε=1, K=10) gave (9.988, 10.008) around a true 7.9933).

The interval is never marked certified: prv_accountant's bounds rest on its
own floating-point FFT composition, whose rounding it does not bound, so its
lower end is called an estimate; its upper end is raised by a relative
:data:`UPPER_MARGIN` against that rounding. prv_accountant refuses very small
δ ("floating point errors will dominate"); that refusal is raised as a
ValueError pointing to 'exact' or 'pld'.
"""

from __future__ import annotations

import prv_accountant

import math
from typing import Any

from ..events.base import PrvMechanism
from ..interval import Interval
from . import EventCounts, GaussianCounts, gaussians_and_answers
from .exact import _composed_mu

UPPER_MARGIN = 1e-8


DEFAULT_EPSILON_ERROR = 1e-2
DEFAULT_DELTA_ERROR_FOR_DELTA = 1e-10


def _mechanisms(pairs: EventCounts) -> tuple[GaussianCounts, list[tuple[PrvMechanism, int]], set[str]]:
    """(Gaussian (μ, count) pairs, (prv_accountant mechanism, count) pairs, refused names): each event asked for
    its :meth:`~dpmech.events.base.PrivacyEvent.prv_mechanism` (None: no loss, left out)."""
    return gaussians_and_answers(pairs, lambda event: event.prv_mechanism())


def _dominated(pairs: EventCounts) -> bool:
    """Whether some event enters through a mechanism that only dominates its own pair (its lower end is then no bound)."""
    return any(not mechanism.own_pair for mechanism, _ in _mechanisms(pairs)[1])


def supports(pairs: EventCounts) -> bool:
    """Whether every event has a prv_accountant mechanism (a dry run of the conversion the queries make)."""
    return not _mechanisms(pairs)[2]


def _variables(pairs: EventCounts) -> tuple[list[Any], list[int]]:
    gaussians, mechanisms, refused = _mechanisms(pairs)
    if refused:
        raise ValueError(
            f"method 'prv' cannot account {', '.join(sorted(refused))}; it takes Gaussian releases and pure epsilon and "
            "(epsilon, delta) events only (prv_accountant has no discrete Gaussian: see dpmech.events.discrete_gaussian): "
            "use method='numeric', which accounts every event with a dominating pair"
        )
    variables: list[Any] = []
    counts: list[int] = []
    if gaussians:
        variables.append(prv_accountant.GaussianMechanism(noise_multiplier=1.0 / _composed_mu(gaussians)))
        counts.append(1)
    for mechanism, count in mechanisms:
        variables.append(mechanism.mechanism)
        counts.append(count)
    return variables, counts


def _run(pairs: EventCounts, query: str, value: float, epsilon_error: float, delta_error: float,
         cap: float) -> Interval:
    variables, counts = _variables(pairs)
    if not variables:
        return Interval(0.0, 0.0, 0.0, True)
    try:
        accountant = prv_accountant.PRVAccountant(
            prvs=variables, max_self_compositions=counts, eps_error=epsilon_error, delta_error=delta_error
        )
        lower, estimate, upper = getattr(accountant, query)(value, counts)
    except (ValueError, RuntimeError) as error:
        raise ValueError(f"method 'prv' failed ({error}); use method='exact' or 'pld'") from None
    upper = min(float(upper) * (1.0 + UPPER_MARGIN), cap)
    kary = _dominated(pairs)
    note = ("K-ary randomized response accounted as binary: the upper end is valid, the lower end is not a bound"
            if kary else "lower end: prv_accountant's estimate (not proven)")
    return Interval(min(max(float(lower), 0.0), upper), min(float(estimate), upper), upper, False, note)


def epsilon(pairs: EventCounts, delta: float, epsilon_error: float = DEFAULT_EPSILON_ERROR,
            delta_error: float | None = None) -> Interval:
    if not pairs:
        return Interval(0.0, 0.0, 0.0, True)
    return _run(pairs, "compute_epsilon", delta, epsilon_error, delta / 1000 if delta_error is None else delta_error,
                math.inf)


def delta(pairs: EventCounts, epsilon: float, epsilon_error: float = DEFAULT_EPSILON_ERROR,
          delta_error: float = DEFAULT_DELTA_ERROR_FOR_DELTA) -> Interval:
    if not pairs:
        return Interval(0.0, 0.0, 0.0, True)
    return _run(pairs, "compute_delta", epsilon, epsilon_error, delta_error, 1.0)
