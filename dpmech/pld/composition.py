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
  φ by a search. The window is chosen from the same bounds, so that what lies outside is below
  :data:`LOG_TAIL` in tilted mass.
* **Tails of an upper measure.** Its real mass above the window goes to L = +∞, and its real mass
  below is moved up to the bottom cell, with tilted weight at most exp(min_{φ>=λ} K(−φ) + φ(a−1)h + λh).
  The Q side of a :class:`~.distribution.BucketedPair` drops both tails, with its P side: mapping
  every composed index outside the window to one more symbol is a post-processing, and leaving that
  symbol's term out only lowers the lower bound (see :mod:`.discretization`).
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

**Two levels** (:func:`in_two_levels`). The discretisation error of both ends is about k·h² on one
grid, so a width w needs h ∝ √(w/k) and about k/√w points. Composing m = r² steps on the fine grid
(window ∝ √m), coarsening once to the step H = r·h (connect-the-dots for the upper measure, merging
buckets for the lower pair: both on the safe side, see :func:`coarsen_upper`, :func:`coarsen_lower`)
and composing the k/m super-steps on the coarse grid (error about (k/m)·H² = k·h²) needs about
k^{3/4}/√w points on each grid, with r ≈ k^{1/4}.

What is proven: every step above moves mass only to the safe side, and every floating-point error
is bounded, under the stated premise on pocketfft and numpy's complex log and exp. The Chernoff bounds
are evaluated on the arrays themselves, so their only approximation is the search for a good φ, which
changes how tight they are, never whether they hold.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

from .distribution import (
    _SLACK,
    _TINY,
    UNIT_ROUNDOFF,
    BucketedPair,
    GridMeasure,
    _gamma,
    log_rounding,
    log_sum_exp_bound,
)

# Tilted mass allowed outside the composed window on each side.
LOG_TAIL = math.log(1e-16)
# The largest cyclic grid that compose_upper and compose_lower build (the accountant's default max_points):
# its arrays take about 1 GiB. The fine level of a two-level composition of 10^20 steps asked for 2^35.
MAX_WINDOW_POINTS = 1 << 23
#: Most compositions of one entry. The two-level grids need about k^{3/4} points: 10^12 steps (on a
#: coarsened step, with a loose interval) is about the most whose grids fit MAX_WINDOW_POINTS.
MAX_COUNT = 10**12
# Golden-section steps of the θ search after its coarse scan (each shrinks the bracket by 0.618).
_GOLDEN_STEPS = 8


class GridTooLarge(ValueError):
    """The grid a query needs exceeds ``max_points``; ``suggested`` is a discretisation that fits."""

    def __init__(self, message: str, suggested: float) -> None:
        super().__init__(message)
        self.suggested = suggested
# A single-step measure of either end: an upper GridMeasure or a lower BucketedPair (in_two_levels).
_Measure = TypeVar("_Measure", GridMeasure, BucketedPair)


def _epsilon_n(size: int) -> float:
    """ε_N of Higham's Thm. 24.2 for a radix-2 transform of length ``size`` (twiddles to 4u)."""
    levels = max(1, math.ceil(math.log2(size)))
    twiddle = 4 * UNIT_ROUNDOFF
    eta = twiddle + _gamma(4) * (math.sqrt(2.0) + twiddle)
    return levels * eta / (1.0 - levels * eta)


