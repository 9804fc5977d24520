"""PrivacyLedger: record releases as events, then ask for ε(δ) or δ(ε) by a named method.

Methods (the accountants registered in :mod:`dpmech.accountants`; a third party adds one with
:func:`dpmech.accountants.register_accountant`):

* ``"exact"``: Gaussians, the randomized-response family, generic pure ε and
  (ε, δ) events and events with no privacy loss, composed exactly in log
  space with a certified interval (see :mod:`dpmech.accountants.exact`);
* ``"numeric"``: dpmech's own privacy-loss-distribution engine
  (:mod:`dpmech.pld`) for every event, Poisson sampling and sampling without
  replacement included, with a certified interval (see
  :mod:`dpmech.accountants.numeric`);
* ``"pld"``: dp_accounting's pessimistic privacy loss distributions (a
  cross-check; its lower end is an estimate);
* ``"prv"``: prv_accountant's (lower, estimate, upper) (a cross-check);
* ``"basic"``: sums of ε and δ, as FedAUXfdp adds its two heads;
* ``"auto"``: ``exact`` whenever it supports every event, else ``numeric``
  when it does, else a ValueError naming the events and the methods that can
  account them.

Neighbouring relation. A ledger states its guarantee under one relation,
``"add-remove-one"`` (default, as in dp_accounting, opacus and
:meth:`PrivacyLedger.from_dp_event`) or ``"replace-one"``; every printed
guarantee names it. An event recorded under
add/remove enters a replace-one ledger through group privacy with k = 2
(a replacement is a removal and an addition), and is from then on an event
of the ledger's relation (converted once, also by :meth:`PrivacyLedger.group_privacy`);
an event recorded under replace-one cannot enter an add/remove ledger, and
that raises.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
from dataclasses import asdict, dataclass
from collections.abc import Callable
from typing import Any, Optional, Union, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from . import validation as check
from .accountants import accountant_names, exact, get_accountant
from .events import (
    ADD_REMOVE_ONE,
    EVENT_TYPES,
    NEIGHBOURING_RELATIONS,
    REPLACE_ONE,
    GaussianEvent,
    LaplaceEvent,
    NoGuaranteeEvent,
    NoPrivacyLossEvent,
    PoissonSampledEvent,
    PureEpsilonEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
    flatten,
)
from .events.base import PrivacyEvent, flattened_parts
from .gaussian import _log_delta_bounds_scalar
from .group_privacy import group_privacy
from .interval import Interval


_SMALLEST_POSITIVE = 5e-324


def _log_up(delta: float) -> float:
    """A double >= log δ: math.log rounds to nearest, which may fall below log δ; one step up covers
    its error of at most one ulp (log 1 = 0 and log 0 = -inf are exact)."""
    if delta == 0.0:
        return -math.inf
    if delta == 1.0:
        return 0.0
    return min(math.nextafter(math.log(delta), math.inf), 0.0)


def _delta_from_log(log_delta: float) -> float:
    """A double >= e^log_delta (at most 1); never 0 for a positive δ."""
    if log_delta == -math.inf:
        return 0.0
    if log_delta >= 0.0:
        return 1.0
    value = math.exp(log_delta)
    # exp is faithful for normal results; below the normal range it may lose bits, so step up one.
    if value < 2.2250738585072014e-308:
        value = math.nextafter(value, math.inf)
    return min(max(value, _SMALLEST_POSITIVE), 1.0)


def _delta_from_log_lower(log_delta: float) -> float:
    """A double <= e^log_delta (and >= 0): below the normal range exp may round up, so step down one."""
    value = math.exp(min(log_delta, 0.0))
    if value < 2.2250738585072014e-308:
        value = math.nextafter(value, 0.0)
    return value


@dataclass(frozen=True)
class PrivacyGuarantee:
    """An (ε, δ) statement and how it was obtained.

    ``solved_for`` names the quantity that was computed (the other was given);
    ``interval`` is its (lower, estimate, upper). The reported value is the
    upper end, which never understates the privacy loss; ``certified`` says
    whether the lower end is proven too, so that the interval contains the
    tight value. ``log_delta`` is the natural log of the reported δ (of the
    upper end where δ was solved for), exact where δ is below the smallest
    double; ``delta`` is then the smallest positive double, never 0.

    A guarantee stands for its reported number: ``float(g)`` is the upper end
    of the solved-for quantity, and ``g < 2.0`` compares it with a real.
    """

    epsilon: float
    delta: float
    method: str
    neighbouring: str
    solved_for: str
    interval: tuple[float, float, float]
    certified: bool
    note: str = ""
    log_delta: Optional[float] = None

    def __post_init__(self) -> None:
        check.stated_epsilon_delta(self.epsilon, self.delta)
        check.boolean("certified", self.certified)
        if self.log_delta is None:
            object.__setattr__(self, "log_delta", _log_up(self.delta))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __float__(self) -> float:
        return float(self.epsilon if self.solved_for == "epsilon" else self.delta)

    def _compare(self, other: object, operator: Callable[[float, float], bool]) -> bool:
        if isinstance(other, numbers.Real) and not isinstance(other, bool):
            return operator(float(self), float(other))
        if isinstance(other, PrivacyGuarantee):
            return operator(float(self), float(other))
        # typeshed types NotImplemented as a subclass of Any; the comparison operators know it.
        return NotImplemented  # type: ignore[no-any-return]

    def __lt__(self, other: object) -> bool:
        return self._compare(other, float.__lt__)

    def __le__(self, other: object) -> bool:
        return self._compare(other, float.__le__)

    def __gt__(self, other: object) -> bool:
        return self._compare(other, float.__gt__)

    def __ge__(self, other: object) -> bool:
        return self._compare(other, float.__ge__)

    def __str__(self) -> str:
        from .directed_rounding import format_log_up, format_up

        assert self.log_delta is not None  # __post_init__ fills it in
        if self.solved_for == "delta":
            delta = "1" if self.log_delta >= 0.0 else format_log_up(self.log_delta, 3)
        else:
            delta = format_up(self.delta, 3)
        text = f"({format_up(self.epsilon, 6)}, {delta})-DP under {self.neighbouring}, method {self.method}"
        return f"{text}; {self.note}" if self.note else text


class PrivacyLedger:
    """An append-only record of releases, accounted on demand.

    Example::

        ledger = PrivacyLedger()             # add/remove neighbours; PrivacyLedger("replace-one") for bounded DP
        ledger.record(GaussianEvent(sigma=4.0), count=10, label="class head")
        ledger.epsilon(1e-5)                 # exact
        ledger.epsilon(1e-5, method="prv")   # (lower, estimate, upper) from prv_accountant
    """

    def __init__(self, neighbouring: str = ADD_REMOVE_ONE) -> None:
        self.neighbouring = check.choice("neighbouring", neighbouring, NEIGHBOURING_RELATIONS)
        self._entries: list[tuple[PrivacyEvent, Optional[str]]] = []

    def record(self, event: object, count: int = 1, label: Optional[str] = None) -> "PrivacyLedger":
        """Append ``count`` repetitions of ``event``; returns the ledger so calls chain.

        ``event`` is a dpmech event or one of dp_accounting's ``DpEvent``s, which is read as
        :meth:`from_dp_event` reads it under this ledger's relation (never under-stated).
        """
        if type(event).__module__.split(".")[0] == "dp_accounting":
            for imported, _ in self.from_dp_event(event, self.neighbouring)._entries:
                self.record(imported, count, label)
            return self
        if not isinstance(event, PrivacyEvent):
            raise ValueError(
                f"event must be a dpmech event such as {', '.join(t.__name__ for t in EVENT_TYPES)} "
                f"(got {type(event).__name__})"
            )
        count = check.integer_scalar("count", count, 1)
        self._convert(event)  # refuse an incompatible relation now, not at query time
        self._entries.append((event if count == 1 else SelfComposedEvent(event, count), label))
        return self

    @property
    def events(self) -> tuple[PrivacyEvent, ...]:
        return tuple(event for event, _ in self._entries)

    @property
    def labels(self) -> tuple[Optional[str], ...]:
        return tuple(label for _, label in self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"PrivacyLedger(neighbouring={self.neighbouring!r}, events={len(self)})"

    def _convert(self, event: PrivacyEvent) -> PrivacyEvent:
        """The event restated under the ledger's relation, or a ValueError if that is impossible.

        An add/remove event in a replace-one ledger becomes its group-privacy
        event for k = 2, stated under replace-one, so it is converted once only.
        """
        stated = (getattr(inner, "neighbouring", None) for inner, _ in flattened_parts(event))
        relations: set[str] = {relation for relation in stated if relation is not None}
        if relations <= {self.neighbouring}:
            return event
        relation = " and ".join(sorted(relations))  # one relation: an event's parts are stated under its own
        if relation == ADD_REMOVE_ONE and self.neighbouring == REPLACE_ONE:
            return _restate(group_privacy(event, 2), self.neighbouring)
        raise ValueError(
            f"neighbouring: an event stated under {relation} cannot enter a ledger under "
            f"{self.neighbouring} (add-remove-one implies replace-one, not the converse)"
        )

    def _pairs(self) -> list[tuple[PrivacyEvent, int]]:
        return flatten(self._convert(event) for event in self.events)

    @property
    def gaussian_mu(self) -> float:
        """μ of the ledger as one μ-GDP release, √(Σ count·μ_i²) under the ledger's relation.

        Exact for Gaussian events (Dong, Roth & Su 2019, Cor. 3.3: μ-GDP composes without loss);
        ValueError when the ledger holds any other event. Audits compare their μ lower bounds to it.
        """
        pairs = self._pairs()
        others = sorted({event.describe() for event, _ in pairs if event.gaussian_mu() is None})
        if others:
            raise ValueError(f"gaussian_mu applies only to Gaussian events (this ledger also holds {', '.join(others)})")
        return exact.composed_mu(pairs)

    def _resolve(self, method: str, pairs: list[tuple[PrivacyEvent, int]]) -> str:
        method = check.choice("method", method, ("auto",) + accountant_names())
        if method != "auto":
            return method
        accounted = [(event, count) for event, count in pairs if event.missing_guarantee is None]
        if exact.supports(accounted):
            return "exact"
        numeric = get_accountant("numeric")
        if numeric.supports(accounted):
            return "numeric"
        kinds = sorted({type(event).__name__ for event, _ in accounted if not numeric.supports([(event, 1)])})
        able = [name for name in accountant_names()
                if name not in ("exact", "numeric") and get_accountant(name).supports(accounted)]
        advice = f"method {' or '.join(repr(name) for name in able)} can" if able else "no method here can"
        raise ValueError(
            f"method 'auto' cannot account {', '.join(kinds)} (neither 'exact' nor 'numeric' takes it: "
            f"nested sampling, or a sampled event stated under another relation); {advice} account this ledger"
        )

    def _gaussian_fast_mu(self, method: str, options: dict[str, Any]) -> Optional[float]:
        """The composed μ where the all-Gaussian fast path applies (see :func:`_gaussians_alone`), else None.

        The ledger is append-only, so μ is kept with its entry list, their number and the relation it was found for.
        """
        if options or not (method == "auto" or method == "exact"):
            return None
        key = (id(self._entries), len(self._entries), self.neighbouring)
        cached = self.__dict__.get("_gaussian_mu")
        if cached is None or cached[0] != key:
            cached = (key, _gaussians_alone(self._pairs()))
            self._gaussian_mu = cached
        return cached[1]

    def _accounted(self, method: str) -> tuple[list[tuple[PrivacyEvent, int]], str, Optional[str]]:
        """The ledger's (event, count) pairs, the accountant ``method`` resolves to, and why there is no formal
        guarantee (None when every event has one): what :meth:`epsilon` and :meth:`delta` need off the fast path."""
        pairs = self._pairs()
        reasons = [event.missing_guarantee for event, _ in pairs if event.missing_guarantee is not None]
        reason = "no formal guarantee: " + "; ".join(reasons) if reasons else None
        return pairs, self._resolve(method, pairs), reason

    def _dominated_only(self, certified: bool, note: str) -> tuple[bool, str]:
        """(certified, note) of an accountant's answer, uncertified with a note when an event was accounted by parts
        that only dominate it (:attr:`~dpmech.events.base.PrivacyEvent.parts_are_tight`): the upper end holds, the
        lower end is the parts'."""
        loose = sorted({event.describe() for event in self.events if not event.parts_are_tight})
        if not loose:
            return certified, note
        why = (f"the lower end is that of a dominating reduction of {', '.join(loose)} (its blocks composed), "
               "not a lower bound of the event; the upper end holds")
        return False, f"{note}; {why}" if note else why

    @overload
    def epsilon(self, delta: float, method: str = "auto", **options: Any) -> PrivacyGuarantee: ...
    @overload
    def epsilon(self, delta: ArrayLike, method: str = "auto", **options: Any) -> PrivacyGuarantee | NDArray[np.object_]: ...
    def epsilon(self, delta: ArrayLike, method: str = "auto", **options: Any) -> PrivacyGuarantee | NDArray[np.object_]:
        """Smallest ε (upper bound) such that the composition is (ε, delta)-DP.

        ``delta`` may be an array: the result is then an object array of
        guarantees of the same shape (``.astype(float)`` gives the ε values).
        ``options`` go to the accountant: ``discretization``, ``width`` and
        ``max_points`` for ``numeric``; ``discretization`` for ``pld``;
        ``epsilon_error`` and ``delta_error`` for ``prv``.
        """
        deltas = check.open_unit_interval("delta", delta)
        if np.ndim(deltas):
            return _map(lambda value: self.epsilon(float(value), method, **options), deltas)
        # One δ, as a Python float also when it came as a 0-d array (which PrivacyGuarantee refuses).
        delta = float(deltas)
        mu = self._gaussian_fast_mu(method, options)
        interval = _gaussian_epsilon(mu, delta) if mu is not None else None
        if interval is not None:
            method = "exact"
        else:
            pairs, method, reason = self._accounted(method)
            if reason:
                return PrivacyGuarantee(math.inf, delta, method, self.neighbouring, "epsilon",
                                        (math.inf, math.inf, math.inf), True, reason)
            interval = get_accountant(method).epsilon(pairs, delta, **options)
        values = (float(interval.lower), float(interval.estimate), float(interval.upper))
        return PrivacyGuarantee(values[2], delta, method, self.neighbouring, "epsilon", values,
                                *self._dominated_only(interval.certified, interval.note))

    @overload
    def delta(self, epsilon: float, method: str = "auto", **options: Any) -> PrivacyGuarantee: ...
    @overload
    def delta(self, epsilon: ArrayLike, method: str = "auto", **options: Any) -> PrivacyGuarantee | NDArray[np.object_]: ...
    def delta(self, epsilon: ArrayLike, method: str = "auto", **options: Any) -> PrivacyGuarantee | NDArray[np.object_]:
        """Smallest δ (upper bound) such that the composition is (epsilon, δ)-DP.

        ``epsilon`` may be an array, as in :meth:`epsilon`. The result carries
        ``log_delta``; its ``delta`` is never 0 for a positive δ and never above 1.
        """
        epsilons = check.non_negative("epsilon", epsilon)
        if np.ndim(epsilons):
            return _map(lambda value: self.delta(float(value), method, **options), epsilons)
        # One ε, as a Python float also when it came as a 0-d array (which PrivacyGuarantee refuses).
        epsilon = float(epsilons)
        mu = self._gaussian_fast_mu(method, options)
        logs: Optional[tuple[float, ...]] = _gaussian_log_delta_interval(mu, epsilon) if mu is not None else None
        if logs is not None:
            method = "exact"
        else:
            pairs, method, reason = self._accounted(method)
            if reason:
                return PrivacyGuarantee(epsilon, 1.0, method, self.neighbouring, "delta", (1.0, 1.0, 1.0), True,
                                        reason, 0.0)
            accountant = get_accountant(method)
            if hasattr(accountant, "log_delta_interval"):
                logs = accountant.log_delta_interval(pairs, epsilon, **options)
        if logs is not None:
            log_lower, log_estimate, log_upper = logs[:3]
            upper = _delta_from_log(log_upper)
            lower = min(_delta_from_log_lower(log_lower), upper)
            estimate = min(max(math.exp(log_estimate), lower), upper)
            certified, note = getattr(logs, "certified", True), getattr(logs, "note", "")
        else:
            interval = accountant.delta(pairs, epsilon, **options)
            upper = min(max(float(interval.upper), 0.0), 1.0)
            lower = min(max(float(interval.lower), 0.0), upper)
            estimate = min(max(float(interval.estimate), lower), upper)
            log_upper = _log_up(upper)
            certified, note = interval.certified, interval.note
        return PrivacyGuarantee(epsilon, upper, method, self.neighbouring, "delta", (lower, estimate, upper),
                                *self._dominated_only(certified, note), min(log_upper, 0.0))

    def to_json(self) -> str:
        """The ledger (relation, events, counts, labels) as JSON text that :meth:`from_json` reads back exactly
        (the format: :mod:`dpmech.ledger_json`)."""
        from .ledger_json import ledger_to_json

        return ledger_to_json(self)

    @classmethod
    def from_json(cls, text: str) -> "PrivacyLedger":
        """The ledger written by :meth:`to_json`; ValueError naming the field for malformed text or an unknown event."""
        from .ledger_json import ledger_from_json

        return ledger_from_json(text, cls)

    def save(self, path: Union[str, os.PathLike[str]]) -> None:
        """Write :meth:`to_json` to ``path`` (UTF-8)."""
        from .ledger_json import save_ledger

        save_ledger(self, path)

    @classmethod
    def load(cls, path: Union[str, os.PathLike[str]]) -> "PrivacyLedger":
        """The ledger :meth:`save` wrote to ``path``."""
        from .ledger_json import load_ledger

        return load_ledger(path, cls)

    def group_privacy(self, group_size: int) -> "PrivacyLedger":
        """A new ledger for neighbours that differ in ``group_size`` records (see :mod:`dpmech.group_privacy`)."""
        group_size = check.integer_scalar("group_size", group_size, 1)
        ledger = PrivacyLedger(self.neighbouring)
        for event, label in self._entries:
            ledger._entries.append((group_privacy(self._convert(event), group_size), label))
        return ledger

    @property
    def dp_accounting_relation(self) -> Any:
        """The dp_accounting ``NeighboringRelation`` under which :meth:`to_dp_event` must be accounted.

        It selects dp_accounting's conventions, not the ledger's relation (see
        :meth:`to_dp_event`): ``REPLACE_ONE`` when the export holds randomized
        response (dp_accounting accepts that event only there), else
        ``ADD_OR_REMOVE_ONE``.
        """
        from dp_accounting import dp_event
        from dp_accounting.privacy_accountant import NeighboringRelation

        def holds_randomized_response(event: Any) -> bool:
            if isinstance(event, dp_event.RandomizedResponseDpEvent):
                return True
            if isinstance(event, dp_event.ComposedDpEvent):
                return any(holds_randomized_response(inner) for inner in event.events)
            if isinstance(event, dp_event.SelfComposedDpEvent):
                return holds_randomized_response(event.event)
            return False

        if holds_randomized_response(self.to_dp_event()):
            return NeighboringRelation.REPLACE_ONE
        return NeighboringRelation.ADD_OR_REMOVE_ONE

    def to_dp_event(self) -> Any:
        """The ledger as a dp_accounting ``ComposedDpEvent``, sound for every dp_accounting accountant.

        Account it under :attr:`dp_accounting_relation`. Each event is already
        stated under the ledger's relation (its Δ or ε is the one for that
        relation), so it is exported as the dp_accounting event whose
        dominating pair is the same or dominates it, whatever accountant
        reads it (dp_accounting 0.6.0):

        * Gaussian: ``GaussianDpEvent(σ/Δ)``. ``RdpAccountant`` reads it as
          sensitivity 1 under every relation, ``PLDAccountant`` as sensitivity
          1 under ADD_OR_REMOVE_ONE and 2 under REPLACE_ONE: exact for both
          under ADD_OR_REMOVE_ONE, and an over-estimate (never an
          under-estimate) by PLD when randomized response forces REPLACE_ONE.
          (Folding a factor 2 into the noise multiplier under REPLACE_ONE, as
          earlier versions did, halves RDP's sensitivity: 10 × Gaussian(σ=4)
          came out at ε = 1.67 instead of 3.34 at δ = 1e-5.)
        * K-ary randomized response and generic ε-DP (binary RR):
          ``RandomizedResponseDpEvent`` with noise parameter K/(e^ε+K−1), whose
          REPLACE_ONE pair both accountants use is exactly the K-ary RR pair.
          Repetitions are written out one event each: dp_accounting 0.6.0's
          ``PLDAccountant`` ignores the count of a self-composed
          ``RandomizedResponseDpEvent``.
        * Laplace: ``LaplaceDpEvent(b/Δ)`` (sensitivity 1 in both accountants;
          PLD refuses it under REPLACE_ONE).
        * Poisson-sampled: ``PoissonSampledDpEvent(q, inner)``, only in an
          add/remove ledger without randomized response (a ValueError
          otherwise: the two would need different dp_accounting relations).
        * no privacy loss: ``NoOpDpEvent``; no guarantee: ``NonPrivateDpEvent``.
        * generic (ε, δ), and sampling without replacement (whose
          dp_accounting conventions have not been checked here):
          ``UnsupportedDpEvent``, which its accountants refuse rather than
          mis-account.
        """
        from dp_accounting import dp_event

        exported = [self._convert(event).dp_accounting_event() for event in self.events]

        def top_level(item: Any) -> list[type]:
            if isinstance(item, dp_event.ComposedDpEvent):
                return [kind for inner in item.events for kind in top_level(inner)]
            if isinstance(item, dp_event.SelfComposedDpEvent):
                return top_level(item.event)
            return [type(item)]

        kinds = {kind for item in exported for kind in top_level(item)}
        if {dp_event.PoissonSampledDpEvent, dp_event.RandomizedResponseDpEvent} <= kinds:
            raise ValueError(
                "to_dp_event: dp_accounting accounts randomized response under REPLACE_ONE only and Poisson "
                "sampling here under ADD_OR_REMOVE_ONE; export them as separate ledgers"
            )
        return dp_event.ComposedDpEvent(exported)

    @classmethod
    def from_dp_event(cls, event: Any, neighbouring: str = ADD_REMOVE_ONE) -> "PrivacyLedger":
        """A ledger holding dp_accounting's ``event``, read under ``neighbouring``; never under-stating it.

        dp_accounting's unit-sensitivity events (``GaussianDpEvent``,
        ``LaplaceDpEvent``) have sensitivity 1 under ADD_OR_REMOVE_ONE; under
        REPLACE_ONE its PLD accountant reads them at sensitivity 2 and its RDP
        accountant at 1, so a replace-one ledger takes 2, the larger.
        ``RandomizedResponseDpEvent`` becomes K-ary randomized response with
        e^ε = 1 + K(1 − p)/p (p the noise parameter), stated under
        replace-one; one bucket is an event with no privacy loss and p = 0 no
        guarantee. Poisson sampling, sampling without replacement, self- and
        plain composition, ``NoOpDpEvent`` and ``NonPrivateDpEvent`` map to
        their dpmech events; anything else raises a ValueError naming it.
        """
        from dp_accounting import dp_event

        ledger = cls(neighbouring)
        unit = 2.0 if ledger.neighbouring == REPLACE_ONE else 1.0

        def convert(item: Any) -> PrivacyEvent:
            if isinstance(item, dp_event.NoOpDpEvent):
                return NoPrivacyLossEvent("dp_accounting NoOpDpEvent")
            if isinstance(item, dp_event.NonPrivateDpEvent):
                return NoGuaranteeEvent("dp_accounting NonPrivateDpEvent")
            if isinstance(item, dp_event.GaussianDpEvent):
                if item.noise_multiplier == 0:
                    return NoGuaranteeEvent("dp_accounting GaussianDpEvent with noise multiplier 0")
                return GaussianEvent(item.noise_multiplier, unit)
            if isinstance(item, dp_event.LaplaceDpEvent):
                if item.noise_multiplier == 0:
                    return NoGuaranteeEvent("dp_accounting LaplaceDpEvent with noise multiplier 0")
                return LaplaceEvent(item.noise_multiplier, unit)
            if isinstance(item, dp_event.RandomizedResponseDpEvent):
                if item.num_buckets == 1:
                    return NoPrivacyLossEvent("dp_accounting RandomizedResponseDpEvent with one bucket")
                if item.noise_parameter == 0:
                    return NoGuaranteeEvent("dp_accounting RandomizedResponseDpEvent with noise parameter 0")
                if item.noise_parameter == 1:
                    return NoPrivacyLossEvent("dp_accounting RandomizedResponseDpEvent with noise parameter 1")
                epsilon = math.log1p(item.num_buckets * (1.0 - item.noise_parameter) / item.noise_parameter)
                # Rounded up: a larger ε dominates.
                return PureEpsilonEvent(math.nextafter(epsilon, math.inf), item.num_buckets, REPLACE_ONE)
            if isinstance(item, dp_event.PoissonSampledDpEvent):
                return PoissonSampledEvent(single(item.event), item.sampling_probability)
            if isinstance(item, dp_event.SampledWithoutReplacementDpEvent):
                return SampledWithoutReplacementEvent(single(item.event), item.sample_size, item.source_dataset_size)
            raise ValueError(f"event: dp_accounting's {type(item).__name__} has no dpmech equivalent")

        def single(item: Any) -> PrivacyEvent:
            if isinstance(item, dp_event.SelfComposedDpEvent):
                return SelfComposedEvent(single(item.event), item.count)
            if isinstance(item, dp_event.ComposedDpEvent):
                raise ValueError("event: a ComposedDpEvent inside a sampled event has no dpmech equivalent")
            return convert(item)

        def add(item: Any, count: int) -> None:
            if isinstance(item, dp_event.ComposedDpEvent):
                for inner in item.events:
                    add(inner, count)
            elif isinstance(item, dp_event.SelfComposedDpEvent):
                add(item.event, count * item.count)
            else:
                ledger.record(convert(item), count=count)

        if not isinstance(event, dp_event.DpEvent):
            raise ValueError(f"event must be a dp_accounting DpEvent (got {type(event).__name__})")
        add(event, 1)
        return ledger


