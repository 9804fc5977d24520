"""An event run on a uniformly random subset of ``sample_size`` of the ``source_size`` records.

Relation: replace-one (the sample size is fixed, so a replacement is the
natural neighbour). Amplification (Balle, Barthe & Gaboardi 2018, Thm. 9):
an inner (ε, δ) event under replace-one gives
(log(1 + (m/n)(e^ε − 1)), (m/n)δ), its basic cost. This is the mechanism
behind NFDP (:mod:`dpmech.nfdp`). Group privacy has no implemented theorem
and raises; an add/remove statement is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .. import validation as check
from .base import amplified_cost, check_inner_event, EnginePair, FixedCost, PrivacyEvent, sampled_inner_pair
from .relations import REPLACE_ONE, check_relation


@dataclass(frozen=True)
class SampledWithoutReplacementEvent(PrivacyEvent):
    """``event`` applied to a uniform sample of ``sample_size`` records out of ``source_size``."""

    event: PrivacyEvent
    sample_size: int
    source_size: int
    neighbouring: Optional[str] = REPLACE_ONE

    def __post_init__(self) -> None:
        check_inner_event(self.event, REPLACE_ONE, "sampling without replacement")
        object.__setattr__(self, "sample_size", check.integer_scalar("sample_size", self.sample_size, 1))
        object.__setattr__(self, "source_size", check.integer_scalar("source_size", self.source_size, 1))
        if self.sample_size > self.source_size:
            raise ValueError(
                f"sample_size must be at most source_size = {self.source_size} (got {self.sample_size})"
            )
        check_relation(self.neighbouring)
        if self.neighbouring != REPLACE_ONE:
            raise ValueError("neighbouring: a SampledWithoutReplacementEvent is defined under replace-one only")

    @property
    def sampling_fraction(self) -> float:
        return self.sample_size / self.source_size

    def describe(self) -> str:
        return f"{type(self).__name__}({self.event.describe()})"

    def privacy_loss_pair(self) -> EnginePair:
        """The mixture pair with γ = m/n in both orders (Balle, Barthe & Gaboardi 2018, Thm. 10; Zhu et al. 2022)."""
        from ..pld.subsampling import sampled_without_replacement

        inner = sampled_inner_pair(self.event, REPLACE_ONE)
        return None if inner is None else sampled_without_replacement(inner, self.sample_size, self.source_size)

    def basic_cost(self) -> FixedCost:
        return amplified_cost(self.event, self.sampling_fraction)
