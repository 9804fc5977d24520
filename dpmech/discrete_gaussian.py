r"""Exact discrete Gaussian noise N_Z(0, σ²) by rejection from discrete Laplace.

Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy"
(NeurIPS 2020), Algorithm 3: with t = ⌊σ⌋ + 1, draw Y ~ Lap_Z(t) and accept
it with probability exp(−(|Y| − σ²/t)²/(2σ²)); the accepted Y has
P(Y = y) ∝ exp(−y²/(2σ²)) exactly. N_Z(0, σ²) is this distribution on the
integers; σ² is its scale parameter (its variance is slightly below σ²).

Exactness. σ² = a/b is a rational (an int, a ``fractions.Fraction``, or a
float taken at its exact binary value). The acceptance exponent is
(|Y| − a/(bt))²·b/(2a) = M²/D with the integers M = |b·t·|Y| − a|/g and
D = 2·a·b·t²/g², g = gcd(b·t, a) (g² divides 2abt² because g divides both
a and bt), and D must stay below 2⁶². The rejection is correct for any
t >= 1 (CKS's t = ⌊σ⌋ + 1 bounds its running time); when σ² is an integer
with a divisor t = ⌊√σ²⌋ or ⌊√σ²⌋ + 1 that t is used, so that D = 2σ² and
σ up to 2³⁰ stays exact (calibrated σ² are chosen of that form). M² is split into q = ⌊M²/D⌋ and
r = M² mod D in int64 when M < 3,037,000,500 (so M² < 2⁶³) and in Python
integers for the rare larger M of far-tail proposals; then
Bernoulli(exp(−q − r/D)) is drawn by :func:`dpmech.discrete_laplace.bernoulli_exp_minus`.
No double enters an acceptance decision. The one place a bound replaces an
exact value: q is capped at 2⁶² for far-tail proposals, where the exact
acceptance probability is e^{−q} < e^{−2⁶²}; reaching the cap would need
2⁶² consecutive successes of a Bernoulli(e⁻¹), an event that never occurs.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from . import validation as check
from .discrete_laplace import (
    MAX_INTEGER,
    RationalInput,
    bernoulli_exp_minus,
    rational,
    sample_discrete_laplace,
)
from .random_bits import RandomSource, RngChoice, draw_count, random_source

# M below this has M² < 2⁶³.
_SQUARE_SAFE = 3_037_000_499


def laplace_parameter(sigma_squared: Fraction) -> int:
    """t: a divisor ⌊√σ²⌋ or ⌊√σ²⌋ + 1 of an integer σ², else ⌊σ⌋ + 1 (⌊√x⌋ = ⌊√⌊x⌋⌋ for rational x >= 0)."""
    root = math.isqrt(sigma_squared.numerator // sigma_squared.denominator)
    if sigma_squared.denominator == 1:
        for candidate in (root, root + 1):
            if candidate >= 1 and sigma_squared.numerator % candidate == 0:
                return candidate
    return root + 1


def _acceptance_constants(sigma_squared: Fraction) -> tuple[int, int, int]:
    """(t, g, D) with g = gcd(b·t, a) and D = 2abt²/g² for σ² = a/b."""
    a, b = sigma_squared.numerator, sigma_squared.denominator
    t = laplace_parameter(sigma_squared)
    common = math.gcd(b * t, a)
    return t, common, 2 * a * b * t * t // (common * common)


def validated_sigma_squared(sigma_squared: RationalInput) -> Fraction:
    """σ² as a Fraction a/b whose acceptance denominator D (module docstring) stays below 2⁶²."""
    exact = rational("sigma_squared", sigma_squared)
    if _acceptance_constants(exact)[2] >= MAX_INTEGER:
        raise ValueError(
            f"sigma_squared must be a rational a/b whose acceptance denominator 2abt²/gcd(bt, a)² is below 2**62: "
            f"an integer t·c with t = ⌊√(tc)⌋ up to about 2**61, or a/b with small b and σ up to about 2**15/b "
            f"(got {exact})"
        )
    return exact


def _acceptance_exponent(
    magnitudes: NDArray[np.int64], sigma_squared: Fraction
) -> tuple[NDArray[np.int64], NDArray[np.int64], int]:
    """q = ⌊M²/D⌋ (capped at 2⁶²) and r = M² mod D for M = |b·t·|Y| − a|/g (module docstring)."""
    a, b = sigma_squared.numerator, sigma_squared.denominator
    t, common, denominator = _acceptance_constants(sigma_squared)
    scale = b * t
    small_y = magnitudes <= MAX_INTEGER // scale
    distance = np.abs(scale * np.where(small_y, magnitudes, 0) - a) // common
    small = small_y & (distance <= _SQUARE_SAFE)
    square = distance * distance
    whole = np.where(small, square // denominator, 0)
    remainder = np.where(small, square % denominator, 0)
    for index in np.flatnonzero(~small):
        exact_whole, exact_remainder = divmod(((scale * int(magnitudes[index]) - a) // common) ** 2, denominator)
        whole[index] = min(exact_whole, MAX_INTEGER)
        remainder[index] = exact_remainder
    return whole, remainder, denominator


def sample_discrete_gaussian(sigma_squared: Fraction, count: int, source: RandomSource) -> NDArray[np.int64]:
    """``count`` draws of N_Z(0, σ²) by CKS Alg. 3 (already validated arguments)."""
    t = laplace_parameter(sigma_squared)
    result = np.empty(count, dtype=np.int64)
    pending = np.arange(count)
    while pending.size:
        proposal = sample_discrete_laplace(Fraction(t), pending.size, source)
        whole, remainder, denominator = _acceptance_exponent(np.abs(proposal), sigma_squared)
        accepted = bernoulli_exp_minus(whole, remainder, denominator, source)
        result[pending[accepted]] = proposal[accepted]
        pending = pending[~accepted]
    return result


def discrete_gaussian(
    sigma_squared: RationalInput, size: int | tuple[int, ...], rng: RngChoice
) -> tuple[NDArray[np.int64], str]:
    """Exact discrete Gaussian noise: P(x) ∝ exp(−x²/(2σ²)) on the integers (CKS 2020, Alg. 3).

    Args:
        sigma_squared: σ² > 0, a rational (int, ``fractions.Fraction``, or a
            float at its exact binary value) whose acceptance denominator
            (module docstring) is below 2⁶².
        size: number of independent draws, an integer >= 0 (or a shape tuple).
        rng: ``"os"`` (the OS CSPRNG, for real releases), a
            ``numpy.random.Generator`` or an integer seed (experiments).

    Returns:
        (noise, randomness): an int64 array of the requested shape and the
        description of the randomness source, for the ledger.
    """
    sigma_squared = validated_sigma_squared(sigma_squared)
    shape = _shape(size)
    source = random_source(rng)
    return sample_discrete_gaussian(sigma_squared, math.prod(shape), source).reshape(shape), source.description


def _shape(size: int | tuple[int, ...]) -> tuple[int, ...]:
    shape = tuple(check.integer_scalar("size", entry, 0) for entry in (size if isinstance(size, tuple) else (size,)))
    draw_count("size", math.prod(shape))
    return shape
