"""The Laplace release f(D) + Lap(0, b) with ‖f(D) − f(D')‖₁ <= Δ.

Dominating pair: (Lap(0, b), Lap(Δ, b)), symmetric, with privacy loss in
[−Δ/b, Δ/b]; the release is (Δ/b)-DP (Dwork et al. 2006) and that ε is its
basic cost. Group privacy is exact: k steps apart, ‖f(D) − f(D')‖₁ <= kΔ.
The pair has a continuous loss, so the exact accountant does not take it;
``pld`` does (dp_accounting's ``from_laplace_mechanism``). The relation is
the one Δ was computed under.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from .. import validation as check
from .base import EnginePair, FixedCost, PldBuilder, PrivacyEvent, UnboundedPrivacyLoss, additive_noise_pld
from .relations import check_relation


@dataclass(frozen=True)
class LaplaceEvent(PrivacyEvent):
    """One release f(D) + Lap(0, scale) per coordinate with ‖f(D) − f(D')‖₁ <= sensitivity."""

    scale: float
    sensitivity: float = 1.0
    neighbouring: Optional[str] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check.single("scale", check.positive("scale", self.scale)))
        object.__setattr__(self, "sensitivity", check.single("sensitivity", check.positive("sensitivity", self.sensitivity)))
        check_relation(self.neighbouring)

    @property
    def epsilon(self) -> float:
        """Δ/b: the release is pure ε-DP with this ε (may be inf for a tiny scale)."""
        return self.sensitivity / self.scale

    def privacy_loss_pair(self) -> EnginePair:
        """(Lap(1, b), Lap(0, b)) with b = scale/Δ, symmetric (Koskela et al. 2021)."""
        from ..pld.pairs import LaplacePair

        scale = self.scale / self.sensitivity
        if scale == 0.0:
            raise UnboundedPrivacyLoss
        return LaplacePair(scale)

    def basic_cost(self) -> FixedCost:
        return FixedCost(self.epsilon, 0.0)

    def group_form(self, group_size: int) -> "LaplaceEvent":
        return LaplaceEvent(self.scale, group_size * self.sensitivity, self.neighbouring)

    def dp_accounting_pld(self, sampling_probability: float = 1.0) -> PldBuilder:
        """dp_accounting's ``from_laplace_mechanism`` with parameter b/Δ."""

        return additive_noise_pld("from_laplace_mechanism", sampling_probability,
                                  parameter=self.scale / self.sensitivity)

    def dp_accounting_event(self) -> Any:
        """``LaplaceDpEvent(b/Δ)`` (sensitivity 1 in dp_accounting's accountants)."""
        from dp_accounting import dp_event

        return dp_event.LaplaceDpEvent(noise_multiplier=self.scale / self.sensitivity)
