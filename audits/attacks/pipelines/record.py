"""The record every pipeline audit returns, shaped for :func:`audits.report.write_report`."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from collections.abc import Iterator
from typing import Any, Mapping, Optional

import numpy as np

from dpmech import validation as check

from ...gdp import epsilon_from_gdp
from ...metrics import mia_metrics
from ...result import AuditResult, ReadsAuditResult
from ...scores import AuditScores
from ..threat_model import ThreatModel

# Pipeline audits sample releases in blocks of at most this many numbers, so that N releases
# never have to fit in memory at once (N = 10⁶ FedAUXfdp releases are 1.9·10⁸ numbers).
RELEASE_BLOCK_ELEMENTS = 1 << 22


@dataclass(frozen=True)
class PipelineAudit(ReadsAuditResult):
    """Outcome of auditing one trained seed pipeline.

    Attributes:
        pipeline: the pipeline's name.
        claim: what the claimed guarantee covers, in words.
        eps_claimed, delta: the claimed (ε, δ) (ε = ∞ where the pipeline has no guarantee).
        alpha: the significance the audit was run at.
        mu_claimed: the claimed GDP μ where the release is Gaussian, else None.
        mia: the membership-inference attack on natural records: name, AUC, TPR at 0.1% and 1%
            FPR, advantage.
        threat_model: what the auditor sees.
        measurements: further numbers (canary distance against the sensitivity bound, ...).
        notes: plain statements the reader must see.
        result: the full :class:`~audits.result.AuditResult` of the canary audit, if any; the
            properties ``eps_lb``, ``method``, ``valid_as`` and ``mu_lb`` are read from it
            (:class:`~audits.result.ReadsAuditResult`).
        scores: the canary IN/OUT scores (for the ROC plot), else the attack's.
        mia_scores: the membership-inference attack's IN/OUT scores where they are not ``scores``
            (None where ``mia`` is computed from ``scores``), so that reports plot every attack.
        release_checks: name -> record of each exact or certified check of the sampled releases
            against their own events (noise scale, displacement against the event's sensitivity,
            flip rate, ...); each record has a boolean ``violated`` or ``under_noised``.
    """

    pipeline: str
    claim: str
    eps_claimed: float
    delta: float
    alpha: float
    mu_claimed: Optional[float]
    mia: Mapping[str, Any]
    threat_model: ThreatModel
    measurements: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple = ()
    result: Optional[AuditResult] = None
    scores: Optional[AuditScores] = None
    release_checks: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    mia_scores: Optional[AuditScores] = None

    @property
    def violation(self) -> bool:
        """Whether the audit refutes the claim: a canary bound above the claimed ε, or a failed release check."""
        failed_check = any(record.get("violated", False) or record.get("under_noised", False)
                           for record in self.release_checks.values())
        return bool(self.eps_lb > self.eps_claimed or failed_check)

    def as_dict(self) -> dict:
        return {
            "pipeline": self.pipeline,
            "claim": self.claim,
            "eps_claimed": self.eps_claimed,
            "delta": self.delta,
            "eps_lb": self.eps_lb,
            "method": self.method,
            "valid_as": self.valid_as,
            "alpha": self.alpha,
            "mu_claimed": self.mu_claimed,
            "mu_lb": self.mu_lb,
            "mia": dict(self.mia),
            "metrics": {key: value for key, value in self.mia.items() if key != "attack"},
            "result": self.result.as_dict() if self.result is not None else None,
            "threat_model": dataclasses.asdict(self.threat_model),
            "measurements": dict(self.measurements),
            "notes": list(self.notes),
            "assumption": self.result.assumption if self.result is not None else "",
            "release_checks": {name: dict(record) for name, record in self.release_checks.items()},
            "violation": self.violation,
        }


def mia_summary(attack: str, scores: AuditScores) -> dict:
    """AUC, TPR at 0.1% and 1% FPR and advantage of an attack's IN/OUT scores."""
    return {"attack": attack, **dataclasses.asdict(mia_metrics(scores))}


def audit_inputs(config, config_class, seed, trials, minimum_trials: int):
    """The validated ``(config, seed, trials)`` every pipeline audit starts from.

    ``config`` defaults to ``config_class()`` and must be an instance of it.
    """
    config = config_class() if config is None else config
    if not isinstance(config, config_class):
        raise ValueError(f"config must be a {config_class.__name__} (got {type(config).__name__})")
    return config, check.integer_scalar("seed", seed, 0), check.integer_scalar("trials", trials, minimum_trials)


