"""The SecAgg+ encoding of one user's noisy share, made exact and refused outside its range.

Flower's SecAgg+ (``flwr.common.secure_aggregation.quantization``) clips every coordinate to
[−c, c] without telling anyone, maps it to [0, q] by (x + c)·q/(2c) and rounds stochastically
with NumPy's global generator; the server dequantises the modular sum. Here the user does the
rounding itself, before Flower sees the share:

* c and q are powers of two, so the grid step γ = 2c/q is one too and every grid point −c + kγ
  (0 <= k <= q <= 2²²) is a double. A share already on the grid passes Flower's quantiser
  unchanged (its stochastic rounding has nothing to round) and its modular sum dequantises exactly.
* the rounding is randomised (unbiased) with the user's own ``numpy.random.Generator``;
* a share with a coordinate outside [−c, c] is refused (ValueError), never clipped
  (:func:`outside_range`). p (``clip_failure_probability``) bounds the probability that ANY of the
  round's |U| users refuses, since the round with refusals differs from the one without them as
  soon as one user refuses (:mod:`trainers.flower.accounting`). Each user's range is therefore
  chosen at p/|U|, and the union bound over the |U| users gives P(some user refuses) <= |U|·p/|U|
  = p. This, rather than keeping each user at p and charging the round (1 + e^ε)·|U|·p, keeps p
  the one number that the encoding, :func:`trainers.flower.accounting.total_delta` and
  :func:`trainers.flower.accounting.mechanism_delta` share, so the δ the shares are calibrated at
  and the δ the round reports are computed from the same p; the price is a wider range (k grows
  from √2·erfcinv(p/d) to √2·erfcinv(p/(d·|U|)); in tracker issue 31's round, |U| = 10, d = 20,
  σ_u = 1, B = 0.5, p = 0.01, c doubles from 4 to 8, and γ with it).
  Continuous shares: c is chosen (:func:`choose_encoding`) from the public norm bound B of the
  unnoised model and the noise tail: |f_i + z_i| <= B + |z_i| (|f_i| <= ‖f‖₂ <= B) and, by the
  union bound over the d coordinates, P(max_i |z_i| > kσ_u) <= d·erfc(k/√2) = p/|U| for one
  user. :func:`trainers.flower.accounting.total_delta` adds (1 + e^ε)·p to δ.
* Discrete shares (:func:`discrete_encoding`, :func:`encode_grid_share`): the user's share is already
  an integer vector k in grid units (rounded model plus a discrete Gaussian share); it is sent as
  k·γ, a grid point when |k| <= q/2. c is γ·q/2 and must satisfy ⌈B/γ⌉ + λ <= q/2, λ the noise bound
  of :func:`dpmech.distributed_discrete_gaussian.share_noise_bound` at probability p/|U| per user
  (subgaussian tail of the discrete Gaussian): a rounded model coordinate is at most ⌈B/γ⌉ in magnitude.
* |U|·q < modulus, so the modular sum of |U| shares never wraps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import erfcinv

from dpmech import validation as check
from dpmech.distributed_discrete_gaussian import share_noise_bound


def _power_of_two(name: str, value) -> int:
    value = check.integer_scalar(name, value, 2)
    if value & (value - 1):
        raise ValueError(f"{name} must be a power of two >= 2 (got {value})")
    return value


@dataclass(frozen=True)
class SecAggEncoding:
    """Flower's ``SecAggPlusWorkflow(clipping_range=c, quantization_range=q, modulus_range=M)``.

    ``clipping_range`` c a power of two (2^-60 .. 2^60), ``quantization_range`` q a power of two
    <= 2²² (Flower casts to int32), ``modulus_range`` M a power of two <= 2³²,
    ``clip_failure_probability`` p the proven bound on the probability that some user of the round
    refuses its share (each user's range holds its share but with probability p/|U|), ``num_users``
    |U| with |U|·q < M.
    """

    clipping_range: float
    quantization_range: int
    modulus_range: int
    num_users: int
    clip_failure_probability: float

    def __post_init__(self):
        c = float(check.positive("clipping_range", self.clipping_range))
        mantissa, exponent = math.frexp(c)
        if mantissa != 0.5 or not -60 <= exponent - 1 <= 60:
            raise ValueError(f"clipping_range must be a power of two in [2^-60, 2^60] (got {self.clipping_range!r})")
        object.__setattr__(self, "clipping_range", c)
        q = _power_of_two("quantization_range", self.quantization_range)
        if q > 2**22:
            raise ValueError(f"quantization_range must be <= 2**22 (got {q})")
        modulus = _power_of_two("modulus_range", self.modulus_range)
        if modulus > 2**32:
            raise ValueError(f"modulus_range must be <= 2**32 (got {modulus})")
        num_users = check.integer_scalar("num_users", self.num_users, 1)
        if num_users * q >= modulus:
            raise ValueError(f"num_users × quantization_range = {num_users * q} must be < modulus_range = {modulus}")
        check.in_interval("clip_failure_probability", self.clip_failure_probability, 0.0, 1.0,
                          low_open=False, high_open=True)
        object.__setattr__(self, "clip_failure_probability", float(self.clip_failure_probability))

    @property
    def grid_step(self) -> float:
        """γ = 2c/q, a power of two."""
        return 2.0 * self.clipping_range / self.quantization_range

    def workflow_arguments(self) -> dict:
        """Keyword arguments of ``flwr.server.workflow.SecAggPlusWorkflow`` for this encoding."""
        return {"clipping_range": self.clipping_range, "quantization_range": self.quantization_range,
                "modulus_range": self.modulus_range}


def choose_encoding(model_norm_bound, user_noise_std, dimension, num_users, clip_failure_probability,
                    quantization_range: int = 2**22, modulus_range: int = 2**32) -> SecAggEncoding:
    """The smallest power-of-two c >= B + k·σ_u with |U|·d·erfc(k/√2) <= p (see the module docstring).

    Each of the |U| users' shares leaves [−c, c] with probability at most p/|U|, so some user of
    the round refuses with probability at most p, the p :func:`trainers.flower.accounting.total_delta`
    charges. k is increased by a relative 1e-9 over ``√2·erfcinv(p/(d·|U|))`` to absorb erfcinv's rounding.
    """
    bound = float(check.positive("model_norm_bound", model_norm_bound))
    noise = float(check.positive("user_noise_std", user_noise_std))
    dimension = check.integer_scalar("dimension", dimension, 1)
    num_users = check.integer_scalar("num_users", num_users, 1)
    failure = float(check.open_unit_interval("clip_failure_probability", clip_failure_probability))
    # The 1e-9 also covers the rounding of p/(d·|U|) itself (half an ulp).
    tail = math.sqrt(2.0) * float(erfcinv(failure / (dimension * num_users))) * (1.0 + 1e-9)
    needed = bound + tail * noise
    clipping_range = 2.0 ** math.ceil(math.log2(needed))
    if clipping_range < needed:
        clipping_range *= 2.0
    return SecAggEncoding(clipping_range, quantization_range, modulus_range, num_users, failure)


def outside_range(values, encoding: SecAggEncoding) -> np.ndarray:
    """Whether each coordinate lies outside [−c, c] (NaN counts as outside), elementwise.

    A user refuses its share when any of its coordinates does (:func:`randomised_rounding`).
    """
    return ~(np.abs(np.asarray(values, dtype=np.float64)) <= encoding.clipping_range)


def randomised_rounding(share, encoding: SecAggEncoding, rng) -> np.ndarray:
    """``share`` rounded to the grid −c + γℤ, unbiased: up with probability equal to the fraction.

    Refuses (ValueError) a share with a coordinate outside [−c, c] or not finite; the result's
    coordinates are exact grid points in [−c, c].
    """
    values = np.asarray(share, dtype=np.float64)
    if not np.all(np.isfinite(values)):
        raise ValueError("share must be finite (got NaN or infinity)")
    c = encoding.clipping_range
    if np.any(outside_range(values, encoding)):
        largest = float(np.max(np.abs(values)))
        raise ValueError(
            f"share has a coordinate of magnitude {largest:.6g} outside the SecAgg+ clipping range [-{c:g}, {c:g}]; "
            "it is refused, not clipped (probability <= clip_failure_probability, counted in δ)"
        )
    rng = check.generator("rng", rng)
    # x + c lies in [0, 2c] and γ is a power of two, so the steps lie in [0, q] and k·γ − c is exact.
    steps = np.floor((values + c) / encoding.grid_step + rng.random(values.shape))
    return steps * encoding.grid_step - c


def discrete_range_fits(granularity, model_norm_bound, sigma_squared, dimension, num_users, clip_failure_probability,
                        quantization_range: int = 2**22) -> bool:
    """Whether ⌈B/γ⌉ + λ(σ², d, p/|U|) <= q/2: each of the |U| users' discrete shares leaves SecAgg+'s
    range with probability <= p/|U|, so some user of the round refuses with probability <= p."""
    rounded_bound = math.ceil(float(check.positive("model_norm_bound", model_norm_bound)) / granularity)
    num_users = check.integer_scalar("num_users", num_users, 1)
    failure = float(check.open_unit_interval("clip_failure_probability", clip_failure_probability))
    # share_noise_bound's relative 1e-9 on λ covers the rounding of p/|U| (half an ulp).
    noise_bound = share_noise_bound(sigma_squared, dimension, failure / num_users)
    return rounded_bound + noise_bound <= quantization_range // 2


def discrete_encoding(granularity, num_users, clip_failure_probability, quantization_range: int = 2**22,
                      modulus_range: int = 2**32) -> SecAggEncoding:
    """The encoding whose grid step is ``granularity`` γ (a power of two): c = γ·q/2."""
    granularity = float(check.positive("granularity", granularity))
    mantissa, _ = math.frexp(granularity)
    if mantissa != 0.5:
        raise ValueError(f"granularity must be a power of two on SecAgg+'s grid (got {granularity!r})")
    q = _power_of_two("quantization_range", quantization_range)
    return SecAggEncoding(granularity * q / 2, q, modulus_range, num_users, clip_failure_probability)


def encode_grid_share(share, encoding: SecAggEncoding) -> np.ndarray:
    """The integer share k (grid units) as the grid points k·γ, refused (ValueError) when |k| > q/2."""
    values = np.asarray(share)
    if values.dtype.kind not in "iu":
        raise ValueError(f"share must be an integer array in grid units (got dtype {values.dtype})")
    largest = int(np.max(np.abs(values))) if values.size else 0
    if largest > encoding.quantization_range // 2:
        raise ValueError(
            f"share has a coordinate of {largest} grid steps, outside the SecAgg+ range of "
            f"{encoding.quantization_range // 2}; it is refused, not clipped (probability <= clip_failure_probability)"
        )
    # |k| <= 2**21 and γ a power of two: k·γ is exact.
    return values.astype(np.float64) * encoding.grid_step
