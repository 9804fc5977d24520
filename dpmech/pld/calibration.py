r"""Calibration of a one-parameter family against a target (ε, δ), never under-noised.

The returned parameter p is one whose *certified upper* δ(ε) (see :mod:`dpmech.pld.accountant`)
is at most the target, so the mechanism it configures is (ε, δ)-DP for the composed dominating
pairs. It is also shown to be within ``relative_tolerance`` of the smallest parameter that the
same grid certifies: the neighbouring parameter p/(1 + tol) (p·(1 + tol) for a parameter where
smaller is more private) has been evaluated on the same grid and its certified upper δ(ε) exceeds
the target. Both facts come from evaluations made by the search itself and are carried by the
result, a :class:`CalibratedParameter`.

The search works on y = ±log(parameter), oriented so that a larger y is more private, on the
certified log-excess f(y) = log δ_upper(ε) − log δ, which is close to linear in y near the root:
the root is bracketed (by secant steps from a guess, else by bisection from the bracket's more
private end), then Illinois regula falsi, safeguarded by bisection, places each new point a little
on the private side of the interpolated root and, when it is certified, evaluates its neighbour
p/(1 + tol).
A bracket end is never returned silently: when the more private end is not certified, or the
less private end is, the root lies outside [low, high] and a ValueError says on which side.

The family must be monotone: more noise (a larger parameter, or a smaller one with
``more_private='smaller'``) never increases δ(ε). That holds for σ of a Gaussian and the scale
of a Laplace (post-processing: more noise is the same mechanism plus independent noise) and for
the ε of randomized response (smaller ε is more private).

Default grid step. The connect-the-dots upper measure moves each event's loss up to the next
grid point, so a step that is coarse next to ε inflates δ_upper(ε) greatly once many events are
composed (q = 0.01, 1000 steps, ε = 0.01: step 1e-3 certifies σ = 480.7, step 1e-5 certifies
σ ≈ 77). Unless ``discretization`` is given, the step is :func:`default_discretization` of ε.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .. import validation as check
from ..calibration import calibrate_gaussian
from .accountant import ComposedLoss, Ledger
from .pairs import GaussianPair
from .subsampling import poisson_subsampled

MIN_RELATIVE_TOLERANCE = 1e-9
# The default step is ε divided by this, clipped into [_FINEST, _COARSEST] (see default_discretization).
_STEPS_PER_EPSILON = 3000.0
_COARSEST = 1e-3
_FINEST = 1e-6
# poisson_subsampled_gaussian_sigma's first bracket is [guess / this, guess · this].
_GUESS_BRACKET = 8.0
_MAX_EVALUATIONS = 100


class CalibratedParameter(float):
    """A calibrated parameter: a float, with the evidence that certifies it.

    Attributes:
        certified_delta: the certified upper δ(ε) at this parameter, exp of
            ``ComposedLoss(ledger, discretization, epsilon=epsilon, lower=False).log_delta(epsilon).upper``
            from the very evaluation that certified it; at most the target δ.
        discretization: the loss grid step of that evaluation.
        epsilon: the ε it was certified at.

    Arithmetic on it gives plain floats.
    """

    certified_delta: float
    discretization: float
    epsilon: float

    def __new__(cls, value: float, certified_delta: float, discretization: float, epsilon: float) -> CalibratedParameter:
        result = super().__new__(cls, value)
        result.certified_delta = certified_delta
        result.discretization = discretization
        result.epsilon = epsilon
        return result

    def __reduce__(self) -> tuple[type[CalibratedParameter], tuple[float, float, float, float]]:
        return (CalibratedParameter, (float(self), self.certified_delta, self.discretization, self.epsilon))


class _OutsideBracket(ValueError):
    """The root is not in [low, high]: ``side`` is 'low' (it lies below low) or 'high' (above high)."""

    def __init__(self, message: str, side: str) -> None:
        super().__init__(message)
        self.side = side


def default_discretization(epsilon: float) -> float:
    """The loss grid step used when none is given: ε/3000, clipped into [1e-6, 1e-3].

    Chosen by measurement, against σ calibrated at a step of ε/10000 (at most 1e-4) for q = 0.01 and
    δ = 1e-5: at ε = 0.01, 0.1, 1 and 10 with 1000 and 10000 steps, and at ε = 2 and 3 with 10000, the
    σ this step gives is within 0.2 % above it, while the old absolute step 1e-3 gave 6.2 times it at ε = 0.01 (1000
    steps) and 1.1 % above at ε = 1 (10000 steps), and ε/1000 gave 0.8 % above at ε = 0.1 (10000
    steps). The floor keeps ε = 0 (δ(0) is the total variation distance) on a grid of bounded size; at
    ε = 0.001 it was within 0.1 % of a step of 1e-7.
    """
    epsilon = check.non_negative("epsilon", epsilon)
    return min(_COARSEST, max(_FINEST, epsilon / _STEPS_PER_EPSILON))


def _search(evaluate: Callable[[float], tuple[float, float]], ends: tuple[float, float], sign: float,
            tolerance_factor: float, guess: float | None, slope: float | None) -> tuple[float, float]:
    """The certified point p and its evidence, with its neighbour p/(1 + tolerance_factor) shown not certified.

    ``evaluate(p)`` returns the certified upper log δ(ε) minus log δ at p, and that upper log δ.
    ``ends`` = (low, high); ``sign`` is +1 when a larger parameter is more private. Work happens in
    y = sign·log p; a point is certified when its excess is <= 0. Returns (p, upper log δ at p).
    """
    low, high = ends
    tolerance = math.log1p(tolerance_factor)  # the same closeness in y
    open_end, private_end = (low, high) if sign > 0 else (high, low)
    y_open, y_private = sign * math.log(open_end), sign * math.log(private_end)
    # (y, excess, parameter, upper): the tightest evaluated point on each side
    private: tuple[float, float, float, float] | None = None
    open_: tuple[float, float, float, float] | None = None
    refused: set[float] = set()  # every parameter evaluated and not certified
    count = 0

    def at(y: float, parameter: float | None = None) -> tuple[float, float, float, float]:
        """Evaluate at y (or at the exact float ``parameter``), clamped to the bracket; raise at a wrong end."""
        nonlocal private, open_, count
        count += 1
        if count > _MAX_EVALUATIONS:
            raise RuntimeError(f"calibration did not converge in {_MAX_EVALUATIONS} evaluations")
        if parameter is None:
            if y >= y_private:
                parameter = private_end
            elif y <= y_open:
                parameter = open_end
            else:
                parameter = math.exp(sign * y)
        y = sign * math.log(parameter)
        excess, upper = evaluate(parameter)
        point = (y, excess, parameter, upper)
        if excess <= 0:
            if parameter == open_end:
                name = "low" if sign > 0 else "high"
                raise _OutsideBracket(
                    f"the {name} end {open_end!r} already meets the target, so the answer lies "
                    f"{'below low' if sign > 0 else 'above high'}; widen the bracket", name)
            if private is None or y < private[0]:
                private = point
        else:
            refused.add(parameter)
            if parameter == private_end:
                name = "high" if sign > 0 else "low"
                raise _OutsideBracket(
                    f"the {name} end {private_end!r} does not meet the target, so the answer lies "
                    f"{'above high' if sign > 0 else 'below low'}; widen the bracket", name)
            if open_ is None or y > open_[0]:
                open_ = point
        return point

    # Bracketing: from the guess by a Newton step then secant extrapolation (overshooting by a fifth so
    # that it crosses), else from the private end by bisection towards the open end.
    if guess is not None:
        last = at(sign * math.log(guess))
        if slope is not None and math.isfinite(last[1]) and sign * slope < 0:
            size = min(abs(1.2 * last[1] / slope), 0.2)
        else:
            size = 0.05
        while private is None or open_ is None:
            # At least one tolerance: a point with a tiny excess must still be stepped past.
            step = (1.0 if last[1] > 0 else -1.0) * min(max(size, tolerance), 0.5)
            previous, last = last, at(last[0] + step)
            slope_y = (last[1] - previous[1]) / (last[0] - previous[0]) if last[0] != previous[0] else math.nan
            size = abs(1.2 * last[1] / slope_y) if math.isfinite(slope_y) and slope_y < 0 else 2 * abs(step)
    else:
        at(y_private)
        # at() raises where the private end is not certified, so it has set ``private``.
        assert private is not None
        while open_ is None:
            if private[0] - y_open <= tolerance:
                at(y_open)
            else:
                at(0.5 * (private[0] + y_open))

    # Closing: Illinois regula falsi between the tightest points, each new point 0.5·tolerance on the
    # private side of the interpolated root; a certified one has its neighbour p/(1 + tolerance) evaluated
    # at once when the line through it and the open end predicts that the neighbour is not certified.
    def neighbour(parameter: float) -> float:
        moved = parameter / (1.0 + tolerance_factor) if sign > 0 else parameter * (1.0 + tolerance_factor)
        return min(max(moved, low), high)

    weight_private = weight_open = 1.0  # Illinois: halve the excess of an end kept twice
    kept = None
    widths = [math.inf, math.inf]
    while True:
        # Bracketing ended with a point on each side (at() sets them; mypy cannot see through nonlocal).
        assert private is not None and open_ is not None
        y_p, f_p, parameter, upper = private
        y_o, f_o = open_[0], open_[1]
        closest = neighbour(parameter)
        if closest in refused:
            return parameter, upper
        if y_o >= sign * math.log(closest):
            at(0.0, closest)  # the open end is nearer than the neighbour: the neighbour itself must be shown
            continue
        width = y_p - y_o
        g_p, g_o = f_p * weight_private, f_o * weight_open
        if width > 0.5 * widths[0] or not (math.isfinite(g_p) and math.isfinite(g_o)) or g_o == g_p:
            root = 0.5 * (y_p + y_o)  # bisection: the bracket did not halve in two steps, or no line
        else:
            root = y_p - g_p * (y_o - y_p) / (g_o - g_p)
        candidate = min(max(root + 0.5 * tolerance, y_o + 0.25 * tolerance), y_p - 0.25 * tolerance)
        y_c, f_c, value, _ = at(candidate)
        widths = [widths[1], width]
        side = "private" if f_c <= 0 else "open"
        if side == kept:
            if side == "private":
                weight_open *= 0.5
            else:
                weight_private *= 0.5
        else:
            weight_private = weight_open = 1.0
        kept = side
        if side == "private" and math.isfinite(f_c) and math.isfinite(f_o):
            predicted = f_c + (f_o - f_c) * tolerance / (y_c - y_o)
            if predicted > 0 and sign * math.log(neighbour(value)) > y_o:
                at(0.0, neighbour(value))


def calibrate(family: Callable[[float], Ledger], epsilon: float, delta: float, low: float, high: float, *,
              more_private: str = "larger", discretization: float | None = None, relative_tolerance: float = 1e-3,
              guess: float | None = None, slope: float | None = None) -> CalibratedParameter:
    """The parameter p in [low, high] whose certified upper δ(ε) is at most ``delta``, within
    ``relative_tolerance`` of the smallest (or, with ``more_private='smaller'``, largest) parameter the grid
    certifies.

    Proven on return: the certified upper δ(ε) at p (``p.certified_delta``) is at most ``delta``, and the
    certified upper δ(ε) at p/(1 + relative_tolerance) (p·(1 + relative_tolerance) for 'smaller'), or at the
    bracket's less private end when that is nearer, exceeds ``delta``. Both on the grid ``p.discretization``.

    Args:
        family: callable taking the parameter and returning a ledger (see :mod:`dpmech.pld.accountant`).
        epsilon, delta: the target; ε >= 0, δ ∈ (0, 1).
        low, high: a bracket, 0 < low < high, that must contain the answer: a ValueError says on which
            side it lies otherwise (naming ``low`` or ``high``).
        more_private: 'larger' (noise scales) or 'smaller' (an RR ε).
        discretization: the loss grid step; None for :func:`default_discretization` of ε.
        relative_tolerance: in [1e-9, 1): how far p may lie from the smallest certified parameter.
        guess: a starting point inside [low, high] near the answer (an RDP or μ-GDP estimate): the
            search then starts with secant steps from it instead of from the more private end.
        slope: with ``guess``, an estimate of d log δ(ε) / d log parameter there, for a first Newton step.

    Returns:
        a :class:`CalibratedParameter`.
    """
    epsilon = check.single("epsilon", check.non_negative("epsilon", epsilon))
    delta = check.single("delta", check.open_unit_interval("delta", delta))
    low = check.single("low", check.positive("low", low))
    high = check.single("high", check.positive("high", high))
    if not low < high:
        raise ValueError(f"low must be below high (got {low!r} >= {high!r})")
    more_private = check.choice("more_private", more_private, ("larger", "smaller"))
    step = default_discretization(epsilon) if discretization is None else check.single(
        "discretization", check.positive("discretization", discretization))
    relative_tolerance = check.single("relative_tolerance", check.in_interval(
        "relative_tolerance", relative_tolerance, MIN_RELATIVE_TOLERANCE, 1.0, low_open=False, high_open=True))
    if not callable(family):
        raise ValueError("family must be a callable from the parameter to a ledger")  # noqa: TRY004 - dpmech refuses bad input with ValueError
    if guess is not None:
        guess = check.single("guess", check.positive("guess", guess))
        if not low <= guess <= high:
            raise ValueError(f"guess must lie in [low, high] = [{low!r}, {high!r}] (got {guess!r})")
    if slope is not None:
        slope = check.single("slope", check.real_array("slope", slope))
    log_target = math.log(delta)

    def evaluate(value: float) -> tuple[float, float]:
        # The upper end alone decides; lower=False skips the lower measure, which does not change it.
        upper = ComposedLoss(family(value), step, epsilon=epsilon, lower=False).log_delta(epsilon).upper
        return upper - log_target, upper

    sign = 1.0 if more_private == "larger" else -1.0
    value, upper = _search(evaluate, (low, high), sign, relative_tolerance, guess, slope)
    return CalibratedParameter(value, math.exp(upper), step, epsilon)


def poisson_subsampled_gaussian_sigma(sampling_probability: float, steps: int, epsilon: float, delta: float, *,
                                      sensitivity: float = 1.0, discretization: float | None = None,
                                      relative_tolerance: float = 1e-3) -> CalibratedParameter:
    """Noise standard deviation σ of ``steps`` Poisson-subsampled Gaussian releases (add/remove
    neighbours) whose certified upper δ(ε) is at most ``delta``: never under-noised, and within
    ``relative_tolerance`` of the smallest σ the grid certifies (see :func:`calibrate`). With
    ``sensitivity`` 1 it is the noise multiplier.

    Noise N(0, σ²Δ²) on a sum of sensitivity Δ, sampling rate q (Zhu, Dong & Wang 2022, Sec. 5;
    Abadi et al. 2016 for the DP-SGD setting). The ledger certified is
    ``[(poisson_subsampled(GaussianPair(sensitivity / σ), q), steps)]``. ``discretization`` None means
    :func:`default_discretization` of ε.
    """
    rate = float(check.single("sampling_probability", check.in_interval(
        "sampling_probability", sampling_probability, 0.0, 1.0, low_open=True, high_open=False)))
    steps = check.integer_scalar("steps", steps, 1)
    sensitivity = check.single("sensitivity", check.positive("sensitivity", sensitivity))

    def ledger(sigma: float) -> Ledger:
        return [(poisson_subsampled(GaussianPair(sensitivity / sigma), rate), steps)]

    # Start from the central-limit (μ-GDP) approximation μ = q√(k(e^{1/σ²} − 1)) (Bu, Dong, Long &
    # Su 2020) calibrated with the exact Gaussian profile. It can be off by a factor of two for few
    # steps at a small q (q = 0.001, 25 steps: 1.0 for 0.535), hence a wide bracket around it, which
    # costs nothing unless the search walks to an end.
    mu = calibrate_gaussian(epsilon, delta) ** -1
    exponent = math.log1p(mu * mu / (rate**2 * steps))  # s = Δ²/σ² at the guess
    guess = sensitivity / math.sqrt(exponent)
    # d log δ / d log σ of that approximation: (d log δ / d log μ)(d log μ / d log σ), the first
    # μφ(a)/δ with a = μ/2 − ε/μ, the second −s e^s/(e^s − 1).
    a = 0.5 * mu - epsilon / mu
    slope = -(mu * math.exp(-0.5 * a * a) / math.sqrt(2 * math.pi) / delta) * exponent / -math.expm1(-exponent)
    low, high = guess / _GUESS_BRACKET, guess * _GUESS_BRACKET
    for _ in range(4):
        try:
            return calibrate(ledger, epsilon, delta, low, high, discretization=discretization,
                             relative_tolerance=relative_tolerance, guess=guess, slope=slope)
        except _OutsideBracket as error:
            # The old end, known to lie on the wrong side, is the new guess: the search starts there.
            if error.side == "high":
                guess, high = high, high * 64.0
            else:
                guess, low = low, low / 64.0
    raise ValueError(f"no noise multiplier in [{low:g}, {high:g}] is the answer for (epsilon, delta) = "
                     f"({epsilon!r}, {delta!r}) with q = {rate!r} and {steps} steps")