# The all-Gaussian fast path. For a ledger of Gaussians alone, exact.epsilon and exact.log_delta_interval
# build one profile per side holding a single atom (loss 0, log-probability 0, nothing at +∞) around the
# composed μ (exact.composed_mu), and spend their time in numpy calls on one-element arrays. The functions
# below take the same steps on floats: _GaussianProfile.evaluate applies exact._Profile.evaluate's
# operations to that one atom, through gaussian._log_delta_bounds_scalar, which gaussian._log_delta_bounds
# itself uses for one entry, and the searches are exact._search and exact._lower_start themselves. The
# guarantee is the general path's to the last bit (tests/dpmech/test_gaussian_ledger.py compares the two); anything
# outside the ordinary (μ not finite, a search end past 1e300, a negative loss argument) goes the general way.
_GAUSSIAN_MARGIN: list[Optional[float]] = []  # [log margin of exact's profiles of Gaussians alone, or None], filled on first use


def _gaussian_margin() -> Optional[float]:
    """exact's log margin for Gaussians alone, read off its own profiles once; None if they are not one atom at 0."""
    if not _GAUSSIAN_MARGIN:
        upper, lower = exact._profiles([(GaussianEvent(1.0), 1)])
        single = all(
            profile.loss.tolist() == [0.0] and profile.log_p.tolist() == [0.0] and profile.log_infinite == -math.inf
            for profile in (upper, lower)
        )
        margin = upper.log_margin
        _GAUSSIAN_MARGIN.append(margin if single and margin > 0.0 and lower.log_margin == -margin else None)
    return _GAUSSIAN_MARGIN[0]


