r"""The final stage of :func:`.tester.find_violation`: one fixed event, tested on a large fresh sample (DP-Sniper's estimate).

DP-Sniper (Bichsel, Steffen, Bogunovic & Vechev, S&P 2021, §V) chooses
its attack on one sample and then estimates its two probabilities on
10⁷ fresh outputs per input, reporting the Clopper–Pearson bound
ε_lb = log(p⁻ / q⁺). Here, for a pair (D, D') and an event S both fixed
before this stage (:class:`.candidates.Candidate`) and a level β:

1. a pilot of ``PILOT_SAMPLES`` outputs per side (or ``max_samples``) measures the time per
   output; its outputs are thrown away, so the sample size N below
   depends on wall time only, never on what the sampler returned;
2. each candidate (pair, event) that has a ``refit`` (the cheap family's
   level sets, the learned family's classifiers; others get one of these,
   their own event competing) draws a refit sample on its pair (together
   at most ``REFIT_SHARE`` of the time left, at most ``REFIT_SAMPLES`` and
   ``max_samples`` outputs per side each) and chooses its event again on it, as DP-Sniper
   trains its classifier on a large sample and searches input pairs; the
   (pair, event) with the best predicted bound is kept, and a second pilot
   times it;
3. N = the outputs per side that fit in the time left (at most
   ``max_samples``) are drawn in chunks of at most ``CHUNK_SAMPLES`` and
   only counted: k outputs of M(D) and k' of M(D') lie in S;
4. p⁻ = CP_lower(k, N, β/2) and q⁺ = CP_upper(k', N, β/2)
   (:func:`.statistical.clopper_pearson_lower`, ``_upper``, both erring to
   the safe side).

Given the choice of (D, D', S) (made on samples drawn before them), the counts are independent binomials, so
with probability >= 1 − β both p⁻ <= P[M(D) ∈ S] and q⁺ >= P[M(D') ∈ S];
then every ε' with p⁻ − e^ε' q⁺ > δ is refuted, and ε_lb =
log((p⁻ − δ)/q⁺) (less a 10⁻¹² relative margin for rounding) is a lower bound on the mechanism's ε at
δ, and the claim is refuted when p⁻ − e^ε q⁺ > δ. How S was chosen does
not matter (the samples it was chosen on are not reused), so the stage
is a valid level-β test; :func:`.tester.find_violation` gives it the share
β of its α that its rounds do not spend.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

from .candidates import Candidate
from .learned import REFIT_RANKING, REFIT_TRAINING, learned_refit
from .statistical import _draw, clopper_pearson_lower, clopper_pearson_upper, level_set_refit

PILOT_SAMPLES = 20_000
CHUNK_SAMPLES = 100_000
# Share of the time left that the chunks are planned to fill (the rest absorbs the spread of the pilot's timing).
TIME_FILL = 0.8
# A refit sample takes at most this share of the time left, and this many outputs per side.
REFIT_SHARE = 0.3
REFIT_SAMPLES = 1_000_000
# Classifier training costs seconds: at most this many learned refits, and none with less time left.
LEARNED_REFITS = 2
LEARNED_REFIT_SECONDS = 8.0
ROUNDING_MARGIN = 1e-12


@dataclass(frozen=True)
class ConfirmationResult:
    """Outcome of :func:`confirm_candidate`.

    Attributes:
        rejected: p⁻ − e^ε q⁺ > δ: the claim is refuted at level ``level``.
        epsilon_lower_bound: log((p⁻ − δ)/q⁺) rounded down, 0 when p⁻ <= δ or it is negative.
        lower_bound_delta: p⁻ − e^ε q⁺.
        counts: (k, k'): hits of the event on the heavy side (D in the candidate's order) and on the light side.
        num_samples: N, outputs per side.
        level: β.
        seconds: wall time of the stage, pilot included.
        candidate: the event tested (the given candidate, or what its ``refit`` chose).
        pair: the pair (D, D') it was tested on.
    """

    rejected: bool
    epsilon_lower_bound: float
    lower_bound_delta: float
    counts: tuple
    num_samples: int
    level: float
    seconds: float
    candidate: Candidate | None = None
    pair: tuple | None = None


def _hits(sampler, dataset, event, size, rng):
    mask = np.asarray(event(_draw(sampler, dataset, size, rng, "discrete")))
    if mask.shape != (size,) or mask.dtype != bool:
        raise ValueError(f"an event must return one boolean per output (got shape {mask.shape}, dtype {mask.dtype})")
    return int(np.count_nonzero(mask))


def _pilot(sampler, pair, candidate, size, rng):
    """Seconds per output (both sides, event included) over ``size`` outputs per side, thrown away."""
    start = time.perf_counter()
    for dataset in pair:
        _hits(sampler, dataset, candidate.event, size, rng)
    return (time.perf_counter() - start) / size


def confirm_candidate(sampler, pair, candidate, epsilon, delta, *, level, seconds, max_samples, rng, refit=None, float_bits=False):
    """Test ``candidate`` (a :class:`.candidates.Candidate`) on ``pair`` with as many fresh outputs as fit in ``seconds``.

    :func:`confirm_candidates` with one candidate; see there.
    """
    return confirm_candidates(sampler, [(pair, candidate, refit)], epsilon, delta, level=level, seconds=seconds,
                              max_samples=max_samples, rng=rng, float_bits=float_bits)


def _with_refit(candidate, kind, delta, rng, float_bits):
    if candidate.refit is not None or kind is None:
        return candidate
    if kind == "learned":
        return replace(candidate, refit=learned_refit(candidate, delta, seed=int(rng.integers(2**31)), float_bits=float_bits),
                       refit_samples=REFIT_TRAINING + REFIT_RANKING, refit_kind="learned")
    return replace(candidate, refit=level_set_refit(candidate, delta), refit_kind="level sets")


def confirm_candidates(sampler, candidates, epsilon, delta, *, level, seconds, max_samples, rng, float_bits=False):
    """Choose among candidate (pair, event)s on refit samples, then test the chosen one on as many fresh outputs as fit in ``seconds``.

    Returns a :class:`ConfirmationResult`, or None when fewer outputs per side than a pilot's
    (``PILOT_SAMPLES``, or ``max_samples`` when smaller) fit after the pilots and refits (nothing is decided; the level is left unspent).
    The result's ``candidate`` and ``pair`` are what was tested.

    Args:
        sampler: callable (dataset, size, rng) -> size outputs.
        candidates: non-empty list of (pair (D, D'), :class:`.candidates.Candidate`, refit kind), each
            fixed before this call, the most promising first. The refit kind is what a candidate
            with no ``refit`` of its own gets: ``"learned"`` (:func:`.learned.learned_refit`:
            classifiers trained on the refit sample, the candidate's event competing with their
            thresholds; for the first ``LEARNED_REFITS`` candidates, and only with
            ``LEARNED_REFIT_SECONDS`` left, counting the learned family's own), ``"level sets"`` (:func:`.statistical.level_set_refit`, for
            outputs with few distinct values), or None (tested as it is).
        epsilon, delta: the claim.
        level: β in (0, 1), the stage's share of the search's α.
        seconds: wall time available, pilots and refits included.
        max_samples: N is at most this (>= 1).
        rng: ``numpy.random.Generator``.
        float_bits: the learned refit's features include float bits (numeric outputs only).
    """
    start = time.perf_counter()
    pair, candidate, _ = candidates[0]
    pilot = min(PILOT_SAMPLES, max_samples)
    per_output = _pilot(sampler, pair, candidate, pilot, rng)
    left = seconds - (time.perf_counter() - start)
    learned_refits = LEARNED_REFITS if left >= LEARNED_REFIT_SECONDS else 0
    entries = []
    for pair, candidate, kind in candidates:
        candidate = _with_refit(candidate, kind, delta, rng, float_bits)
        if candidate.refit_kind == "learned":
            if learned_refits <= 0:
                candidate = replace(candidate, refit=None, refit_kind=None)
            learned_refits -= 1
        entries.append((pair, candidate))
    refitting = [entry for entry in entries if entry[1].refit is not None]
    size = int(min(REFIT_SAMPLES, max_samples, REFIT_SHARE * left / max(per_output * max(len(refitting), 1), 1e-12)))
    # The N the refits rank their events for: what the time left after them would allow.
    nominal = max(int(min(max_samples, TIME_FILL * (1.0 - REFIT_SHARE) * left / max(per_output, 1e-12))), pilot)
    chosen = []
    refits_start = time.perf_counter()
    for pair, candidate in entries:
        # A guard for refits slower than planned (classifier training is not in the pilot's time).
        in_time = time.perf_counter() - refits_start < REFIT_SHARE * left
        if candidate.refit is not None and size >= 2 * pilot and in_time:
            # The family chooses its event again on a larger sample (DP-Sniper trains on millions); that sample
            # is drawn here, before and apart from the one the counts come from.
            drawn = min(size, candidate.refit_samples)
            refitted = candidate.refit(*(_draw(sampler, data, drawn, rng, "discrete") for data in pair), nominal)
            candidate = refitted if refitted is not None else candidate
        chosen.append((pair, candidate))
    pair, candidate = max(chosen, key=lambda entry: entry[1].score)
    per_output = _pilot(sampler, pair, candidate, pilot, rng)
    heavy, light = pair if candidate.heavy_is_first else (pair[1], pair[0])
    left = seconds - (time.perf_counter() - start)
    planned = int(min(max_samples, TIME_FILL * left / max(per_output, 1e-12)))
    if planned < pilot:
        return None
    counts = [0, 0]
    drawn = 0
    while drawn < planned:
        size = min(CHUNK_SAMPLES, planned - drawn)
        for side, dataset in enumerate((heavy, light)):
            counts[side] += _hits(sampler, dataset, candidate.event, size, rng)
        drawn += size
    lower = float(clopper_pearson_lower(counts[0], planned, level / 2.0))
    upper = float(clopper_pearson_upper(counts[1], planned, level / 2.0))
    margin = lower - math.exp(min(epsilon, 700.0)) * upper
    bound = 0.0
    if lower > delta and upper > 0.0:
        # lower − δ is exact or within 2^-52 relative (Sterbenz), and each log within an ulp: the margin covers both.
        log_lower, log_upper = math.log(lower - delta), math.log(upper)
        bound = max(log_lower - log_upper - ROUNDING_MARGIN * (1.0 + abs(log_lower) + abs(log_upper)), 0.0)
    return ConfirmationResult(
        rejected=margin > delta,
        epsilon_lower_bound=bound,
        lower_bound_delta=margin,
        counts=(counts[0], counts[1]),
        num_samples=planned,
        level=level,
        seconds=time.perf_counter() - start,
        candidate=candidate,
        pair=pair,
    )