class Cumulant:
    """K(φ) = Σ_i k_i log Σ_j x_ij e^{φ l_j} of the composed arrays, bounded above, and the Chernoff
    bounds it gives. Any φ gives a valid bound; the search over φ only makes it tight."""

    def __init__(self, measures: Sequence[GridMeasure], counts: Sequence[int]) -> None:
        self.counts = counts
        self.arrays = []
        variance = 0.0
        for measure, count in zip(measures, counts):
            keep = measure.tilted > 0
            log_x, losses = measure.log_tilted[keep], measure.losses[keep]
            self.arrays.append((log_x, losses, math.log2(losses.size + 1)))
            if not log_x.size:
                continue
            weights = measure.tilted / measure.tilted.sum()
            mean = float((weights * measure.losses).sum())
            variance += count * float((weights * np.square(measure.losses - mean)).sum())
        # A tail t standard deviations out is bounded best near φ = t / sd: scale the search by the spread.
        self.scale = max(math.sqrt(variance), measures[0].step)
        self.tilt = measures[0].tilt
        self.step = measures[0].step
        self.above_theta = 0.0  # set by top()
        self.below_theta: dict[bool, float] = {}  # set by bottom()

    def values(self, thetas: np.ndarray) -> np.ndarray:
        """Upper bounds of K at each θ: the log-sum-exp widened by its rounding (every exponent rounded
        relative to its magnitude, the sum by log2 n + 2 ulps)."""
        total = np.zeros(thetas.size)
        for (log_x, losses, levels), count in zip(self.arrays, self.counts):
            if not log_x.size:  # no mass at all: the composition is 0
                return np.full(thetas.size, -np.inf)
            exponents = log_x[None, :] + thetas[:, None] * losses[None, :]
            largest = exponents.max(axis=1)
            sums = np.exp(exponents - largest[:, None]).sum(axis=1)
            margin = 64 * UNIT_ROUNDOFF * (np.abs(exponents).max(axis=1) + levels + 8)
            total += count * (largest + np.log(sums) + margin)
        return total

    def _minimum(self, objective: Callable[[np.ndarray, np.ndarray], np.ndarray], sign: float,
                 low: float = 0.0) -> tuple[float, float]:
        """(min, argmin) over θ > ``low`` of objective(θ, K(sign·θ)), both objectives used here being
        unimodal in θ ((K(θ) + c)/θ with K convex, or K(θ) − θl): a coarse scan of 8 offsets θ − low,
        1e-2 to 1e4 over the scale, then golden-section search in log θ − low around the best."""
        offsets = np.geomspace(1e-2, 1e4, 8) / self.scale
        values = objective(low + offsets, self.values(sign * (low + offsets)))
        index = int(np.argmin(values))
        best, best_theta = float(values[index]), float(low + offsets[index])
        left = math.log(offsets[index - 1] if index > 0 else offsets[0] / 100)
        right = math.log(offsets[index + 1] if index < offsets.size - 1 else offsets[-1] * 100)

        def at(log_offset: float) -> float:
            nonlocal best, best_theta
            theta = low + math.exp(log_offset)
            value = float(objective(np.array([theta]), self.values(np.array([sign * theta])))[0])
            if value < best:
                best, best_theta = value, theta
            return value

        ratio = (math.sqrt(5.0) - 1.0) / 2.0
        inner_left, inner_right = right - ratio * (right - left), left + ratio * (right - left)
        value_left, value_right = at(inner_left), at(inner_right)
        for _ in range(_GOLDEN_STEPS):
            if value_left <= value_right:
                right, inner_right, value_right = inner_right, inner_left, value_left
                inner_left = right - ratio * (right - left)
                value_left = at(inner_left)
            else:
                left, inner_left, value_left = inner_left, inner_right, value_right
                inner_right = left + ratio * (right - left)
                value_right = at(inner_right)
        return best, best_theta

    def log_above(self, loss: float) -> float:
        """Bound of log P_T(S >= loss) for the composed tilted arrays, at the θ that placed :meth:`top`
        (or the whole mass, K(0), where that is smaller)."""
        values = self.values(np.array([self.above_theta, 0.0]))
        return min(float(values[0]) - self.above_theta * loss, float(values[1]))

    def log_below(self, loss: float, moved: bool = False) -> float:
        """Bound of log P_T(S <= loss), at the θ that placed :meth:`bottom`; with ``moved`` (that θ is then
        >= λ), of the tilted weight that the real mass at or below ``loss`` has once moved up one cell:
        at most exp(s + K(−φ) + (φ − λ)l) real mass for any φ >= λ, times e^{λ(l + h) − s}."""
        theta = self.below_theta[moved]
        values = self.values(np.array([-theta, 0.0]))
        bound = float(values[0]) + theta * loss + (self.tilt * self.step if moved else 0.0)
        return bound if moved else min(bound, float(values[1]))

    def top(self, log_tail: float) -> float:
        """A loss from which on the tilted mass is at most e^log_tail: min over θ of (K(θ) − log_tail)/θ."""
        value, self.above_theta = self._minimum(lambda t, k: (k - log_tail) / t, +1)
        return value

    def bottom(self, log_tail: float, moved: bool = False) -> float:
        """A loss up to which the tilted mass (with ``moved``: the moved weight) is at most e^log_tail."""
        shift = self.tilt * self.step if moved else 0.0
        value, theta = self._minimum(lambda t, k: (k - log_tail + shift) / t, -1, low=self.tilt if moved else 0.0)
        self.below_theta[moved] = theta
        return -value


def label_range(measures: Sequence[GridMeasure], counts: Sequence[int]) -> tuple[int, int]:
    """(lowest, highest) grid index the exact composition can reach."""
    low = sum(count * m.start for m, count in zip(measures, counts))
    high = sum(count * (m.start + m.tilted.size - 1) for m, count in zip(measures, counts))
    return low, high


