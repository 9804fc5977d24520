r"""Audit reports: JSON (every field), Markdown summary, ``.npz`` of the raw scores, ROC plot.

Works on any audit record with ``as_dict()``, ``scores``
(:class:`~audits.scores.AuditScores`), ``threat_model``, ``eps_claimed`` and ``delta``
(:class:`audits.attacks.GaussianOutputAudit`,
:class:`audits.attacks.LabelRandomizedResponseAudit`, the pipeline audits'
:class:`~audits.attacks.pipelines.record.PipelineAudit`, and :class:`ScoresAudit`,
the audit of a user's own IN/OUT scores made by :func:`audit_scores_report`).

Numbers. ε and δ print to :data:`DIGITS` significant digits on their safe side
(:mod:`dpmech.directed_rounding`): claims and δ rounded up, lower bounds rounded
down; a positive δ never prints as 0. TPR at an FPR below the resolution 1/n_out
of the OUT sample is the TPR at FPR = 0, not a measurement at that FPR, and prints
"n/a (resolution 1/n_out)" (:func:`tpr_text`).

JSON. JSON has no ∞: every non-finite number is written as ``null`` and named in the
top-level ``non_finite`` object, JSON pointer (RFC 6901) -> "inf", "-inf" or "nan"
(:func:`json_record`), so ``null`` keeps meaning "absent" everywhere else.

ROC plot. One curve per attack the report states (the canary and, where it uses other
scores, the membership-inference attack), AUC in the legend, each with a simultaneous
Clopper–Pearson band for its true ROC (:func:`roc_simultaneous_band`; :func:`roc_band`
gives pointwise boxes), on linear and on log-log axes (log-log over
FPR down to the resolution, as in Carlini et al. 2022, ``mi_lira_2021/plot.py``),
with the boundary of the region every (ε, δ)-DP mechanism stays in (Kairouz, Oh &
Viswanath 2015),

.. math::  \mathrm{TPR} \le \min\big(e^{\varepsilon}\mathrm{FPR} + \delta,\; 1 - e^{-\varepsilon}(1 - \delta - \mathrm{FPR})\big),

at the claimed (ε, δ), and, when the record has ``mu_claimed`` / ``mu_lb``, the
GDP curves TPR = Φ(μ − Φ⁻¹(1 − FPR)) (Dong, Roth & Su 2022) at those μ. Points
with FPR or TPR equal to 0 cannot be drawn on log axes and are left out of the
log-log panel (not of the JSON).
"""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib

import numpy as np
from scipy import special

from dpmech import validation as check
# The report's number texts live with the rounding they apply (re-exported here for the audits' users).
from dpmech.directed_rounding import REPORT_DIGITS as DIGITS
from dpmech.directed_rounding import delta_text, epsilon_text, format_down, format_up, lower_bound_text
from dpmech.json_values import json_ready
from dpmech.statistics import clopper_pearson_lower, clopper_pearson_upper

from . import _arguments as arg
from .result import CERTIFIED, DEFAULT_POWER_MARGIN, ESTIMATE, SCORES_ESTIMATORS, AuditResult, ReadsAuditResult
from .epsilon_bounds import privacy_region_boundary
from .scores import AuditScores
from .metrics import REPORTED_FPRS, auc, mia_metrics, roc_counts
from .thresholds import level_candidates, rank_levels, sorted_sides

JSON_NAME = "audit.json"
MARKDOWN_NAME = "audit.md"
SCORES_NAME = "scores.npz"
ROC_NAME = "roc.png"
_SUMMARY_FIELDS = ("eps_claimed", "eps_lb", "delta", "mu_claimed", "mu_actual", "mu_lb", "method", "valid_as", "alpha")
# Lower bounds print rounded down; claims, δ and the noise actually calibrated rounded up.
_ROUNDED_DOWN = ("eps_lb", "mu_lb", "mu_actual")
# The band's points: enough for a smooth outline, few enough to keep the Clopper–Pearson quantiles cheap.
_BAND_POINTS = 400
# Characters per line of a ROC legend entry: a column of the two-column legend holds about 70 at "small".
_LEGEND_WIDTH = 60

__all__ = [
    "ScoresAudit", "audit_scores_report", "delta_text", "epsilon_text", "gdp_roc", "json_ready", "json_record",
    "lower_bound_text", "privacy_region_boundary", "roc_band", "roc_curves", "roc_figure", "roc_simultaneous_band", "tpr_text",
    "write_report",
]


def gdp_roc(fpr, mu):
    """TPR = Φ(μ − Φ⁻¹(1 − FPR)) of the optimal test against a μ-GDP mechanism."""
    return special.ndtr(mu - special.ndtri(1.0 - np.asarray(fpr, dtype=float)))


