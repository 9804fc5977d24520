"""The main job behind ``dpmech run``: calibrate, train a one-shot federation, account, audit, report.

1. Calibrate: the target (ε, δ) is turned into the pipeline's noise settings by
   dpmech (:func:`trainers.pipelines.targets.pipeline_config`; FedAUXfdp splits it
   between its two heads with :func:`dpmech.split_gaussian_budget`, a fifth of the
   privacy-loss variance to the scoring head, so that the tight composition meets the target).
2. Train the federation on an embedded dataset (no download), and the same pipeline
   without noise (the non-private baseline) where its configuration has a noise to
   remove (:func:`trainers.pipelines.targets.non_private_config`), and (``accuracy_curve``,
   the default) at each ε of the curve. The round is trained once
   (:func:`trainers.pipelines.registry.fit_pipeline`) and released at each noise setting:
   FedAUXfdp's output perturbation leaves its training the same at every ε, so only the
   release and what is computed from it are redone; another pipeline trains again per ε.
   With ``threads=1`` and a second core, FedAUXfdp's curve is released in a second thread
   beside the target's release, the non-private run and the audit (the same numbers as in order).
3. Account: the pipeline's ledger, basic and tight; each guarantee with its protected
   unit and neighbouring relation, read from the pipeline's result.
4. Audit the trained pipeline (:mod:`audits.attacks.pipelines`), with the steps its
   own audit module names.
5. Report: ``summary.json``, ``report.md``, ``accuracy.png`` and, in ``audit/``,
   the audit's JSON, Markdown, scores and ROC plot (:mod:`audits.report`).

The summary is one JSON object, the same for ``summary.json`` and ``dpmech run --json``
(:data:`SUMMARY_SCHEMA`); ∞ is ``null`` there, named in ``non_finite``
(:func:`audits.report.json_record`).

The job sits on the application floor, above the pipelines it runs and the audits
it applies (:mod:`audits.attacks.pipelines`, :mod:`audits.report`): neither
:mod:`trainers` nor :mod:`audits` imports it, so the trainers never import the
audits and the audit statistics stay pure functions of scores. ``dpmech run`` is
its command (:mod:`app.run_command`).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import dataclasses
import inspect
import json
import math
import os
import pathlib
import sys
import threading
import time
import warnings
from typing import Any

import numpy as np

import dpmech
from dpmech.cli.arguments import output_folder
from dpmech.directed_rounding import delta_text, epsilon_text, format_down, format_up, lower_bound_text

from audits.attacks.pipelines import audit_function as pipeline_audit
from audits.metrics import roc_counts
from audits.report import json_record, privacy_region_boundary, roc_curves, roc_simultaneous_band, tpr_text, write_report
from trainers.data import USER_DATA, SplitData
from trainers.federation import PipelineResult
from trainers.pipelines.registry import PIPELINE_NAMES, fit_pipeline, get_pipeline
from trainers.pipelines.targets import THE_RUN, default_dataset, non_private_config, pipeline_config

from .options import DATASET_NAMES, DEFAULT_PIPELINE, ENGINES

DEFAULT_EPSILON = 1.0
DEFAULT_DELTA = 1e-5
# ε values of the optional ε → accuracy curve (the target and ∞, the non-private run, are added).
CURVE_EPSILONS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
# Seconds between progress lines when stderr is not a terminal.
LOG_INTERVAL = 5.0
STEPS = 5
FILES = ("summary.json", "report.md", "accuracy.png", "audit/audit.json", "audit/audit.md", "audit/scores.npz",
         "audit/roc.png")
DATASET_TEXT = {
    "digits": "scikit-learn's 8×8 digits (1,797 records).",
    "mnist1d": "MNIST-1D generated locally (10,000 raw signals).",
    "mnist1d-cnn": "MNIST-1D generated locally; the features of a small CNN trained on a public part only, which "
                   "the round never sees (`trainers.data.load_dataset`); the pipeline at its seed's settings "
                   "(`paper()`).",
    # The user's own arrays (dpmech run --data), checked by trainers.data.load_arrays.
    "user-data": "your own arrays from `{data_file}` (`dpmech run --data`), checked as the built-in sets (finite real "
                 "features, one integer label 0..C-1 per row, every class present) and taken as raw inputs; a "
                 "public/private split (X_public, y_public if given, X_private, y_private) is kept as given.",
}
UNIT_TEXT = {"record": "one record", "user": "one user (all their records)", "label": "one label"}
# Audit methods whose ε_lb holds only if the mechanism's privacy curve is exactly GDP-shaped
# (audits.gdp; the one-run audit's Gaussian f-DP analysis): μ_lb alone is assumption-free.
GDP_SHAPE_METHODS = ("gdp", "one-run f-dp-gaussian")
RELATION_TEXT = {"replace-one": "replace-one", "add-remove-one": "add/remove-one"}

_NUMBER = {"type": "number"}
_NUMBER_OR_NULL = {"type": ["number", "null"]}
_GUARANTEE_SCHEMA = {
    "type": "object",
    "required": ["epsilon", "delta", "log_delta", "method", "neighbouring", "unit", "relation", "certified"],
    "properties": {"epsilon": _NUMBER_OR_NULL, "delta": _NUMBER, "log_delta": _NUMBER_OR_NULL,
                   "method": {"type": "string"}, "neighbouring": {"enum": list(RELATION_TEXT)},
                   "unit": {"enum": list(UNIT_TEXT)}, "relation": {"type": "string"}, "certified": {"type": "boolean"}},
}
SUMMARY_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "dpmech run summary (summary.json and dpmech run --json)",
    "type": "object",
    "required": ["pipeline", "dataset", "seed", "trials", "engine", "round", "target", "accuracy", "baselines", "non_private",
                 "accuracy_curve", "guarantees", "epsilon", "delta", "eps_lb", "audit", "notes", "config",
                 "report_dir", "files", "non_finite"],
    "additionalProperties": False,
    "properties": {
        "pipeline": {"enum": list(PIPELINE_NAMES)},
        "dataset": {"enum": [*DATASET_NAMES, USER_DATA]},
        "data_file": {"type": "string"},
        "seed": {"type": "integer", "minimum": 0},
        "trials": {"type": ["integer", "null"], "minimum": 1},
        "engine": {"enum": list(ENGINES)},
        "round": {
            "type": "object", "additionalProperties": False,
            "required": ["clients", "configured_clients", "records_per_client", "model", "features", "releases"],
            "properties": {"clients": {"type": "integer", "minimum": 0},
                           "configured_clients": {"type": ["integer", "null"], "minimum": 1},
                           "records_per_client": {"type": "array", "items": {"type": "integer", "minimum": 0}},
                           "model": {"type": ["string", "null"]}, "features": {"type": ["string", "null"]},
                           "releases": {"type": "array", "items": {"type": "object", "required": ["event"]}}},
        },
        "target": {
            "type": "object", "additionalProperties": False,
            "required": ["epsilon", "delta", "delivered_epsilon", "delivered_delta", "met", "note"],
            "properties": {"epsilon": _NUMBER, "delta": _NUMBER, "delivered_epsilon": _NUMBER_OR_NULL,
                           "delivered_delta": _NUMBER, "met": {"type": "boolean"}, "note": {"type": "string"},
                           "relation": {"type": "string"}},
        },
        "accuracy": {"type": "number", "minimum": 0, "maximum": 1},
        "baselines": {"type": "object", "additionalProperties": {"type": "number", "minimum": 0, "maximum": 1}},
        "non_private": {
            "type": "object", "additionalProperties": False, "required": ["accuracy", "source", "model"],
            "properties": {"accuracy": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                           "source": {"type": "string"}, "model": {"type": ["string", "null"]}},
        },
        "accuracy_curve": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["epsilon", "accuracy"],
            "properties": {"epsilon": _NUMBER_OR_NULL, "accuracy": {"type": "number", "minimum": 0, "maximum": 1}}}},
        "guarantees": {"type": "object", "additionalProperties": _GUARANTEE_SCHEMA},
        "epsilon": _NUMBER_OR_NULL,
        "delta": _NUMBER,
        "eps_lb": {"type": "number", "minimum": 0},
        "audit": {"type": "object", "required": ["eps_claimed", "eps_lb", "delta", "method", "valid_as", "mia"]},
        "notes": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
        "config": {"type": "object"},
        "report_dir": {"type": "string"},
        "files": {"type": "array", "items": {"type": "string"}},
        "non_finite": {"type": "object", "additionalProperties": {"enum": ["inf", "-inf", "nan"]}},
    },
}


def _quiet_accuracy(fitted, config) -> float:
    # A non-private or curve release warns that it has no guarantee; the report says so itself. Only the
    # accuracy is read, so the accuracy baselines are left out.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpmech.NoGuaranteeWarning)
        return float(fitted.release(config, baselines=False).accuracy)


def _usable_cores() -> int:
    """The CPUs this process may run on (its affinity mask where the platform has one)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _release_accuracies(fitted, configs: list, threads: int) -> list:
    """The accuracy of ``fitted``'s release at each of ``configs``, in order (baselines left out): the ε curve in
    the main job's second thread. No warnings filter is set here (``warnings.catch_warnings`` is not thread-safe);
    the releases it is given are at a finite ε, which warn of nothing."""
    from trainers.threads import limited_threads

    # OpenMP's thread count is a per-thread setting: this thread takes the job's own.
    with limited_threads(threads):
        return [float(fitted.release(config, baselines=False).accuracy) for config in configs]