def window(measures: Sequence[GridMeasure], counts: Sequence[int], cumulant: Cumulant,
           log_tail: float = LOG_TAIL) -> tuple[int, int]:
    """(first index, length N = 2^p) of a cyclic grid outside which each tail is below e^log_tail."""
    step = measures[0].step
    low, high = label_range(measures, counts)
    # An upper measure moves its real mass from below up; a lower one, or one whose tails are dropped,
    # only drops it.
    moved = measures[0].upper and not measures[0].tails_dropped
    first = max(low, math.floor(cumulant.bottom(log_tail, moved=moved) / step))
    last = min(high, math.ceil(cumulant.top(log_tail) / step))
    last = max(last, first)
    return first, 1 << max(4, (last - first).bit_length())


def cyclic_power(arrays: Sequence[np.ndarray], counts: Sequence[int], size: int) -> tuple[np.ndarray, float]:
    """(y, bound): y the cyclic convolution of ``counts[i]`` copies of every array on ``size`` = 2^p points,
    computed as the inverse DFT of Π_i DFT(x_i)^{k_i}, and a bound on every entry's error (module docstring)."""
    epsilon_n = _epsilon_n(size)
    half = size // 2 + 1
    log_product = np.zeros(half, dtype=complex)
    log_bound, log_exact, rounding = np.zeros(half), np.zeros(half), np.zeros(half)
    for entries, count in zip(arrays, counts):
        if entries.size > size:  # fold: a cyclic convolution of folded arrays is the folded convolution
            entries = np.concatenate([entries, np.zeros(-entries.size % size)]).reshape(-1, size).sum(axis=0)
        transform = np.fft.rfft(entries, size)
        error = 2.0 * epsilon_n * float(np.abs(entries).sum()) * (1 + 1e-10)
        modulus = np.abs(transform)
        with np.errstate(divide="ignore", invalid="ignore"):  # a zero coefficient: log −∞, its power 0 below
            log_modulus = np.log(modulus + error)
            term = count * np.log(transform)
        log_product += term
        log_bound = log_bound + count * np.log(modulus + 2 * error)
        log_exact = log_exact + count * log_modulus
        # |log(|X̃| + E)| + 5 in place of |log|X̃|| + 4: multiplied by Π(|X̃| + 2E)^k below, it still bounds
        # |X̃|^k·(|log|X̃|| + 4) (x^k|log x| grows with x below e^{-1/k}; above it, k|log x| <= 1 <= k).
        rounding = rounding + count * 4 * UNIT_ROUNDOFF * (np.where(modulus > 0, np.abs(log_modulus), 0.0) + 5)
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


def compose(measures: Sequence[GridMeasure], counts: Sequence[int], first: int, size: int,
            cumulant: Cumulant | None) -> GridMeasure:
    """The composition of ``counts[i]`` copies of every ``measures[i]`` on indices first..first+size−1.

    ``size`` is a power of two; every measure has the same step, tilt and side. See the module
    docstring for what is added (upper) or subtracted (lower) and why.
    """
    step, tilt, upper = measures[0].step, measures[0].tilt, measures[0].upper
    tails_dropped = measures[0].tails_dropped
    low, high = label_range(measures, counts)
    result, error = cyclic_power([m.tilted for m in measures], counts, size)
    result = np.roll(result, (low - first) % size)
    log_scale = sum(count * m.log_scale for m, count in zip(measures, counts))
    if upper:
        result = result + error
        # In logs (a mass of e^-1158 must still count): P(some step is +∞) <= Σ k_i P(step i is +∞).
        log_infinity = log_sum_exp_bound([math.log(count) + m.log_infinity for m, count in zip(measures, counts)], True)
        if not tails_dropped:  # (dropped tails need no bound: ``cumulant`` may then be None)
            assert cumulant is not None
            if high >= first + size:
                # Real mass from (first + size)h on: at most e^{s − λl} times its tilted mass.
                log_real = log_scale - tilt * (first + size) * step + cumulant.log_above((first + size) * step)
                log_real += log_rounding(log_real, 4)
                log_infinity = log_sum_exp_bound([log_infinity, min(log_real, 0.0)], True)
            if first > low:
                result[0] += math.exp(min(cumulant.log_below((first - 1) * step, moved=True), 700.0)) * (1 + _SLACK)
        log_infinity = min(0.0, log_infinity)
    else:
        assert cumulant is not None
        above = math.exp(cumulant.log_above((first + size) * step)) if high >= first + size else 0.0
        below = math.exp(cumulant.log_below((first - 1) * step)) if first > low else 0.0
        result = result - (error + (above + below) * (1 + _SLACK))
        result = np.where(result < _TINY, 0.0, result)
        # P(some step is +∞) = 1 − Π(1 − p_i)^{k_i}, rounded down, by the largest of three lower bounds: max p_i;
        # 1 − e^{−S} with S = Σ k_i p_i ((1 − p) <= e^{−p}), from log S, so that a p_i below the smallest double
        # (only its log exists) still counts; and the formula itself where every p_i is a normal double (a
        # subnormal e^-740 has a few bits only: 1 − (1 − p) came out e^-739.997).
        log_sum = log_sum_exp_bound([math.log(count) + m.log_infinity for m, count in zip(measures, counts)], False)
        with np.errstate(divide="ignore"):
            if log_sum < -30.0:  # 1 − e^{−S} >= S(1 − S/2)
                from_sum = log_sum + math.log1p(-0.5 * math.exp(log_sum))
            else:
                from_sum = float(np.log(-np.expm1(-math.exp(log_sum))))
            bounds = [max(m.log_infinity for m in measures), from_sum - log_rounding(from_sum, 4)]
            if all(m.log_infinity > -700.0 or m.log_infinity == -math.inf for m in measures):
                survive = sum(count * math.log1p(-math.exp(m.log_infinity)) for m, count in zip(measures, counts))
                exact = float(np.log(-np.expm1(survive)))
                bounds.append(exact - log_rounding(exact, 2 * len(measures)))
        log_infinity = max(bounds)
    return GridMeasure._normalised(step, tilt, first, result, log_scale, log_infinity, upper, error, tails_dropped)


