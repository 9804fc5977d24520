"""PrivacyLedger: record releases as events, then ask for ε(δ) or δ(ε) by a named method.

Methods (one module each in :mod:`dpmech.accountants`):

* ``"exact"``: Gaussian events only, composed exactly through μ-GDP;
* ``"pld"``: dp_accounting's pessimistic privacy loss distributions;
* ``"prv"``: prv_accountant's (lower, estimate, upper);
* ``"basic"``: sums of ε and δ, as FedAUXfdp adds its two heads;
* ``"auto"``: ``exact`` where every event is Gaussian, else ``pld``.

Neighbouring relation. A ledger states its guarantee under one relation,
``"replace-one"`` (default) or ``"add-remove-one"``. An event recorded under
add/remove enters a replace-one ledger through group privacy with k = 2
(a replacement is a removal and an addition); an event recorded under
replace-one cannot enter an add/remove ledger, and that raises.
"""

from __future__ import annotations

import math
import importlib
from dataclasses import asdict, dataclass
from typing import Optional

from . import validation as check
from .accountants import Interval, exact
from .events import (
    ADD_REMOVE_ONE,
    EVENT_TYPES,
    NEIGHBOURING_RELATIONS,
    REPLACE_ONE,
    ApproximateDpEvent,
    GaussianEvent,
    NoGuaranteeEvent,
    PureEpsilonEvent,
    SelfComposedEvent,
    flatten,
)
from .group_privacy import group_privacy

METHODS = ("auto", "exact", "pld", "prv", "basic")


def _accountant(method: str):
    # dp_accounting and prv_accountant take about a second to import; load them only when asked.
    return importlib.import_module(f".accountants.{method}", __package__)


@dataclass(frozen=True)
class PrivacyGuarantee:
    """An (ε, δ) statement and how it was obtained.

    ``solved_for`` names the quantity that was computed (the other was given);
    ``interval`` is its (lower, estimate, upper). The reported value is the
    upper end, which never understates the privacy loss; ``certified`` says
    whether the lower end is proven too.
    """

    epsilon: float
    delta: float
    method: str
    neighbouring: str
    solved_for: str
    interval: tuple
    certified: bool
    note: str = ""

    def as_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        text = f"({self.epsilon:.6g}, {self.delta:.3g})-DP under {self.neighbouring}, method {self.method}"
        return f"{text}; {self.note}" if self.note else text


