"""The scalar Newton solver of :mod:`dpmech._newton` on Python floats and :mod:`math` alone.

It lives apart from the array solver so that the Gaussian inversions for one number (``dpmech calibrate``,
``dpmech epsilon``) load no numpy. The constants are shared with :mod:`dpmech._newton`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

# evaluate(x) -> (upper bound on log δ, slope), or None where the array path must decide.
ScalarEvaluate = Callable[[float], "tuple[float, float] | None"]
ScalarStep = Callable[[float, float, float], float]

# Base of the error bound on an evaluated log δ: thirty times the worst relative error of the
# δ evaluation (about 3e-13) seen against 50-digit arithmetic. gaussian_log_delta already adds it.
LOG_DELTA_MARGIN = 1e-11
AIM = 0.1 * LOG_DELTA_MARGIN
TOLERANCE = 1e-12
MAX_STEPS = 100
FINISHING_STEPS = 8
TIGHTNESS = 1e-9


def solve_scalar(x: float, evaluate: ScalarEvaluate, step: ScalarStep, log_target: float, open_end: float) -> float | None:
    """:func:`dpmech._newton.solve` for one float with Python-float callbacks; None wherever the array path must decide.

    ``evaluate(x) -> (upper bound on log δ, slope)`` or None. The same three stages; anything unusual
    (a None evaluation, no finish within the steps, a loose finish) returns None rather than guessing.
    """
    pair = evaluate(x)
    if pair is None:
        return None
    upper, slope = pair
    for _ in range(MAX_STEPS):
        excess = upper - log_target
        if abs(excess) <= TOLERANCE:
            break
        moved = step(x, excess, slope)
        if moved == x or not math.isfinite(moved):
            break
        x = moved
        pair = evaluate(x)
        if pair is None:
            return None
        upper, slope = pair
    for _ in range(FINISHING_STEPS):
        if upper <= log_target:
            break
        moved = step(x, upper - (log_target - AIM), slope)
        if moved == x:
            moved = math.nextafter(x, step(x, 1.0, slope))
        x = moved
        pair = evaluate(x)
        if pair is None:
            return None
        upper, slope = pair
    else:
        if upper > log_target:
            return None
    probe = x * (1.0 + TIGHTNESS) if open_end > x else x * (1.0 - TIGHTNESS)
    pair = evaluate(probe if probe != x else math.nextafter(x, open_end))
    if pair is None or pair[0] <= log_target:
        return None
    return x
