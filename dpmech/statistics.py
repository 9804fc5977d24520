r"""Binomial confidence bounds valid down to level 1e-300: the statistics below both the tester and the audits.

One home for the one-sided Clopper–Pearson bounds (Clopper & Pearson 1934) on a binomial
proportion, which :mod:`dpmech.verify` (the black-box tester and its confirmation stage) and
``audits`` (ROC bands, ε lower bounds) both build on. With k successes in n independent
Bernoulli(p) draws,

* ``clopper_pearson_lower(k, n, a)`` is the a-quantile of Beta(k, n − k + 1) (0 at k = 0), and
* ``clopper_pearson_upper(k, n, a)`` is the (1 − a)-quantile of Beta(k + 1, n − k) (1 at k = n),

so P[lower > p] <= a and P[upper < p] <= a for every p: exact coverage, not asymptotic. Each
bound is moved slightly toward the safe side (a smaller lower bound, a larger upper bound) so
that it stays valid where scipy's beta functions are not accurate; :func:`log_beta_lower_tail`
is the far-tail Beta CDF that confirms them.
"""

from __future__ import annotations

import math

import numpy as np
from typing import Callable

from numpy.typing import ArrayLike, NDArray
from scipy import special, stats

from . import validation as check

__all__ = ["clopper_pearson_lower", "clopper_pearson_upper", "log_beta_lower_tail"]


# scipy's beta quantiles (ppf, isf) are off by up to ~1e-5 relative in far tails (level
# 1e-89, measured against 50-digit mpmath) and NaN in some (level 1e-300), and scipy
# 1.17's logcdf by up to 16 % in the tail at 1e-281 (log_beta_lower_tail). A quantile
# is taken from ppf/isf, moved QUANTILE_NUDGE toward the safe side, and kept only when
# log_beta_lower_tail confirms its tail is <= level·(1 − TAIL_MARGIN) and the point
# QUANTILE_SLACK beyond it is past the level; else it is bisected.
QUANTILE_NUDGE = 1e-9
QUANTILE_SLACK = 1e-4
TAIL_MARGIN = 1e-4
_LOG_SMALLEST = math.log(np.finfo(float).smallest_subnormal)
_BISECTIONS = 128


# is_valid(x, where): whether each x (one per row of `where`'s True entries) is on the valid side.
_Validity = Callable[[NDArray[np.float64], NDArray[np.bool_]], NDArray[np.bool_]]


def _confirmed_boundary(is_valid: _Validity, start: NDArray[np.float64], valid_below: bool) -> NDArray[np.float64]:
    """The end of the set {x in [0, 1] : is_valid(x)}, which is [0, q] (valid_below) or [q, 1]; on the valid side.

    ``start`` is a guess of q; it is nudged toward the valid side and kept
    where ``is_valid`` confirms it. Elsewhere q is bisected on log x over
    [log(smallest double), 0], keeping the valid end (0 when no double
    is valid below).
    """
    with np.errstate(invalid="ignore", over="ignore"):
        candidate = np.clip(start * (1.0 - QUANTILE_NUDGE if valid_below else 1.0 + QUANTILE_NUDGE), 0.0, 1.0)
    finite = np.where(np.isfinite(candidate), candidate, 0.5)
    everywhere = np.ones(candidate.shape, bool)
    # Kept only when valid and tight: a point QUANTILE_SLACK further toward the invalid side must be invalid (scipy's
    # quantiles can be off by percents in far tails, and a confirmed but loose one would waste a sample's evidence).
    further = np.clip(finite * (1.0 + QUANTILE_SLACK if valid_below else 1.0 - QUANTILE_SLACK), 0.0, 1.0)
    confirmed = np.isfinite(candidate) & is_valid(finite, everywhere) & ~is_valid(further, everywhere)
    result = np.where(confirmed, candidate, np.nan)
    todo = ~confirmed
    if np.any(todo):
        low, high = np.full(np.count_nonzero(todo), _LOG_SMALLEST), np.zeros(np.count_nonzero(todo))
        for _ in range(_BISECTIONS):
            middle = 0.5 * (low + high)
            valid = is_valid(np.exp(middle), todo)
            low, high = (np.where(valid, middle, low), np.where(valid, high, middle)) if valid_below else (
                np.where(valid, low, middle),
                np.where(valid, middle, high),
            )
        if valid_below:
            result[todo] = np.where(is_valid(np.exp(low), todo), np.exp(low), 0.0)
        else:
            result[todo] = np.exp(high)
    return result


