"""One-sided binomial confidence bounds (Clopper–Pearson and Jeffreys).

For k successes out of n Bernoulli(p) trials:

* Clopper–Pearson upper bound (Clopper & Pearson 1934):
  ``CP_up(k, n, a) = Beta.ppf(1 − a; k + 1, n − k)``, and 1 when k = n.
  Exact coverage: P_p[p > CP_up(K, n, a)] <= a for every p.
* Clopper–Pearson lower bound: ``CP_lo(k, n, a) = Beta.ppf(a; k, n − k + 1)``, 0 when k = 0.
* Jeffreys upper bound: the (1 − a) quantile of the Jeffreys posterior
  Beta(k + ½, n − k + ½) (Brown, Cai & DasGupta 2001), 1 when k = n. It is the
  bound used by Andrew et al. 2024 (google-research/federated ``one_shot_epe``).
  It has only approximately nominal coverage and falls below a for some p,
  so results built on it are labelled estimates.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from dpmech import validation as check


def _counts(successes, trials):
    trials = np.asarray(check.integer_at_least("trials", trials, 1), dtype=float)
    successes = np.asarray(check.integer_at_least("successes", successes, 0), dtype=float)
    if np.any(successes > trials):
        raise ValueError("successes must be <= trials")
    return successes, trials


def _significance(alpha):
    return check.in_interval("alpha", alpha, 0.0, 1.0, low_open=True, high_open=True)


def clopper_pearson_upper(successes, trials, alpha):
    """One-sided (1 − alpha) Clopper–Pearson upper bound on a binomial proportion; broadcasts."""
    successes, trials = _counts(successes, trials)
    alpha = _significance(alpha)
    full = successes == trials
    with np.errstate(invalid="ignore"):
        bound = stats.beta.ppf(1.0 - alpha, successes + 1.0, np.where(full, 1.0, trials - successes))
    return check.scalar_or_array(np.where(full, 1.0, bound))


def clopper_pearson_lower(successes, trials, alpha):
    """One-sided (1 − alpha) Clopper–Pearson lower bound on a binomial proportion; broadcasts."""
    successes, trials = _counts(successes, trials)
    return check.scalar_or_array(1.0 - np.asarray(clopper_pearson_upper(trials - successes, trials, alpha)))


def jeffreys_upper(successes, trials, alpha):
    """One-sided Jeffreys upper bound Beta.ppf(1 − alpha; k + ½, n − k + ½), 1 when k = n; broadcasts."""
    successes, trials = _counts(successes, trials)
    alpha = _significance(alpha)
    full = successes == trials
    bound = stats.beta.ppf(1.0 - alpha, successes + 0.5, np.where(full, 0.5, trials - successes + 0.5))
    return check.scalar_or_array(np.where(full, 1.0, bound))
