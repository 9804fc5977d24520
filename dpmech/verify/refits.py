"""The final stage's cheap refit: which vectorised event family re-chooses a candidate's event on a larger sample."""

from __future__ import annotations

from typing import Any

import numpy as np

from .candidates import Candidate
from .projections import _numeric
from .quadrants import QuadrantTally, quadrant_refit
from .statistical import LEVEL_SET_LIMIT, _half_line_refit, _level_set_refit, _rescored, outcome_codes


class RawPool:
    """The outputs of a race's rounds so far, both sides, the newest ``capacity`` per side kept."""

    def __init__(self, first: Any, second: Any) -> None:
        self.first, self.second = first, second

    @property
    def size(self) -> int:
        return min(len(self.first), len(self.second))

    def add(self, first: Any, second: Any, capacity: int | None = None) -> None:
        joined = [_joined(pooled, fresh) for pooled, fresh in ((self.first, first), (self.second, second))]
        self.first, self.second = (sample if capacity is None else sample[-capacity:] for sample in joined)


def _joined(pooled: Any, fresh: Any) -> Any:
    """Two samples as one: concatenated where their rows agree, else as one object array of their outputs (a round of
    tuples is an (n, 2) int array, one with a None among them an (n,) object array)."""
    if pooled.ndim == fresh.ndim and pooled.shape[1:] == fresh.shape[1:] and (pooled.dtype == object) == (fresh.dtype == object):
        return np.concatenate([pooled, fresh])
    objects = np.empty(len(pooled) + len(fresh), dtype=object)
    for index, item in enumerate([*pooled, *fresh]):
        objects[index] = item
    return objects


class CheapRefit:
    """A ``refit`` for a candidate of any family, vectorised and cheap; the candidate's event always competes.

    Level sets for outputs with at most ``LEVEL_SET_LIMIT`` distinct values in the larger sample, else
    half-lines for scalar numeric outputs, else quadrants on two summary statistics for numeric vector
    outputs (:mod:`.quadrants`), else the candidate's own event rescored on it.

    Called as ``refit(first, second, nominal)`` it chooses on one sample. The race of :mod:`.confirm`
    refits on pools that grow round by round instead: :meth:`absorb` adds a round's fresh outputs to a
    state and :meth:`choose` chooses on all of them. For quadrants the state is a
    :class:`.quadrants.QuadrantTally` (histograms: a round costs its fresh outputs, not the pool);
    else it is a :class:`RawPool` of the outputs themselves.
    """

    def __init__(self, candidate: Candidate, delta: float) -> None:
        self.candidate, self.delta = candidate, delta

    def __call__(self, first: Any, second: Any, nominal: int) -> Candidate | None:
        return self.choose(self.absorb(None, first, second), nominal)

    def absorb(
        self, state: QuadrantTally | RawPool | None, first: Any, second: Any, capacity: int | None = None
    ) -> QuadrantTally | RawPool:
        """``state`` (None at first) with a round's outputs of D and of D' added; ``capacity`` caps a raw pool per side."""
        if state is None:
            if self._quadrants(first, second) and outcome_codes([first, second])[1] > LEVEL_SET_LIMIT:
                tally = QuadrantTally.start(first, second, self.candidate)
                if tally is not None:
                    return tally
            return RawPool(first, second)
        if isinstance(state, QuadrantTally):
            state.add(first, second)
        else:
            state.add(first, second, capacity)
        return state

    def choose(self, state: QuadrantTally | RawPool, nominal: int) -> Candidate | None:
        """The refitted candidate (with runners-up) on everything ``state`` holds, ranked for N = ``nominal``, or None."""
        if isinstance(state, QuadrantTally):
            return state.candidate(self.delta, nominal)
        first, second = state.first, state.second
        _, count = outcome_codes([first, second])
        refitted: Candidate | None  # the statistical refits are not annotated yet (issue 30)
        if count <= LEVEL_SET_LIMIT:
            refitted = _level_set_refit(first, second, self.delta, keep=self.candidate, nominal_samples=nominal)
        elif all(_numeric(sample) and sample.ndim == 1 for sample in (first, second)):
            refitted = _half_line_refit(first, second, self.delta, self.candidate, nominal)
        elif self._quadrants(first, second):
            refitted = quadrant_refit(first, second, self.delta, self.candidate, nominal)
        else:
            refitted = _rescored(first, second, self.delta, self.candidate, nominal)
        return refitted

    @staticmethod
    def _quadrants(first: Any, second: Any) -> bool:
        return all(_numeric(sample) and sample.ndim == 2 for sample in (first, second)) and first.shape[1] == second.shape[1] >= 2


def cheap_refit(candidate: Candidate, delta: float) -> CheapRefit:
    """:class:`CheapRefit` of ``candidate`` at the claimed ``delta``."""
    return CheapRefit(candidate, delta)