def tpr_text(tpr: float, fpr: float, num_out: int) -> str:
    """TPR at ``fpr`` for a report, or "n/a (resolution 1/n_out)" when ``fpr`` < 1/n_out.

    Below the resolution no threshold rule has a positive FPR at most ``fpr``, so the number is
    the TPR at FPR = 0, not a measurement at ``fpr``.
    """
    num_out = check.integer_scalar("num_out", num_out, 1)
    if fpr * num_out < 1.0:
        return f"n/a (resolution 1/{num_out})"
    return f"{tpr:.4f}"


def _json_pointer_part(key) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def json_record(record: dict) -> dict:
    """``record`` as plain JSON: non-finite floats as ``null``, each named in ``non_finite`` (pointer -> "inf", ...).

    Everything else as :func:`dpmech.json_values.json_ready` makes it (numpy values to Python,
    tuples and arrays to lists). The added top-level key ``non_finite`` is always present.
    """
    if not isinstance(record, dict):
        raise ValueError(f"record must be a dict (got {type(record).__name__})")
    non_finite = {}

    def convert(value, pointer: str):
        if isinstance(value, dict):
            return {str(key): convert(item, f"{pointer}/{_json_pointer_part(key)}") for key, item in value.items()}
        if isinstance(value, np.ndarray):
            value = value.tolist()
        if isinstance(value, (list, tuple)):
            return [convert(item, f"{pointer}/{index}") for index, item in enumerate(value)]
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            non_finite[pointer] = str(value)
            return None
        return value

    converted = convert({key: value for key, value in record.items() if key != "non_finite"}, "")
    converted["non_finite"] = non_finite
    return converted


def roc_curves(audit) -> list:
    """[(label, scores)] of every attack an audit record reports: its canary scores, then its MIA's where they differ."""
    mia = getattr(audit, "mia", None) or {}
    attack = mia.get("attack") if isinstance(mia, dict) or hasattr(mia, "get") else None
    other = getattr(audit, "mia_scores", None)
    method = getattr(audit, "method", "")
    if other is None or other is audit.scores:
        label = attack or getattr(audit, "attack", None) or f"canary ({method})"
        return [(label, audit.scores)]
    return [(f"canary ({method})", audit.scores), (attack or "membership inference", other)]


