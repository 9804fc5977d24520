"""Gaussian output perturbation: release f(D) + N(0, σ² I) with σ calibrated to (ε, δ).

The Gaussian mechanism is (ε, δ)-DP exactly when δ >= δ(ε; σ, Δ) of
:mod:`dpmech.gaussian` (Balle & Wang 2018, Thm. 8), whatever the shape of
f(D), provided ‖f(D) − f(D')‖₂ <= Δ over the whole output (all coordinates
together) for every neighbouring pair. Used for the scoring and
classification models of FedAUX/FedAUXfdp (Chaudhuri et al. 2011 with
Gaussian noise) and the local models of DP-Helmet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from . import validation as check
from .calibration import METHODS, calibrate_gaussian
from .events import GaussianEvent, _check_relation


@dataclass(frozen=True)
class GaussianOutputMechanism:
    """Adds N(0, σ² I) to a parameter array with L2 sensitivity Δ; σ = ``calibrate_gaussian(ε, δ, Δ, method)``.

    ``method="analytic"`` (default) gives the smallest σ with
    δ(ε; σ, Δ) <= δ; ``"classic"`` is Dwork & Roth's σ = Δ√(2 ln(1.25/δ))/ε,
    a theorem only for ε < 1 (FedAUX's and DP-Helmet's estimate).

    Args:
        sensitivity: Δ > 0, the L2 sensitivity of the whole released array.
        epsilon: target ε > 0.
        delta: target δ in (0, 1).
        method: ``"analytic"`` or ``"classic"``.
        neighbouring: the relation Δ was derived under (``"replace-one"``,
            ``"add-remove-one"``), or None for the ledger's.

    Attributes:
        sigma: the noise standard deviation σ per coordinate, computed once here.
    """

    sensitivity: float
    epsilon: float
    delta: float
    method: str = "analytic"
    neighbouring: Optional[str] = None
    sigma: float = field(init=False)

    def __post_init__(self):
        check.choice("method", self.method, METHODS)
        for name in ("sensitivity", "epsilon"):
            value = check.positive(name, getattr(self, name))
            if np.ndim(value):
                raise ValueError(f"{name} must be a single finite number > 0 (got an array)")
            object.__setattr__(self, name, float(value))
        delta = check.open_unit_interval("delta", self.delta)
        if np.ndim(delta):
            raise ValueError("delta must be a single number in (0, 1) (got an array)")
        object.__setattr__(self, "delta", float(delta))
        _check_relation(self.neighbouring)
        sigma = calibrate_gaussian(self.epsilon, self.delta, self.sensitivity, method=self.method)
        if not np.isfinite(sigma):
            raise ValueError(
                f"sensitivity must be small enough that σ is a finite double (got {self.sensitivity!r}, "
                f"which needs σ = {sigma!r})"
            )
        object.__setattr__(self, "sigma", sigma)

    @property
    def event(self) -> GaussianEvent:
        """Ledger event of one :meth:`release`."""
        return GaussianEvent(self.sigma, self.sensitivity, neighbouring=self.neighbouring)

    def release(self, params, rng) -> np.ndarray:
        """params + N(0, σ² I), for an array of any shape; each call is one release (one :attr:`event`).

        Args:
            params: finite array (or scalar) f(D).
            rng: ``numpy.random.Generator`` or an integer seed.
        """
        array = check.real_array("params", params, "a finite real number or array")
        if not np.all(np.isfinite(array)):
            raise ValueError("params must be finite (got NaN or infinity)")
        rng = check.generator("rng", rng)
        released = array + rng.normal(0.0, self.sigma, size=array.shape)
        if not np.all(np.isfinite(released)):
            raise ValueError(f"params must be small enough that params + noise is finite (σ = {self.sigma!r})")
        return released
