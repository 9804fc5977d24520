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
one implied point (ε_C(δ*), δ*) at the whole level α with the final stage of
:func:`.tester.find_violation` (:func:`.confirm.confirm_candidates`). The δ* is chosen among ``deltas`` on a pilot sample that is never
used again: on each candidate pair and each δ the cheap event family's best
events (:func:`.statistical.statistical_dp_test`, or
:func:`.projections.projection_dp_test` for vector outputs) are scored by the
ranking heuristic of :mod:`.candidates` at the sample size the main stage is
expected to reach, and the δ with the largest predicted margin
(predicted ε lower bound − ε_C(δ)) wins. The choice depends only on outputs
independent of the main stage's, so the main stage is a level-α test of the
chosen point whatever was chosen, and no share of α is spent on the pilot
(no Bonferroni split over the δ grid). A Gaussian σ 10 % too small for a
0.5-zCDP claim (true ρ = 0.5/0.81) exceeds the implied δ only near δ ~ 10⁻³,
ε ~ 3.7, where ~6·10⁷ outputs per side tell the difference: a grid of tests
splitting α and the time over eleven δ's would reach none of them.

A refutation certifies, at confidence 1 − α: on the reported pair, some event
S has P[M(D) ∈ S] − e^ε P[M(D') ∈ S] >= ``lower_bound_delta`` > δ* (in the
reported order), while the claim implies (ε, δ*)-DP; that is, the certified
lower bound on the privacy profile δ(ε) exceeds the claim's implied profile at
ε = ε_C(δ*). No rejection is "not detected", not a proof of the claim.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .. import validation as check
from ..conversions.fdp import gdp_epsilon
from ..conversions.renyi import rdp_epsilon, zcdp_epsilon
from .candidates import predicted_bounds
from .exact import DpViolation
from .projections import projection_dp_test
from .statistical import statistical_dp_test
from .confirm import confirm_candidates
from .tester import _named_pairs

# δ grid of the pilot: half-decades from 10⁻¹ to 10⁻⁶ (scale-free: where a claim's profile is
# refutable depends on the claim and the bug, not on a δ a user would choose).
DEFAULT_DELTAS = tuple(float(10.0 ** -exponent) for exponent in np.arange(1.0, 6.01, 0.5))
# The pilot predicts the main stage's sample size from the sampler's measured speed; its final stage
# counts more events and refits, so it reaches about this fraction of the outputs that sampling alone allows.
COUNTING_EFFICIENCY = 0.25
# Most outputs per side the pilot's ranking assumes for the main stage.
LARGEST_PREDICTED_SAMPLES = 100_000_000


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

    orders: tuple
    epsilons: tuple

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

    claim: object
    rejected: bool
    epsilon: float
    delta: float
    lower_bound_delta: float
    epsilon_lower_bound: float
    pair: str | None
    witness: str | None
    direction: str | None
    counts: tuple | None
    num_samples: int
    alpha: float
    seconds: float
    pilot_margins: dict

    def statement(self) -> str:
        """The verdict in words: what was certified, or that nothing was detected."""
        implied = f"{self.claim.describe()} implies ({self.epsilon:.6g}, {self.delta:.3g})-DP ({self.claim.conversion()})"
        if self.rejected:
            return (f"refuted at confidence {1 - self.alpha:g}: {implied}, but on {self.pair} ({self.direction}) the event "
                    f"{self.witness} has P[M(D) in S] - e^eps P[M(D') in S] >= {self.lower_bound_delta:.6g} > {self.delta:.3g} "
                    f"(hits {self.counts[0]} vs {self.counts[1]} of {self.num_samples} outputs per side)")
        return (f"not detected: {implied}; no event exceeded it at level {self.alpha:g} "
                f"({self.num_samples} fresh outputs per side, {self.seconds:.1f} s)")


def _pilot_test(sampler, pair, epsilon, delta, num_samples, rng, outputs):
    if outputs == "vector":
        return projection_dp_test(sampler, pair, epsilon, delta, num_samples=num_samples, rng=rng, outputs="vector")
    return statistical_dp_test(sampler, pair, epsilon, delta, num_samples=num_samples, rng=rng, outputs=outputs)


def _predicted_margin(candidate, epsilon, delta, nominal_samples):
    """Predicted ε lower bound at ``nominal_samples`` of a pilot's best events, minus ε: plug-in (median shrinking), then 95 % shrinking as tie-break.

    The plug-in ranks first: the refutable δ's of a small-σ bug sit where events are hit a few hundred times
    against a few in a pilot, and the 95 % shrinking (made for choosing events, not δ's) prefers the frequent
    events of large δ's that the claim's profile still covers.
    """
    if candidate is None:
        return (-math.inf, -math.inf)
    events = (candidate,) + tuple(candidate.alternatives)
    heavy = np.array([event.counts[0] for event in events])
    light = np.array([event.counts[1] for event in events])
    shrunk = predicted_bounds(heavy, light, candidate.num_samples, delta, nominal_samples)
    plug_in = predicted_bounds(heavy, light, candidate.num_samples, delta, nominal_samples, shrink_level=0.5)
    return (float(np.max(plug_in)) - epsilon, float(np.max(shrunk)) - epsilon)


def find_claim_violation(
    sampler,
    pairs,
    claim,
    *,
    rng,
    alpha: float = 0.05,
    budget_seconds: float = 20.0,
    deltas=DEFAULT_DELTAS,
    pilot_samples: int = 100_000,
    pilot_share: float = 0.25,
    outputs: str = "discrete",
    max_samples: int = LARGEST_PREDICTED_SAMPLES,
    final_candidates: int = 2,
) -> ClaimReport:
    """Search for evidence against a ρ-zCDP, μ-GDP or Rényi-DP claim from samples (see the module docstring).

    The pilot (at most ``pilot_share`` of the budget) tests every pair at every δ of ``deltas`` with
    the cheap event family and keeps each test's best event; the δ* whose best predicted margin is
    largest is chosen, and the pairs' events at δ* go, best first, to the final stage of
    :func:`.tester.find_violation` (:func:`.confirm.confirm_candidates`: refits on fresh samples, then
    Clopper–Pearson bounds on as many fresh outputs as fit in the time left), at the whole level α.

    Args:
        sampler: callable (dataset, size, rng) -> size outputs, as for :func:`.tester.find_violation`.
        pairs: candidate neighbours, a sequence of (D, D') or (name, D, D') (e.g.
            :func:`.tester.statdp_pairs` or :func:`.records.record_neighbours`).
        claim: :class:`ZcdpClaim`, :class:`GdpClaim` or :class:`RenyiClaim`.
        rng: ``numpy.random.Generator`` or integer seed.
        alpha: level in (0, 1), all of it for the main stage.
        budget_seconds: > 0, pilot and main stage together.
        deltas: the δ's in (0, 1) whose implied points (ε_C(δ), δ) the pilot ranks.
        pilot_samples: outputs per side of each pilot test (>= 10; 4·pilot_samples outputs per pair and δ).
        pilot_share: the share of ``budget_seconds`` in (0, 1) after which the pilot stops (pairs and
            δ's not reached are unscored and not counted).
        outputs: ``"discrete"``, ``"real"`` (scalar, half-lines) or ``"vector"`` (numeric vectors:
            projections, and classifiers in the final stage).
        max_samples: most outputs per side of the main stage, >= 1.
        final_candidates: >= 1, the most pairs the main stage counts (:func:`.confirm.confirm_candidates`).
    """
    if not isinstance(claim, CLAIMS):
        raise ValueError(f"claim must be a ZcdpClaim, GdpClaim or RenyiClaim (got {claim!r})")
    named = _named_pairs(pairs)
    rng = check.generator("rng", rng)
    alpha = float(check.open_unit_interval("alpha", alpha))
    budget_seconds = float(check.positive("budget_seconds", budget_seconds))
    deltas = np.atleast_1d(check.open_unit_interval("deltas", deltas)).astype(float)
    if deltas.ndim != 1 or deltas.size == 0:
        raise ValueError("deltas must be a non-empty 1-D sequence of numbers in (0, 1)")
    pilot_samples = check.integer_scalar("pilot_samples", pilot_samples, 10)
    pilot_share = float(check.open_unit_interval("pilot_share", pilot_share))
    outputs = check.choice("outputs", outputs, ("discrete", "real", "vector"))
    max_samples = check.integer_scalar("max_samples", max_samples, 1)
    final_candidates = check.integer_scalar("final_candidates", final_candidates, 1)
    points = [(claim.epsilon_at(float(delta)), float(delta)) for delta in deltas]

    start = time.perf_counter()
    pilot_deadline = start + pilot_share * budget_seconds
    margins, events, nominal, stopped = {}, {}, None, False
    for name, first, second in named:
        for epsilon, delta in points:
            if margins and time.perf_counter() >= pilot_deadline:
                stopped = True
                break
            test_start = time.perf_counter()
            candidate = _pilot_test(sampler, (first, second), epsilon, delta, pilot_samples, rng, outputs).candidate
            if nominal is None:
                # The main stage's expected outputs per side, from this test's cost (4·pilot_samples outputs).
                seconds_per_output = max(time.perf_counter() - test_start, 1e-9) / (4 * pilot_samples)
                nominal = int(min(max_samples, max(pilot_samples, COUNTING_EFFICIENCY * budget_seconds * (1.0 - pilot_share)
                                                   / (2.0 * seconds_per_output))))
            margins[(name, delta)] = _predicted_margin(candidate, epsilon, delta, nominal)
            events[(name, delta)] = (first, second, candidate)
        if stopped:
            break
    best_name, best_delta = max(margins, key=margins.get)
    epsilon = next(point[0] for point in points if point[1] == best_delta)
    ranked = sorted((key for key in margins if key[1] == best_delta and events[key][2] is not None), key=margins.get, reverse=True)
    candidates = [((events[key][0], events[key][1]), events[key][2], "learned" if outputs == "vector" else None) for key in ranked]
    result = None
    left = budget_seconds - (time.perf_counter() - start)
    if candidates and left > 0:
        result = confirm_candidates(sampler, candidates, epsilon, best_delta, level=alpha, seconds=left, max_samples=max_samples,
                                    rng=rng, final_candidates=final_candidates)
    seconds = time.perf_counter() - start
    margins = {key: value[0] for key, value in margins.items()}
    if result is None:
        # No event looked hopeful at any δ, or no time was left for the main stage: nothing was counted.
        return ClaimReport(claim, False, float(epsilon), best_delta, 0.0, 0.0, None, None, None, None, 0, alpha, seconds, margins)
    name = next(key[0] for key in ranked if events[key][0] is result.pair[0] and events[key][1] is result.pair[1])
    return ClaimReport(
        claim, result.rejected, float(epsilon), best_delta, float(result.lower_bound_delta), float(result.epsilon_lower_bound),
        name, result.candidate.description, "D -> D'" if result.candidate.heavy_is_first else "D' -> D", result.counts,
        result.num_samples, alpha, seconds, margins,
    )


def assert_claim_black_box(sampler, pairs, claim, **options) -> ClaimReport:
    """:func:`find_claim_violation`, raising :class:`.exact.DpViolation` with the certificate when it refutes the claim."""
    result = find_claim_violation(sampler, pairs, claim, **options)
    if result.rejected:
        raise DpViolation(f"not {claim.describe()}: {result.statement()}", epsilon=result.epsilon, delta=result.delta,
                          measured_delta=result.lower_bound_delta, witness=(result.pair, result.witness), direction=result.direction)
    return result
