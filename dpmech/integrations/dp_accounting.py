r"""dpmech's certified accounting behind dp_accounting's ``PrivacyAccountant`` interface.

:class:`DpmechAccountant` takes the ``DpEvent``s that dp_accounting's ``PLDAccountant`` and
``RdpAccountant`` take, composes them with ``compose(event, count)``, and answers ``get_epsilon(δ)``
and ``get_delta(ε)`` with the upper end of dpmech's certified interval (method ``auto`` of
:class:`dpmech.PrivacyLedger`: the exact log-space composition where it applies, else the numeric
privacy-loss-distribution engine), never below the truth. Swap it in with three lines::

    from dp_accounting import dp_event
    from dpmech.integrations.dp_accounting import DpmechAccountant
    accountant = DpmechAccountant()                  # was: pld.PLDAccountant()

Events are read as :meth:`dpmech.PrivacyLedger.from_dp_event` reads them under the accountant's
relation (dp_accounting's ``NeighboringRelation``: ``ADD_OR_REMOVE_ONE``, the default, is dpmech's
``"add-remove-one"`` and ``REPLACE_ONE`` its ``"replace-one"``; ``REPLACE_SPECIAL`` has no dpmech
counterpart and is refused). ``supports`` fails closed: an event that has no dpmech counterpart, or
that no certified method can account under the relation (Poisson sampling under replace-one, sampling
without replacement or randomized response under add/remove, nested sampling), is not supported, and
``compose`` raises dp_accounting's ``UnsupportedEventError`` naming the innermost such sub-event.
"""

from __future__ import annotations

import math
from typing import Optional

from dp_accounting import dp_event, privacy_accountant
from dp_accounting.privacy_accountant import NeighboringRelation

from .. import validation as check
from ..accountants import basic
from ..events import ADD_REMOVE_ONE, REPLACE_ONE, NoGuaranteeEvent, NoPrivacyLossEvent
from ..ledger import PrivacyGuarantee, PrivacyLedger

CompositionErrorDetails = privacy_accountant.PrivacyAccountant.CompositionErrorDetails
_Details = Optional[privacy_accountant.PrivacyAccountant.CompositionErrorDetails]  # a refusal, or None

RELATIONS = {
    NeighboringRelation.ADD_OR_REMOVE_ONE: ADD_REMOVE_ONE,
    NeighboringRelation.REPLACE_ONE: REPLACE_ONE,
}
_SAMPLED = (dp_event.PoissonSampledDpEvent, dp_event.SampledWithoutReplacementDpEvent)


