"""Gaussian output perturbation: release f(D) + N(0, σ² I) with σ calibrated to (ε, δ).

The Gaussian mechanism is (ε, δ)-DP exactly when δ >= δ(ε; σ, Δ) of
:mod:`dpmech.gaussian` (Balle & Wang 2018, Thm. 8), whatever the shape of
f(D), provided ‖f(D) − f(D')‖₂ <= Δ over the whole output (all coordinates
together) for every neighbouring pair. Used for the scoring and
classification models of FedAUX/FedAUXfdp (Chaudhuri et al. 2011 with
Gaussian noise) and the local models of DP-Helmet.

``sampler="discrete"`` releases on the grid γ·Z^d instead, with exact
discrete Gaussian noise (Canonne, Kamath & Steinke, NeurIPS 2020), so that
no floating-point artefact of a float Gaussian sampler (Mironov, CCS 2012;
Jin et al., S&P 2022) can leak f(D):

* f(D) is rounded to the nearest grid point, coordinate by coordinate, as
  part of the mechanism: round(f(D)/γ) ∈ Z^d. Rounding moves each
  coordinate by at most 1/2 grid step, so for neighbours
  ‖round(f(D)/γ) − round(f(D')/γ)‖₂ <= ‖f(D) − f(D')‖₂/γ + √d·(1/2 + 1/2)
  = Δ/γ + √d (triangle inequality with the rounding-error vectors, each of
  norm <= √d/2); for d = 1 the difference is an integer, at most ⌊Δ/γ⌋ + 1.
* Noise N_Z(0, σ²) per coordinate in grid units, σ² calibrated by
  :func:`dpmech.discrete_gaussian_privacy.calibrate_discrete_gaussian` on
  the discrete Gaussian's own profile (CKS Thm 7 for d = 1; zCDP for d > 1).
* The release is γ·(round(f(D)/γ) + noise).

The ledger event of a discrete release is the calibrated (ε, δ) point
(``ApproximateDpEvent``) and names the sampler, the grid and, through
:meth:`GaussianOutputMechanism.release_with_randomness`, the randomness.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import validation as check
from .calibration import METHODS, calibrate_gaussian
from .discrete_gaussian import sample_discrete_gaussian
from .discrete_gaussian_privacy import (
    calibrate_discrete_gaussian,
    discrete_gaussian_delta,
)
from .events import ApproximateDpEvent, GaussianEvent, _check_relation
from .random_bits import RngChoice, random_source

SAMPLERS = ("continuous", "discrete")


def rounded_grid_sensitivity(sensitivity: float, granularity: float, dimension: int) -> float:
    """Sensitivity in grid units after rounding to γ·Z^d: ⌊Δ/γ⌋ + 1 for d = 1, else Δ/γ + √d, rounded up.

    Proof (module docstring): each coordinate's rounding error is at most 1/2.
    """
    ratio = sensitivity / granularity
    if not ratio < 2.0**40:
        raise ValueError(f"granularity must be at least sensitivity/2**40 (got {granularity!r})")
    if dimension == 1:
        # Δ/γ is rounded up before the floor, so that the floor is never too small.
        return math.floor(math.nextafter(ratio, math.inf)) + 1
    # Two roundings (the sum and the square root), each covered by one step up.
    total = math.nextafter(ratio, math.inf) + math.nextafter(math.sqrt(dimension), math.inf)
    return math.nextafter(math.nextafter(total, math.inf), math.inf)


@dataclass(frozen=True)
class GaussianOutputMechanism:
    """Adds Gaussian noise to a parameter array with L2 sensitivity Δ, calibrated to (ε, δ).

    ``sampler="continuous"`` (default) adds N(0, σ² I) in float64 with
    σ = ``calibrate_gaussian(ε, δ, Δ, method)``: ``method="analytic"`` gives
    the smallest σ with δ(ε; σ, Δ) <= δ; ``"classic"`` is Dwork & Roth's
    σ = Δ√(2 ln(1.25/δ))/ε, a theorem only for ε < 1 (FedAUX's and
    DP-Helmet's estimate).

    ``sampler="discrete"`` rounds f(D) to the grid γ·Z^d and adds exact
    discrete Gaussian noise (see the module docstring); it needs
    ``granularity`` γ and the number of released coordinates ``dimension``
    d, and ignores ``method``.

    Args:
        sensitivity: Δ > 0, the L2 sensitivity of the whole released array.
        epsilon: target ε > 0.
        delta: target δ in (0, 1).
        method: ``"analytic"`` or ``"classic"`` (continuous sampler).
        neighbouring: the relation Δ was derived under (``"replace-one"``,
            ``"add-remove-one"``), or None for the ledger's.
        sampler: ``"continuous"`` or ``"discrete"``.
        granularity: γ > 0, the grid step (discrete sampler only).
        dimension: d >= 1, the size of every released array (discrete sampler only).

    Attributes:
        sigma: the noise standard-deviation parameter σ per coordinate in
            output units (for the discrete sampler γ·√σ²_grid, the scale
            parameter of N_Z, not its exact standard deviation).
        sigma_squared_grid: σ² in grid units (discrete sampler), else None.
        grid_sensitivity: the sensitivity after rounding, in grid units (discrete sampler), else None.
    """

    sensitivity: float
    epsilon: float
    delta: float
    method: str = "analytic"
    neighbouring: str | None = None
    sampler: str = "continuous"
    granularity: float | None = None
    dimension: int | None = None
    sigma: float = field(init=False)
    sigma_squared_grid: Fraction | None = field(init=False, default=None)
    grid_sensitivity: float | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        check.choice("method", self.method, METHODS)
        check.choice("sampler", self.sampler, SAMPLERS)
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
        if self.sampler == "discrete":
            self._calibrate_discrete()
            return
        if self.granularity is not None or self.dimension is not None:
            raise ValueError("granularity and dimension apply to sampler='discrete' only (got sampler='continuous')")
        sigma = calibrate_gaussian(self.epsilon, self.delta, self.sensitivity, method=self.method)
        if not np.isfinite(sigma):
            raise ValueError(
                f"sensitivity must be small enough that σ is a finite double (got {self.sensitivity!r}, "
                f"which needs σ = {sigma!r})"
            )
        object.__setattr__(self, "sigma", sigma)

    def _calibrate_discrete(self) -> None:
        if self.granularity is None or self.dimension is None:
            raise ValueError("granularity and dimension are required with sampler='discrete'")
        granularity = check.positive("granularity", self.granularity)
        if np.ndim(granularity):
            raise ValueError("granularity must be a single finite number > 0 (got an array)")
        dimension = check.integer_scalar("dimension", self.dimension, 1)
        object.__setattr__(self, "granularity", float(granularity))
        object.__setattr__(self, "dimension", dimension)
        grid_sensitivity = rounded_grid_sensitivity(self.sensitivity, self.granularity, dimension)
        sigma_squared = calibrate_discrete_gaussian(self.epsilon, self.delta, grid_sensitivity, dimension)
        object.__setattr__(self, "grid_sensitivity", grid_sensitivity)
        object.__setattr__(self, "sigma_squared_grid", sigma_squared)
        object.__setattr__(self, "sigma", self.granularity * math.sqrt(sigma_squared))

    @property
    def event(self) -> GaussianEvent | ApproximateDpEvent:
        """Ledger event of one :meth:`release`: GaussianEvent (continuous) or the calibrated (ε, δ) (discrete)."""
        if self.sampler == "continuous":
            return GaussianEvent(self.sigma, self.sensitivity, neighbouring=self.neighbouring)
        return self.event_with_randomness("stated by release_with_randomness")

    def event_with_randomness(self, randomness: str) -> ApproximateDpEvent:
        """Discrete sampler: the (ε, δ) met by the calibrated σ², with the sampler, grid and randomness named."""
        if self.sampler != "discrete":
            raise ValueError("sampler must be 'discrete' for event_with_randomness (use event)")
        sigma_squared, grid_sensitivity, dimension = self.sigma_squared_grid, self.grid_sensitivity, self.dimension
        assert sigma_squared is not None and grid_sensitivity is not None and dimension is not None  # set by _calibrate_discrete
        delta = discrete_gaussian_delta(self.epsilon, sigma_squared, grid_sensitivity, dimension)
        return ApproximateDpEvent(
            self.epsilon,
            float(delta),  # one ε gives one δ
            neighbouring=self.neighbouring,
            description=(
                f"discrete Gaussian N_Z(0, {self.sigma_squared_grid}) on the grid {self.granularity!r}·Z^{self.dimension} "
                f"(sensitivity {self.grid_sensitivity!r} grid units after rounding); randomness: {randomness}"
            ),
        )

    def release(self, params: ArrayLike, rng: RngChoice) -> NDArray[np.floating[Any]]:
        """One release (one :attr:`event`) for an array of any shape.

        Args:
            params: finite array (or scalar) f(D); with the discrete sampler of
                exactly ``dimension`` entries.
            rng: ``numpy.random.Generator`` or an integer seed; with the
                discrete sampler also ``"os"`` for the OS CSPRNG (use that for
                real releases).
        """
        return self.release_with_randomness(params, rng)[0]

    def release_with_randomness(self, params: ArrayLike, rng: RngChoice) -> tuple[NDArray[np.floating[Any]], str]:
        """(released array, description of the randomness source), the latter for the ledger."""
        array = check.real_array("params", params, "a finite real number or array")
        if not np.all(np.isfinite(array)):
            raise ValueError("params must be finite (got NaN or infinity)")
        if self.sampler == "discrete":
            return self._release_discrete(array, rng)
        generator = check.generator("rng", rng)
        released = array + generator.normal(0.0, self.sigma, size=array.shape)
        if not np.all(np.isfinite(released)):
            raise ValueError(f"params must be small enough that params + noise is finite (σ = {self.sigma!r})")
        return released, random_source(generator).description

    def _release_discrete(self, array: NDArray[np.float64], rng: RngChoice) -> tuple[NDArray[np.floating[Any]], str]:
        sigma_squared, granularity = self.sigma_squared_grid, self.granularity
        assert sigma_squared is not None and granularity is not None  # set by _calibrate_discrete
        if array.size != self.dimension:
            raise ValueError(f"params must have exactly dimension = {self.dimension} entries (got {array.size})")
        grid_values = np.rint(array / granularity)
        if not np.all(np.abs(grid_values) < 2.0**52):
            raise ValueError(f"params must be within 2**52 grid steps of 0 (granularity {granularity!r})")
        source = random_source(rng)
        noise = sample_discrete_gaussian(sigma_squared, array.size, source).reshape(array.shape)
        # Integers below 2**53 are exact doubles, so the grid point is exact before the final scaling.
        return (grid_values + noise) * granularity, source.description
