r"""A whole ledger composed by one FFT: products of powers of characteristic functions, with proven bounds.

Every entry i of a ledger is one grid measure x_i (tilted, see :mod:`.distribution`) composed
k_i times. The composition is the convolution x_1^{*k_1} * ... * x_m^{*k_m}; on a cyclic grid of
N = 2^p points it is the inverse DFT of Π_i X_i^{k_i}, X_i = DFT(x_i) (the approach of
Koskela, Jälkö & Honkela, AISTATS 2020/2021, and of dp_accounting's PLD). One forward transform
per entry and one inverse, whatever the counts: the cost does not grow with k. What the cyclic
grid and the floating-point arithmetic change is bounded, and every bound is applied on the safe
side of the measure (upper: added; lower: subtracted):

* **Aliasing.** The cyclic result at index j is Σ_m c[j + mN], the exact composed tilted masses
  c plus those of every label outside the window [a, a + N) folded in. All terms are >= 0, so
  an upper measure may keep them (mass moves, never disappears) and a lower one subtracts a
  bound of the total outside: the Chernoff bounds P_T(S >= t) <= exp(K(φ) − φt) and
  P_T(S <= t) <= exp(K(−φ) + φt), φ > 0, with K(φ) = Σ_i k_i log Σ_j x_ij e^{φ l_j} the exact
  cumulant function of the arrays themselves (evaluated with a rounding margin), minimised over
  a grid of φ. The window is chosen from the same bounds, so that what lies outside is below
  :data:`LOG_TAIL` in tilted mass.
* **Tails of an upper measure.** Its real mass above the window goes to L = +∞ (for the measure
  of a :class:`~.distribution.GridMeasure`) or is merged into the top cell (for the Q side of a
  :class:`~.distribution.BucketedPair`, a post-processing), and its real mass below is moved up
  to (merged into) the bottom cell, with tilted weight at most exp(min_{φ>=λ} K(−φ) + φ(a−1)h + λh).
* **Round-off.** Higham (Accuracy and Stability of Numerical Algorithms, 2nd ed., Sec. 24.1) in its
  componentwise form: in a radix-2 transform of length N = 2^p each of the p stages rounds every
  value by at most η times the 1-norm of the subsequence it sums, and an error reaches an output
  only through unit-modulus weights, along one path per value of each stage; those subsequences
  partition x, so every coefficient is within ε_N ‖x‖₁, ε_N = pη/(1 − pη); we double it for the
  real-input packing: E_i = 2ε_N ‖x_i‖₁ (the premise on numpy's pocketfft, as before, is that it
  rounds no worse than this model). With R_ij = |X̃_ij| + E_i >= |X_ij|, the product of powers is off by
  at most Π_i (R_ij + E_i)^{k_i} − Π_i R_ij^{k_i} (the bound |Πa − Πb| <= Π(|b| + |a − b|) − Π|b|,
  increasing in |b|), and its evaluation as exp(Σ_i k_i log X̃_ij) by a relative
  Σ_i k_i·4u(|log|X̃_ij|| + 4) + 8u (numpy's complex log and exp taken as accurate to 4 ulps, the
  same premise as the twiddle factors). The inverse transform turns a coefficient error e into
  an entry error of at most (1/N)Σ|e_j| over the full spectrum and adds its own (1/N)ε_N‖y‖₁; the
  total is doubled for the real-input packing and the 1/N scaling.
"""

from __future__ import annotations

import math

import numpy as np

from .distribution import _SLACK, _TINY, UNIT_ROUNDOFF, BucketedPair, GridMeasure, _gamma

# Tilted mass allowed outside the composed window on each side.
LOG_TAIL = math.log(1e-16)
# Cumulant arguments of the first round, in units of 1 / (the composed tilted law's standard deviation).
_RELATIVE_THETAS = np.geomspace(1e-2, 1e4, 12)
_ROUNDS = 2


def _epsilon_n(size):
    """ε_N of Higham's Thm. 24.2 for a radix-2 transform of length ``size`` (twiddles to 4u)."""
    levels = max(1, math.ceil(math.log2(size)))
    twiddle = 4 * UNIT_ROUNDOFF
    eta = twiddle + _gamma(4) * (math.sqrt(2.0) + twiddle)
    return levels * eta / (1.0 - levels * eta)


