r"""Calibration of a one-parameter family against a target (ε, δ), never under-noised.

The returned parameter is one whose *certified upper* δ(ε) (see :mod:`dpmech.pld.accountant`)
is at most the target, so the mechanism it configures is (ε, δ)-DP for the composed
dominating pairs. The search runs on a bracket [a, b] in which b is always certified:
regula falsi (Illinois) on log δ_upper against log of the parameter, on the finest grid,
after optional coarser grids have narrowed the bracket by bisection where their
intervals decide (a point whose certified *lower* δ exceeds the target is not private).

The family must be monotone: more noise (a larger parameter, or a smaller one with
``more_private='smaller'``) never increases δ(ε). That holds for σ of a Gaussian and
the scale of a Laplace (post-processing: more noise is the same mechanism plus
independent noise) and for the ε of randomized response (smaller ε is more private).
"""

from __future__ import annotations

import math

from .. import validation as check
from ..calibration import calibrate_gaussian
from .accountant import ComposedLoss
from .pairs import GaussianPair
from .subsampling import poisson_subsampled

_STAGES = (4.0, 1.0)


def _from_guess(log_excess, guess, low, high, sign, tolerance, slope=None):
    """Search in log(parameter) on the certified log-excess, from ``guess``, on the finest grid only.

    log δ_upper is close to linear in log σ near the root. Phase one steps from ``guess`` (a Newton
    step with ``slope``, an estimate of d log δ / d log parameter, else 5 %) and extrapolates by
    secant, overshooting by a fifth of the step, until one point meets the target and one does not.
    Phase two interpolates between the two ends of that bracket and evaluates r ± 0.45·tolerance
    around the estimate r, which closes the bracket when r is that accurate (else the bracket has
    shrunk and it repeats; the second point is skipped when the first does not meet the target).
    ``sign`` is +1 when a larger parameter is more private. Returns the
    certified end once the bracket is within ``tolerance`` (in log), or None after 12 evaluations
    without a certified point (for the caller's bracketing search).
    """
    lowest, highest = math.log(low), math.log(high)
    private = open_ = None  # (log parameter, excess): the tightest points on each side
    last = []

    def evaluate(x):
        nonlocal private, open_
        x = min(max(x, lowest), highest)
        excess = log_excess(math.exp(x))
        last.append((x, excess))
        if excess <= 0:
            if private is None or sign * (x - private[0]) < 0:
                private = (x, excess)
        elif open_ is None or sign * (x - open_[0]) > 0:
            open_ = (x, excess)

    evaluate(math.log(guess))
    first = last[-1][1]
    if slope is not None and math.isfinite(first) and slope * sign < 0:
        step = -first / slope
        evaluate(last[-1][0] + min(max(1.2 * step, -0.2), 0.2))
    else:
        evaluate(last[-1][0] + sign * (0.05 if first > 0 else -0.05))
    for _ in range(10):
        if private is not None and open_ is not None:
            if abs(private[0] - open_[0]) <= tolerance:
                return math.exp(private[0])
            (x0, f0), (x1, f1) = private, open_
            if math.isfinite(f0) and math.isfinite(f1) and f1 != f0:
                root = x0 - f0 * (x1 - x0) / (f1 - f0)
            else:
                root = 0.5 * (x0 + x1)
            inside = sorted((x0, x1))
            margin = 0.45 * tolerance
            if inside[1] - inside[0] <= 4 * margin:
                evaluate(0.5 * (x0 + x1))
                continue
            root = min(max(root, inside[0] + margin), inside[1] - margin)
            evaluate(root + sign * margin)
            # The other side only when this one met the target and the bracket is not closed yet.
            if last[-1][1] <= 0 and abs(private[0] - open_[0]) > tolerance:
                evaluate(root - sign * margin)
            continue
        (x0, f0), (x1, f1) = last[-2], last[-1]
        if math.isfinite(f0) and math.isfinite(f1) and f1 != f0:
            step = -f1 * (x1 - x0) / (f1 - f0)
            step = min(max(1.2 * step, -0.5), 0.5)
        else:
            step = sign * (0.2 if f1 > 0 else -0.2)
        evaluate(x1 + step)
    return math.exp(private[0]) if private is not None else None


