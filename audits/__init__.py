"""Audits: membership-inference metrics and empirical ε lower bounds, as pure functions of IN/OUT scores.

The statistics import :mod:`dpmech` (never the other way round), numpy and
scipy only. :mod:`audits.attacks` turns dpmech's mechanisms into IN/OUT scores,
:mod:`audits.report` writes JSON, Markdown, ``.npz`` and plots (matplotlib),
and :mod:`audits.cli` is the ``dpmech audit`` command (an entry-point plugin);
none of them is imported here.
Every estimator returns an :class:`AuditResult` whose ``valid_as`` says whether
``eps_lb`` is a certified lower bound (under the recorded ``assumption``) or an estimate.
"""

from .epsilon_bounds import epsilon_lower_bound
from .gdp import epsilon_from_gdp
from .intervals import clopper_pearson_lower, clopper_pearson_upper, jeffreys_upper
from .metrics import MiaMetrics, advantage, auc, mia_metrics, roc_curve, tpr_at_fpr
from .one_run import epsilon_one_run, one_run_p_value
from .result import CERTIFIED, ESTIMATE, AuditResult
from .scores import AuditScores
from .thresholds import THRESHOLD_STRATEGIES, rank_levels

__all__ = [
    "CERTIFIED",
    "ESTIMATE",
    "THRESHOLD_STRATEGIES",
    "AuditResult",
    "AuditScores",
    "MiaMetrics",
    "advantage",
    "auc",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "epsilon_from_gdp",
    "epsilon_lower_bound",
    "epsilon_one_run",
    "jeffreys_upper",
    "mia_metrics",
    "one_run_p_value",
    "rank_levels",
    "roc_curve",
    "tpr_at_fpr",
]