class Cumulant:
    """K(φ) = Σ_i k_i log Σ_j x_ij e^{φ l_j} of the composed arrays, bounded above, and the Chernoff
    bounds it gives. Any φ gives a valid bound; the search over φ only makes it tight."""

    def __init__(self, measures, counts):
        self.counts = counts
        self.arrays = []
        variance = 0.0
        for measure, count in zip(measures, counts):
            keep = measure.tilted > 0
            log_x, losses = measure.log_tilted[keep], measure.losses[keep]
            self.arrays.append((log_x, losses, math.log2(losses.size + 1)))
            weights = measure.tilted / measure.tilted.sum()
            mean = float((weights * measure.losses).sum())
            variance += count * float((weights * np.square(measure.losses - mean)).sum())
        # A tail t standard deviations out is bounded best near φ = t / sd: scale the search by the spread.
        self.scale = max(math.sqrt(variance), measures[0].step)
        self.tilt = measures[0].tilt
        self.step = measures[0].step
        self.above_theta = None
        self.below_theta = {}

    def values(self, thetas):
        """Upper bounds of K at each θ: the log-sum-exp widened by its rounding (every exponent rounded
        relative to its magnitude, the sum by log2 n + 2 ulps)."""
        total = np.zeros(thetas.size)
        for (log_x, losses, levels), count in zip(self.arrays, self.counts):
            exponents = log_x[None, :] + thetas[:, None] * losses[None, :]
            largest = exponents.max(axis=1)
            sums = np.exp(exponents - largest[:, None]).sum(axis=1)
            margin = 64 * UNIT_ROUNDOFF * (np.abs(exponents).max(axis=1) + levels + 8)
            total += count * (largest + np.log(sums) + margin)
        return total

    def _minimum(self, objective, sign, low=0.0):
        """(min, argmin) over θ > ``low`` of objective(θ, K(sign·θ)): rounds of log-spaced offsets θ − low,
        each round between the neighbours of the last round's best."""
        offsets = _RELATIVE_THETAS / self.scale
        best, best_theta = math.inf, low + offsets[0]
        for _ in range(_ROUNDS):
            thetas = low + offsets
            values = objective(thetas, self.values(sign * thetas))
            index = int(np.argmin(values))
            if values[index] < best:
                best, best_theta = float(values[index]), float(thetas[index])
            left = offsets[index - 1] if index > 0 else offsets[0] / 100
            right = offsets[index + 1] if index < offsets.size - 1 else offsets[-1] * 100
            offsets = np.geomspace(left, right, _RELATIVE_THETAS.size)
        return best, best_theta

    def log_above(self, loss):
        """Bound of log P_T(S >= loss) for the composed tilted arrays, at the θ that placed :meth:`top`
        (or the whole mass, K(0), where that is smaller)."""
        values = self.values(np.array([self.above_theta, 0.0]))
        return min(float(values[0]) - self.above_theta * loss, float(values[1]))

    def log_below(self, loss, moved=False):
        """Bound of log P_T(S <= loss), at the θ that placed :meth:`bottom`; with ``moved`` (that θ is then
        >= λ), of the tilted weight that the real mass at or below ``loss`` has once moved up one cell:
        at most exp(s + K(−φ) + (φ − λ)l) real mass for any φ >= λ, times e^{λ(l + h) − s}."""
        theta = self.below_theta[moved]
        values = self.values(np.array([-theta, 0.0]))
        bound = float(values[0]) + theta * loss + (self.tilt * self.step if moved else 0.0)
        return bound if moved else min(bound, float(values[1]))

    def top(self, log_tail):
        """A loss from which on the tilted mass is at most e^log_tail: min over θ of (K(θ) − log_tail)/θ."""
        value, self.above_theta = self._minimum(lambda t, k: (k - log_tail) / t, +1)
        return value

    def bottom(self, log_tail, moved=False):
        """A loss up to which the tilted mass (with ``moved``: the moved weight) is at most e^log_tail."""
        shift = self.tilt * self.step if moved else 0.0
        value, theta = self._minimum(lambda t, k: (k - log_tail + shift) / t, -1, low=self.tilt if moved else 0.0)
        self.below_theta[moved] = theta
        return -value


def label_range(measures, counts):
    """(lowest, highest) grid index the exact composition can reach."""
    low = sum(count * m.start for m, count in zip(measures, counts))
    high = sum(count * (m.start + m.tilted.size - 1) for m, count in zip(measures, counts))
    return low, high


def window(measures, counts, cumulant, log_tail=LOG_TAIL):
    """(first index, length N = 2^p) of a cyclic grid outside which each tail is below e^log_tail."""
    step = measures[0].step
    low, high = label_range(measures, counts)
    # An upper measure moves its real mass from below up; a lower one only drops it.
    first = max(low, math.floor(cumulant.bottom(log_tail, moved=measures[0].upper) / step))
    last = min(high, math.ceil(cumulant.top(log_tail) / step))
    last = max(last, first)
    return first, 1 << max(4, (last - first).bit_length())


