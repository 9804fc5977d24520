r"""Black-box tests of ρ-zCDP, μ-GDP and Rényi-DP claims: refuted through the (ε, δ) profiles they imply.

A claim C of one of these kinds implies (ε_C(δ), δ)-DP at every δ in (0, 1):

* ρ-zCDP (Bun & Steinke 2016, Def. 1.1): ε_C(δ) by :func:`dpmech.conversions.renyi.zcdp_epsilon`,
  the optimum over all α > 1 of the RDP conversion of Canonne, Kamath & Steinke 2020 (Prop. 12)
  applied to r(α) = ρα;
* μ-GDP (Dong, Roth & Su 2019, Cor. 2.13): ε_C(δ) by :func:`dpmech.conversions.fdp.gdp_epsilon`,
  the Gaussian's own profile δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) inverted;
* (α, ε_α)-RDP at finitely many orders (Mironov 2017, Def. 4): ε_C(δ) by
  :func:`dpmech.conversions.renyi.rdp_epsilon`, the best of those orders under the same
  conversion (Canonne et al. 2020; Balle et al. 2020, Thm. 21).

Each ε_C(δ) is rounded up, so (ε_C(δ), δ) is implied by the claim: a certified
refutation of the (ε, δ) claim refutes C. :func:`find_claim_violation` tests
one implied point (ε_C(δ*), δ*) at the whole level α, DP-Sniper's way
(Bichsel, Steffen, Bogunovic & Vechev, S&P 2021, §V): events chosen on pilot
outputs, then counted on as many fresh outputs as the time budget allows, with
Clopper–Pearson bounds. The δ* is chosen among ``deltas`` on pilot outputs that
are never counted again: events are chosen for each δ on one pilot draw and
ranked on a fresh one, by the predicted margin (predicted ε lower bound at the
sample size the counting is expected to reach, :mod:`.candidates`, minus
ε_C(δ)). The choice depends only on outputs independent of the counted ones,
so the count is a level-α test of the chosen point whatever was chosen, and no
share of α is spent on the pilot (no Bonferroni split over the δ grid). A
Gaussian σ 10 % too small for a 0.5-zCDP claim (true ρ = 0.5/0.81) exceeds the
implied δ only near δ ~ 10⁻³, ε ~ 3.7, by ~10⁻⁴, which about 10⁸ outputs per
side tell apart: a grid of tests splitting α and the time over eleven δ's would
reach none of them.

A refutation certifies, at confidence 1 − α: on the reported pair, some event
S has P[M(D) ∈ S] − e^ε P[M(D') ∈ S] >= ``lower_bound_delta`` > δ* (in the
reported order), while the claim implies (ε, δ*)-DP; that is, the certified
lower bound on the privacy profile δ(ε) exceeds the claim's implied profile at
ε = ε_C(δ*). No rejection is "not detected", not a proof of the claim.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import validation as check
from ..conversions.fdp import gdp_epsilon
from ..conversions.renyi import rdp_epsilon, zcdp_epsilon
from ..statistics import clopper_pearson_lower, clopper_pearson_upper
from .candidates import Candidate, predicted_bounds
from .exact import DpViolation
from .projections import projection_dp_test
from .statistical import (
    Sampler,
    _draw,
    _real_counts,
    _real_event,
    _real_events,
    statistical_dp_test,
)
from .confirm import CHUNK_SAMPLES, ROUNDING_MARGIN, TIME_FILL, _hits
from .tester import _named_pairs

# δ grid of the pilot: half-decades from 10⁻¹ to 10⁻⁶ (scale-free: where a claim's profile is
# refutable depends on the claim and the bug, not on a δ a user would choose).
DEFAULT_DELTAS = tuple(float(10.0 ** -exponent) for exponent in np.arange(1.0, 6.01, 0.5))
# Half-line thresholds of the pilot for scalar outputs (more than the cheap family's 64: the refutable δ of a
# small-σ bug needs the threshold within a few hundredths of a σ), and the events kept per implied point.
REAL_THRESHOLDS = 256
RANKED_EVENTS = 4
# Other outputs: the first pilot test has this many outputs per side (it measures the tests' cost per output); the
# others shrink to fit the pilot's time share, to no fewer than SMALLEST_PILOT.
FIRST_PILOT = 10_000
SMALLEST_PILOT = 1_000
# Most outputs per side of the counting stage by default (in practice the time budget decides).
LARGEST_PREDICTED_SAMPLES = 1_000_000_000


@dataclass(frozen=True)
class ZcdpClaim:
    """ρ-zCDP: D_α(M(D) ‖ M(D')) <= ρα for every α > 1 (Bun & Steinke 2016, Def. 1.1); ρ >= 0."""

    rho: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", float(check.non_negative("rho", self.rho)))

    def epsilon_at(self, delta: float) -> float:
        """An ε with ρ-zCDP ⇒ (ε, δ)-DP, rounded up (Canonne, Kamath & Steinke 2020, Prop. 12, optimal α)."""
        return float(zcdp_epsilon(self.rho, delta))

    def describe(self) -> str:
        return f"{self.rho:g}-zCDP"

    def conversion(self) -> str:
        return "zCDP -> (eps, delta) of Canonne, Kamath & Steinke 2020 (Prop. 12, optimal order)"


@dataclass(frozen=True)
class GdpClaim:
    """μ-GDP: every neighbouring pair is at least as hard to tell apart as N(0, 1) from N(μ, 1) (Dong, Roth & Su 2019); μ > 0."""

    mu: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", float(check.positive("mu", self.mu)))

    def epsilon_at(self, delta: float) -> float:
        """The ε of μ-GDP at δ, δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) inverted, rounded up (Dong, Roth & Su 2019, Cor. 2.13)."""
        return float(gdp_epsilon(delta, self.mu))

    def describe(self) -> str:
        return f"{self.mu:g}-GDP"

    def conversion(self) -> str:
        return "mu-GDP profile of Dong, Roth & Su 2019 (Cor. 2.13)"


@dataclass(frozen=True)
class RenyiClaim:
    """(α, ε_α)-RDP at each of finitely many orders α > 1 (Mironov 2017, Def. 4): D_α <= ε_α on every pair, both orders."""

    orders: tuple[float, ...]
    epsilons: tuple[float, ...]

    def __post_init__(self) -> None:
        orders = np.atleast_1d(check.real_at_least("orders", self.orders, 1.0, inclusive=False)).astype(float)
        epsilons = np.atleast_1d(check.non_negative("epsilons", self.epsilons)).astype(float)
        if orders.ndim != 1 or orders.size == 0 or orders.shape != epsilons.shape:
            raise ValueError(f"orders and epsilons must be non-empty 1-D sequences of one length (got {orders.shape} and {epsilons.shape})")
        object.__setattr__(self, "orders", tuple(orders.tolist()))
        object.__setattr__(self, "epsilons", tuple(epsilons.tolist()))

    def epsilon_at(self, delta: float) -> float:
        """The best ε over the claim's orders with RDP ⇒ (ε, δ)-DP, rounded up (Canonne, Kamath & Steinke 2020, Prop. 12)."""
        return rdp_epsilon(delta, np.array(self.orders), np.array(self.epsilons))[0]

    def describe(self) -> str:
        return "RDP (" + ", ".join(f"alpha {order:g}: {epsilon:g}" for order, epsilon in zip(self.orders, self.epsilons)) + ")"

    def conversion(self) -> str:
        return "RDP -> (eps, delta) of Canonne, Kamath & Steinke 2020 (Prop. 12; Balle et al. 2020, Thm. 21)"


CLAIMS = (ZcdpClaim, GdpClaim, RenyiClaim)
Claim: TypeAlias = ZcdpClaim | GdpClaim | RenyiClaim
# A pair of neighbours and an event chosen for it.
PairEvent: TypeAlias = tuple[tuple[Any, Any], Candidate]


@dataclass(frozen=True)
class ClaimReport:
    """Outcome of :func:`find_claim_violation`.

    Attributes:
        claim: the claim tested.
        rejected: the claim is refuted at level ``alpha``.
        epsilon, delta: the implied point (ε_C(δ*), δ*) the main stage tested.
        lower_bound_delta: the certified lower bound (at level ``alpha``) on
            P[M(D) ∈ S] − e^ε P[M(D') ∈ S] of the reported event S, in the reported ``direction``.
        epsilon_lower_bound: the certified lower bound on the mechanism's ε at δ* from the same event.
        pair: the name of the reported pair; ``witness`` its event, ``counts`` its (heavy, light) hits
            among ``num_samples`` fresh outputs per side.
        alpha: the level; ``seconds`` the wall time of pilot and main stage.
        pilot_margins: per (pair name, δ) the pilot scored, the predicted (plug-in) ε lower bound minus
            ε_C(δ) (a ranking heuristic, not a bound; −inf where no event looked hopeful).
    """

    claim: Claim
    rejected: bool
    epsilon: float
    delta: float
    lower_bound_delta: float
    epsilon_lower_bound: float
    pair: str | None
    witness: str | None
    direction: str | None
    counts: tuple[int, ...] | None
    num_samples: int
    alpha: float
    seconds: float
    pilot_margins: dict[tuple[str, float], float]

    def statement(self) -> str:
        """The verdict in words: what was certified, or that nothing was detected."""
        implied = f"{self.claim.describe()} implies ({self.epsilon:.6g}, {self.delta:.3g})-DP ({self.claim.conversion()})"
        if self.rejected:
            assert self.counts is not None  # a refutation always carries its counts
            return (f"refuted at confidence {1 - self.alpha:g}: {implied}, but on {self.pair} ({self.direction}) the event "
                    f"{self.witness} has P[M(D) in S] - e^eps P[M(D') in S] >= {self.lower_bound_delta:.6g} > {self.delta:.3g} "
                    f"(hits {self.counts[0]} vs {self.counts[1]} of {self.num_samples} outputs per side)")
        return (f"not detected: {implied}; no event exceeded it at level {self.alpha:g} "
                f"({self.num_samples} fresh outputs per side, {self.seconds:.1f} s)")


def _pilot_events(
    sampler: Sampler,
    pair: tuple[Any, Any],
    points: Sequence[tuple[float, float]],
    pilot_samples: int,
    nominal: int,
    rng: np.random.Generator,
    outputs: str,
    deadline: float,
) -> dict[float, list[Candidate]]:
    """Per implied point (ε, δ), the events chosen for it on pilot outputs of ``pair`` (a list of Candidates), until ``deadline``.

    Scalar outputs: half-lines at 256 quantiles of the pooled pilot outputs (and both tails,
    :func:`.statistical.quantile_levels`), each point's best 4 by the plug-in prediction at ``nominal``
    outputs per side. Other outputs: the best event and runners-up of the cheap family's test at each point
    (:func:`.statistical.statistical_dp_test`'s level sets, or :func:`.projections.projection_dp_test` for vectors),
    each test as large as the time to ``deadline`` allows (at most ``pilot_samples`` per side).
    """
    chosen: dict[float, list[Candidate]] = {}
    if outputs == "real":
        first_outputs, second_outputs = (_draw(sampler, data, pilot_samples, rng, "real") for data in pair)
        thresholds, special, names = _real_events(first_outputs, second_outputs, REAL_THRESHOLDS)
        counts_first, counts_second = _real_counts(first_outputs, thresholds, special), _real_counts(second_outputs, thresholds, special)
        heavy, light = np.concatenate([counts_first, counts_second]), np.concatenate([counts_second, counts_first])
        for epsilon, delta in points:
            plug_in = predicted_bounds(heavy, light, pilot_samples, delta, nominal, shrink_level=0.5)
            best = [int(index) for index in np.argsort(-plug_in, kind="stable")[:RANKED_EVENTS] if np.isfinite(plug_in[index])]
            chosen[delta] = [Candidate(_real_event(index % counts_first.size, thresholds, special), index < counts_first.size,
                                       names[index % counts_first.size], float(plug_in[index]), (int(heavy[index]), int(light[index])),
                                       pilot_samples) for index in best]
        return chosen
    seconds_per_test_output: float | None = None
    for done, (epsilon, delta) in enumerate(points):
        left = deadline - time.perf_counter()
        if chosen and left <= 0:
            break
        # The time left shared by the points to go and the ranking draw, at the first test's measured cost per output
        # (outcome codes and events cost more than the draws); the first test is small, to measure it.
        if seconds_per_test_output is None:
            size = min(pilot_samples, FIRST_PILOT)
        else:
            size = min(pilot_samples, max(int(left / (len(points) - done + 1) / seconds_per_test_output), SMALLEST_PILOT))
        test_start = time.perf_counter()
        if outputs == "vector":
            candidate = projection_dp_test(sampler, pair, epsilon, delta, num_samples=size, rng=rng, outputs="vector").candidate
        else:
            candidate = statistical_dp_test(sampler, pair, epsilon, delta, num_samples=size, rng=rng).candidate
        seconds_per_test_output = max(time.perf_counter() - test_start, 1e-9) / size
        chosen[delta] = [] if candidate is None else [replace(candidate, alternatives=())] + list(candidate.alternatives)
    return chosen


def _count(
    sampler: Sampler,
    finalists: Sequence[PairEvent],
    most: int,
    deadline: float,
    seconds_per_output: float,
    rng: np.random.Generator,
    kind: str,
) -> tuple[int, NDArray[np.int64]]:
    """Hits of each finalist event on fresh outputs of its pair, in chunks, until ``most`` per side or the deadline.

    A chunk that would end after ``deadline`` (at the slowest chunk's time per output so far) is not drawn, so
    the number of outputs depends on the wall clock only. Returns (N, [(heavy hits, light hits) per finalist]).
    """
    pairs = list(dict.fromkeys(id(pair) for pair, _ in finalists))
    by_id = {id(pair): pair for pair, _ in finalists}
    totals = np.zeros((len(finalists), 2), dtype=np.int64)
    done = 0
    while done < most:
        size = min(CHUNK_SAMPLES, most - done)
        if time.perf_counter() + seconds_per_output * 2 * len(pairs) * size > deadline:
            break
        chunk_start = time.perf_counter()
        for key in pairs:
            first, second = by_id[key]
            first_outputs, second_outputs = _draw(sampler, first, size, rng, kind), _draw(sampler, second, size, rng, kind)
            for index, (pair, candidate) in enumerate(finalists):
                if id(pair) == key:
                    hits = (_hits(candidate.event, first_outputs), _hits(candidate.event, second_outputs))
                    totals[index] += hits if candidate.heavy_is_first else hits[::-1]
        seconds_per_output = max(seconds_per_output, (time.perf_counter() - chunk_start) / (2 * len(pairs) * size))
        done += size
    return done, totals


def find_claim_violation(
    sampler: Sampler,
    pairs: Sequence[Any],
    claim: Claim,
    *,
    rng: np.random.Generator | int,
    alpha: float = 0.05,
    budget_seconds: float = 20.0,
    deltas: ArrayLike = DEFAULT_DELTAS,
    pilot_samples: int = 200_000,
    ranking_samples: int = 1_000_000,
    pilot_share: float = 0.25,
    outputs: str = "discrete",
    max_samples: int = LARGEST_PREDICTED_SAMPLES,
    final_events: int = 1,
) -> ClaimReport:
    """Search for evidence against a ρ-zCDP, μ-GDP or Rényi-DP claim from samples (see the module docstring).

    1. Pilot (at most ``pilot_share`` of the budget, with step 2): on ``pilot_samples`` outputs per side of
       each pair, events are chosen for each implied point (ε_C(δ), δ), δ in ``deltas``
       (:func:`_pilot_events`).
    2. Ranking: each pair's chosen events are counted on fresh outputs (up to ``ranking_samples`` per side),
       and each (pair, δ) is scored by the plug-in prediction of :mod:`.candidates` at the sample size step 3
       is expected to reach, minus ε_C(δ) (95 % shrinking breaks ties). The δ* of the best score wins, with
       its ``final_events`` best (pair, event)s.
    3. Counting: the m finalist events are counted on fresh outputs of their pairs, in chunks of
       :data:`.confirm.CHUNK_SAMPLES`, until the budget ends (a chunk that would end after it, at the
       slowest chunk's time per output, is not drawn) or ``max_samples`` per side; with N outputs per side,
       p⁻ = CP_lower(k, N, α/(2m)) and q⁺ = CP_upper(k', N, α/(2m))
       (:func:`dpmech.statistics.clopper_pearson_lower`, ``_upper``), and the claim is refuted when some
       p⁻ − e^ε q⁺ > δ* (e^ε q⁺ rounded up). The events and δ* were fixed on outputs never counted here,
       and N depends on the wall clock only: it is independent of the counts when the sampler's running
       time is independent of the values it returns (the same assumption as the checkpoints of
       :mod:`.confirm`; a sampler whose time depends on its outputs breaks it). Then, by the union bound over
       events and sides, a true claim is refuted with probability at most α.

    Args:
        sampler: callable (dataset, size, rng) -> size outputs, as for :func:`.tester.find_violation`.
        pairs: candidate neighbours, a sequence of (D, D') or (name, D, D') (e.g.
            :func:`.tester.statdp_pairs` or :func:`.records.record_neighbours`).
        claim: :class:`ZcdpClaim`, :class:`GdpClaim` or :class:`RenyiClaim`.
        rng: ``numpy.random.Generator`` or integer seed.
        alpha: level in (0, 1), all of it for step 3.
        budget_seconds: > 0, all steps together.
        deltas: the δ's in (0, 1) whose implied points (ε_C(δ), δ) are ranked.
        pilot_samples: outputs per side of each pilot draw (>= 10).
        ranking_samples: most fresh outputs per side of each pair's ranking draw (>= ``pilot_samples``;
            fewer when the pilot's time share would not fit them).
        pilot_share: the share of ``budget_seconds`` in (0, 1) for steps 1 and 2 (pairs not reached are
            not ranked).
        outputs: ``"discrete"``, ``"real"`` (scalar outputs, half-lines) or ``"vector"`` (numeric vectors,
            half-lines on summary statistics).
        max_samples: most outputs per side of step 3, >= 1.
        final_events: >= 1, the most (pair, event)s counted in step 3 (α split evenly over them).
    """
    if not isinstance(claim, CLAIMS):
        raise ValueError(f"claim must be a ZcdpClaim, GdpClaim or RenyiClaim (got {claim!r})")
    named = _named_pairs(pairs)
    rng = check.generator("rng", rng)
    alpha = float(check.open_unit_interval("alpha", alpha))
    budget_seconds = float(check.positive("budget_seconds", budget_seconds))
    delta_grid = np.atleast_1d(check.open_unit_interval("deltas", deltas)).astype(np.float64)
    if delta_grid.ndim != 1 or delta_grid.size == 0:
        raise ValueError("deltas must be a non-empty 1-D sequence of numbers in (0, 1)")
    pilot_samples = check.integer_scalar("pilot_samples", pilot_samples, 10)
    ranking_samples = check.integer_scalar("ranking_samples", ranking_samples, pilot_samples)
    pilot_share = float(check.open_unit_interval("pilot_share", pilot_share))
    outputs = check.choice("outputs", outputs, ("discrete", "real", "vector"))
    max_samples = check.integer_scalar("max_samples", max_samples, 1)
    final_events = check.integer_scalar("final_events", final_events, 1)
    points = [(claim.epsilon_at(float(delta)), float(delta)) for delta in delta_grid]
    epsilon_of = dict((delta, epsilon) for epsilon, delta in points)
    kind = "real" if outputs == "real" else "discrete"

    start = time.perf_counter()
    pilot_deadline = start + pilot_share * budget_seconds
    # The sampler's cost per output, measured on a first draw that is thrown away: it sizes the ranking draws
    # and the N the rankings predict for (a heuristic: nothing below depends on it for validity).
    probe = min(pilot_samples, 20_000)
    for data in named[0][1:]:
        _draw(sampler, data, probe, rng, kind)
    seconds_per_output = max(time.perf_counter() - start, 1e-9) / (2 * probe)
    nominal = int(min(max_samples, max(pilot_samples, TIME_FILL * budget_seconds * (1.0 - pilot_share) / (2.0 * seconds_per_output))))
    scores: dict[tuple[str, float, int], tuple[float, float]] = {}
    events: dict[tuple[str, float, int], PairEvent] = {}
    for name, first, second in named:
        if scores and time.perf_counter() >= pilot_deadline:
            break
        chosen = _pilot_events(sampler, (first, second), points, pilot_samples, nominal, rng, outputs, pilot_deadline)
        hopeful = {delta: candidates for delta, candidates in chosen.items() if candidates}
        if not hopeful:
            continue
        fits = int((pilot_deadline - time.perf_counter()) / (2.0 * seconds_per_output))
        size = max(pilot_samples, min(ranking_samples, fits))
        draw_start = time.perf_counter()
        first_outputs, second_outputs = (_draw(sampler, data, size, rng, kind) for data in (first, second))
        # The larger draw times the sampler better than the probe (and under the machine's current load).
        seconds_per_output = max(time.perf_counter() - draw_start, 1e-9) / (2 * size)
        for delta, candidates in hopeful.items():
            for candidate in candidates:
                hits = (_hits(candidate.event, first_outputs), _hits(candidate.event, second_outputs))
                heavy, light = hits if candidate.heavy_is_first else hits[::-1]
                plug_in = predicted_bounds(heavy, light, size, delta, nominal, shrink_level=0.5)[()]
                shrunk = predicted_bounds(heavy, light, size, delta, nominal)[()]
                key = (name, delta, len(events))
                scores[key] = (float(plug_in) - epsilon_of[delta], float(shrunk) - epsilon_of[delta])
                events[key] = ((first, second), candidate)
    seconds = time.perf_counter() - start
    margins: dict[tuple[str, float], float] = {}
    for (name, delta, _), score in scores.items():
        margins[(name, delta)] = max(margins.get((name, delta), -math.inf), score[0])
    hopeful_keys = [key for key in scores if math.isfinite(scores[key][0]) or math.isfinite(scores[key][1])]
    if not hopeful_keys:
        # No event looked hopeful at any δ: nothing is counted, nothing is decided.
        delta = float(delta_grid[0])
        return ClaimReport(claim, False, epsilon_of[delta], delta, 0.0, 0.0, None, None, None, None, 0, alpha, seconds, margins)
    best_delta = max(hopeful_keys, key=scores.__getitem__)[1]
    epsilon = epsilon_of[best_delta]
    finalists_keys = sorted((key for key in hopeful_keys if key[1] == best_delta), key=scores.__getitem__, reverse=True)[:final_events]
    finalists = [events[key] for key in finalists_keys]
    pair_count = len(dict.fromkeys(id(pair) for pair, _ in finalists))
    # A throwaway chunk times drawing and counting together (an event on outcome codes costs more than a draw).
    probe_start = time.perf_counter()
    _count(sampler, finalists, probe, math.inf, 0.0, rng, kind)
    seconds_per_output = max(time.perf_counter() - probe_start, 1e-9) / (2 * pair_count * probe)
    num_samples, totals = _count(sampler, finalists, max_samples, start + budget_seconds, seconds_per_output, rng, kind)
    seconds = time.perf_counter() - start
    if num_samples == 0:
        return ClaimReport(claim, False, epsilon, best_delta, 0.0, 0.0, None, None, None, None, 0, alpha, seconds, margins)
    level = alpha / (2.0 * len(finalists))
    lower = np.atleast_1d(clopper_pearson_lower(totals[:, 0], num_samples, level))
    upper = np.atleast_1d(clopper_pearson_upper(totals[:, 1], num_samples, level))
    # e^ε q⁺ raised past exp's and the product's rounding (4 ulps) and p⁻ lowered by 4 ulps, which covers the
    # subtraction's rounding (half an ulp of a result below p⁻): p⁻ − e^ε q⁺ errs low.
    margin = lower * (1.0 - 4.0 * np.finfo(float).eps) - math.exp(epsilon) * upper * (1.0 + 4.0 * np.finfo(float).eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        bounds = np.where(lower > best_delta, np.log(np.maximum(lower - best_delta, 1e-300)) - np.log(upper), 0.0)
    bounds = np.maximum(bounds * (1.0 - ROUNDING_MARGIN) - ROUNDING_MARGIN, 0.0)
    best = int(np.argmax(margin))
    candidate, name = finalists[best][1], finalists_keys[best][0]
    return ClaimReport(
        claim, bool(margin[best] > best_delta), epsilon, best_delta, float(margin[best]), float(np.max(bounds)), name,
        candidate.description, "D -> D'" if candidate.heavy_is_first else "D' -> D", tuple(int(value) for value in totals[best]),
        num_samples, alpha, seconds, margins,
    )


def assert_claim_black_box(sampler: Sampler, pairs: Sequence[Any], claim: Claim, **options: Any) -> ClaimReport:
    """:func:`find_claim_violation`, raising :class:`.exact.DpViolation` with the certificate when it refutes the claim."""
    result = find_claim_violation(sampler, pairs, claim, **options)
    if result.rejected:
        assert result.direction is not None  # a refutation always names its direction
        raise DpViolation(f"not {claim.describe()}: {result.statement()}", epsilon=result.epsilon, delta=result.delta,
                          measured_delta=result.lower_bound_delta, witness=(result.pair, result.witness), direction=result.direction)
    return result