def calibrate(family, epsilon, delta, low, high, *, more_private="larger", discretization=1e-3,
              relative_tolerance=1e-3, guess=None, slope=None):
    """The parameter, within ``relative_tolerance`` of the certified optimum on the grid used, whose
    certified upper δ(ε) is at most ``delta``.

    Args:
        family: callable taking the parameter and returning a ledger (see :mod:`dpmech.pld.accountant`).
        epsilon, delta: the target; ε >= 0, δ ∈ (0, 1).
        low, high: a bracket, 0 < low < high; the more private end must meet the target.
        more_private: 'larger' (noise scales) or 'smaller' (an RR ε).
        discretization: the finest loss grid step used.
        relative_tolerance: stop when the bracket's ends differ by this factor.
        guess: a starting point inside [low, high] near the answer (an RDP or μ-GDP estimate): the search
            is then a secant search on the finest grid from it (about four evaluations instead of
            about eleven); the result is certified the same way.
        slope: with ``guess``, an estimate of d log δ(ε) / d log parameter there, for a first Newton step.
    """
    epsilon = check.non_negative("epsilon", epsilon)
    delta = check.open_unit_interval("delta", delta)
    low = check.positive("low", low)
    high = check.positive("high", high)
    if not low < high:
        raise ValueError(f"low must be below high (got {low!r} >= {high!r})")
    more_private = check.choice("more_private", more_private, ("larger", "smaller"))
    discretization = check.positive("discretization", discretization)
    relative_tolerance = check.positive("relative_tolerance", relative_tolerance)
    if not callable(family):
        raise ValueError("family must be a callable from the parameter to a ledger")  # noqa: TRY004 - dpmech refuses bad input with ValueError
    # Work with "private" = the end that meets the target and "open" = the end not known to.
    private, open_ = (high, low) if more_private == "larger" else (low, high)

    def log_excess(value, step, lower=True):
        """log of certified upper δ over the target, and whether the lower δ already exceeds it."""
        interval = ComposedLoss(family(value), step, epsilon=epsilon, lower=lower).log_delta(epsilon)
        return interval.upper - math.log(delta), interval.lower > math.log(delta)

    if guess is not None:
        guess = check.positive("guess", guess)
        if not low <= guess <= high:
            raise ValueError(f"guess must lie in [low, high] = [{low!r}, {high!r}] (got {guess!r})")
        sign = 1.0 if more_private == "larger" else -1.0
        found = _from_guess(lambda value: log_excess(value, discretization, lower=False)[0], guess, low, high,
                            sign, math.log1p(relative_tolerance), None if slope is None else float(slope))
        if found is not None:
            return found
    if log_excess(private, discretization, lower=False)[0] > 0:
        raise ValueError(
            f"the {'high' if more_private == 'larger' else 'low'} end {private!r} does not meet "
            f"(epsilon, delta) = ({epsilon!r}, {delta!r}); widen the bracket"
        )
    # Coarse grids narrow the bracket by bisection in log scale while they can decide.
    for factor in _STAGES[:-1]:
        step = discretization * factor
        while abs(math.log(private / open_)) > 0.05:
            middle = math.sqrt(private * open_)
            excess, refused = log_excess(middle, step)
            if excess <= 0:
                private = middle
            elif refused:
                open_ = middle
            else:
                break
    # The finest grid: regula falsi (Illinois) on log δ_upper against log σ; the private end stays certified.
    f_private, _ = log_excess(private, discretization, lower=False)
    f_open = None
    for _ in range(12):
        if abs(math.log(private / open_)) <= math.log1p(relative_tolerance):
            break
        if f_open is None or not (math.isfinite(f_open) and math.isfinite(f_private)) or f_open <= f_private:
            middle = math.sqrt(private * open_)
        else:
            weight = f_private / (f_private - f_open)
            middle = math.exp(math.log(private) + weight * (math.log(open_) - math.log(private)))
            # Stay inside and off the ends so the bracket always shrinks.
            span = math.log(open_ / private)
            offset = min(max(math.log(middle / private) / span, 0.02), 0.98)
            middle = private * math.exp(offset * span)
        excess, _ = log_excess(middle, discretization, lower=False)
        if excess <= 0:
            private, f_private = middle, excess
            if f_open is not None:
                f_open *= 0.5
        else:
            open_, f_open = middle, excess
    return private


