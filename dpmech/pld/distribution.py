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

import functools
import math
from dataclasses import dataclass

import numpy as np

UNIT_ROUNDOFF = 2.0**-53
# Relative slack for the few roundings of a normalisation or a weighting step.
_SLACK = 16 * UNIT_ROUNDOFF
_TINY = 1e-290
_LOG_NEGLIGIBLE = -690.0
# Tilted mass trimmed from each end after a convolution.
TAIL = 1e-40
# Tilted weight that mass moved up to a cut may add before the cut is lowered (see GridMeasure.cut_points).
MOVED_TOLERANCE = 1e-6


def log_sum_exp(values):
    """log Σ e^v, −∞ for an empty or all −∞ input; a lean scipy.special.logsumexp for 1-d arrays."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return -math.inf
    largest = float(values.max())
    if not math.isfinite(largest):
        return largest
    return largest + math.log(float(np.exp(values - largest).sum()))


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
    norm2_a, norm2_b = math.sqrt(float(np.square(a).sum())), math.sqrt(float(np.square(b).sum()))
    if min(a.size, b.size) <= 64:
        # Each entry sums at most min(len) rounded products: γ_m Σ|a_i b_j| <= γ_m ‖a‖₂‖b‖₂.
        return np.convolve(a, b), _gamma(min(a.size, b.size) + 1) * norm2_a * norm2_b
    n = 1 << (size - 1).bit_length()
    transform = np.fft.rfft(a, n)
    product = transform * transform if b is a else transform * np.fft.rfft(b, n)
    result = np.fft.irfft(product, n)[:size]
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
    tail_to_infinity: bool = True

    @functools.cached_property
    def losses(self):
        return (self.start + np.arange(self.tilted.size)) * self.step

    @functools.cached_property
    def log_tilted(self):
        with np.errstate(divide="ignore"):
            return np.log(self.tilted)

    def log_masses(self, first=0, stop=None):
        """log m_j for j in first..stop−1."""
        tilted = self.tilted[first:stop]
        losses = (self.start + first + np.arange(tilted.size)) * self.step
        with np.errstate(divide="ignore"):
            return np.log(tilted) + self.log_scale - self.tilt * losses

    def finite_mass(self):
        """Total finite mass, rounded toward the side this measure bounds; capped at 1 for an upper one."""
        total = math.exp(min(float(log_sum_exp(self.log_masses())), 1.0))
        return min(1.0, total * (1 + _SLACK)) if self.upper else total * (1 - _SLACK)

    # --- construction -------------------------------------------------------------------------

    @classmethod
    def from_log_masses(cls, step, tilt, start, log_masses, infinity, upper, tail_to_infinity=True):
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
        return cls(step, tilt, start, tilted, log_scale, float(infinity), upper, 0.0, tail_to_infinity)

    # --- composition --------------------------------------------------------------------------

    def compose(self, other, tail=TAIL):
        """The convolution of two measures on the same grid, trimmed, on the safe side."""
        composed = self.convolved(other)
        return composed.cut(*composed.cut_points(tail))

    def power(self, count, tail=TAIL):
        """The ``count``-fold composition with itself, by repeated squaring."""
        return power(self, count, tail)

    def convolved(self, other):
        """The convolution, normalised but not trimmed, with the FFT round-off on this side."""
        if (self.step, self.tilt, self.upper) != (other.step, other.tilt, other.upper):
            raise ValueError("only measures on the same grid, with the same tilt and side, compose")
        tilted, error = _convolve(self.tilted, other.tilted)
        noise = self.noise + other.noise + self.noise * other.noise * tilted.size + error
        if self.upper:
            tilted = tilted + error
            infinity = min(1.0, (self.infinity + other.infinity) * (1 + _SLACK))
        elif self.infinity == 0.0 and other.infinity == 0.0:
            tilted = np.maximum(tilted - error, 0.0)
            infinity = 0.0
        else:
            tilted = np.maximum(tilted - error, 0.0)
            mass_self, mass_other = self.finite_mass(), other.finite_mass()
            infinity = (self.infinity * (mass_other + other.infinity) + mass_self * other.infinity) * (1 - 4 * _SLACK)
        return GridMeasure._normalised(
            self.step, self.tilt, self.start + other.start, tilted, self.log_scale + other.log_scale, infinity,
            self.upper, noise, self.tail_to_infinity,
        )

    @staticmethod
    def _normalised(step, tilt, start, tilted, log_scale, infinity, upper, noise=0.0, tail_to_infinity=True):
        total = float(tilted.sum())
        if total <= 0.0:
            return GridMeasure(step, tilt, start, np.zeros(1), 0.0, infinity, upper, 0.0, tail_to_infinity)
        tilted = tilted / total
        if upper:
            tilted = np.maximum(tilted * (1 + _SLACK), _TINY)
        else:
            tilted = np.where(tilted < _TINY, 0.0, tilted * (1 - _SLACK))
        return GridMeasure(
            step, tilt, start, tilted, log_scale + math.log(total), infinity, upper, noise / total, tail_to_infinity
        )

    def cut_points(self, tail):
        """First and last index to keep: the tilted mass beyond each, above the round-off, is below ``tail``."""
        signal = np.maximum(self.tilted - 2 * self.noise, 0.0)
        cumulative = np.cumsum(signal)
        size = self.tilted.size
        if cumulative[-1] < 0.5:
            return 0, size - 1  # round-off rivals the mass: no cut can be told from noise
        # Each tail summed from its own end: 1 − 1e-40 is 1 in double precision.
        from_top = np.cumsum(signal[::-1])[::-1]
        low = min(int(np.searchsorted(cumulative, tail, side="right")), size - 1)
        if self.upper:
            # An upper measure moves the mass below the cut up to it (capped at 1, the exact measure's
            # total: see cut()), where its tilted weight is far more than its own when the tilt is steep,
            # and below the round-off its own cannot even be seen (a bounded loss had three quarters of
            # its mass moved up to its top). Where the usual cut moves more than MOVED_TOLERANCE of the
            # tilted weight (a relative error of about that in δ), cut where the moved weight is below ``tail``.
            losses = self.losses
            with np.errstate(divide="ignore"):
                shifted = np.log(self.tilted[:low]) - self.tilt * losses[:low]
            at_low = min(log_sum_exp(shifted) + self.log_scale, 0.0) + self.tilt * losses[low] - self.log_scale
            if at_low > math.log(MOVED_TOLERANCE):
                moved = np.full(low + 1, -np.inf)
                moved[1:] = (np.minimum(np.logaddexp.accumulate(shifted) + self.log_scale, 0.0)
                             + self.tilt * losses[1 : low + 1] - self.log_scale)
                low = max(int(np.searchsorted(moved, math.log(tail), side="right")) - 1, 0)
        beyond = np.flatnonzero(from_top > tail)
        high = max(int(beyond[-1]) if beyond.size else size - 1, low)
        # A short cut at the top saves little time and would send round-off to +∞ where a bounded loss ends.
        if size - 1 - high < max(16, size // 8):
            high = size - 1
        if self.upper and self.tail_to_infinity and high < size - 1:
            # What goes to +∞ counts in full in every δ; the round-off there, tiny in tilted terms,
            # is not when the tilt is steep. Keep more of the top until what is sent is below
            # 1e-300, or the window has grown by a quarter.
            limit = min(size - 1, high + (high - low + 1) // 4)
            log_top = self.log_masses(high + 1, limit + 1)
            above = np.logaddexp.accumulate(log_top[::-1])[::-1]
            beyond = float(log_sum_exp(self.log_masses(limit + 1))) if limit < size - 1 else -math.inf
            above = np.logaddexp(above, beyond)
            small = np.flatnonzero(above <= _LOG_NEGLIGIBLE)
            high = high + int(small[0]) if small.size else limit
        return low, high

    def cut(self, low, high):
        """Keep indices low..high. An upper measure moves the mass below up to the cut and the mass
        above to +∞ (or down to the cut when ``tail_to_infinity`` is False, a merge that a bucketed
        pair needs on both of its sides); a lower measure drops the mass below and moves the mass
        above down to the cut."""
        if low == 0 and high == self.tilted.size - 1:
            return self
        kept = self.tilted[low : high + 1].copy()
        infinity = self.infinity
        above = high < self.tilted.size - 1
        if self.upper and low > 0:
            # At most the exact measure's total mass, 1, sits below the cut: move it up to the cut.
            moved = min(1.0, math.exp(min(float(log_sum_exp(self.log_masses(0, low))), 1.0)))
            kept[0] += moved * math.exp(self.tilt * (self.start + low) * self.step - self.log_scale) * (1 + _SLACK)
        if self.upper and above and self.tail_to_infinity:
            moved = min(1.0, math.exp(min(float(log_sum_exp(self.log_masses(high + 1))), 1.0)))
            infinity = min(1.0, (infinity + moved) * (1 + _SLACK))
        elif above:
            # Moving mass down to the cut shrinks its tilted weight by e^{−λ(l − l_cut)}.
            weights = np.exp(-self.tilt * self.step * np.arange(1, self.tilted.size - high))
            kept[-1] += float((self.tilted[high + 1 :] * weights).sum()) * ((1 + _SLACK) if self.upper else (1 - _SLACK))
        return GridMeasure._normalised(
            self.step, self.tilt, self.start + low, kept, self.log_scale, infinity, self.upper, self.noise,
            self.tail_to_infinity,
        )

    # --- queries ------------------------------------------------------------------------------

    def log_delta(self, epsilon):
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
        log_infinity = math.log(self.infinity) if self.infinity > 0 else -math.inf
        result = float(np.logaddexp(log_finite, log_infinity))
        if not math.isfinite(result):
            return result
        return result + _query_rounding(self.log_scale, self.tilt, epsilon, losses)

    def epsilon(self, log_target):
        """The smallest ε >= 0 this upper measure certifies at δ = e^log_target (inf if none)."""
        if self.infinity > 0 and math.log(self.infinity) >= log_target:
            return math.inf
        return _search(self.log_delta, log_target, float(self.losses[-1]) + self.step, upper=True)


def _query_rounding(log_scale, tilt, epsilon, losses):
    """A bound on the rounding, in log terms, of a δ assembled from tilted entries: a few ulps per
    unit of every exponent's magnitude, plus the relative error of summing (log2 n ulps)."""
    reach = max(abs(float(losses[0])), abs(float(losses[-1])), abs(epsilon))
    return 16 * UNIT_ROUNDOFF * (abs(log_scale) + (tilt + 1.0) * 2 * reach + 64.0 + math.log2(losses.size + 1))


