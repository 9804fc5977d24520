"""The ROC plot's simultaneous Clopper–Pearson band holds the true ROC at every FPR at once, at level 1 − α."""

import numpy as np
import pytest
from scipy import stats

from audits import AuditScores
from audits.report import roc_simultaneous_band

ALPHA = 0.3
REPETITIONS = 60
# Monte-Carlo slack: three standard errors of a rate α over the repetitions.
ALLOWED = ALPHA + 3 * np.sqrt(ALPHA * (1 - ALPHA) / REPETITIONS)


def _misses(fpr, low, high, true_roc, true_roc_before):
    """True if the band fails to hold R somewhere: the steps are checked where R is smallest and largest."""
    # On [fpr[i], fpr[i + 1]) R is at least R(fpr[i]) and at most R just before fpr[i + 1].
    below = np.any(low > true_roc(fpr))
    above = np.any(high[:-1] < true_roc_before(fpr[1:])) or high[-1] < true_roc(1.0)
    return below or above


def test_continuous_scores():
    # IN ~ N(1, 1), OUT ~ N(0, 1), 40 per side: R(f) = Φ(Φ⁻¹(f) + 1), continuous.
    rng = np.random.default_rng(0)

    def roc(f):
        return stats.norm.cdf(stats.norm.ppf(f) + 1.0)

    misses = sum(_misses(*roc_simultaneous_band(AuditScores(rng.normal(1, 1, 40), rng.normal(0, 1, 40)), ALPHA),
                         roc, roc) for _ in range(REPETITIONS))
    assert misses / REPETITIONS <= ALLOWED


def test_tied_scores():
    # Scores on {0, 1, 2, 3}: every rule ">= t" is one of five; R(f) is the largest TPR among those with FPR <= f,
    # a step function, so just before a step it takes the value of the rules with FPR < f.
    rng = np.random.default_rng(1)
    tenths_in, tenths_out = np.array([1, 2, 3, 4]), np.array([4, 3, 2, 1])
    p_in, p_out = tenths_in / 10, tenths_out / 10
    # P[IN >= t] and P[OUT >= t] for t = 0..4, summed in integers so that P[score >= 0] is exactly 1.
    tpr_rules = np.r_[np.cumsum(tenths_in[::-1])[::-1], 0] / 10
    fpr_rules = np.r_[np.cumsum(tenths_out[::-1])[::-1], 0] / 10

    def roc(f):
        return np.max(np.where(fpr_rules <= np.atleast_1d(f)[:, None] + 1e-12, tpr_rules, 0.0), axis=1)

    def roc_before(f):
        return np.max(np.where(fpr_rules < np.atleast_1d(f)[:, None] - 1e-12, tpr_rules, 0.0), axis=1)

    misses = 0
    for _ in range(REPETITIONS):
        scores = AuditScores(rng.choice(4, 30, p=p_in).astype(float), rng.choice(4, 30, p=p_out).astype(float))
        misses += _misses(*roc_simultaneous_band(scores, ALPHA), roc, roc_before)
    assert misses / REPETITIONS <= ALLOWED


def test_shape_and_bad_arguments():
    rng = np.random.default_rng(2)
    scores = AuditScores(rng.normal(1, 1, 500), rng.normal(0, 1, 700), higher_is_in=True)
    fpr, low, high = roc_simultaneous_band(scores, 0.05)
    assert fpr[0] == 0.0 and fpr[-1] == 1.0 and np.all(np.diff(fpr) > 0)
    assert np.all(np.diff(low) >= 0) and np.all(np.diff(high) >= 0)
    assert np.all((0.0 <= low) & (low <= high) & (high <= 1.0))
    # Flipping the polarity of the scores and of the rule gives the same band.
    flipped = roc_simultaneous_band(AuditScores(-scores.in_scores, -scores.out_scores, higher_is_in=False), 0.05)
    for mine, theirs in zip((fpr, low, high), flipped):
        np.testing.assert_array_equal(mine, theirs)
    # A smaller α widens the band everywhere (the same rank-fixed thresholds, wider intervals).
    grid = np.linspace(0.0, 1.0, 401)

    def at(steps, values):
        return values[np.searchsorted(steps, grid, side="right") - 1]

    fpr_wide, low_wide, high_wide = roc_simultaneous_band(scores, 0.001)
    assert np.all(at(fpr_wide, low_wide) <= at(fpr, low)) and np.all(at(fpr_wide, high_wide) >= at(fpr, high))
    assert np.mean(at(fpr_wide, high_wide) - at(fpr_wide, low_wide)) > np.mean(at(fpr, high) - at(fpr, low))
    for alpha in (0.0, 1.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="alpha"):
            roc_simultaneous_band(scores, alpha)
    with pytest.raises(ValueError, match="num_thresholds"):
        roc_simultaneous_band(scores, 0.05, num_thresholds=0)
    with pytest.raises(ValueError, match="scores"):
        roc_simultaneous_band([1.0, 2.0], 0.05)


@pytest.mark.parametrize("higher_is_in", [True, False])
def test_the_band_is_the_documented_bonferroni_construction(higher_is_in):
    # IN = {0, 1, 1, 2, 3, 3, 4}, OUT = {0, 1, 2, 2, 3}: ties within and across the sides; all 5 OUT ranks are
    # levels, so a = α / 20. The reference takes the Beta quantiles from scipy, independently of dpmech.verify.
    sign = 1.0 if higher_is_in else -1.0
    in_values, out_values = np.array([0, 1, 1, 2, 3, 3, 4.0]), np.array([0, 1, 2, 2, 3.0])
    alpha, n_in, n_out = 0.1, 7, 5
    a = alpha / (4 * n_out)
    cuts = np.sort(out_values)[::-1]  # c_k for k = 0..4
    above, at_or_above = (in_values > cuts[:, None]).sum(1), (in_values >= cuts[:, None]).sum(1)
    k = np.arange(n_out)
    strict_fpr_high = stats.beta.ppf(1 - a, k + 1, n_out - k)
    weak_fpr_low = stats.beta.ppf(a, k + 1, n_out - k)
    strict_tpr_low = np.where(above > 0, stats.beta.ppf(a, np.maximum(above, 1), n_in - above + 1), 0.0)
    weak_tpr_high = np.where(at_or_above < n_in, stats.beta.ppf(1 - a, at_or_above + 1, n_in - at_or_above), 1.0)
    # Evaluate away from every breakpoint, where the reference's and dpmech's quantiles (which differ by <= 3e-4
    # relative (documented ~1e-4), on the safe side) select the same thresholds.
    breaks = np.unique(np.r_[0.0, strict_fpr_high, weak_fpr_low, 1.0])
    f = (breaks[1:] + breaks[:-1]) / 2
    expected_low = np.max(np.where(strict_fpr_high <= f[:, None], strict_tpr_low, 0.0), axis=1)
    expected_high = np.min(np.where(weak_fpr_low >= f[:, None], weak_tpr_high, 1.0), axis=1)
    fpr, low, high = roc_simultaneous_band(AuditScores(sign * in_values, sign * out_values, higher_is_in=higher_is_in),
                                           alpha)
    step = np.searchsorted(fpr, f, side="right") - 1
    assert np.all(low[step] <= expected_low) and np.all(low[step] >= expected_low * (1 - 3e-4))
    assert np.all(high[step] >= expected_high) and np.all(high[step] <= expected_high * (1 + 3e-4))
    assert len(set(np.round(expected_low, 6))) > 2 and len(set(np.round(expected_high, 6))) > 2  # not trivial
