r"""Power of the Clopper–Pearson ε lower bound against a claim: what "not detected" can and cannot mean.

The test. :func:`audits.epsilon_lower_bound` with Clopper–Pearson bounds and ``"bonferroni"``
thresholds (the assumption-free estimator of ``dpmech audit scores``) certifies a violation of a
claimed (ε, δ) when ε_lb > ε. Its rule at rank level k (:mod:`audits.thresholds`) has
FPR_ub = CP_up(k, n_out, a), a number fixed by n_out and a = α / (2 K D) (K levels, D directions),
and FNR_ub = CP_up(FN, n_in, a), increasing in the observed FN. So the rule at level k certifies
ε_lb > ε exactly when FN <= h_k, the largest count with

.. math::
    \max\big(\log(1 - \delta - \mathrm{CP_{up}}(h_k)) - \log \mathrm{FPR_{ub}},\;
             \log(1 - \delta - \mathrm{FPR_{ub}}) - \log \mathrm{CP_{up}}(h_k)\big) > \varepsilon

(:func:`detection_counts`; h_k = −1 when no count qualifies). Kairouz, Oh & Viswanath 2015 give
the inequalities; Clopper & Pearson 1934 the bounds. The observed ROC must pass above the points
(k / n_out, 1 − h_k / n_in): above the claim's boundary is not enough, which is why a plotted ROC
(pointwise estimates) can cross the claimed boundary without a certified violation.

Detection probability. Take a mechanism whose IN and OUT scores are continuous with true ROC R
(independent trials). The cut c_k is the (k + 1)-th largest OUT score, so its true FPR F_k is
Beta(k + 1, n_out − k), and given F_k, FN ~ Bin(n_in, 1 − R(F_k)) (c_k depends on OUT only). Hence
the rule at level k detects with probability

.. math::  P_k = \mathbb{E}\,G_k(F_k), \qquad G_k(F) = P[\mathrm{Bin}(n_{in}, 1 - R(F)) \le h_k],

with G_k nondecreasing in F. On the Beta quantiles F^{(j)} at probabilities
0 = p_0 < … < p_J = 1, the sums Σ (p_{j+1} − p_j) G_k(F^{(j)}) and Σ (p_{j+1} − p_j) G_k(F^{(j+1)})
bracket P_k (G_k monotone); the reverse rule "IN if score < c" is the same with R replaced by
f ↦ 1 − R(1 − f). The test detects when any rule does, so

.. math::  \max_k P_k \;\le\; P[\text{detect}] \;\le\; \min\big(1, \textstyle\sum_k P_k\big)

(union bound), over both directions when both are tested. :func:`detection_probability` returns
these two numbers, widened by 1e-9 for the rounding of the quantiles and binomial tails.

Every (ε', δ)-DP mechanism. Its ROC in either direction lies below the boundary B of the
(ε', δ) privacy region (:func:`audits.epsilon_bounds.privacy_region_boundary`), and G_k increases with R, so
:func:`power_bound` — the union bound with B in every direction — bounds from above the detection
probability of every (ε', δ)-DP mechanism (ties only lower the FPR of a cut and the TPR of a
deterministic rule, hence only lower G_k). A mechanism whose ROC is B exists (the (ε', δ)
trade-off curve of Dong, Roth & Su 2022 is attained), so the bound is not loose in that direction
by more than the union bound.

The largest ε the test can certify at all (:func:`largest_certifiable_epsilon`) is its value when
every IN score lies above every OUT score (FN = 0 at level 0): a claim at or above it can never be
refuted with these sample sizes.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from scipy import special, stats

from dpmech import validation as check

from .epsilon_bounds import epsilon_from_error_rates, privacy_region_boundary
from .thresholds import DEFAULT_NUM_THRESHOLDS, _upper, rank_levels

__all__ = ["detection_counts", "detection_probability", "largest_certifiable_epsilon", "power_bound"]

# Probabilities of the Beta quantiles: 2,000 even steps and a tail refined geometrically to 1 − 1e-12,
# so the last bin, which the upper sum must count as a detection, weighs 1e-12.
_QUANTILE_PROBABILITIES = np.unique(np.r_[np.linspace(0.0, 1.0, 2001), 1.0 - np.geomspace(5e-4, 1e-12, 60), 1.0])
_ROUNDING = 1e-9


def _arguments(num_in, num_out, alpha, delta, directions, num_thresholds):
    num_in = check.integer_scalar("num_in", num_in, 1)
    num_out = check.integer_scalar("num_out", num_out, 1)
    alpha = float(check.open_unit_interval("alpha", alpha))
    delta = float(check.in_interval("delta", delta, 0.0, 1.0, low_open=False, high_open=True))
    directions = check.integer_scalar("directions", directions, 1)
    if directions > 2:
        raise ValueError(f"directions must be 1 or 2 (got {directions})")
    num_thresholds = check.integer_scalar("num_thresholds", num_thresholds, 1)
    levels = rank_levels(num_out, num_thresholds)
    significance = alpha / (2 * levels.size * directions)
    return num_in, num_out, delta, directions, levels, significance


def detection_counts(num_in: int, num_out: int, *, epsilon: float, delta: float, alpha: float = 0.05,
                     directions: int = 1, num_thresholds: int = DEFAULT_NUM_THRESHOLDS) -> tuple[np.ndarray, np.ndarray]:
    """(levels k, h_k): the rule at level k certifies ε_lb > ``epsilon`` iff its FN count is <= h_k (−1: never).

    Exactly the decision of :func:`audits.epsilon_lower_bound` (Clopper–Pearson, ``"bonferroni"``,
    ``complement=True``, ``two_sided = directions == 2``) at the same ``alpha``, ``delta`` and
    ``num_thresholds``, for each direction (the reverse rule has the same levels and counts).
    """
    epsilon = float(check.positive("epsilon", epsilon))
    num_in, num_out, delta, _, levels, significance = _arguments(num_in, num_out, alpha, delta, directions,
                                                                 num_thresholds)
    fpr_ub = _upper("clopper-pearson", levels, num_out, significance)

    def certifies(false_negatives):
        fnr_ub = _upper("clopper-pearson", false_negatives, num_in, significance)
        return epsilon_from_error_rates(fpr_ub, fnr_ub, delta, complement=True) > epsilon

    # Bisection on FN for every level at once: ``certifies`` is nonincreasing in FN (CP_up increases in it).
    low, high = np.full(levels.size, -1), np.full(levels.size, num_in + 1)  # certifies at low, not at high
    while np.any(active := high - low > 1):
        middle = (low + high) // 2
        # A settled level (high = low + 1) has middle = low, possibly −1: clipped for the call, and not updated.
        passed = certifies(np.clip(middle, 0, num_in))
        low, high = np.where(active & passed, middle, low), np.where(active & ~passed, middle, high)
    return levels, low


def largest_certifiable_epsilon(num_in: int, num_out: int, *, delta: float, alpha: float = 0.05,
                                directions: int = 1, num_thresholds: int = DEFAULT_NUM_THRESHOLDS) -> float:
    """The largest ε_lb the test can return with these sample sizes (every IN score above every OUT score)."""
    num_in, num_out, delta, _, levels, significance = _arguments(num_in, num_out, alpha, delta, directions,
                                                                 num_thresholds)
    fpr_ub = _upper("clopper-pearson", levels, num_out, significance)
    fnr_ub = _upper("clopper-pearson", np.zeros(levels.size), num_in, significance)
    return float(max(np.max(epsilon_from_error_rates(fpr_ub, fnr_ub, delta, complement=True)), 0.0))


def _level_brackets(tpr_at, levels, limits, num_in, num_out):
    """(lower, upper) of P_k for each level with h_k >= 0, for the ROC ``tpr_at``."""
    kept = limits >= 0
    levels, limits = levels[kept], limits[kept]
    if levels.size == 0:
        return np.zeros(0), np.zeros(0)
    fpr = stats.beta.ppf(_QUANTILE_PROBABILITIES[None, :], levels[:, None] + 1.0, num_out - levels[:, None])
    miss = np.clip(1.0 - np.asarray(tpr_at(fpr), dtype=float), 0.0, 1.0)
    detect = special.bdtr(limits[:, None], num_in, miss)
    weights = np.diff(_QUANTILE_PROBABILITIES)
    return detect[:, :-1] @ weights, detect[:, 1:] @ weights


def detection_probability(tpr_at: Callable[[np.ndarray], np.ndarray], num_in: int, num_out: int, *,
                          epsilon: float, delta: float, alpha: float = 0.05, directions: int = 1,
                          num_thresholds: int = DEFAULT_NUM_THRESHOLDS) -> tuple[float, float]:
    """Bounds (low, high) on the probability that the test certifies ε_lb > ``epsilon`` (module docstring).

    Args:
        tpr_at: the true ROC R of the scores, FPR -> TPR (vectorised, nondecreasing, R(1) = 1), for
            the rule "IN if score > t"; the scores are taken continuous and from independent trials.
        num_in, num_out: the sample sizes.
        epsilon, delta, alpha, directions, num_thresholds: the claim and the test, as in
            :func:`detection_counts`.
    """
    levels, limits = detection_counts(num_in, num_out, epsilon=epsilon, delta=delta, alpha=alpha,
                                      directions=directions, num_thresholds=num_thresholds)
    curves = [tpr_at, lambda fpr: 1.0 - np.asarray(tpr_at(1.0 - fpr), dtype=float)][:directions]
    lows, highs = zip(*(_level_brackets(curve, levels, limits, num_in, num_out) for curve in curves))
    low, high = np.concatenate(lows), np.concatenate(highs)
    return (max(float(np.max(low, initial=0.0)) - _ROUNDING, 0.0),
            min(float(np.sum(high)) + _ROUNDING, 1.0))


def power_bound(true_epsilon: float, num_in: int, num_out: int, *, epsilon: float, delta: float,
                alpha: float = 0.05, directions: int = 1, num_thresholds: int = DEFAULT_NUM_THRESHOLDS) -> float:
    """Upper bound on the detection probability of every (``true_epsilon``, δ)-DP mechanism (module docstring).

    The union bound over levels (and directions) with the ROC B of the (ε', δ) privacy region's
    boundary in each direction; B is the ROC of the most detectable (ε', δ)-DP mechanism.
    """
    true_epsilon = float(check.positive("true_epsilon", true_epsilon))
    levels, limits = detection_counts(num_in, num_out, epsilon=epsilon, delta=delta, alpha=alpha,
                                      directions=directions, num_thresholds=num_thresholds)
    _, high = _level_brackets(lambda fpr: privacy_region_boundary(fpr, true_epsilon, delta), levels, limits,
                              num_in, num_out)
    return min(directions * float(np.sum(high)) + _ROUNDING, 1.0)