class StepLog:
    """Progress on stderr: a spinner on a terminal; elsewhere one line per step and one every ``interval`` seconds.

    ``mode``: "terminal", "log" or "off".
    """

    def __init__(self, mode: str, interval: float = LOG_INTERVAL, stream=None):
        self.mode = dpmech.validation.choice("mode", mode, ("terminal", "log", "off"))
        self.interval = float(dpmech.validation.positive("interval", interval))
        self.stream = sys.stderr if stream is None else stream
        self.description = ""
        self._start = time.monotonic()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._stack = contextlib.ExitStack()
        self._warned = set()

    def __enter__(self):
        if self.mode == "terminal":
            from rich.console import Console
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self._bar = self._stack.enter_context(Progress(
                SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                console=Console(stderr=True), transient=False))
            self._task = self._bar.add_task("", total=None)
        elif self.mode == "log":
            self._thread = threading.Thread(target=self._heartbeat, daemon=True)
            self._thread.start()
        return self

    def _line(self, text: str) -> None:
        with self._lock:
            print(f"dpmech run: [{time.monotonic() - self._start:5.0f} s] {text}", file=self.stream, flush=True)

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.interval):
            self._line(f"{self.description} (running)")

    def step(self, description: str) -> None:
        self.description = description
        if self.mode == "terminal":
            self._bar.update(self._task, description=description)
        elif self.mode == "log":
            self._line(description)

    def warn(self, message: str) -> None:
        """A privacy warning raised while a step ran, as one line (the report's notes state it too)."""
        if message in self._warned:
            return
        self._warned.add(message)
        if self.mode == "terminal":
            self._bar.console.print(f"warning: {message}")
        elif self.mode == "log":
            self._line(f"warning: {message}")

    @contextlib.contextmanager
    def privacy_warnings(self):
        """dpmech's privacy warnings raised inside become one :meth:`warn` line each, once per run (the
        pipeline's notes carry them into the report); any other warning is issued again, to the
        caller's filters (which also decide, as for any warning, whether a privacy warning is raised)."""
        with warnings.catch_warnings(record=True) as caught:
            yield
        for warning in caught:
            if issubclass(warning.category, dpmech.PrivacyWarning):
                self.warn(str(warning.message))
            else:
                warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno,
                                       source=warning.source)

    def __exit__(self, *exc):
        self._stop.set()
        if self.mode == "log":
            self._thread.join()
        self._stack.close()
        return False


