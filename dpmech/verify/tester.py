r"""Black-box DP testing with no hand encoding: candidate neighbours, event families and sample size searched soundly.

:func:`find_violation` splits α into β = ``final_share``·α for a final
stage and α_s = α − β for its rounds. It runs rounds r = 1, 2, ... with
n_r = n_1·2^(r−1) outputs per side and level α_r = α_s/(r(r + 1)), so the
levels of all rounds sum to less than α_s (Σ 1/(r(r + 1)) = 1; late rounds,
where the samples are, keep a larger share than under α_s·2^(−r)). In each
round every candidate pair is tested with each event family at
α_r / (pairs × families):

* ``"cheap"``: :func:`.statistical.statistical_dp_test` (singletons, the
  estimated witness sets; half-lines too for scalar real outputs);
* ``"projections"``: :func:`.projections.projection_dp_test`, half-lines on
  summary statistics of numeric vector outputs (StatDP's post-processings);
  skipped with ``outputs="real"``, whose half-lines the cheap family has;
* ``"learned"``: :func:`.learned.learned_dp_test` (classifier scores,
  DP-Sniper, Bichsel et al. S&P 2021), with float bit features on request;
  skipped for a pair whose outputs took at most 64 distinct values in the
  cheap family's samples (its events already include the best unions of
  outcomes); its sample size stops at 32,000 per side; skipping a test
  only leaves part of α unspent;
* ``"float"``: :func:`.floating.float_dp_test`, half-lines on the lattice
  exponents of float outputs (Mironov, CCS 2012); added by ``float_bits``;
* ``"greybox"``: :func:`.greybox.pair_noise_test` on both datasets of
  each pair (up to 4,096 times the round's outputs per side, as many as
  fit in a quarter of the round's time left), when the caller
  declares the noise (``noise_family`` and ``sensitivity``): the declared
  family's likelihood-ratio score, fitted on part of the outputs, picks
  half-line events where the privacy loss sits (small-δ bugs such as a
  Gaussian σ 10–30 % too small live at probabilities ~10⁻⁴), and the rest
  of the outputs count them with Clopper–Pearson bounds. Its verdict and ε
  lower bound hold whatever the noise's law: a Laplace mechanism declared
  Gaussian is not refuted by the Gaussian shape. The family-based bound
  (the family's ε(δ) at confidence bounds on the attained shift and the
  noise scale) is reported beside it in the witness, labelled with its
  assumption, and the largest over all grey-box tests as the report's own
  verdict under that assumption (``assumed_rejected``,
  :meth:`VerificationReport.assumption_statement`), never merged into the
  assumption-free ``rejected`` (a Gaussian with the classical σ at ε = 10,
  δ(10) = 2.27e-5 against 1e-5, is refuted so from 2.6·10⁵ outputs per side
  where counting needs ~10⁹). The declared sensitivity is compared with the shifts'
  upper confidence bounds (``sensitivity_note``, assuming the family):
  one that no pair attains is reported as such, never as a violation.

After round 1 only the ``keep_pairs`` pairs with the largest ε lower
bounds (ties broken by a plug-in estimate of the strongest event's
log-ratio) go on: the choice uses earlier rounds' samples only, and each
round draws fresh ones, so each round's tests stay valid at their levels.
Each test is valid at its own level, so by the union bound the whole
search falsely rejects a true claim with probability at most α, and the
largest ε lower bound over all tests holds at confidence 1 − α. Within a
round the families run one after another over all pairs, cheapest first,
and a test whose family's measured time per output says it would end
after the round's deadline is not started, in every round, the first
included (a classifier costs ~0.6 s per pair): round 1's deadline is the
whole budget (a pair it leaves untested is never tested, so it may take
the final stage's time), a later round's is the rounds' share of the
budget (1 − ``final_time_share``). Round 1 trains classifiers last; where
classifiers on every pair would pass the rounds' share at ~0.6 s each, it
takes the pairs in the order the cheaper families ranked them, and only its
``keep_pairs`` best may train past the rounds' share: on many pairs (the 64
replace-one neighbours of :func:`.records.record_neighbours` on 5
categories) classifiers on every pair would eat the whole budget at 1,000
outputs per side, and the final stage, which counts millions, none. A family's first test, which measures
its cost, starts while the whole budget lasts (a classifier's while
0.5 s of it are left). A skipped test leaves its share of α unspent. Rounds stop at the first
rejection, after a round with a skipped test, or when the next round would
overrun the rounds' share.

The final stage, DP-Sniper's estimate (Bichsel et al. 2021, §V): every
family's test also names its most promising (event, order)
(:mod:`.candidates`); the pairs race on fresh refit samples, each pair's
event chosen again on its growing sample (:func:`.confirm.confirm_candidates`:
level sets for outputs with few distinct values, half-lines for scalars,
quadrants on two summary statistics for vectors (:mod:`.quadrants`), then
classifiers for the best-ranked pairs),
the best <= ``final_candidates`` pairs by predicted bound are kept with
their best events and runners-up (m events in all), and these are counted
on as many fresh outputs of their pairs as fit in the time left (10⁷ or
more for vectorised samplers; a pair's events on the same outputs), with
one Clopper–Pearson pair of bounds per finalist event and checkpoint, β split
evenly over the m events (Bonferroni) and over the checkpoints at which the wall
clock may stop the counting (:mod:`.confirm`). It gets ``final_time_share`` of
the budget (0.7: at ε = 0.1 the pairs of StatDP's patterns differ by a few
hundredths in ln(p/q), which only millions of outputs tell apart). It runs
unless a round already rejected with ``stop_at_rejection``. Its samples
are fresh, so it is a valid level-β test whatever the rounds chose, and
the union bound over the rounds (total <= α_s) and the stage (β) keeps the
whole search's false-rejection probability, and the probability that the
reported ε lower bound (the largest of all) exceeds the truth, at most α.
The candidate pairs are the caller's, or for query-answer
mechanisms :func:`statdp_pairs`, StatDP's input patterns (Ding, Wang,
Wang, Zhang & Kifer, CCS 2018, Table 1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from .. import validation as check
from ..directed_rounding import format_up
from .budget_clock import budget_now
from .candidates import Candidate
from .exact import DpViolation
from .confirm import ConfirmationResult, confirm_candidates
from .floating import float_dp_test
from .greybox import PairNoiseResult, pair_noise_test
from .learned import learned_dp_test
from .projections import projection_dp_test
from .statistical import Sampler, StatisticalTestResult, statistical_dp_test

GREYBOX_NOISE = ("gaussian", "laplace")
# The grey-box family draws up to this many outputs per side for each of a round's: its counted events sit where
# the declared family puts the privacy loss, at probabilities ~10⁻⁴ for δ = 1e-5, and a Gaussian with σ 10 % too
# small at (1, 1e-5) needs ~6·10⁷ outputs per side (5 s of CPU) to be refuted whatever the noise's law: 4·10⁶ in
# round 1 (at 1,000 outputs per side), twice as many each round, as the time allows.
GREYBOX_SAMPLE_FACTOR = 4096
# ... as many of those as fit in this share of the round's time left (over all pairs).
GREYBOX_TIME_SHARE = 0.25
OUTPUTS = ("discrete", "real", "vector")
FAMILIES = ("cheap", "projections", "learned", "float", "greybox")
DEFAULT_FAMILIES = ("cheap", "projections", "learned")
POWER = 0.9
# The learned family stops growing here: scoring millions of outputs with trees costs more than the events gain.
LEARNED_SAMPLES = 32_000
# About what one classifier test costs at round 1's 1,000 outputs per side (0.5-0.65 s measured on 2-core x86):
# round 1 ranks the pairs for its classifiers only where this many seconds per pair would pass the rounds' share.
_CLASSIFIER_SECONDS = 0.6
# A family's first test has no measured cost; a classifier's training takes about this long on one core
# (0.65 s per pair on the numeric sparse vector), so the first one is not started with less time left.
FIRST_TEST_SECONDS = {"learned": 0.5}
# With at most this many distinct outcomes (seen by the cheap family), the learned family is skipped.
FEW_OUTCOMES = 64


def _plug_in_log_ratio(counts: tuple[int, int]) -> float:
    """log((k + 1)/(k' + 1)) of an event's test counts: an estimate (not a bound) of its log-ratio, for ranking pairs."""
    return math.log((counts[0] + 1.0) / (counts[1] + 1.0))


def statdp_pairs(num_queries: int = 5) -> list[tuple[str, NDArray[np.float64], NDArray[np.float64]]]:
    """StatDP's neighbouring query-answer vectors, each coordinate changed by at most 1 (Ding et al. 2018, Table 1).

    One Above, One Below, One Above Rest Below, One Below Rest Above, Half
    Half (1^n vs 2^⌊n/2⌋ 0^⌈n/2⌉), All Above, All Below, X Shape; D is all ones except in X Shape.
    Returns (name, D, D') with D and D' float arrays of length ``num_queries`` (>= 2).
    """
    n = check.integer_scalar("num_queries", num_queries, 2)
    ones, half = np.ones(n), n // 2
    patterns = [
        ("one above", ones, np.r_[2.0, np.ones(n - 1)]),
        ("one below", ones, np.r_[0.0, np.ones(n - 1)]),
        ("one above rest below", ones, np.r_[2.0, np.zeros(n - 1)]),
        ("one below rest above", ones, np.r_[0.0, np.full(n - 1, 2.0)]),
        # The 2s first, as StatDP's and DP-Sniper's generators order them: a mechanism that halts (SVT) sees them.
        ("half half", ones, np.r_[np.full(half, 2.0), np.zeros(n - half)]),
        ("all above", ones, np.full(n, 2.0)),
        ("all below", ones, np.zeros(n)),
        ("x shape", np.r_[np.ones(half), np.zeros(n - half)], np.r_[np.zeros(half), np.ones(n - half)]),
    ]
    return patterns


@dataclass(frozen=True)
class VerificationReport:
    """Outcome of :func:`find_violation`.

    Attributes:
        rejected: the claim is refuted at level ``alpha`` (over all rounds, pairs and families).
        epsilon_lower_bound: the largest ε lower bound of any test; holds at confidence 1 − α.
        lower_bound_delta: for the strongest evidence, the lower confidence bound on
            P[M(D) ∈ S] − e^ε P[M(D') ∈ S] at its test's level.
        pair: the name of the pair of the strongest evidence; ``witness``, ``direction``
            and ``counts`` its event, order and (count on D, count on D') in the test sample.
        family: the event family that found it.
        num_samples: outputs per side in the last round; ``rounds`` and ``seconds`` spent.
        detectable_delta: an estimate (normal approximation, worst-case variance) of the
            excess P[M(D) ∈ S] − e^ε P[M(D') ∈ S] − δ that the last round would have detected
            with probability >= 0.9 for a single fixed event.
        evidence_samples: outputs per side behind the strongest evidence (its test's, or the final stage's
            when its evidence is the strongest; ``family`` then ends in ", final stage").
        final_samples: outputs per side of the final stage (0 when it did not run);
            ``final_epsilon_lower_bound``, ``final_counts`` and ``final_witness`` its bound, counts and
            pair: event (None when it did not run).
        search_epsilon_lower_bound: the largest ε lower bound of the rounds alone.
        final_finalists: the (pair, event)s the final stage counted (0 when it did not run).
        sensitivity_note: with a declared noise family, the declared sensitivity against the upper confidence
            bounds on the pairs' attained shifts, in words ("not attained by any candidate pair" is a finding
            about the declaration, not a violation); None without one.
        assumption: with a declared noise family, the assumption that the ``assumed_*`` fields rest on, in words
            (M(D) = f(D) + Z, Z i.i.d. of the family per coordinate); None without one. Never part of
            ``rejected`` or ``epsilon_lower_bound``, which hold whatever the noise's law.
        assumed_rejected: the claim is refuted if the assumption holds: some grey-box test's family bound
            (the family's ε(δ) at the lower confidence bound on a pair's attained shift and the upper one on the
            noise scale) exceeds ε. ``assumed_epsilon_lower_bound`` is the largest such bound and
            ``assumed_witness`` its pair and bounds; under the assumption it holds at confidence 1 − α
            (each test's family bounds at that test's level, whose sum over the search is below α).
    """

    rejected: bool
    epsilon_lower_bound: float
    lower_bound_delta: float
    pair: str
    family: str
    witness: str
    direction: str
    counts: tuple[int, int]
    num_samples: int
    rounds: int
    seconds: float
    alpha: float
    epsilon: float
    delta: float
    detectable_delta: float
    evidence_samples: int = 0
    final_samples: int = 0
    final_epsilon_lower_bound: float = 0.0
    final_counts: tuple[int, int] | None = None
    final_witness: str | None = None
    search_epsilon_lower_bound: float = 0.0
    final_finalists: int = 0
    sensitivity_note: str | None = None
    assumption: str | None = None
    assumed_rejected: bool = False
    assumed_epsilon_lower_bound: float = 0.0
    assumed_witness: str | None = None

    def assumption_statement(self) -> str | None:
        """The verdict under the declared noise family, labelled as such and kept apart from the counted verdict; None without one."""
        if self.assumption is None:
            return None
        if self.assumed_witness is None:
            return f"no grey-box test ran: nothing is shown under the assumption that {self.assumption}"
        if not self.assumed_rejected:
            return (f"not rejected under the assumption that {self.assumption}: its largest bound, {self.assumed_witness}, "
                    f"is not above {self.epsilon:g} (confidence {1.0 - self.alpha:g})")
        counted = "also rejected from counts" if self.rejected else "not shown from counts alone (the assumption-free verdict: not rejected)"
        return (f"rejected under the assumption that {self.assumption}, at confidence {1.0 - self.alpha:g}: "
                f"{self.assumed_witness} > {self.epsilon:g}; {counted}")

    def power_statement(self) -> str:
        return (
            f"estimate: at n = {self.num_samples} per side, an event with P[M(D) in S] - e^eps P[M(D') in S] >= "
            f"delta + {self.detectable_delta:.3g} would have been detected with probability >= {POWER}"
        )


def _greybox_result(
    sampler: Sampler,
    pair: tuple[Any, Any],
    family: str,
    epsilon: float,
    delta: float,
    sensitivity: float,
    num_samples: int,
    rng: np.random.Generator,
    level: float,
) -> tuple[StatisticalTestResult, PairNoiseResult]:
    """:func:`.greybox.pair_noise_test` as a :class:`StatisticalTestResult`, and the test's own result.

    Its verdict and ε lower bound count events on fresh outputs (valid whatever the noise's law); the declared
    family only chose the events and props up the shift bound that the declared sensitivity is compared with.
    """
    noise = pair_noise_test(sampler, pair, family, epsilon, delta, num_samples=num_samples, rng=rng, alpha=level, sensitivity=sensitivity)
    result = StatisticalTestResult(
        rejected=noise.rejected,
        lower_bound_delta=noise.delta_lower_bound,
        epsilon_lower_bound=noise.epsilon_lower_bound,
        witness=noise.statement(),
        direction=noise.direction,
        counts=noise.counts,
        num_hypotheses=noise.num_hypotheses,
        num_samples=noise.num_samples,
        alpha=level,
        epsilon=epsilon,
        delta=delta,
    )
    return result, noise


def _family_samples(family: str, num_samples: int) -> int:
    """Outputs per side a family's test draws in a round of ``num_samples`` (the grey-box family's most)."""
    if family == "learned":
        return min(num_samples, LEARNED_SAMPLES)
    if family == "greybox":
        return GREYBOX_SAMPLE_FACTOR * num_samples
    return num_samples


def _greybox_samples(
    sampler: Sampler, dataset: Any, num_samples: int, seconds_per_output: float | None, deadline: float, rng: np.random.Generator
) -> tuple[int, float]:
    """The grey-box test's outputs per side: up to ``GREYBOX_SAMPLE_FACTOR``·``num_samples``, as many as fit before ``deadline``.

    Without a measured cost (its first test) a pilot of ``num_samples`` outputs, drawn and discarded (no
    test sees them, so no level is spent), times the sampler: a slow sampler (a trainer) gets ``num_samples``,
    not 256 times as many. Returns (size, measured seconds per output of both sides).
    """
    if seconds_per_output is None:
        pilot_start = budget_now()
        sampler(dataset, num_samples, rng)
        seconds_per_output = 2.0 * (budget_now() - pilot_start) / num_samples
    affordable = int((deadline - budget_now()) / max(seconds_per_output, 1e-12))
    return max(min(GREYBOX_SAMPLE_FACTOR * num_samples, affordable), num_samples), seconds_per_output


def _overruns(family: str, seconds_per_output: float | None, size: int, deadline: float, budget_deadline: float) -> bool:
    """Whether a test of ``size`` outputs per side would end after ``deadline``, at the family's measured cost per output.

    A family not yet timed has no cost to go by: its first test (which measures it) is started while the whole
    budget (``budget_deadline``) has ``FIRST_TEST_SECONDS`` of it left (0 for most families), so that every
    family is tried once at the cost of at most one test each past the rounds' share.
    """
    now = budget_now()
    if seconds_per_output is None:
        return now + FIRST_TEST_SECONDS.get(family, 0.0) >= budget_deadline
    return now + seconds_per_output * size > deadline


def _named_pairs(pairs: Sequence[tuple[Any, ...]]) -> list[tuple[str, Any, Any]]:
    named: list[tuple[str, Any, Any]] = []
    for index, item in enumerate(pairs):
        if isinstance(item, tuple) and len(item) == 3 and isinstance(item[0], str):
            named.append(item)
        else:
            try:
                first, second = item
            except (TypeError, ValueError):
                raise ValueError(f"pairs must be a sequence of (D, D') or (name, D, D') (item {index} is {item!r})") from None
            named.append((f"pair {index}", first, second))
    if not named:
        raise ValueError("pairs must hold at least one pair (D, D')")
    return named


def find_violation(
    sampler: Sampler,
    pairs: Sequence[tuple[Any, ...]],
    epsilon: float,
    delta: float,
    *,
    rng: np.random.Generator | int,
    alpha: float = 0.05,
    budget_seconds: float = 20.0,
    initial_samples: int = 1000,
    max_samples: int = 2_000_000,
    families: Sequence[str] | str = DEFAULT_FAMILIES,
    outputs: str = "discrete",
    float_bits: bool = False,
    keep_pairs: int = 2,
    noise_family: str | None = None,
    sensitivity: float | None = None,
    stop_at_rejection: bool = True,
    final_share: float = 0.5,
    final_time_share: float = 0.7,
    final_samples: int | None = None,
    final_candidates: int = 1,
) -> VerificationReport:
    """Search candidate pairs, event families and sample sizes for evidence against an (ε, δ) claim.

    Args:
        sampler: callable (dataset, size, rng) -> size outputs of any type.
        pairs: candidate neighbours: a sequence of (D, D') or (name, D, D'),
            e.g. :func:`statdp_pairs`. Both orders of each are tested.
        epsilon, delta: the claim (ε >= 0, δ in [0, 1)).
        rng: ``numpy.random.Generator`` or integer seed.
        alpha: overall level in (0, 1).
        budget_seconds: > 0, rounds and final stage together, in seconds of the budget clock (wall seconds, or
            CPU seconds with a wall cap inside :func:`.budget_clock.cpu_seconds_budget`): no test (of any round, the first
            included) starts that its family's measured time per output says would end after its round's
            deadline (round 1: the budget, but where classifiers on every pair would pass the rounds' share,
            that share for classifiers past its ``keep_pairs`` best-ranked pairs; later rounds: the rounds'
            share), and no round starts that is
            expected to; only the very first test always runs. The costs are measured, not bounds: the search
            overruns by about one test per family when they hold.
        initial_samples: outputs per side in round 1 (>= 10); doubled each round up to ``max_samples``.
        families: a non-empty subset of ``("cheap", "projections", "learned", "float", "greybox")``.
        outputs: ``"discrete"`` or ``"real"`` for the cheap family (see :func:`.statistical.statistical_dp_test`),
            or ``"vector"``: real vectors of one length (a noisy histogram, a noisy sum of vectors), tested by
            projections with norms and learned linear directions (:func:`.projections.projection_dp_test`),
            classifiers and the grey-box family, not by singletons (no real vector is drawn twice).
        float_bits: floating-point attacks: add the ``"float"`` family and give the learned
            family the lattice exponents and low significand bits of float outputs (numeric outputs only).
        keep_pairs: >= 1, the pairs kept after round 1 (the most promising).
        noise_family: None, ``"gaussian"`` or ``"laplace"``: the mechanism declares M(D) = f(D) + Z with
            Z i.i.d. N(0, σ²) or Laplace(0, b) per coordinate, and adds the ``"greybox"`` family (needs
            ``sensitivity``), whose family picks its events; its verdict holds whatever the noise's law.
        sensitivity: the declared L2 (Gaussian) or L1 (Laplace) sensitivity of f (with ``noise_family``): a
            claim the grey-box family checks against the shifts the pairs attain (``sensitivity_note``), never
            an input to a bound.
        stop_at_rejection: stop at the first rejection (a test); with False the search spends
            its whole budget and reports the largest ε lower bound (an audit, as DP-Sniper's).
        final_share: the share of α kept for the final stage, in [0, 1); 0 runs no final stage
            (and gives the rounds all of α and of the budget).
        final_time_share: the share of ``budget_seconds`` kept for the final stage, in [0, 1): the
            rounds stop when the next one would end after the rest; the final stage uses whatever
            time is left when they stop.
        final_samples: most outputs per side in the final stage, >= 1; None for 50·``max_samples``
            (10⁸ by default: in practice the time budget decides).
        final_candidates: >= 1, the most candidate pairs the final stage counts (:func:`.confirm.confirm_candidates`):
            each with its refitted event and the runners-up within reach, its β split evenly over all
            those events; 1 (the default) gives all the counting time to the pair that ranked best.
    """
    named = _named_pairs(pairs)
    epsilon = float(check.non_negative("epsilon", epsilon))
    delta = float(check.in_interval("delta", delta, 0.0, 1.0, low_open=False, high_open=True))
    rng = check.generator("rng", rng)
    alpha = float(check.open_unit_interval("alpha", alpha))
    budget_seconds = float(check.positive("budget_seconds", budget_seconds))
    initial_samples = check.integer_scalar("initial_samples", initial_samples, 10)
    max_samples = check.integer_scalar("max_samples", max_samples, initial_samples)
    families = tuple(families) if not isinstance(families, str) else (families,)
    if not families or any(family not in FAMILIES for family in families) or len(set(families)) != len(families):
        raise ValueError(f"families must be a non-empty subset of {FAMILIES} (got {families!r})")
    float_bits = check.boolean("float_bits", float_bits)
    if float_bits and "float" not in families:
        families += ("float",)
    keep_pairs = check.integer_scalar("keep_pairs", keep_pairs, 1)
    stop_at_rejection = check.boolean("stop_at_rejection", stop_at_rejection)
    outputs = check.choice("outputs", outputs, OUTPUTS)
    if outputs == "vector" and families == ("cheap",) and noise_family is None:
        raise ValueError("families must hold more than 'cheap' with outputs='vector' (singletons never repeat on real vectors)")
    if noise_family is not None:
        noise_family = check.choice("noise_family", noise_family, GREYBOX_NOISE)
        if sensitivity is None:
            raise ValueError("sensitivity must be given (the declared L2 or L1 sensitivity of f, > 0) with noise_family")
        sensitivity = float(check.positive("sensitivity", sensitivity))
        if "greybox" not in families:
            families += ("greybox",)
    elif "greybox" in families or sensitivity is not None:
        raise ValueError("noise_family must be declared ('gaussian' or 'laplace') for the greybox family and sensitivity")
    # Cheapest first: a round stops at the first rejection.
    # Cheapest first: the event families at the round's size settle blatant bugs in milliseconds, before the grey-box
    # family draws its thousands of times more outputs (a 16-coordinate Gaussian sum: ~4 s of CPU at 4·10⁶ per side).
    families = tuple(family for family in ("cheap", "float", "projections", "greybox", "learned") if family in families)
    final_share = float(check.in_interval("final_share", final_share, 0.0, 1.0, low_open=False, high_open=True))
    final_time_share = float(check.in_interval("final_time_share", final_time_share, 0.0, 1.0, low_open=False, high_open=True))
    final_samples = 50 * max_samples if final_samples is None else check.integer_scalar("final_samples", final_samples, 1)
    final_candidates = check.integer_scalar("final_candidates", final_candidates, 1)
    search_alpha = alpha * (1.0 - final_share)
    search_seconds = budget_seconds * (1.0 - final_time_share) if final_share > 0 else budget_seconds

    start = budget_now()
    search_deadline = start + search_seconds
    best: StatisticalTestResult | None = None
    best_context: tuple[str, str] | None = None
    rounds, num_samples, largest_m = 0, initial_samples, 1
    # Per pair name: its best candidate event and (name, family, D, D', few outcomes) of the test that chose it.
    candidates: dict[str, tuple[Candidate, tuple[str, str, Any, Any, bool]]] = {}
    seconds_per_output: dict[str, float] = {}
    shift_bounds: dict[str, float] = {}
    # The grey-box tests' family bounds (valid if the noise is of the declared family): the largest, with its pair.
    assumed: PairNoiseResult | None = None
    assumed_pair = ""
    while True:
        rounds += 1
        level = search_alpha / (rounds * (rounds + 1)) / (len(named) * len(families))
        round_start = budget_now()
        # Round 1 is what every later choice rests on (a pair it never tests is never tested): it may use the final
        # stage's share too; later rounds stay within the rounds' share.
        round_deadline = start + budget_seconds if rounds == 1 else search_deadline
        strongest = {name: (0.0, -math.inf) for name, _, _ in named}
        few_outcomes = dict.fromkeys(strongest, False)
        latest: dict[str, tuple[Candidate, tuple[str, str, Any, Any, bool]]] = {}
        truncated = False
        # Family by family, each over every pair: the cheap families reach all pairs before a classifier is trained on
        # any, and a test that the clock says would end after the round's share of the budget is not started.
        for family in families:
            # Round 1 trains classifiers on the pairs in the order the cheaper families ranked them (they ran first):
            # the ``keep_pairs`` best may use the whole budget, the others only the rounds' share, so that on many pairs
            # (64 record neighbours at ~0.5 s a classifier) the final stage keeps its time for the best-ranked ones.
            # Only where classifiers on every pair would not fit the rounds' share at their usual cost: on fewer
            # pairs (the literature's 8 StatDP patterns at 20 s) the order and deadlines stay the pair list's, as
            # the 20-seed literature table measured them (ranking there cost svt3 refutations).
            crowded = rounds == 1 and len(named) * _CLASSIFIER_SECONDS > search_seconds
            ordered = sorted(named, key=lambda entry: strongest[entry[0]], reverse=True) if family == "learned" and crowded else named
            for rank, (name, first, second) in enumerate(ordered):
                if family == "learned" and few_outcomes[name]:
                    # Every event on finitely many outcomes is a union of them; the cheap family's singletons and
                    # likelihood-ratio level sets already cover the best ones, and a classifier would only cost time.
                    continue
                if family == "projections" and outputs == "real" and "cheap" in families:
                    continue  # the statistic of a scalar is the scalar: the cheap family's half-lines already
                if family == "cheap" and outputs == "vector":
                    continue  # every real vector is drawn once: singletons never repeat; projections and classifiers serve
                size = _family_samples(family, num_samples)
                if family == "greybox":
                    # At most a quarter of the round's time left, shared by the pairs: the event families need the rest.
                    share = GREYBOX_TIME_SHARE * (round_deadline - budget_now()) / len(named)
                    size, seconds_per_output[family] = _greybox_samples(
                        sampler, first, num_samples, seconds_per_output.get(family), budget_now() + share, rng)
                test_deadline = round_deadline if rank < keep_pairs or family != "learned" or not crowded else search_deadline
                if best is not None and _overruns(family, seconds_per_output.get(family), size, test_deadline,
                                                  start + budget_seconds if test_deadline == round_deadline else search_deadline):
                    # Skipping a test only leaves its share of α unspent.
                    truncated = True
                    continue
                test_start = budget_now()
                if family == "cheap":
                    result = statistical_dp_test(
                        sampler, (first, second), epsilon, delta, num_samples=size, rng=rng, alpha=level, outputs=outputs
                    )
                elif family == "greybox":
                    assert noise_family is not None and sensitivity is not None  # the greybox family joins only with both
                    result, noise = _greybox_result(sampler, (first, second), noise_family, epsilon, delta, sensitivity, size, rng, level)
                    shift_bounds[name] = max(shift_bounds.get(name, 0.0), noise.shift_upper_bound)
                    if assumed is None or noise.family_epsilon_lower_bound > assumed.family_epsilon_lower_bound:
                        assumed, assumed_pair = noise, name
                elif family == "projections":
                    result = projection_dp_test(sampler, (first, second), epsilon, delta, num_samples=size, rng=rng, alpha=level,
                                                outputs="vector" if outputs == "vector" else "discrete")
                elif family == "float":
                    result = float_dp_test(sampler, (first, second), epsilon, delta, num_samples=size, rng=rng, alpha=level)
                else:
                    result = learned_dp_test(
                        sampler, (first, second), epsilon, delta, num_samples=size, rng=rng, alpha=level, float_bits=float_bits,
                    )
                seconds_per_output[family] = (budget_now() - test_start) / size
                largest_m = max(largest_m, result.num_hypotheses)
                few_outcomes[name] |= family == "cheap" and result.num_outcomes is not None and result.num_outcomes <= FEW_OUTCOMES
                strongest[name] = max(strongest[name], (result.epsilon_lower_bound, _plug_in_log_ratio(result.counts)))
                key = (result.rejected, result.epsilon_lower_bound, result.lower_bound_delta)
                if best is None or key > (best.rejected, best.epsilon_lower_bound, best.lower_bound_delta):
                    best, best_context = result, (name, family)
                if result.candidate is not None and (latest.get(name) is None or result.candidate.score > latest[name][0].score):
                    # The cheap family runs first, so few_outcomes already describes this pair.
                    latest[name] = (result.candidate, (name, family, first, second, few_outcomes[name]))
                if result.rejected and stop_at_rejection:
                    break
            if best is not None and best.rejected and stop_at_rejection:
                break
        # Round 1's first test always runs (no family's cost is known yet), so every round ends with a best result.
        assert best is not None and best_context is not None
        # Each pair's candidate from the latest round that tested it: the most outputs per event, the least flattered by luck.
        candidates.update({name: entry for name, entry in latest.items() if entry is not None})
        elapsed = budget_now() - start
        round_seconds = budget_now() - round_start
        if rounds == 1:
            # Ranked by ε lower bound, then by the plug-in log-ratio of the strongest event, which still orders
            # pairs whose bounds are all 0 at round 1's sample size.
            kept = sorted(named, key=lambda entry: strongest[entry[0]], reverse=True)[:keep_pairs]
        else:
            kept = named
        # The next round: twice the samples on the kept pairs (a little more than twice the time per pair).
        expected = 2.2 * round_seconds * len(kept) / len(named)
        if (best.rejected and stop_at_rejection) or truncated or 2 * num_samples > max_samples or elapsed + expected > search_seconds:
            break
        num_samples *= 2
        named = kept
    search_best = best
    final: ConfirmationResult | None = None
    final_witness: str | None = None
    evidence_samples = best.num_samples  # the test's own outputs per side (the grey-box family draws more)
    if final_share > 0 and candidates and not (best.rejected and stop_at_rejection) and budget_now() - start < budget_seconds:
        ranked = sorted(candidates.values(), key=lambda entry: entry[0].score, reverse=True)
        final = confirm_candidates(
            sampler, [((first, second), candidate, "level sets" if few else "learned" if "learned" in families else None)
                      for candidate, (_, _, first, second, few) in ranked],
            epsilon, delta, level=alpha * final_share, seconds=budget_seconds - (budget_now() - start),
            max_samples=final_samples, rng=rng, float_bits=float_bits, final_candidates=final_candidates,
            # The rounds' cheapest family's time per output (its draws of both sides, with its test): a slow
            # sampler's pilots are sized by it (REVIEW s39: 20 µs an output turned a 1 s budget into 3.4 s).
            seconds_per_output=min(seconds_per_output.values()) if seconds_per_output else None,
        )
        if final is not None:
            assert final.candidate is not None and final.pair is not None  # confirm_candidates names its finalist's event and pair
            final_name, final_family = next(context[:2] for _, context in ranked
                                            if context[2] is final.pair[0] and context[3] is final.pair[1])
            final_witness = f"{final_name}: {final.candidate.description}"
            if (final.rejected, final.epsilon_lower_bound) > (best.rejected, best.epsilon_lower_bound):
                best = StatisticalTestResult(
                    rejected=final.rejected, lower_bound_delta=final.lower_bound_delta, epsilon_lower_bound=final.epsilon_lower_bound,
                    witness=final.candidate.description, direction="D -> D'" if final.candidate.heavy_is_first else "D' -> D",
                    counts=final.counts, num_hypotheses=1, num_samples=final.num_samples, alpha=final.level, epsilon=epsilon, delta=delta,
                )
                best_context, evidence_samples = (final_name, f"{final_family}, final stage"), final.num_samples
    bound_level = level / (2.0 * largest_m)
    spread = math.sqrt(0.25 * (1.0 + math.exp(min(2.0 * epsilon, 700.0))) / num_samples)
    detectable = (stats.norm.isf(bound_level) + stats.norm.ppf(POWER)) * spread
    return VerificationReport(
        rejected=best.rejected,
        epsilon_lower_bound=max(best.epsilon_lower_bound, 0.0),
        lower_bound_delta=best.lower_bound_delta,
        pair=best_context[0],
        family=best_context[1],
        witness=best.witness,
        direction=best.direction,
        counts=best.counts,
        num_samples=num_samples,
        rounds=rounds,
        seconds=budget_now() - start,
        alpha=alpha,
        epsilon=epsilon,
        delta=delta,
        detectable_delta=float(detectable),
        evidence_samples=evidence_samples,
        final_samples=0 if final is None else final.num_samples,
        final_epsilon_lower_bound=0.0 if final is None else final.epsilon_lower_bound,
        final_counts=None if final is None else final.counts,
        final_witness=final_witness,
        search_epsilon_lower_bound=max(search_best.epsilon_lower_bound, 0.0),
        final_finalists=0 if final is None else final.num_finalists,
        sensitivity_note=_sensitivity_note(noise_family, sensitivity, shift_bounds),
        assumption=None if noise_family is None else (
            f"the noise is {noise_family}: M(D) = f(D) + Z, Z i.i.d. {noise_family} per coordinate (the declared sensitivity is not used)"),
        assumed_rejected=assumed is not None and assumed.family_epsilon_lower_bound > epsilon,
        assumed_epsilon_lower_bound=0.0 if assumed is None else assumed.family_epsilon_lower_bound,
        assumed_witness=None if assumed is None else f"on {assumed_pair}, from {assumed.fit_samples} outputs per side: {assumed.family_statement()}",
    )


def _sensitivity_note(noise_family: str | None, sensitivity: float | None, shift_bounds: dict[str, float]) -> str | None:
    """The declared sensitivity against the largest upper confidence bound on any tested pair's shift, in words."""
    if noise_family is None or sensitivity is None or not shift_bounds:
        return None
    norm = "L2" if noise_family == "gaussian" else "L1"
    name = max(shift_bounds, key=shift_bounds.__getitem__)
    if shift_bounds[name] < sensitivity:
        return (f"declared {norm} sensitivity {sensitivity:g} is not attained by any candidate pair: the largest shift "
                f"||f(D) - f(D')|| is at most {format_up(shift_bounds[name], 6)} (on {name}, assuming {noise_family} noise); no verdict rests on it")
    return f"declared {norm} sensitivity {sensitivity:g} is within the shift bound {format_up(shift_bounds[name], 6)} of {name} (assuming {noise_family} noise)"


def assert_dp_black_box(sampler: Sampler, pairs: Sequence[tuple[Any, ...]], epsilon: float, delta: float, **options: Any) -> VerificationReport:
    """:func:`find_violation`, raising :class:`DpViolation` with the witness pair, event and counts when it rejects."""
    report = find_violation(sampler, pairs, epsilon, delta, **options)
    if report.rejected:
        if report.family == "greybox":
            evidence = report.witness
        else:
            evidence = (f"direction {report.direction}, the {report.family} event {report.witness} was hit {report.counts[0]} vs "
                        f"{report.counts[1]} times in {report.evidence_samples} outputs per side")
        raise DpViolation(
            f"not ({report.epsilon:g}, {report.delta:g})-DP at level alpha = {report.alpha:g}: on {report.pair}, {evidence}; "
            f"epsilon lower bound {report.epsilon_lower_bound:.4g} (round {report.rounds}, {report.seconds:.1f} s)",
            epsilon=report.epsilon,
            delta=report.delta,
            measured_delta=report.lower_bound_delta,
            witness=(report.pair, report.witness),
            direction=report.direction,
        )
    return report
