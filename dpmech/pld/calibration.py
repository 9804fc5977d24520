r"""Calibration of a one-parameter family against a target (ε, δ), never under-noised.

The returned parameter is one whose *certified upper* δ(ε) (see :mod:`dpmech.pld.accountant`)
is at most the target, so the mechanism it configures is (ε, δ)-DP for the composed
dominating pairs. Bisection runs on a bracket [a, b] in which b is always certified and a
is either the caller's lower end or a value whose certified *lower* δ already exceeds
the target (so no smaller noise can be private enough). Coarse grids narrow the bracket
cheaply; finer ones decide the points the coarse interval could not.

The family must be monotone: more noise (a larger parameter, or a smaller one with
``more_private='smaller'``) never increases δ(ε). That holds for σ of a Gaussian and
the scale of a Laplace (post-processing: more noise is the same mechanism plus
independent noise) and for the ε of randomized response (smaller ε is more private).
"""

from __future__ import annotations

import math

from .. import validation as check
from .accountant import ComposedLoss
from .pairs import GaussianPair
from .subsampling import poisson_subsampled

_STAGES = (16.0, 4.0, 1.0)


def calibrate(family, epsilon, delta, low, high, *, more_private="larger", discretization=1e-3,
              relative_tolerance=1e-3):
    """The parameter, within ``relative_tolerance`` of the certified optimum on the grid used, whose
    certified upper δ(ε) is at most ``delta``.

    Args:
        family: callable taking the parameter and returning a ledger (see :mod:`dpmech.pld.accountant`).
        epsilon, delta: the target; ε >= 0, δ ∈ (0, 1).
        low, high: a bracket, 0 < low < high; the more private end must meet the target.
        more_private: 'larger' (noise scales) or 'smaller' (an RR ε).
        discretization: the finest loss grid step used.
        relative_tolerance: stop when the bracket's ends differ by this factor.
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
        raise ValueError("family must be a callable from the parameter to a ledger")
    # Work with "private" = the end that meets the target and "open" = the end not known to.
    private, open_ = (high, low) if more_private == "larger" else (low, high)

    def verdict(value, step):
        interval = ComposedLoss(family(value), step, epsilon=epsilon).delta(epsilon)
        if interval.upper <= delta:
            return "private"
        return "not private" if interval.lower > delta else "undecided"

    if verdict(private, discretization) != "private":
        raise ValueError(
            f"the {'high' if more_private == 'larger' else 'low'} end {private!r} does not meet "
            f"(epsilon, delta) = ({epsilon!r}, {delta!r}); widen the bracket"
        )
    for factor in _STAGES:
        step = discretization * factor
        while abs(math.log(private / open_)) > math.log1p(relative_tolerance):
            middle = math.sqrt(private * open_)
            answer = verdict(middle, step)
            if answer == "private":
                private = middle
            elif answer == "not private":
                open_ = middle
            else:
                break
    return private


def poisson_subsampled_gaussian_sigma(sampling_probability, steps, epsilon, delta, *, sensitivity=1.0,
                                      discretization=1e-3, relative_tolerance=1e-3):
    """Noise multiplier σ of ``steps`` Poisson-subsampled Gaussian releases (add/remove neighbours)
    whose certified upper δ(ε) is at most ``delta``: never under-noised.

    Noise N(0, σ²Δ²) on a sum of sensitivity Δ, sampling rate q (Zhu, Dong & Wang 2022, Sec. 5;
    Abadi et al. 2016 for the DP-SGD setting).
    """
    rate = check.in_interval("sampling_probability", sampling_probability, 0.0, 1.0, low_open=True, high_open=False)
    steps = check.integer_scalar("steps", steps, 1)
    sensitivity = check.positive("sensitivity", sensitivity)

    def ledger(sigma):
        return [(poisson_subsampled(GaussianPair(sensitivity / sigma), float(rate)), steps)]

    return calibrate(ledger, epsilon, delta, 0.1, 50.0, discretization=discretization,
                     relative_tolerance=relative_tolerance)
