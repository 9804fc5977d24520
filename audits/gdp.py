r"""GDP μ lower bound and the ε it implies (Nasr et al. 2023, "Tight Auditing of DP ML").

A mechanism is μ-GDP (Dong, Roth & Su 2019/2022) when every test between
neighbouring datasets has FNR >= G_μ(FPR) = Φ(Φ⁻¹(1 − FPR) − μ), i.e.

.. math::  \mu \ge \Phi^{-1}(1 - \mathrm{FPR}) - \Phi^{-1}(\mathrm{FNR}).

With FPR_ub, FNR_ub holding simultaneously with probability >= 1 − α, each
rule gives :math:`\mu(t) = \Phi^{-1}(1 - \mathrm{FPR_{ub}}) - \Phi^{-1}(\mathrm{FNR_{ub}})`
(the expression is symmetric in FPR and FNR, so the complementary test is
included). By default both decision directions are tested — "IN if score > t" and
"IN if score < t", each with its own upper bounds on its own error rates —
under ONE Bonferroni budget (:mod:`audits.thresholds`), and
``mu_lb = max(μ_forward, μ_reverse, 0)``; ``two_sided=False`` tests the forward
rule only (half the hypotheses), for scores whose polarity is known in advance.

Pitfall avoided: jax_privacy's ``epsilon_from_gdp`` before PR #270 took
``abs(Φ⁻¹(1 − FPR_ub) − Φ⁻¹(FNR_ub))`` as the reverse direction. The reverse
rule's error rates are 1 − FPR and 1 − FNR and need their own upper bounds;
the shortcut turns a strongly negative forward value into a large positive μ
(ε ≈ 3.5 on pure-noise scores, per the PR).

ε from μ. A μ-GDP mechanism has exactly the privacy profile of the Gaussian
mechanism with sensitivity μ and σ = 1 (Dong, Roth & Su, Cor. 2.13), so
ε_lb = ``dpmech.gaussian_epsilon(delta, sigma=1.0, sensitivity=mu_lb)``.

Validity, precisely:

* ``mu_lb`` is a certified lower bound (confidence 1 − α) on the μ of any
  mechanism that satisfies μ-GDP: no assumption beyond independent trials.
* ``eps_lb`` is certified ONLY under the assumption that the mechanism's
  privacy curve is exactly GDP-shaped (a Gaussian mechanism, possibly composed),
  as for Gaussian output perturbation. For other mechanisms (e.g. randomized
  response) an (ε, δ)-DP mechanism can produce eps_lb > ε.

``valid_as`` is "certified" for "bonferroni", "split" and "explicit" with that
assumption recorded, "estimate" for "uncorrected" or Jeffreys bounds.
"""

from __future__ import annotations

import numpy as np
from scipy import special

import dpmech
from dpmech import validation as check

from . import _arguments as arg
from .result import AuditResult
from .scores import NATURAL_TRIALS_NOTE
from .thresholds import select_and_bound

_ASSUMPTION = (
    "mu_lb: lower bound on μ of any μ-GDP claim, assuming only independent IN/OUT trials. "
    "eps_lb: the ε implied by mu_lb at delta, valid only if the mechanism's privacy curve is "
    "exactly GDP-shaped (e.g. a composed Gaussian mechanism); not an assumption-free (ε, δ) bound."
)


def _mu_from_rates(fpr_ub, fnr_ub):
    with np.errstate(divide="ignore"):
        return -special.ndtri(fpr_ub) - special.ndtri(fnr_ub)


def epsilon_from_gdp(
    scores,
    *,
    alpha: float = 0.05,
    delta: float = 1e-5,
    interval: str = "clopper-pearson",
    threshold_strategy: str = "bonferroni",
    thresholds=None,
    rng=None,
    num_thresholds: int | None = None,
    two_sided: bool = True,
) -> AuditResult:
    """μ-GDP lower bound from both test directions under one α, and the ε it implies at ``delta``.

    Args:
        scores: an :class:`~audits.scores.AuditScores`.
        alpha: significance in (0, 1), shared by both directions.
        delta: δ in (0, 1) at which ε is reported.
        two_sided: test both directions (default) or only "IN if score > t" (in
            the caller's orientation), under the same α.
        interval, threshold_strategy, thresholds, rng, num_thresholds: as in
            :func:`audits.epsilon_bounds.epsilon_lower_bound`.

    Returns:
        :class:`~audits.result.AuditResult` with ``method="gdp"`` and ``mu_lb`` set.
    """
    scores = arg.audit_scores(scores)
    alpha = arg.significance(alpha)
    delta = float(check.open_unit_interval("delta", delta))
    interval = arg.interval(interval)
    strategy = arg.strategy(threshold_strategy)
    selection = select_and_bound(
        scores,
        alpha=alpha,
        strategy=strategy,
        two_directions=arg.flag("two_sided", two_sided),
        interval=interval,
        thresholds=thresholds,
        rng=rng,
        num_thresholds=arg.num_thresholds(num_thresholds),
        objective=_mu_from_rates,
    )
    mu_lb = max(selection.value, 0.0)
    eps_lb = dpmech.gaussian_epsilon(delta, sigma=1.0, sensitivity=mu_lb) if mu_lb > 0.0 else 0.0
    return AuditResult(
        eps_lb=float(eps_lb),
        delta=delta,
        alpha=alpha,
        method="gdp",
        thresholds=(selection.threshold,),
        counts=selection.counts,
        assumption=_ASSUMPTION + ("" if scores.independent_trials else " " + NATURAL_TRIALS_NOTE),
        valid_as=selection.valid_as,
        threshold_strategy=strategy,
        decision_rule=selection.decision_rule,
        num_hypotheses=selection.num_hypotheses,
        mu_lb=mu_lb,
    )