def _checked_size(measures: Sequence[GridMeasure], counts: Sequence[int], size: int, max_points: int) -> None:
    """Refuse a window over ``max_points`` before any array is built (a GridTooLarge, whose ``suggested`` step
    fits it: the window's width in losses is about fixed, so its points scale as 1/h)."""
    if size > max_points:

        step = measures[0].step
        raise GridTooLarge(
            f"count: composing {max(counts)} steps needs a cyclic grid of {size} points at discretization "
            f"{step:g} (limit max_points = {max_points}); use a discretization of at least "
            f"{step * size / max_points:.3g}, fewer steps, or a closed-form method (exact, basic)",
            step * size / max_points,
        )


def compose_upper(measures: Sequence[GridMeasure], counts: Sequence[int],
                  max_points: int = MAX_WINDOW_POINTS) -> GridMeasure:
    """The composed upper :class:`~.distribution.GridMeasure` on its own window (at most ``max_points``)."""
    cumulant = Cumulant(measures, counts)
    first, size = window(measures, counts, cumulant)
    _checked_size(measures, counts, size, max_points)
    return compose(measures, counts, first, size, cumulant)


def compose_lower(pairs: Sequence[BucketedPair], counts: Sequence[int],
                  max_points: int = MAX_WINDOW_POINTS) -> BucketedPair:
    """The composed :class:`~.distribution.BucketedPair`: P and Q on one window (the same post-processing),
    at most ``max_points``."""
    p_measures, q_measures = [pair.p for pair in pairs], [pair.q for pair in pairs]
    # Q drops its tails, and its tilt λ + 1 gives its entries the weights of P's: P's window serves both.
    cumulant = Cumulant(p_measures, counts)
    first, size = window(p_measures, counts, cumulant)
    _checked_size(p_measures, counts, size, max_points)
    return BucketedPair(compose(p_measures, counts, first, size, cumulant),
                        compose(q_measures, counts, first, size, None))


def coarsening_ratio(counts: Sequence[int]) -> int:
    """r for the two-level composition of :func:`compose_in_two_levels`: about k^{1/4} for the largest
    count k (1 below 81 compositions, where one level is as cheap)."""
    ratio = round(max(counts) ** 0.25)
    return ratio if ratio >= 3 else 1


