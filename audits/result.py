"""The record every ε estimator in :mod:`audits` returns."""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Mapping

CERTIFIED = "certified"
ESTIMATE = "estimate"
# The estimators a report of a user's own scores offers (audits.report.audit_scores_report, `dpmech audit
# scores`), and the ε margin above the claim at which its "not detected" verdict states the test's power.
SCORES_ESTIMATORS = ("clopper-pearson", "gdp")
DEFAULT_POWER_MARGIN = 0.5


@dataclasses.dataclass(frozen=True)
class AuditResult:
    """An empirical ε lower bound and everything needed to interpret it.

    Attributes:
        eps_lb: the lower bound on ε (>= 0) at the given δ.
        delta: the δ at which ε is bounded.
        alpha: significance: if ``valid_as == "certified"`` and the assumption
            holds, P[eps_lb > true ε] <= alpha.
        method: the estimator ("clopper-pearson", "jeffreys", "gdp", "one-run").
        thresholds: the decision threshold(s) that produced ``eps_lb``, in the
            caller's score units (see ``decision_rule``).
        counts: the counts behind ``eps_lb`` (TP/FP/TN/FN, or guesses/correct/canaries).
        assumption: what must hold for ``eps_lb`` to be valid as labelled.
        valid_as: "certified" (a high-confidence lower bound under
            ``assumption``) or "estimate" (no coverage guarantee).
        threshold_strategy: "bonferroni", "split", "explicit" or "uncorrected".
        decision_rule: the attack's rule in words, e.g. "IN if score > t".
        num_hypotheses: the number of events α was divided over.
        mu_lb: the GDP μ lower bound (GDP estimator only, else None).
    """

    eps_lb: float
    delta: float
    alpha: float
    method: str
    thresholds: tuple
    counts: Mapping[str, int]
    assumption: str
    valid_as: str
    threshold_strategy: str
    decision_rule: str
    num_hypotheses: int
    mu_lb: float | None = None

    def __post_init__(self):
        if self.valid_as not in (CERTIFIED, ESTIMATE):
            raise ValueError(f"valid_as must be 'certified' or 'estimate' (got {self.valid_as!r})")
        object.__setattr__(self, "counts", types.MappingProxyType(dict(self.counts)))
        object.__setattr__(self, "thresholds", tuple(float(t) for t in self.thresholds))

    def as_dict(self) -> dict:
        """Plain-Python copy of every field, for JSON reports."""
        out = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        out["counts"] = dict(self.counts)
        out["thresholds"] = list(self.thresholds)
        return out


class ReadsAuditResult:
    """The bound and its labels of a record that holds its estimator's :class:`AuditResult` as ``result``.

    One source for them: a record never restates them. Where ``result`` is None (no canary audit
    applies) the record reads ε_lb = 0, method "none", valid as an estimate, no μ bound.
    """

    result: AuditResult | None

    @property
    def eps_lb(self) -> float:
        """The lower bound on ε at the record's δ; 0 where there is no result."""
        return self.result.eps_lb if self.result is not None else 0.0

    @property
    def method(self) -> str:
        """The estimator; "none" where there is no result."""
        return self.result.method if self.result is not None else "none"

    @property
    def valid_as(self) -> str:
        """How far ``eps_lb`` can be trusted (see ``result.assumption``); "estimate" where there is no result."""
        return self.result.valid_as if self.result is not None else ESTIMATE

    @property
    def mu_lb(self) -> float | None:
        """The GDP μ lower bound where the estimator is the GDP one, else None."""
        return self.result.mu_lb if self.result is not None else None
