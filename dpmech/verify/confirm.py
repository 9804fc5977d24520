r"""The final stage of :func:`.tester.find_violation`: one fixed event, tested on a large fresh sample (DP-Sniper's estimate).

DP-Sniper (Bichsel, Steffen, Bogunovic & Vechev, S&P 2021, §V) chooses
its attack on one sample and then estimates its two probabilities on
10⁷ fresh outputs per input, reporting the Clopper–Pearson bound
ε_lb = log(p⁻ / q⁺). Here, for a pair (D, D') and an event S both fixed
before this stage (:class:`.candidates.Candidate`) and a level β:

1. a pilot of ``PILOT_SAMPLES`` outputs per side measures the time per
   output; its outputs are thrown away, so the sample size N below
   depends on wall time only, never on what the sampler returned;
2. N = the outputs per side that fit in the time left (at most
   ``max_samples``) are drawn in chunks of at most ``CHUNK_SAMPLES`` and
   only counted: k outputs of M(D) and k' of M(D') lie in S;
3. p⁻ = CP_lower(k, N, β/2) and q⁺ = CP_upper(k', N, β/2)
   (:func:`.statistical.clopper_pearson_lower`, ``_upper``, both erring to
   the safe side).

Given the choice of (D, D', S), the counts are independent binomials, so
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
from dataclasses import dataclass

import numpy as np

from .statistical import _draw, clopper_pearson_lower, clopper_pearson_upper

PILOT_SAMPLES = 2_000
CHUNK_SAMPLES = 100_000
# Share of the time left that the chunks are planned to fill (the rest absorbs the spread of the pilot's timing).
TIME_FILL = 0.9
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
    """

    rejected: bool
    epsilon_lower_bound: float
    lower_bound_delta: float
    counts: tuple
    num_samples: int
    level: float
    seconds: float


def _hits(sampler, dataset, event, size, rng):
    mask = np.asarray(event(_draw(sampler, dataset, size, rng, "discrete")))
    if mask.shape != (size,) or mask.dtype != bool:
        raise ValueError(f"an event must return one boolean per output (got shape {mask.shape}, dtype {mask.dtype})")
    return int(np.count_nonzero(mask))


def confirm_candidate(sampler, pair, candidate, epsilon, delta, *, level, seconds, max_samples, rng):
    """Test ``candidate`` (a :class:`.candidates.Candidate`) on ``pair`` with as many fresh outputs as fit in ``seconds``.

    Returns a :class:`ConfirmationResult`, or None when not even the pilot
    and one more chunk of ``PILOT_SAMPLES`` fit (nothing is decided; the level is left unspent).

    Args:
        sampler: callable (dataset, size, rng) -> size outputs.
        pair: (D, D') as the candidate was chosen on.
        candidate: the event and order, fixed before this call.
        epsilon, delta: the claim.
        level: β in (0, 1), the stage's share of the search's α.
        seconds: wall time available, pilot included.
        max_samples: N is at most this (>= 1).
        rng: ``numpy.random.Generator``.
    """
    start = time.perf_counter()
    heavy, light = pair if candidate.heavy_is_first else (pair[1], pair[0])
    for dataset in (heavy, light):
        _hits(sampler, dataset, candidate.event, PILOT_SAMPLES, rng)
    per_output = (time.perf_counter() - start) / PILOT_SAMPLES
    left = seconds - (time.perf_counter() - start)
    planned = int(min(max_samples, TIME_FILL * left / max(per_output, 1e-12)))
    if planned < PILOT_SAMPLES:
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
    )