def _search(log_delta, log_target, high, upper):
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


def power(measure, count, tail=TAIL):
    """The ``count``-fold composition of anything with a ``compose(other, tail)``, by repeated squaring."""
    result, square = None, measure
    while True:
        if count & 1:
            result = square if result is None else result.compose(square, tail)
        count >>= 1
        if not count:
            return result
        square = square.compose(square, tail)


@dataclass(frozen=True)
class BucketedPair:
    r"""Lower bound by post-processing: the law of the rounded-down loss under P and under Q.

    Mapping each loss L_i to its grid cell, R_i = ⌊L_i/h⌋ (and merging cells outside a
    window into its end cells) is a post-processing of the mechanism's output, so the
    pair of laws of ΣR_i under P and Q has δ(ε) = Σ_r (p_r − e^ε q_r)_+ no larger than the
    true one (data processing). Lower bounds on p and upper bounds on q keep it a lower
    bound. Unlike rounding the loss down, this loses only where a cell straddles the
    decision boundary: the error is second order in the accumulated rounding.

    ``p`` is a lower GridMeasure with tilt λ, ``q`` an upper one with tilt λ + 1 (so that
    q_r e^{(λ+1)l_r} is about p_r e^{λ l_r}) whose cut tails are merged, never sent to +∞.
    """

    p: GridMeasure
    q: GridMeasure

    def compose(self, other, tail=TAIL):
        p, q = self.p.convolved(other.p), self.q.convolved(other.q)
        low, high = p.cut_points(tail)
        # q moves its mass below the cut up to it: cut no higher than q's own criterion allows.
        low = min(low, q.cut_points(tail)[0])
        return BucketedPair(p.cut(low, high), q.cut(low, high))

    def power(self, count, tail=TAIL):
        return power(self, count, tail)

    def log_delta(self, epsilon):
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
        log_infinity = math.log(p.infinity) if p.infinity > 0 else -math.inf
        result = float(np.logaddexp(log_finite, log_infinity))
        return result - rounding if math.isfinite(result) else result

    def epsilon(self, log_target):
        """A lower bound on the smallest ε >= 0 with δ(ε) <= e^log_target (inf if P(L = +∞) exceeds it)."""
        if self.p.infinity > 0 and math.log(self.p.infinity) > log_target:
            return math.inf
        return _search(self.log_delta, log_target, float(self.p.losses[-1]) + self.p.step, upper=False)

