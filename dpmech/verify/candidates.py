r"""Candidate events for the final stage of :func:`.tester.find_violation`: each family's most promising (event, order).

Every event family tests its events on a sample it did not choose them
on. Beside its decision it names one candidate for a larger, fresh
sample (:mod:`.confirm`): the (event, order) whose ε lower bound on
N fresh outputs per side (``NOMINAL_SAMPLES``, or the final stage's
expected N) is predicted to be largest: a larger N favours rarer events
with larger ratios.
The prediction is a heuristic that only ranks events: it shrinks the
test counts k (heavy side) and k' (light side) of n outputs to the
one-sided 95 % Clopper–Pearson bounds p̃ <= k/n and q̃ >= k'/n, which
keeps an event hit 3 times against 0 from beating one hit 30,000 times
against 25,000, and returns the bound those proportions would give at
the nominal sample size:

    log(CP_lower(p̃N, N) − δ) − log(CP_upper(q̃N, N)).

Nothing here needs to be sound: the final stage decides on fresh
samples, at a level of its own, whatever was chosen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

NOMINAL_SAMPLES = 1_000_000
SHRINK_LEVEL = 0.05
NOMINAL_LEVEL = 0.0125
# A refit's runners-up are ranked with this shrinking: on 10⁴–10⁶ outputs per side the 95 % shrinking prefers a
# frequent event with a smaller ratio to a rare one with a larger (on Lyu et al.'s SVT Alg. 4 at ε = 0.1, the
# two-outcome level set with ln(p/q) ≈ 0.14 over the single outcome with 0.17); at 80 % one hit against none is
# still hopeless.
REFIT_SHRINK_LEVEL = 0.2
# A refit also names this many runners-up (:attr:`Candidate.alternatives`), counted beside it on the same outputs.
REFIT_ALTERNATIVES = 3


@dataclass(frozen=True)
class Candidate:
    """An event fixed before the final stage's sample is drawn.

    Attributes:
        event: callable (outputs of the sampler, one row per output) -> boolean array, True where
            the output lies in the event. It depends only on samples drawn before the final stage.
        heavy_is_first: the order: the event is tested as P[M(D) ∈ S] − e^ε P[M(D') ∈ S] with
            D the pair's first dataset when True, its second when False.
        description: the event in words.
        score: the predicted ε lower bound (a ranking heuristic, not a bound).
        counts: (heavy, light) counts in the test sample that chose it, of ``num_samples`` per side.
        num_samples: outputs per side of that test sample.
        refit: None, or callable (outputs on D, outputs on D', nominal N) -> Candidate or None: the same
            family's choice made again on a larger sample (the final stage draws it fresh, before its
            counts), ranked for a final sample of N outputs per side.
        refit_samples: the most outputs per side the refit uses (classifiers score every one).
        refit_kind: ``"learned"`` (trains classifiers: seconds) or ``"level sets"``, with ``refit``.
        alternatives: Candidates on the same pair ranked next by the same choice, best first (their own
            ``alternatives`` empty): the final stage may count them on the same outputs.
    """

    event: Callable[[Any], NDArray[np.bool_]]
    heavy_is_first: bool
    description: str
    score: float
    counts: tuple[int, int]
    num_samples: int
    refit: Optional[Callable[[Any, Any, int], Optional[Candidate]]] = None
    refit_samples: int = 1_000_000
    refit_kind: str | None = None
    alternatives: tuple[Candidate, ...] = ()


def predicted_bounds(
    heavy: ArrayLike,
    light: ArrayLike,
    num_samples: int,
    delta: float,
    nominal_samples: int = NOMINAL_SAMPLES,
    shrink_level: float = SHRINK_LEVEL,
) -> NDArray[np.float64]:
    """The ranking score of the module docstring, per (heavy count, light count) pair of ``num_samples`` outputs; −inf when hopeless.

    ``shrink_level``: the one-sided level of the shrinking (0.05 by default; 0.5 shrinks to about the
    medians, a plug-in ranking that does not favour frequent events over rare ones on small samples).
    """
    heavy = np.asarray(heavy, dtype=float)
    light = np.asarray(light, dtype=float)
    n, big = float(num_samples), float(nominal_samples)
    with np.errstate(divide="ignore", invalid="ignore"):
        shrunk_heavy = np.where(heavy > 0, stats.beta.ppf(shrink_level, np.maximum(heavy, 1.0), n - heavy + 1.0), 0.0)
        shrunk_light = np.where(light < n, stats.beta.isf(shrink_level, light + 1.0, np.maximum(n - light, 1.0)), 1.0)
        nominal_heavy, nominal_light = shrunk_heavy * big, shrunk_light * big
        lower = np.where(nominal_heavy > 0, stats.beta.ppf(NOMINAL_LEVEL, np.maximum(nominal_heavy, 1e-300), big - nominal_heavy + 1.0), 0.0)
        upper = np.where(nominal_light < big, stats.beta.isf(NOMINAL_LEVEL, nominal_light + 1.0, np.maximum(big - nominal_light, 1e-300)), 1.0)
        score = np.where(lower > delta, np.log(np.maximum(lower - delta, 1e-300)) - np.log(upper), -np.inf)
    finite_score: NDArray[np.float64] = np.nan_to_num(score, nan=-np.inf)
    return finite_score


def best_candidate(
    counts_first: ArrayLike,
    counts_second: ArrayLike,
    num_samples: int,
    delta: float,
    event_of: Callable[[int], Callable[[Any], NDArray[np.bool_]]],
    names: Sequence[str],
    nominal_samples: int = NOMINAL_SAMPLES,
    shrink_level: float = SHRINK_LEVEL,
    alternatives: int = 0,
) -> Optional[Candidate]:
    """The best of the (event, order) pairs of a test by :func:`predicted_bounds`, or None when all are hopeless.

    Args:
        counts_first, counts_second: per event, its test counts on D and on D'.
        num_samples: outputs per side of the test.
        delta: the claimed δ.
        event_of: callable index -> the event's membership function (see :class:`Candidate`).
        names: per event, its description.
        nominal_samples: the N of the prediction (the final stage's expected sample size when known).
        shrink_level: see :func:`predicted_bounds`.
        alternatives: how many runners-up (not hopeless) the result names in its ``alternatives``.
    """
    first = np.asarray(counts_first, dtype=np.int64)
    second = np.asarray(counts_second, dtype=np.int64)
    if first.size == 0:
        return None
    heavy = np.concatenate([first, second])
    light = np.concatenate([second, first])
    scores = predicted_bounds(heavy, light, num_samples, delta, nominal_samples, shrink_level)
    ranked = [int(index) for index in np.argsort(-scores, kind="stable")[:alternatives + 1] if np.isfinite(scores[index])]
    if not ranked:
        return None

    def candidate(best: int) -> Candidate:
        index = best % first.size
        return Candidate(event_of(index), best < first.size, names[index], float(scores[best]),
                         (int(heavy[best]), int(light[best])), int(num_samples))

    return replace(candidate(ranked[0]), alternatives=tuple(candidate(best) for best in ranked[1:]))


def refit_candidate(
    counts_first: ArrayLike,
    counts_second: ArrayLike,
    num_samples: int,
    delta: float,
    event_of: Callable[[int], Callable[[Any], NDArray[np.bool_]]],
    names: Sequence[str],
    nominal_samples: int,
) -> Optional[Candidate]:
    """A refit's choice: the best event as :func:`best_candidate` ranks it, and up to ``REFIT_ALTERNATIVES`` runners-up
    ranked with shrinking at ``REFIT_SHRINK_LEVEL`` (rarer events with larger ratios, which the final stage counts
    beside the best on the same outputs; the 95 % shrinking keeps the best itself from being a tail event hit a dozen
    times by luck among a hundred half-lines)."""
    best = best_candidate(counts_first, counts_second, num_samples, delta, event_of, names, nominal_samples)
    if best is None:
        return None
    hopeful = best_candidate(counts_first, counts_second, num_samples, delta, event_of, names, nominal_samples,
                             shrink_level=REFIT_SHRINK_LEVEL, alternatives=REFIT_ALTERNATIVES)
    # Less shrinking only raises the scores (the heavy count's quantile up, the light one's down): hopeful too.
    assert hopeful is not None
    runners_up = [entry for entry in (replace(hopeful, alternatives=()),) + hopeful.alternatives
                  if (entry.description, entry.heavy_is_first) != (best.description, best.heavy_is_first)]
    return replace(best, alternatives=tuple(runners_up[:REFIT_ALTERNATIVES]))


def merged(candidates: Iterable[Optional[Candidate]]) -> Optional[Candidate]:
    """The best of several refits' candidates (None ignored) by score, the others and all their runners-up as its alternatives.

    An event named twice (one object, e.g. a candidate's own event kept by two refits) counts once, so that it
    takes one share of the final stage's β. Returns None when there is no candidate.
    """
    bests = sorted((candidate for candidate in candidates if candidate is not None), key=lambda entry: entry.score, reverse=True)
    if not bests:
        return None
    others = [replace(entry, alternatives=()) for entry in bests[1:]] + [entry for candidate in bests for entry in candidate.alternatives]
    seen, runners_up = {id(bests[0].event)}, list[Candidate]()
    for entry in sorted(others, key=lambda entry: entry.score, reverse=True):
        if id(entry.event) not in seen:
            seen.add(id(entry.event))
            runners_up.append(entry)
    return replace(bests[0], alternatives=tuple(runners_up[:REFIT_ALTERNATIVES]))
