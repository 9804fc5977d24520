"""A release with no formal DP guarantee."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NoGuaranteeEvent:
    """A release with no formal DP guarantee; any ledger holding one reports ε = ∞ and δ = 1."""

    reason: str
