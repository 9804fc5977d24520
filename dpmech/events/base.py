"""What every event answers: the hooks through which accountants read an event's mathematics.

An event module states its own dominating pair, fixed (basic) cost and group form as methods of
its class; accountants (:mod:`dpmech.accountants`) ask the event and never test its type. A hook
an event has no mathematics for raises :class:`UnsupportedEvent` (a ``ValueError``), which every
accountant turns into a refusal naming the event, so a new event type needs its own module, its
export and its test, and nothing else (in the manner of dp_accounting's ``DpEvent`` classes, whose
accountants dispatch on them; here the mathematics sits with the event instead).

The hooks, one per question an accountant asks:

* :meth:`PrivacyEvent.gaussian_mu`: μ if the event is exactly a μ-GDP Gaussian release, which
  accountants merge into one Gaussian (Dong, Roth & Su 2019, Cor. 3.3), else None;
* :meth:`PrivacyEvent.privacy_loss_pair`: the dominating pair for dpmech's numeric engine
  (:mod:`dpmech.pld`), one symmetric :class:`~dpmech.pld.pairs.Pair` or the (remove, add)
  directions, or None when the event reveals nothing;
* :meth:`PrivacyEvent.lattice_step`: for the exact accountant, a pair whose privacy loss takes the
  values ε·{+1, 0, −1} and +∞ (:class:`LatticeStep`), or None when the event reveals nothing;
* :meth:`PrivacyEvent.basic_cost`: a fixed (ε, δ) (:class:`FixedCost`) or a curve with
  ``epsilon(delta)`` and ``log_delta(epsilon)`` (:class:`CostCurve`), for basic composition;
* :meth:`PrivacyEvent.group_form`: the event for neighbours k records apart;
* :meth:`PrivacyEvent.composed`: ``count`` repetitions as one release of the same kind (a sampled
  event's inner self-composition);
* :meth:`PrivacyEvent.dp_accounting_pld` and :meth:`PrivacyEvent.prv_mechanism`: the event in the
  terms of dp_accounting's and prv_accountant's libraries;
* :meth:`PrivacyEvent.dp_accounting_event`: the dp_accounting ``DpEvent`` it exports as.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Optional, Protocol, Union

if TYPE_CHECKING:
    from ..pld.pairs import Pair


class UnsupportedEvent(ValueError):
    """The event has no mathematics for the hook asked (an accountant refuses it by name)."""


class UnboundedPrivacyLoss(Exception):
    """The event's privacy loss is unbounded (a noise scale that underflows against its sensitivity)."""


@dataclass(frozen=True)
class LatticeStep:
    """A finite-support pair: privacy loss ε·{+1, 0, −1} with these log-probabilities, plus +∞ with mass δ."""

    epsilon: float
    log_plus: float
    log_zero: float
    log_minus: float
    delta: float


class FixedCost(NamedTuple):
    """An event's own (ε, δ) for basic composition."""

    epsilon: float
    delta: float


class CostCurve(Protocol):
    """An event whose basic cost is a whole curve δ(ε): both directions, each never understated."""

    def epsilon(self, delta: float) -> float:
        """An ε (rounded up) for which the event is (ε, ``delta``)-DP."""

    def log_delta(self, epsilon: float) -> float:
        """log δ (rounded up) for which the event is (``epsilon``, δ)-DP."""


class PrvMechanism(NamedTuple):
    """prv_accountant's mechanism for an event; ``own_pair`` False when it only dominates the event's pair."""

    mechanism: Any
    own_pair: bool


BasicCost = Union[FixedCost, CostCurve]
# The numeric engine's entry for one event: a symmetric pair, the (remove, add) pairs, or None (no loss).
EnginePair = Union["Pair", tuple["Pair", "Pair"], None]
# (pessimistic, discretization) -> a dp_accounting PrivacyLossDistribution, or None to leave the event out.
PldBuilder = Callable[[bool, float], Any]


