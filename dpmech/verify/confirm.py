r"""The final stage of :func:`.tester.find_violation`: a few fixed events, tested on large fresh samples (DP-Sniper's estimate).

DP-Sniper (Bichsel, Steffen, Bogunovic & Vechev, S&P 2021, §V) chooses
its attack on one sample and then estimates its two probabilities on
10⁷ fresh outputs per input, reporting the Clopper–Pearson bound
ε_lb = log(p⁻ / q⁺). Here, for candidate pairs (D, D') and events S fixed
before this stage (:class:`.candidates.Candidate`) and a level β:

1. a pilot of ``PILOT_SAMPLES`` outputs per side (or ``max_samples``) measures the time per
   output; its outputs are thrown away, so the sample sizes below
   depend on wall time only, never on what the sampler returned;
2. the candidate pairs race (:func:`_raced`, at most ``CHEAP_REFIT_SHARE`` of the time left):
   in successive rounds every surviving pair draws fresh refit outputs, pooled
   with its earlier ones, and its event is chosen again on the pool
   (:func:`.refits.cheap_refit`: likelihood-ratio level sets for
   outputs with few distinct values, half-lines for scalar ones, quadrants on
   two summary statistics for numeric vectors (:mod:`.quadrants`, whose joint
   histograms are tallied round by round, so a round costs its fresh outputs), its own
   event competing); a pair goes on while its best event could still
   reach the best pair's predicted bound, so every pair is ranked on a large
   sample, not on round 1's noise, and near-ties get the most outputs; then
   the best-ranked ``LEARNED_REFITS`` whose family allows it get classifiers
   trained on another fresh refit sample (:func:`.learned.learned_refit`, at
   most ``REFIT_SHARE`` of the time left, only with ``LEARNED_REFIT_SECONDS``
   left), as DP-Sniper trains its classifier on a large sample for every
   input pair; the classifiers' events and the level sets compete;
3. the finalists: the best refitted pair by predicted bound and up to
   ``final_candidates`` − 1 more whose predicted bound is within ``CLOSE_SHARE`` of
   the best's, each with its best event and the runners-up of its refit within
   that share too (at most ``FINAL_EVENTS`` per pair), and ``FINAL_RESERVES``
   more pairs; a second pilot times every event (:func:`_affordable`), the
   pairs whose leading event reaches most at its cost are kept, with the
   runners-up that add little cost: m events in all;
4. N = the outputs per side that fit in the time left (at most ``max_samples``) are
   planned; in chunks of at most ``CHUNK_SAMPLES``, each finalist pair draws fresh
   outputs of D and of D', and each of its events counts its hits on them,
   k_j on the heavy side and k'_j on the light one, with checkpoints
   at the fractions of N in ``CHECKPOINTS``, each with a share s_c of β
   (the shares sum to 1); a chunk that would end after the time budget
   (at the slowest chunk's time per output so far) is not drawn, and the counts
   of the last checkpoint reached, N_c outputs per side, are used;
5. per finalist event, p⁻_j = CP_lower(k_j, N_c, s_c β/(2m)) and q⁺_j = CP_upper(k'_j, N_c, s_c β/(2m))
   (:func:`dpmech.statistics.clopper_pearson_lower`, ``_upper``, both erring to
   the safe side): β is split over the checkpoints and evenly over the m
   events (Bonferroni: the events of one pair share their outputs, and the
   union bound needs no independence).

Given the finalists (chosen on samples drawn before the counts), at each
checkpoint each of the 2m counts is a binomial with a fixed number of
trials, so by the union bound over checkpoints, finalists and sides, with
probability >= 1 − β every bound of every checkpoint holds, whichever
checkpoint the wall clock stops at: p⁻_j <= P[M(D) ∈ S_j] and
q⁺_j >= P[M(D') ∈ S_j]. Then for each j every ε' with p⁻_j − e^ε' q⁺_j > δ
is refuted, and the largest ε_lb = log((p⁻_j − δ)/q⁺_j) (less a 10⁻¹²
relative margin for rounding) is a lower bound on the mechanism's ε at
δ; the claim is refuted when some p⁻_j − e^ε q⁺_j > δ. How the finalists
and m were chosen does not matter (the samples they were chosen on are
not reused), so the stage is a valid level-β test;
:func:`.tester.find_violation` gives it the share β of its α that its
rounds do not spend.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

from .. import validation as check
from ..statistics import clopper_pearson_lower, clopper_pearson_upper
from .budget_clock import budget_now
from .candidates import Candidate, merged, predicted_bounds
from .learned import REFIT_RANKING, REFIT_TRAINING, learned_refit
from .quadrants import QuadrantTally
from .refits import CheapRefit, RawPool, cheap_refit
from .statistical import Event, Sampler, _draw

PILOT_SAMPLES = 20_000
# With the rounds' time per output known, each pilot's and probe's draw takes at most this share of the stage's
# time (a sampler of 20 µs an output drew 20,000 per side four times: 3.4 s of CPU on a 1 s budget), and the stage
# is not run when fewer than MIN_PILOT_SAMPLES outputs per side fit that share.
PILOT_TIME_SHARE = 0.05
MIN_PILOT_SAMPLES = 200
CHUNK_SAMPLES = 100_000
# Share of the time left that the chunks are planned to fill (the rest absorbs the spread of the pilot's timing).
TIME_FILL = 0.9
# A refit sample takes at most this share of the time left, and this many outputs per side.
REFIT_SHARE = 0.25
# Every candidate's cheap refit (level sets, half-lines, quadrants) takes at most this share of the time left, together.
CHEAP_REFIT_SHARE = 0.3
REFIT_SAMPLES = 1_000_000
# The cheap refits race (rounds, dropping the entries that cannot catch up): a round draws at least this many outputs
# per side and survivor; a probe refit on this many measures the cost of a refit first.
RACE_MIN_SAMPLES = 20_000
# An entry goes on racing while its refitted event's predicted bound, its counts shrunk toward more evidence at this
# level, reaches the best refitted score (the rest are dropped): near-ties stay until their pools tell them apart.
RACE_KEEP_LEVEL = 0.9
# Classifier training costs seconds: at most this many learned refits, and none with less time left.
LEARNED_REFITS = 2
LEARNED_REFIT_SECONDS = 8.0
ROUNDING_MARGIN = 1e-12
# (fraction of the planned N, share of β): the counting may stop at a checkpoint (time runs out) and report its
# counts at its share; the shares sum to 1, so by the union bound over checkpoints any stopping rule keeps level β.
CHECKPOINTS = ((0.5, 0.05), (0.75, 0.05), (1.0, 0.9))
# At most this many finalists share the counting (and β); a refitted candidate joins when its predicted bound is at
# least the best's less this share of the best's magnitude.
FINAL_CANDIDATES = 3
CLOSE_SHARE = 0.5
# At most this many events per finalist pair (its refit's best and runners-up), counted on the same outputs; a
# runner-up only when its evaluation costs at most this share of drawing its pair's outputs and counting the best.
FINAL_EVENTS = 4
ALTERNATIVE_COST = 0.5
# Beyond the finalist pairs, this many more (by predicted bound, within CLOSE_SHARE) are timed, and the pairs whose
# best events reach the most at their cost are kept.
FINAL_RESERVES = 2

# Two neighbouring datasets (D, D'); a finalist pair with the events counted on its outputs, the best first.
Pair: TypeAlias = tuple[Any, Any]
Group: TypeAlias = tuple[Pair, list[Candidate]]


@dataclass(frozen=True)
class ConfirmationResult:
    """Outcome of :func:`confirm_candidates`: the finalist with the largest ε lower bound.

    Attributes:
        rejected: some finalist has p⁻ − e^ε q⁺ > δ: the claim is refuted at level ``level``.
        epsilon_lower_bound: the largest finalist's log((p⁻ − δ)/q⁺) rounded down, 0 when p⁻ <= δ or it is negative.
        lower_bound_delta: p⁻ − e^ε q⁺ of the finalist reported.
        counts: (k, k'): its hits on the heavy side (D in the candidate's order) and on the light side.
        num_samples: N, outputs per side (of each finalist).
        level: β, the whole stage's level (each finalist's pair of bounds is at β/(2m) per side).
        seconds: wall time of the stage, pilots included.
        candidate: the event reported (the given candidate, or what its ``refit`` chose).
        pair: the pair (D, D') it was tested on.
        num_finalists: m, the finalist events counted (over all finalist pairs; each bound at β/(2m) per checkpoint share).
    """

    rejected: bool
    epsilon_lower_bound: float
    lower_bound_delta: float
    counts: tuple[int, int]
    num_samples: int
    level: float
    seconds: float
    candidate: Candidate | None = None
    pair: Pair | None = None
    num_finalists: int = 1


def _hits(event: Event, outputs: NDArray[Any]) -> int:
    mask = np.asarray(event(outputs))
    if mask.shape != (len(outputs),) or mask.dtype != bool:
        raise ValueError(f"an event must return one boolean per output (got shape {mask.shape}, dtype {mask.dtype})")
    return int(np.count_nonzero(mask))


def _pilot(sampler: Sampler, pair: Pair, events: Sequence[Event], size: int, rng: np.random.Generator) -> tuple[float, list[float]]:
    """Seconds per output over ``size`` outputs per side, thrown away: (drawing both sides, [each event counted on both])."""
    drawing, counting = 0.0, [0.0] * len(events)
    for dataset in pair:
        start = budget_now()
        outputs = _draw(sampler, dataset, size, rng, "discrete")
        drawing += budget_now() - start
        for index, event in enumerate(events):
            start = budget_now()
            _hits(event, outputs)
            counting[index] += budget_now() - start
    return drawing / size, [seconds / size for seconds in counting]


def _seconds_per_output(events: Sequence[Event], outputs: Sequence[NDArray[Any]], warm: Event | None = None) -> list[float]:
    """Seconds per output of counting each event on ``outputs`` (one sample per side), each on its own copies, each
    copy just after ``warm`` (an event whose score the others may share) was counted on it: the cost each adds."""
    costs = []
    for event in events:
        seconds = 0.0
        for sample in outputs:
            copy = sample.copy()
            if warm is not None:
                _hits(warm, copy)
            start = budget_now()
            _hits(event, copy)
            seconds += budget_now() - start
        costs.append(seconds / len(outputs[0]))
    return costs


def _affordable(
    sampler: Sampler, groups: list[Group], keep: int, size: int, seconds: float, delta: float, rng: np.random.Generator
) -> tuple[list[Group], float]:
    """The ``keep`` finalist pairs that can reach the most in the time left, each with the events worth counting.

    Per pair, each event's own cost is timed on ``size`` fresh outputs per side (thrown away) and its predicted
    bound (:func:`.candidates.predicted_bounds`) taken at the N that cost allows in the pair's share of
    ``seconds``: a gradient-boosted trees' score costs several times a logistic regression's, and the final
    stage counts fewer outputs for it. The best event so ranked leads its pair, and the pairs are ranked by
    their leaders. A runner-up is kept when what it adds to counting the leader (its thresholds may share the
    leader's score) is at most ``ALTERNATIVE_COST`` times drawing the pair's outputs and counting the leader:
    else it would take more outputs from the counting than its chance of a better bound is worth. Returns the
    groups and the seconds per output of counting them all (timed together).
    """
    ranked = []
    for pair, events in groups:
        start = budget_now()
        outputs = [_draw(sampler, dataset, size, rng, "discrete") for dataset in pair]
        drawing = (budget_now() - start) / size
        costs = _seconds_per_output([candidate.event for candidate in events], outputs)
        reach = [float(predicted_bounds([candidate.counts[0]], [candidate.counts[1]], candidate.num_samples, delta,
                                        max(int(TIME_FILL * seconds / keep / max(drawing + cost, 1e-12)), 1))[0])
                 for candidate, cost in zip(events, costs)]
        order = sorted(range(len(events)), key=lambda index: reach[index], reverse=True)
        leader = events[order[0]]
        added = _seconds_per_output([events[index].event for index in order[1:]], outputs, warm=leader.event)
        budget = ALTERNATIVE_COST * (drawing + costs[order[0]])
        chosen = [leader] + [events[index] for index, cost in zip(order[1:], added) if cost <= budget]
        ranked.append((reach[order[0]], pair, chosen))
    ranked.sort(key=lambda entry: entry[0], reverse=True)
    kept, per_output = [], 0.0
    for _, pair, chosen in ranked[:keep]:
        drawing, counting = _pilot(sampler, pair, [candidate.event for candidate in chosen], size, rng)
        kept.append((pair, chosen))
        per_output += drawing + sum(counting)
    return kept, per_output


def confirm_candidate(
    sampler: Sampler,
    pair: Pair,
    candidate: Candidate,
    epsilon: float,
    delta: float,
    *,
    level: float,
    seconds: float,
    max_samples: int,
    rng: np.random.Generator,
    refit: str | None = None,
    float_bits: bool = False,
) -> ConfirmationResult | None:
    """Test ``candidate`` (a :class:`.candidates.Candidate`) on ``pair`` with as many fresh outputs as fit in ``seconds``.

    :func:`confirm_candidates` with one candidate; see there.
    """
    return confirm_candidates(sampler, [(pair, candidate, refit)], epsilon, delta, level=level, seconds=seconds,
                              max_samples=max_samples, rng=rng, float_bits=float_bits)


def _learned(candidate: Candidate, delta: float, rng: np.random.Generator, float_bits: bool) -> Candidate:
    """``candidate`` with its classifier refit (:func:`.learned.learned_refit`)."""
    return replace(candidate, refit=learned_refit(candidate, delta, seed=int(rng.integers(2**31)), float_bits=float_bits),
                   refit_samples=REFIT_TRAINING + REFIT_RANKING, refit_kind="learned")


def _finalists(chosen: list[tuple[Pair, Candidate]], final_candidates: int) -> list[Group]:
    """The finalists, grouped by pair: [(pair, [candidate, ...])].

    The best (pair, candidate) by predicted bound and up to ``final_candidates`` − 1 more whose score is within
    ``CLOSE_SHARE`` of the best's, each with those of its ``alternatives`` (runners-up on the same pair) within it
    too, at most ``FINAL_EVENTS`` events per pair. A pair's events are counted on the same outputs, so an
    alternative costs a share of β, not a share of the samples.
    """
    ranked = sorted(chosen, key=lambda entry: entry[1].score, reverse=True)
    best = ranked[0][1].score
    floor = best - CLOSE_SHARE * abs(best) if math.isfinite(best) else math.inf
    groups: list[Group] = []
    for pair, candidate in ranked[:final_candidates]:
        if groups and candidate.score < floor:
            break
        runners_up = [alternative for alternative in candidate.alternatives if alternative.score >= floor]
        groups.append((pair, [replace(candidate, alternatives=())] + runners_up[:FINAL_EVENTS - 1]))
    return groups


def _bounds(counts: tuple[int, int], num_samples: int, epsilon: float, delta: float, level: float) -> tuple[float, float]:
    """(margin p⁻ − e^ε q⁺, ε lower bound) of one finalist's counts, each bound at one-sided level ``level``."""
    lower = float(clopper_pearson_lower(counts[0], num_samples, level))
    upper = float(clopper_pearson_upper(counts[1], num_samples, level))
    margin = lower - math.exp(min(epsilon, 700.0)) * upper
    bound = 0.0
    if lower > delta and upper > 0.0:
        # lower − δ is exact or within 2^-52 relative (Sterbenz), and each log within an ulp: the margin covers both.
        log_lower, log_upper = math.log(lower - delta), math.log(upper)
        bound = max(log_lower - log_upper - ROUNDING_MARGIN * (1.0 + abs(log_lower) + abs(log_upper)), 0.0)
    return margin, bound


def _count_finalists(
    sampler: Sampler, groups: list[Group], planned: int, deadline: float, per_output: float, rng: np.random.Generator
) -> list[tuple[int, float, list[tuple[int, int]]]]:
    """Hits of each finalist's event on fresh outputs, up to ``planned`` per side, stopping before ``deadline``.

    Returns [(N_j, share_j, per-finalist (heavy, light) counts, in the groups' order)] for each checkpoint
    N_j = ``CHECKPOINTS[j]``·planned reached, in order. The chunks go round the pairs so that all reach each
    checkpoint together; a pair's events are counted on the same outputs. A chunk that would end after the
    deadline (at the time per output of the slowest chunk so far) is not drawn.
    """
    checkpoints = [max(int(fraction * planned), 1) for fraction, _ in CHECKPOINTS]
    counts = [[[0, 0] for _ in events] for _, events in groups]
    reached: list[tuple[int, float, list[tuple[int, int]]]] = []
    drawn = 0
    for checkpoint, (_, share) in zip(checkpoints, CHECKPOINTS):
        while drawn < checkpoint:
            size = min(CHUNK_SAMPLES, checkpoint - drawn)
            chunk_start = budget_now()
            if chunk_start + size * per_output > deadline:
                return reached
            for (pair, events), totals in zip(groups, counts):
                for side, dataset in enumerate(pair):
                    outputs = _draw(sampler, dataset, size, rng, "discrete")
                    for candidate, total in zip(events, totals):
                        # Side 0 is D: the heavy side when the event is tested as D against D'.
                        total[side if candidate.heavy_is_first else 1 - side] += _hits(candidate.event, outputs)
            drawn += size
            # The slowest chunk's time per output (the pilots' is a guess from a few milliseconds; an average let
            # one slow chunk, a garbage collection or a busy core, end 0.2 s past a 20 s budget).
            per_output = max(per_output, (budget_now() - chunk_start) / size)
        reached.append((checkpoint, share, [(total[0], total[1]) for totals in counts for total in totals]))
    return reached


def _refitted(
    sampler: Sampler,
    entries: list[tuple[Pair, Candidate]],
    seconds: float,
    max_samples: int,
    pilot: int,
    per_output: float,
    nominal: int,
    rng: np.random.Generator,
) -> list[tuple[Pair, Candidate]]:
    """Each (pair, candidate) with a ``refit``, its event chosen again on a fresh refit sample; all within about ``seconds``."""
    refitting = [entry for entry in entries if entry[1].refit is not None]
    size = int(min(REFIT_SAMPLES, max_samples, seconds / max(per_output * max(len(refitting), 1), 1e-12)))
    chosen: list[tuple[Pair, Candidate]] = []
    durations: dict[str | None, float] = {}
    refits_start = budget_now()
    for pair, candidate in entries:
        # A guard for refits slower than planned (classifier training is not in the pilot's time): one starts only
        # when the last of its kind would still end within the share.
        in_time = budget_now() - refits_start + durations.get(candidate.refit_kind, 0.0) < seconds
        if candidate.refit is not None and size >= 2 * pilot and in_time:
            # The family chooses its event again on a larger sample (DP-Sniper trains on millions); that sample
            # is drawn here, before and apart from the ones the counts come from.
            refit_start = budget_now()
            drawn = min(size, candidate.refit_samples)
            dataset, neighbour = pair
            refitted = candidate.refit(_draw(sampler, dataset, drawn, rng, "discrete"), _draw(sampler, neighbour, drawn, rng, "discrete"), nominal)
            durations[candidate.refit_kind] = budget_now() - refit_start
            candidate = refitted if refitted is not None else candidate
        chosen.append((pair, candidate))
    return chosen


def _room(state: QuadrantTally | RawPool | None, max_samples: int) -> int:
    """How many more outputs per side a race entry's pool takes: a raw pool stops at ``REFIT_SAMPLES``, a tally at ``max_samples``."""
    if state is None:
        return max_samples
    return (max_samples if isinstance(state, QuadrantTally) else min(REFIT_SAMPLES, max_samples)) - state.size


def _raced(
    sampler: Sampler, entries: list[tuple[Pair, Candidate]], seconds: float, max_samples: int, nominal: int, delta: float,
    rng: np.random.Generator, smallest: int = RACE_MIN_SAMPLES,
) -> list[tuple[Pair, Candidate]]:
    """Each (pair, candidate) refitted by its :class:`.refits.CheapRefit` in racing rounds, all within about ``seconds``.

    Round r refits every surviving entry on its own pool (fresh outputs drawn this round added to those of
    its earlier rounds: :meth:`.refits.CheapRefit.absorb`, at most ``REFIT_SAMPLES`` per side of raw
    outputs, up to ``max_samples`` in a quadrant tally's histograms); an entry goes on while its refitted
    event, its counts shrunk toward more evidence (:func:`_optimistic_score`), could still reach the best
    refitted score. The rounds get about equal time (as many as halving would need), so the pools of the
    few pairs left grow fast: a pair whose best event is rare (SVT's half half at ε = 0.1: p ≈ 0.017
    against 0.014) is not dropped for the noise of a small first sample, and near-ties are ranked on about
    ``seconds`` / (2 × time per output) outputs each. The round size comes from the time per output and
    refit measured in the round before (at first on a probe: one refit on ``RACE_MIN_SAMPLES`` outputs per
    side, thrown away). Returns every
    entry, refitted on its last round (an entry that got no round keeps its candidate; one whose refit found
    nothing hopeful gets the score −inf).
    """
    deadline = budget_now() + seconds
    chosen = list(entries)
    # The entries that race: confirm_candidates gives every entry its CheapRefit, which absorbs a round's outputs.
    refits = {index: candidate.refit for index, (_, candidate) in enumerate(entries) if isinstance(candidate.refit, CheapRefit)}
    alive = list(refits)
    states: dict[int, QuadrantTally | RawPool | None] = {index: None for index in alive}
    rounds_left = math.ceil(math.log2(max(len(alive), 1))) + 1
    smallest = min(smallest, max_samples)
    if alive:
        # A probe, thrown away: one refit's time per output on the smallest pool. A refit can cost several times
        # drawing (quadrants on SVT's vectors: 4×), and a first round planned on a guess would eat the whole race.
        dataset, neighbour = entries[alive[0]][0]
        probe_start = budget_now()
        refits[alive[0]](_draw(sampler, dataset, smallest, rng, "discrete"), _draw(sampler, neighbour, smallest, rng, "discrete"), nominal)
        cost = (budget_now() - probe_start) / smallest
    while alive and rounds_left > 0:
        round_start = budget_now()
        room = min(_room(states[index], max_samples) for index in alive)
        size = int(min(room, (deadline - round_start) / rounds_left / (cost * len(alive))))
        if size < smallest:
            # The probe's cost per output includes the refit's fixed cost (coding, sorting, ranking): it may plan the
            # first round below the smallest pool, which every entry still gets.
            if any(states[index] is not None for index in alive):
                break
            size = smallest
        for index in alive:
            if budget_now() > deadline:
                break  # a sampler slower than measured: the entries not reached keep their last refit
            pair, candidate = entries[index]
            dataset, neighbour = pair
            fresh = _draw(sampler, dataset, size, rng, "discrete"), _draw(sampler, neighbour, size, rng, "discrete")
            state = states[index] = refits[index].absorb(states[index], *fresh, capacity=REFIT_SAMPLES)
            result = refits[index].choose(state, nominal)
            # A refit that finds nothing hopeful on its pool makes the entry hopeless: its round's score came
            # from a sample a thousand times smaller.
            chosen[index] = (pair, result if result is not None else replace(candidate, score=-math.inf, alternatives=()))
        # A raw pool's refit costs more as it grows, a tally's does not: the next round is planned on this one's cost.
        cost = (budget_now() - round_start) / (size * len(alive))
        rounds_left -= 1
        refitted = [index for index in alive if states[index] is not None]
        best = max((chosen[index][1].score for index in refitted), default=-math.inf)
        alive = [index for index in refitted if math.isfinite(chosen[index][1].score) and _optimistic_score(chosen[index][1], nominal, delta) >= best]
        for index in set(states) - set(alive):
            del states[index]
    return chosen


def _optimistic_score(candidate: Candidate, nominal: int, delta: float) -> float:
    """The predicted bound of ``candidate``'s counts shrunk the other way, at ``RACE_KEEP_LEVEL``: what its event may still reach."""
    heavy, light = candidate.counts
    return float(predicted_bounds([heavy], [light], candidate.num_samples, delta, nominal, shrink_level=RACE_KEEP_LEVEL)[0])


def confirm_candidates(
    sampler: Sampler,
    candidates: Sequence[tuple[Pair, Candidate, str | None]],
    epsilon: float,
    delta: float,
    *,
    level: float,
    seconds: float,
    max_samples: int,
    rng: np.random.Generator,
    float_bits: bool = False,
    final_candidates: int = FINAL_CANDIDATES,
    seconds_per_output: float | None = None,
) -> ConfirmationResult | None:
    """Choose finalists among candidate (pair, event)s on refit samples, then count them on as many fresh outputs as fit in ``seconds``.

    Returns a :class:`ConfirmationResult` (the finalist with the largest ε lower bound), or None when
    fewer outputs per side than a pilot's (``PILOT_SAMPLES``, or ``max_samples`` when smaller) fit
    after the pilots and refits (nothing is decided; the level is left unspent).
    See the module docstring for the procedure and why the result holds at level β.

    Args:
        sampler: callable (dataset, size, rng) -> size outputs.
        candidates: non-empty list of (pair (D, D'), :class:`.candidates.Candidate`, refit kind), each
            fixed before this call, the most promising first. Every one gets its cheap refit
            (:func:`.refits.cheap_refit`); the kind
            ``"learned"`` (or a candidate whose ``refit_kind`` is ``"learned"``) also makes it eligible for
            :func:`.learned.learned_refit` (classifiers trained on a refit sample, its event
            competing), given to the ``LEARNED_REFITS`` best-ranked after the cheap refits;
            ``"level sets"`` or None: cheap refits only.
        epsilon, delta: the claim.
        level: β in (0, 1), the stage's share of the search's α, split evenly over the finalists.
        seconds: time available on the budget clock (:mod:`.budget_clock`: wall seconds by default), pilots and refits included.
        max_samples: N is at most this (>= 1).
        rng: ``numpy.random.Generator``.
        float_bits: the learned refit's features include float bits (numeric outputs only).
        final_candidates: >= 1, the most pairs counted (each with its best event and cheap runners-up, all
            of them sharing β evenly; ``FINAL_RESERVES`` more pairs are timed and compete for these places).
        seconds_per_output: None, or the budget clock's seconds per output (both sides, drawn and tested) that
            the caller measured before (the search's rounds): the pilots and the race's probe then draw at most
            what ``PILOT_TIME_SHARE`` of ``seconds`` allows, and nothing is drawn (None is returned) when that
            is below ``MIN_PILOT_SAMPLES``. None: ``PILOT_SAMPLES``.
    """
    final_candidates = check.integer_scalar("final_candidates", final_candidates, 1)
    start = budget_now()
    pair, candidate, _ = candidates[0]
    pilot = min(PILOT_SAMPLES, max_samples)
    if seconds_per_output is not None:
        affordable = PILOT_TIME_SHARE * seconds / max(seconds_per_output, 1e-12)
        if affordable < min(MIN_PILOT_SAMPLES, pilot):
            return None
        pilot = int(min(pilot, affordable))
    drawing, counting = _pilot(sampler, pair, [candidate.event], pilot, rng)
    per_output = drawing + counting[0]
    left = seconds - (budget_now() - start)
    learnable = [kind == "learned" or candidate.refit_kind == "learned" for _, candidate, kind in candidates]
    refit_share = CHEAP_REFIT_SHARE + (REFIT_SHARE if any(learnable) and left >= LEARNED_REFIT_SECONDS else 0.0)
    # The N the refits rank their events for: what the time left after them would allow.
    nominal = max(int(min(max_samples, TIME_FILL * (1.0 - refit_share) * left / max(per_output, 1e-12))), pilot)
    # First every candidate is refitted cheaply (level sets, half-lines, quadrants), so that all pairs are ranked on large samples...
    cheap = [(pair, replace(candidate, refit=cheap_refit(candidate, delta), refit_kind="level sets")) for pair, candidate, _ in candidates]
    chosen = _raced(sampler, cheap, CHEAP_REFIT_SHARE * left, max_samples, nominal, delta, rng, smallest=min(RACE_MIN_SAMPLES, pilot))
    # ... then classifiers are trained on the pairs that rank best (seconds each).
    ranked = sorted(range(len(chosen)), key=lambda index: chosen[index][1].score, reverse=True)
    left = seconds - (budget_now() - start)
    learned = [index for index in ranked if learnable[index]][:LEARNED_REFITS if left >= LEARNED_REFIT_SECONDS else 0]
    if learned:
        refits = [(chosen[index][0], _learned(chosen[index][1], delta, rng, float_bits)) for index in learned]
        for index, (pair, candidate) in zip(learned, _refitted(sampler, refits, REFIT_SHARE * left, max_samples, pilot, per_output, nominal, rng)):
            # The classifiers' events and the cheap refit's compete; the runners-up of both may be counted.
            chosen[index] = (pair, merged([candidate, chosen[index][1]]) or chosen[index][1])
    groups, per_output = _affordable(sampler, _finalists(chosen, final_candidates + FINAL_RESERVES), final_candidates, pilot,
                                     seconds - (budget_now() - start), delta, rng)
    finalists = [(pair, candidate) for pair, events in groups for candidate in events]
    left = seconds - (budget_now() - start)
    planned = int(min(max_samples, TIME_FILL * left / max(per_output, 1e-12)))
    if planned < pilot:
        return None
    reached = _count_finalists(sampler, groups, planned, start + seconds, per_output, rng)
    if not reached:
        return None
    # The last checkpoint reached: its bounds hold at its share of β, split over the finalists.
    num_samples, share, totals = reached[-1]
    results = []
    for (pair, candidate), counts in zip(finalists, totals):
        margin, bound = _bounds(counts, num_samples, epsilon, delta, share * level / len(finalists) / 2.0)
        results.append((margin > delta, bound, margin, counts, pair, candidate))
    rejected, bound, margin, counts, pair, candidate = max(results, key=lambda result: result[:3])
    return ConfirmationResult(
        rejected=any(result[0] for result in results),
        epsilon_lower_bound=bound,
        lower_bound_delta=margin,
        counts=counts,
        num_samples=num_samples,
        level=level,
        seconds=budget_now() - start,
        candidate=candidate,
        pair=pair,
        num_finalists=len(finalists),
    )
