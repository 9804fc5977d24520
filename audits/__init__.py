"""Audits: membership-inference metrics and empirical ε lower bounds, as pure functions of IN/OUT scores.

The statistics import :mod:`dpmech` (never the other way round), numpy and
scipy only. :mod:`audits.attacks` turns dpmech's mechanisms into IN/OUT scores,
and :mod:`audits.report` writes JSON, Markdown, ``.npz`` and plots (matplotlib);
neither is imported here. The ``dpmech audit`` command is the application's (:mod:`app.audit_command`).
Every estimator returns an :class:`AuditResult` whose ``valid_as`` says whether
``eps_lb`` is a certified lower bound (under the recorded ``assumption``) or an estimate.
Only scores declared ``AuditScores(..., trials="independent")`` (randomised,
independent IN/OUT trials) can give a certified bound; the default,
``trials="natural"``, labels every ε an estimate. Where the community's tools
differ in convention, each is a named option: ``convention="hull"`` for
jax_privacy's ROC-hull AUC and TPR, ``complement`` / ``two_sided`` for the
tested inequalities, ``guess_rules="hull"`` and ``analysis="f-dp"`` for the
one-run audit, :func:`epsilon_raw_counts` and :mod:`audits.ratio_bounds`
(TF-Privacy) for point estimates.
"""

from dpmech.lazy_exports import lazy_exports

# Public name -> defining module. Loaded on first use (PEP 562), so that the
# ``dpmech audit`` plugin can register its subcommand without importing
# scipy.stats for every other dpmech command.
_EXPORTS = {
    "epsilon_lower_bound": "epsilon_bounds",
    "epsilon_from_error_rates": "epsilon_bounds",
    "epsilon_raw_counts": "epsilon_bounds",
    "epsilon_ratio_bounds": "ratio_bounds",
    "ratio_lower_bound": "ratio_bounds",
    "fpr_resolution": "metrics",
    "max_accuracy": "metrics",
    "roc_counts": "metrics",
    "epsilon_from_gdp": "gdp",
    "clopper_pearson_lower": "intervals",
    "clopper_pearson_upper": "intervals",
    "jeffreys_upper": "intervals",
    "MiaMetrics": "metrics",
    "advantage": "metrics",
    "auc": "metrics",
    "mia_metrics": "metrics",
    "roc_curve": "metrics",
    "tpr_at_fpr": "metrics",
    "epsilon_one_run": "one_run",
    "one_run_p_value": "one_run",
    "CERTIFIED": "result",
    "ESTIMATE": "result",
    "AuditResult": "result",
    "AuditScores": "scores",
    "THRESHOLD_STRATEGIES": "thresholds",
    "rank_levels": "thresholds",
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


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
    "epsilon_from_error_rates",
    "epsilon_from_gdp",
    "epsilon_lower_bound",
    "epsilon_one_run",
    "epsilon_ratio_bounds",
    "epsilon_raw_counts",
    "fpr_resolution",
    "jeffreys_upper",
    "max_accuracy",
    "mia_metrics",
    "one_run_p_value",
    "rank_levels",
    "ratio_lower_bound",
    "roc_counts",
    "roc_curve",
    "tpr_at_fpr",
]