def additive_noise_pld(constructor: str, sampling_probability: float, **parameters: float) -> PldBuilder:
    """A builder calling dp_accounting's ``privacy_loss_distribution.<constructor>`` (``from_gaussian_mechanism``,
    ``from_laplace_mechanism``) with ``parameters``, the sampling probability, and connect-the-dots on the
    pessimistic side, as the additive-noise events share."""

    def build(pessimistic: bool, discretization: float) -> Any:
        from dp_accounting.pld import privacy_loss_distribution as pld_library

        return getattr(pld_library, constructor)(
            pessimistic_estimate=pessimistic,
            value_discretization_interval=discretization,
            sampling_prob=sampling_probability,
            use_connect_dots=pessimistic,
            **parameters,
        )

    return build


class PrivacyEvent:
    """Base class of dpmech's events; each hook answers for one accountant or raises :class:`UnsupportedEvent`."""

    __slots__ = ()

    def describe(self) -> str:
        """The event's kind, as refusals name it (a sampled event names its inner event too)."""
        return type(self).__name__

    def flattened(self) -> list[tuple[PrivacyEvent, int]]:
        """The (base event, count) parts whose adaptive composition is the event or dominates it, self-compositions
        multiplied out: [(self, 1)] for a base event. Most events have one part; an epoch of k-of-t random
        allocation with k not dividing t has two (see :mod:`dpmech.events.random_allocation`). Readers take the
        parts through :func:`flattened_parts`."""
        return [(self, 1)]

    @property
    def parts_are_tight(self) -> bool:
        """Whether the composition of the :meth:`flattened` parts is the event's own tight pair (True), or only
        dominates it (False): then an accountant's upper end still bounds the event, but its lower end is the
        parts', not a lower bound of the event, and the ledger does not call the interval certified."""
        return True

    @property
    def missing_guarantee(self) -> Optional[str]:
        """Why the event has no formal DP guarantee at all, or None when it has one."""
        return None

    def gaussian_mu(self) -> Optional[float]:
        """μ = Δ/σ when the event is exactly one Gaussian release, else None."""
        return None

    def privacy_loss_pair(self) -> EnginePair:
        """The dominating pair for :mod:`dpmech.pld`: a symmetric Pair, a (remove, add) tuple, or None (no loss).

        Raises :class:`UnsupportedEvent`, or :class:`UnboundedPrivacyLoss` for an infinite loss.
        """
        raise UnsupportedEvent(self.describe())

    def lattice_step(self) -> Optional[LatticeStep]:
        """The exact accountant's finite pair (see :class:`LatticeStep`), None when the event reveals nothing."""
        raise UnsupportedEvent(self.describe())

    def basic_cost(self) -> BasicCost:
        """The event's own (ε, δ), or its δ(ε) curve, for basic composition."""
        raise UnsupportedEvent(self.describe())

    def group_form(self, group_size: int) -> PrivacyEvent:
        """The event for neighbours that differ in ``group_size`` >= 2 records, under the event's own relation."""
        raise ValueError(
            f"group_size: no group-privacy theorem for {type(self).__name__} is implemented, so it cannot be "
            f"stated for groups of {group_size} records (nor enter a replace-one ledger from add-remove-one)"
        )

    def composed(self, count: int) -> PrivacyEvent:
        """``count`` repetitions of the event as one release, where that is again a base event."""
        if count == 1:
            return self
        raise UnsupportedEvent(f"SelfComposedEvent({self.describe()})")

    def dp_accounting_pld(self, sampling_probability: float = 1.0) -> PldBuilder:
        """A builder of dp_accounting's PLD of the event (Poisson-sampled at the given rate); building is deferred,
        so that asking is a dry run. The builder returns None on the optimistic side (pessimistic False) for an
        event whose optimistic PLD is no lower bound."""
        raise UnsupportedEvent(self.describe())

    def prv_mechanism(self) -> Optional[PrvMechanism]:
        """prv_accountant's mechanism for the event, or None when the event reveals nothing."""
        raise UnsupportedEvent(self.describe())

    def dp_accounting_event(self) -> Any:
        """The dp_accounting ``DpEvent`` whose dominating pair is this one's or dominates it.

        By default ``UnsupportedDpEvent``, which dp_accounting's accountants refuse rather than mis-account.
        """
        from dp_accounting import dp_event

        return dp_event.UnsupportedDpEvent()


