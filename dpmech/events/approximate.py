"""A release known only to be (ε, δ)-DP.

Dominating pair (Kairouz, Oh & Viswanath 2015, Thm. 2.1; dp_accounting's
``from_privacy_parameters``): the four-point pair
P = (δ, (1−δ)e^ε/(1+e^ε), (1−δ)/(1+e^ε), 0) and Q = P reversed. Under P the
privacy loss is +∞ with probability δ, +ε with probability (1−δ)e^ε/(1+e^ε)
and −ε with probability (1−δ)/(1+e^ε). The pair is symmetric. Its tight lower
bound is 0: the mechanism may reveal nothing.

Basic cost: (ε, δ). Group privacy: (kε, δ·Σ_{i<k} e^{iε}). Chaining
P[M(D_0) ∈ S] <= e^ε P[M(D_1) ∈ S] + δ over k steps gives the geometric sum
(Vadhan 2017, Lemma 2.2), which is at most the commonly quoted k·e^{(k−1)ε}·δ
and equals it at k = 1. Where it reaches 1 there is no guarantee left: a
:class:`~dpmech.events.NoGuaranteeEvent` says so, and a
:class:`~dpmech.NoGuaranteeWarning` is raised, since a ledger that goes on
composing would otherwise only show ε = ∞ at the end.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any, Optional

from .. import validation as check
from .base import EnginePair, FixedCost, LatticeStep, PldBuilder, PrivacyEvent, PrvMechanism, UnsupportedEvent
from .relations import check_relation


@dataclass(frozen=True)
class ApproximateDpEvent(PrivacyEvent):
    """A release known only to be (ε, δ)-DP; accounted through its four-point dominating pair."""

    epsilon: float
    delta: float
    neighbouring: Optional[str] = None
    description: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check.single("epsilon", check.non_negative("epsilon", self.epsilon)))
        object.__setattr__(
            self,
            "delta",
            check.single("delta", check.in_interval("delta", self.delta, 0.0, 1.0, low_open=False, high_open=True)),
        )
        check_relation(self.neighbouring)

    def privacy_loss_pair(self) -> EnginePair:
        """The four-point pair of Kairouz et al. (2015)."""
        from ..pld.pairs import approximate_dp_pair

        pair: EnginePair = approximate_dp_pair(self.epsilon, self.delta)
        return pair

    def lattice_step(self) -> LatticeStep:
        """The finite part of the four-point pair, normalised; its +∞ atom carries δ."""
        if self.epsilon == 0.0:
            return LatticeStep(0.0, -math.inf, 0.0, -math.inf, self.delta)
        log_plus = -math.log1p(math.exp(-self.epsilon))
        return LatticeStep(self.epsilon, log_plus, -math.inf, log_plus - self.epsilon, self.delta)

    def basic_cost(self) -> FixedCost:
        return FixedCost(self.epsilon, self.delta)

    def group_form(self, group_size: int) -> PrivacyEvent:
        """(kε, δ·Σ_{i<k} e^{iε}), or a NoGuaranteeEvent (with a warning) where that δ reaches 1."""
        from ..privacy_warnings import NoGuaranteeWarning
        from .no_guarantee import NoGuaranteeEvent

        k, epsilon = group_size, self.epsilon
        if self.delta == 0.0:
            return ApproximateDpEvent(k * epsilon, 0.0, self.neighbouring, self.description)
        # log Σ_{i<k} e^{iε} = log(e^{kε} − 1) − log(e^ε − 1), in a form that cannot overflow;
        # the factor 1 + 1e-14 keeps float rounding on the conservative side.
        if epsilon < 1e-200:
            # Σ_{i<k} e^{iε} <= k·e^{(k−1)ε}; the quotient form below loses bits for subnormal ε.
            log_growth = math.log(k) + (k - 1) * epsilon
        else:
            # log(e^{kε} − 1) − log(e^ε − 1) with both written as x + log(1 − e^{−x}), since
            # expm1(ε) itself overflows above ε ≈ 709.78.
            log_growth = (k - 1) * epsilon + math.log(-math.expm1(-k * epsilon)) - math.log(-math.expm1(-epsilon))
        log_delta = math.log(self.delta) + log_growth
        delta = math.exp(min(log_delta, 0.0)) * (1.0 + 1e-14)
        if delta >= 1.0:
            reason = f"group of {k} records: delta {self.delta:g} grows to {delta:g} >= 1"
            warnings.warn(f"group privacy: {reason}, no guarantee is left", NoGuaranteeWarning, stacklevel=3)
            return NoGuaranteeEvent(reason)
        return ApproximateDpEvent(k * epsilon, delta, self.neighbouring, self.description)

    def dp_accounting_pld(self, sampling_probability: float = 1.0) -> PldBuilder:
        """``from_privacy_parameters`` (the four-point pair); left out of the optimistic side, since an (ε, δ)-DP
        mechanism may reveal nothing. dp_accounting has no sampled form of it."""
        if sampling_probability != 1.0:
            raise UnsupportedEvent(self.describe())

        def build(pessimistic: bool, discretization: float) -> Any:
            from dp_accounting.pld import common
            from dp_accounting.pld import privacy_loss_distribution as pld_library

            if not pessimistic:
                return None
            return pld_library.from_privacy_parameters(
                common.DifferentialPrivacyParameters(self.epsilon, self.delta),
                value_discretization_interval=discretization,
            )

        return build

    def prv_mechanism(self) -> PrvMechanism:
        """prv_accountant's ``ApproximateDPMechanism``, the four-point pair."""
        import prv_accountant

        return PrvMechanism(prv_accountant.ApproximateDPMechanism(epsilon=self.epsilon, delta=self.delta), True)
