r"""Discrete privacy-loss measures on a grid, stored exponentially tilted, and their composition.

A :class:`GridMeasure` holds a finite measure on the loss grid {j·h} plus a mass
at L = +∞, kept as its log (``log_infinity``: a mass far below the smallest double, e^-1158
say, must still count in log δ, where a double would underflow it to 0). It is either an *upper* measure (every stored mass is an
upper bound of the mass of a measure that dominates the true privacy-loss law:
see :mod:`dpmech.pld.discretization`) or a *lower* one (every stored mass a lower
bound of a measure dominated by it). The functional

.. math:: \delta(\varepsilon) = \sum_j m_j\,(1 - e^{\varepsilon - l_j})_+ + m_{+\infty}

is then an upper (lower) bound of the true δ(ε), and stays one under
convolution, because it is increasing in every mass and every operation below
moves mass only in the safe direction.

Tilting. The masses are stored as t_j = m_j e^{λ l_j − s} with Σt = 1, so that
the grid points near the queried ε, where δ is decided, carry the bulk of the
stored mass. Convolution commutes with tilting, so composing the tilted
vectors composes the measures. An absolute floating-point error η in t_j is an
error η e^{s − λ l_j} in m_j: at l ≈ ε this is η·M(λ)^k e^{−λε}, a Chernoff
bound on δ itself, rather than η times the whole mass, which would swamp a δ of
1e-20.

Round-off of the FFT. For c = a * b computed by an FFT of length n = 2^p, Higham
(Accuracy and Stability of Numerical Algorithms, 2nd ed., Thm. 24.2) bounds each
transform by ‖ŷ − y‖₂ ≤ ε_n‖y‖₂ with ε_n = pη/(1 − pη), η = μ + γ₄(√2 + μ),
μ the accuracy of the twiddle factors (we take μ = 4u for numpy's pocketfft).
Propagating through the product and the inverse transform (‖Fx‖∞ ≤ ‖x‖₁,
‖Fx‖₂ = √n‖x‖₂) gives ‖ĉ − c‖∞ ≤ (ε_n(2‖a‖₁‖b‖₂ + ‖a‖₂B) + γ₄‖a‖₂B)(1 + ε_n)
with B = ‖b‖₁ + ε_n√n‖b‖₂; we double it to cover the real-input packing and the
1/n scaling, and add it to (upper) or subtract it from (lower) every entry.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .pairs import FloatArray

UNIT_ROUNDOFF = 2.0**-53
# Relative slack for the few roundings of a normalisation or a weighting step.
_SLACK = 16 * UNIT_ROUNDOFF
_TINY = 1e-290
# Tilted mass trimmed from each end after a convolution.
TAIL = 1e-40
# Tilted weight that mass moved up to a cut may add before the cut is lowered (see GridMeasure.cut_points).
MOVED_TOLERANCE = 1e-6


def log_sum_exp(values: ArrayLike) -> float:
    """log Σ e^v, −∞ for an empty or all −∞ input; a lean scipy.special.logsumexp for 1-d arrays."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return -math.inf
    largest = float(values.max())
    if not math.isfinite(largest):
        return largest
    return largest + math.log(float(np.exp(values - largest).sum()))


def log_rounding(log_value: float, terms: int) -> float:
    """A bound on the absolute error of a log computed from ``terms`` floating-point terms by exp, sums and one
    log (as :func:`log_sum_exp`): a few ulps per unit of its magnitude and per term (recursive summation)."""
    return 4 * UNIT_ROUNDOFF * ((abs(log_value) if math.isfinite(log_value) else 0.0) + terms + 8)


def log_sum_exp_bound(values: ArrayLike, upper: bool) -> float:
    """log Σ e^v rounded up (``upper``) or down by :func:`log_rounding`; −∞ stays −∞."""
    values = np.asarray(values, dtype=float)
    result = log_sum_exp(values)
    if not math.isfinite(result):
        return result
    margin = log_rounding(result, values.size)
    return result + margin if upper else result - margin


def _gamma(k: float) -> float:
    return k * UNIT_ROUNDOFF / (1.0 - k * UNIT_ROUNDOFF)


