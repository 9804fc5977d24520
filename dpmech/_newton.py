"""Newton's method on log δ that always finishes on the private side of the root.

Both Gaussian inversions (σ for a target δ, ε for a target δ) solve
``log δ(x) = log_target`` for a monotone log δ. Newton's method first brings
``|log δ(x) − log_target|`` below 1e-12; the finishing loop then takes Newton
steps aimed at ``log_target − 2·LOG_DELTA_MARGIN`` and stops only once the
evaluated log δ lies below ``log_target − LOG_DELTA_MARGIN``. Because the margin (relative 1e-11 on δ) is a
hundred times the worst error of the δ evaluation, the answer keeps the
guarantee in exact arithmetic, and the finishing step is checked rather than
assumed.

A scalar input runs a loop on Python floats (a few microseconds per step);
an array input updates only the entries that have not yet converged.
"""

from __future__ import annotations

import numpy as np

# Relative margin on δ that every inversion keeps below the target: a hundred
# times the worst relative error of the δ evaluation (about 1e-13).
LOG_DELTA_MARGIN = 1e-11
_TOLERANCE = 1e-12
_MAX_STEPS = 100


def solve(x, evaluate, step, log_target):
    """Return x with evaluate(x)[0] <= log_target − LOG_DELTA_MARGIN, close to equality.

    Args:
        x: starting point, a float or a 1-D float array (modified in place).
        evaluate: ``evaluate(x, index) -> (log_delta, slope)`` at ``x`` (the
            entries ``index`` of the full problem, or ``None`` for a scalar).
        step: ``step(x, excess, slope) -> new x``, one Newton step that lowers
            log δ by ``excess`` to first order.
        log_target: float or array matching x.
    """
    if np.ndim(x) == 0:
        return _solve_scalar(float(x), evaluate, step, float(log_target))
    return _solve_array(x, evaluate, step, log_target)


def _finishing_step(x, excess, slope, step):
    """A Newton step aimed a full margin past the target, and never shorter than one ulp.

    Where log δ is steep in x, a step of size margin/slope can round to no
    move at all; the direction of a unit step then decides the ulp to take.
    """
    moved = step(x, excess + LOG_DELTA_MARGIN, slope)
    if np.ndim(x) == 0:
        return moved if moved != x else float(np.nextafter(x, step(x, 1.0, slope)))
    stuck = moved == x
    moved[stuck] = np.nextafter(x[stuck], step(x[stuck], np.ones(np.count_nonzero(stuck)), slope[stuck]))
    return moved


def _solve_scalar(x, evaluate, step, log_target):
    log_delta, slope = evaluate(x, None)
    for _ in range(_MAX_STEPS):
        excess = log_delta - log_target
        if abs(excess) <= _TOLERANCE:
            break
        x = step(x, excess, slope)
        log_delta, slope = evaluate(x, None)
    for _ in range(_MAX_STEPS):
        excess = log_delta - (log_target - LOG_DELTA_MARGIN)
        if excess <= 0.0:
            return x
        x = _finishing_step(x, excess, slope, step)
        log_delta, slope = evaluate(x, None)
    raise ArithmeticError("Newton iteration on log delta did not reach the private side")


def _solve_array(x, evaluate, step, log_target):
    active = np.arange(x.size)
    log_delta, slope = evaluate(x, active)
    for _ in range(_MAX_STEPS):
        excess = log_delta - log_target[active]
        moving = np.abs(excess) > _TOLERANCE
        if not np.any(moving):
            break
        active, excess, slope = active[moving], excess[moving], slope[moving]
        x[active] = step(x[active], excess, slope)
        log_delta, slope = evaluate(x[active], active)
    # Entries that stopped earlier still hold their last evaluation in this
    # pass only if re-evaluated; one vectorised evaluation of all is cheaper
    # than tracking them.
    active = np.arange(x.size)
    log_delta, slope = evaluate(x, active)
    for _ in range(_MAX_STEPS):
        excess = log_delta - (log_target[active] - LOG_DELTA_MARGIN)
        pending = excess > 0.0
        if not np.any(pending):
            return x
        active, excess, slope = active[pending], excess[pending], slope[pending]
        x[active] = _finishing_step(x[active], excess, slope, step)
        log_delta, slope = evaluate(x[active], active)
    raise ArithmeticError("Newton iteration on log delta did not reach the private side")
