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

from dataclasses import dataclass

import numpy as np
from scipy import stats

NOMINAL_SAMPLES = 1_000_000
SHRINK_LEVEL = 0.05
NOMINAL_LEVEL = 0.0125


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
    """

    event: object
    heavy_is_first: bool
    description: str
    score: float
    counts: tuple
    num_samples: int
    refit: object = None
    refit_samples: int = 1_000_000
    refit_kind: str | None = None


def predicted_bounds(heavy, light, num_samples, delta, nominal_samples=NOMINAL_SAMPLES):
    """The ranking score of the module docstring, per (heavy count, light count) pair of ``num_samples`` outputs; −inf when hopeless."""
    heavy = np.asarray(heavy, dtype=float)
    light = np.asarray(light, dtype=float)
    n, big = float(num_samples), float(nominal_samples)
    with np.errstate(divide="ignore", invalid="ignore"):
        shrunk_heavy = np.where(heavy > 0, stats.beta.ppf(SHRINK_LEVEL, np.maximum(heavy, 1.0), n - heavy + 1.0), 0.0)
        shrunk_light = np.where(light < n, stats.beta.isf(SHRINK_LEVEL, light + 1.0, np.maximum(n - light, 1.0)), 1.0)
        nominal_heavy, nominal_light = shrunk_heavy * big, shrunk_light * big
        lower = np.where(nominal_heavy > 0, stats.beta.ppf(NOMINAL_LEVEL, np.maximum(nominal_heavy, 1e-300), big - nominal_heavy + 1.0), 0.0)
        upper = np.where(nominal_light < big, stats.beta.isf(NOMINAL_LEVEL, nominal_light + 1.0, np.maximum(big - nominal_light, 1e-300)), 1.0)
        score = np.where(lower > delta, np.log(np.maximum(lower - delta, 1e-300)) - np.log(upper), -np.inf)
    return np.nan_to_num(score, nan=-np.inf)


def best_candidate(counts_first, counts_second, num_samples, delta, event_of, names, nominal_samples=NOMINAL_SAMPLES):
    """The best of the (event, order) pairs of a test by :func:`predicted_bounds`, or None when all are hopeless.

    Args:
        counts_first, counts_second: per event, its test counts on D and on D'.
        num_samples: outputs per side of the test.
        delta: the claimed δ.
        event_of: callable index -> the event's membership function (see :class:`Candidate`).
        names: per event, its description.
        nominal_samples: the N of the prediction (the final stage's expected sample size when known).
    """
    counts_first = np.asarray(counts_first, dtype=np.int64)
    counts_second = np.asarray(counts_second, dtype=np.int64)
    if counts_first.size == 0:
        return None
    heavy = np.concatenate([counts_first, counts_second])
    light = np.concatenate([counts_second, counts_first])
    scores = predicted_bounds(heavy, light, num_samples, delta, nominal_samples)
    best = int(np.argmax(scores))
    if not np.isfinite(scores[best]):
        return None
    index = best % counts_first.size
    return Candidate(event_of(index), best < counts_first.size, names[index], float(scores[best]),
                     (int(heavy[best]), int(light[best])), int(num_samples))
