"""One-sided binomial confidence bounds for the audits: Clopper–Pearson (from :mod:`dpmech.statistics`) and Jeffreys.

For k successes out of n Bernoulli(p) trials:

* Clopper–Pearson (Clopper & Pearson 1934): ``CP_up(k, n, a) = Beta.isf(a; k + 1, n − k)``
  (1 when k = n) and ``CP_lo(k, n, a) = Beta.ppf(a; k, n − k + 1)`` (0 when k = 0),
  exact coverage: P_p[p > CP_up(K, n, a)] <= a for every p. They have one home,
  :func:`dpmech.statistics.clopper_pearson_upper` and ``..._lower``, re-exported here.
* Jeffreys upper bound: the (1 − a) quantile of the Jeffreys posterior
  Beta(k + ½, n − k + ½) (Brown, Cai & DasGupta 2001), 1 when k = n. It is the
  bound used by Andrew et al. 2024 (google-research/federated ``one_shot_epe``).
  It has only approximately nominal coverage and falls below a for some p,
  so results built on it are labelled estimates. It is computed with
  ``Beta.isf(a)``, not ``Beta.ppf(1 − a)``, which rounds 1 − a to 1 for a < 1e-16.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from dpmech import validation as check
from dpmech.statistics import clopper_pearson_lower, clopper_pearson_upper

__all__ = ["clopper_pearson_lower", "clopper_pearson_upper", "jeffreys_upper"]


def _counts(successes, trials):
    trials = np.asarray(check.integer_at_least("trials", trials, 1), dtype=float)
    successes = np.asarray(check.integer_at_least("successes", successes, 0), dtype=float)
    if np.any(successes > trials):
        raise ValueError("successes must be <= trials")
    return successes, trials


def jeffreys_upper(successes, trials, alpha):
    """One-sided Jeffreys upper bound Beta.isf(alpha; k + ½, n − k + ½), 1 when k = n; broadcasts."""
    successes, trials = _counts(successes, trials)
    alpha = check.in_interval("alpha", alpha, 0.0, 1.0, low_open=True, high_open=True)
    full = successes == trials
    bound = stats.beta.isf(alpha, successes + 0.5, np.where(full, 0.5, trials - successes + 0.5))
    return check.scalar_or_array(np.where(full, 1.0, bound))
