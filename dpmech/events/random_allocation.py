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

``num_selected = k > 1`` (k <= t) is accounted, with t = k·m + r and 0 <= r < k, as r adaptive epochs of
1-of-(m + 1) random allocation and k − r of 1-of-m (for k dividing t, k epochs of 1-of-(t/k): the reduction
pld-accounting 2.0 also makes, stated there without proof). Proof. Draw a uniform permutation π of the t steps,
cut it into r blocks of m + 1 positions followed by k − r blocks of m (r(m + 1) + (k − r)m = t, and m >= 1 since
k <= t), and pick one step in each block uniformly and independently. The k-set picked is uniform: for every fixed
permutation σ of the steps, σ∘π is again a uniform permutation and the block sizes do not depend on the steps'
labels, so the picked set's law is invariant under σ, and the only permutation-invariant law on k-subsets is the
uniform one (the permutations act transitively on them). So the differing record's k-set may be drawn this way
(the other records' sets are independent of it and of the data, and may be revealed as in the k = 1 case). Given
π, which is independent of the data, so that revealing it to the adversary can only weaken the guarantee, the epoch is the
concurrent composition of k interactive mechanisms: block j answers the steps of its block, in whatever order and
interleaving with the other blocks the training asks for them, with the record in exactly one uniform step of the
block. Each is an adaptive 1-of-(block size) random allocation, f-DP with f the trade-off of the pair above for
that size, in each direction. Concurrent composition of interactive f_i-DP mechanisms is (⊗_i f_i)-DP (Vadhan &
Zhang, "Concurrent composition theorems for differential privacy", STOC 2023; Lyu, "Composition theorems for
interactive differential privacy", NeurIPS 2022, for (ε, δ)), which is the trade-off of the product of the pairs:
the composition of r epochs of 1-of-(m + 1) and k − r of 1-of-m dominates. Forgetting π is post-processing. ∎
:meth:`RandomAllocationEvent.flattened` returns these parts, which every accountant composes.

Basic cost: the inner event's own, per 1-of-(block size) epoch of the parts. With the record present, the epoch is a post-processing of
the inner mechanism run once on the record (which step it went to is extra, data-independent
information), so every (ε, δ) of the inner event holds for the epoch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

from .. import validation as check
from .base import BasicCost, EnginePair, PrivacyEvent, UnboundedPrivacyLoss, UnsupportedEvent
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
        if self.num_selected > self.num_steps:
            raise ValueError(f"num_selected must be at most num_steps = {self.num_steps}, the steps a record can be "
                             f"used in (got {self.num_selected})")
        check_relation(self.neighbouring)
        if self.neighbouring != ADD_REMOVE_ONE:
            raise ValueError("neighbouring: a RandomAllocationEvent is defined under add-remove-one only")

    def flattened(self) -> list[tuple[PrivacyEvent, int]]:
        """[(1-of-(m + 1) epoch, r), (1-of-m epoch, k − r)] for t = k·m + r, the parts with a positive count: the
        reduction of the module docstring; [(self, 1)] for k = 1."""
        if self.num_selected == 1:
            return [(self, 1)]
        size, longer = divmod(self.num_steps, self.num_selected)
        parts: list[tuple[PrivacyEvent, int]] = [(RandomAllocationEvent(self.event, size), self.num_selected - longer)]
        if longer:
            parts.insert(0, (RandomAllocationEvent(self.event, size + 1), longer))
        return parts

    @property
    def parts_are_tight(self) -> bool:
        """True for k = 1 (Feldman & Shenfeld's pair, realised by a record whose neighbours contribute nothing) and
        k = t (t Gaussian releases); for 1 < k < t the blocks' composition strictly dominates the k-of-t pair (2 of
        5 steps at σ = 1: δ(0) 0.3844 against a true 0.3725 ± 0.0005 by Monte Carlo), so only its upper end holds."""
        return self.num_selected in (1, self.num_steps)

    def privacy_loss_pair(self) -> EnginePair:
        """Feldman & Shenfeld's (remove, add) pairs, bounded by the lattice pairs of :mod:`dpmech.pld.allocation`."""
        from ..pld.allocation import random_allocation

        if self.num_selected > 1:
            # Only a 1-of-m epoch has a pair; accountants reach the parts through flattened().
            raise UnsupportedEvent(f"{self.describe()} with num_selected > 1 (account its flattened() form)")
        if not math.isfinite(self.event.mu):
            raise UnboundedPrivacyLoss
        return random_allocation(self.event.mu, self.num_steps)

    def basic_cost(self) -> BasicCost:
        """The inner release's own cost (see the module docstring), per 1-of-m epoch of :meth:`flattened`."""
        if self.num_selected > 1:
            raise UnsupportedEvent(f"{self.describe()} with num_selected > 1 (account its flattened() form)")
        return self.event.basic_cost()

    def dp_accounting_event(self) -> Any:
        # Exported as dp_accounting's NonPrivateDpEvent (ε = ∞), as before the hooks: never under-stated.
        from dp_accounting import dp_event

        return dp_event.NonPrivateDpEvent()
