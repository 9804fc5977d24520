"""Does a release carry the noise its event claims? A chi-square interval on the noise scale.

A Gaussian output mechanism releases θ + N(0, σ² I) and its event states σ.
Given R releases of the same noiseless θ (the auditor trains θ itself through
the pipeline's own training step), the residuals r = release − θ are, when the
release is honest, N·(σ̂²/σ²) ~ χ²_N with N = R·d independent coordinates and
σ̂² = Σ r² / N. So

    σ_upper = sqrt(Σ r² / χ²_{N}⁻¹(α))       (P[σ_upper < σ] = α)
    σ_lower = sqrt(Σ r² / χ²_{N}⁻¹(1 − α))   (P[σ_lower > σ] = α)

are one-sided (1 − α) confidence bounds on the realised noise scale. A release
whose σ_upper falls below the σ its event claims is under-noised, and that
verdict is certified: if the release really adds N(0, σ_claimed² I) or more,
it is reached with probability at most α. (More noise than claimed, or noise
that is not Gaussian but has a larger second moment, only makes Σ r² larger.)

The bounds are :func:`dpmech.verify.greybox.gaussian_scale_bounds`, the
grey-box test users run on their own mechanisms; this module adds the
audit's record. It complements the canary bounds of :mod:`audits.gdp`: a trained canary
moves a regularised head by only a part of its sensitivity bound, so halving
σ can hide below the GDP claim, while the noise scale itself cannot hide.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from dpmech import validation as check
from dpmech.verify.greybox import gaussian_scale_bounds

from .result import CERTIFIED


@dataclasses.dataclass(frozen=True)
class NoiseScaleCheck:
    """The realised noise scale of a release against the σ its event claims.

    Attributes:
        lower, estimate, upper: one-sided (1 − α) bounds on σ and the root-mean-square residual.
        claimed_sigma: the σ the release's event states.
        alpha: the significance of each bound.
        num_coordinates: N, the count of independent noisy coordinates used.
        under_noised: ``upper < claimed_sigma``; certified at level α (see the module docstring).
        valid_as: always ``"certified"``: the bounds are exact chi-square bounds for Gaussian noise.
    """

    lower: float
    estimate: float
    upper: float
    claimed_sigma: float
    alpha: float
    num_coordinates: int
    under_noised: bool
    valid_as: str = CERTIFIED

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


def check_noise_scale(releases, centre, claimed_sigma, *, alpha: float = 0.05) -> NoiseScaleCheck:
    """Bound the noise scale of ``releases`` (R, ...) around the noiseless ``centre`` (...) and compare it with ``claimed_sigma``.

    Every release must be an independent draw of the mechanism on the same
    input; the coordinates' noise must be independent with a common scale
    (isotropic Gaussian output perturbation). Raises ValueError for shapes that
    do not match, non-finite values, fewer than one release, ``claimed_sigma``
    not finite and > 0, or ``alpha`` outside (0, 1).
    """
    releases = check.real_array("releases", releases)
    centre = check.real_array("centre", centre)
    if releases.ndim < 1 or releases.shape[0] < 1 or releases.shape[1:] != centre.shape:
        raise ValueError(
            f"releases must have shape (R, *centre.shape) = (R, {', '.join(map(str, centre.shape))}) with R >= 1 "
            f"(got {releases.shape})"
        )
    if not (np.all(np.isfinite(releases)) and np.all(np.isfinite(centre))):
        raise ValueError("releases and centre must be finite")
    claimed_sigma = float(check.positive("claimed_sigma", claimed_sigma))
    alpha = float(check.open_unit_interval("alpha", alpha))
    residuals = releases - centre
    num_coordinates = int(residuals.size)
    if num_coordinates == 0:
        raise ValueError("releases must hold at least one coordinate")
    sum_of_squares = float(np.sum(np.square(residuals), dtype=np.float64))
    lower, upper = gaussian_scale_bounds(sum_of_squares, num_coordinates, alpha)
    return NoiseScaleCheck(
        lower=lower,
        estimate=float(np.sqrt(sum_of_squares / num_coordinates)),
        upper=upper,
        claimed_sigma=claimed_sigma,
        alpha=alpha,
        num_coordinates=num_coordinates,
        under_noised=bool(upper < claimed_sigma),
    )
