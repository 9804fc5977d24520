"""An event run on a Poisson sample: each record kept independently with probability q.

Relation: defined under add/remove-one, where amplification by Poisson
subsampling is proven (Li, Qardaji & Su 2012 for (ε, δ); Zhu, Dong & Wang
2022, "Optimal accounting of differential privacy via characteristic function", for the
dominating pair: P = (1−q)·B + q·A against B, and the
reverse direction, for the inner pair (A, B)). The subsampled pair is not
symmetric, so accountants must take both directions. Under replace-one the
amplification needs a different pair; this event refuses to be restated
there, and group privacy, for which no theorem is implemented, raises.

Basic cost: an inner (ε, δ) event gives (log(1 + q(e^ε − 1)), qδ).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from .. import validation as check
from .base import (amplified_cost, check_inner_event, EnginePair, FixedCost, PldBuilder, PrivacyEvent, sampled_inner_pair,
                   UnsupportedEvent)
from .relations import ADD_REMOVE_ONE, check_relation


@dataclass(frozen=True)
class PoissonSampledEvent(PrivacyEvent):
    """``event`` applied to a Poisson sample with inclusion probability ``sampling_probability``."""

    event: PrivacyEvent
    sampling_probability: float
    neighbouring: Optional[str] = ADD_REMOVE_ONE

    def __post_init__(self) -> None:
        check_inner_event(self.event, ADD_REMOVE_ONE, "Poisson sampling")
        object.__setattr__(
            self,
            "sampling_probability",
            check.single("sampling_probability", check.in_interval("sampling_probability", self.sampling_probability, 0.0, 1.0,
                                    low_open=True, high_open=False)),
        )
        check_relation(self.neighbouring)
        if self.neighbouring != ADD_REMOVE_ONE:
            raise ValueError("neighbouring: a PoissonSampledEvent is defined under add-remove-one only")

    def describe(self) -> str:
        return f"{type(self).__name__}({self.event.describe()})"

    def privacy_loss_pair(self) -> EnginePair:
        """(qP + (1−q)Q, Q) for the removal and its reverse for the addition (Zhu, Dong & Wang 2022, Thm. 11)."""
        from ..pld.subsampling import poisson_subsampled

        inner = sampled_inner_pair(self.event, ADD_REMOVE_ONE)
        return None if inner is None else poisson_subsampled(inner, self.sampling_probability)

    def basic_cost(self) -> FixedCost:
        return amplified_cost(self.event, self.sampling_probability)

    def dp_accounting_pld(self, sampling_probability: float = 1.0) -> PldBuilder:
        """The inner event's PLD at dp_accounting's ``sampling_prob`` (which holds both directions); not nested."""
        if sampling_probability != 1.0:
            raise UnsupportedEvent(self.describe())
        return self.event.dp_accounting_pld(self.sampling_probability)

    def dp_accounting_event(self) -> Any:
        from dp_accounting import dp_event

        return dp_event.PoissonSampledDpEvent(self.sampling_probability, self.event.dp_accounting_event())
