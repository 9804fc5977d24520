r"""Hockey-stick divergence of two densities on the real line by adaptive quadrature.

For output densities p = density of M(D) and q = density of M(D'),

.. math::
    H_{e^\varepsilon}(p \,\|\, q) = \int \max\bigl(0,\; p(x) - e^\varepsilon q(x)\bigr)\,dx
      = \int_{\{L > \varepsilon\}} p(x)\,\bigl(1 - e^{\varepsilon - L(x)}\bigr)\,dx,
    \qquad L = \log p - \log q,

and M is (ε, δ)-DP on the pair exactly when both orders are <= δ (Balle,
Barthe & Gaboardi 2018, Thm. 1). The line is cut where L = ε (the
privacy-loss boundary), found here by scanning L on a grid and bisecting
every change of sign, plus any points the caller gives (kinks, exact
crossings); between consecutive cuts the integrand has one sign. Each piece is integrated
by ``scipy.integrate.quad`` with a purely relative tolerance, the integrand
written as p·(−expm1(ε − L)) so nothing cancels near the boundary, and
scaled by the density at the piece's end so that tails far below 1e-300 of
the peak still integrate. This is an independent numerical check of a
closed-form δ(ε), such as :func:`dpmech.gaussian_delta`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeAlias, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import integrate

from .. import validation as check

# A vectorised function of the output x, such as a log density x -> log p(x) or a privacy loss x -> L(x).
LogDensity: TypeAlias = Callable[[NDArray[np.float64]], ArrayLike]
# A point of the line or an array of them: the maps of a piece take either.
_Real = TypeVar("_Real", float, NDArray[np.float64])

RELATIVE_TOLERANCE = 1e-11
_SUBDIVISIONS = 200
# Cuts of a piece (as fractions, or of u in [0, 1) for an infinite piece): the
# integrand of a far tail sits within a small fraction of the piece's finite end.
_CUTS = np.array([0.0, 1e-4, 1e-3, 1e-2, 0.05, 0.2, 0.5, 0.9, 0.99, 1.0])
_GRID = np.concatenate((np.geomspace(1e-6, 0.5, 60), 1.0 - np.geomspace(1e-6, 0.5, 60)))


def _finite_epsilon(epsilon: float) -> float:
    epsilon = check.non_negative("epsilon", epsilon)
    if np.ndim(epsilon):
        raise ValueError(f"epsilon must be a single finite number >= 0 (got an array of shape {np.shape(epsilon)})")
    return float(epsilon)


def _validated_points(points: ArrayLike) -> NDArray[np.float64]:
    array = np.asarray(points, dtype=float).ravel() if np.size(points) else np.empty(0)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"points must be finite real numbers (got {points!r})")
    return np.unique(array)


# Scan for the boundary L = ε: a fine uniform grid over ±SCAN_HALF_WIDTH scales
# around the centre and a geometric one out to ±1e12 scales, then bisection.
SCAN_HALF_WIDTH = 60.0
_SCAN = np.unique(
    np.concatenate(
        (
            np.linspace(-SCAN_HALF_WIDTH, SCAN_HALF_WIDTH, 24_001),
            np.geomspace(SCAN_HALF_WIDTH, 1e12, 2_000),
            -np.geomspace(SCAN_HALF_WIDTH, 1e12, 2_000),
        )
    )
)
_BISECTIONS = 80
_FIXED_CUTS = np.array([-60.0, -10.0, 10.0, 60.0])
# Pieces are cut and integrated where L > ε − this (relative to max(1, ε)): a superset of
# {L > ε}, on which the integrand is exact (it is 0 where L <= ε), so including more is
# harmless, while a flat L equal to ε up to rounding (Laplace outside its two centres at
# ε = Δ/b) would otherwise flip the predicate at every grid point.
_MARGIN = 1e-7


def _above(privacy_loss: LogDensity, x: NDArray[np.float64], epsilon: float) -> NDArray[np.bool_]:
    """L(x) > ε − margin, with NaN (outside both supports) counted as not above."""
    with np.errstate(invalid="ignore"):
        return np.asarray(privacy_loss(x), dtype=float) > epsilon - _MARGIN * max(1.0, epsilon)


def boundary_points(privacy_loss: LogDensity, epsilon: float, *, centre: float = 0.0, scale: float = 1.0) -> NDArray[np.float64]:
    """Points where {x : L(x) > ε − 1e-7·max(1, ε)} starts or ends, found on a grid around ``centre``, bisected.

    The set is a little larger than {L > ε} so that an L equal to ε up to
    rounding on an interval yields two cuts, not one per grid point.

    The grid is ``centre + scale·g`` for g uniform with step 0.005 on
    [−60, 60] and geometric out to ±1e12; each change of the predicate
    L > ε between neighbours is bisected 80 times. Two crossings closer
    than the grid step (0.005·scale near the centre) cancel and are not
    seen: give such points to :func:`density_hockey_stick` yourself.
    """
    grid = centre + scale * _SCAN
    above = _above(privacy_loss, grid, epsilon)
    changes = np.flatnonzero(above[1:] != above[:-1])
    low, high = grid[changes], grid[changes + 1]
    low_above = above[changes]
    for _ in range(_BISECTIONS):
        middle = 0.5 * (low + high)
        same = _above(privacy_loss, middle, epsilon) == low_above
        low, high = np.where(same, middle, low), np.where(same, high, middle)
    return 0.5 * (low + high)


def _integrate_piece(
    log_integrand: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    log_bound: LogDensity,
    start: float,
    stop: float,
    scale: float,
) -> tuple[float, float]:
    """∫ exp(log_integrand) over [start, stop] (one end may be infinite), scaled by its value at the finite end.

    An infinite end is mapped to a finite interval by x = end ∓ scale·u/(1 − u)
    rather than left to quad's own map: the integrand's width is the
    caller's scale, which may be far from 1.
    """
    anchor = stop if math.isinf(start) else start
    if math.isinf(start) or math.isinf(stop):
        sign = -1.0 if math.isinf(start) else 1.0

        def position(u: _Real) -> _Real:
            return anchor + sign * scale * u / (1.0 - u)

        def jacobian(u: float) -> float:
            return scale / (1.0 - u) ** 2

        low, high = 0.0, 1.0
    else:

        def position(u: _Real) -> _Real:
            return u

        def jacobian(u: float) -> float:
            return 1.0

        low, high = start, stop
    # Shift by the largest log density seen on a grid of the piece so that the
    # integrand is O(1) where it matters, however small or large p is there.
    grid = low + (high - low) * _GRID
    shift = float(np.max(log_bound(position(grid))))
    if not math.isfinite(shift):
        return 0.0, 0.0

    def integrand(u: float) -> float:
        return float(np.exp(log_integrand(np.array([position(u)]))[0] - shift)) * jacobian(u)

    cuts = low + (high - low) * _CUTS
    total = sum(
        integrate.quad(integrand, a, b, epsabs=0.0, epsrel=RELATIVE_TOLERANCE, limit=_SUBDIVISIONS)[0]
        for a, b in zip(cuts[:-1], cuts[1:])
    )
    return total, shift


def density_hockey_stick(
    first_log_density: LogDensity,
    second_log_density: LogDensity,
    epsilon: float,
    points: ArrayLike = (),
    *,
    scale: float = 1.0,
    centre: float = 0.0,
    privacy_loss: LogDensity | None = None,
) -> float:
    """H_{e^ε}(p ‖ q) = ∫ max(0, p − e^ε q) dx for two densities on the real line, by quadrature.

    Args:
        first_log_density: vectorised callable x -> log p(x) (for example a
            frozen scipy distribution's ``logpdf``).
        second_log_density: x -> log q(x).
        epsilon: ε >= 0.
        points: optional extra finite cut points: kinks of either density,
            or solutions of log p − log q = ε too close together for the
            scan (:func:`boundary_points`) to separate. The boundary found by
            the scan and the largest density on the scan grid (the mode, so
            that a narrow peak cannot escape quadrature) are always added.
            A piece is integrated when L > ε − 1e-7·max(1, ε) at its midpoint
            (one ``scale`` beyond the outermost point) or at any scan-grid
            point inside it.
        scale: > 0, the length over which the densities change (a standard
            deviation); it sets the scan grid and the map of the two
            infinite pieces.
        centre: where the densities' mass lies (a mean); the scan grid is
            centred there.
        privacy_loss: optional vectorised callable x -> log p(x) − log q(x)
            written without the cancellation of subtracting two log
            densities. Far in a tail both are large and the difference loses
            about |log p|·1e-16 absolutely, which near the boundary is a
            large relative error of p − e^ε q; give it when δ is tiny.

    Returns:
        The divergence, one direction. Both directions: call it twice with
        the densities swapped and the points of log q − log p = ε.
    """
    epsilon = _finite_epsilon(epsilon)
    points = _validated_points(points)
    scale = check.positive("scale", scale)
    if np.ndim(scale):
        raise ValueError("scale must be a single finite number > 0 (got an array)")
    centre_array = check.real_array("centre", centre, "a single finite real number")
    if np.ndim(centre_array) or not np.isfinite(centre_array):
        raise ValueError(f"centre must be a single finite real number (got {centre_array!r})")
    scale, centre = float(scale), float(centre_array)
    for name, function in (("first_log_density", first_log_density), ("second_log_density", second_log_density)):
        if not callable(function):
            raise ValueError(f"{name} must be a callable x -> log density (got {function!r})")

    if privacy_loss is None:

        def privacy_loss(x: NDArray[np.float64]) -> NDArray[np.float64]:
            with np.errstate(invalid="ignore"):
                return np.asarray(first_log_density(x), dtype=np.float64) - np.asarray(second_log_density(x), dtype=np.float64)

    elif not callable(privacy_loss):
        raise ValueError(f"privacy_loss must be a callable x -> log p(x) - log q(x) or None (got {privacy_loss!r})")

    def log_integrand(x: NDArray[np.float64]) -> NDArray[np.float64]:
        log_p = np.asarray(first_log_density(x), dtype=float)
        log_ratio = np.asarray(privacy_loss(x), dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return log_p + np.log(-np.expm1(np.minimum(epsilon - log_ratio, 0.0)))

    grid = centre + scale * _SCAN
    with np.errstate(invalid="ignore"):
        log_p_on_grid = np.asarray(first_log_density(grid), dtype=float)
    modes = grid[[int(np.nanargmax(log_p_on_grid))]] if np.any(log_p_on_grid > -np.inf) else np.empty(0)
    # Fixed cuts around the centre and the mode keep every piece that holds the mass narrow, even
    # when rounding of L far out (differences of huge log densities) adds spurious crossings there.
    anchors = modes if modes.size else np.array([centre])
    fixed = (anchors[:, None] + scale * _FIXED_CUTS[None, :]).ravel()
    points = np.unique(np.concatenate((points, boundary_points(privacy_loss, epsilon, centre=centre, scale=scale), modes, fixed)))
    edges = np.concatenate(([-np.inf], points, [np.inf]))
    if points.size == 0:
        probes = np.array([0.0])
    else:
        middles = 0.5 * (points[:-1] + points[1:])
        probes = np.concatenate(([points[0] - scale], middles, [points[-1] + scale]))
    # A piece is integrated when its probe or any scan-grid point inside it has L > ε − margin:
    # far out, L is a difference of huge log densities whose rounding can flip one probe, and
    # integrating a piece where the integrand is 0 costs nothing but time.
    positive = _above(privacy_loss, probes, epsilon)
    grid_pieces = np.searchsorted(points, grid, side="right")
    positive |= np.bincount(grid_pieces, weights=_above(privacy_loss, grid, epsilon), minlength=points.size + 1) > 0
    pieces = []
    for start, stop, take in zip(edges[:-1], edges[1:], positive):
        if take:
            pieces.append(_integrate_piece(log_integrand, first_log_density, float(start), float(stop), scale))
    if not pieces:
        return 0.0
    # Sum in the scale of the largest piece so that no piece underflows on its own.
    largest = max(shift for _, shift in pieces)
    return math.exp(largest) * sum(value * math.exp(shift - largest) for value, shift in pieces)


def gaussian_hockey_stick(epsilon: float, sigma: float, sensitivity: float = 1.0) -> float:
    """Numerical δ(ε) of the Gaussian mechanism: H_{e^ε}(N(0, σ²) ‖ N(Δ, σ²)) by quadrature.

    The privacy loss log p/q = Δ(Δ − 2x)/(2σ²) is linear, so it equals ε at
    the single point x = Δ/2 − εσ²/Δ and the divergence is the integral
    over x below it (cut also at the two means, for large Δ/σ). The pair is symmetric (x -> Δ − x swaps it), so one
    direction is the whole profile; the other is computed too and the
    larger returned. Any f with ‖f(D) − f(D')‖₂ <= Δ reduces to this one-
    dimensional pair by rotation invariance (Balle & Wang 2018, Thm. 8),
    so the result is an independent check of :func:`dpmech.gaussian_delta`.

    Args:
        epsilon: ε >= 0.
        sigma: noise standard deviation σ > 0.
        sensitivity: Δ > 0.
    """
    epsilon = _finite_epsilon(epsilon)
    sigma = float(check.positive("sigma", sigma))
    sensitivity = float(check.positive("sensitivity", sensitivity))
    variance = sigma * sigma

    def log_density(centre: float) -> LogDensity:
        constant = -0.5 * math.log(2.0 * math.pi * variance)
        return lambda x: constant - np.square(np.asarray(x, dtype=float) - centre) / (2.0 * variance)

    def linear_loss(sign: float) -> LogDensity:
        # log N(x; 0) − log N(x; Δ) = Δ(Δ − 2x)/(2σ²), formed without subtracting two large logs.
        return lambda x: sign * sensitivity * (0.5 * sensitivity - np.asarray(x, dtype=float)) / variance

    offset = epsilon * variance / sensitivity
    forward = density_hockey_stick(
        log_density(0.0),
        log_density(sensitivity),
        epsilon,
        [0.5 * sensitivity - offset, 0.0, sensitivity],
        scale=sigma,
        privacy_loss=linear_loss(1.0),
    )
    backward = density_hockey_stick(
        log_density(sensitivity),
        log_density(0.0),
        epsilon,
        [0.5 * sensitivity + offset, 0.0, sensitivity],
        scale=sigma,
        privacy_loss=linear_loss(-1.0),
    )
    return max(forward, backward)
