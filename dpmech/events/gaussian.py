"""The Gaussian release f(D) + N(0, σ² I) with ‖f(D) − f(D')‖₂ <= Δ.

Dominating pair: (N(0, σ²), N(Δ, σ²)), whose privacy loss under the first is
N(μ²/2, μ²) with μ = Δ/σ (Balle & Wang 2018; Dong, Roth & Su 2019, μ-GDP).
The pair is symmetric, so both directions give the same profile. The
relation is the one Δ was computed under. Group privacy is exact: k steps
apart, ‖f(D) − f(D')‖₂ <= kΔ by the triangle inequality, so the release is the
Gaussian mechanism with sensitivity kΔ (DP-Helmet Cor. 5.4). Basic cost: the
whole curve δ(ε) (Balle & Wang 2018), evaluated exactly where basic
composition splits its budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

from .. import validation as check
from .base import EnginePair, PldBuilder, PrivacyEvent, UnboundedPrivacyLoss, additive_noise_pld
from .relations import check_relation


@dataclass(frozen=True)
class GaussianCostCurve:
    """The Gaussian mechanism's tight δ(ε) and its inverse, for basic composition."""

    sigma: float
    sensitivity: float

    def epsilon(self, delta: float) -> float:
        from ..gaussian import gaussian_epsilon

        return gaussian_epsilon(delta, self.sigma, self.sensitivity)

    def log_delta(self, epsilon: float) -> float:
        from ..gaussian import gaussian_log_delta

        return gaussian_log_delta(epsilon, self.sigma, self.sensitivity)


@dataclass(frozen=True)
class GaussianEvent(PrivacyEvent):
    """One release f(D) + N(0, σ² I) with ‖f(D) − f(D')‖₂ <= sensitivity."""

    sigma: float
    sensitivity: float = 1.0
    neighbouring: Optional[str] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check.single("sigma", check.positive("sigma", self.sigma)))
        object.__setattr__(self, "sensitivity", check.single("sensitivity", check.positive("sensitivity", self.sensitivity)))
        check_relation(self.neighbouring)

    @property
    def mu(self) -> float:
        """Δ/σ: the release is μ-GDP (Dong, Roth & Su 2019) with this μ (may be inf for a tiny σ)."""
        return self.sensitivity / self.sigma

    def gaussian_mu(self) -> float:
        return self.mu

    def privacy_loss_pair(self) -> EnginePair:
        """(N(μ, 1), N(0, 1)), symmetric."""
        from ..pld.pairs import GaussianPair

        if not math.isfinite(self.mu):
            raise UnboundedPrivacyLoss
        return GaussianPair(self.mu)

    def composed(self, count: int) -> "GaussianEvent":
        """k Gaussian releases are one with μ√k (Dong, Roth & Su 2019, Cor. 3.3); μ rounded to nearest."""
        if count == 1:
            return self
        return GaussianEvent(self.sigma, self.sensitivity * math.sqrt(count))

    def basic_cost(self) -> GaussianCostCurve:
        return GaussianCostCurve(self.sigma, self.sensitivity)

    def group_form(self, group_size: int) -> "GaussianEvent":
        return GaussianEvent(self.sigma, group_size * self.sensitivity, self.neighbouring)

    def dp_accounting_pld(self, sampling_probability: float = 1.0) -> PldBuilder:
        """dp_accounting's ``from_gaussian_mechanism`` with standard deviation σ/Δ."""

        return additive_noise_pld("from_gaussian_mechanism", sampling_probability,
                                  standard_deviation=self.sigma / self.sensitivity)

    def dp_accounting_event(self) -> Any:
        """``GaussianDpEvent(σ/Δ)`` (see :meth:`dpmech.PrivacyLedger.to_dp_event` for the relations)."""
        from dp_accounting import dp_event

        return dp_event.GaussianDpEvent(noise_multiplier=self.sigma / self.sensitivity)