# dp_accounting ships no type information, so its PrivacyAccountant is Any to mypy.
class DpmechAccountant(privacy_accountant.PrivacyAccountant):  # type: ignore[misc]
    """A dp_accounting ``PrivacyAccountant`` whose answers are dpmech's certified upper ends.

    ``neighboring_relation``: ``NeighboringRelation.ADD_OR_REMOVE_ONE`` (default) or ``REPLACE_ONE``.
    The events composed so far are dp_accounting's own ``ledger`` (a ``DpEvent``); :meth:`privacy_ledger`
    is the same as a :class:`dpmech.PrivacyLedger`, whose guarantees print their relation.
    """

    def __init__(self,
                 neighboring_relation: NeighboringRelation = NeighboringRelation.ADD_OR_REMOVE_ONE) -> None:
        if neighboring_relation not in RELATIONS:
            raise ValueError(f"neighboring_relation must be one of {', '.join(str(r) for r in RELATIONS)} "
                             f"(got {neighboring_relation!r}; dpmech has no REPLACE_SPECIAL)")
        super().__init__(neighboring_relation)
        # (dp_accounting's composed event, its dpmech ledger), once built
        self._built: tuple[dp_event.DpEvent, PrivacyLedger] | None = None

    @property
    def relation(self) -> str:
        """The dpmech name of the neighbouring relation: ``"add-remove-one"`` or ``"replace-one"``."""
        return RELATIONS[self.neighboring_relation]

    def _unsupported(self, event: dp_event.DpEvent) -> _Details:
        """Why ``event`` cannot be accounted, naming its innermost refused sub-event; None if it can.

        A leaf (or a sampled event whose inner event passes) is tried as a ledger of its own: the
        conversion must succeed and method ``auto`` must find a certified method (``exact`` or
        ``numeric``). ``numeric`` takes every event that ``exact`` takes, so events that pass one by
        one also pass together.
        """
        if isinstance(event, dp_event.ComposedDpEvent):
            for inner in event.events:
                details = self._unsupported(inner)
                if details is not None:
                    return details
            return None
        if isinstance(event, dp_event.SelfComposedDpEvent):
            return self._unsupported(event.event)
        if isinstance(event, _SAMPLED):
            details = self._unsupported(event.event)
            if details is not None:
                return details
        try:
            trial = PrivacyLedger.from_dp_event(event, self.relation)
            trial._resolve("auto", trial._pairs())
        except ValueError as error:
            return CompositionErrorDetails(invalid_event=event, error_message=str(error))
        return None

    def _maybe_compose(self, event: dp_event.DpEvent, count: int,
                       do_compose: bool) -> _Details:
        # The composed events live in the base class's DpEventBuilder (PrivacyAccountant.compose adds
        # each before calling this with do_compose=True); privacy_ledger reads them from there.
        return self._unsupported(event)

    def privacy_ledger(self) -> PrivacyLedger:
        """The events composed so far as a :class:`dpmech.PrivacyLedger` under this accountant's relation."""
        built = self.ledger
        if self._built is None or self._built[0] is not built:
            self._built = (built, PrivacyLedger.from_dp_event(built, self.relation))
        return self._built[1]

    def _kinds(self) -> tuple[bool, bool]:
        """(whether some event carries no guarantee, whether every event is free of privacy loss)."""
        events = [event for event, _ in self.privacy_ledger()._pairs()]
        return (any(isinstance(event, NoGuaranteeEvent) for event in events),
                all(isinstance(event, NoPrivacyLossEvent) for event in events))

    def _pure_epsilon(self) -> float:
        """The pure-DP ε of the events so far, inf if some event (a Gaussian) has none.

        Basic composition, the sum of the events' ε amplified by sampling (Dwork & Roth 2014,
        Thm. 3.16; Li, Qardaji & Su 2012), rounded up (:mod:`dpmech.accountants.basic` at δ = 0):
        the ledger is (ε, 0)-DP at this ε, so it bounds ε(δ) at every δ and δ(ε) is 0 from there on.
        """
        pairs = self.privacy_ledger()._pairs()
        return float(basic.epsilon(pairs, 0.0).upper) if basic.supports(pairs) else math.inf

    def get_guarantee(self, target_delta: float) -> PrivacyGuarantee:
        """The ledger's (ε, ``target_delta``) guarantee with its certified interval and relation; δ in (0, 1)."""
        return self.privacy_ledger().epsilon(target_delta)

    def get_epsilon(self, target_delta: float) -> float:
        """ε at ``target_delta`` ∈ [0, 1], never below the truth.

        The smaller of two proven upper bounds: the upper end of dpmech's certified interval
        (:meth:`get_guarantee`) and the pure-DP ε (:meth:`_pure_epsilon`), which alone answers δ = 0
        (inf when some event has no pure ε). δ = 1 gives 0 (every mechanism is (0, 1)-DP). Events
        without a guarantee make ε infinite at every δ, events without privacy loss leave it 0, as in
        dp_accounting's conventions.
        """
        delta = float(check.single("target_delta", check.in_interval(
            "target_delta", target_delta, 0.0, 1.0, low_open=False, high_open=False)))
        no_guarantee, no_loss = self._kinds()
        if no_guarantee:
            return math.inf
        if no_loss or delta == 1.0:
            return 0.0
        pure = self._pure_epsilon()
        if delta == 0.0:
            return pure
        return min(float(self.get_guarantee(delta).epsilon), pure)

    def get_delta(self, target_epsilon: float) -> float:
        """δ at ``target_epsilon`` >= 0, never below the truth and never 0 for a positive δ.

        0 from the pure-DP ε on (:meth:`_pure_epsilon`), else the upper end of dpmech's certified
        interval. ε = inf is answered where the answer is known without accounting (0 for pure or
        loss-free events, 1 when some event carries no guarantee); otherwise it raises a ValueError
        (dpmech states δ at finite ε).
        """
        epsilon = float(check.single("target_epsilon", check.real_array("target_epsilon", target_epsilon)))
        if not epsilon >= 0.0:
            raise ValueError(f"target_epsilon must be >= 0 (got {target_epsilon!r})")
        no_guarantee, no_loss = self._kinds()
        if no_guarantee:
            return 1.0
        pure = self._pure_epsilon()
        if no_loss or (math.isfinite(pure) and epsilon >= pure):
            return 0.0
        if math.isinf(epsilon):
            raise ValueError("target_epsilon must be finite for events without a pure ε (got inf)")
        return float(self.privacy_ledger().delta(epsilon).delta)
