r"""Discrete privacy-loss measures on a grid, stored exponentially tilted, and their composition.

A :class:`GridMeasure` holds a finite measure on the loss grid {j·h} plus a mass
``infinity`` at L = +∞. It is either an *upper* measure (every stored mass is an
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

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

UNIT_ROUNDOFF = 2.0**-53
# Relative slack for the few roundings of a normalisation or a weighting step.
_SLACK = 16 * UNIT_ROUNDOFF
# Tilted mass trimmed from each end after a convolution.
TAIL = 1e-40


def _gamma(k):
    return k * UNIT_ROUNDOFF / (1.0 - k * UNIT_ROUNDOFF)


def convolution_error_bound(n, norm1_a, norm2_a, norm1_b, norm2_b):
    """Bound on max |computed − exact| of an FFT convolution of length n (see the module docstring)."""
    levels = max(1, math.ceil(math.log2(n)))
    twiddle = 4 * UNIT_ROUNDOFF
    eta = twiddle + _gamma(4) * (math.sqrt(2.0) + twiddle)
    epsilon_n = levels * eta / (1.0 - levels * eta)
    b_bound = norm1_b + epsilon_n * math.sqrt(n) * norm2_b
    bound = (epsilon_n * (2 * norm1_a * norm2_b + norm2_a * b_bound) + _gamma(4) * norm2_a * b_bound) * (1 + epsilon_n)
    return 2.0 * bound + UNIT_ROUNDOFF * norm1_a * norm1_b


def _convolve(a, b):
    """a * b by FFT when long, directly when short, and a bound on the absolute error of each entry."""
    size = a.size + b.size - 1
    norm1_a, norm1_b = float(a.sum()), float(b.sum())
    norm2_a, norm2_b = float(np.sqrt(a @ a)), float(np.sqrt(b @ b))
    if min(a.size, b.size) <= 64:
        # Each entry sums at most min(len) rounded products: γ_m Σ|a_i b_j| <= γ_m ‖a‖₂‖b‖₂.
        return np.convolve(a, b), _gamma(min(a.size, b.size) + 1) * norm2_a * norm2_b
    n = 1 << (size - 1).bit_length()
    result = np.fft.irfft(np.fft.rfft(a, n) * np.fft.rfft(b, n), n)[:size]
    return result, convolution_error_bound(n, norm1_a, norm2_a, norm1_b, norm2_b)


@dataclass(frozen=True)
class GridMeasure:
    """Masses m_j = t_j·exp(s − λ·l_j) at l_j = (start + j)·h, plus ``infinity`` at +∞.

    ``upper`` says which side every stored number bounds (see the module docstring).
    """

    step: float
    tilt: float
    start: int
    tilted: np.ndarray
    log_scale: float
    infinity: float
    upper: bool
    # A bound on the round-off added to each tilted entry so far: entries below it may be
    # noise, so trimming decides on what lies above it.
    noise: float = 0.0

    @property
    def losses(self):
        return (self.start + np.arange(self.tilted.size)) * self.step

    def log_masses(self):
        with np.errstate(divide="ignore"):
            return np.log(self.tilted) + self.log_scale - self.tilt * self.losses

    def finite_mass(self):
        """Total finite mass, rounded toward the side this measure bounds; capped at 1 for an upper one."""
        total = math.exp(min(float(special.logsumexp(self.log_masses())), 1.0))
        return min(1.0, total * (1 + _SLACK)) if self.upper else total * (1 - _SLACK)

    # --- construction -------------------------------------------------------------------------

    @classmethod
    def from_log_masses(cls, step, tilt, start, log_masses, infinity, upper):
        """Tilt and normalise log masses given on consecutive grid points from ``start``."""
        losses = (start + np.arange(log_masses.size)) * step
        log_tilted = log_masses + tilt * losses
        log_scale = float(special.logsumexp(log_tilted)) if np.any(np.isfinite(log_tilted)) else 0.0
        tilted = np.exp(log_tilted - log_scale)
        tilted *= (1 + _SLACK) if upper else (1 - _SLACK)
        return cls(step, tilt, start, tilted, log_scale, float(infinity), upper)

    # --- composition --------------------------------------------------------------------------

    def compose(self, other, tail=TAIL):
        """The convolution of two measures on the same grid, trimmed, on the safe side."""
        if (self.step, self.tilt, self.upper) != (other.step, other.tilt, other.upper):
            raise ValueError("only measures on the same grid, with the same tilt and side, compose")
        tilted, error = _convolve(self.tilted, other.tilted)
        noise = self.noise + other.noise + self.noise * other.noise * tilted.size + error
        if self.upper:
            tilted = tilted + error
            infinity = min(1.0, (self.infinity + other.infinity) * (1 + _SLACK))
        else:
            tilted = np.maximum(tilted - error, 0.0)
            mass_self, mass_other = self.finite_mass(), other.finite_mass()
            infinity = (self.infinity * (mass_other + other.infinity) + mass_self * other.infinity) * (1 - 4 * _SLACK)
        return GridMeasure._normalised(
            self.step, self.tilt, self.start + other.start, tilted, self.log_scale + other.log_scale, infinity,
            self.upper, noise,
        )._trimmed(tail)

    def power(self, count, tail=TAIL):
        """The ``count``-fold composition with itself, by repeated squaring."""
        result, square = None, self
        while True:
            if count & 1:
                result = square if result is None else result.compose(square, tail)
            count >>= 1
            if not count:
                return result
            square = square.compose(square, tail)

    @staticmethod
    def _normalised(step, tilt, start, tilted, log_scale, infinity, upper, noise=0.0):
        total = float(tilted.sum())
        if total <= 0.0:
            return GridMeasure(step, tilt, start, np.zeros(1), 0.0, infinity, upper)
        tilted = tilted / total
        tilted *= (1 + _SLACK) if upper else (1 - _SLACK)
        return GridMeasure(step, tilt, start, tilted, log_scale + math.log(total), infinity, upper, noise / total)

    def _trimmed(self, tail):
        """Cut the tilted tails below ``tail``: upper moves them up (to the cut or +∞), lower down or away."""
        cumulative = np.cumsum(np.maximum(self.tilted - 2 * self.noise, 0.0))
        low = int(np.searchsorted(cumulative, tail, side="right"))
        high = int(np.searchsorted(cumulative, cumulative[-1] - tail, side="left"))
        low, high = min(low, self.tilted.size - 1), max(min(high, self.tilted.size - 1), low)
        if low == 0 and high == self.tilted.size - 1:
            return self
        losses = self.losses
        log_masses = self.log_masses()
        kept = self.tilted[low : high + 1].copy()
        infinity = self.infinity
        if self.upper:
            if low > 0:
                # At most the exact measure's total mass, 1, sits below the cut: move it up to the cut.
                moved = min(1.0, math.exp(min(float(special.logsumexp(log_masses[:low])), 1.0)))
                kept[0] += moved * math.exp(self.tilt * losses[low] - self.log_scale) * (1 + _SLACK)
            if high < self.tilted.size - 1:
                moved = min(1.0, math.exp(min(float(special.logsumexp(log_masses[high + 1 :])), 1.0)))
                infinity = min(1.0, (infinity + moved) * (1 + _SLACK))
        elif high < self.tilted.size - 1:
            # Moving mass down to the cut shrinks its tilted weight by e^{−λ(l − l_cut)}.
            weights = np.exp(-self.tilt * (losses[high + 1 :] - losses[high]))
            kept[-1] += float(self.tilted[high + 1 :] @ weights) * (1 - _SLACK)
        return GridMeasure._normalised(
            self.step, self.tilt, self.start + low, kept, self.log_scale, infinity, self.upper, self.noise
        )

    # --- queries ------------------------------------------------------------------------------

    def log_delta(self, epsilon):
        """log of Σ_{l_j > ε} m_j(1 − e^{ε − l_j}) + m_∞, on this measure's side, for one ε."""
        losses = self.losses
        first = int(np.searchsorted(losses, epsilon, side="right"))
        log_finite = -math.inf
        if first < losses.size:
            gaps = losses[first:] - epsilon
            terms = self.tilted[first:] * np.exp(-self.tilt * gaps) * -np.expm1(-gaps)
            total = float(terms.sum())
            if total > 0.0:
                log_finite = self.log_scale - self.tilt * epsilon + math.log(total)
        log_infinity = math.log(self.infinity) if self.infinity > 0 else -math.inf
        result = float(np.logaddexp(log_finite, log_infinity))
        if not math.isfinite(result):
            return result
        return result + 1e-12 if self.upper else result - 1e-12

    def epsilon(self, log_target):
        """For an upper measure the smallest ε >= 0 it certifies at δ = e^log_target (inf if none);
        for a lower one the largest ε at which it still exceeds the target (0 if none)."""
        log_infinity = math.log(self.infinity) if self.infinity > 0 else -math.inf
        if log_infinity > log_target or (self.upper and log_infinity == log_target):
            return math.inf
        if self.log_delta(0.0) <= log_target:
            return 0.0
        return self._search(log_target, 0.0, max(float(self.losses[-1]), 0.0) + self.step)

    def _search(self, log_target, low, high):
        """Bisection keeping log_delta(low) > target >= log_delta(high); returns high (upper) or low (lower)."""
        for _ in range(200):
            middle = 0.5 * (low + high)
            if middle in (low, high):
                break
            if self.log_delta(middle) > log_target:
                low = middle
            else:
                high = middle
        return high if self.upper else low
