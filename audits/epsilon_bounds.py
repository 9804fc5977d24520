r"""(ε, δ) lower bound from attack error rates (Jagielski, Ullman & Oprea 2020, with the δ term).

If a mechanism is (ε, δ)-DP, every test between neighbouring datasets D, D'
(add/remove-one or replace-one: the bound is the same, only the audited
mechanism's claimed ε changes with the relation) satisfies both

.. math::
    \mathrm{TPR} \le e^{\varepsilon}\,\mathrm{FPR} + \delta, \qquad
    \mathrm{TNR} \le e^{\varepsilon}\,\mathrm{FNR} + \delta

(Kairouz, Oh & Viswanath 2015). With upper confidence bounds FPR_ub, FNR_ub
that hold simultaneously with probability >= 1 − α,

.. math::
    \varepsilon_{lb} = \max\Big(\log(1 - \delta - \mathrm{FNR_{ub}}) - \log \mathrm{FPR_{ub}},\;
                             \log(1 - \delta - \mathrm{FPR_{ub}}) - \log \mathrm{FNR_{ub}},\; 0\Big)

is a lower bound on ε with confidence 1 − α: the TPR/FPR test and the
complementary TNR/FNR test at the same threshold use the same two bounds, so
they cost no extra α. This is the symmetric form of Andrew et al. 2024
(``one_shot_epe._epsilon_lower_bound``) and of jax_privacy.

Corrections to the seed code: the original Jagielski et al. code
(jagielski/auditing-dpsgd ``code/audit.py``) has no δ term and takes the
maximum over all thresholds chosen on the same data without a multiple-testing
correction; that maximum is available here only as
``threshold_strategy="uncorrected"`` and is labelled an estimate.
Group privacy (dividing by the number of poisoned points) is not applied.
"""

from __future__ import annotations

import numpy as np

from . import _arguments as arg
from .result import AuditResult
from .scores import NATURAL_TRIALS_NOTE
from .thresholds import select_and_bound

_ASSUMPTION = (
    "IN and OUT scores are independent draws: every IN score from the mechanism run on D∪{canary} "
    "(or D'), every OUT score from the run on D, each trial independent; thresholds chosen as "
    "the threshold_strategy states. No assumption on the shape of the privacy curve."
)


def _epsilon_from_rates(delta: float):
    def objective(fpr_ub, fnr_ub):
        with np.errstate(divide="ignore", invalid="ignore"):
            forward = np.log(1.0 - delta - fnr_ub) - np.log(fpr_ub)
            complementary = np.log(1.0 - delta - fpr_ub) - np.log(fnr_ub)
        value = np.fmax(forward, complementary)
        return np.where(np.isnan(value), -np.inf, value)

    return objective


def epsilon_lower_bound(
    scores,
    *,
    alpha: float = 0.05,
    delta: float = 0.0,
    interval: str = "clopper-pearson",
    threshold_strategy: str = "bonferroni",
    thresholds=None,
    two_sided: bool = False,
    rng=None,
    num_thresholds: int | None = None,
) -> AuditResult:
    """Lower bound on ε at the given δ from Clopper–Pearson (or Jeffreys) bounds on FPR and FNR.

    Args:
        scores: an :class:`~audits.scores.AuditScores`.
        alpha: significance in (0, 1); the bound fails with probability <= alpha
            when ``valid_as == "certified"``.
        delta: δ in [0, 1) of the claim being tested.
        interval: "clopper-pearson" (exact coverage; certified) or "jeffreys"
            (approximate coverage; always an estimate).
        threshold_strategy: "bonferroni" (default; α divided over the 2|K|·D
            rank-indexed candidate events, see :mod:`audits.thresholds`),
            "split" (threshold chosen on a random half drawn with ``rng``,
            evaluated on the other half), "explicit" (``thresholds`` given by
            the caller, rule "IN if score > t" in the caller's orientation) or
            "uncorrected" (maximum over candidates at α/2 each: an estimate).
        thresholds: 1-D thresholds for "explicit" only.
        two_sided: also test the reverse rule (the opposite polarity), under the same α.
        rng: ``numpy.random.Generator`` or int seed, for "split" only.
        num_thresholds: size of the rank-indexed candidate set (default 50).

    Returns:
        :class:`~audits.result.AuditResult` with method "clopper-pearson" or "jeffreys".
    """
    scores = arg.audit_scores(scores)
    alpha = arg.significance(alpha)
    delta = arg.delta_at_least_zero(delta)
    interval = arg.interval(interval)
    strategy = arg.strategy(threshold_strategy)
    two_sided = arg.flag("two_sided", two_sided)
    selection = select_and_bound(
        scores,
        alpha=alpha,
        strategy=strategy,
        two_directions=two_sided,
        interval=interval,
        thresholds=thresholds,
        rng=rng,
        num_thresholds=arg.num_thresholds(num_thresholds),
        objective=_epsilon_from_rates(delta),
    )
    assumption = _ASSUMPTION
    if not scores.independent_trials:
        assumption += " " + NATURAL_TRIALS_NOTE
    if interval == "jeffreys":
        assumption += " Jeffreys bounds have only approximate coverage, so this is an estimate."
    return AuditResult(
        eps_lb=max(selection.value, 0.0),
        delta=delta,
        alpha=alpha,
        method=interval,
        thresholds=(selection.threshold,),
        counts=selection.counts,
        assumption=assumption,
        valid_as=selection.valid_as,
        threshold_strategy=strategy,
        decision_rule=selection.decision_rule,
        num_hypotheses=selection.num_hypotheses,
    )
