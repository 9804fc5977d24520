"""A release with no formal DP guarantee.

No accountant takes it: a ledger holding one reports ε = ∞ and δ = 1 before
asking any (:attr:`~dpmech.events.base.PrivacyEvent.missing_guarantee`). A group
of records has no guarantee either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .base import PrivacyEvent


@dataclass(frozen=True)
class NoGuaranteeEvent(PrivacyEvent):
    """A release with no formal DP guarantee; any ledger holding one reports ε = ∞ and δ = 1."""

    reason: str

    @property
    def missing_guarantee(self) -> str:
        return self.reason

    def group_form(self, group_size: int) -> "NoGuaranteeEvent":
        return self

    def dp_accounting_event(self) -> Any:
        from dp_accounting import dp_event

        return dp_event.NonPrivateDpEvent()
