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
from typing import Optional

from .. import validation as check
from .relations import check_relation


@dataclass(frozen=True)
class LaplaceEvent:
    """One release f(D) + Lap(0, scale) per coordinate with ‖f(D) − f(D')‖₁ <= sensitivity."""

    scale: float
    sensitivity: float = 1.0
    neighbouring: Optional[str] = None

    def __post_init__(self):
        object.__setattr__(self, "scale", check.single("scale", check.positive("scale", self.scale)))
        object.__setattr__(self, "sensitivity", check.single("sensitivity", check.positive("sensitivity", self.sensitivity)))
        check_relation(self.neighbouring)

    @property
    def epsilon(self) -> float:
        """Δ/b: the release is pure ε-DP with this ε (may be inf for a tiny scale)."""
        return self.sensitivity / self.scale
