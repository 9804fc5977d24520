"""Newton's method on an upper bound of log δ that always finishes on the private side of the root.

Both Gaussian inversions (σ for a target δ, ε for a target δ) solve
``log δ(x) = log_target`` for a monotone log δ. ``evaluate`` returns an upper
bound on the exact log δ (the evaluated value plus its proven error bound, see
:mod:`dpmech.gaussian`), so stopping where that bound is at or below the
target keeps the guarantee in exact arithmetic. Newton's method first brings
the bound within 1e-12 of the target (or runs out of steps where rounding
noise at extreme inputs is larger); the finishing loop then takes Newton steps
aimed at ``log_target − LOG_DELTA_MARGIN/10`` and stops only once the bound
lies at or below ``log_target``: the finishing step is checked, not assumed.
Where rounding noise at extreme inputs defeats Newton's method, or leaves it
more than a relative 1e-9 inside the private side, bisection on the doubles
between a private and an open point finishes.

Inputs are 1-D float arrays; only the entries that have not converged are updated. The same solver for
one float on Python floats is :func:`dpmech._newton_scalar.solve_scalar`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._newton_scalar import AIM as _AIM
from ._newton_scalar import FINISHING_STEPS as _FINISHING_STEPS
from ._newton_scalar import LOG_DELTA_MARGIN as LOG_DELTA_MARGIN
from ._newton_scalar import MAX_STEPS as _MAX_STEPS
from ._newton_scalar import TIGHTNESS as _TIGHTNESS
from ._newton_scalar import TOLERANCE as _TOLERANCE

_Floats = NDArray[np.float64]
# evaluate(x, index) -> (upper bound on log δ, slope), at the entries ``index`` of the full problem.
ArrayEvaluate = Callable[[_Floats, NDArray[np.integer[Any]]], tuple[_Floats, _Floats]]
# step(x, excess, slope) -> new x.
ArrayStep = Callable[[_Floats, _Floats, _Floats], _Floats]
# The scalar solver (dpmech._newton_scalar, numpy-free) holds the constants both share.
_BISECTION_STEPS = 70


def solve(
    x: _Floats,
    evaluate: ArrayEvaluate,
    step: ArrayStep,
    log_target: _Floats,
    private_end: _Floats,
    open_end: _Floats,
) -> _Floats:
    """Return x with evaluate(x)[0] <= log_target, close to equality.

    Args:
        x: starting points, a 1-D float array (modified in place).
        evaluate: ``evaluate(x, index) -> (upper bound on log δ, slope)`` at ``x``, the entries
            ``index`` of the full problem.
        step: ``step(x, excess, slope) -> new x``, one Newton step that lowers log δ by ``excess``
            to first order.
        log_target: array matching x.
        private_end, open_end: non-negative doubles (arrays matching x) where the bound is known to
            be at or below the target, and above it. Where Newton's method does not finish, or
            finishes more than a relative 1e-9 inside the private side, the answer is bisected on
            the doubles themselves between the two sides.
    """
    active = np.arange(x.size)
    log_delta, slope = evaluate(x, active)
    for _ in range(_MAX_STEPS):
        excess = log_delta - log_target[active]
        moving = np.abs(excess) > _TOLERANCE
        if not np.any(moving):
            break
        active, excess, slope = active[moving], excess[moving], slope[moving]
        moved = step(x[active], excess, slope)
        changed = moved != x[active]
        x[active] = moved
        if not np.any(changed):
            break
        active = active[changed]
        log_delta, slope = evaluate(x[active], active)
    active = np.arange(x.size)
    log_delta, slope = evaluate(x, active)
    for _ in range(_FINISHING_STEPS):
        pending = log_delta > log_target[active]
        if not np.any(pending):
            break
        active, slope = active[pending], slope[pending]
        excess = log_delta[pending] - (log_target[active] - _AIM)
        x[active] = _finishing_step(x[active], excess, slope, step)
        log_delta, slope = evaluate(x[active], active)
    else:
        pending = log_delta > log_target[active]
        if np.any(pending):
            stuck = active[pending]
            x[stuck] = _bisect(x[stuck], private_end[stuck], evaluate, log_target[stuck], stuck)
    # A point a relative 1e-9 toward the open side that is still private means Newton's method
    # stopped far inside (rounding noise at extreme inputs): bisect toward the open end instead.
    everything = np.arange(x.size)
    probe = np.where(open_end > x, x * (1.0 + _TIGHTNESS), x * (1.0 - _TIGHTNESS))
    probe = np.where(probe == x, np.nextafter(x, open_end), probe)
    loose = (evaluate(probe, everything)[0] <= log_target) & (probe != x)
    if np.any(loose):
        index = everything[loose]
        x[index] = _bisect(open_end[index], x[index], evaluate, log_target[index], index)
    return x


def _bisect(
    open_end: _Floats, private_end: _Floats, evaluate: ArrayEvaluate, log_target: _Floats, index: NDArray[np.integer[Any]]
) -> _Floats:
    """Bisection on the bit patterns of positive doubles (ordered like the values): at most 64 steps."""
    if np.any(evaluate(private_end, index)[0] > log_target):
        raise ArithmeticError("the private end of the bisection is not private")
    low, high = np.sort(np.stack([open_end.view(np.int64), private_end.view(np.int64)]), axis=0)
    private_is_high = private_end.view(np.int64) == high
    for _ in range(_BISECTION_STEPS):
        if np.all(high - low <= 1):
            break
        middle = low + (high - low) // 2
        private = evaluate(middle.view(np.float64), index)[0] <= log_target
        to_high = private == private_is_high
        high = np.where(to_high, middle, high)
        low = np.where(to_high, low, middle)
    answer: _Floats = np.where(private_is_high, high, low).view(np.float64)
    return answer


def _finishing_step(x: _Floats, excess: _Floats, slope: _Floats, step: ArrayStep) -> _Floats:
    """A Newton step aimed past the target, and never shorter than one ulp.

    Where log δ is steep in x, a step of size aim/slope can round to no move at
    all; the direction of a unit step then decides the ulp to take.
    """
    moved = step(x, excess, slope)
    stuck = moved == x
    if np.any(stuck):
        moved[stuck] = np.nextafter(x[stuck], step(x[stuck], np.ones(np.count_nonzero(stuck)), slope[stuck]))
    return moved
