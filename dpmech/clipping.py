"""Per-example L2 clipping of features to a public bound.

Sensitivity bounds such as 2·feature_bound/(nλ) need ‖x‖ <= feature_bound
for every record a neighbouring dataset could hold, with feature_bound
fixed before the data are seen. FedAUXfdp (Hoech et al. 2022, seed 000,
eq. 4) instead divides every feature vector by the largest norm in the
private dataset. That divisor is itself a function of the private data:
replacing one record can change it and so rescale every other record, so
the two neighbouring datasets no longer differ in one record only, and the
bound derived for ‖x‖ <= 1 does not cover the release. Clipping to a public
bound changes each record only as a function of that record, which keeps
neighbours neighbours.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import validation as check


def _scaled_rows(array: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.intc]]:
    """Each row as 2^e·y with max|y| in [1/2, 1), e an integer per row: exact, and ‖y‖ cannot overflow or underflow."""
    largest = np.max(np.abs(array), axis=1) if array.shape[1] else np.zeros(array.shape[0])
    _, exponent = np.frexp(largest)
    return np.ldexp(array, -exponent[:, None]), exponent


def _norm_error(dimension: int) -> float:
    """η = (d + 4)·2⁻⁵³, a bound on the relative error of ``np.linalg.norm`` of a scaled row (see :func:`_inside_ball`)."""
    return (dimension + 4) * 2.0**-53


def _exactly_inside(row: NDArray[np.float64], bound: float) -> bool:
    """Σ x_i² <= bound² in exact rational arithmetic (every double is an integer multiple of 2⁻¹⁰⁷⁴)."""
    scale = 2**1074
    total = 0
    for value in row.tolist():
        numerator, denominator = value.as_integer_ratio()
        total += (numerator * (scale // denominator)) ** 2
    numerator, denominator = bound.as_integer_ratio()
    return total <= (numerator * (scale // denominator)) ** 2


def _inside_ball(array: NDArray[np.float64], bound: float) -> NDArray[np.bool_]:
    """Per row, whether ‖x‖₂ <= bound holds exactly (not merely for a rounded norm).

    ‖y‖ of the scaled row is computed in floating point with relative error
    at most η = (d + 4)·2⁻⁵³, twice the first-order bound (d/2 + 1)·2⁻⁵³ of d
    rounded squares, a summation of d terms (any underflowed ones are below
    2⁻¹⁰⁷⁴ against a total >= 1/4) and a square root; the bound is scaled by
    the same exact power of two (an overflow or underflow there only happens
    when the answer is plain). Rows whose computed norm is within a factor
    1 ± 2η of the bound are decided in exact rational arithmetic.
    """
    scaled, exponent = _scaled_rows(array)
    norms = np.linalg.norm(scaled, axis=1)
    with np.errstate(over="ignore", under="ignore"):  # see above: the answer is plain when these happen
        scaled_bound = np.ldexp(bound, -exponent)
    margin = _norm_error(array.shape[1])
    inside: NDArray[np.bool_] = norms * (1.0 + 2.0 * margin) <= scaled_bound
    unclear = np.flatnonzero(~inside & ~(norms * (1.0 - 2.0 * margin) > scaled_bound))
    for row in unclear:
        inside[row] = _exactly_inside(array[row], bound)
    return inside


def clip_features(features: ArrayLike, bound: float) -> NDArray[np.float64]:
    """Scale each row x to about x·min(1, bound/‖x‖₂), so that every row has norm at most ``bound``, exactly.

    Rows already inside the ball (decided exactly, not by a rounded norm) are
    returned unchanged, bit for bit; a row outside keeps its direction and
    lands within a relative 9(d + 4)·2⁻⁵³ below the bound. Rows of huge or
    subnormal entries are handled by scaling each row by a power of two
    before taking norms (no overflow to zero, no underflow past the bound).
    ``bound`` must be public: chosen without looking at the private data
    (see the module docstring).

    Args:
        features: (n, d) array of finite values, one record per row.
        bound: public norm bound > 0.

    Returns:
        A new float (n, d) array whose rows satisfy Σ x_i² <= bound² exactly.
    """
    bound = check.positive("bound", bound)
    if np.ndim(bound):
        raise ValueError(f"bound must be a single finite number > 0 (got an array of shape {np.shape(bound)})")
    array = np.array(check.real_array("features", features, "a 2-D array (n, d) of finite real numbers"))
    if array.ndim != 2:
        raise ValueError(f"features must be a 2-D array (n, d) (got shape {array.shape})")
    if not np.all(np.isfinite(array)):
        raise ValueError("features must be finite (got NaN or infinity)")
    outside = np.flatnonzero(~_inside_ball(array, bound))
    if outside.size == 0:
        return array
    # x·bound/‖x‖ = 2^e·y·m/‖y‖ for the scaled row y and bound = m·2^e (m in [1/2, 1)): |y_i|·m/‖y‖ < 1, so
    # nothing overflows even for a bound near the largest double (bound/‖y‖ alone would), and the power of
    # two is exact until the subnormal range. Aiming 8η inside the ball leaves the rows certainly inside
    # after the products' rounding (normal range).
    scaled, _ = _scaled_rows(array[outside])
    mantissa, exponent = math.frexp(bound)
    factor = mantissa / np.linalg.norm(scaled, axis=1) * (1.0 - 8.0 * _norm_error(array.shape[1]))
    clipped = np.ldexp(scaled * factor[:, None], exponent)
    # Subnormal results round by an absolute half unit and may still poke out: step them toward 0.
    over = np.flatnonzero(~_inside_ball(clipped, bound))
    while over.size:
        clipped[over] = np.nextafter(clipped[over], 0.0)
        over = over[~_inside_ball(clipped[over], bound)]
    array[outside] = clipped
    return array
