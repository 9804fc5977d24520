r"""Sources of uniform random bits, and Bernoulli draws that realise their probability exactly.

Every sampler in dpmech takes its randomness from an explicit source, never
from global state:

* a ``numpy.random.Generator`` (or an integer seed), for experiments that
  must be reproducible; its bits are only pseudo-random;
* the operating system's CSPRNG (``os.urandom``), for real releases, asked
  for with :data:`OS_RANDOMNESS` (the string ``"os"``).

:func:`random_source` turns either into a :class:`RandomSource`, whose
``description`` says which one was used so that a ledger can state it.

Why exact Bernoulli draws. ``Generator.random()`` returns a multiple of 2⁻⁵³,
so ``random() < p`` happens with probability ⌈p·2⁵³⌉/2⁵³: a p below 2⁻⁵³
(≈ 1.1e-16) is realised as 2⁻⁵³ and a p that is not a multiple of 2⁻⁵³ is
realised rounded up. A mechanism whose guarantee rests on a small
probability (randomized response at ε ≳ 36.7: its change probability is
about K·e^{−ε}) then releases a distribution other than the one its proof
and its ``*_distribution`` describe. :func:`exact_bernoulli` realises every
double p in [0, 1] exactly, down to the smallest subnormal 2⁻¹⁰⁷⁴
(≈ 4.9e-324, about e^{−744.4}): writing p = m·2⁻⁵³·2⁻ᴸ with an integer
m < 2⁵³, it draws the two independent events "a 53-bit uniform integer is
below m" and "L fair bits are all zero", using 64-bit words and integer
comparisons only.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import validation as check

OS_RANDOMNESS = "os"
# What the samplers' ``rng`` parameters take: "os" (the OS CSPRNG), a numpy Generator or an integer seed.
RngChoice = np.random.Generator | int | str

_WORD_BITS = 64
_MANTISSA_BITS = 53


@dataclass(frozen=True)
class RandomSource:
    """Uniform 64-bit words from one named source.

    Attributes:
        words: ``words(n)`` returns n independent uniform ``uint64`` words.
        description: ``"os-csprng (os.urandom)"`` or ``"numpy-generator (<bit generator>, seeded: not for
            real releases)"``.
        cryptographic: True for the OS CSPRNG.
    """

    words: Callable[[int], NDArray[np.uint64]]
    description: str
    cryptographic: bool


# The samplers hold a few int64 and uint64 working arrays per draw; past this many draws in one
# call they would need tens of GB, so larger requests are refused and must be made in chunks.
MAX_DRAWS_PER_CALL = 1 << 27


def draw_count(name: str, size: int) -> int:
    """``size`` as a draw count in [0, MAX_DRAWS_PER_CALL]; ValueError naming ``name`` otherwise."""
    count = check.integer_scalar(name, size, 0)
    if count > MAX_DRAWS_PER_CALL:
        raise ValueError(f"{name} must be <= {MAX_DRAWS_PER_CALL} draws per call (got {count}); draw in chunks")
    return count


def _os_words(count: int) -> NDArray[np.uint64]:
    return np.frombuffer(os.urandom(8 * count), dtype=np.uint64).copy()


def random_source(rng: RngChoice) -> RandomSource:
    """The :class:`RandomSource` for ``rng``: :data:`OS_RANDOMNESS` (``"os"``), a Generator or an integer seed.

    Raises:
        ValueError: naming ``rng`` for anything else (``None`` included: there is no implicit default).
    """
    if isinstance(rng, str):
        check.choice("rng", rng, (OS_RANDOMNESS,))
        return RandomSource(_os_words, "os-csprng (os.urandom)", True)
    if not isinstance(rng, np.random.Generator) and not (
        isinstance(rng, (int, np.integer)) and not isinstance(rng, bool) and rng >= 0
    ):
        raise ValueError(
            f"rng must be 'os' (the OS CSPRNG), a numpy.random.Generator or an integer seed >= 0 (got {rng!r})"
        )
    generator = check.generator("rng", rng)

    def words(count: int) -> NDArray[np.uint64]:
        return generator.integers(0, 2**_WORD_BITS, size=count, dtype=np.uint64)

    name = type(generator.bit_generator).__name__
    return RandomSource(words, f"numpy-generator ({name}, pseudo-random: for experiments, not for real releases)", False)


def _all_zero_bits(counts: NDArray[np.integer[Any]], source: RandomSource) -> NDArray[np.bool_]:
    """For each entry, whether ``counts[i]`` fresh fair bits are all zero (probability 2^−counts[i])."""
    remaining = counts.astype(np.int64)
    result = np.ones(remaining.shape, dtype=bool)
    active = np.flatnonzero(remaining > 0)
    while active.size:
        word = source.words(active.size)
        taken = np.minimum(remaining[active], _WORD_BITS)
        # A shift by the full 64 bits is undefined in C, so a full word is compared with 0 instead.
        shift = np.where(taken == _WORD_BITS, 1, _WORD_BITS - taken).astype(np.uint64)
        zero = np.where(taken == _WORD_BITS, word == 0, (word >> shift) == 0)
        result[active[~zero]] = False
        remaining[active] -= taken
        active = active[zero & (remaining[active] > 0)]
    return result


def exact_bernoulli(probabilities: ArrayLike, source: RandomSource) -> NDArray[np.bool_]:
    """Independent Bernoulli(p) draws, each realising the double p exactly (see the module docstring).

    Args:
        probabilities: array of doubles in [0, 1].
        source: a :class:`RandomSource`.

    Returns:
        bool array of the shape of ``probabilities``.
    """
    probabilities = check.in_interval("probabilities", probabilities, 0.0, 1.0, low_open=False, high_open=False)
    flat = probabilities.ravel()
    result = flat >= 1.0
    inside = np.flatnonzero((flat > 0.0) & (flat < 1.0))
    if inside.size:
        fraction, exponent = np.frexp(flat[inside])
        # p = f·2^e with f in [1/2, 1) and e <= 0, so p = m·2^−53·2^−L with m = f·2^53 < 2^53 an integer, L = −e.
        mantissa = np.ldexp(fraction, _MANTISSA_BITS).astype(np.uint64)
        below = (source.words(inside.size) >> np.uint64(_WORD_BITS - _MANTISSA_BITS)) < mantissa
        hits = inside[below]
        leading_zeros = -exponent[below]
        result[hits] = _all_zero_bits(leading_zeros, source)
    return result.reshape(probabilities.shape)


def _uniform_below_32(bounds: NDArray[np.uint64] | np.uint64, count: int, source: RandomSource) -> NDArray[np.uint64]:
    """Lemire's multiply-shift for bounds below 2³² (an array of ``count``, or one int for all).

    x·b >> 32 for a uniform 32-bit x, rejected exactly when (x·b mod 2³²) < 2³² mod b,
    which can only happen when x·b mod 2³² < b; the rejected entries draw again.
    """
    result = np.empty(count, dtype=np.uint64)
    pending = np.arange(count)
    while pending.size:
        bound = bounds[pending] if isinstance(bounds, np.ndarray) else bounds
        halves = source.words((pending.size + 1) // 2).view(np.uint32)[: pending.size].astype(np.uint64)
        product = halves * bound
        low = product & np.uint64(2**32 - 1)
        accepted = low >= bound
        unclear = np.flatnonzero(~accepted)
        if unclear.size:
            unclear_bound = bound[unclear] if isinstance(bound, np.ndarray) else bound
            accepted[unclear] = low[unclear] >= (np.uint64(2**32) - unclear_bound) % unclear_bound
        result[pending[accepted]] = product[accepted] >> np.uint64(32)
        pending = pending[~accepted]
    return result


def uniform_integers(bound: int, count: int, source: RandomSource) -> NDArray[np.int64]:
    """``count`` independent uniform integers in [0, bound), for one int bound in [1, 2³²)."""
    return _uniform_below_32(np.uint64(bound), count, source).astype(np.int64)


def uniform_below(bounds: ArrayLike, source: RandomSource) -> NDArray[np.int64]:
    """Independent uniform integers in [0, b) for each int64 bound b >= 1, by rejection from 64-bit words (exact).

    A word w is accepted when w < 2⁶⁴ − (2⁶⁴ mod b), so w mod b is uniform; a
    rejection (probability below b/2⁶⁴) draws again.
    """
    bounds = np.asarray(bounds, dtype=np.int64)
    if np.any(bounds < 1):
        raise ValueError("bounds must be integers >= 1")
    flat_bounds = bounds.ravel().astype(np.uint64)
    if flat_bounds.size and flat_bounds.max() < 2**32:
        return _uniform_below_32(flat_bounds, flat_bounds.size, source).astype(np.int64).reshape(bounds.shape)
    result = np.empty(flat_bounds.shape, dtype=np.uint64)
    pending = np.arange(flat_bounds.size)
    while pending.size:
        bound = flat_bounds[pending]
        word = source.words(pending.size)
        # 2⁶⁴ mod b is (2⁶⁴ − b) mod b, and 2⁶⁴ − b is −b in wrapping uint64 arithmetic.
        excess = (np.zeros_like(bound) - bound) % bound
        accepted = (excess == 0) | (word < np.zeros_like(excess) - excess)
        result[pending[accepted]] = word[accepted] % bound[accepted]
        pending = pending[~accepted]
    return result.astype(np.int64).reshape(bounds.shape)
