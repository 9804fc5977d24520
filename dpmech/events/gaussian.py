"""The Gaussian release f(D) + N(0, σ² I) with ‖f(D) − f(D')‖₂ <= Δ.

Dominating pair: (N(0, σ²), N(Δ, σ²)), whose privacy loss under the first is
N(μ²/2, μ²) with μ = Δ/σ (Balle & Wang 2018; Dong, Roth & Su 2019, μ-GDP).
The pair is symmetric, so both directions give the same profile. The
relation is the one Δ was computed under.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .. import validation as check
from .relations import check_relation


@dataclass(frozen=True)
class GaussianEvent:
    """One release f(D) + N(0, σ² I) with ‖f(D) − f(D')‖₂ <= sensitivity."""

    sigma: float
    sensitivity: float = 1.0
    neighbouring: Optional[str] = None

    def __post_init__(self):
        object.__setattr__(self, "sigma", check.single("sigma", check.positive("sigma", self.sigma)))
        object.__setattr__(self, "sensitivity", check.single("sensitivity", check.positive("sensitivity", self.sensitivity)))
        check_relation(self.neighbouring)

    @property
    def mu(self) -> float:
        """Δ/σ: the release is μ-GDP (Dong, Roth & Su 2019) with this μ (may be inf for a tiny σ)."""
        return self.sensitivity / self.sigma
