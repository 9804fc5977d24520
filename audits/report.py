r"""Audit reports: JSON (every field), Markdown summary, ``.npz`` of the raw scores, log-log ROC plot.

Works on any audit record with ``as_dict()``, ``scores``
(:class:`~audits.scores.AuditScores`), ``eps_claimed`` and ``delta``
(:class:`audits.attacks.GaussianOutputAudit`,
:class:`audits.attacks.LabelRandomizedResponseAudit`).

The ROC is drawn on log-log axes over FPR in [1e-5, 1] as in Carlini et al.
2022 (``mi_lira_2021/plot.py``), with the boundary of the region every
(ε, δ)-DP mechanism must stay in (Kairouz, Oh & Viswanath 2015),

.. math::  \mathrm{TPR} \le \min\big(e^{\varepsilon}\mathrm{FPR} + \delta,\; 1 - e^{-\varepsilon}(1 - \delta - \mathrm{FPR})\big),

at the claimed (ε, δ), and, when the record has ``mu_claimed`` / ``mu_lb``,
the GDP curves TPR = Φ(μ − Φ⁻¹(1 − FPR)) (Dong, Roth & Su) at those μ.
Points of the empirical ROC with FPR or TPR equal to 0 cannot be drawn on
log axes and are left out of the plot (not of the JSON).
"""

from __future__ import annotations

import json
import math
import pathlib

import numpy as np
from scipy import special

from dpmech.directed_rounding import format_down, format_up
from dpmech.json_values import json_ready

from .metrics import roc_curve

JSON_NAME = "audit.json"
MARKDOWN_NAME = "audit.md"
SCORES_NAME = "scores.npz"
ROC_NAME = "roc.png"
_SUMMARY_FIELDS = ("eps_claimed", "eps_lb", "delta", "mu_claimed", "mu_actual", "mu_lb", "method", "valid_as", "alpha")


def privacy_region_boundary(fpr, epsilon, delta):
    """Largest TPR an (ε, δ)-DP mechanism allows at each FPR (Kairouz, Oh & Viswanath 2015)."""
    fpr = np.asarray(fpr, dtype=float)
    return np.clip(np.minimum(np.exp(epsilon) * fpr + delta, 1.0 - np.exp(-epsilon) * (1.0 - delta - fpr)), 0.0, 1.0)


def gdp_roc(fpr, mu):
    """TPR = Φ(μ − Φ⁻¹(1 − FPR)) of the optimal test against a μ-GDP mechanism."""
    return special.ndtr(mu - special.ndtri(1.0 - np.asarray(fpr, dtype=float)))


# Lower bounds print rounded down, claims and δ rounded up (dpmech.directed_rounding).
_ROUNDED_DOWN = ("eps_lb", "mu_lb", "mu_actual")


def _safe_text(name: str, value) -> str:
    if not isinstance(value, float):
        return str(value)
    return format_down(value, 6) if name in _ROUNDED_DOWN else format_up(value, 6)


def _markdown(record: dict, title: str) -> str:
    lines = [f"# {title}", "", "| quantity | value |", "|---|---|"]
    for name in _SUMMARY_FIELDS:
        if name in record:
            value = record[name]
            lines.append(f"| {name} | {_safe_text(name, value)} |")
    threat = record["threat_model"]
    lines += ["", "## Threat model", ""]
    lines += [f"- {key}: {value}" for key, value in threat.items() if value is not None]
    lines += ["", "## Attack metrics", ""]
    lines += [f"- {key}: {value:.6g}" for key, value in record["metrics"].items()]
    result = record["result"]
    if result is not None:
        lines += ["", "## Estimator", ""]
        for key in ("method", "threshold_strategy", "decision_rule", "num_hypotheses", "thresholds", "counts"):
            lines.append(f"- {key}: {result[key]}")
        lines += ["", f"Assumption: {result['assumption']}"]
    if "seed" in record:
        lines += ["", f"Seed: {record['seed']} ({record.get('seed_derivation', '')})"]
    return "\n".join(lines) + "\n"


