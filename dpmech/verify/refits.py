"""The final stage's cheap refit: which vectorised event family re-chooses a candidate's event on a larger sample."""

from __future__ import annotations

from .projections import _numeric
from .quadrants import quadrant_refit
from .statistical import LEVEL_SET_LIMIT, _half_line_refit, _level_set_refit, _rescored, outcome_codes


def cheap_refit(candidate, delta):
    """A ``refit`` for a candidate of any family, vectorised and cheap; the candidate's event always competes.

    Level sets for outputs with at most ``LEVEL_SET_LIMIT`` distinct values in the larger sample, else
    half-lines for scalar numeric outputs, else quadrants on two summary statistics for numeric vector
    outputs (:mod:`.quadrants`), else the candidate's own event rescored on it.
    """

    def refit(first, second, nominal):
        _, count = outcome_codes([first, second])
        if count <= LEVEL_SET_LIMIT:
            return _level_set_refit(first, second, delta, keep=candidate, nominal_samples=nominal)
        if all(_numeric(sample) and sample.ndim == 1 for sample in (first, second)):
            return _half_line_refit(first, second, delta, candidate, nominal)
        if all(_numeric(sample) and sample.ndim == 2 for sample in (first, second)) and first.shape[1] == second.shape[1] >= 2:
            return quadrant_refit(first, second, delta, keep=candidate, nominal_samples=nominal)
        return _rescored(first, second, delta, candidate, nominal)

    return refit
