"""An epoch of random allocation: each record is used in ``num_selected`` of ``num_steps`` steps, chosen uniformly.

Recorded once per epoch: ``ledger.record(RandomAllocationEvent(GaussianEvent(sigma), num_steps=t),
count=epochs)``. The inner event is the release of one step (a ``GaussianEvent``: the sum of the
clipped contributions of the records allocated to that step plus N(0, σ²), with the sensitivity
of one record); every record takes part in exactly ``num_selected`` steps of the epoch, the steps
drawn uniformly at random and independently of the data (Feldman & Shenfeld 2025, "Privacy
amplification by random allocation"; balls-in-bins batching, Chua et al. 2025, is
``num_selected = 1``).

Relation: add/remove-one only, where the amplification is proven. For ``num_selected = 1`` and a
Gaussian step with μ = Δ/σ, Feldman & Shenfeld (2025) show that the pair
Q = N(0, I_t), P = (1/t) Σ_i N(μe_i, I_t) dominates the epoch in the remove direction and
(Q, P) in the add direction: its privacy loss is log S with S = (1/t) Σ_i exp(μY_i − μ²/2),
Y ~ Q (see :mod:`dpmech.pld.allocation`, which accounts it with certified bounds). Under
replace-one the amplification needs another pair; like Poisson sampling, this event refuses
to be restated there.

``num_selected > 1`` is refused: dpmech implements no proven dominating pair for it.

Basic cost: the inner event's own. With the record present, the epoch is a post-processing of
the inner mechanism run once on the record (which step it went to is extra, data-independent
information), so every (ε, δ) of the inner event holds for the epoch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

from .. import validation as check
from .base import BasicCost, EnginePair, PrivacyEvent, UnboundedPrivacyLoss
from .gaussian import GaussianEvent
from .relations import ADD_REMOVE_ONE, check_relation


@dataclass(frozen=True)
class RandomAllocationEvent(PrivacyEvent):
    """One epoch of ``num_steps`` releases of ``event``, each record allocated to ``num_selected`` of them."""

    event: GaussianEvent
    num_steps: int
    num_selected: int = 1
    neighbouring: Optional[str] = ADD_REMOVE_ONE

    def __post_init__(self) -> None:
        if not isinstance(self.event, GaussianEvent):
            raise ValueError(
                f"event must be a GaussianEvent, the one step whose random allocation has a proven dominating pair "
                f"(got {type(self.event).__name__})"
            )
        if self.event.neighbouring not in (None, ADD_REMOVE_ONE):
            raise ValueError(f"event: its relation must be add-remove-one, that of random allocation "
                             f"(got {self.event.neighbouring})")
        object.__setattr__(self, "num_steps", check.integer_scalar("num_steps", self.num_steps, 1))
        object.__setattr__(self, "num_selected", check.integer_scalar("num_selected", self.num_selected, 1))
        if self.num_selected > 1:
            raise ValueError(
                f"num_selected must be 1 (got {self.num_selected}): dpmech implements no proven dominating pair "
                "for a record used in several steps of an epoch"
            )
        check_relation(self.neighbouring)
        if self.neighbouring != ADD_REMOVE_ONE:
            raise ValueError("neighbouring: a RandomAllocationEvent is defined under add-remove-one only")

    def privacy_loss_pair(self) -> EnginePair:
        """Feldman & Shenfeld's (remove, add) pairs, bounded by the lattice pairs of :mod:`dpmech.pld.allocation`."""
        from ..pld.allocation import random_allocation

        if not math.isfinite(self.event.mu):
            raise UnboundedPrivacyLoss
        return random_allocation(self.event.mu, self.num_steps)

    def basic_cost(self) -> BasicCost:
        """The inner release's own cost (see the module docstring)."""
        return self.event.basic_cost()

    def dp_accounting_event(self) -> Any:
        # Exported as dp_accounting's NonPrivateDpEvent (ε = ∞), as before the hooks: never under-stated.
        from dp_accounting import dp_event

        return dp_event.NonPrivateDpEvent()