def _roc_plot(path: pathlib.Path, audit, title: str) -> None:
    # The Agg canvas is attached to this figure only; pyplot's global backend is left alone.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fpr, tpr, _ = roc_curve(audit.scores)
    grid = np.geomspace(1e-5, 1.0, 400)
    figure = Figure(figsize=(5.0, 5.0))
    FigureCanvasAgg(figure)
    axes = figure.subplots()
    drawable = (fpr > 0) & (tpr > 0)
    axes.plot(fpr[drawable], tpr[drawable], label="attack ROC", color="C0")
    axes.plot(grid, grid, linestyle=":", color="grey", label="random guess")
    if math.isfinite(audit.eps_claimed):
        axes.plot(grid, privacy_region_boundary(grid, audit.eps_claimed, audit.delta), color="C3",
                  label=f"claimed (ε={audit.eps_claimed:.3g}, δ={audit.delta:.3g}) boundary")
    if getattr(audit, "mu_claimed", None) is not None:
        axes.plot(grid, gdp_roc(grid, audit.mu_claimed), linestyle="--", color="C2",
                  label=f"claimed GDP μ={audit.mu_claimed:.3g}")
    if getattr(audit, "mu_lb", None):
        axes.plot(grid, gdp_roc(grid, audit.mu_lb), linestyle="-.", color="C1", label=f"GDP μ_lb={audit.mu_lb:.3g}")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlim(1e-5, 1.0)
    axes.set_ylim(1e-5, 1.0)
    axes.set_xlabel("false positive rate")
    axes.set_ylabel("true positive rate")
    axes.set_title(title, fontsize="small", wrap=True)
    axes.legend(loc="lower right", fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def write_report(audit, directory, *, title: str, extra: dict | None = None) -> dict:
    """Write ``audit.json``, ``audit.md``, ``scores.npz`` and ``roc.png`` into ``directory`` (created if missing).

    Args:
        audit: an audit record (see the module docstring).
        directory: output folder.
        title: heading of the Markdown summary and the plot.
        extra: more JSON fields to store with the record, e.g. the seeds.

    Returns:
        {"json", "markdown", "scores", "roc"}: the paths written.
    """
    missing = [name for name in ("as_dict", "scores", "threat_model", "eps_claimed", "delta") if not hasattr(audit, name)]
    if missing:
        raise ValueError(
            f"audit must be an audit record with scores and a threat model (GaussianOutputAudit, "
            f"LabelRandomizedResponseAudit, a pipeline audit); got {type(audit).__name__} without "
            f"{', '.join(missing)} (an AuditResult is the estimator inside one: write its as_dict() as JSON)"
        )
    if not isinstance(title, str) or not title:
        raise ValueError(f"title must be a non-empty string (got {title!r})")
    if not isinstance(directory, (str, pathlib.Path)) or not str(directory).strip():
        raise ValueError(f"directory must be a non-empty folder path (got {directory!r})")
    folder = pathlib.Path(directory)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"out must be a directory (got the file {str(folder)!r})")
    folder.mkdir(parents=True, exist_ok=True)
    record = json_ready({**audit.as_dict(), **(extra or {})})
    paths = {
        "json": folder / JSON_NAME,
        "markdown": folder / MARKDOWN_NAME,
        "scores": folder / SCORES_NAME,
        "roc": folder / ROC_NAME,
    }
    paths["json"].write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    paths["markdown"].write_text(_markdown(record, title), encoding="utf-8")
    np.savez(paths["scores"], in_scores=audit.scores.in_scores, out_scores=audit.scores.out_scores,
             higher_is_in=audit.scores.higher_is_in, trials=audit.scores.trials)
    _roc_plot(paths["roc"], audit, title)
    return paths
