r"""Floating-point attacks: events on the bit patterns of float outputs (Mironov, CCS 2012).

A float64 program that adds noise to f(D) does not release the real-valued
distribution its proof is about: it releases fl(f(D) + Y) for a noise Y
that is itself a double. Which doubles it can release depends on f(D).
Mironov ("On significance of the least significant bits for differential
privacy", CCS 2012, §3) showed that the textbook Laplace sampler
f(D) − b·sign(u)·log(1 − 2|u|) leaves input-dependent holes in its
support, so that some outputs identify the input with certainty: such a
program is not ε-DP for any ε.

The feature used here is the *lattice exponent* of a double x ≠ 0: the
integer k with x an odd multiple of 2^k (the position of the lowest set
bit of its significand, in absolute terms). Every double y satisfies
"fl(1 + y) is a multiple of 2^−53": when |y| >= 1/2, y is itself a
multiple of 2^−53 and so is the exact sum, and rounding to a double of
magnitude >= 1/2 keeps it one; when |y| < 1/2 the sum lies in (1/2, 3/2),
where every double is such a multiple. So on f(D') = 1 the lattice exponent
is never below −53, whereas on f(D) = 0 the released value is the noise
itself, and noise drawn near 0 by any float sampler (Laplace by the
logarithm, numpy's Laplace or normal) has a much finer lattice. More
generally fl(c + y) sits on the lattice of the larger of |c| and |y| when
they cancel, so shifts of the input move mass between lattice exponents.

:func:`float_dp_test` turns this into events: for every coordinate j of a
numeric output (and the minimum over coordinates of a vector), the
half-lines {L_j <= t} and {L_j > t} at thresholds t chosen on a selection
sample, tested by :func:`.statistical.decide` on a fresh test sample
(Clopper–Pearson, Bonferroni over every (event, order)). The events depend
on the selection sample only, so the test is valid at level α for every
mechanism: a sampler that releases an exact post-processing of a discrete
distribution, such as dpmech's discrete Laplace or Gaussian on a grid γ·Z
(CKS 2020; (k + Z)·γ is a function of the integer k + Z alone), is refuted
only if the discrete distribution itself violates the claim.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import validation as check
from .statistical import StatisticalTestResult, _draw, decide, split_sample_arguments

# Lattice exponents of finite non-zero doubles lie in [−1074, 1023]; the others get codes above them.
ZERO_CODE = 1024
INFINITY_CODE = 1025
NAN_CODE = 1026
_SIGNIFICAND_BITS = 52
_EXPONENT_BIAS = 1075


def lattice_exponents(values: ArrayLike) -> NDArray[np.int64]:
    """The integer k with x an odd multiple of 2^k, per entry x of a float64 array; codes for 0, ±inf and NaN.

    Finite non-zero doubles give k in [−1074, 1023] (subnormals included);
    0 and −0 give ``ZERO_CODE`` (1024), ±inf ``INFINITY_CODE`` (1025), NaN
    ``NAN_CODE`` (1026). Computed from the bits, with no Python loop: the
    significand's lowest set bit is isolated as s & −s, a power of two that
    ``log2`` returns exactly.

    Args:
        values: real array (integers are converted to float64 first).
    """
    array = np.ascontiguousarray(check.real_array("values", values), dtype=np.float64)
    bits = array.view(np.uint64)
    exponent = ((bits >> np.uint64(_SIGNIFICAND_BITS)) & np.uint64(0x7FF)).astype(np.int64)
    fraction = bits & np.uint64((1 << _SIGNIFICAND_BITS) - 1)
    significand = np.where(exponent > 0, fraction | np.uint64(1 << _SIGNIFICAND_BITS), fraction)
    lowest_bit = significand & (~significand + np.uint64(1))
    with np.errstate(divide="ignore"):
        position = np.log2(lowest_bit.astype(np.float64))
    # Subnormals (exponent field 0) have the scale of exponent field 1.
    finite = np.where(np.isfinite(position), np.maximum(exponent, 1) - _EXPONENT_BIAS + position, 0.0).astype(np.int64)
    codes = np.where(array == 0.0, ZERO_CODE, finite)
    codes = np.where(np.isinf(array), INFINITY_CODE, codes)
    return np.where(np.isnan(array), NAN_CODE, codes)


def lattice_features(sample: object) -> NDArray[np.int64]:
    """(n, d) or (n, d + 1) lattice exponents of n numeric outputs: one column per coordinate, and their minimum when d > 1."""
    if not (isinstance(sample, np.ndarray) and sample.dtype.kind in "biuf"):
        raise ValueError(
            "float_bits needs numeric outputs (a numeric array with one row per output) to read their bits "
            f"(got {type(sample).__name__} of dtype {getattr(sample, 'dtype', None)})"
        )
    codes = lattice_exponents(sample.reshape(len(sample), -1).astype(np.float64))
    if codes.shape[1] > 1:
        codes = np.hstack([codes, codes.min(axis=1, keepdims=True)])
    return codes


def _thresholds(column: NDArray[np.int64], num_thresholds: int) -> NDArray[np.int64]:
    """Every distinct value of the selection column, or ``num_thresholds`` quantiles of it when there are more."""
    distinct = np.unique(column)
    if distinct.size <= num_thresholds:
        return distinct
    return np.unique(np.quantile(column, np.linspace(0.0, 1.0, num_thresholds + 2)[1:-1], method="lower"))


def float_dp_test(
    sampler: Callable[[Any, int, np.random.Generator], ArrayLike],
    pair: Any,
    epsilon: float,
    delta: float,
    *,
    num_samples: int,
    rng: np.random.Generator | int,
    alpha: float = 0.05,
    num_thresholds: int = 64,
) -> StatisticalTestResult:
    """Test "``sampler`` is (ε, δ)-DP on ``pair``" with events on the lattice exponents of its float outputs.

    See the module docstring: half-lines on each coordinate's lattice
    exponent (and the minimum over coordinates), thresholds chosen on a
    selection sample, decided on a fresh test sample at level α. Sound for
    every sampler; powerful against programs that add float noise to a
    float input (Mironov 2012), including ``f(D) + rng.laplace(...)`` and
    ``f(D) + rng.normal(...)``, on neighbours such as f(D) = 0, f(D') = 1.

    Args:
        sampler: callable (dataset, size, rng) -> numeric array of size outputs (scalars or vectors).
        pair: (D, D'), neighbours under the caller's relation.
        epsilon: claimed ε >= 0.
        delta: claimed δ in [0, 1).
        num_samples: outputs per dataset, for selection and again for the test, >= 1.
        rng: ``numpy.random.Generator`` or integer seed.
        alpha: level in (0, 1): a true claim is rejected with probability <= alpha.
        num_thresholds: most thresholds per column, >= 1.
    """
    dataset, neighbour, epsilon, delta, num_samples, rng, alpha, num_thresholds = split_sample_arguments(
        sampler, pair, epsilon, delta, num_samples, rng, alpha, num_thresholds)

    selection = [lattice_features(_draw(sampler, data, num_samples, rng, "discrete")) for data in (dataset, neighbour)]
    test = [lattice_features(_draw(sampler, data, num_samples, rng, "discrete")) for data in (dataset, neighbour)]
    if selection[0].shape[1] != selection[1].shape[1] or test[0].shape[1] != selection[0].shape[1]:
        raise ValueError("sampler must return outputs of one shape on both datasets")
    pooled = np.vstack(selection)
    names: list[str] = []
    counts_first: list[NDArray[np.int64]] = []
    counts_second: list[NDArray[np.int64]] = []
    events: list[tuple[int, int, bool]] = []
    coordinates = test[0].shape[1]
    for column in range(coordinates):
        thresholds = _thresholds(pooled[:, column], num_thresholds)
        label = "min over coordinates of L" if coordinates > 1 and column == coordinates - 1 else (
            f"L[{column}]" if coordinates > 1 else "L"
        )
        names += [f"lattice exponent {label} <= {t}" for t in thresholds.tolist()]
        names += [f"lattice exponent {label} > {t}" for t in thresholds.tolist()]
        events += [(column, t, False) for t in thresholds.tolist()] + [(column, t, True) for t in thresholds.tolist()]
        for sample, counts in zip(test, (counts_first, counts_second)):
            at_most = np.searchsorted(np.sort(sample[:, column]), thresholds, side="right")
            counts.append(np.concatenate([at_most, num_samples - at_most]))
    return decide(np.concatenate(counts_first), np.concatenate(counts_second), names, num_samples, epsilon, delta, alpha,
                  event_of=lambda index: _lattice_event(*events[index], coordinates))


def _lattice_event(
    column: int, threshold: int, above: bool, coordinates: int
) -> Callable[[ArrayLike], NDArray[np.bool_]]:
    """Membership function of {L_column > threshold} (``above``) or {L_column <= threshold}."""

    def member(outputs: ArrayLike) -> NDArray[np.bool_]:
        array = np.asarray(outputs)
        features = lattice_features(array)
        if features.shape[1] != coordinates:
            return np.zeros(len(array), dtype=np.bool_)
        return features[:, column] > threshold if above else features[:, column] <= threshold

    return member