def cyclic_power(arrays, counts, size):
    """(y, bound): y the cyclic convolution of ``counts[i]`` copies of every array on ``size`` = 2^p points,
    computed as the inverse DFT of Π_i DFT(x_i)^{k_i}, and a bound on every entry's error (module docstring)."""
    epsilon_n = _epsilon_n(size)
    log_product = None
    log_bound = log_exact = rounding = 0.0
    for entries, count in zip(arrays, counts):
        if entries.size > size:  # fold: a cyclic convolution of folded arrays is the folded convolution
            entries = np.concatenate([entries, np.zeros(-entries.size % size)]).reshape(-1, size).sum(axis=0)
        transform = np.fft.rfft(entries, size)
        error = 2.0 * epsilon_n * float(np.abs(entries).sum()) * (1 + 1e-10)
        modulus = np.abs(transform)
        with np.errstate(divide="ignore", invalid="ignore"):  # a zero coefficient: log −∞, its power 0 below
            log_modulus = np.log(modulus + error)
            term = count * np.log(transform)
        log_product = term if log_product is None else log_product + term
        log_bound = log_bound + count * np.log(modulus + 2 * error)
        log_exact = log_exact + count * log_modulus
        rounding = rounding + count * 4 * UNIT_ROUNDOFF * (np.where(modulus > 0, np.abs(log_modulus), 0.0) + 4)
    with np.errstate(under="ignore", invalid="ignore"):
        product = np.exp(log_product)
        product = np.where(np.isnan(product), 0.0, product)
        # Π(R + E)^k − ΠR^k with R = |X̃| + E >= |X|, and the rounding of exp(Σ k log X̃).
        coefficient_error = np.exp(log_bound) * -np.expm1(log_exact - log_bound) * (1 + 1e-6)
        coefficient_error += np.exp(log_bound) * (rounding + 8 * UNIT_ROUNDOFF) * (1 + 1e-6)
    weights = np.full(coefficient_error.size, 2.0)
    weights[0] = 1.0
    if size % 2 == 0:
        weights[-1] = 1.0
    spectrum_norm = float((weights * (np.abs(product) + coefficient_error)).sum())
    result = np.fft.irfft(product, size)
    error = 2.0 * (float((weights * coefficient_error).sum()) + epsilon_n * spectrum_norm) / size
    error += 4 * UNIT_ROUNDOFF * float(np.abs(result).max())
    return result, error


def compose(measures, counts, first, size, cumulant):
    """The composition of ``counts[i]`` copies of every ``measures[i]`` on indices first..first+size−1.

    ``size`` is a power of two; every measure has the same step, tilt and side. See the module
    docstring for what is added (upper) or subtracted (lower) and why.
    """
    step, tilt, upper = measures[0].step, measures[0].tilt, measures[0].upper
    tail_to_infinity = measures[0].tail_to_infinity
    low, high = label_range(measures, counts)
    result, error = cyclic_power([m.tilted for m in measures], counts, size)
    result = np.roll(result, (low - first) % size)
    log_scale = sum(count * m.log_scale for m, count in zip(measures, counts))
    above = math.exp(cumulant.log_above((first + size) * step)) if high >= first + size else 0.0
    if upper:
        result = result + error
        infinity = sum(count * m.infinity for m, count in zip(measures, counts)) * (1 + _SLACK)
        if above > 0.0:
            if tail_to_infinity:
                # Real mass from (first + size)h on: at most e^{s − λl} times its tilted mass.
                real = math.exp(min(log_scale - tilt * (first + size) * step + cumulant.log_above((first + size) * step), 0.0))
                infinity += real * (1 + _SLACK)
            else:
                result[-1] += above * (1 + _SLACK)  # merged into the top cell: its weight only shrinks
        if first > low:
            result[0] += math.exp(min(cumulant.log_below((first - 1) * step, moved=True), 700.0)) * (1 + _SLACK)
        infinity = min(1.0, infinity)
    else:
        below = math.exp(cumulant.log_below((first - 1) * step)) if first > low else 0.0
        result = result - (error + (above + below) * (1 + _SLACK))
        result = np.where(result < _TINY, 0.0, result)
        survive = sum(count * math.log1p(-m.infinity) for m, count in zip(measures, counts))
        infinity = max(-math.expm1(survive) * (1 - 4 * _SLACK), 0.0)
    return GridMeasure._normalised(step, tilt, first, result, log_scale, infinity, upper, error, tail_to_infinity)


def compose_upper(measures, counts):
    """The composed upper :class:`~.distribution.GridMeasure` on its own window."""
    cumulant = Cumulant(measures, counts)
    first, size = window(measures, counts, cumulant)
    return compose(measures, counts, first, size, cumulant)


def compose_lower(pairs, counts):
    """The composed :class:`~.distribution.BucketedPair`: P and Q on one window (the same post-processing)."""
    p_measures, q_measures = [pair.p for pair in pairs], [pair.q for pair in pairs]
    p_cumulant, q_cumulant = Cumulant(p_measures, counts), Cumulant(q_measures, counts)
    p_first, p_size = window(p_measures, counts, p_cumulant)
    q_first, q_size = window(q_measures, counts, q_cumulant)
    first = min(p_first, q_first)
    last = max(p_first + p_size, q_first + q_size) - 1
    size = 1 << max(4, (last - first).bit_length())
    return BucketedPair(compose(p_measures, counts, first, size, p_cumulant),
                        compose(q_measures, counts, first, size, q_cumulant))


def points(measures, counts, cumulant):
    """The cyclic grid length :func:`compose_upper` would use."""
    return window(measures, counts, cumulant)[1]