def _spread(size: int, points: int) -> np.ndarray:
    """At most ``points`` sorted indices into ``size`` ROC points: 4/5 evenly spaced, 1/5 geometrically (the low FPRs of a log axis)."""
    even = np.linspace(0, size - 1, min(size, points - points // 5)).astype(int)
    geometric = np.geomspace(1, size, min(size, points // 5)).astype(int) - 1
    return np.unique(np.r_[even, geometric])


def roc_band(scores, alpha: float, points: int = _BAND_POINTS):
    """Pointwise (1 − α) Clopper–Pearson box around ROC points: (fpr_low, fpr_high, tpr_low, tpr_high).

    At each of at most ``points`` ROC points (spread evenly over the curve) the FPR and the TPR get
    two-sided Clopper–Pearson intervals at α/2 each (α/4 per side, :mod:`dpmech.verify`), so the
    box holds the rule's true (FPR, TPR) with probability >= 1 − α for a threshold fixed in advance.
    The outline through the pessimistic corners (FPR high, TPR low) and the optimistic ones
    (FPR low, TPR high) is the band drawn. Pointwise: not simultaneous over the curve.
    """
    alpha = float(check.open_unit_interval("alpha", alpha))
    counts = roc_counts(scores)
    chosen = _spread(counts.false_positives.size, points)
    fp = counts.false_positives[chosen]
    tp = counts.true_positives[chosen]
    level = alpha / 4.0
    if level == 0.0:  # α/4 underflows: the interval at level 0 is all of [0, 1]
        return np.zeros(fp.shape), np.ones(fp.shape), np.zeros(tp.shape), np.ones(tp.shape)
    return (np.asarray(clopper_pearson_lower(fp, counts.num_out, level), dtype=float),
            np.asarray(clopper_pearson_upper(fp, counts.num_out, level), dtype=float),
            np.asarray(clopper_pearson_lower(tp, counts.num_in, level), dtype=float),
            np.asarray(clopper_pearson_upper(tp, counts.num_in, level), dtype=float))


def roc_simultaneous_band(scores, alpha: float, num_thresholds: int = _BAND_POINTS):
    """A band holding the true ROC at every FPR at once, with probability >= 1 − α: (fpr, tpr_low, tpr_high).

    The true ROC is R(f) = the largest TPR of a deterministic threshold rule ("IN if score > t" or
    ">= t", any t) with FPR <= f. The thresholds are fixed by OUT rank, as in
    :mod:`audits.thresholds`: c_k = the (k + 1)-th largest OUT score for k in
    :func:`audits.thresholds.rank_levels` (n_out, ``num_thresholds``), a function of n_out only. With
    a = α / (4 K), K the number of levels, each of these holds with probability >= 1 − a:

    * FPR(> c_k) <= CP_up(k, n_out, a) and FPR(>= c_k) >= CP_low(k + 1, n_out, a): with
      continuous scores both rates equal the (k + 1)-th smallest of n_out uniforms,
      Beta(k + 1, n_out − k); ties only lower the first and raise the second;
    * TPR(> c_k) >= CP_low(#{IN > c_k}, n_in, a) and TPR(>= c_k) <= CP_up(#{IN >= c_k}, n_in, a):
      c_k depends on the OUT scores only, so given it the IN counts are binomial.

    By the union bound all 4 K hold at once with probability >= 1 − α, and then, R being
    nondecreasing and the rules nested, R(f) >= TPR_low_k for f >= FPR_up_k and R(f) <= TPR_up_k for
    f <= FPR_low_k: a simultaneous (Bonferroni) band, not a pointwise one. It assumes independent
    draws of the IN and the OUT scores (``trials="independent"``); for natural members and
    non-members of one model it is only indicative.

    Returns:
        Step functions on ``fpr`` (increasing, from 0 to 1): for f in [fpr[i], fpr[i + 1]),
        tpr_low[i] <= R(f) <= tpr_high[i] (at the last point, f = 1).
    """
    alpha = float(check.open_unit_interval("alpha", alpha))
    num_thresholds = check.integer_scalar("num_thresholds", num_thresholds, 1)
    scores = arg.audit_scores(scores)
    n_in, n_out = scores.num_in, scores.num_out
    levels = rank_levels(n_out, num_thresholds)
    level = alpha / (4.0 * levels.size)
    if level == 0.0:  # α/(4K) underflows: every bound at level 0 is trivial
        return np.array([0.0, 1.0]), np.array([0.0, 1.0]), np.array([1.0, 1.0])
    in_sorted, out_sorted = sorted_sides(scores)
    cuts, _, in_at_or_below = level_candidates(in_sorted, out_sorted, levels)
    in_above = n_in - in_at_or_below
    in_at_or_above = n_in - np.searchsorted(in_sorted, cuts, side="left")
    strict_fpr_high = np.asarray(clopper_pearson_upper(levels, n_out, level), dtype=float)
    weak_fpr_low = np.asarray(clopper_pearson_lower(levels + 1, n_out, level), dtype=float)
    strict_tpr_low = np.asarray(clopper_pearson_lower(in_above, n_in, level), dtype=float)
    weak_tpr_high = np.asarray(clopper_pearson_upper(in_at_or_above, n_in, level), dtype=float)
    fpr = np.unique(np.r_[0.0, strict_fpr_high, weak_fpr_low, 1.0])
    # The lower bound is right-continuous in f: exact on each [fpr[i], fpr[i + 1]).
    tpr_low = np.max(np.where(strict_fpr_high <= fpr[:, None], strict_tpr_low, 0.0), axis=1)
    # The upper bound min{TPR_up_k : FPR_low_k >= f} is left-continuous and nondecreasing, so on
    # [fpr[i], fpr[i + 1]) it is at most its value at fpr[i + 1].
    upper_at = np.min(np.where(weak_fpr_low >= fpr[:, None], weak_tpr_high, 1.0), axis=1)
    tpr_high = np.r_[upper_at[1:], 1.0]
    tpr_low[-1] = 1.0  # R(1) = 1: the rule "always IN"
    return fpr, tpr_low, tpr_high


def _safe_text(name: str, value) -> str:
    if not isinstance(value, float):
        return "∞" if value is None and name == "eps_claimed" else str(value)
    if name == "delta":
        return delta_text(value)
    return lower_bound_text(value) if name in _ROUNDED_DOWN else epsilon_text(value)


def _metric_lines(metrics: dict) -> list:
    num_out = round(1.0 / metrics["fpr_resolution"])
    lines = [f"- AUC: {metrics['auc']:.4f}"]
    for fpr, key in zip(REPORTED_FPRS, ("tpr_at_0_1_percent_fpr", "tpr_at_1_percent_fpr")):
        lines.append(f"- TPR at {fpr * 100:g}% FPR: {tpr_text(metrics[key], fpr, num_out)}")
    lines.append(f"- advantage (max TPR − FPR): {metrics['advantage']:.4f}")
    lines.append(f"- OUT scores: {num_out} (FPR resolution 1/{num_out})")
    return lines


def _markdown(record: dict, title: str) -> str:
    lines = [f"# {title}", "", "| quantity | value |", "|---|---|"]
    for name in _SUMMARY_FIELDS:
        if name in record and (record[name] is not None or name == "eps_claimed"):
            label = f" ({record['eps_lb_label']})" if name == "eps_lb" and record.get("eps_lb_label") else ""
            lines.append(f"| {name} | {_safe_text(name, record[name])}{label} |")
    if record.get("verdict_text"):
        lines += ["", "## Verdict", "", record["verdict_text"]]
    threat = record["threat_model"]
    lines += ["", "## Threat model", ""]
    lines += [f"- {key}: {value}" for key, value in threat.items() if value is not None]
    lines += ["", "## Attack metrics", ""]
    attack = (record.get("mia") or {}).get("attack")
    if attack:
        lines += [f"Attack: {attack}.", ""]
    lines += _metric_lines(record["metrics"])
    result = record["result"]
    if result is not None:
        lines += ["", "## Estimator", ""]
        for key in ("method", "threshold_strategy", "decision_rule", "num_hypotheses", "thresholds", "counts"):
            lines.append(f"- {key}: {result[key]}")
        lines += ["", f"Assumption: {result['assumption']}"]
    notes = list(dict.fromkeys(record.get("notes") or ()))
    if notes:
        lines += ["", "## Notes", ""] + [f"- {note}" for note in notes]
    if "seed" in record:
        derivation = record.get("seed_derivation")
        lines += ["", f"Seed: {record['seed']}" + (f" ({derivation})" if derivation else "") + "."]
    return "\n".join(lines) + "\n"


def _roc_plot(path: pathlib.Path, audit, title: str, alpha: float) -> None:
    roc_figure(audit, title, alpha).savefig(path, dpi=110)


def _legend_rows(labels: list, columns: int) -> int:
    """Text lines of a column-major legend: each row is as tall as its tallest entry."""
    per_column = math.ceil(len(labels) / columns)
    heights = [label.count("\n") + 1 for label in labels]
    return sum(max(heights[row::per_column]) for row in range(per_column))


def roc_figure(audit, title: str, alpha: float):
    """The ROC plot (module docstring) as a matplotlib Figure on an Agg canvas; legend labels longer
    than :data:`_LEGEND_WIDTH` characters wrap onto more lines, so none runs past the figure's edge."""
    # The Agg canvas is attached to this figure only; pyplot's global backend is left alone.
    import textwrap

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    curves = roc_curves(audit)
    largest = max(max(scores.num_in, scores.num_out) for _, scores in curves)
    floor = max(1e-5, 10.0 ** math.floor(math.log10(0.5 / largest)))
    grid = np.geomspace(floor, 1.0, 400)
    figure = Figure(figsize=(10.0, 6.0))
    FigureCanvasAgg(figure)
    linear, logarithmic = figure.subplots(1, 2)
    for index, (label, scores) in enumerate(curves):
        counts = roc_counts(scores)
        # Drawn through at most 2,500 of its corners (_spread).
        drawn = _spread(counts.false_positives.size, 2500)
        fpr = counts.false_positives[drawn] / counts.num_out
        tpr = counts.true_positives[drawn] / counts.num_in
        band_x, band_low, band_high = roc_simultaneous_band(scores, alpha)
        colour = f"C{index}"
        curve_label = f"{label} (AUC {auc(scores):.3f}, {counts.num_in} IN / {counts.num_out} OUT)"
        band_label = f"shaded: simultaneous {1 - alpha:.0%} Clopper–Pearson band (Bonferroni)" if index == 0 else None
        for axes, low in ((linear, 0.0), (logarithmic, floor)):
            axes.fill_between(np.maximum(band_x, low), np.maximum(band_low, low), np.maximum(band_high, low),
                              step="post", color=colour, alpha=0.18, linewidth=0,
                              label=band_label if axes is linear else None)
            shown = (fpr > 0) & (tpr > 0) if low > 0 else slice(None)
            axes.plot(fpr[shown], tpr[shown], color=colour, drawstyle="steps-post", label=curve_label)
    eps_claimed, delta = getattr(audit, "eps_claimed", math.inf), getattr(audit, "delta", 0.0)
    for axes, x in ((linear, np.linspace(0.0, 1.0, 400)), (logarithmic, grid)):
        axes.plot(x, x, linestyle=":", color="grey", label="random guess")
        if eps_claimed is not None and math.isfinite(eps_claimed):
            axes.plot(x, privacy_region_boundary(x, eps_claimed, delta), color="C3",
                      label=f"claimed (ε = {epsilon_text(eps_claimed)}, δ = {delta_text(delta)}) boundary"
                            + (" (the claim the canary tests)" if len(curves) > 1 else ""))
        if getattr(audit, "mu_claimed", None) is not None:
            axes.plot(x, gdp_roc(x, audit.mu_claimed), linestyle="--", color="C2",
                      label=f"claimed GDP μ = {epsilon_text(audit.mu_claimed)}")
        if getattr(audit, "mu_lb", None):
            axes.plot(x, gdp_roc(x, audit.mu_lb), linestyle="-.", color="C4",
                      label=f"GDP μ_lb = {lower_bound_text(audit.mu_lb)}")
        needed = getattr(audit, "detection_points", None)
        if needed is not None:
            shown = needed[0] >= (x[0] if axes is logarithmic else 0.0)
            axes.plot(needed[0][shown], needed[1][shown], linestyle="none", marker="^", markersize=4, color="C3",
                      label="TPR needed at a tested threshold to certify a violation of the claim")
        axes.set_xlabel("false positive rate")
        axes.set_ylabel("true positive rate")
    if eps_claimed is None or not math.isfinite(eps_claimed):
        linear.text(0.55, 0.08, "no (ε, δ) claim: ε = ∞", transform=linear.transAxes, color="C3")
    linear.set_xlim(0.0, 1.0)
    linear.set_ylim(0.0, 1.0)
    linear.set_aspect("equal")
    logarithmic.set_xscale("log")
    logarithmic.set_yscale("log")
    logarithmic.set_xlim(floor, 1.0)
    logarithmic.set_ylim(floor, 1.0)
    logarithmic.set_aspect("equal")
    handles, labels = linear.get_legend_handles_labels()
    # Each of the two columns has half the figure's width: a longer label (a LiRA curve's counts beside the
    # claimed boundary's) ran past the right edge and was cut off.
    labels = [textwrap.fill(label, _LEGEND_WIDTH) for label in labels]
    figure.legend(handles, labels, loc="lower center", ncol=2, fontsize="small", frameon=False)
    figure.suptitle(title, fontsize="medium")
    # Room below the panels for the legend's text lines. Fixed margins: tight_layout
    # measures every log-axis tick label and took half the time of the whole plot.
    bottom = min(0.45, 0.02 + 0.033 * _legend_rows(labels, 2))
    figure.subplots_adjust(left=0.07, right=0.98, top=0.92, bottom=bottom + 0.08, wspace=0.25)
    return figure


def write_report(audit, directory, *, title: str, extra: dict | None = None) -> dict:
    """Write ``audit.json``, ``audit.md``, ``scores.npz`` and ``roc.png`` into ``directory``.

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
    record = json_record({**audit.as_dict(), **(extra or {})})
    paths = {
        "json": folder / JSON_NAME,
        "markdown": folder / MARKDOWN_NAME,
        "scores": folder / SCORES_NAME,
        "roc": folder / ROC_NAME,
    }
    paths["json"].write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    paths["markdown"].write_text(_markdown(record, title), encoding="utf-8")
    arrays = {"in_scores": audit.scores.in_scores, "out_scores": audit.scores.out_scores,
              "higher_is_in": audit.scores.higher_is_in, "trials": audit.scores.trials}
    mia_scores = getattr(audit, "mia_scores", None)
    if mia_scores is not None:
        arrays.update(mia_in_scores=mia_scores.in_scores, mia_out_scores=mia_scores.out_scores,
                      mia_higher_is_in=mia_scores.higher_is_in, mia_trials=mia_scores.trials)
    np.savez(paths["scores"], **arrays)
    alpha = getattr(audit, "alpha", 0.05)
    _roc_plot(paths["roc"], audit, title, alpha if isinstance(alpha, float) and 0.0 < alpha < 1.0 else 0.05)
    return paths


# Printed beside ε_lb, so that no reader takes an estimate for a certified bound.
GDP_LABEL = "estimate, assumes the GDP shape"
NATURAL_LABEL = "estimate: natural member/non-member scores give no coverage guarantee"
# The JSON verdict: "detected" is reserved for a certified bound above the claim.
DETECTED_VERDICT = "detected"
GDP_ESTIMATE_VERDICT = "indicated by estimate (assumes GDP shape)"
NATURAL_ESTIMATE_VERDICT = "indicated by estimate (natural member/non-member scores)"
NOT_DETECTED_VERDICT = "not_detected"


@dataclasses.dataclass(frozen=True)
class ScoresAudit(ReadsAuditResult):
    """The audit of a user's own IN/OUT attack scores, shaped for :func:`write_report`.

    Attributes:
        scores: the :class:`~audits.scores.AuditScores`.
        eps_claimed, delta: the claimed (ε, δ) tested (ε = ∞ when none is given; δ then 0).
        result: the estimator's :class:`~audits.result.AuditResult` (``eps_lb``, ``method`` and ``mu_lb`` are
            read from it, :class:`~audits.result.ReadsAuditResult`). With ``estimator="clopper-pearson"``,
            :func:`audits.epsilon_lower_bound` (Clopper–Pearson, Bonferroni over rank thresholds):
            certified only for ``trials="independent"`` scores, an estimate otherwise. With
            ``estimator="gdp"``, :func:`audits.epsilon_from_gdp`: always an estimate here, as its ε
            assumes the mechanism's privacy curve is GDP-shaped.
        mia: AUC, TPR at 0.1% and 1% FPR, advantage, FPR resolution (:func:`audits.mia_metrics`).
        estimator: "clopper-pearson" or "gdp".
        both_directions: whether both rules ("IN if score > t" and "< t") were tested under one α
            (else only the declared orientation, ``scores.higher_is_in``).
        power: for a claim not detected by the Clopper–Pearson test, what the test could have
            detected (:func:`audit_scores_report`); None otherwise.
        notes: sentences the report prints under "Notes" (a flipped orientation, the ROC crossing).
    """

    scores: AuditScores
    eps_claimed: float
    delta: float
    result: AuditResult
    mia: dict
    estimator: str = "clopper-pearson"
    both_directions: bool = False
    power: dict | None = None
    notes: tuple = ()

    @property
    def alpha(self) -> float:
        return self.result.alpha

    @property
    def valid_as(self) -> str:
        """"certified" only for the Clopper–Pearson bound on independent trials; the GDP-shape ε is an estimate."""
        return ESTIMATE if self.estimator == "gdp" else self.result.valid_as

    @property
    def eps_lb_label(self) -> str:
        """What ε_lb is, printed beside the number."""
        if self.estimator == "gdp":
            return GDP_LABEL
        if self.valid_as == CERTIFIED:
            return f"certified lower bound, {1 - self.alpha:.4g} confidence, independent trials"
        return NATURAL_LABEL if not self.scores.independent_trials else "estimate"

    @property
    def threat_model(self) -> dict:
        return {"access": "as the user's attack had it (scores supplied by the user)", "trials": self.scores.trials,
                "in_scores": self.scores.num_in, "out_scores": self.scores.num_out}

    @property
    def verdict(self) -> str | None:
        """What ε_lb > the claimed ε shows, in one value; None without a claim.

        ``"detected"`` only for a certified bound (Clopper–Pearson on independent trials); an estimate above the
        claim gets its own value naming what it rests on (:data:`GDP_ESTIMATE_VERDICT`,
        :data:`NATURAL_ESTIMATE_VERDICT`), so that no reader of the JSON takes it for a certified detection;
        ``"not_detected"`` otherwise.
        """
        if not math.isfinite(self.eps_claimed):
            return None
        if self.eps_lb <= self.eps_claimed:
            return NOT_DETECTED_VERDICT
        if self.estimator == "gdp":
            return GDP_ESTIMATE_VERDICT
        return DETECTED_VERDICT if self.valid_as == CERTIFIED else NATURAL_ESTIMATE_VERDICT

    @property
    def verdict_text(self) -> str:
        """The verdict in words: what was shown, at what confidence, under which trial model, and the test's power."""
        if self.verdict is None:
            return "no claim tested (give epsilon and delta to test one)."
        numbers = (f"eps_lb = {lower_bound_text(self.eps_lb)} ({self.eps_lb_label}) against the claimed "
                   f"ε = {epsilon_text(self.eps_claimed)} at δ = {delta_text(self.delta)}")
        if self.verdict != NOT_DETECTED_VERDICT:
            if self.estimator == "gdp":
                return (f"violation indicated by an estimate: {numbers}. It holds only if the mechanism's privacy "
                        "curve is GDP-shaped, and it is not certified.")
            if self.valid_as == CERTIFIED:
                return (f"violation detected: {numbers}. Certified: a mechanism that satisfies the claim produces "
                        f"such a bound with probability at most {self.alpha:.4g} (independent trials; "
                        f"{self.result.num_hypotheses} Clopper–Pearson bounds under one α).")
            return (f"violation detected, as an estimate: {numbers}. Members and non-members of one model are "
                    "not independent randomised trials, so this is not certified; rerun on independent trials "
                    "(trials='independent') to certify it.")
        text = f"not detected at this sample size: {numbers}. Not detecting a violation does not show the claim holds."
        if self.power is not None:
            text += " " + _power_sentence(self.power)
        elif self.estimator == "gdp":
            text += (" No power is stated for the GDP-shape estimate: its ε rests on an assumption about the "
                     "mechanism, not on a test at a stated confidence.")
        return text

    @property
    def detection_points(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(FPR, TPR) the observed ROC must pass above for the Clopper–Pearson test to certify a violation, or None."""
        if self.power is None:
            return None
        return np.asarray(self.power["detection_fpr"]), np.asarray(self.power["detection_tpr"])

    def as_dict(self) -> dict:
        return {
            "eps_claimed": self.eps_claimed, "eps_lb": self.eps_lb, "eps_lb_label": self.eps_lb_label,
            "delta": self.delta, "mu_lb": self.mu_lb, "method": self.method, "valid_as": self.valid_as,
            "alpha": self.alpha, "estimator": self.estimator,
            "directions": "both" if self.both_directions else ("higher is IN" if self.scores.higher_is_in
                                                                else "lower is IN"),
            "verdict": self.verdict, "verdict_text": self.verdict_text, "power": self.power, "notes": list(self.notes),
            "mia": dict(self.mia), "metrics": {key: value for key, value in self.mia.items() if key != "attack"},
            "result": self.result.as_dict(), "threat_model": self.threat_model,
        }


def _power_sentence(power: dict) -> str:
    """The power of the Clopper–Pearson test in words (definitions in :mod:`audits.power`)."""
    text = (
        f"Power of this test ({power['in_scores']} IN and {power['out_scores']} OUT scores, "
        f"{1 - power['alpha']:.4g} confidence, taken as independent trials): of the mechanisms whose true ε at "
        f"this δ is {epsilon_text(power['alternative_epsilon'])} (the claim plus {power['margin']:g}), the most "
        f"detectable one is detected with probability at least "
        f"{_probability_down(power['most_detectable_probability'][0])}"
    )
    if power["detection_probability_at_most"] < 1.0:
        text += f" and none with probability above {_probability_up(power['detection_probability_at_most'])}"
    if power["gaussian_mu"] is not None:
        low, high = power["gaussian_detection_probability"]
        text += (f"; a Gaussian mechanism with that ε (μ = {epsilon_text(power['gaussian_mu'])}) with probability "
                 f"between {_probability_down(low)} and {_probability_up(high)} (power depends on the whole "
                 "trade-off curve, not on ε alone: a Gaussian mechanism's ε at a small δ comes from score tails "
                 "that few scores reach)")
    ceiling = power["largest_certifiable_epsilon"]
    if ceiling <= power["alternative_epsilon"] - power["margin"]:
        return text + (f". The claim is at or above ε = {lower_bound_text(ceiling)}, the largest ε any scores of these "
                       "sample sizes can certify: no data of these sizes can refute it.")
    return text + f". No scores of these sample sizes can certify more than ε = {lower_bound_text(ceiling)}."


def _probability_up(value: float) -> str:
    return format_up(value, 2) if value > 0.0 else "0"


def _probability_down(value: float) -> str:
    return format_down(value, 2) if value > 0.0 else "0"


def _test_power(scores: AuditScores, eps_claimed: float, delta: float, alpha: float, directions: int,
                margin: float) -> dict:
    """What the Clopper–Pearson test could detect with these sample sizes (:mod:`audits.power`)."""
    from dpmech import calibrate_gaussian

    from .power import detection_counts, detection_probability, largest_certifiable_epsilon, power_bound

    num_in, num_out = scores.num_in, scores.num_out
    alternative = eps_claimed + margin

    def probability(tpr_at) -> list:
        return list(detection_probability(tpr_at, num_in, num_out, epsilon=eps_claimed, delta=delta, alpha=alpha,
                                          directions=directions))

    # The Gaussian mechanism whose ε at δ is the alternative: μ = sensitivity / σ with σ calibrated for it (δ > 0).
    mu = 1.0 / calibrate_gaussian(alternative, delta, 1.0) if delta > 0.0 else None
    levels, limits = detection_counts(num_in, num_out, epsilon=eps_claimed, delta=delta, alpha=alpha,
                                      directions=directions)
    reachable = limits >= 0
    return {
        "definition": "probabilities that the Clopper–Pearson test certifies eps_lb > eps_claimed if the scores came "
                      "from independent trials of the named mechanism (audits.power)",
        "in_scores": num_in, "out_scores": num_out, "alpha": alpha, "margin": margin,
        "alternative_epsilon": alternative,
        "detection_probability_at_most": power_bound(alternative, num_in, num_out, epsilon=eps_claimed, delta=delta,
                                                     alpha=alpha, directions=directions),
        "most_detectable_probability": probability(lambda fpr: privacy_region_boundary(fpr, alternative, delta)),
        "gaussian_mu": mu,
        "gaussian_detection_probability": ([math.nan, math.nan] if mu is None else
                                           probability(lambda fpr: gdp_roc(fpr, mu))),
        "largest_certifiable_epsilon": largest_certifiable_epsilon(num_in, num_out, delta=delta, alpha=alpha,
                                                                   directions=directions),
        "detection_fpr": (levels[reachable] / num_out).tolist(),
        "detection_tpr": (1.0 - limits[reachable] / num_in).tolist(),
    }


def _boundary_crossing(scores: AuditScores, eps_claimed: float, delta: float) -> tuple[float, float] | None:
    """The first observed (FPR, TPR) of the empirical ROC above the claimed boundary, or None."""
    counts = roc_counts(scores)
    fpr = counts.false_positives / counts.num_out
    tpr = counts.true_positives / counts.num_in
    above = np.flatnonzero(tpr > privacy_region_boundary(fpr, eps_claimed, delta))
    return (float(fpr[above[0]]), float(tpr[above[0]])) if above.size else None


def audit_scores_report(in_scores, out_scores, *, epsilon=None, delta=None, higher_is_in: bool = True,
                        trials: str = "natural", alpha: float = 0.05, estimator: str = "clopper-pearson",
                        both_directions: bool = False, power_margin: float = DEFAULT_POWER_MARGIN,
                        out=None) -> ScoresAudit:
    """Audit a user's own attack scores and, with ``out``, write the same report files as ``dpmech run``'s audit.

    Args:
        in_scores, out_scores: 1-D finite scores of members (IN) and non-members (OUT).
        epsilon, delta: the claimed (ε, δ) to test, both or neither; δ in [0, 1). Without a claim
            the ε lower bound is at δ = 0 and the plot has no boundary.
        higher_is_in: True when a higher score means "more likely IN". Only this rule is tested
            unless ``both_directions``; fix it before looking at the scores, or the bound is an estimate.
        trials: "independent" (each score from its own randomised trial: the bound is certified)
            or "natural" (default: members and non-members of one model; every ε is an estimate).
        alpha: significance of the bound and of the plotted bands, in (0, 1).
        estimator: "clopper-pearson" (default; :func:`audits.epsilon_lower_bound`, no assumption on
            the privacy curve) or "gdp" (:func:`audits.epsilon_from_gdp`, labelled "estimate, assumes
            the GDP shape"; needs δ > 0).
        both_directions: also test "IN if score < t", under the same α (half the power per direction).
        power_margin: ε margin > 0 above the claim at which the power of a "not detected" verdict is stated.
        out: folder for ``audit.json``, ``audit.md``, ``scores.npz`` and ``roc.png`` (None: write nothing).

    Verdict: "detected" when a certified ε_lb > the claimed ε (an estimate above the claim reads
    "indicated by estimate (...)" with what it assumes), else "not detected at this sample size" with the
    Clopper–Pearson test's power (:mod:`audits.power`): an upper bound on the probability that any
    mechanism whose true ε at δ is claim + ``power_margin`` is detected, bounds on it for the
    Gaussian mechanism with that ε, and the largest ε these sample sizes can certify at all.

    ε lower bound: Clopper–Pearson intervals and Bonferroni over the rank-indexed thresholds
    (Kairouz, Oh & Viswanath 2015's hypothesis-testing bound; see :mod:`audits.epsilon_bounds`), or
    the GDP μ bound of Nasr et al. 2023 and the ε it implies (:mod:`audits.gdp`).
    """
    from .epsilon_bounds import epsilon_lower_bound
    from .gdp import epsilon_from_gdp

    if (epsilon is None) != (delta is None):
        raise ValueError("epsilon and delta must be given together (a claimed (ε, δ)) or not at all")
    if epsilon is None:
        epsilon, delta = math.inf, 0.0
    else:
        epsilon = float(check.positive("epsilon", epsilon))
        delta = float(check.in_interval("delta", delta, 0.0, 1.0, low_open=False, high_open=True))
    alpha = float(check.open_unit_interval("alpha", alpha))
    estimator = check.choice("estimator", estimator, SCORES_ESTIMATORS)
    both_directions = check.boolean("both_directions", both_directions)
    power_margin = float(check.positive("power_margin", power_margin))
    if estimator == "gdp" and delta == 0.0:
        raise ValueError("estimator 'gdp' needs a claim with delta > 0 (the ε of a GDP curve at δ = 0 is ∞)")
    scores = AuditScores(in_scores, out_scores, higher_is_in=check.boolean("higher_is_in", higher_is_in),
                         trials=trials)
    if estimator == "gdp":
        result = epsilon_from_gdp(scores, alpha=alpha, delta=delta, two_sided=both_directions)
    else:
        result = epsilon_lower_bound(scores, alpha=alpha, delta=delta, two_sided=both_directions)
    mia = {"attack": "user-supplied scores", **dataclasses.asdict(mia_metrics(scores))}
    notes = []
    if mia["auc"] < 0.5 and not both_directions:
        orientation = "a higher" if scores.higher_is_in else "a lower"
        option = "--lower-is-in (higher_is_in=False)" if scores.higher_is_in else "no --lower-is-in (higher_is_in=True)"
        notes.append(
            f"AUC {mia['auc']:.3f} < 0.5 with {orientation} score taken to mean IN: the members score on the "
            f"non-member side, so the orientation is most likely flipped and only the flipped rule was tested. "
            f"If the other orientation is the right one, rerun with {option}; choosing it after seeing these "
            "scores makes the bound an estimate, so to keep it certified fix the orientation in advance or test "
            "both directions (--both-directions) under one α."
        )
    power = None
    if math.isfinite(epsilon) and result.eps_lb <= epsilon:
        crossing = _boundary_crossing(scores, epsilon, delta)
        if crossing is not None:
            notes.append(
                f"The observed ROC lies above the claimed (ε, δ) boundary (first at FPR {crossing[0]:.4g}, TPR "
                f"{crossing[1]:.4g}), yet no violation is detected: the ROC's points are estimates from finitely many "
                "scores. A violation is detected only when the error rates' Clopper–Pearson bounds, holding over "
                "every threshold tested at once, lie beyond the boundary, i.e. when the observed TPR at a tested "
                "threshold reaches the TPR needed there (the triangles in roc.png; the shaded band is the "
                "simultaneous band for the whole ROC)."
            )
        if estimator == "clopper-pearson":
            power = _test_power(scores, epsilon, delta, alpha, 2 if both_directions else 1, power_margin)
    audit = ScoresAudit(scores, epsilon, delta, result, mia, estimator, both_directions, power, tuple(notes))
    if out is not None:
        write_report(audit, out, title="Audit of user-supplied IN/OUT scores")
    return audit
