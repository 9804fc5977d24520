r"""Blind averaging with distributed Gaussian noise (Distributed DP-Helmet, Kirschte, Meiser, Ardalan & Mohammadi 2022, Alg. 3, Lemmas 5.1–5.2).

Setting. |U| users each train a model f_u on their own data; a record sits
at exactly one user. Each user adds Gaussian noise to its model, the users
compute the sum of the noisy models by secure summation, and the sum is
divided by |U|.

Scales, derived here because the seed's formulas were lost in extraction:

* Lemma 5.1. If each f_u has L2 sensitivity s (under the caller's relation),
  the sum Σ_u f_u has sensitivity s (one record changes one f_u) and the
  average has s/|U| (:func:`average_sensitivity`).
* Lemma 5.2. At least a fraction t of the users is honest: h >= t·|U|
  users add their noise and keep it secret; the others may skip it or
  reveal it. Each user adds N(0, σ_u² I) with σ_u² = σ²/(t·|U|). The honest
  noise alone then sums to N(0, h σ_u² I) with h σ_u² >= σ², so the secure
  sum is at least as private as the central Gaussian mechanism
  Σ_u f_u + N(0, σ² I), and dishonest noise is post-processing. Here σ
  lives on the **sum** scale and is calibrated to sensitivity s:
  σ = calibrate_gaussian(ε, δ, s). On the **average** scale the honest noise
  has standard deviation σ/|U| against sensitivity s/|U|: the same ratio
  s/σ, hence the same (ε, δ). (Reading σ as the average-scale std while
  adding σ²/(t|U|) per user would under-noise |U|-fold.)
* Thm 5.3. The average is (ε, δ)-DP with δ = δ(ε; σ, s) of the Gaussian
  mechanism (Balle & Wang 2018; DP-Helmet's Δ-Gauss).

Secure summation is simulated by a plain sum: this module computes what the
protocol would output and does not protect the individual noisy models in
transit. Every user noises its model before anything leaves it.

Never project or clip a model after it is noised. DP-Helmet's public code
re-projects each user's noisy model onto the R-ball before averaging; that
is a per-user non-linear map of individually weakly noised models, not
post-processing of the secure sum, and Thm 5.3 does not cover it.
Post-processing the final average (including projecting it) is fine.

Discrete option (:func:`discrete_blind_average`). Every user rounds its model to the grid γZ^d
(nearest point) and adds an exact discrete Gaussian share N_Z(0, σ²)^d in grid units; the
integer shares are summed (as secure aggregation does) and the sum times γ/|U| is released. The
sum of h honest shares is not a discrete Gaussian: it is accounted by the distributed discrete
Gaussian (Kairouz, Liu & Steinke, ICML 2021, Prop. 14; :mod:`dpmech.distributed_discrete_gaussian`)
with n = h = ⌈t·|U|⌉ honest shares against the rounded sensitivity s/γ + √d grid units
(:func:`dpmech.output_perturbation.rounded_grid_sensitivity`). The division by |U| is
post-processing, so the event of the sum is the event of the average
(:func:`discrete_blind_averaging_event`, an (ε, δ) point naming the mechanism and the randomness).

Which s to use: a record-level bound from :mod:`dpmech.sensitivity` for the
unscaled local model (e.g. 2L/(NΛ)), or :func:`dpmech.sensitivity.user_level_sensitivity`
(2R) to protect a user's whole dataset. DP-Helmet's newest code multiplies
each model by its local size N_u; then s = 2L/Λ record level and 2·N_max·R
user level.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import validation as check
from .calibration import calibrate_gaussian
from .distributed_discrete_gaussian import (
    calibrate_distributed_discrete_gaussian,
    distributed_discrete_gaussian_event,
    grid_share,
)
from .discrete_laplace import RationalInput
from .events import ApproximateDpEvent, GaussianEvent
from .random_bits import RngChoice
from .output_perturbation import rounded_grid_sensitivity

# |U| is used as a double: beyond 2**53 it is not held exactly.
MAX_USERS = 2**53


def _validated_setting(local_sensitivity: float, num_users: int, honest_fraction: float) -> tuple[float, int, float]:
    local_sensitivity = check.positive("local_sensitivity", local_sensitivity)
    if np.ndim(local_sensitivity):
        raise ValueError("local_sensitivity must be a single finite number > 0 (got an array)")
    num_users = check.integer_scalar("num_users", num_users, 1)
    if num_users > MAX_USERS:
        raise ValueError(f"num_users must be an integer in [1, 2**53] (got {num_users!r})")
    fraction = check.in_interval("honest_fraction", honest_fraction, 0.0, 1.0, low_open=True, high_open=False)
    if np.ndim(fraction):
        raise ValueError("honest_fraction must be a single number in (0, 1] (got an array)")
    return float(local_sensitivity), num_users, float(fraction)


def average_sensitivity(local_sensitivity: float, num_users: int) -> float:
    """s/|U|: sensitivity of the average of |U| local models each of sensitivity s (DP-Helmet Lemma 5.1).

    Assumes the differing record (or, with a user-level s, the differing
    user's data) sits at one user only.
    """
    local_sensitivity, num_users, _ = _validated_setting(local_sensitivity, num_users, 1.0)
    quotient = local_sensitivity / num_users
    # A sensitivity must not be understated: step up when the division rounded down.
    if Fraction(quotient) * num_users < Fraction(local_sensitivity):
        quotient = math.nextafter(quotient, math.inf)
    if quotient == 0.0:
        raise ValueError(f"local_sensitivity must be at least 5e-324·|U| (got {local_sensitivity!r}, |U| = {num_users})")
    return quotient


def calibrate_user_noise(
    epsilon: float,
    delta: float,
    local_sensitivity: float,
    num_users: int,
    honest_fraction: float,
    method: str = "analytic",
) -> float:
    """Per-user noise std σ_u = σ/√(t·|U|) with σ = calibrate_gaussian(ε, δ, s) (DP-Helmet Lemma 5.2).

    With at least t·|U| honest users, the honest noise on the sum has std at
    least σ, the central σ for sensitivity s of the sum; the average is then
    (ε, δ)-DP (see the module docstring for the scales).

    Args:
        epsilon: target ε > 0.
        delta: target δ in (0, 1).
        local_sensitivity: s > 0, the L2 sensitivity of one user's model.
        num_users: |U| >= 1.
        honest_fraction: t in (0, 1], the guaranteed fraction of honest users.
        method: ``"analytic"`` (tight) or ``"classic"`` (ε < 1 only).
    """
    local_sensitivity, num_users, honest_fraction = _validated_setting(local_sensitivity, num_users, honest_fraction)
    if np.ndim(check.positive("epsilon", epsilon)) or np.ndim(check.open_unit_interval("delta", delta)):
        raise ValueError(f"epsilon and delta must be single numbers (got shapes {np.shape(epsilon)}, {np.shape(delta)})")
    try:
        sum_sigma = calibrate_gaussian(epsilon, delta, local_sensitivity, method=method)
    except ValueError as error:
        if "sensitivity" in str(error) and "local_sensitivity" not in str(error):
            raise ValueError(f"local_sensitivity or epsilon out of range: {error}") from None
        raise
    if not math.isfinite(sum_sigma):
        raise ValueError(
            f"local_sensitivity must be small enough that the noise std is a finite double "
            f"(got {local_sensitivity!r}, which needs σ = {sum_sigma!r})"
        )
    # σ/√(t|U|) errs by at most 1.5 ulps (product, square root, quotient); two steps up keep σ_u·√(t|U|) >= σ.
    return math.nextafter(math.nextafter(sum_sigma / math.sqrt(honest_fraction * num_users), math.inf), math.inf)


def blind_averaging_event(
    user_noise_std: float, local_sensitivity: float, num_users: int, honest_fraction: float, neighbouring: str | None = None
) -> GaussianEvent:
    """Ledger event of one blind average: GaussianEvent(σ_u√(t|U|)/|U|, s/|U|), on the average's scale.

    The σ of the event is the honest noise guaranteed on the average, so the
    event is valid whatever the dishonest users do (Lemma 5.2).
    """
    noise = check.positive("user_noise_std", user_noise_std)
    if np.ndim(noise):
        raise ValueError("user_noise_std must be a single finite number > 0 (got an array)")
    local_sensitivity, num_users, honest_fraction = _validated_setting(local_sensitivity, num_users, honest_fraction)
    average_sigma = float(noise) * math.sqrt(honest_fraction * num_users) / num_users
    average_sensitivity = local_sensitivity / num_users
    # Both scale by 1/|U|; a quotient that leaves the doubles would change their ratio, hence ε.
    for name, value, quotient in (
        ("user_noise_std", noise, average_sigma),
        ("local_sensitivity", local_sensitivity, average_sensitivity),
    ):
        if not 2.2250738585072014e-308 <= quotient < math.inf:
            raise ValueError(
                f"{name} must keep its average-scale value a normal double, in [2.2e-308·|U|, 1.7e308] roughly "
                f"(got {value!r} with |U| = {num_users})"
            )
    return GaussianEvent(average_sigma, average_sensitivity, neighbouring=neighbouring)


def blind_average(local_models: ArrayLike, user_noise_std: float, rng: np.random.Generator | int) -> NDArray[np.float64]:
    """Each user adds N(0, σ_u² I) to its model; the noisy models are summed and divided by |U|.

    Secure summation is simulated by a plain sum. No projection or clipping
    follows the noise (see the module docstring).

    Args:
        local_models: finite array of shape (|U|, ...), one model per user
            (already trained, projected and scaled as the sensitivity assumes).
        user_noise_std: σ_u > 0 from :func:`calibrate_user_noise`.
        rng: ``numpy.random.Generator`` or an integer seed.

    Returns:
        The noisy average, of shape ``local_models.shape[1:]``.
    """
    models = check.real_array("local_models", local_models, "an array of shape (|U|, ...) of finite real numbers")
    if models.ndim < 1 or models.shape[0] < 1:
        raise ValueError(f"local_models must have shape (|U|, ...) with |U| >= 1 (got shape {models.shape})")
    if not np.all(np.isfinite(models)):
        raise ValueError("local_models must be finite (got NaN or infinity)")
    noise = check.positive("user_noise_std", user_noise_std)
    if np.ndim(noise):
        raise ValueError("user_noise_std must be a single finite number > 0 (got an array)")
    generator = check.generator("rng", rng)
    noisy_models = models + generator.normal(0.0, float(noise), size=models.shape)
    average: NDArray[np.float64] = noisy_models.sum(axis=0) / models.shape[0]
    if not np.all(np.isfinite(average)):
        raise ValueError("local_models and user_noise_std must be small enough that the noisy sum is finite")
    return average


def honest_shares(num_users: int, honest_fraction: float) -> int:
    """⌈t·|U|⌉, the honest noise shares guaranteed in a blind average without dropouts (Lemma 5.2).

    t·|U| is rounded to 9 decimals before the ceiling, so that a product that is an integer up to
    rounding (0.3·10 = 3.0000000000000004) is not bumped up.
    """
    _, num_users, honest_fraction = _validated_setting(1.0, num_users, honest_fraction)
    return max(1, math.ceil(round(honest_fraction * num_users, 9)))


def _discrete_setting(local_sensitivity: float, granularity: float, dimension: int, num_shares: int) -> tuple[float, int, int]:
    local_sensitivity = float(check.single("local_sensitivity", check.positive("local_sensitivity", local_sensitivity)))
    granularity = float(check.single("granularity", check.positive("granularity", granularity)))
    dimension = check.integer_scalar("dimension", dimension, 1)
    num_shares = check.integer_scalar("num_shares", num_shares, 1)
    return rounded_grid_sensitivity(local_sensitivity, granularity, dimension), dimension, num_shares


def calibrate_discrete_user_noise(
    epsilon: float, delta: float, local_sensitivity: float, granularity: float, dimension: int, num_shares: int
) -> Fraction:
    """σ² (grid units²) of each user's discrete Gaussian share so that the sum of ``num_shares`` honest
    shares meets (ε, δ) against the rounded sensitivity (module docstring, "Discrete option").

    ``num_shares``: the honest shares the guarantee must hold with, :func:`honest_shares` in process,
    the user's dropout floor in a deployment with dropouts.
    """
    grid_sensitivity, dimension, num_shares = _discrete_setting(local_sensitivity, granularity, dimension, num_shares)
    return calibrate_distributed_discrete_gaussian(epsilon, delta, grid_sensitivity, num_shares, dimension)


def discrete_blind_averaging_event(
    delta: float,
    sigma_squared: RationalInput,
    local_sensitivity: float,
    granularity: float,
    dimension: int,
    num_shares: int,
    neighbouring: str | None = None,
    randomness: str = "not stated",
) -> ApproximateDpEvent:
    """The (ε, δ) event of a discrete blind average with ``num_shares`` honest shares (module docstring)."""
    grid_sensitivity, dimension, num_shares = _discrete_setting(local_sensitivity, granularity, dimension, num_shares)
    return distributed_discrete_gaussian_event(
        delta, sigma_squared, num_shares, grid_sensitivity, dimension, neighbouring=neighbouring,
        description=f"blind average on the grid {granularity!r}·Z^{dimension}; randomness: {randomness}")


def discrete_blind_average(
    local_models: ArrayLike, granularity: float, sigma_squared: RationalInput, rng: RngChoice
) -> tuple[NDArray[np.float64], str]:
    """Each user's model rounded to γZ^d plus N_Z(0, σ²)^d (grid units); the integer sum times γ/|U|.

    Args:
        local_models: finite array of shape (|U|, ...), one model per user.
        granularity: γ > 0.
        sigma_squared: σ² per user share in grid units² (:func:`calibrate_discrete_user_noise`).
        rng: ``"os"`` (OS CSPRNG, for real releases), a ``numpy.random.Generator`` or an integer seed.

    Returns:
        (average, randomness): the noisy average of shape ``local_models.shape[1:]`` and the
        description of the randomness source, for the ledger.
    """
    models = check.real_array("local_models", local_models, "an array of shape (|U|, ...) of finite real numbers")
    if models.ndim < 1 or models.shape[0] < 1:
        raise ValueError(f"local_models must have shape (|U|, ...) with |U| >= 1 (got shape {models.shape})")
    shares, randomness = grid_share(models, granularity, sigma_squared, rng)
    largest = int(np.max(np.abs(shares))) if shares.size else 0
    # Below 2**53 the integer sum is exact in int64 and as a double.
    if largest * models.shape[0] >= 2**53:
        raise ValueError("local_models must be small enough that |U| times the largest share is below 2**53 grid steps")
    total = shares.sum(axis=0)
    return total.astype(np.float64) * (float(granularity) / models.shape[0]), randomness
