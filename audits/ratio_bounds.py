r"""Lower confidence bounds on a ratio of binomial proportions, and the ε "bounds" TF-Privacy derives from them.

The convention of tensorflow/privacy ``privacy_tests/epsilon_lower_bound.py``
(``RatioBound``, ``EpsilonLowerBound``), reproduced so that numbers from papers
that used it can be recomputed. For TP of n₊ positives and FP of n₋ negatives,
with z = Φ⁻¹(α) < 0, the lower bounds on (TP/n₊)/(FP/n₋) are (Fagerland, Lydersen
& Laake 2015, after R's ``asbio::ci.prat``):

* ``"katz-log"``: R·exp(z·√(FNR/TP + TNR/FP)), FP = 0 replaced by ½;
* ``"adjusted-log"`` (Walters): the same on TP + ½, FP + ½, n + ½, with
  √(1/(TP+½) − 1/(n₊+½) + 1/(FP+½) − 1/(n₋+½));
* ``"bailey"``: R·((1 + z/3·√(FNR/TP + TNR/FP − z²·FNR·TNR/(9·TP·FP))) / (1 − z²·TNR/(9·FP)))³;
* ``"inv-sinh"``: R·exp(2·asinh(z/2·√(1/TP − 1/n₊ + 1/FP − 1/n₋))), FP = 0 replaced by z²;
* ``"clopper-pearson"``: CP_lo(TP, n₊, α/2) / CP_up(FP, n₋, α/2) (Jagielski et al. 2020,
  statsmodels' two-sided ``proportion_confint(method="beta")``).

with TP = n₊ and FP = n₋ together replaced by n − ½, and the bound 0 at TP = 0
(both TP = FP = 0 for adjusted-log). The first four are large-sample
approximations with no coverage guarantee; none of the five corrects for
choosing the threshold on the same data, and there is no δ. Every ε from this
module is therefore an **estimate**, never a certified bound
(:func:`audits.epsilon_lower_bound` gives those).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from dpmech import validation as check
from dpmech.statistics import clopper_pearson_lower, clopper_pearson_upper

from . import _arguments as arg

RATIO_METHODS = ("katz-log", "adjusted-log", "bailey", "inv-sinh", "clopper-pearson")


def _counts(true_positives, false_positives, num_positive, num_negative):
    num_positive = check.integer_scalar("num_positive", num_positive, 1)
    num_negative = check.integer_scalar("num_negative", num_negative, 1)
    tp = np.asarray(check.integer_at_least("true_positives", true_positives, 0), dtype=float)
    fp = np.asarray(check.integer_at_least("false_positives", false_positives, 0), dtype=float)
    if tp.shape != fp.shape:
        raise ValueError(f"true_positives and false_positives must have one shape (got {tp.shape} and {fp.shape})")
    if np.any(tp > num_positive):
        raise ValueError(f"true_positives must be <= num_positive = {num_positive}")
    if np.any(fp > num_negative):
        raise ValueError(f"false_positives must be <= num_negative = {num_negative}")
    return tp, fp, float(num_positive), float(num_negative)


def ratio_lower_bound(true_positives, false_positives, num_positive, num_negative, alpha, method: str):
    """Lower bound on (TP/n₊)/(FP/n₋) at level ``alpha`` in (0, ½) by ``method`` (module docstring); broadcasts."""
    tp_raw, fp_raw, n_pos, n_neg = _counts(true_positives, false_positives, num_positive, num_negative)
    alpha = check.in_interval("alpha", alpha, 0.0, 0.5, low_open=True, high_open=True)
    method = check.choice("method", method, RATIO_METHODS)
    z = float(special.ndtri(alpha))
    both_full = (tp_raw == n_pos) & (fp_raw == n_neg)
    tp = np.where(both_full, n_pos - 0.5, tp_raw)
    fp = np.where(both_full, n_neg - 0.5, fp_raw)
    tp_zero, fp_zero = tp == 0, fp == 0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if method == "katz-log":
            fp = np.where(fp_zero, 0.5, fp)
            tpr, fpr = tp / n_pos, fp / n_neg
            bound = np.where(tp_zero, 0.0, tpr / fpr * np.exp(z * np.sqrt((1 - tpr) / tp + (1 - fpr) / fp)))
        elif method == "adjusted-log":
            log_ratio = np.log((tp + 0.5) / (n_pos + 0.5)) - np.log((fp + 0.5) / (n_neg + 0.5))
            spread = np.sqrt(1 / (tp + 0.5) - 1 / (n_pos + 0.5) + 1 / (fp + 0.5) - 1 / (n_neg + 0.5))
            bound = np.where(tp_zero & fp_zero, 0.0, np.exp(log_ratio + z * spread))
        elif method == "bailey":
            tp = np.where(tp_raw == n_pos, n_pos - 0.5, tp_raw)
            fp = np.where(fp_zero, 0.5, np.where(fp_raw == n_neg, n_neg - 0.5, fp_raw))
            tpr, fpr = tp / n_pos, fp / n_neg
            fnr, tnr = 1 - tpr, 1 - fpr
            numerator = 1 + z / 3 * np.sqrt(fnr / tp + tnr / fp - z**2 * fnr * tnr / (9 * tp * fp))
            denominator = 1 - z**2 * tnr / (9 * fp)
            bound = np.where(tp_zero, 0.0, tpr / fpr * (numerator / denominator) ** 3)
        elif method == "inv-sinh":
            fp = np.where(fp_zero, z**2, fp)
            spread = z / 2 * np.sqrt(1 / tp - 1 / n_pos + 1 / fp - 1 / n_neg)
            bound = np.where(tp_zero, 0.0, (tp / fp) / (n_pos / n_neg) * np.exp(2 * np.arcsinh(spread)))
        else:
            lower = np.asarray(clopper_pearson_lower(tp_raw, n_pos, alpha / 2))
            upper = np.asarray(clopper_pearson_upper(fp_raw, n_neg, alpha / 2))
            bound = np.where((lower <= 0) | (upper >= 1), 0.0, lower / upper)
    return check.scalar_or_array(np.asarray(bound, dtype=float))


def epsilon_ratio_bounds(scores, *, method: str, alpha: float = 0.05, two_sided: bool = False, thresholds=None):
    """log of the ratio bounds at every threshold, largest first (TF-Privacy ``compute_epsilon_lower_bound``).

    The rules are "IN if score >= t" at every distinct score, or "IN if score > t"
    at the given ``thresholds`` (caller's units). Each rule contributes TPR/FPR
    and TNR/FNR; ``two_sided`` adds FPR/TPR and FNR/TNR (the reverse rule,
    TF-Privacy's ``two_sided_threshold``). Zero ratio bounds are dropped, so
    values may be negative. Estimates only (module docstring); take ``[0]`` for
    TF-Privacy's reported ε.
    """
    scores = arg.audit_scores(scores)
    method = check.choice("method", method, RATIO_METHODS)
    two_sided = arg.flag("two_sided", two_sided)
    n_in, n_out = scores.num_in, scores.num_out
    if thresholds is None:
        from .metrics import roc_counts

        counts = roc_counts(scores)
        tp, fp = counts.true_positives[1:], counts.false_positives[1:]
    else:
        given = np.atleast_1d(np.asarray(check.real_at_least("thresholds", thresholds, -np.inf), dtype=float))
        if given.ndim != 1 or given.size == 0 or not np.all(np.isfinite(given)):
            raise ValueError(f"thresholds must be a non-empty 1-D array of finite numbers (got {thresholds!r})")
        in_oriented, out_oriented = scores.oriented()
        cuts = given if scores.higher_is_in else -given
        tp = in_oriented.size - np.searchsorted(np.sort(in_oriented), cuts, side="right")
        fp = out_oriented.size - np.searchsorted(np.sort(out_oriented), cuts, side="right")
    fn, tn = n_in - tp, n_out - fp
    pairs = [(tp, fp, n_in, n_out), (tn, fn, n_out, n_in)]
    if two_sided:
        pairs += [(fp, tp, n_out, n_in), (fn, tn, n_in, n_out)]
    ratios = np.concatenate([np.atleast_1d(ratio_lower_bound(a, b, na, nb, alpha, method)) for a, b, na, nb in pairs])
    return np.sort(np.log(ratios[ratios > 0]))[::-1]
