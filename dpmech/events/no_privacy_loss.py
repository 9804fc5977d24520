"""A release that reveals nothing about the data (its output distribution is the same on every dataset).

Its privacy loss is 0 with probability 1 under every neighbouring relation, so
it adds nothing to any composition; RRTop-k with k = 1, which always outputs
the prior's top label, is one. Every accountant leaves it out (its pair is
None, its basic cost (0, 0)), and a group of records learns nothing from it
either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .base import FixedCost, PldBuilder, PrivacyEvent, UnsupportedEvent


@dataclass(frozen=True)
class NoPrivacyLossEvent(PrivacyEvent):
    """A release whose output does not depend on the data: (0, 0)-DP, exactly."""

    description: str = ""

    def privacy_loss_pair(self) -> None:
        return None

    def lattice_step(self) -> None:
        return None

    def composed(self, count: int) -> "NoPrivacyLossEvent":
        return self

    def basic_cost(self) -> FixedCost:
        return FixedCost(0.0, 0.0)

    def group_form(self, group_size: int) -> "NoPrivacyLossEvent":
        return self

    def dp_accounting_pld(self, sampling_probability: float = 1.0) -> PldBuilder:
        if sampling_probability != 1.0:
            raise UnsupportedEvent(self.describe())
        return lambda pessimistic, discretization: None

    def prv_mechanism(self) -> None:
        return None

    def dp_accounting_event(self) -> Any:
        from dp_accounting import dp_event

        return dp_event.NoOpDpEvent()
