r"""Grey-box check of additive noise: the noise scale estimated from samples, against the scale the claim needs.

A black-box test needs about 1/δ samples to see a violation of δ: a
Gaussian with σ 10 % too small (true δ(1) = 5e-5 against a claimed 1e-5)
passes every event test at 6.4·10⁶ samples. When the user declares the
noise family, far fewer samples settle it: M(D) = f(D) + Z with Z i.i.d.
per coordinate,

* ``"gaussian"``, Z ~ N(0, σ²): with the centre f(D) known,
  Σ(X − f(D))²/σ² ~ χ²(n·d); unknown, Σ(X − X̄)²/σ² ~ χ²((n − 1)·d)
  (Cochran). The claim needs σ >= the analytic calibration
  (Balle & Wang 2018, Thm. 8; :func:`dpmech.calibrate_gaussian`) for the
  declared L2 sensitivity.
* ``"laplace"``, Z ~ Laplace(0, b), centre known: Σ|X − f(D)|/b ~
  Gamma(n·d, 1), so 2Σ|X − f(D)|/b ~ χ²(2n·d). The claim needs
  b >= Δ/(ε − 2 log(1 − δ)) (the Laplace pair's profile
  δ(ε) = 1 − e^{(ε − Δ/b)/2}, Δ the L1 sensitivity attained on one coordinate).

The (1 − α) upper confidence bound on the scale below the needed scale
refutes the claim at level α, provided the declared family and
sensitivity are right: the sensitivity must be attained by some pair of
neighbours (tight), as it is for a sum or a count. The check says
nothing about a mechanism whose noise is not of the declared family.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .. import validation as check
from ..calibration import calibrate_gaussian

FAMILIES = ("gaussian", "laplace")
# calibrate_gaussian exceeds the exact smallest σ by up to 1e-11 relative; the needed
# scale is lowered by this so that a mechanism with exactly the smallest σ is never refuted.
CALIBRATION_SLACK = 1e-10


@dataclass(frozen=True)
class NoiseScaleResult:
    """Outcome of :func:`noise_scale_test`: ``rejected`` when ``scale_upper_bound`` < ``scale_needed``."""

    rejected: bool
    family: str
    scale_estimate: float
    scale_upper_bound: float
    scale_needed: float
    num_values: int
    alpha: float
    epsilon: float
    delta: float
    sensitivity: float


def gaussian_scale_bounds(sum_of_squares: float, freedom: int, alpha: float) -> tuple:
    """One-sided (1 − α) confidence bounds (lower, upper) on σ when Σ r² ~ σ² χ²(freedom).

    P[upper < σ] = α and P[lower > σ] = α; each is moved one ulp outward, to the safe side of a
    refutation. Noise that is not Gaussian but has a larger second moment only raises Σ r².
    """
    upper = float(np.nextafter(math.sqrt(sum_of_squares / stats.chi2.ppf(alpha, freedom)), np.inf))
    lower = float(np.nextafter(math.sqrt(sum_of_squares / stats.chi2.isf(alpha, freedom)), 0.0))
    return lower, upper


def needed_scale(family, epsilon, delta, sensitivity) -> float:
    """The smallest noise scale (σ or b) for which the declared family is (ε, δ)-DP at the given sensitivity."""
    if family == "gaussian":
        if delta == 0.0:
            return math.inf
        return float(calibrate_gaussian(epsilon, delta, sensitivity)) / (1.0 + CALIBRATION_SLACK)
    denominator = epsilon - 2.0 * math.log1p(-delta)
    return sensitivity / denominator if denominator > 0 else math.inf


def noise_scale_test(
    sampler, dataset, family, epsilon, delta, sensitivity, *, num_samples, rng, alpha=0.05, centre=None
) -> NoiseScaleResult:
    """Refute an (ε, δ) claim from the noise scale of ``num_samples`` outputs on one dataset; see the module docstring.

    Args:
        sampler: callable (dataset, size, rng) -> size outputs (scalars or equal-length vectors).
        dataset: the input to draw on.
        family: ``"gaussian"`` or ``"laplace"``, the declared noise.
        epsilon: claimed ε >= 0 (> 0 when delta = 0).
        delta: claimed δ in [0, 1).
        sensitivity: > 0, L2 (Gaussian) or L1 (Laplace) sensitivity of f, attained by some neighbours.
        num_samples: >= 2.
        rng: ``numpy.random.Generator`` or integer seed.
        alpha: level in (0, 1).
        centre: f(dataset), the noiseless answer (scalar or vector); required for Laplace.
    """
    if not callable(sampler):
        raise ValueError(f"sampler must be a callable (dataset, size, rng) -> outputs (got {sampler!r})")
    family = check.choice("family", family, FAMILIES)
    epsilon = float(check.non_negative("epsilon", epsilon))
    delta = float(check.in_interval("delta", delta, 0.0, 1.0, low_open=False, high_open=True))
    if epsilon == 0.0 and delta == 0.0:
        raise ValueError("epsilon must be > 0 when delta = 0 (no additive noise is (0, 0)-DP)")
    sensitivity = float(check.positive("sensitivity", sensitivity))
    num_samples = check.integer_scalar("num_samples", num_samples, 2)
    rng = check.generator("rng", rng)
    alpha = float(check.open_unit_interval("alpha", alpha))
    if family == "laplace" and centre is None:
        raise ValueError("centre must be given (the noiseless answer f(dataset)) when family='laplace'")

    outputs = check.real_array("sampler output", sampler(dataset, num_samples, rng))
    if outputs.ndim == 0 or outputs.shape[0] != num_samples or not np.all(np.isfinite(outputs)):
        raise ValueError(f"sampler must return num_samples finite real outputs (got shape {outputs.shape})")
    outputs = outputs.reshape(num_samples, -1)
    if centre is not None:
        centre = check.real_array("centre", centre, "a real number or a vector of the outputs' length")
        if centre.size not in (1, outputs.shape[1]) or not np.all(np.isfinite(centre)):
            raise ValueError(f"centre must be finite with 1 or {outputs.shape[1]} entries (got shape {centre.shape})")
        deviations = outputs - centre.reshape(1, -1)
        freedom = outputs.size
    else:
        deviations = outputs - outputs.mean(axis=0, keepdims=True)
        freedom = (num_samples - 1) * outputs.shape[1]
    if family == "gaussian":
        total = float(np.sum(deviations**2))
        estimate = math.sqrt(total / freedom)
        upper = gaussian_scale_bounds(total, freedom, alpha)[1]
    else:
        total = float(np.sum(np.abs(deviations)))
        estimate = total / freedom
        upper = 2.0 * total / stats.chi2.ppf(alpha, 2 * freedom)
    needed = needed_scale(family, epsilon, delta, sensitivity)
    return NoiseScaleResult(
        rejected=bool(upper < needed),
        family=family,
        scale_estimate=estimate,
        scale_upper_bound=upper,
        scale_needed=needed,
        num_values=int(outputs.size),
        alpha=alpha,
        epsilon=epsilon,
        delta=delta,
        sensitivity=sensitivity,
    )