def _gaussians_alone(pairs: list[tuple[PrivacyEvent, int]]) -> Optional[float]:
    """exact.composed_mu of a ledger of Gaussians alone, where it is finite and positive; else None."""
    if not pairs:
        return None
    if any(event.gaussian_mu() is None for event, _ in pairs):
        return None
    mu = exact.composed_mu(pairs)
    return mu if 0.0 < mu < math.inf and _gaussian_margin() is not None else None


def _single_log_sum_exp(value: float) -> float:
    """exact._log_sum_exp of one term: the term itself (peak + log(e^0 + e^-inf) = peak + 0.0)."""
    return value if math.isinf(value) else value + 0.0


class _GaussianProfile:
    """exact._Profile of Gaussians alone (loss [0.0], log_p [0.0], log_infinite −inf), evaluated on floats.

    Only what exact._search and exact._lower_start read: ``evaluate`` and ``log_margin``.
    """

    log_infinite = -math.inf

    def __init__(self, mu: float, log_margin: float) -> None:
        self.mu, self.log_margin = mu, log_margin

    def _general(self) -> exact._Profile:
        # One atom at loss 0: the largest finite loss is 0.
        return exact._Profile(self.mu, np.zeros(1), np.zeros(1), -math.inf, self.log_margin, 0.0)

    @overload
    def log_delta(self, epsilon: float, evaluated: bool, bounds: tuple[float, float, float]) -> float: ...
    @overload
    def log_delta(self, epsilon: float, evaluated: bool = False, *, bounds: tuple[float, float, float]) -> float: ...
    @overload
    def log_delta(self, epsilon: float, evaluated: bool = False, bounds: None = None) -> Optional[float]: ...
    def log_delta(
        self, epsilon: float, evaluated: bool = False, bounds: Optional[tuple[float, float, float]] = None
    ) -> Optional[float]:
        """The first half of :meth:`evaluate`; None where only the general profile decides.

        ``bounds``: gaussian._log_delta_bounds_scalar(epsilon, μ), if already at hand.
        """
        t = epsilon - 0.0
        if bounds is None:
            bounds = _log_delta_bounds_scalar(t, self.mu) if t >= 0.0 else None
            if bounds is None:
                return None
        evaluation, lower, upper = bounds
        if evaluated:
            gaussian = -math.inf if math.isnan(evaluation) else min(evaluation, 0.0)
        elif self.log_margin > 0.0:
            gaussian = upper
        else:
            gaussian = lower
        if self.log_margin > 0.0 and not evaluated:
            if math.isnan(gaussian) or gaussian == -math.inf:
                gaussian = float(special.log_ndtr(0.5 * self.mu - t / self.mu))
        elif math.isnan(gaussian):
            gaussian = -math.inf
        return _single_log_sum_exp(0.0 + gaussian)

    def evaluate(self, epsilon: float, evaluated: bool = False) -> tuple[float, float]:
        log_delta = self.log_delta(epsilon, evaluated)
        if log_delta is None:
            general: tuple[float, float] = self._general().evaluate(epsilon, evaluated)
            return general
        t = epsilon - 0.0
        log_slope = _single_log_sum_exp(0.0 + t + float(special.log_ndtr(-0.5 * self.mu - t / self.mu)))
        slope = -math.exp(min(log_slope - log_delta, 700.0)) if log_delta > -math.inf else -math.inf
        return log_delta, slope


