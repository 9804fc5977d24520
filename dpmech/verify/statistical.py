r"""Black-box statistical test of an (ε, δ) claim for a sampler, with Clopper–Pearson bounds.

The test can only refute a claim, never prove one. For every event S and
both orders of a neighbouring pair, (ε, δ)-DP requires
P[M(D) ∈ S] − e^ε P[M(D') ∈ S] <= δ (Dwork & Roth 2014, Def. 2.4). The test

1. draws a selection sample of ``num_samples`` outputs on D and on D' and
   picks the events from it: for discrete outputs every observed outcome
   {o} plus the estimated witness set {o : p̂(o) > e^ε q̂(o)}; for real
   outputs the half-lines {x <= t} and {x > t} at ``num_thresholds``
   quantiles of the pooled selection sample;
2. draws a fresh test sample of ``num_samples`` outputs on each side, so the
   events do not depend on the data they are tested on;
3. for each of the m (event, order) hypotheses forms the one-sided
   Clopper–Pearson lower bound on P[M(D) ∈ S] and upper bound on
   P[M(D') ∈ S], each at level α/(2m) (Bonferroni);
4. rejects when some hypothesis has lower − e^ε·upper > δ.

If the claim is true, a rejection needs one of the 2m bounds to fail, so
the probability of a false rejection is at most α (union bound). The same
bounds give ε_lb = max log((lower − δ)/upper), an ε below which the claim is
refuted at level α; the test rejects exactly when ε_lb > ε. This is the
Clopper–Pearson form of Jagielski, Ullman & Oprea (2020) with δ, as in
jax_privacy's CanaryScoreAuditor, applied to two fixed datasets.

Samplers are called as ``sampler(dataset, size, rng)`` and must return a
1-D array of ``size`` independent outputs, drawing only from ``rng``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .. import validation as check
from .exact import DpViolation

OUTPUT_KINDS = ("discrete", "real")


@dataclass(frozen=True)
class StatisticalTestResult:
    """Outcome of :func:`statistical_dp_test`.

    Attributes:
        rejected: the claim is refuted at level ``alpha``.
        lower_bound_delta: max over hypotheses of lower − e^ε·upper: at
            confidence 1 − α, the mechanism's δ(ε) on this pair is at least
            this (when positive).
        epsilon_lower_bound: the largest ε' with lower − e^ε'·upper > δ over
            the hypotheses (0 when none is positive): the claim's ε is
            refuted when this exceeds it.
        witness: description of the event attaining ``lower_bound_delta``.
        direction: ``"D -> D'"`` or ``"D' -> D"`` for that event.
        counts: (count on the first dataset, count on the second) of that event.
        num_hypotheses: m, the number of (event, order) pairs tested.
        num_samples, alpha, epsilon, delta: the settings.
    """

    rejected: bool
    lower_bound_delta: float
    epsilon_lower_bound: float
    witness: str
    direction: str
    counts: tuple
    num_hypotheses: int
    num_samples: int
    alpha: float
    epsilon: float
    delta: float


def clopper_pearson_lower(successes, trials, level):
    """One-sided Clopper–Pearson lower bound Beta.ppf(level; k, n − k + 1), and 0 at k = 0."""
    successes = np.asarray(successes, dtype=float)
    with np.errstate(invalid="ignore"):
        bound = stats.beta.ppf(level, successes, trials - successes + 1.0)
    return np.where(successes > 0, bound, 0.0)


def clopper_pearson_upper(successes, trials, level):
    """One-sided Clopper–Pearson upper bound Beta.ppf(1 − level; k + 1, n − k), and 1 at k = n."""
    successes = np.asarray(successes, dtype=float)
    with np.errstate(invalid="ignore"):
        bound = stats.beta.isf(level, successes + 1.0, trials - successes)
    return np.where(successes < trials, bound, 1.0)


def _draw(sampler, dataset, size, rng, kind):
    outputs = np.asarray(sampler(dataset, size, rng))
    if outputs.shape != (size,):
        raise ValueError(f"sampler must return a 1-D array of size outputs (asked for {size}, got shape {outputs.shape})")
    if kind == "real":
        outputs = outputs.astype(float)
        if not np.all(np.isfinite(outputs)):
            raise ValueError("sampler must return finite outputs when outputs='real'")
    return outputs


def _discrete_events(selection_first, selection_second, epsilon):
    """Membership matrix (events × outcomes), the outcome list, and event names."""
    outcomes = np.unique(np.concatenate([selection_first, selection_second]))
    first = np.bincount(np.searchsorted(outcomes, selection_first), minlength=outcomes.size)
    second = np.bincount(np.searchsorted(outcomes, selection_second), minlength=outcomes.size)
    membership = [np.eye(outcomes.size, dtype=bool)]
    names = [f"{{{outcome!r}}}" for outcome in outcomes.tolist()]
    for heavy, light, label in ((first, second, "D"), (second, first, "D'")):
        witness = heavy > math.exp(min(epsilon, 700.0)) * light
        if np.count_nonzero(witness) > 1:
            membership.append(witness[None, :])
            names.append(f"estimated witness for {label}: {set(outcomes[witness].tolist())!r}")
    return outcomes, np.vstack(membership), names


def _discrete_counts(outputs, outcomes, membership):
    position = np.searchsorted(outcomes, outputs)
    known = (position < outcomes.size) & (outcomes[np.minimum(position, outcomes.size - 1)] == outputs)
    per_outcome = np.bincount(position[known], minlength=outcomes.size)
    return membership.astype(np.int64) @ per_outcome


def _real_events(selection_first, selection_second, num_thresholds):
    pooled = np.concatenate([selection_first, selection_second])
    thresholds = np.unique(np.quantile(pooled, np.linspace(0.0, 1.0, num_thresholds + 2)[1:-1]))
    names = [f"x <= {t:.6g}" for t in thresholds] + [f"x > {t:.6g}" for t in thresholds]
    return thresholds, names


def _real_counts(outputs, thresholds):
    at_most = np.searchsorted(np.sort(outputs), thresholds, side="right")
    return np.concatenate([at_most, outputs.size - at_most])


def statistical_dp_test(
    sampler, pair, epsilon, delta, *, num_samples, rng, alpha=0.05, outputs="discrete", num_thresholds=64
) -> StatisticalTestResult:
    """Test "``sampler`` is (ε, δ)-DP on ``pair``" from samples; see the module docstring for the procedure.

    Args:
        sampler: callable (dataset, size, rng) -> 1-D array of size outputs.
        pair: (D, D'), neighbours under the caller's relation.
        epsilon: claimed ε >= 0.
        delta: claimed δ in [0, 1).
        num_samples: outputs drawn per dataset, for selection and again for
            the test, >= 1 (4·num_samples sampler outputs in all).
        rng: ``numpy.random.Generator`` or integer seed.
        alpha: level of the test in (0, 1): a true claim is rejected with
            probability at most alpha.
        outputs: ``"discrete"`` (outputs compared for equality) or ``"real"``
            (scalar outputs, half-line events).
        num_thresholds: number of quantile thresholds for real outputs, >= 1.
    """
    if not callable(sampler):
        raise ValueError(f"sampler must be a callable (dataset, size, rng) -> outputs (got {sampler!r})")
    try:
        dataset, neighbour = pair
    except (TypeError, ValueError):
        raise ValueError(f"pair must be a pair (dataset, neighbour) of two datasets (got {pair!r})") from None
    epsilon = float(check.non_negative("epsilon", epsilon))
    delta = float(check.in_interval("delta", delta, 0.0, 1.0, low_open=False, high_open=True))
    num_samples = check.integer_scalar("num_samples", num_samples, 1)
    rng = check.generator("rng", rng)
    alpha = float(check.open_unit_interval("alpha", alpha))
    kind = check.choice("outputs", outputs, OUTPUT_KINDS)
    num_thresholds = check.integer_scalar("num_thresholds", num_thresholds, 1)

    selection = [_draw(sampler, data, num_samples, rng, kind) for data in (dataset, neighbour)]
    test = [_draw(sampler, data, num_samples, rng, kind) for data in (dataset, neighbour)]
    if kind == "discrete":
        outcomes, membership, names = _discrete_events(*selection, epsilon)
        counts = [_discrete_counts(sample, outcomes, membership) for sample in test]
    else:
        thresholds, names = _real_events(*selection, num_thresholds)
        counts = [_real_counts(sample, thresholds) for sample in test]

    heavy = np.concatenate([counts[0], counts[1]])
    light = np.concatenate([counts[1], counts[0]])
    num_hypotheses = heavy.size
    level = alpha / (2.0 * num_hypotheses)
    lower = clopper_pearson_lower(heavy, num_samples, level)
    upper = clopper_pearson_upper(light, num_samples, level)
    with np.errstate(over="ignore"):
        margin = lower - math.exp(min(epsilon, 700.0)) * upper
    best = int(np.argmax(margin))
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratios = np.where(lower > delta, np.log(np.maximum(lower - delta, 0.0)) - np.log(upper), -np.inf)
    epsilon_lower_bound = max(float(np.max(log_ratios)), 0.0)
    num_events = len(names)
    return StatisticalTestResult(
        rejected=bool(margin[best] > delta),
        lower_bound_delta=float(margin[best]),
        epsilon_lower_bound=epsilon_lower_bound,
        witness=names[best % num_events],
        direction="D -> D'" if best < num_events else "D' -> D",
        counts=(int(heavy[best]), int(light[best])),
        num_hypotheses=num_hypotheses,
        num_samples=num_samples,
        alpha=alpha,
        epsilon=epsilon,
        delta=delta,
    )


def assert_dp_statistically(sampler, pair, epsilon, delta, **options) -> StatisticalTestResult:
    """:func:`statistical_dp_test`, raising :class:`DpViolation` when it rejects; returns the result otherwise.

    The violation's ``measured_delta`` is the (1 − α)-confidence lower bound
    on P[M(D) ∈ S] − e^ε P[M(D') ∈ S] for the witnessing event S.
    """
    result = statistical_dp_test(sampler, pair, epsilon, delta, **options)
    if result.rejected:
        raise DpViolation(
            f"not ({result.epsilon:g}, {result.delta:g})-DP at level alpha = {result.alpha:g}: in direction "
            f"{result.direction} the event {result.witness} (counts {result.counts[0]} vs {result.counts[1]} of "
            f"{result.num_samples}) has P[M(D) in S] - e^eps P[M(D') in S] >= {result.lower_bound_delta:.6g}; "
            f"epsilon lower bound {result.epsilon_lower_bound:.4g}",
            epsilon=result.epsilon,
            delta=result.delta,
            measured_delta=result.lower_bound_delta,
            witness=(result.witness,),
            direction=result.direction,
        )
    return result