class PrivacyLedger:
    """An append-only record of releases, accounted on demand.

    Example::

        ledger = PrivacyLedger()
        ledger.record(GaussianEvent(sigma=4.0), count=10, label="class head")
        ledger.epsilon(1e-5)                 # exact
        ledger.epsilon(1e-5, method="prv")   # (lower, estimate, upper) from prv_accountant
    """

    def __init__(self, neighbouring: str = REPLACE_ONE):
        self.neighbouring = check.choice("neighbouring", neighbouring, NEIGHBOURING_RELATIONS)
        self._entries: list = []

    def record(self, event, count: int = 1, label: Optional[str] = None) -> "PrivacyLedger":
        """Append ``count`` repetitions of ``event``; returns the ledger so calls chain."""
        if not isinstance(event, EVENT_TYPES):
            raise ValueError(
                f"event must be one of {', '.join(t.__name__ for t in EVENT_TYPES)} (got {type(event).__name__})"
            )
        count = check.integer_scalar("count", count, 1)
        self._convert(event)  # refuse an incompatible relation now, not at query time
        self._entries.append((event if count == 1 else SelfComposedEvent(event, count), label))
        return self

    @property
    def events(self) -> tuple:
        return tuple(event for event, _ in self._entries)

    @property
    def labels(self) -> tuple:
        return tuple(label for _, label in self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"PrivacyLedger(neighbouring={self.neighbouring!r}, events={len(self)})"

    def _convert(self, event):
        """The event restated under the ledger's relation, or a ValueError if that is impossible."""
        inner = event
        while isinstance(inner, SelfComposedEvent):
            inner = inner.event
        relation = getattr(inner, "neighbouring", None)
        if relation is None or relation == self.neighbouring:
            return event
        if relation == ADD_REMOVE_ONE and self.neighbouring == REPLACE_ONE:
            return group_privacy(event, 2)
        raise ValueError(
            f"neighbouring: an event stated under {relation} cannot enter a ledger under "
            f"{self.neighbouring} (add-remove-one implies replace-one, not the converse)"
        )

    def _pairs(self):
        return flatten(self._convert(event) for event in self.events)

    @property
    def gaussian_mu(self) -> float:
        """μ of the ledger as one μ-GDP release, √(Σ count·μ_i²) under the ledger's relation.

        Exact for Gaussian events (Dong, Roth & Su 2019, Cor. 3.3: μ-GDP composes without loss);
        ValueError when the ledger holds any other event. Audits compare their μ lower bounds to it.
        """
        return exact.composed_mu(self._pairs())

    def _resolve(self, method, pairs):
        method = check.choice("method", method, METHODS)
        if method == "auto":
            return "exact" if exact.applies(pairs) else "pld"
        return method

    def _no_guarantee(self, pairs):
        reasons = [event.reason for event, _ in pairs if isinstance(event, NoGuaranteeEvent)]
        return "no formal guarantee: " + "; ".join(reasons) if reasons else None

    def epsilon(self, delta: float, method: str = "auto", **options) -> PrivacyGuarantee:
        """Smallest ε (upper bound) such that the composition is (ε, delta)-DP.

        ``options`` go to the accountant: ``discretization`` for ``pld``;
        ``epsilon_error`` and ``delta_error`` for ``prv``.
        """
        delta = check.open_unit_interval("delta", delta)
        pairs = self._pairs()
        method = self._resolve(method, pairs)
        reason = self._no_guarantee(pairs)
        if reason:
            return PrivacyGuarantee(math.inf, delta, method, self.neighbouring, "epsilon",
                                    (math.inf, math.inf, math.inf), True, reason)
        interval = _accountant(method).epsilon(pairs, delta, **options)
        return self._guarantee(interval, "epsilon", delta, method)

    def delta(self, epsilon: float, method: str = "auto", **options) -> PrivacyGuarantee:
        """Smallest δ (upper bound) such that the composition is (epsilon, δ)-DP."""
        epsilon = check.non_negative("epsilon", epsilon)
        pairs = self._pairs()
        method = self._resolve(method, pairs)
        reason = self._no_guarantee(pairs)
        if reason:
            return PrivacyGuarantee(epsilon, 1.0, method, self.neighbouring, "delta", (1.0, 1.0, 1.0), True, reason)
        interval = _accountant(method).delta(pairs, epsilon, **options)
        return self._guarantee(interval, "delta", epsilon, method)

    def _guarantee(self, interval: Interval, solved_for, given, method):
        values = (float(interval.lower), float(interval.estimate), float(interval.upper))
        epsilon, delta = (values[2], given) if solved_for == "epsilon" else (given, values[2])
        return PrivacyGuarantee(epsilon, delta, method, self.neighbouring, solved_for, values,
                                interval.certified, interval.note)

    def group_privacy(self, group_size: int) -> "PrivacyLedger":
        """A new ledger for neighbours that differ in ``group_size`` records (see :mod:`dpmech.group_privacy`)."""
        ledger = PrivacyLedger(self.neighbouring)
        for event, label in self._entries:
            ledger._entries.append((group_privacy(self._convert(event), group_size), label))
        return ledger

    @property
    def dp_accounting_relation(self):
        """The dp_accounting ``NeighboringRelation`` under which :meth:`to_dp_event` must be accounted."""
        from dp_accounting.privacy_accountant import NeighboringRelation

        return NeighboringRelation.REPLACE_ONE if self.neighbouring == REPLACE_ONE else NeighboringRelation.ADD_OR_REMOVE_ONE

    def to_dp_event(self):
        """The ledger as a dp_accounting ``ComposedDpEvent``, for :attr:`dp_accounting_relation`.

        dp_accounting's ``GaussianDpEvent(noise_multiplier)`` has sensitivity 1
        under ADD_OR_REMOVE_ONE and 2 under REPLACE_ONE, so Δ is folded into the
        noise multiplier accordingly. dp_accounting has no generic (ε, δ)
        event: such events become ``UnsupportedDpEvent``, which its accountants
        refuse rather than mis-account.

        Repetitions of randomized response are written out one event each:
        dp_accounting 0.6.0's ``PLDAccountant`` ignores the count of a
        self-composed ``RandomizedResponseDpEvent`` (ten-fold RR at ε = 0.5,
        K = 10 comes out as ε = 0.50 instead of 3.44 at δ = 1e-5).
        """
        from dp_accounting import dp_event

        scale = 2.0 if self.neighbouring == REPLACE_ONE else 1.0

        def convert(event):
            if isinstance(event, SelfComposedEvent):
                inner = convert(event.event)
                if isinstance(inner, dp_event.RandomizedResponseDpEvent):
                    return dp_event.ComposedDpEvent([inner] * event.count)
                return dp_event.SelfComposedDpEvent(inner, event.count)
            if isinstance(event, GaussianEvent):
                return dp_event.GaussianDpEvent(noise_multiplier=scale * event.sigma / event.sensitivity)
            if isinstance(event, PureEpsilonEvent):
                outcomes = event.num_outcomes or 2
                return dp_event.RandomizedResponseDpEvent(
                    noise_parameter=outcomes / (math.exp(event.epsilon) + outcomes - 1), num_buckets=outcomes
                )
            if isinstance(event, ApproximateDpEvent):
                return dp_event.UnsupportedDpEvent()
            return dp_event.NonPrivateDpEvent()

        return dp_event.ComposedDpEvent([convert(self._convert(event)) for event in self.events])