def _gaussian_epsilon(mu: float, delta: float) -> Optional[Interval]:
    """exact.epsilon for Gaussians alone with composed μ (finite, > 0), step by step; None to take the general path."""
    log_target = math.log(delta)
    margin = _gaussian_margin()
    assert margin is not None  # _gaussians_alone found the margin before this path is taken
    upper_profile, lower_profile = _GaussianProfile(mu, margin), _GaussianProfile(mu, -margin)
    # Nothing sits at +∞, so exact's first test (P[L = ∞] + margin >= δ) fails; the mean finite loss is 0.
    z = max(-float(special.ndtri(min(math.exp(log_target), 0.5))), 0.0)
    start = max(0.5 * mu * mu + z * mu + 0.0, 1e-3)
    if start > exact._LARGEST_SEARCHED:
        return None
    upper, near, far = exact._search(upper_profile, log_target, True, start)
    if math.isinf(upper):
        return None
    near = near if near > 0.0 else far
    start, first = exact._lower_start(lower_profile, log_target, near) if math.isfinite(near) else (near, None)
    lower = exact._search(lower_profile, log_target, False, start, far, first)[0]
    lower = min(lower, upper)
    return Interval(lower, 0.5 * (lower + upper), upper, True, "")


def _gaussian_log_delta_interval(mu: float, epsilon: float) -> Optional[tuple[float, float, float]]:
    """exact.log_delta_interval for Gaussians alone with composed μ (finite, > 0); None to take the general path.

    Its three profile evaluations at ε share one evaluation of the Gaussian core.
    """
    bounds = _log_delta_bounds_scalar(epsilon - 0.0, mu) if epsilon >= 0.0 else None
    if bounds is None:
        return None
    margin = _gaussian_margin()
    assert margin is not None  # _gaussians_alone found the margin before this path is taken
    upper_profile, lower_profile = _GaussianProfile(mu, margin), _GaussianProfile(mu, -margin)
    log_lower = min(lower_profile.log_delta(epsilon, bounds=bounds) + lower_profile.log_margin, 0.0)
    log_upper = min(upper_profile.log_delta(epsilon, bounds=bounds) + margin, 0.0)
    return log_lower, min(max(upper_profile.log_delta(epsilon, True, bounds), log_lower), log_upper), log_upper


def _restate(event: PrivacyEvent, relation: str) -> PrivacyEvent:
    """``event`` with its (innermost) neighbouring relation replaced by ``relation``."""
    if isinstance(event, SelfComposedEvent):
        return SelfComposedEvent(_restate(event.event, relation), event.count)
    if hasattr(event, "neighbouring"):
        # Every event with a neighbouring relation is a dataclass; PrivacyEvent itself is not one to mypy.
        return dataclasses.replace(event, neighbouring=relation)  # type: ignore[type-var]
    return event


def _map(function: Callable[[float], PrivacyGuarantee], values: ArrayLike) -> NDArray[np.object_]:
    """An object array of ``function(v)`` over an array of values, keeping its shape."""
    values = np.asarray(values, dtype=float)
    out = np.empty(values.shape, dtype=object)
    for position, value in np.ndenumerate(values):
        out[position] = function(value)
    return out
