"""Pure ε-DP releases: K-ary randomized response, or any ε-DP mechanism.

Dominating pairs. K-ary randomized response keeps the true value with
probability p = e^ε/(e^ε+K−1) and otherwise answers one of the other K−1
values, each with probability q = 1/(e^ε+K−1). For neighbours x, x' its pair
is P = (p, q, q, …), Q = (q, p, q, …): under P the privacy loss is +ε with
probability p, −ε with probability q and 0 with probability (K−2)q. The pair
is symmetric. A generic ε-DP mechanism (``num_outcomes=None``) is dominated by
binary randomized response (K = 2), the worst ε-DP pair (Kairouz, Oh &
Viswanath 2015, Thm. 2.1); its tight lower bound is 0, since an ε-DP
mechanism may reveal nothing.

Basic cost: (ε, 0). Group privacy: kε (Dwork & Roth 2014, Thm. 2.2); the
randomized-response structure does not survive, so ``num_outcomes`` is
dropped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

from .. import validation as check
from .base import EnginePair, FixedCost, LatticeStep, PldBuilder, PrivacyEvent, PrvMechanism, UnsupportedEvent
from .relations import check_relation


@dataclass(frozen=True)
class PureEpsilonEvent(PrivacyEvent):
    """A pure ε-DP release.

    With ``num_outcomes = K`` it is K-ary randomized response (or a mechanism
    that K-ary randomized response dominates), accounted exactly through that
    pair; with ``None`` it is any ε-DP mechanism, accounted through binary
    randomized response (see the module docstring).
    """

    epsilon: float
    num_outcomes: Optional[int] = None
    neighbouring: Optional[str] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check.single("epsilon", check.positive("epsilon", self.epsilon)))
        if self.num_outcomes is not None:
            object.__setattr__(self, "num_outcomes", check.integer_scalar("num_outcomes", self.num_outcomes, 2))
        check_relation(self.neighbouring)

    @property
    def keep_probability(self) -> float:
        """Probability e^ε/(e^ε+K−1) that K-ary randomized response keeps the true value."""
        outcomes = 2 if self.num_outcomes is None else self.num_outcomes
        return 1.0 / (1.0 + (outcomes - 1) * math.exp(-self.epsilon))

    def privacy_loss_pair(self) -> EnginePair:
        """K-ary randomized response's pair (binary for a generic ε-DP event)."""
        from ..pld.pairs import randomized_response_pair

        pair: EnginePair = randomized_response_pair(self.epsilon, self.num_outcomes or 2)
        return pair

    def lattice_step(self) -> LatticeStep:
        """Loss +ε with probability p, −ε with q, 0 with (K−2)q (see the module docstring), in logs."""
        outcomes = self.num_outcomes or 2
        log_keep = -math.log1p((outcomes - 1) * math.exp(-self.epsilon))
        log_other = log_keep - self.epsilon
        log_zero = math.log(outcomes - 2) + log_other if outcomes > 2 else -math.inf
        return LatticeStep(self.epsilon, log_keep, log_zero, log_other, 0.0)

    def basic_cost(self) -> FixedCost:
        return FixedCost(self.epsilon, 0.0)

    def group_form(self, group_size: int) -> "PureEpsilonEvent":
        return PureEpsilonEvent(group_size * self.epsilon, None, self.neighbouring)

    def dp_accounting_pld(self, sampling_probability: float = 1.0) -> PldBuilder:
        """``from_randomized_response`` with noise parameter K/(e^ε+K−1); on the optimistic side only for a
        K-ary event (a generic ε-DP mechanism may reveal nothing). dp_accounting has no sampled form of it."""
        if sampling_probability != 1.0:
            raise UnsupportedEvent(self.describe())

        def build(pessimistic: bool, discretization: float) -> Any:
            from dp_accounting.pld import privacy_loss_distribution as pld_library

            if not pessimistic and not self.num_outcomes:
                return None
            outcomes = self.num_outcomes or 2
            return pld_library.from_randomized_response(
                noise_parameter=outcomes / (math.exp(self.epsilon) + outcomes - 1),
                num_buckets=outcomes,
                pessimistic_estimate=pessimistic,
                value_discretization_interval=discretization,
            )

        return build

    def prv_mechanism(self) -> PrvMechanism:
        """prv_accountant's ``PureDPMechanism``: binary randomized response, which dominates the K-ary one
        (prv_accountant has no K-ary randomized response)."""
        import prv_accountant

        return PrvMechanism(prv_accountant.PureDPMechanism(eps=self.epsilon), (self.num_outcomes or 2) == 2)

    def dp_accounting_event(self) -> Any:
        """``RandomizedResponseDpEvent`` with noise parameter K/(e^ε+K−1): its REPLACE_ONE pair is K-ary RR's."""
        from dp_accounting import dp_event

        outcomes = self.num_outcomes or 2
        return dp_event.RandomizedResponseDpEvent(
            noise_parameter=outcomes / (math.exp(self.epsilon) + outcomes - 1), num_buckets=outcomes
        )
