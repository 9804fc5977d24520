"""Immutable records of privacy-relevant releases, in the style of dp_accounting's ``DpEvent``.

An event says what was released, not what it costs: accountants in
:mod:`dpmech.accountants` turn a sequence of events into an (ε, δ) statement.

Neighbouring relations. ``"replace-one"`` (bounded DP: D' is D with one record
replaced) and ``"add-remove-one"`` (unbounded DP: D' is D with one record added
or removed). Each event may name the relation its parameters were derived
under; ``None`` means "the ledger's relation". A replace-one pair is two
add/remove steps, so an add/remove event is valid under replace-one after
group privacy with k = 2 (see :mod:`dpmech.group_privacy`); the converse does
not hold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Union

from . import validation as check

REPLACE_ONE = "replace-one"
ADD_REMOVE_ONE = "add-remove-one"
NEIGHBOURING_RELATIONS = (REPLACE_ONE, ADD_REMOVE_ONE)


def _check_relation(value):
    if value is not None:
        check.choice("neighbouring", value, NEIGHBOURING_RELATIONS)


@dataclass(frozen=True)
class GaussianEvent:
    """One release f(D) + N(0, σ² I) with ‖f(D) − f(D')‖₂ <= sensitivity."""

    sigma: float
    sensitivity: float = 1.0
    neighbouring: Optional[str] = None

    def __post_init__(self):
        object.__setattr__(self, "sigma", float(check.positive("sigma", self.sigma)))
        object.__setattr__(self, "sensitivity", float(check.positive("sensitivity", self.sensitivity)))
        _check_relation(self.neighbouring)

    @property
    def mu(self) -> float:
        """Δ/σ: the release is μ-GDP (Dong, Roth & Su 2019) with this μ."""
        return self.sensitivity / self.sigma


@dataclass(frozen=True)
class PureEpsilonEvent:
    """A pure ε-DP release.

    With ``num_outcomes = K`` it is K-ary randomized response (keep the true
    value with probability e^ε/(e^ε+K−1)), whose privacy loss distribution is
    known exactly; with ``None`` it is any ε-DP mechanism, accounted through
    binary randomized response, the dominating pair of every ε-DP mechanism
    (Kairouz, Oh & Viswanath 2015).
    """

    epsilon: float
    num_outcomes: Optional[int] = None
    neighbouring: Optional[str] = None

    def __post_init__(self):
        object.__setattr__(self, "epsilon", float(check.positive("epsilon", self.epsilon)))
        if self.num_outcomes is not None:
            object.__setattr__(self, "num_outcomes", check.integer_scalar("num_outcomes", self.num_outcomes, 2))
        _check_relation(self.neighbouring)

    @property
    def keep_probability(self) -> float:
        """Probability e^ε/(e^ε+K−1) that K-ary randomized response keeps the true value."""
        outcomes = 2 if self.num_outcomes is None else self.num_outcomes
        return 1.0 / (1.0 + (outcomes - 1) * math.exp(-self.epsilon))


@dataclass(frozen=True)
class ApproximateDpEvent:
    """A release known only to be (ε, δ)-DP; accounted through its dominating pair.

    The dominating pair of an (ε, δ)-DP mechanism is the four-point pair of
    Kairouz, Oh & Viswanath (2015, Thm. 2.1), which dp_accounting builds in
    ``from_privacy_parameters``.
    """

    epsilon: float
    delta: float
    neighbouring: Optional[str] = None
    description: str = ""

    def __post_init__(self):
        object.__setattr__(self, "epsilon", float(check.non_negative("epsilon", self.epsilon)))
        object.__setattr__(
            self,
            "delta",
            float(check.in_interval("delta", self.delta, 0.0, 1.0, low_open=False, high_open=True)),
        )
        _check_relation(self.neighbouring)


@dataclass(frozen=True)
class NoGuaranteeEvent:
    """A release with no formal DP guarantee; any ledger holding one reports ε = ∞."""

    reason: str


@dataclass(frozen=True)
class SelfComposedEvent:
    """``count`` independent repetitions of ``event`` (adaptive composition)."""

    event: "Event"
    count: int

    def __post_init__(self):
        object.__setattr__(self, "count", check.integer_scalar("count", self.count, 1))
        if not isinstance(self.event, EVENT_TYPES):
            raise ValueError(f"event must be one of {', '.join(t.__name__ for t in EVENT_TYPES)} (got {self.event!r})")


Event = Union[GaussianEvent, PureEpsilonEvent, ApproximateDpEvent, NoGuaranteeEvent, SelfComposedEvent]
EVENT_TYPES = (GaussianEvent, PureEpsilonEvent, ApproximateDpEvent, NoGuaranteeEvent, SelfComposedEvent)


def flatten(events) -> list:
    """(base event, count) pairs with nested self-compositions multiplied out."""
    pairs = []
    for event in events:
        count = 1
        while isinstance(event, SelfComposedEvent):
            count *= event.count
            event = event.event
        pairs.append((event, count))
    return pairs
