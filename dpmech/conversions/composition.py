r"""Advanced composition of k mechanisms that are each (ε, δ)-DP, with dp_accounting's semantics.

* Optimal composition (Kairouz, Oh & Viswanath 2015, "The Composition Theorem for Differential
  Privacy", Thm. 3.3): for every i in {0, ..., ⌊k/2⌋} the k-fold adaptive composition of
  (ε, δ)-DP mechanisms is ((k − 2i)ε, 1 − (1 − δ)^k (1 − δ_i))-DP with

  .. math::
      \delta_i = \frac{\sum_{\ell=0}^{i-1} \binom{k}{\ell}\left(e^{(k-\ell)\varepsilon}
                 - e^{(k-2i+\ell)\varepsilon}\right)}{(1 + e^\varepsilon)^k},

  and no better pair holds for all such mechanisms. :func:`advanced_composition`
  returns the smallest (k − 2i)ε whose δ meets the target, as dp_accounting's
  ``pld.accountant.advanced_composition`` does.
* Dwork, Rothblum & Vadhan 2010, Thm. III.3 (Dwork & Roth 2014, Thm. 3.20): for every δ' > 0
  the composition is (ε√(2k log(1/δ')) + kε(e^ε − 1), kδ + δ')-DP.

The neighbouring relation is whatever each mechanism's (ε, δ) was stated for.

Numerics. δ_i is a sum of positive terms C(k, ℓ) e^{(k−ℓ)ε} (1 − e^{−2(i−ℓ)ε})/(1 + e^ε)^k
summed in log space, so it keeps full relative accuracy for every k and ε. Up to
k ≈ 4000 every δ_i is computed in one array and the largest admissible i taken; beyond,
δ_i grows with i and the largest admissible i is found by bisection, O(k log k). A total δ is
accepted only when it meets the target with a relative margin of 1e-12, so rounding can
reject a pair on the boundary but never accept one beyond it.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from .. import validation as check
from ._logspace import logsumexp

_MARGIN = 1e-12


def _log_binomials(k: int, m: int) -> NDArray[np.float64]:
    """log C(k, ℓ) for ℓ = 0..m."""
    ell = np.arange(m + 1)
    log_binomials: NDArray[np.float64] = special.gammaln(k + 1.0) - special.gammaln(ell + 1.0) - special.gammaln(k - ell + 1.0)
    return log_binomials


def _log_delta_i(i: int, epsilon: float, k: int, log_binomials: NDArray[np.float64]) -> float:
    if i == 0 or epsilon == 0.0:
        return -math.inf
    ell = np.arange(i)
    log_terms = (
        log_binomials[:i]
        + epsilon * (k - ell)
        - k * np.logaddexp(0.0, epsilon)
        + np.log(-np.expm1(-2.0 * epsilon * (i - ell)))
    )
    return float(logsumexp(log_terms))


def _total_delta(log_delta_i: float, delta: float, k: int) -> float:
    """1 − (1 − δ)^k (1 − δ_i), without cancellation for small δ and δ_i."""
    if log_delta_i >= 0.0:  # δ_i <= 1 exactly; a rounded δ_i at 1 admits nothing
        return 1.0
    return -math.expm1(k * math.log1p(-delta) + math.log1p(-math.exp(log_delta_i)))


def _validated(epsilon: float, delta: float, num_queries: int, total_delta: float) -> tuple[float, float, int, float]:
    epsilon = float(check.non_negative("epsilon", epsilon))
    delta = float(check.in_interval("delta", delta, 0.0, 1.0, low_open=False, high_open=True))
    k = check.integer_scalar("num_queries", num_queries, 1)
    total_delta = float(check.in_interval("total_delta", total_delta, 0.0, 1.0, low_open=False, high_open=True))
    floor = -math.expm1(k * math.log1p(-delta))
    if floor * (1.0 + _MARGIN) > total_delta:
        raise ValueError(
            f"total_delta must be at least 1 - (1 - delta)^num_queries = {floor!r}, below which no total epsilon "
            f"holds (got {total_delta!r})"
        )
    return epsilon, delta, k, total_delta


_ALL_AT_ONCE = 4_000_000  # (⌊k/2⌋ + 1)² up to which every δ_i is computed in one array


def _total_deltas_all(epsilon: float, delta: float, k: int, log_binomials: NDArray[np.float64]) -> NDArray[np.float64]:
    """1 − (1 − δ)^k (1 − δ_i) for every i in 0..⌊k/2⌋ at once (an (m+1) × m array of terms)."""
    i = np.arange(log_binomials.size)[:, None]
    ell = np.arange(log_binomials.size - 1)[None, :]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # the masked ℓ >= i half overflows
        log_terms = np.where(
            ell < i,
            log_binomials[:-1] + epsilon * (k - ell) - k * np.logaddexp(0.0, epsilon) + np.log(-np.expm1(-2.0 * epsilon * (i - ell))),
            -np.inf,
        )
        log_delta_i = logsumexp(log_terms, axis=1)
        total_deltas: NDArray[np.float64] = -np.expm1(k * np.log1p(-delta) + np.log1p(-np.exp(np.minimum(log_delta_i, 0.0))))
        return total_deltas


def _advanced_composition(epsilon: float, delta: float, k: int, total_delta: float) -> float:
    m = k // 2
    log_binomials = _log_binomials(k, m)
    if epsilon == 0.0:
        return 0.0
    if (m + 1) ** 2 <= _ALL_AT_ONCE:
        # Every admissible i is an instance of the theorem, so the largest one is valid even if
        # rounding made δ_i non-monotone; i = 0 is admissible (checked by _validated).
        admissible = _total_deltas_all(epsilon, delta, k, log_binomials) * (1.0 + _MARGIN) <= total_delta
        return epsilon * (k - 2 * int(np.flatnonzero(admissible).max(initial=0)))

    def admissible_at(i: int) -> bool:
        return _total_delta(_log_delta_i(i, epsilon, k, log_binomials), delta, k) * (1.0 + _MARGIN) <= total_delta

    low, high = 0, m  # δ_i grows with i: bisect for the largest admissible i
    while low < high:
        middle = (low + high + 1) // 2
        if admissible_at(middle):
            low = middle
        else:
            high = middle - 1
    return epsilon * (k - 2 * low)


def advanced_composition(epsilon: float, delta: float, num_queries: int, total_delta: float) -> float:
    """Smallest total ε of Kairouz–Oh–Viswanath Thm. 3.3 for k uses of an (ε, δ)-DP mechanism.

    Same semantics as dp_accounting's ``pld.accountant.advanced_composition``: the
    total ε is a multiple (k − 2i)ε, the smallest one whose total δ is <= ``total_delta``.

    Args:
        epsilon: ε >= 0 of one use.
        delta: δ in [0, 1) of one use.
        num_queries: k >= 1.
        total_delta: target total δ in [0, 1); at least 1 − (1 − δ)^k (dp_accounting
            returns None below that; here it is a ValueError).
    """
    epsilon, delta, k, total_delta = _validated(epsilon, delta, num_queries, total_delta)
    return _advanced_composition(epsilon, delta, k, total_delta)


def smallest_epsilon_from_advanced_composition(total_epsilon: float, total_delta: float, num_queries: int, delta: float = 0.0) -> float:
    """Largest per-use ε whose k-fold composition is (total_epsilon, total_delta)-DP by Thm. 3.3.

    dp_accounting's ``get_smallest_epsilon_from_advanced_composition``: bisection on ε in
    [total_epsilon/k, total_epsilon] until the bracket is 1e-12 relative wide; the lower end,
    which satisfies the target, is returned (never an ε that fails it).

    Args:
        total_epsilon: target total ε > 0.
        total_delta: target total δ in [0, 1), at least 1 − (1 − δ)^k.
        num_queries: k >= 1.
        delta: δ in [0, 1) of each use.
    """
    total_epsilon = float(check.positive("total_epsilon", total_epsilon))
    k = check.integer_scalar("num_queries", num_queries, 1)
    low, delta, k, total_delta = _validated(total_epsilon / k, delta, k, total_delta)
    m = k // 2
    log_binomials = _log_binomials(k, m)

    def meets_target(epsilon: float) -> bool:
        # The composition meets total_epsilon iff some admissible i has (k − 2i)ε <= total_epsilon;
        # δ_i grows with i, so it suffices to test the smallest such i (testing one i can only
        # be stricter than testing all of them, never more lenient).
        i = max(0, math.ceil((k - total_epsilon / epsilon) / 2.0))
        if i > m or epsilon * (k - 2 * i) > total_epsilon:
            return False
        return _total_delta(_log_delta_i(i, epsilon, k, log_binomials), delta, k) * (1.0 + _MARGIN) <= total_delta

    while low * k > total_epsilon:  # basic composition (i = 0) must hold at the lower end
        low = math.nextafter(low, 0.0)
    high = total_epsilon
    if meets_target(high):
        return high
    while high - low > 1e-12 * high:
        middle = 0.5 * (low + high)
        if meets_target(middle):
            low = middle
        else:
            high = middle
    return low


def drv_composition(
    epsilon: ArrayLike, delta: ArrayLike, num_queries: ArrayLike, delta_slack: ArrayLike
) -> tuple[float | NDArray[np.float64], ...]:
    """(ε√(2k log(1/δ')) + kε(e^ε − 1), kδ + δ'): Dwork, Rothblum & Vadhan 2010, Thm. III.3.

    Broadcasts. Each total is raised by one ulp to cover the rounding of its evaluation.

    Args:
        epsilon: ε >= 0 of one use; delta: δ in [0, 1]; num_queries: k >= 1; delta_slack: δ' in (0, 1).

    Returns:
        (total ε, total δ); the total δ may exceed 1, in which case the bound says nothing.
    """
    epsilon = check.non_negative("epsilon", epsilon)
    delta = check.in_interval("delta", delta, 0.0, 1.0, low_open=False, high_open=False)
    k = check.integer_at_least("num_queries", num_queries, 1)
    slack = check.open_unit_interval("delta_slack", delta_slack)
    total_epsilon = epsilon * np.sqrt(2.0 * k * -np.log(slack)) + k * epsilon * np.expm1(epsilon)
    total_delta = k * delta + slack
    return tuple(check.scalar_or_array(np.where(total > 0, np.nextafter(total, np.inf), total)) for total in (total_epsilon, total_delta))