def _distinct_notes(notes) -> list:
    """Each statement once, in order: exact repeats and notes contained in a longer note are dropped."""
    unique = list(dict.fromkeys(notes))
    return [note for note in unique if not any(note != other and note in other for other in unique)]


def _audit_step_name(audit_function) -> str:
    """The audit's own summary line ("Auditing X: what it does.") as the step name."""
    doc = inspect.getmodule(audit_function).__doc__ or ""
    first = doc.strip().splitlines()[0].rstrip(".") if doc.strip() else "audit the trained pipeline"
    return "audit: " + first.split(": ", 1)[1] if ": " in first else first


def _separate_non_private(summary: dict) -> bool:
    """Whether the non-private accuracy is a model of its own (its own row and bar), not the run or a baseline."""
    return summary["non_private"]["model"] == "separate run"


def flower_round_runner(pipeline: str):
    """``trainers.flower.simulation.run_flower_round`` for ``--engine flower``, after checking that the
    ``[flower]`` extra is installed and that ``pipeline`` has a Flower app (ValueError naming them)."""
    from dpmech.optional_dependencies import ensure_installed

    try:
        ensure_installed("flwr", purpose="dpmech run --engine flower")
    except ImportError as error:
        raise ValueError(str(error)) from None
    from trainers.flower.simulation import FLOWER_PIPELINES, run_flower_round

    if pipeline not in FLOWER_PIPELINES:
        raise ValueError(f"pipeline must be one of {', '.join(FLOWER_PIPELINES)} with --engine flower "
                         f"(got {pipeline!r}: it has no Flower app)")
    return run_flower_round


