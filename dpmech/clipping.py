"""Per-example L2 clipping of features to a public bound.

Sensitivity bounds such as 2·feature_bound/(nλ) need ‖x‖ <= feature_bound
for every record a neighbouring dataset could hold, with feature_bound
fixed before the data are seen. FedAUXfdp (Hoech et al. 2022,
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


# Entries of a scaled row below this are left out of the exact squares: their squares sum to at most
# d·2⁻⁸⁰⁰ (a one-sided error that _excess_signs allows for), and every product it forms is then normal.
_NEGLIGIBLE = 2.0**-400
# Rows of _excess_signs per pass: its temporaries stay a few MB whatever n is.
_ROWS_PER_PASS = 4096


def _grid_parts(values: np.ndarray, grid: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """values = coarse + middle + fine exactly: coarse a multiple of 2^-g, |middle| <= 2^-g-1 a multiple of
    2^-2g, |fine| <= 2^-2g-1 (g = ``grid``). Each difference is exact: a double minus its rounding to a
    grid no finer than its own last bit is a multiple of that bit of at most 52 bits."""
    coarse = np.rint(values * 2.0**grid) * 2.0**-grid
    rest = values - coarse
    middle = np.rint(rest * 2.0 ** (2 * grid)) * 2.0 ** (-2 * grid)
    return coarse, middle, rest - middle


def _excess_signs(scaled: np.ndarray, scaled_bound: np.ndarray) -> np.ndarray:
    """Per row, the sign of Σ y_i² − B² (+1 or −1), or 0 where this evaluation cannot decide it.

    For scaled rows y (|y_i| < 1) near the sphere of radius B (so B² < d + 1), in integer arithmetic
    carried by doubles. With g = ⌊(53 − log₂(4(d+1)))/2⌋ each value splits as y = c + m + f on the
    grids 2⁻ᵍ and 2⁻²ᵍ (:func:`_grid_parts`), and y² = c² + 2cm + [m² + f(2(c + m) + f)]. Every c² is an
    integer multiple of 2⁻²ᵍ and every cm one of 2⁻³ᵍ, and their sums over a row and B's stay below
    2⁵³ such units, so Σc² − c_B² and 2(Σcm − c_B m_B) are computed exactly, in any summation order.
    Only the bracket (size R ≈ 2d·2⁻²ᵍ) is rounded, by at most (d + 8)·u·R (u = 2⁻⁵³: four roundings
    per term and d summands); the two final additions err by at most 2u|V| + u·R. So the computed
    V is within 2u|V| + (d + 10)·u·R of the truth, less the left-out entries' d·2⁻⁸⁰⁰, and its sign is
    the truth's where |V|(1 − 3u) exceeds twice that margin. A row left undecided has |Σ y_i² − B²|
    below about 8d³·2⁻¹⁰⁶ (against B² >= 1/4): in practice it lies exactly on the sphere.
    """
    unit = 2.0**-53
    dimension = scaled.shape[1]
    grid = int((53 - math.log2(4 * (dimension + 1))) // 2)
    signs = np.empty(scaled.shape[0])
    for start in range(0, scaled.shape[0], _ROWS_PER_PASS):
        rows = scaled[start:start + _ROWS_PER_PASS]
        coarse, middle, fine = _grid_parts(np.where(np.abs(rows) >= _NEGLIGIBLE, rows, 0.0), grid)
        bound_coarse, bound_middle, bound_fine = _grid_parts(scaled_bound[start:start + _ROWS_PER_PASS], grid)
        exact = (np.sum(coarse * coarse, axis=1) - bound_coarse * bound_coarse) + 2.0 * (
            np.sum(coarse * middle, axis=1) - bound_coarse * bound_middle)
        row_sums = coarse + middle
        bound_sums = bound_coarse + bound_middle
        rounded = (np.sum(middle * middle + fine * (2.0 * row_sums + fine), axis=1)
                   - (bound_middle * bound_middle + bound_fine * (2.0 * bound_sums + bound_fine)))
        size = (np.sum(middle * middle + np.abs(fine) * (2.0 * np.abs(row_sums) + np.abs(fine)), axis=1)
                + bound_middle * bound_middle + np.abs(bound_fine) * (2.0 * np.abs(bound_sums) + np.abs(bound_fine)))
        value = exact + rounded
        margin = 2.0 * ((dimension + 10) * unit * size + dimension * 2.0**-800)
        signs[start:start + _ROWS_PER_PASS] = np.where(np.abs(value) * (1.0 - 3.0 * unit) > margin, np.sign(value), 0.0)
    return signs


def _inside_ball(array: NDArray[np.float64], bound: float) -> NDArray[np.bool_]:
    """Per row, whether ‖x‖₂ <= bound holds exactly (not merely for a rounded norm).

    ‖y‖ of the scaled row is computed in floating point with relative error
    at most η = (d + 4)·2⁻⁵³, twice the first-order bound (d/2 + 1)·2⁻⁵³ of d
    rounded squares, a summation of d terms (any underflowed ones are below
    2⁻¹⁰⁷⁴ against a total >= 1/4) and a square root; the bound is scaled by
    the same exact power of two (an overflow or underflow there only happens
    when the answer is plain). Rows whose computed norm is within a factor
    1 ± 2η of the bound (rows put on the sphere by a normalisation land there)
    are decided by the sign of Σ y_i² − B² in twice the working precision
    (:func:`_excess_signs`, vectorised), and the few it cannot decide (a row
    exactly on the sphere) in exact rational arithmetic.
    """
    scaled, exponent = _scaled_rows(array)
    norms = np.linalg.norm(scaled, axis=1)
    with np.errstate(over="ignore", under="ignore"):  # see above: the answer is plain when these happen
        scaled_bound = np.ldexp(bound, -exponent)
    margin = _norm_error(array.shape[1])
    inside: NDArray[np.bool_] = norms * (1.0 + 2.0 * margin) <= scaled_bound
    unclear = np.flatnonzero(~inside & ~(norms * (1.0 - 2.0 * margin) > scaled_bound))
    if unclear.size:
        signs = _excess_signs(scaled[unclear], scaled_bound[unclear])
        inside[unclear] = signs < 0.0
        for row in unclear[signs == 0.0]:
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