def reused_result(result, pipeline_name: str, config, seed: int, unreleased_fields=()):
    """``result`` if it is the PipelineResult of pipeline ``pipeline_name`` run with ``config`` and
    ``seed``; ValueError otherwise. ``unreleased_fields`` (e.g. accuracy baselines, which release
    nothing) may differ between the run and the audit's config."""
    def released(settings):
        return {name: value for name, value in dict(settings).items() if name not in unreleased_fields}

    if (getattr(result, "pipeline", None) != pipeline_name or getattr(result, "seed", None) != seed
            or released(result.config) != released(dataclasses.asdict(config))):
        raise ValueError(f"result must be the PipelineResult of the {pipeline_name} pipeline run with this config "
                         f"and seed")
    return result


def audit_generator(seed: int, stream: int) -> np.random.Generator:
    """The audit's own random stream ``SeedSequence([seed, stream])``, independent of the pipeline's draws."""
    return np.random.default_rng(np.random.SeedSequence([seed, stream]))


def projected_scores(out_releases, in_releases, centre_without, centre_with) -> AuditScores:
    """IN/OUT scores of sampled releases (R, ...) projected on the unit direction from ``centre_without`` to ``centre_with``.

    For releases that add isotropic Gaussian noise of scale 1 (whitened) this is the Neyman–Pearson
    statistic of the two worlds (:mod:`audits.attacks.gaussian_output`); higher means IN. Each
    release is an independent draw of the release step, so the scores are independent trials.
    Either side may also be an iterator of such arrays (blocks of releases, projected one at a
    time and concatenated in order), so that N releases never have to be held at once.
    """
    difference = (np.asarray(centre_with, dtype=float) - np.asarray(centre_without, dtype=float)).ravel()
    distance = float(np.linalg.norm(difference))
    if distance == 0.0:
        raise ValueError("centre_with must differ from centre_without (their L2 distance is 0)")
    direction = difference / distance

    def project_block(releases):
        releases = np.asarray(releases, dtype=float)
        return (releases.reshape(releases.shape[0], -1) - np.ravel(centre_without)) @ direction

    def project(releases):
        if isinstance(releases, Iterator):
            return np.concatenate([project_block(block) for block in releases])
        return project_block(releases)

    # OUT first: iterators that draw their releases lazily then draw every OUT release before any IN one.
    out_scores = project(out_releases)
    return AuditScores(project(in_releases), out_scores, higher_is_in=True, trials="independent")


def gdp_bound_at_midpoint(scores: AuditScores, distance: float, *, alpha: float, delta: float) -> AuditResult:
    """The GDP bound (Nasr et al. 2023) of ONE rule fixed before any release is drawn: "IN if score > d/2".

    ``scores`` are :func:`projected_scores` of two worlds whose centres are ``distance`` = d apart
    in the projection's units, so OUT centres on 0 and IN on d. For isotropic Gaussian releases
    the two error rates at d/2 are both Φ(−μ/2), where the confidence width of
    μ(t) = Φ⁻¹(1 − FPR_ub) − Φ⁻¹(FNR_ub) is smallest (:mod:`audits.thresholds`). The rule
    depends only on the two trained worlds, which are fixed before the releases are drawn, so it
    is the "explicit" strategy with one threshold and one direction (the projection points from
    OUT to IN by construction): α is spent on two Clopper–Pearson bounds, a = α/2, instead of
    the scanned ranks' 2·|K|·2 hypotheses (a ≈ α/200 at |K| <= 50 levels, both directions). With N
    releases per side each rate's Φ⁻¹ has standard deviation ≈ √(¼/N)/φ(0) = 1.25/√N, so μ_lb
    sits about 2·z·1.25/√N below μ, z the normal quantile at 1 − a: 6.0/√N at α = 0.05/3
    (measured 6.2/√N over 12 draws at μ = 0.16, N = 10⁴–10⁶), against 9.0/√N measured for the scan.
    ``eps_lb`` holds only under the GDP-shape assumption (:func:`audits.gdp.epsilon_from_gdp`).
    """
    distance = float(check.positive("distance", distance))
    return epsilon_from_gdp(scores, alpha=alpha, delta=delta, threshold_strategy="explicit",
                            thresholds=np.array([0.5 * distance]), two_sided=False)


def displacement_check(parameters_without, parameters_with, event_sensitivity) -> dict:
    """Exact check that two neighbouring worlds' noiseless parameters are within the sensitivity the release's event states."""
    displacement = float(np.linalg.norm(np.asarray(parameters_with, dtype=float) - np.asarray(parameters_without, dtype=float)))
    return {
        "displacement": displacement,
        "event_sensitivity": float(event_sensitivity),
        "fraction": displacement / float(event_sensitivity),
        "violated": bool(displacement > float(event_sensitivity)),
        "valid_as": "exact",
    }