SERIES_RATIO = 0.9
_SERIES_TERMS = 2048
_SERIES_BLOCK = 64


def log_beta_lower_tail(x: ArrayLike, a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """log I_x(a, b), the log of the regularized incomplete beta function (the Beta(a, b) CDF at x), accurate in far tails.

    scipy 1.17's ``betainc`` and ``beta.logcdf`` are off by 0.2 % at I = 1e-281 (a = 180, b = 33) and by 16 % at
    (179, 36), against 50-digit mpmath; a Clopper–Pearson bound confirmed with them was invalid there. Where
    the series converges fast, r = x(a + b)/(a + 1) <= ``SERIES_RATIO`` (the lower tail, x below the mean),
    this is the hypergeometric series (DLMF 8.17.8 with 15.2.1)

        I_x(a, b) = x^a (1 − x)^b / (a B(a, b)) · Σ_{n>=0} (a + b)_n / (a + 1)_n · x^n,

    summed in double precision (positive terms, so the sum's relative error is a few ulps per term), in log
    space with ``betaln``; elsewhere (moderate tails, where scipy is accurate) ``beta.logcdf``. The term
    ratios x(a + b + n)/(a + 1 + n) = x(1 + (b − 1)/(a + 1 + n)) fall toward x when b >= 1 and rise toward
    x when b < 1, so every ratio past term N is at most q = max(the ratio after term N, x) < 1 and the tail
    past term N is at most q/(1 − q) times it: the sum stops once that bound is below 1e-17 of the total,
    or after ``_SERIES_TERMS`` terms, and the bound is added, so the sum is never short of the series.
    """
    x, a, b = np.broadcast_arrays(*(np.asarray(value, dtype=float) for value in (x, a, b)))
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        result = np.asarray(stats.beta.logcdf(x, a, b), dtype=float).copy()
        series = (x > 0.0) & (x < 1.0) & (x * (a + b) <= SERIES_RATIO * (a + 1.0))
        if np.any(series):
            xs, as_, bs = x[series], a[series], b[series]
            total, tail = np.ones_like(xs), np.zeros_like(xs)
            # _SERIES_BLOCK terms per step, as a cumulative product of their ratios (a Python step per term
            # cost more than the arithmetic); `active` are the sums whose tail bound is still too large.
            active, last = np.arange(xs.size), np.ones_like(xs)
            for start in range(0, _SERIES_TERMS, _SERIES_BLOCK):
                xa, aa, ba = xs[active], as_[active], bs[active]
                n = np.arange(start, start + _SERIES_BLOCK, dtype=float)[:, None]
                terms = last * np.cumprod(xa * (aa + ba + n) / (aa + 1.0 + n), axis=0)
                total[active] += terms.sum(axis=0)
                following = start + _SERIES_BLOCK
                bound = np.maximum(xa * (aa + ba + following) / (aa + 1.0 + following), xa)
                tail[active] = terms[-1] * bound / (1.0 - bound)
                going = tail[active] > 1e-17 * total[active]
                active, last = active[going], terms[-1][going]
                if active.size == 0:
                    break
            total = total + tail
            result[series] = (as_ * np.log(xs) + bs * np.log1p(-xs) - np.log(as_) - special.betaln(as_, bs) + np.log(total))
    return result


def _beta_lower_quantile(level: ArrayLike, a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """A number x <= the level-quantile of Beta(a, b), for level down to 1e-300."""
    shape = np.broadcast_shapes(np.shape(level), np.shape(a), np.shape(b))
    level, a, b = (np.broadcast_to(np.asarray(value, dtype=float), shape).ravel() for value in (level, a, b))
    log_level: NDArray[np.float64] = np.log(level) + math.log1p(-TAIL_MARGIN)

    def is_valid(x: NDArray[np.float64], where: NDArray[np.bool_]) -> NDArray[np.bool_]:
        return log_beta_lower_tail(x, a[where], b[where]) <= log_level[where]

    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        start = np.asarray(stats.beta.ppf(level * (1.0 - TAIL_MARGIN), a, b), dtype=float)
    return _confirmed_boundary(is_valid, start, valid_below=True).reshape(shape)


def _beta_upper_quantile(level: ArrayLike, a: ArrayLike, b: ArrayLike) -> NDArray[np.float64]:
    """A number x >= the (1 − level)-quantile of Beta(a, b), for level down to 1e-300.

    One of two such numbers: 1 − the level-quantile of Beta(b, a), rounded
    up, when that is above 1/2 (near 1, 1 − x carries the digits), else
    one confirmed with ``logsf`` (accurate when x is small).
    """
    shape = np.broadcast_shapes(np.shape(level), np.shape(a), np.shape(b))
    level, a, b = (np.broadcast_to(np.asarray(value, dtype=float), shape).ravel() for value in (level, a, b))
    log_level: NDArray[np.float64] = np.log(level) + math.log1p(-TAIL_MARGIN)

    def is_valid(x: NDArray[np.float64], where: NDArray[np.bool_]) -> NDArray[np.bool_]:
        # P[Beta(a, b) >= x] = P[Beta(b, a) <= 1 − x].
        return log_beta_lower_tail(1.0 - x, b[where], a[where]) <= log_level[where]

    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        start = np.asarray(stats.beta.isf(level * (1.0 - TAIL_MARGIN), a, b), dtype=float)
    small = _confirmed_boundary(is_valid, start, valid_below=False)
    with np.errstate(under="ignore"):
        near_one = np.nextafter(1.0 - _beta_lower_quantile(level, b, a).ravel(), np.inf)
    # Both are valid; each is tight on its own side of 1/2.
    return np.minimum(np.where(near_one > 0.5, near_one, small), 1.0).reshape(shape)


def _binomial_arguments(successes: ArrayLike, trials: ArrayLike,
                        level: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    checked_trials = check.integer_at_least("trials", trials, 1)
    checked_successes = check.integer_at_least("successes", successes, 0)
    if np.any(np.asarray(checked_successes) > np.asarray(checked_trials)):
        raise ValueError(f"successes must be an integer in [0, trials] (got {successes!r} with trials {trials!r})")
    checked_level = check.open_unit_interval("level", level)
    return (np.asarray(checked_successes, dtype=float), np.asarray(checked_trials, dtype=float),
            np.asarray(checked_level, dtype=float))


def clopper_pearson_lower(successes: ArrayLike, trials: ArrayLike, level: ArrayLike) -> float | NDArray[np.float64]:
    """One-sided Clopper–Pearson lower confidence bound on a binomial proportion (Clopper & Pearson 1934).

    With k = ``successes`` of n = ``trials`` independent Bernoulli(p) draws,
    the bound is the ``level``-quantile of Beta(k, n − k + 1) (0 at k = 0):
    P[bound > p] <= level for every p. Exact, not asymptotic. Valid for
    ``level`` down to 1e-300: scipy's ``beta.ppf`` (off by up to 1e-5
    relative in far tails, NaN in some) is nudged down and kept only where
    ``beta.logcdf`` confirms a tail <= level·(1 − 1e-4) (a margin for
    logcdf's own error), and bisected on ``logcdf`` elsewhere, so the
    bound errs toward a smaller proportion, by at most ~1e-4 relative.
    Broadcasts over arrays.

    Args:
        successes: integer(s) k in [0, trials].
        trials: integer(s) n >= 1.
        level: one-sided error probability in (0, 1), e.g. α/2 for a two-sided interval.
    """
    k, n, tail = _binomial_arguments(successes, trials, level)
    bound = _beta_lower_quantile(tail, np.maximum(k, 1.0), n - k + 1.0)
    return check.scalar_or_array(np.where(k > 0, bound, 0.0))


def clopper_pearson_upper(successes: ArrayLike, trials: ArrayLike, level: ArrayLike) -> float | NDArray[np.float64]:
    """One-sided Clopper–Pearson upper confidence bound: the (1 − level)-quantile of Beta(k + 1, n − k), 1 at k = n.

    P[bound < p] <= level for every p, for ``level`` down to 1e-300
    (``beta.ppf(1 − level)`` returns 1.0 for level <= 1e-17): above 1/2,
    1 − the lower quantile of Beta(n − k, k + 1) rounded up; below,
    ``beta.isf`` confirmed by ``beta.logsf`` (bisected where it is not), both
    with the margin of :func:`clopper_pearson_lower`. Arguments as in
    :func:`clopper_pearson_lower`.
    """
    k, n, tail = _binomial_arguments(successes, trials, level)
    bound = _beta_upper_quantile(tail, k + 1.0, np.maximum(n - k, 1.0))
    return check.scalar_or_array(np.where(k < n, bound, 1.0))