def poisson_subsampled_gaussian_sigma(sampling_probability, steps, epsilon, delta, *, sensitivity=1.0,
                                      discretization=1e-3, relative_tolerance=1e-3):
    """Noise standard deviation σ of ``steps`` Poisson-subsampled Gaussian releases (add/remove
    neighbours) whose certified upper δ(ε) is at most ``delta``: never under-noised. With
    ``sensitivity`` 1 it is the noise multiplier.

    Noise N(0, σ²Δ²) on a sum of sensitivity Δ, sampling rate q (Zhu, Dong & Wang 2022, Sec. 5;
    Abadi et al. 2016 for the DP-SGD setting).
    """
    rate = check.in_interval("sampling_probability", sampling_probability, 0.0, 1.0, low_open=True, high_open=False)
    steps = check.integer_scalar("steps", steps, 1)
    sensitivity = check.positive("sensitivity", sensitivity)

    def ledger(sigma):
        return [(poisson_subsampled(GaussianPair(sensitivity / sigma), float(rate)), steps)]

    # Start from the central-limit (μ-GDP) approximation μ = q√(k(e^{1/σ²} − 1)) (Bu, Dong, Long &
    # Su 2020) calibrated with the exact Gaussian profile; only a bracket around it is needed.
    mu = calibrate_gaussian(epsilon, delta) ** -1
    exponent = math.log1p(mu * mu / (float(rate) ** 2 * steps))  # s = Δ²/σ² at the guess
    guess = sensitivity / math.sqrt(exponent)
    # d log δ / d log σ of that approximation: (d log δ / d log μ)(d log μ / d log σ), the first
    # μφ(a)/δ with a = μ/2 − ε/μ, the second −s e^s/(e^s − 1).
    a = 0.5 * mu - epsilon / mu
    slope = -(mu * math.exp(-0.5 * a * a) / math.sqrt(2 * math.pi) / delta) * exponent / -math.expm1(-exponent)
    high = 1.5 * guess
    for _ in range(6):
        try:
            return calibrate(ledger, epsilon, delta, 0.6 * guess, high, discretization=discretization,
                             relative_tolerance=relative_tolerance, guess=guess, slope=slope)
        except ValueError as error:
            if "widen the bracket" not in str(error):
                raise
            high *= 2.0
    raise ValueError(f"no noise multiplier up to {high:g} meets (epsilon, delta) = ({epsilon!r}, {delta!r})")


def calibrate_ledger(template, epsilon, delta, low, high, *, more_private="larger", guess=None,
                     discretization=1e-3, relative_tolerance=1e-3):
    """The parameter of a ledger template whose certified upper δ(ε) is at most ``delta``: never under-noised.

    ``template`` maps the parameter (a noise σ or scale, or an RR ε with ``more_private='smaller'``) to a
    :class:`dpmech.PrivacyLedger`; its events are accounted by the ``numeric`` method's pairs
    (:mod:`dpmech.accountants.numeric`: sampled events included), so ``ledger.delta(epsilon,
    method="numeric", discretization=discretization)`` at the returned parameter is at most ``delta``.
    The template must be monotone in the parameter (see the module docstring). Other arguments as in
    :func:`calibrate`.
    """
    from ..accountants.numeric import _Unbounded, engine_ledger
    from ..ledger import PrivacyLedger

    if not callable(template):
        raise ValueError("template must be a callable from the parameter to a PrivacyLedger")  # noqa: TRY004 - dpmech refuses bad input with ValueError

    def family(value):
        ledger = template(value)
        if not isinstance(ledger, PrivacyLedger):
            raise ValueError(f"template must return a PrivacyLedger (got {type(ledger).__name__})")  # noqa: TRY004 - dpmech refuses bad input with ValueError
        try:
            entries = engine_ledger(ledger._pairs())
        except _Unbounded:
            raise ValueError(f"template at {value!r} has unbounded privacy loss; narrow [low, high]") from None
        if not entries:
            raise ValueError(f"template at {value!r} has no privacy loss: nothing to calibrate")
        return entries

    return calibrate(family, epsilon, delta, low, high, more_private=more_private, guess=guess,
                     discretization=discretization, relative_tolerance=relative_tolerance)
