r"""Exact composition of Gaussian and finite-support events, with a certified interval.

Truth. Each event is replaced by its dominating pair (see its module in
:mod:`dpmech.events`): a Gaussian with μ = Δ/σ; K-ary randomized response;
binary randomized response for a generic ε-DP event; the four-point pair of
Kairouz, Oh & Viswanath (2015) for a generic (ε, δ) event; nothing for an
event with no privacy loss. Every one of these pairs is symmetric, so the
profile of the composition is the same in both directions and one direction
is computed. The interval returned contains the tight profile δ(ε) (or its
inverse ε(δ)) of the composition of these pairs; for a K-ary randomized
response event that is the mechanism's own tight profile, for generic events
it is the tightest bound their stated (ε, δ) allow.

Method. Gaussians compose to one μ = √(Σ kᵢμᵢ²) (Dong, Roth & Su 2019,
Cor. 3.3). The finite-support events have privacy losses on the lattice
εᵢ·{−1, 0, +1} plus an atom at +∞ of mass δᵢ; n repetitions of one of them
compose in closed form (a binomial or trinomial law on the lattice, computed
with log-gamma, so no repeated convolution), and distinct ones by
convolution of their atoms. With L the composed finite loss and L_G the
Gaussian one, independence gives

.. math::
    \delta(\varepsilon) = P[L = \infty] + \sum_j p_j\,\delta_G(\varepsilon - l_j),

where δ_G(t) = Φ(μ/2 − t/μ) − e^t Φ(−μ/2 − t/μ) is the Gaussian profile at
any real t (for t < 0 through δ_G(t) = 1 − e^t + e^t δ_G(−t), valid for a
symmetric pair; for μ = 0, δ_G(t) = (1 − e^t)₊). δ_G is decreasing, so δ(ε)
is increasing in every atom lⱼ: rounding atoms up gives an upper bound and
rounding them down a lower bound, for the final sum and for any later
convolution. Atoms therefore live on an integer grid of spacing h = 2⁻ᵏ,
rounded up for the upper end and down for the lower end, and sums of atoms
are exact integer arithmetic. When a convolution would hold more than
:data:`MAX_ATOMS` atoms they are merged onto a coarser stride (up for the
upper end, down for the lower end) after atoms of probability below e^-1500
(e^-1500 for δ(ε); e^-60·δ for ε(δ)) are moved to +∞ (upper end) or
dropped (lower end); the interval stays certified and only widens. Products
of more than :data:`_SORTED_CONVOLUTION_LIMIT` atoms are binned straight onto
that stride in O(n) (no sort). Each merge shifts the final loss by at most
one stride, and the shifts add up, so the groups of distinct events are
convolved narrowest first, while the strides are still small.

Everything is in log space, so a δ far below the smallest double keeps an
accurate logarithm. Floating-point error: log-probabilities carry an
absolute error of a few ulps of the magnitudes summed into them; the margin
applied (``log_margin`` in :func:`_profiles`) is 10⁴ times that first-order
bound, plus (n + 2) ulps for every sum of n positive terms along the chain of
convolutions and merges (a sum of n positive doubles errs by at most (n − 1)
ulps relative), plus the Gaussian evaluation's proven error
(:func:`dpmech.gaussian._log_delta_bounds`) and its relative 1e-11
(:mod:`dpmech._newton`); it is added to log δ for the upper end and
subtracted for the lower end. ε(δ) is a bracketing Newton search on the
monotone log δ(ε) (:func:`_search`, slope dδ_G/dt = −e^t Φ(−μ/2 − t/μ)) whose
two ends are each checked by evaluation on the private (upper) or
conservative (lower) side before being returned; the slope only steers the
search and is never part of a bound. Without a Gaussian (μ = 0), δ(ε) is
A − B·e^ε between atoms, so the search starts at that closed-form root
(:meth:`_Profile.pure_root`) with the largest atom, where δ = P[L = ∞], as its
far end, and the upper end is capped at Σ count·ε (rounded up), past which no
finite loss remains. (From far below, the search's safe steps advance one atom
at a time: at tiny δ it ran out of steps hundreds of units above the answer.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray
from scipy import special

from .._newton import LOG_DELTA_MARGIN
from ..events.base import LatticeStep
from ..gaussian import _log_delta_bounds
from ..interval import Interval
from . import EventCounts, GaussianCounts, gaussians_and_answers

MAX_ATOMS = 2048
# Past this many repetitions of a three-atom step, powers by squaring (O(MAX_ATOMS² log n)) beat the
# O(n²) closed form (0.19 s against 0.04 s at n = 1000; equal near n = 200), at a few times the width.
_CLOSED_FORM_TRINOMIAL_LIMIT = 300
# Products of more atoms than this are binned onto strides in O(n) instead of sorted.
_SORTED_CONVOLUTION_LIMIT = 4 * MAX_ATOMS
_NEGLIGIBLE_LOG_PROBABILITY = -1500.0
_GRID_BITS = 50
_UNIT_ROUNDOFF = 2.0**-53
# Newton steps on log δ aim this far (relative to |log δ|, at least absolute) past the root.
_AIM = 1e-13
_MAX_SEARCH_STEPS = 400
_LARGEST_SEARCHED = 1e300


def _parts(pairs: EventCounts) -> tuple[GaussianCounts, dict[LatticeStep, int]]:
    """(Gaussian (μ, count) pairs, {LatticeStep: count}) of the ledger: each event asked for its μ-GDP μ
    (:meth:`~dpmech.events.base.PrivacyEvent.gaussian_mu`), else its finite pair
    (:meth:`~dpmech.events.base.PrivacyEvent.lattice_step`, None for no loss). Equal steps are merged.
    Refuses, by name, every event that answers neither."""
    gaussians, step_counts, refused = gaussians_and_answers(pairs, lambda event: event.lattice_step())
    steps: dict[LatticeStep, int] = {}
    for step, count in step_counts:
        steps[step] = steps.get(step, 0) + count
    if refused:
        raise ValueError(
            f"method 'exact' cannot account {', '.join(sorted(refused))}; it takes Gaussian releases and events "
            "whose dominating pair has the privacy losses ε·{+1, 0, −1} and +∞ (pure ε, (ε, δ), no loss)"
        )
    return gaussians, steps


def supports(pairs: EventCounts) -> bool:
    """Whether every event is one this accountant composes exactly: a dry run of the conversion that
    :func:`epsilon` and :func:`delta` start with."""
    try:
        _parts(pairs)
    except ValueError:
        return False
    return True


def composed_mu(pairs: EventCounts) -> float:
    """μ of the Gaussian part (the events with a μ-GDP :meth:`~dpmech.events.base.PrivacyEvent.gaussian_mu`):
    √(Σ count·μᵢ²) rounded up, scaled so that a huge μᵢ does not overflow (inf past the largest double)."""
    mus = ((event.gaussian_mu(), count) for event, count in pairs)
    return _composed_mu([(mu, count) for mu, count in mus if mu is not None])


def _composed_mu(gaussians: GaussianCounts) -> float:
    """:func:`composed_mu` of (μ, count) pairs."""
    if not gaussians:
        return 0.0
    largest = max(mu for mu, _ in gaussians)
    if not math.isfinite(largest):
        return math.inf
    if len(gaussians) == 1 and gaussians[0][1] == 1:
        return float(largest)
    with np.errstate(over="ignore"):
        value = float(largest * math.sqrt(math.fsum(count * (mu / largest) ** 2 for mu, count in gaussians)))
    # Rounded up, since δ grows with μ: the ratio, its square, the product with the count, the correctly
    # rounded sum, the root and the last product each round by at most one ulp (six in all, the root
    # halving those before it); 8 ulps and one more step up cover them.
    return math.nextafter(value * (1 + 8 * 2.0**-53), math.inf) if math.isfinite(value) else value


def _logsumexp_by_index(index: NDArray[np.int64], log_p: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.float64], int]:
    """Atoms with equal integer index merged, probabilities added in log space; sorted by index.

    Returns (index, log_p, most terms added into one atom), the last for the rounding bound.
    """
    order = np.argsort(index, kind="stable")
    index, log_p = index[order], log_p[order]
    starts = np.flatnonzero(np.concatenate(([True], index[1:] != index[:-1])))
    if starts.size == index.size:
        return index, log_p, 1
    peak = np.maximum.reduceat(log_p, starts)
    finite_peak = np.where(np.isfinite(peak), peak, 0.0)
    run = np.diff(np.append(starts, index.size))
    scaled = np.exp(log_p - np.repeat(finite_peak, run))
    with np.errstate(divide="ignore"):
        return index[starts], finite_peak + np.log(np.add.reduceat(scaled, starts)), int(run.max())


def _lattice_power(step: LatticeStep, count: int) -> tuple[NDArray[np.int64], NDArray[np.float64]] | None:
    """Law of the n-fold sum of one step on the lattice ℤ: (multiples of ε, log-probabilities)."""
    n = count
    if step.log_zero == -math.inf or step.log_plus == -math.inf:
        if step.log_plus == -math.inf:  # ε = 0: everything at 0
            return np.zeros(1, dtype=np.int64), np.zeros(1)
        # Binomial: a steps up, n − a down, D = 2a − n.
        a: NDArray[Any] = np.arange(n + 1)
        log_p = (special.gammaln(n + 1) - special.gammaln(a + 1) - special.gammaln(n - a + 1)
                 + a * step.log_plus + (n - a) * step.log_minus)
        return (2 * a - n).astype(np.int64), log_p
    if n > _CLOSED_FORM_TRINOMIAL_LIMIT:
        return None
    # Trinomial: a up, b down, c = n − a − b still; D = a − b.
    a, b = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    valid = a + b <= n
    a, b = a[valid], b[valid]
    c = n - a - b
    log_p = (special.gammaln(n + 1) - special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(c + 1)
             + a * step.log_plus + b * step.log_minus + c * step.log_zero)
    return _logsumexp_by_index((a - b).astype(np.int64), log_p)[:2]


class _Atoms:
    """Finite privacy-loss atoms index·h (integer index, grid h) and log-probabilities, for one side of the interval."""

    def __init__(self, upper: bool, negligible: float = _NEGLIGIBLE_LOG_PROBABILITY) -> None:
        self.upper = upper
        self.negligible = negligible
        self.index: NDArray[np.int64] = np.zeros(1, dtype=np.int64)
        self.log_p: NDArray[np.float64] = np.zeros(1)
        self.log_infinite = -math.inf  # mass moved to +∞ by merging (upper side only)
        # Sum over every operation so far of the most terms added into one atom: each probability then
        # carries a relative rounding error below about this many units in the last place.
        self.summands = 0

    def _merge(self) -> None:
        if self.index.size <= MAX_ATOMS:
            return
        negligible = self.log_p < self.negligible
        if np.any(negligible):
            if self.upper:
                self.log_infinite = float(np.logaddexp(self.log_infinite, special.logsumexp(self.log_p[negligible])))
            self.index, self.log_p = self.index[~negligible], self.log_p[~negligible]
        if self.index.size <= MAX_ATOMS:
            return
        low, high = int(self.index.min()), int(self.index.max())
        stride = -(-(high - low) // (MAX_ATOMS - 1))
        offset = self.index - low
        rounded = (-(-offset // stride) if self.upper else offset // stride) * stride + low
        self.index, self.log_p, summed = _logsumexp_by_index(rounded, self.log_p)
        self.summands += summed

    def convolve(self, index: NDArray[np.int64], log_p: NDArray[np.float64], summands: int = 0) -> None:
        """Convolve with the atoms (index, log_p), whose probabilities carry ``summands`` (see __init__)."""
        self.summands += summands
        if index.size > MAX_ATOMS:
            # Merge the incoming law first (same side, same rounding), so no product exceeds MAX_ATOMS².
            incoming = _Atoms(self.upper, self.negligible)
            incoming.index, incoming.log_p = index, log_p
            incoming._merge()
            index, log_p = incoming.index, incoming.log_p
            self.log_infinite = float(np.logaddexp(self.log_infinite, incoming.log_infinite))
            self.summands += incoming.summands
        if self.index.size * index.size <= _SORTED_CONVOLUTION_LIMIT:
            pair_index = (self.index[:, None] + index[None, :]).ravel()
            pair_log_p = (self.log_p[:, None] + log_p[None, :]).ravel()
            self.index, self.log_p, summed = _logsumexp_by_index(pair_index, pair_log_p)
            self.summands += summed
            self._merge()
            return
        # A row (column) whose every product is negligible leaves as a whole, before the product is formed.
        rows = self.log_p + float(log_p.max()) >= self.negligible
        columns = log_p + float(self.log_p.max()) >= self.negligible
        if self.upper and not (rows.all() and columns.all()):
            log_total = _log_sum_exp(log_p)
            gone = np.logaddexp(_log_sum_exp(self.log_p[~rows]) + log_total,
                                _log_sum_exp(self.log_p[rows]) + _log_sum_exp(log_p[~columns]))
            self.log_infinite = float(np.logaddexp(self.log_infinite, gone))
        pair_index = (self.index[rows, None] + index[None, columns]).ravel()
        pair_log_p = (self.log_p[rows, None] + log_p[None, columns]).ravel()
        self._bin(pair_index, pair_log_p)

    def _bin(self, index: NDArray[np.int64], log_p: NDArray[np.float64]) -> None:
        """Atoms merged straight onto at most MAX_ATOMS strides of their range (O(n), no sort).

        The same rounding as :meth:`_merge` (negligible atoms to +∞ or dropped, then up or down to the
        stride), applied to every atom even where fewer than MAX_ATOMS distinct indices would remain.
        """
        negligible = log_p < self.negligible
        if np.any(negligible):
            if self.upper:
                self.log_infinite = float(np.logaddexp(self.log_infinite, _log_sum_exp(log_p[negligible])))
            index, log_p = index[~negligible], log_p[~negligible]
        if index.size == 0:
            self.index, self.log_p = index, log_p
            return
        low, high = int(index.min()), int(index.max())
        stride = max(-(-(high - low) // (MAX_ATOMS - 1)), 1)
        offset = index - low
        bins = -(-offset // stride) if self.upper else offset // stride
        peak = np.full(MAX_ATOMS, -np.inf)
        np.maximum.at(peak, bins, log_p)
        total = np.bincount(bins, weights=np.exp(log_p - peak[bins]), minlength=MAX_ATOMS)
        self.summands += int(np.bincount(bins).max())
        occupied = np.flatnonzero(total > 0.0)
        self.index = occupied.astype(np.int64) * stride + low
        self.log_p = peak[occupied] + np.log(total[occupied])


def _power_by_squaring(step_index: NDArray[np.int64], step_log_p: NDArray[np.float64], count: int, upper: bool, negligible: float) -> _Atoms:
    """n-fold convolution of a small atom set with itself, merged as it grows (for large trinomial counts)."""
    result = _Atoms(upper, negligible)
    base = _Atoms(upper, negligible)
    base.index, base.log_p = step_index, step_log_p
    while count:
        if count & 1:
            result.convolve(base.index, base.log_p, base.summands)
            result.log_infinite = float(np.logaddexp(result.log_infinite, base.log_infinite))
        count >>= 1
        if count:
            squared = _Atoms(upper, negligible)
            squared.index, squared.log_p, squared.log_infinite = base.index, base.log_p, base.log_infinite
            squared.summands = base.summands
            squared.convolve(base.index, base.log_p, base.summands)
            squared.log_infinite = float(np.logaddexp(squared.log_infinite, base.log_infinite))
            base = squared
    return result


def _log_sum_exp(terms: NDArray[np.float64], extra: float = -math.inf) -> float:
    """log(Σ e^terms + e^extra) for a 1-D array; −inf for no mass. (scipy's logsumexp costs 0.2 ms a call.)"""
    peak = max(float(terms.max(initial=-math.inf)), extra)
    if peak == -math.inf:
        return -math.inf
    if peak == math.inf:
        return math.inf
    return peak + math.log(float(np.exp(terms - peak).sum()) + math.exp(extra - peak))


@dataclass(frozen=True)
class _Profile:
    """Everything δ(ε) needs for one side: Gaussian μ, finite atoms, log P[L = ∞] and the log margin.

    ``loss`` is sorted ascending (as every :class:`_Atoms` keeps its indices); ``largest_loss`` is a
    double >= the largest finite privacy loss of the events' pairs, Σ count·ε, whatever the rounding
    of the atoms.
    """

    mu: float
    loss: NDArray[np.floating[Any]]
    log_p: NDArray[np.float64]
    log_infinite: float
    log_margin: float
    largest_loss: float

    def evaluate(self, epsilon: float, evaluated: bool = False) -> tuple[float, float]:
        """(log δ(ε) of this side's atoms, margin excluded; d log δ / dε of the evaluation, for steps only).

        The first is a bound on this side (upper side: from above, lower side: from below); with
        ``evaluated``, the Gaussian core's evaluation itself (an estimate, no bound). The slope
        uses dδ_G/dt = −e^t Φ(−μ/2 − t/μ) (all real t) and is never part of a bound.
        """
        t = epsilon - self.loss
        negative = t < 0.0
        t_negative = t[negative]
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            # For t < 0, δ_G(t) = 1 − e^t + e^t δ_G(−t) (symmetric pair); for μ = 0, δ_G(t) = (1 − e^t)₊.
            below = np.log(-np.expm1(t_negative))
            if self.mu == 0.0:
                gaussian = np.full(t.shape, -np.inf)
                gaussian[negative] = below
                log_slope_terms = self.log_p[negative] + t_negative
            else:
                magnitude = np.abs(t)
                evaluation, lower, upper = _log_delta_bounds(magnitude, np.full(magnitude.shape, self.mu))
                if evaluated:
                    gaussian = np.where(np.isnan(evaluation), -np.inf, np.minimum(evaluation, 0.0))
                elif self.log_margin > 0.0:
                    gaussian = upper
                else:
                    gaussian = lower
                gaussian[negative] = np.logaddexp(below, t_negative + gaussian[negative])
                if self.log_margin > 0.0 and not evaluated:
                    # Far in the tail δ_G underflows even in log form; the upper side then uses
                    # δ_G(t) <= Φ(μ/2 − t/μ), whose logarithm stays finite, so no positive δ becomes 0.
                    lost = np.isnan(gaussian) | (gaussian == -np.inf)
                    if np.any(lost):
                        gaussian[lost] = special.log_ndtr(0.5 * self.mu - t[lost] / self.mu)
                else:
                    gaussian[np.isnan(gaussian)] = -np.inf  # a lower bound may drop what it cannot evaluate
                log_slope_terms = self.log_p + t + special.log_ndtr(-0.5 * self.mu - t / self.mu)
            log_delta = _log_sum_exp(self.log_p + gaussian, self.log_infinite)
            log_slope = _log_sum_exp(log_slope_terms)
        slope = -math.exp(min(log_slope - log_delta, 700.0)) if log_delta > -math.inf else -math.inf
        return log_delta, slope

    def log_delta(self, epsilon: float, evaluated: bool = False) -> float:
        """log δ(ε) of this side's atoms, margin excluded; ``evaluated``: the Gaussian core's evaluation, no bound."""
        return self.evaluate(epsilon, evaluated)[0]

    def pure_root(self, log_target: float) -> float:
        r"""For μ = 0: the ε where log δ(ε) + margin = ``log_target``, in closed form (−inf if below every atom).

        With atoms l₀ < … < l_{n−1} and no Gaussian, δ(ε) = P[L = ∞] + Σ_{lⱼ > ε} pⱼ (1 − e^{ε − lⱼ}),
        so on [l_{k−1}, l_k)

        .. math::
            \delta(\varepsilon) = P[L = \infty] + A_k - B_k e^{\varepsilon},\quad
            A_k = \sum_{j \ge k} p_j,\quad B_k = \sum_{j \ge k} p_j e^{-l_j},

        and the root lies on the first piece whose right end l_k has δ below the target D = e^(log_target
        − margin) − P[L = ∞]: ε = log((A_k − D)/B_k). Newton steps on log δ from far below overshoot
        past the largest atom, where δ = 0, and the safe steps on δ(e^ε) reach only the end of the
        current linear piece, one atom per step: a search from far off takes about one step per atom
        (over 400 for a thousand repetitions at δ = 1e-200), so :func:`epsilon` starts it here. Only
        a start: the search checks its ends by evaluation. Requires P[L = ∞] below the target.
        """
        log_goal = log_target - self.log_margin
        log_d = log_goal + math.log1p(-math.exp(self.log_infinite - log_goal))
        # Tail sums from the right in log space: log A_k and log B_k.
        log_a = np.logaddexp.accumulate(self.log_p[::-1])[::-1]
        log_b = np.logaddexp.accumulate((self.log_p - self.loss)[::-1])[::-1]
        # δ(l_k) − P[L = ∞] = A_{k+1} − B_{k+1} e^{l_k}; B_{k+1} e^{l_k} / A_{k+1} < 1 is a mean of e^{l_k − lⱼ}
        # (which rounds to 1, a δ of 0 or NaN here, only for atoms a few ulps apart: a start either way).
        with np.errstate(divide="ignore", invalid="ignore"):
            at_atoms = np.log1p(-np.exp(log_b[1:] + self.loss[:-1] - log_a[1:])) + log_a[1:]
        k = int(np.argmax(np.append(at_atoms, -math.inf) < log_d))
        if log_d >= log_a[k]:  # k = 0 (but for rounding): δ stays below the target as ε → −∞
            return -math.inf
        return float(log_a[k] + math.log1p(-math.exp(log_d - log_a[k])) - log_b[k])


def _finite_magnitude(step: LatticeStep) -> float:
    """Largest |log-probability| among the step's atoms that have positive probability."""
    return max(abs(value) for value in (step.log_plus, step.log_zero, step.log_minus, 0.0) if math.isfinite(value))


def _compose_leaves(leaves: list[list[_Atoms]], negligible: float) -> tuple[_Atoms, _Atoms]:
    """Convolve (upper, lower) atom pairs into one, narrowest first.

    Every merge rounds by at most one stride, range/(MAX_ATOMS − 1), and these shifts add up in the
    final loss; convolving the narrow laws while the running range is small keeps their strides small.
    """
    upper, lower = _Atoms(True, negligible), _Atoms(False, negligible)
    for other_upper, other_lower in sorted(leaves, key=lambda leaf: _span(leaf[0])):
        for atoms, other in ((upper, other_upper), (lower, other_lower)):
            atoms.convolve(other.index, other.log_p, other.summands)
            atoms.log_infinite = float(np.logaddexp(atoms.log_infinite, other.log_infinite))
    return upper, lower


def _span(atoms: _Atoms) -> int:
    return int(atoms.index.max() - atoms.index.min()) if atoms.index.size else 0


def _profiles(pairs: EventCounts, negligible: float = _NEGLIGIBLE_LOG_PROBABILITY) -> list[_Profile]:
    """(upper, lower) profiles of the composition; see the module docstring.

    ``negligible``: atoms below this log-probability may be moved to +∞ (upper
    side) or dropped (lower side) when atoms must be merged.
    """
    gaussians, groups = _parts(pairs)
    mu = _composed_mu(gaussians)
    log_finite = math.fsum(count * math.log1p(-step.delta) for step, count in groups.items())
    with np.errstate(divide="ignore"):
        log_infinite = math.log(-math.expm1(log_finite)) if log_finite < 0.0 else -math.inf
    largest_loss = math.fsum(count * step.epsilon for step, count in groups.items())
    # Σ count·ε exactly, rounded up: the cap of the upper end when δ(ε) is P[L = ∞] past it (μ = 0).
    exact_largest = sum((Fraction(step.epsilon) * count for step, count in groups.items()), Fraction(0))
    largest_up = float(exact_largest)
    if largest_up < exact_largest:
        largest_up = math.nextafter(largest_up, math.inf)
    # |losses| <= largest_loss <= 2^50 grid units, so indices and their sums stay exact in int64 and double.
    # (Never below the smallest subnormal 2^-1074, which divides every double exactly.)
    grid = math.ldexp(1.0, max((math.frexp(largest_loss)[1] if largest_loss > 0.0 else 0) - _GRID_BITS, -1074))
    leaves: list[list[_Atoms]] = []
    error_scale = 1.0
    for step, count in groups.items():
        multiple = step.epsilon / grid  # exact: grid is a power of two
        lattice = _lattice_power(step, count)
        if lattice is None:
            # Too many repetitions for the closed form: powers of the step on the lattice ℤ (units of ε),
            # merged as they grow, rounded up for the upper side and down for the lower.
            unit = np.array([1, 0, -1], dtype=np.int64)
            log_unit = np.array([step.log_plus, step.log_zero, step.log_minus])
            keep = np.isfinite(log_unit)
            sides: dict[bool, _Atoms | tuple[NDArray[np.int64], NDArray[np.float64]]] = {side: _power_by_squaring(unit[keep], log_unit[keep], count, side, negligible)
                     for side in (True, False)}
            error_scale += count * (_finite_magnitude(step) + 1.0) * math.log2(count + 1)
        else:
            sides = {True: lattice, False: lattice}
            error_scale += special.gammaln(count + 1) + count * _finite_magnitude(step)
        leaf: list[_Atoms] = []
        for side in (True, False):
            powered = sides[side]
            atoms = _Atoms(side, negligible)
            multiples, log_p = (powered.index, powered.log_p) if isinstance(powered, _Atoms) else powered
            if isinstance(powered, _Atoms):
                atoms.log_infinite, atoms.summands = (powered.log_infinite if side else -math.inf), powered.summands
            # multiples·ε/h in floating point is within 1/8 of a grid unit (|value| <= 2^50): one unit covers it.
            scaled = multiples * multiple
            rounded = np.ceil(scaled).astype(np.int64) + 1 if side else np.floor(scaled).astype(np.int64) - 1
            atoms.index, atoms.log_p, summed = _logsumexp_by_index(rounded, log_p)
            atoms.summands += summed
            atoms._merge()
            leaf.append(atoms)
        leaves.append(leaf)
    upper, lower = _compose_leaves(leaves, negligible)
    # Every sum of n positive terms (with their exp and log) errs by at most about (n + 2) ulps relative;
    # the summand counts add up along the chain of convolutions and merges.
    summands = max(upper.summands, lower.summands)
    log_margin = (LOG_DELTA_MARGIN + 1e4 * _UNIT_ROUNDOFF * error_scale * (1.0 + math.log2(1 + len(groups)))
                  + 8.0 * _UNIT_ROUNDOFF * summands)
    profiles: list[_Profile] = []
    for atoms, sign in ((upper, 1.0), (lower, -1.0)):
        infinite = float(np.logaddexp(log_infinite, atoms.log_infinite)) if atoms.upper else log_infinite
        profiles.append(_Profile(mu, atoms.index * grid, atoms.log_p + log_finite, infinite, sign * log_margin,
                                 largest_up))
    return profiles


def _log_delta(profile: _Profile, epsilon: float) -> float:
    return profile.log_delta(epsilon) + profile.log_margin


def log_delta_interval(pairs: EventCounts, epsilon: float) -> tuple[float, float, float]:
    """(log lower, log estimate, log upper) of δ(ε), all at most log 1 = 0; the estimate is the evaluation."""
    upper, lower = _profiles(pairs)
    if math.isinf(upper.mu):
        return 0.0, 0.0, 0.0
    log_lower, log_upper = min(_log_delta(lower, epsilon), 0.0), min(_log_delta(upper, epsilon), 0.0)
    return log_lower, min(max(upper.log_delta(epsilon, evaluated=True), log_lower), log_upper), log_upper


def delta(pairs: EventCounts, epsilon: float) -> Interval:
    """δ(ε) as an interval; its logarithms are in the note-free :func:`log_delta_interval`."""
    lower, estimate, upper = (math.exp(value) for value in log_delta_interval(pairs, epsilon))
    return Interval(lower, estimate, upper, True)


class _SearchedProfile(Protocol):
    """What :func:`_search` and :func:`_lower_start` read of a profile: a :class:`_Profile`, or the ledger's
    float-only profile of Gaussians alone."""

    @property
    def log_margin(self) -> float: ...

    def evaluate(self, epsilon: float, evaluated: bool = False) -> tuple[float, float]: ...


def _search(profile: _SearchedProfile, log_target: float, upper_side: bool, start: float, high: float = math.inf,
            first: tuple[float, float] | None = None) -> tuple[float, float, float]:
    """The end of a bracket of ε(δ) on the requested side, each end checked by evaluation.

    ``excess(ε) = log δ(ε) + margin − log δ`` decreases in ε. The upper side returns the smallest ε
    found with excess <= 0 (so δ(ε) <= δ is proven there); the lower side the largest found with
    excess >= 0 (δ(ε) >= δ proven), or 0, which bounds every ε from below. ``high``, if finite, is a
    point already known to lie on the far side; ``first``, if given, is ``profile.evaluate(start)``.
    Newton steps on excess aim a little past the root
    (``_AIM`` in log δ), so that consecutive steps land on both sides and close the bracket. A step
    that leaves the bracket (log δ has a singularity where δ vanishes, past the largest finite loss
    when μ = 0) is replaced by a Newton step on δ as a function of y = e^ε, which is convex in y
    (each term Σ pⱼ δ_G(ε − lⱼ) is: d²δ_G/dy² = φ(b)/(μy) > 0, and piecewise linear for μ = 0), so
    from the left it never passes the root; failing that, by bisection. Steps are taken from the last
    point with δ > 0. Returns (answer, low end, high end).
    """
    aim = _AIM * max(1.0, abs(log_target))
    low, low_excess, high_excess = 0.0, math.inf, -math.inf
    x = start
    finite = None  # (point, excess, slope, +1 below the root or −1 above) of the last evaluation with δ > 0
    stalls = 0
    for _ in range(_MAX_SEARCH_STEPS):
        value, slope = profile.evaluate(x) if first is None else first
        first = None
        excess = value + profile.log_margin - log_target
        # Excess 0 is the far side for the upper end and the near side for the lower end: steps from it
        # go towards the other side, which the sign of the excess alone would not tell.
        below = excess > 0.0 or (not upper_side and excess == 0.0)
        if math.isfinite(excess) and slope < 0.0:
            finite = (x, excess, slope, 1.0 if below else -1.0)
        if below:
            low, low_excess = x, excess
            if x >= _LARGEST_SEARCHED:
                break
        else:
            high, high_excess = x, excess
        if (math.isfinite(high) and high - low <= 2.0 * math.ulp(high)) or (
                low_excess <= 4.0 * aim and high_excess >= -4.0 * aim):
            break
        x = math.nan
        if finite is not None:
            point, excess, slope, toward = finite
            aimed = excess + toward * aim
            x = point + aimed / -slope
            if not low < x < high:
                # On δ(y): y_new / y = 1 − (δ − δ·e^-aimed) / (y·dδ/dy), with y·dδ/dy = dδ/dε = slope·δ.
                ratio = (-math.expm1(-aimed) if aimed > -700.0 else -math.inf) / -slope
                x = point + math.log1p(ratio) if ratio > -1.0 else low
            if abs(x - point) <= math.ulp(point) * 2.0**stalls:
                # A step at the resolution of doubles, or a slope ruined by cancellation (t + log Φ(b) with
                # both near 1e39 when μ is huge): ulps towards the root, twice as many each time in a row.
                x = point + toward * math.ulp(point) * 2.0**stalls
                stalls = min(stalls + 1, 1000)  # 2.0**1024 would raise
            else:
                stalls = 0
        if not low < x < high:
            if math.isinf(high):
                x = min(max(2.0 * low, 1.0), _LARGEST_SEARCHED) if not (math.isfinite(x) and x > low) else min(
                    x, _LARGEST_SEARCHED)
            elif low_excess == math.inf:
                x = 0.0  # the root may sit at 0, which bisection would only approach
            else:
                x = 0.5 * (low + high)
        if (x == low and low_excess != math.inf) or x == high:  # adjacent doubles
            break
    return (high if upper_side else low), low, high


def _lower_start(profile: _SearchedProfile, log_target: float, near: float) -> tuple[float, tuple[float, float] | None]:
    """(point, its evaluation) with excess >= 0 at or below ``near``, found leftwards from it; (near, None) if none.

    The lower side's bound on δ_G proves nothing (−inf) where the Gaussian core's error bound exceeds
    its value, far from the root when μ is huge, so its excess need not be monotone there: the search
    for the largest checked point starts next to the upper end, a Newton step first, then doubling.
    """
    evaluation = profile.evaluate(near)
    excess = evaluation[0] + profile.log_margin - log_target
    if excess >= 0.0:
        return near, evaluation
    slope = evaluation[1]
    distance = (excess - _AIM * max(1.0, abs(log_target))) / slope if -math.inf < slope < 0.0 else 0.0
    distance = max(distance, 1e-15 * near, 5e-324)
    while distance < near:
        point = near - distance
        evaluation = profile.evaluate(point)
        if evaluation[0] + profile.log_margin - log_target >= 0.0:
            return point, evaluation
        distance *= 4.0
    return near, None


def epsilon(pairs: EventCounts, delta: float) -> Interval:
    """ε(δ) as a certified interval (lower <= tight ε <= upper)."""
    log_target = math.log(delta)
    # Mass far below δ moved to +∞ changes the upper end by a relative e^-60 at most per merge.
    upper_profile, lower_profile = _profiles(pairs, min(log_target - 60.0, 0.0))
    if math.isinf(upper_profile.mu):
        return Interval(math.inf, math.inf, math.inf, True, "a Gaussian with sigma/sensitivity near 0: no guarantee")
    if upper_profile.log_infinite + upper_profile.log_margin >= log_target:
        upper, near, far = math.inf, 1.0, math.inf
    elif upper_profile.mu == 0.0:
        # No Gaussian: δ is A − B·e^ε between atoms, so the search starts at its closed-form root, below the
        # largest atom, where δ = P[L = ∞] < δ already puts the far end of the bracket.
        top = float(upper_profile.loss[-1])
        start = max(min(upper_profile.pure_root(log_target), math.nextafter(top, -math.inf)), 0.0)
        upper, near, far = _search(upper_profile, log_target, True, start, top)
        near = near if near > 0.0 else far
        # Past the largest finite loss δ(ε) = P[L = ∞] < δ: atoms rounded up beyond it (by a grid unit,
        # or a stride when merged) must not lift the upper end above it.
        upper = min(upper, upper_profile.largest_loss)
    else:
        # A first point near the answer: the Gaussian's ε for the target, μ²/2 + zμ, plus the mean finite loss.
        z = max(-float(special.ndtri(min(math.exp(log_target), 0.5))), 0.0)
        mu = upper_profile.mu
        mean_loss = float(np.exp(upper_profile.log_p) @ upper_profile.loss)
        start = max(0.5 * mu * mu + z * mu + mean_loss, 1e-3)
        if start > _LARGEST_SEARCHED:  # ε(δ) is then near μ²/2, within a few factors of the largest double
            upper, near, far = math.inf, 1.0, math.inf
        else:
            upper, near, far = _search(upper_profile, log_target, True, start)
            near = near if near > 0.0 else far
    note = ""
    if math.isinf(upper):
        note = "epsilon exceeds the largest double" if upper_profile.log_infinite < log_target else (
            "the events' probability of unbounded privacy loss is at least delta")
    if lower_profile.log_infinite + lower_profile.log_margin >= log_target:
        lower = math.inf
    else:
        # The lower side's excess is below the upper side's everywhere, so its root is below ``upper``.
        # A checked point, also past 1e300: only P[L = ∞] >= δ (above) proves ε(δ) = ∞.
        start, first = _lower_start(lower_profile, log_target, near) if math.isfinite(near) else (near, None)
        lower = _search(lower_profile, log_target, False, start, far, first)[0]
    lower = min(lower, upper)
    estimate = 0.5 * (lower + upper) if math.isfinite(upper) else upper
    return Interval(lower, estimate, upper, True, note)