@dataclass(frozen=True)
class GridMeasure:
    """Masses m_j = t_j·exp(s − λ·l_j) at l_j = (start + j)·h, plus e^``log_infinity`` at +∞ (−∞: none).

    ``upper`` says which side every stored number bounds (see the module docstring).
    """

    step: float
    tilt: float
    start: int
    tilted: FloatArray
    log_scale: float
    log_infinity: float
    upper: bool
    # The bound on each tilted entry's round-off that the composition applied to it (composition.cyclic_power).
    noise: float = 0.0
    # The Q side of a BucketedPair: mass outside the window is dropped (a post-processing to a symbol
    # that is never counted), where a GridMeasure's upper measure sends it to +∞ or moves it up.
    tails_dropped: bool = False

    @functools.cached_property
    def losses(self) -> FloatArray:
        # Float indices: start + j is exact (far below 2^53), and the product is then a float64 array.
        return (self.start + np.arange(self.tilted.size, dtype=np.float64)) * self.step

    @functools.cached_property
    def log_tilted(self) -> FloatArray:
        with np.errstate(divide="ignore"):
            return np.log(self.tilted)

    def log_masses(self, first: int = 0, stop: int | None = None) -> FloatArray:
        """log m_j for j in first..stop−1."""
        tilted = self.tilted[first:stop]
        losses = (self.start + first + np.arange(tilted.size)) * self.step
        with np.errstate(divide="ignore"):
            return np.log(tilted) + self.log_scale - self.tilt * losses

    # --- construction -------------------------------------------------------------------------

    @classmethod
    def from_log_masses(cls, step: float, tilt: float, start: int, log_masses: FloatArray, log_infinity: float, upper: bool,
                        tails_dropped: bool = False) -> GridMeasure:
        """Tilt and normalise log masses given on consecutive grid points from ``start``."""
        losses = (start + np.arange(log_masses.size)) * step
        log_tilted = log_masses + tilt * losses
        log_scale = log_sum_exp(log_tilted)
        log_scale = log_scale if math.isfinite(log_scale) else 0.0
        # Each exponent is rounded relative to its magnitude (λ·l may be thousands): widen each entry
        # by its own bound, 4u per unit of magnitude.
        with np.errstate(invalid="ignore"):
            magnitude = np.abs(log_masses) + np.abs(tilt * losses) + abs(log_scale) + 2.0
            rounding = 4 * UNIT_ROUNDOFF * np.where(np.isfinite(magnitude), magnitude, 0.0)
            tilted = np.exp(log_tilted - log_scale + (rounding if upper else -rounding))
        # No subnormal numbers: they slow the FFT a hundredfold. An upper measure raises them to
        # _TINY, a lower one drops them, both on the safe side.
        if upper:
            tilted = np.maximum(tilted * (1 + _SLACK), _TINY)
        else:
            tilted = np.where(tilted < _TINY, 0.0, tilted * (1 - _SLACK))
        return cls(step, tilt, start, tilted, log_scale, float(log_infinity), upper, 0.0, tails_dropped)

    @staticmethod
    def _normalised(step: float, tilt: float, start: int, tilted: FloatArray, log_scale: float, log_infinity: float, upper: bool,
                    noise: float = 0.0, tails_dropped: bool = False) -> GridMeasure:
        """Entries rescaled to sum 1 (the scale kept in ``log_scale``), rounded to this side, no subnormals."""
        total = float(tilted.sum())
        if total <= 0.0:
            return GridMeasure(step, tilt, start, np.zeros(1), 0.0, log_infinity, upper, 0.0, tails_dropped)
        tilted = tilted / total
        if upper:
            tilted = np.maximum(tilted * (1 + _SLACK), _TINY)
        else:
            tilted = np.where(tilted < _TINY, 0.0, tilted * (1 - _SLACK))
        return GridMeasure(
            step, tilt, start, tilted, log_scale + math.log(total), log_infinity, upper, noise / total, tails_dropped
        )

    # --- queries ------------------------------------------------------------------------------

    def log_delta(self, epsilon: float) -> float:
        """log of Σ_{l_j > ε} m_j(1 − e^{ε − l_j}) + m_∞, on this measure's side, for one ε."""
        losses = self.losses
        first = int(np.searchsorted(losses, epsilon, side="right"))
        log_finite = -math.inf
        if first < losses.size:
            gaps = losses[first:] - epsilon
            # In logs: far from ε the tilt factor e^{−λ·gap} underflows, and an upper bound must not.
            with np.errstate(divide="ignore"):
                log_terms = self.log_tilted[first:] - self.tilt * gaps + np.log(-np.expm1(-gaps))
            log_finite = self.log_scale - self.tilt * epsilon + float(log_sum_exp(log_terms))
        result = float(np.logaddexp(log_finite, self.log_infinity))
        if not math.isfinite(result):
            return result
        return result + _query_rounding(self.log_scale, self.tilt, epsilon, losses)

    def epsilon(self, log_target: float) -> float:
        """The smallest ε >= 0 this upper measure certifies at δ = e^log_target (inf if none)."""
        if self.log_infinity >= log_target:
            return math.inf
        return _search(self.log_delta, log_target, float(self.losses[-1]) + self.step, upper=True)


def _query_rounding(log_scale: float, tilt: float, epsilon: float, losses: FloatArray) -> float:
    """A bound on the rounding, in log terms, of a δ assembled from tilted entries: a few ulps per
    unit of every exponent's magnitude, plus the relative error of summing (log2 n ulps)."""
    reach = max(abs(float(losses[0])), abs(float(losses[-1])), abs(epsilon))
    return 16 * UNIT_ROUNDOFF * (abs(log_scale) + (tilt + 1.0) * 2 * reach + 64.0 + math.log2(losses.size + 1))