def _grouped(measure: GridMeasure, ratio: int) -> tuple[np.ndarray, int]:
    """Real log masses of ``measure`` in rows of ``ratio`` fine cells, row c holding the cells whose
    coarse cell (step ratio·h) is c + first; and first."""
    first = math.floor(measure.start / ratio)
    offset = measure.start - first * ratio
    log_masses = measure.log_masses()
    padded = np.full(-(-(offset + log_masses.size) // ratio) * ratio, -np.inf)
    padded[offset : offset + log_masses.size] = log_masses
    return padded.reshape(-1, ratio), first


def _row_log_sum_exp(rows: np.ndarray) -> np.ndarray:
    largest = rows.max(axis=1)
    safe = np.where(np.isfinite(largest), largest, 0.0)
    with np.errstate(divide="ignore"):
        sums: np.ndarray = safe + np.log(np.exp(rows - safe[:, None]).sum(axis=1)) + np.where(np.isfinite(largest), 0.0, -np.inf)
    return sums


def coarsen_upper(measure: GridMeasure, ratio: int) -> GridMeasure:
    r"""The upper measure on the grid of step ratio·h, by connect-the-dots (Doroshenko et al. 2022): a
    mass at l between coarse points L <= l < L + H goes to L + H with weight
    β = (1 − e^{L − l})/(1 − e^{−H}) and to L with 1 − β. That keeps E[e^{−L}] and spreads e^{−L},
    so δ(ε) can only grow (the convexity argument of :mod:`.discretization`); β is rounded up."""
    if ratio == 1:
        return measure
    rows, first = _grouped(measure, ratio)
    coarse_step = measure.step * ratio
    gaps = np.arange(ratio) * measure.step
    beta = np.minimum(-np.expm1(-gaps) / -math.expm1(-coarse_step) * (1 + 1e-12) + 1e-15, 1.0)
    beta[0] = 0.0
    with np.errstate(divide="ignore"):
        stay = _row_log_sum_exp(rows + np.log1p(-beta)[None, :])
        move = _row_log_sum_exp(rows + np.log(beta)[None, :])
    log_masses = np.full(stay.size + 1, -np.inf)
    log_masses[:-1] = stay
    log_masses[1:] = np.logaddexp(log_masses[1:], move)
    # Each row sums at most ``ratio`` rounded terms: widen by that many ulps (relative).
    log_masses += (ratio + 4) * 4 * UNIT_ROUNDOFF
    return GridMeasure.from_log_masses(coarse_step, measure.tilt, first, log_masses, measure.log_infinity, True,
                                       measure.tails_dropped)


def coarsen_lower(pair: BucketedPair, ratio: int) -> BucketedPair:
    """The bucketed pair on the grid of step ratio·h: every ``ratio`` buckets merged into one labelled by
    the lowest, which maps the index to ⌊index/ratio⌋, a post-processing (see
    :class:`~.distribution.BucketedPair`); P rounded down, Q up."""
    if ratio == 1:
        return pair
    sides = []
    for measure, sign in ((pair.p, -1.0), (pair.q, 1.0)):
        rows, first = _grouped(measure, ratio)
        log_masses = _row_log_sum_exp(rows) + sign * (ratio + 4) * 4 * UNIT_ROUNDOFF
        sides.append(GridMeasure.from_log_masses(measure.step * ratio, measure.tilt, first, log_masses,
                                                 measure.log_infinity, measure.upper, measure.tails_dropped))
    return BucketedPair(*sides)


def in_two_levels(singles: Sequence[_Measure], counts: Sequence[int], ratio: int,
                  compose_fine: Callable[[Sequence[_Measure], Sequence[int]], _Measure],
                  coarsen: Callable[[_Measure, int], _Measure]) -> tuple[Sequence[_Measure], Sequence[int]]:
    """The ledger's entries for the coarse grid of step ratio·h: each entry's k steps as n = k // m
    super-steps of m = min(ratio², k) steps and one of the k mod m left, each composed on the fine grid
    and coarsened once. (Measures and counts to compose on the coarse grid.)

    Why: the discretisation error is about k·h² on one grid, so a width w needs h ∝ √(w/k) and
    k/√w points. Composed m at a time on the fine grid (window ∝ √m) and the n super-steps on the
    coarse one (error about n·H² = k·h² with H = h√m), both grids need about k^{3/4}/√w points.
    """
    if max(counts) > MAX_COUNT:
        raise ValueError(f"count must be at most {MAX_COUNT} compositions of one event for the numeric accountant "
                         f"(got {max(counts)}); its grids would need about count^(3/4) points")
    if ratio == 1:
        return singles, counts
    measures: list[_Measure] = []
    times: list[int] = []
    for single, count in zip(singles, counts):
        size = min(ratio * ratio, count)
        repeats, rest = divmod(count, size)
        for steps, number in ((size, repeats), (rest, 1)):
            if steps and number:
                composed = compose_fine([single], [steps]) if steps > 1 else single
                measures.append(coarsen(composed, ratio))
                times.append(number)
    return measures, times