def flattened_parts(event: PrivacyEvent) -> list[tuple[PrivacyEvent, int]]:
    """``event.flattened()``, as every reader of it takes it: the list of (base event, count) parts.

    Before the parts of random allocation, :meth:`PrivacyEvent.flattened` returned one (event, count) tuple. An
    event of another package that still overrides it so is read, for one release, as the one part it names, with
    a DeprecationWarning charged to its override (so the default filters show it once per class).
    """
    parts = event.flattened()
    if isinstance(parts, tuple) and len(parts) == 2 and isinstance(parts[0], PrivacyEvent):
        message = (f"{type(event).__qualname__}.flattened() returned one (event, count) tuple; it must return a list "
                   f"of (event, count) parts, here [({parts[0].describe()}, {parts[1]!r})]: the tuple is read as that "
                   "one part for this release only")
        override = getattr(type(event).flattened, "__code__", None)
        if override is None:
            warnings.warn(message, DeprecationWarning, stacklevel=2)
        else:
            namespace = type(event).flattened.__globals__
            warnings.warn_explicit(message, DeprecationWarning, override.co_filename, override.co_firstlineno,
                                   module=type(event).__module__,
                                   registry=namespace.setdefault("__warningregistry__", {}), module_globals=namespace)
        return [parts]
    return parts


def check_inner_event(event: object, relation: str, sampling: str) -> None:
    """Refuse a sampled event's inner ``event`` that is not a dpmech event, or that has a part stated under
    another relation than ``relation``, the one the ``sampling``'s amplification theorem takes its inner pair under
    (ValueError naming ``event``).

    A guarantee under one relation does not give the other's at the same cost: a sum of values in [−1, 1] with
    Laplace noise of scale 1 is 1-DP under add/remove-one and only 2-DP under replace-one, and a release of |D|
    is 0-DP under replace-one and not DP under add/remove-one. Each part's cost is read under the sampling's
    relation by every method (the basic one included), so an inner event is refused here, before any method.
    """
    if not isinstance(event, PrivacyEvent):
        raise ValueError(f"event must be a dpmech event (got {type(event).__name__})")
    for base, _ in flattened_parts(event):
        stated = getattr(base, "neighbouring", None)
        if stated not in (None, relation):
            raise ValueError(f"event: its relation must be {relation}, that of {sampling} (got {base.describe()} under "
                             f"{stated}); state the inner event's cost under {relation}"
                             + (" (an add-remove-one cost holds under replace-one for groups of two: group_privacy(event, 2), "
                                "stated under replace-one)" if relation == "replace-one" else ""))


def sampled_inner_pair(inner: PrivacyEvent, relation: str) -> Optional[Pair]:
    """The symmetric pair of a sampled event's inner event, None if it reveals nothing.

    Self-compositions are merged where the repetitions are one release of the same kind (Gaussians:
    μ√k); the inner event must be stated under the sampling's own ``relation`` (the amplification
    theorems take the inner pair under it) and have one symmetric pair (no nested sampling).
    """
    from ..pld.pairs import Pair

    parts = flattened_parts(inner)
    if len(parts) != 1:  # the amplification theorems take one pair; a composition of two kinds has none here
        raise UnsupportedEvent(inner.describe())
    base, count = parts[0]
    if getattr(base, "neighbouring", None) not in (None, relation):
        raise UnsupportedEvent(base.describe())
    pair = base.composed(count).privacy_loss_pair()
    if pair is not None and not isinstance(pair, Pair):
        raise UnsupportedEvent(base.describe())
    return pair


def amplified_cost(inner: PrivacyEvent, rate: float) -> FixedCost:
    """(log(1 + r(e^ε − 1)), rδ) of an inner fixed cost (ε, δ) at sampling rate r, rounded up."""
    import math

    cost = inner.basic_cost()
    if not isinstance(cost, FixedCost):
        raise UnsupportedEvent(inner.describe())
    epsilon = math.nextafter(math.log1p(rate * math.expm1(cost.epsilon)), math.inf)
    delta = math.nextafter(rate * cost.delta, math.inf) if cost.delta else 0.0
    return FixedCost(epsilon, delta)