def _search(log_delta: Callable[[float], float], log_target: float, high: float, upper: bool) -> float:
    """Root bracketing on [0, high] keeping log_delta(low) > target >= log_delta(high).

    Returns the right end for an upper bound (certified: its δ is at most the target) and
    the left end for a lower bound (its δ still exceeds the target), 0 when δ(0) <= target.
    The bracket shrinks by regula falsi (Illinois) on log δ − target, which is smooth between
    grid points, and by bisection where an end is −∞ or the false position stalls: each end is
    always an evaluated point on its side, so the answer is certified whatever the steps.
    """
    low, high = 0.0, max(high, 0.0)
    f_low = log_delta(0.0) - log_target
    if f_low <= 0.0:
        return 0.0
    f_high = log_delta(high) - log_target
    side = 0
    # Ten significant digits: the certificate holds at either end, only the width is at stake.
    for iteration in range(200):
        if high - low <= 1e-10 * max(1.0, high):
            break
        if math.isfinite(f_high) and iteration % 6 != 5:
            middle = high - f_high * (high - low) / (f_high - f_low)
            # Off the ends, so that the bracket always shrinks.
            middle = min(max(middle, low + 1e-3 * (high - low)), high - 1e-3 * (high - low))
        else:
            middle = 0.5 * (low + high)
        value = log_delta(middle) - log_target
        if value > 0.0:
            low, f_low = middle, value
            if side == -1:
                f_high *= 0.5  # Illinois: an end kept twice in a row loses half its weight
            side = -1
        else:
            high, f_high = middle, value
            if side == 1:
                f_low *= 0.5
            side = 1
    return high if upper else low


@dataclass(frozen=True)
class BucketedPair:
    r"""Lower bound by post-processing: the law of the rounded-down loss under P and under Q.

    Mapping each loss L_i to its grid cell, R_i = ⌊L_i/h⌋ (and every loss outside a window,
    or every index sum outside the composed window, to one symbol ⊥) is a post-processing of
    the mechanism's output, so the pair of laws of ΣR_i under P and Q has
    δ(ε) = Σ_r (p_r − e^ε q_r)_+ + (p_⊥ − e^ε q_⊥)_+ no larger than the true one (data
    processing); the sum over the kept r alone is smaller still. Lower bounds on p and upper
    bounds on q keep it a lower bound. Unlike rounding the loss down, this loses only where a
    cell straddles the decision boundary: the error is second order in the accumulated rounding.

    ``p`` is a lower GridMeasure with tilt λ, ``q`` an upper one with tilt λ + 1 (so that
    q_r e^{(λ+1)l_r} is about p_r e^{λ l_r}) whose tails are dropped, never sent to +∞.
    """

    p: GridMeasure
    q: GridMeasure

    def log_delta(self, epsilon: float) -> float:
        """log of a lower bound of δ(ε) = Σ_r (p_r − e^ε q_r)_+ + P(L = +∞)."""
        p, q = self.p, self.q
        losses = p.losses
        gaps = losses - epsilon
        # p_r − e^ε q_r = e^{s_p − λ l_r} (t^p_r − t^q_r e^{s_q − s_p + ε − l_r}).
        rounding = _query_rounding(abs(p.log_scale) + abs(q.log_scale), q.tilt, epsilon, losses)
        log_p = p.log_tilted - rounding
        log_q = q.log_tilted + (rounding + q.log_scale - p.log_scale) - gaps
        positive = log_p > log_q
        log_finite = -math.inf
        if np.any(positive):
            log_difference = log_p[positive] + np.log(-np.expm1(log_q[positive] - log_p[positive]))
            log_terms = log_difference - p.tilt * gaps[positive]
            log_finite = p.log_scale - p.tilt * epsilon + float(log_sum_exp(log_terms))
        result = float(np.logaddexp(log_finite, p.log_infinity))
        return result - rounding if math.isfinite(result) else result

    def epsilon(self, log_target: float) -> float:
        """A lower bound on the smallest ε >= 0 with δ(ε) <= e^log_target (inf if P(L = +∞) exceeds it)."""
        if self.p.log_infinity > log_target:
            return math.inf
        return _search(self.log_delta, log_target, self.largest_loss(), upper=False)

    def largest_loss(self) -> float:
        """A loss above every cell's own, log(p_r/q_r): past it only P(L = +∞) is left of δ. A cell's label
        is its rounded-down loss, and the composed labels drift below the losses by up to k·h, so the
        top label is no bound."""
        p, q = self.p, self.q
        with np.errstate(invalid="ignore"):
            losses = p.log_tilted - q.log_tilted + (p.log_scale - q.log_scale) + p.losses
        losses = losses[np.isfinite(losses)]
        return float(losses.max()) + 1.0 if losses.size else 0.0