def _accuracy_plot(path: pathlib.Path, summary: dict, title: str) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import NullFormatter

    claim = f"ε = {epsilon_text(summary['epsilon'])}" + (f", δ = {delta_text(summary['delta'])}" if summary["delta"] else "")
    names = [f"{summary['pipeline']}\n({claim})"] + list(summary["baselines"])
    values = [summary["accuracy"]] + list(summary["baselines"].values())
    colours = ["C0"] + ["C2" if name == summary["non_private"]["model"] else "C7" for name in summary["baselines"]]
    names = [f"{name}\n(non-private)" if name == summary["non_private"]["model"] else name for name in names]
    if _separate_non_private(summary):
        names.append("non-private\n(ε = ∞)")
        values.append(summary["non_private"]["accuracy"])
        colours.append("C2")
    curve = summary["accuracy_curve"]
    figure = Figure(figsize=(11.0 if curve else 7.0, 4.2))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot(1, 2 if curve else 1, 1)
    positions = range(len(values))
    axes.bar(positions, values, color=colours)
    axes.set_xticks(list(positions), names, rotation=30, ha="right", fontsize="small")
    axes.set_ylim(0, 1.08)
    axes.set_ylabel("test accuracy")
    axes.set_title(title, fontsize="medium")
    for position, value in enumerate(values):
        axes.text(position, value + 0.02, f"{value:.3f}", ha="center", fontsize="small")
    if curve:
        finite = [(point["epsilon"], point["accuracy"]) for point in curve if point["epsilon"] is not None]
        private = figure.add_subplot(1, 2, 2)
        private.plot([e for e, _ in finite], [a for _, a in finite], marker="o", color="C0", label=summary["pipeline"])
        for point in curve:
            if point["epsilon"] is None:
                private.axhline(point["accuracy"], color="C2", linestyle="--", label="non-private (ε = ∞)")
        private.axvline(summary["target"]["epsilon"], color="C3", linestyle=":", label="target ε")
        private.set_xscale("log")
        # Ticks at the trained ε only: the log axis' own minor labels overlap at this width.
        private.set_xticks([e for e, _ in finite], [f"{e:g}" for e, _ in finite])
        private.xaxis.set_minor_formatter(NullFormatter())
        private.set_ylim(0, 1.08)
        private.set_xlabel(f"ε (δ = {delta_text(summary['target']['delta'])})")
        private.set_ylabel("test accuracy")
        private.set_title("ε → accuracy (same data and seed)", fontsize="medium")
        private.legend(loc="lower right", fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def lower_bound_validity(audit: dict) -> str:
    """What an audit record's ε_lb is, in words: "under the GDP-shape assumption" for the GDP methods
    (:data:`GDP_SHAPE_METHODS`), "certified" for the others that certify it, else "estimate"."""
    if audit["valid_as"] != "certified":
        return "estimate"
    return "under the GDP-shape assumption" if audit["method"] in GDP_SHAPE_METHODS else "certified"


def _event_record(event: Any) -> dict:
    """One accounted release: the noise and the sensitivity it was calibrated for, or its (ε, δ); for a
    release composed over rounds or run on selected clients (client selection), also ``rounds`` and
    ``sampled``, with the numbers of the event it wraps."""
    record = {"event": type(event).__name__, "neighbouring": getattr(event, "neighbouring", None)}
    while isinstance(getattr(event, "event", None), dpmech.events.PrivacyEvent):
        if isinstance(event, dpmech.events.SelfComposedEvent):
            record["rounds"] = int(event.count)
        elif isinstance(event, dpmech.events.SampledWithoutReplacementEvent):
            record["sampled"] = f"{event.sample_size} of {event.source_size} uniformly without replacement"
        elif isinstance(event, dpmech.events.PoissonSampledEvent):
            record["sampled"] = f"each with probability {event.sampling_probability:g} (Poisson)"
        event = event.event
    for name in ("sigma", "sensitivity", "epsilon", "delta", "description"):
        value = getattr(event, name, None)
        if value is not None and value != "":
            record[name] = value if isinstance(value, str) else float(value)
    return record


def round_record(result: PipelineResult) -> dict:
    """Who took part and what was released: the clients, their records, the model and features, and
    every release the guarantees account for (σ and the L2 sensitivity it was calibrated for)."""
    config = dict(result.config)
    records = sorted(int(client["num_records"]) for client in result.per_client if "num_records" in client)
    features = None
    if "num_components" in config:
        projection = ("raw features" if config["num_components"] is None
                      else f"PCA({config['num_components']}) fitted on public data only")
        features = (f"{projection}, {'clipped' if config.get('clip_features') else 'checked'} to the public bound "
                    f"‖x‖ <= {config['feature_bound']:g}")
    model = (result.messages[0].description if result.messages else
             f"{config['model']} model" if "model" in config else None)
    return {
        "clients": len(result.per_client),
        "configured_clients": config.get("num_clients", config.get("num_users")),
        "records_per_client": records,
        "model": model,
        "features": features,
        "releases": [_event_record(event) for event in result.ledger.events],
    }


def _release_text(release: dict) -> str:
    text = _single_release_text(release)
    if "sampled" in release:
        text += f", on the clients selected per round: {release['sampled']}"
    if "rounds" in release:
        text += f", {release['rounds']} round{'s' if release['rounds'] != 1 else ''}"
    return text


def _single_release_text(release: dict) -> str:
    if "sigma" in release and "sensitivity" in release:
        # σ down, Δ and μ up: each printed number on the side of more privacy loss.
        return (f"Gaussian noise σ = {format_down(release['sigma'], 4)} calibrated for the L2 sensitivity "
                f"Δ = {format_up(release['sensitivity'], 4)} (μ = Δ/σ = {format_up(release['sensitivity'] / release['sigma'], 4)})")
    if "epsilon" in release:
        text = f"({epsilon_text(release['epsilon'])}, {delta_text(release.get('delta', 0.0))})-DP release"
        return text + (f": {release['description']}" if "description" in release else "")
    return release["event"]


def _round_lines(summary: dict) -> list:
    round_ = summary["round"]
    records = round_["records_per_client"]
    configured = round_["configured_clients"]
    clients = f"{round_['clients']} clients sent a release" + (
        f" (of {configured} configured)" if configured is not None and configured != round_["clients"] else "")
    if records:
        spread = (f"{records[0]} records each" if records[0] == records[-1] else
                  f"records per client: min {records[0]}, median {records[len(records) // 2]}, max {records[-1]}")
        clients += f"; {spread}, {sum(records):,} private records in all"
    lines = ["## Round", "", f"- Clients: {clients}."]
    if round_["model"]:
        lines.append(f"- Model: {round_['model']} (what the first client releases).")
    if round_["features"]:
        lines.append(f"- Features: {round_['features']}.")
    relations = sorted({record["relation"] for record in summary["guarantees"].values()})
    lines.append(f"- Noise of each release the guarantees account for (neighbouring relations: {'; '.join(relations)}):")
    lines += [f"  - release {index}: {_release_text(release)}" for index, release in enumerate(round_["releases"], 1)]
    if not round_["releases"]:
        lines.append("  - none (no release is accounted)")
    return lines + [""]


def roc_crossings(audit: Any) -> list:
    """Where each ROC the audit plots lies above the boundary of the claimed (ε, δ), and whether its
    simultaneous band does: [{"curve", "num_out", "segments": [[FP count low, FP count high], ...],
    "band_crosses"}], empty without a finite claim or a crossing. A crossing of the empirical curve
    is a pointwise estimate; only the band's lower edge above the boundary (at FPR f, R(f) >= lower
    edge > boundary(f)) is evidence against the claim at level α."""
    claim, delta = getattr(audit, "eps_claimed", math.inf), getattr(audit, "delta", 0.0)
    if claim is None or not math.isfinite(claim):
        return []
    crossings = []
    for label, scores in roc_curves(audit):
        counts = roc_counts(scores)
        fpr = counts.false_positives / counts.num_out
        above = np.flatnonzero(counts.true_positives / counts.num_in > privacy_region_boundary(fpr, claim, delta))
        band_fpr, band_low, _ = roc_simultaneous_band(scores, audit.alpha)
        band_crosses = bool(np.any(band_low > privacy_region_boundary(band_fpr, claim, delta)))
        # Runs of consecutive ROC points above the boundary, as the FP counts at their ends.
        runs = np.split(above, np.flatnonzero(np.diff(above) > 1) + 1) if above.size else []
        segments = [[int(counts.false_positives[run[0]]), int(counts.false_positives[run[-1]])] for run in runs]
        if segments or band_crosses:
            crossings.append({"curve": label, "num_out": int(counts.num_out), "segments": segments,
                              "band_crosses": band_crosses})
    return crossings


def _span(low, high) -> str:
    return f"{low}" if low == high else f"{low} to {high}"


def _crossing_lines(crossings: list, audit: dict) -> list:
    lines = []
    for crossing in crossings:
        num_out = crossing["num_out"]
        # Low FPR: few OUT scores above the threshold; high FPR: few below it (the mirror image).
        where = [f"FPR {_span(f'{low / num_out:.1e}', f'{high / num_out:.1e}')} ({_span(low, high)} of {num_out} "
                 "OUT scores above the threshold)" if high <= num_out / 2 else
                 f"FPR >= 1 − {(num_out - low) / num_out:.1e} ({_span(num_out - high, num_out - low)} "
                 f"of {num_out} OUT scores below the threshold)" for low, high in crossing["segments"]]
        if where:
            lines.append(
                f"- ROC: the {crossing['curve']} curve lies above the claimed (ε, δ) boundary at {'; '.join(where)}. "
                f"These points rest on a handful of scores (one OUT score moves the FPR by 1/{num_out}): they are "
                "pointwise estimates, not bounds, and the boundary limits the TRUE ROC, not its estimate.")
        if crossing["band_crosses"]:
            lines.append(f"- ROC: the lower edge of the {crossing['curve']} curve's simultaneous "
                         f"{1 - audit['alpha']:.0%} band lies above the claimed boundary: evidence at level α that the "
                         "claim does not hold (for natural-record scores the band is only indicative).")
        else:
            lines.append(f"- ROC: the {crossing['curve']} curve's simultaneous {1 - audit['alpha']:.0%} Clopper–Pearson "
                         "band (shaded; it holds the true ROC at every FPR at once for independent trials, and is only "
                         "indicative for natural-record scores) nowhere lies above the boundary: the crossing is not "
                         "significant. What the canary audit certifies is its band and ε_lb "
                         f"({lower_bound_validity(audit)}), not a plotted curve.")
    return lines


def _guarantee_record(result, name: str, guarantee) -> dict:
    record = guarantee.as_dict()
    unit = result.unit(name)
    record["unit"] = unit
    record["relation"] = f"{UNIT_TEXT[unit]}, {RELATION_TEXT[guarantee.neighbouring]}"
    return record


def _relation_text(target: dict, separator: str) -> str:
    """The delivered claim's relation after ``separator`` when the summary states one (client selection), else ""."""
    return f"{separator}{target['relation']}" if "relation" in target else ""


def _markdown(summary: dict) -> str:
    target = summary["target"]
    audit = summary["audit"]
    mia = audit["mia"]
    lines = [
        f"# dpmech run: {summary['pipeline']} on {summary['dataset']}",
        "",
        f"Seed {summary['seed']}; audit trials: {summary['trials'] if summary['trials'] is not None else 'the audit’s default'}.",
        "",
        f"Data: {DATASET_TEXT[summary['dataset']].format(data_file=summary.get('data_file'))}",
        "",
        *_round_lines(summary),
        "## Target budget",
        "",
        "| | ε | δ |",
        "|---|---|---|",
        f"| target | {epsilon_text(target['epsilon'])} | {delta_text(target['delta'])} |",
        f"| delivered (the claim the audit tests{_relation_text(target, '; ')}) | {epsilon_text(target['delivered_epsilon'])} | "
        f"{delta_text(target['delivered_delta'])} |",
        "",
        f"**Target met**: {target['note']}." if target["met"] else f"> **Warning: target NOT met.** {target['note']}.",
        "",
        "## Accuracy",
        "",
        "| model | test accuracy |",
        "|---|---|",
        f"| {summary['pipeline']} (server, ε = {epsilon_text(summary['epsilon'])}{_relation_text(target, ', ')}) | "
        f"{summary['accuracy']:.4f} |",
    ]
    non_private = summary["non_private"]
    lines += [f"| {name}{' (non-private)' if name == non_private['model'] else ''} | {value:.4f} |"
              for name, value in summary["baselines"].items()]
    if _separate_non_private(summary):
        lines.append(f"| non-private: {non_private['source']} | {non_private['accuracy']:.4f} |")
    lines += ["", f"Non-private baseline: {non_private['source']}."]
    if non_private["accuracy"] is not None and summary["accuracy"] >= non_private["accuracy"]:
        lines += ["", "The private run scored at or above the non-private one. Each is one run of one seed (one "
                      "partition, one noise draw), so one run's difference is no sign that the noise helps; compare "
                      "runs over several seeds (`--seed`). The curve's points are not independent draws either: at one "
                      "seed each client's seeded Generator adds the same standard-normal noise at every ε, scaled by "
                      "σ(ε), so one favourable draw lifts every ε at once and fades as σ shrinks toward ε = ∞ "
                      "(the README's `dpmech run` paragraph gives seeds where the private run scores below)."]
    if summary["accuracy_curve"]:
        lines += ["", f"ε → accuracy (same data and seed, one run per ε; δ as the target{_relation_text(target, '; ')}):", "",
                  "| ε | test accuracy |", "|---|---|"]
        lines += [f"| {epsilon_text(point['epsilon'])} | {point['accuracy']:.4f} |" for point in summary["accuracy_curve"]]
    elif get_pipeline(summary["pipeline"]).calibrated:
        lines += ["", "ε → accuracy curve: not computed (`dpmech run --no-accuracy-curve` was given)."]
    else:
        lines += ["", "ε → accuracy curve: not applicable (the pipeline has no noise calibrated to ε)."]
    lines += ["", "## Privacy budget", "",
              "| accounting | neighbouring relation | ε | δ | method | certified |", "|---|---|---|---|---|---|"]
    for name, record in summary["guarantees"].items():
        lines.append(f"| {name} | {record['relation']} | {epsilon_text(record['epsilon'])} | "
                     f"{delta_text(record['delta'], record['log_delta'])} | {record['method']} | "
                     f"{'yes' if record['certified'] else 'no'} |")
    num_out = round(1.0 / mia["fpr_resolution"])
    lines += [
        "",
        "## Audit",
        "",
        f"- Canary: ε_lb = {lower_bound_text(audit['eps_lb'])} against the claimed ε = "
        f"{epsilon_text(audit['eps_claimed'])}{_relation_text(target, ', ')} ({audit['method']}; "
        f"{lower_bound_validity(audit)}; α = {audit['alpha']})."
        + (f" Assumption: {audit['assumption']}" if audit.get("assumption") else ""),
        f"- {mia['attack']}: AUC {mia['auc']:.4f}; TPR at 0.1% FPR {tpr_text(mia['tpr_at_0_1_percent_fpr'], 1e-3, num_out)}, "
        f"at 1% FPR {tpr_text(mia['tpr_at_1_percent_fpr'], 1e-2, num_out)} ({num_out} OUT scores).",
        *_crossing_lines(audit.get("roc_crossings", []), audit),
        "",
        "## Notes",
        "",
    ]
    lines += [f"- {note}" for note in summary["notes"]]
    lines += ["", "Plots: `accuracy.png`, `audit/roc.png`. Everything in `summary.json`.", ""]
    return "\n".join(lines)


# The main job's selection arguments, the pipelines' config fields of the same names, and their options.
SELECTION_OPTIONS = {"clients_per_round": "--clients-per-round", "participation_probability": "--participation-probability"}


def _selection(clients_per_round, participation_probability) -> tuple:
    """(field, value) of the one client selection given, or (None, None); ValueError naming the options
    when both are given."""
    given = [(name, value) for name, value in (("clients_per_round", clients_per_round),
                                               ("participation_probability", participation_probability))
             if value is not None]
    if len(given) == 2:
        raise ValueError("clients_per_round (dpmech run --clients-per-round) and participation_probability (dpmech run "
                         "--participation-probability) exclude each other: select k of n clients (uniform) or each "
                         "client with probability q (Poisson), not both")
    return given[0] if given else (None, None)


def _check_client_selection(pipeline: str, clients_per_round, participation_probability, engine: str,
                            command: str = "dpmech run") -> None:
    """ValueError, naming the selection's argument and its option of ``command`` (``dpmech run``, or ``dpmech
    audit PIPELINE``), unless ``pipeline`` selects clients in process."""
    name, value = _selection(clients_per_round, participation_probability)
    if name is None:
        return
    label = f"{name} ({command} {SELECTION_OPTIONS[name]})"
    if name == "clients_per_round":
        dpmech.validation.integer_scalar(label, value, 1)
    else:
        dpmech.validation.in_interval(label, value, 0.0, 1.0, low_open=True, high_open=False)
    entry = get_pipeline(pipeline)
    if entry.client_selection_fields is None:
        raise ValueError(f"{label} does not apply to {pipeline}: {entry.no_client_selection}")
    if engine != "inprocess":
        raise ValueError(f"{label} needs engine 'inprocess' (got {engine!r}): the Flower round trains every client")


def with_client_selection(pipeline: str, config, clients_per_round, participation_probability=None,
                          command: str = "dpmech run"):
    """``config`` with ``clients_per_round`` (k of n, uniform) or ``participation_probability`` (q, Poisson)
    and the pipeline's ``client_selection_fields`` (:class:`trainers.pipelines.registry.Pipeline`); ``config``
    itself when neither is given. The config class checks the value against its clients (ValueError naming
    the option of ``command``, ``dpmech run`` or ``dpmech audit PIPELINE``, which share them)."""
    name, value = _selection(clients_per_round, participation_probability)
    if name is None:
        return config
    _check_client_selection(pipeline, clients_per_round, participation_probability, "inprocess", command)
    fields = dict(get_pipeline(pipeline).client_selection_fields)
    try:
        return dataclasses.replace(config, **{name: value}, **fields)
    except ValueError as error:
        raise ValueError(f"{command} {SELECTION_OPTIONS[name]}: {error}") from None


def run_main_job(pipeline: str = DEFAULT_PIPELINE, dataset=None, epsilon: float = DEFAULT_EPSILON,
                 delta: float = DEFAULT_DELTA, seed: int = 0, out="dpmech-report", progress: bool = True,
                 trials=None, threads: int = 1, accuracy_curve: bool = True, engine: str = "inprocess",
                 cache_dir=None, data_file=None, clients_per_round=None, participation_probability=None) -> dict:
    """Run the five steps of the module docstring and return the summary (also written to ``out``).

    ``dataset=None`` takes the pipeline's own (:func:`trainers.pipelines.targets.default_dataset`:
    FedAUXfdp runs on ``"mnist1d-cnn"``, public-CNN features at its seed's scale, where its accuracy
    at ε = 1 means something; the others on digits); ``cache_dir`` is where that dataset is cached
    (:func:`trainers.data.load_dataset`). ``data_file``: the path of the user's own ``.npz`` file of
    ``X`` and ``y``, or of the public/private split ``X_public``, ``y_public``, ``X_private`` and
    ``y_private`` (kept as given: :func:`trainers.data.split_federated`), instead (``dataset`` must then be None), loaded and checked by
    :func:`trainers.data.load_arrays` before any training and taken as raw inputs; the summary's
    ``dataset`` is then ``"user-data"`` and its ``data_file`` the path. ``y_public`` may be left out for the
    pipelines that read the public rows as features only; one that reads their labels (the registry's
    ``public_labels_use``: FedMD-NFDP) refuses such a split before any training, saying why.

    ``epsilon`` and ``delta`` in the summary are the claim the audit tests (the tight composition
    for FedAUXfdp; ∞, written null, for Fed-ZDA). ``trials=None`` keeps each audit's own default.
    ``progress``: report the steps on stderr (a spinner on a terminal, log lines every
    :data:`LOG_INTERVAL` seconds otherwise). ``accuracy_curve`` (default on): also release at every ε of
    :data:`CURVE_EPSILONS` (pipelines with an ε to calibrate only): one release of the round trained once
    for FedAUXfdp, one more training run each for the others (:class:`trainers.pipelines.registry.PipelineFit`).
    The curve's and the non-private runs use the in-process trainer, also with ``engine="flower"``.
    ``engine="flower"`` trains the round in Flower's simulation engine (:func:`flower_round_runner`);
    the audit still runs the pipeline's release step in process, and the delivered (ε, δ) is the
    larger of the audit's claim and the deployed round's certified guarantee.

    ``clients_per_round`` k (None: every client): the server selects k of the pipeline's clients
    uniformly without replacement (replace-one users); ``participation_probability`` q instead: each
    client independently with probability q (Poisson, add/remove-one users); not both
    (:func:`with_client_selection`; pipelines whose registry entry has no ``client_selection_fields``
    refuse either, saying why). The round, the non-private run and the curve train the selected
    clients only, and the noise is calibrated on the amplified user-level ledger. The canary audit
    samples the same selection in every trial and tests the amplified claim. The delivered (ε, δ)
    is the larger of the audit's claim and the released round's amplified guarantee ("tight").
    """
    # Every argument is checked before the trainers (and torch) load and before any training.
    dpmech.validation.integer_scalar("seed", seed, 0)
    if pipeline not in PIPELINE_NAMES:
        raise ValueError(f"pipeline must be one of {', '.join(PIPELINE_NAMES)} (got {pipeline!r})")
    if data_file is not None:
        if dataset is not None:
            raise ValueError(f"dataset must be None when data_file is given (got {dataset!r}): the data is the file's")
        if not isinstance(data_file, (str, pathlib.Path)):
            raise ValueError(f"data_file must be the path of an .npz file (got {type(data_file).__name__})")
        dataset = USER_DATA
    elif dataset is None:
        dataset = default_dataset(pipeline)
    else:
        dpmech.validation.choice("dataset", dataset, DATASET_NAMES)
    cache_dir = dpmech.validation.folder_or_none("cache_dir", cache_dir)
    epsilon = dpmech.validation.positive("epsilon", epsilon)
    delta = dpmech.validation.open_unit_interval("delta", delta)
    if trials is not None:
        dpmech.validation.integer_scalar("trials", trials, 1)
    progress = dpmech.validation.boolean("progress", progress)
    accuracy_curve = dpmech.validation.boolean("accuracy_curve", accuracy_curve)
    engine = dpmech.validation.choice("engine", engine, ENGINES)
    _check_client_selection(pipeline, clients_per_round, participation_probability, engine)
    selection = _selection(clients_per_round, participation_probability)[0]
    flower_round = flower_round_runner(pipeline) if engine == "flower" else None
    if not isinstance(out, (str, pathlib.Path)):
        raise ValueError(f"out must be a folder path (got {type(out).__name__})")
    try:
        folder = output_folder(str(out))
    except argparse.ArgumentTypeError as error:
        raise ValueError(f"out {error}") from None
    from trainers.data import load_arrays, load_dataset

    # The user's file is read and checked before the first progress line: a malformed one is one error line.
    user_data = None if data_file is None else load_arrays(data_file)
    public_labels_use = get_pipeline(pipeline).public_labels_use
    if isinstance(user_data, SplitData) and user_data.public_labels is None and public_labels_use:
        # A public/private split without y_public runs the pipelines that read public rows as features only
        # (registry: public_labels_use ""); one that reads their labels is refused before any training.
        raise ValueError(f"data file {str(data_file)!r} has no y_public: {pipeline} needs labels for the public rows: "
                         f"{public_labels_use}; add y_public to the file")
    audit_function = pipeline_audit(pipeline)
    mode = ("terminal" if sys.stderr.isatty() else "log") if progress else "off"
    # Calibrated before the first progress line, so that a budget the pipeline cannot split is one error line.
    config = with_client_selection(pipeline, pipeline_config(pipeline, epsilon, delta, dataset), clients_per_round,
                                   participation_probability)
    free_config, free_baseline, free_source = non_private_config(pipeline, delta, dataset)
    if free_config is not None:
        free_config = with_client_selection(pipeline, free_config, clients_per_round, participation_probability)
    curve_points = (sorted(set(CURVE_EPSILONS) | {float(epsilon)})
                    if accuracy_curve and get_pipeline(pipeline).calibrated else [])
    # The target's point is the run itself; the other points' configs, calibrated here like the target's.
    curve_configs = {point: with_client_selection(pipeline, pipeline_config(pipeline, point, delta, dataset),
                                                  clients_per_round, participation_probability)
                     for point in curve_points if point != epsilon}
    import joblib

    from trainers.threads import limited_threads

    # A round trained once (FedAUXfdp) is released at each ε by numpy post-processing that holds the GIL little:
    # with one thread per pool and a second core, its clients train in two threads and its curve is released in a
    # second thread beside the target's release, the non-private run and the audit. Each client's fit and each
    # release is a function of the data, the config and its own seeded Generators, every pool stays at one thread
    # whichever thread runs it, so the numbers are those of the sequential order.
    two_threads = get_pipeline(pipeline).fit_function_name is not None and threads == 1 and _usable_cores() >= 2
    # --threads caps every BLAS/OpenMP and torch pool for the whole job (the audit's torch fits ran at one
    # thread per core before), so the numbers do not depend on the machine's core count.
    with StepLog(mode) as log, limited_threads(threads):
        log.step(f"1/{STEPS} load the data (the noise is calibrated for the target budget)")
        data = load_dataset(dataset, cache_dir=cache_dir) if user_data is None else user_data
        log.step(f"2/{STEPS} train the one-shot federation ({pipeline})")
        with log.privacy_warnings():
            # Trained once; the run, the non-private baseline and the curve are its releases.
            with joblib.parallel_config(backend="threading") if two_threads else contextlib.nullcontext():
                fitted = fit_pipeline(pipeline, data, config, seed, threads=threads, n_jobs=2 if two_threads else None)
        background = None
        if curve_configs and two_threads:
            log.step(f"2/{STEPS} ε → accuracy curve: {pipeline} at ε = {', '.join(f'{p:g}' for p in curve_configs)} "
                     "(in a second thread, beside the next steps)")
            executor = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="dpmech-run-curve")
            background = executor.submit(_release_accuracies, fitted, list(curve_configs.values()), threads)
            executor.shutdown(wait=False)
        with log.privacy_warnings():
            if flower_round is None:
                result = fitted.release(config)
            else:
                # The pipeline's own settings for a deployed round (DP-Helmet's discrete shares, so that the SecAgg+
                # sum is certified at the target); the audit below still tests the in-process release as configured.
                round_config = dataclasses.replace(config, **dict(get_pipeline(pipeline).flower_config_fields))
                result = flower_round(pipeline, data, round_config, seed)
        if free_config is not None:
            log.step(f"2/{STEPS} train the non-private baseline ({pipeline}, ε = ∞)")
            free_accuracy = _quiet_accuracy(fitted, free_config)
        else:
            free_accuracy = (float(result.accuracy) if free_baseline == THE_RUN else
                             float(result.baselines[free_baseline]) if free_baseline in result.baselines else None)
        curve_accuracies = {float(epsilon): float(result.accuracy)}
        if background is None:
            for point, curve_config in curve_configs.items():
                log.step(f"2/{STEPS} ε → accuracy curve: {pipeline} at ε = {point:g}")
                curve_accuracies[point] = _quiet_accuracy(fitted, curve_config)
        log.step(f"3/{STEPS} account (basic and tight)")
        guarantees = {name: _guarantee_record(result, name, guarantee) for name, guarantee in result.guarantees.items()}
        log.step(f"4/{STEPS} {_audit_step_name(audit_function)}")
        options = {} if trials is None else {"trials": trials}
        # With client selection the canary audit samples the selection in every trial (the config names it).
        if (flower_round is None and selection is None
                and "result" in inspect.signature(audit_function).parameters):
            # The audit reuses the round trained above instead of training it again; a round deployed on Flower
            # is not the in-process run the audit samples releases from, so the audit trains that one itself.
            options["result"] = result
        with log.privacy_warnings():
            audit = audit_function(data, config, seed=seed, **options)
        if background is not None:
            curve_accuracies.update(zip(curve_configs, background.result()))
        curve = [{"epsilon": point, "accuracy": curve_accuracies[point]} for point in curve_points]
        if curve and free_accuracy is not None:
            curve.append({"epsilon": math.inf, "accuracy": free_accuracy})
        log.step(f"5/{STEPS} write the report")
        folder.mkdir(parents=True, exist_ok=True)
        write_report(audit, folder / "audit", title=f"{pipeline} audit", extra={"seed": seed})
        delivered_epsilon, delivered_delta = float(audit.eps_claimed), float(audit.delta)
        if flower_round is not None or selection is not None:
            # The deployed round certifies its own guarantee (quantisation, dropouts), and a round with client
            # selection its amplified one; either may exceed the release the audit tests: the report states the larger.
            deployed = result.guarantees["tight"]
            delivered_epsilon = max(delivered_epsilon, float(deployed.epsilon))
            delivered_delta = max(delivered_delta, float(deployed.delta))
        target_met = delivered_epsilon <= epsilon and delivered_delta <= delta
        target_note = (
            f"the {pipeline} pipeline meets the target (ε, δ) = ({epsilon_text(epsilon)}, {delta_text(delta)})"
            if target_met else
            f"the {pipeline} pipeline cannot meet the target (ε, δ) = ({epsilon_text(epsilon)}, {delta_text(delta)}): "
            f"it delivers (ε, δ) = ({epsilon_text(delivered_epsilon)}, {delta_text(delivered_delta)})"
        )
        audit_record = audit.as_dict()
        audit_record["mia"] = {**audit_record["mia"], "num_out": round(1.0 / audit_record["mia"]["fpr_resolution"])}
        audit_record["roc_crossings"] = roc_crossings(audit)
        summary = {
            "pipeline": pipeline,
            "dataset": dataset,
            **({} if data_file is None else {"data_file": str(data_file)}),
            "seed": seed,
            "trials": trials,
            "engine": engine,
            "round": round_record(result),
            "target": {"epsilon": epsilon, "delta": delta, "delivered_epsilon": delivered_epsilon,
                       "delivered_delta": delivered_delta, "met": target_met, "note": target_note,
                       # With client selection the delivered numbers are the amplified guarantee's, of its relation.
                       **({} if selection is None else {"relation": guarantees["tight"]["relation"]})},
            "accuracy": float(result.accuracy),
            "baselines": {name: float(value) for name, value in result.baselines.items()},
            "non_private": {"accuracy": free_accuracy, "source": free_source,
                            "model": "separate run" if free_config is not None else free_baseline},
            "accuracy_curve": curve,
            "guarantees": guarantees,
            "epsilon": delivered_epsilon,
            "delta": delivered_delta,
            "eps_lb": float(audit.eps_lb),
            "audit": audit_record,
            # One list, each statement once: the pipeline's notes, then the audit's.
            "notes": _distinct_notes([*result.notes, *audit_record["notes"]]),
            "config": result.summary()["config"],
            "report_dir": str(folder.resolve()),
            "files": list(FILES),
        }
        record = json_record(summary)
        _accuracy_plot(folder / "accuracy.png", record, f"{pipeline} on {dataset}")
        (folder / "summary.json").write_text(json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n",
                                             encoding="utf-8")
        (folder / "report.md").write_text(_markdown(record), encoding="utf-8")
        log.step("done")
    return record


__all__ = ["CURVE_EPSILONS", "DEFAULT_DELTA", "DEFAULT_EPSILON", "DEFAULT_PIPELINE", "GDP_SHAPE_METHODS",
           "SUMMARY_SCHEMA", "StepLog", "lower_bound_validity", "roc_crossings", "round_record", "run_main_job"]
