r"""Exact discrete Laplace noise, and the exact Bernoulli(exp(−γ)) draws it is built from.

Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy"
(NeurIPS 2020), Algorithms 1 and 2, vectorised over many draws at once.

* Bernoulli(exp(−γ)) for a rational γ = n/d >= 0 (Alg. 1): exp(−γ) =
  exp(−1)^⌊γ⌋ · exp(−(γ − ⌊γ⌋)), and for γ ∈ [0, 1] draw A_k ~
  Bernoulli(γ/k) for k = 1, 2, … until the first failure, returning whether
  that k is odd. Bernoulli(γ/k) is drawn as Bernoulli(n/d) (a uniform
  integer below d compared with n) AND Bernoulli(1/k) (a uniform integer
  below k equal to 0): independent, with product γ/k, and no product d·k
  that could overflow.
* Discrete Laplace Lap_Z(t/s), P(x) ∝ exp(−|x|·s/t) on the integers (Alg. 2):
  U uniform on {0, …, t−1} accepted with probability exp(−U/t), V geometric
  (the number of Bernoulli(exp(−1)) successes before the first failure),
  Y = ⌊(U + tV)/s⌋, a fair sign, and −0 rejected.

Every decision is an integer comparison of uniform integers drawn from a
:class:`dpmech.random_bits.RandomSource`; no double enters any acceptance
test, so the released distribution is exactly the one the accounting
assumes (no floating-point attack in the style of Mironov, CCS 2012).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import validation as check
from .random_bits import RandomSource, RngChoice, draw_count, random_source, uniform_below, uniform_integers

# A rational scale or σ² is held as int64 numerator and denominator: both below 2**62.
MAX_INTEGER = 2**62
# A number taken at its exact rational value: an int, a Fraction, a float or a numpy scalar.
RationalInput = float | Fraction | np.integer[Any] | np.floating[Any]


def _bernoulli_ratio(numerators: NDArray[np.int64], denominator: int, source: RandomSource) -> NDArray[np.bool_]:
    """Bernoulli(n/d) for 0 <= n <= d, one d for all: a uniform integer below d is below n."""
    if denominator < 2**32:
        return uniform_integers(denominator, numerators.size, source) < numerators
    return uniform_below(np.full(numerators.size, denominator), source) < numerators


def _bernoulli_exp_of_fraction(numerators: NDArray[np.int64], denominator: int, source: RandomSource) -> NDArray[np.bool_]:
    """Bernoulli(exp(−n/d)) for 0 <= n <= d (CKS Alg. 1); all active draws share d and the step k."""
    result = np.empty(numerators.shape, dtype=bool)
    active = np.arange(numerators.size)
    step = 1
    while active.size:
        success = _bernoulli_ratio(numerators[active], denominator, source)
        if step > 1:
            success &= uniform_integers(step, active.size, source) == 0
        result[active[~success]] = step % 2 == 1
        active = active[success]
        step += 1
    return result


def _bernoulli_exp_minus_one(count: int, source: RandomSource) -> NDArray[np.bool_]:
    """Bernoulli(exp(−1)): CKS Alg. 1 at γ = 1, whose first step (Bernoulli(1)) always succeeds."""
    result = np.empty(count, dtype=bool)
    active = np.arange(count)
    step = 2
    while active.size:
        success = uniform_integers(step, active.size, source) == 0
        result[active[~success]] = step % 2 == 1
        active = active[success]
        step += 1
    return result


def bernoulli_exp_minus(whole: ArrayLike, numerators: ArrayLike, denominator: int, source: RandomSource) -> NDArray[np.bool_]:
    """Bernoulli(exp(−(w + n/d))) exactly, for int64 arrays w >= 0 and 0 <= n < d, one int d in [1, 2⁶²).

    exp(−w) is w independent Bernoulli(exp(−1)) draws that all succeed; the
    draws of all entries advance together and an entry stops at its first
    failure, so the loop runs about as many rounds as the largest surviving w.
    """
    whole = np.asarray(whole, dtype=np.int64)
    numerators = np.asarray(numerators, dtype=np.int64)
    result = np.ones(whole.shape, dtype=bool)
    remaining = whole.copy()
    active = np.flatnonzero(remaining > 0)
    while active.size:
        success = _bernoulli_exp_minus_one(active.size, source)
        result[active[~success]] = False
        remaining[active] -= 1
        active = active[success & (remaining[active] > 0)]
    survivors = np.flatnonzero(result)
    result[survivors] = _bernoulli_exp_of_fraction(numerators[survivors], int(denominator), source)
    return result


def geometric_exp_minus_one(count: int, source: RandomSource) -> NDArray[np.int64]:
    """Number of Bernoulli(exp(−1)) successes before the first failure: P(V = v) = (1 − e⁻¹)e^{−v}."""
    result = np.zeros(count, dtype=np.int64)
    active = np.arange(count)
    while active.size:
        success = _bernoulli_exp_minus_one(active.size, source)
        result[active[success]] += 1
        active = active[success]
    return result


def rational(name: str, value: RationalInput) -> Fraction:
    """A positive rational from an int, a Fraction or a float (taken exactly), numerator and denominator < 2**62."""
    check.positive(name, value)
    # np.ndim takes any object at run time (an array passed here is refused); its stubs leave out Fraction.
    if np.ndim(value):  # type: ignore[arg-type]
        raise ValueError(f"{name} must be a single positive rational number (got an array)")
    exact = Fraction(value) if not isinstance(value, np.generic) else Fraction(value.item())
    if exact.numerator >= MAX_INTEGER or exact.denominator >= MAX_INTEGER:
        raise ValueError(
            f"{name} must be a positive rational with numerator and denominator below 2**62 (got {exact}); "
            f"a float such as 0.1 is a fraction with denominator 2**55 and more: pass a Fraction"
        )
    return exact


def sample_discrete_laplace(scale: Fraction, count: int, source: RandomSource) -> NDArray[np.int64]:
    """``count`` draws of Lap_Z(scale), scale = t/s, by CKS Alg. 2 (already validated arguments)."""
    t, s = scale.numerator, scale.denominator
    result = np.empty(count, dtype=np.int64)
    pending = np.arange(count)
    while pending.size:
        size = pending.size
        uniform = uniform_integers(t, size, source) if t < 2**32 else uniform_below(np.full(size, t), source)
        accepted = _bernoulli_exp_of_fraction(uniform, t, source)
        magnitude = (uniform + t * geometric_exp_minus_one(size, source)) // s
        negative = (source.words(size) >> np.uint64(63)).astype(bool)
        accepted &= ~(negative & (magnitude == 0))
        result[pending[accepted]] = np.where(negative, -magnitude, magnitude)[accepted]
        pending = pending[~accepted]
    return result


def discrete_laplace(scale: RationalInput, size: int, rng: RngChoice) -> tuple[NDArray[np.int64], str]:
    """Exact discrete Laplace noise: P(x) = (e^{1/b} − 1)/(e^{1/b} + 1) · e^{−|x|/b} on the integers, b = ``scale``.

    Args:
        scale: b > 0, a rational (int, ``fractions.Fraction``, or a float
            taken at its exact binary value) with numerator and denominator
            below 2**62.
        size: number of draws, an integer >= 0.
        rng: ``"os"`` (the OS CSPRNG, for real releases), a
            ``numpy.random.Generator`` or an integer seed (experiments).

    Returns:
        (noise, randomness): an int64 array of ``size`` draws and the
        description of the randomness source, for the ledger.
    """
    scale = rational("scale", scale)
    size = draw_count("size", size)
    source = random_source(rng)
    if scale.numerator * 64 >= MAX_INTEGER:
        raise ValueError(f"scale must have a numerator below 2**56 (got {scale})")
    return sample_discrete_laplace(scale, size, source), source.description
