"""``dpmech run``: the command of the main job (:mod:`app.main_job`), one of dpmech's own commands
(entry point ``run`` of group ``dpmech.commands``).

Importing this module imports nothing heavy, so that ``dpmech --help`` reads :data:`HELP`; registering
the command reads the pipelines' registry (:mod:`trainers.pipelines.registry`, light), and the options
are checked as they are parsed (:mod:`dpmech.cli.arguments`). The main job, torch and the trainers load
only in the handler. Bad input raises ValueError, which dpmech's ``main`` turns into exit status 2 and
one line on stderr.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from dpmech.cli import arguments

from .options import (DEFAULT_PIPELINE, ENGINES, client_selection, client_selection_arguments, pipeline_choices,
                      round_arguments)

HELP = "the main job: calibrate, train a one-shot federation, account, audit, report"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``run``, the main job: calibrate, train, account, audit and write a report."""
    from trainers.pipelines.registry import PIPELINE_NAMES, PIPELINES

    # The pipelines that read the public rows' labels, so that a split without y_public is refused for them.
    public_labels_readers = " and ".join(name for name, entry in PIPELINES.items() if entry.public_labels_use)
    run = subparsers.add_parser("run", help=HELP)
    run.add_argument("--pipeline", type=arguments.choice(PIPELINE_NAMES), default=DEFAULT_PIPELINE,
                     help=pipeline_choices())
    round_arguments(run)
    run.add_argument("--data", metavar="FILE.npz", default=None,
                     help="your own data instead of --dataset: an .npz file (numpy.savez) of X, real features of "
                          "shape (n, d), and y, integer labels 0..C-1 of shape (n,); or your public/private split, "
                          "X_public and y_public (m rows), X_private and y_private (n rows), kept as given (the "
                          "test set is held out of the private rows; y_public may be left out except for "
                          f"{public_labels_readers}, which trains on the public labels); checked as the built-in "
                          "sets and taken as raw inputs")
    client_selection_arguments(run, "only the selected clients train, and the noise is calibrated on the amplified "
                                    "user-level ledger (dphelmet, at user level; the others refuse it and say why)")
    run.add_argument("--out", metavar="DIR", type=arguments.output_folder, default="dpmech-report",
                     help="report folder (default ./dpmech-report)")
    run.add_argument("--threads", type=arguments.integer_in(1, 1024), default=1,
                     help="BLAS/OpenMP and torch threads per process, 1 to 1024 (default 1: faster on small machines)")
    run.add_argument("--engine", type=arguments.choice(ENGINES), default="inprocess",
                     help="inprocess (default) or flower: the round in Flower's simulation engine "
                          "(dphelmet over SecAgg+, fedauxfdp; needs the [flower] extra)")
    run.add_argument("--accuracy-curve", action=argparse.BooleanOptionalAction, default=True,
                     help="the ε → accuracy curve at ε = 0.25 … 8 (default: on): fedauxfdp is trained once and "
                          "noised per ε, the others train once more per ε; --no-accuracy-curve releases only the "
                          "target and the non-private run")
    run.set_defaults(handler=_run)


def _run(args) -> None:
    # A dataset the pipeline cannot train on is refused before the main job imports torch and the audits
    # (about 5 s of CPU; this check loads only the data module): run_main_job makes the same check later.
    from trainers.data import USER_DATA
    from trainers.pipelines.targets import check_dataset, default_dataset

    clients_per_round, participation_probability = client_selection(args)
    if args.data is not None and args.dataset is not None:
        raise ValueError("--data and --dataset exclude each other: the data is the file's (give one of them)")
    check_dataset(args.pipeline, USER_DATA if args.data is not None else
                  default_dataset(args.pipeline) if args.dataset is None else args.dataset)

    from dpmech.cli.output import emit
    from dpmech.directed_rounding import delta_text, epsilon_text, lower_bound_text

    from .main_job import lower_bound_validity, run_main_job

    summary = run_main_job(args.pipeline, args.dataset, args.epsilon, args.delta, args.seed, args.out,
                           progress=True, trials=args.trials, threads=args.threads,
                           accuracy_curve=args.accuracy_curve, engine=args.engine, cache_dir=args.cache_dir,
                           data_file=args.data, clients_per_round=clients_per_round,
                           participation_probability=participation_probability)
    target = summary["target"]
    if not target["met"]:
        print(f"dpmech run: warning: {target['note']}", file=sys.stderr)
    if args.json:
        import json

        # The summary is already plain JSON, the very object written to summary.json.
        print(json.dumps(summary, ensure_ascii=False, allow_nan=False))
        return
    non_private = summary["non_private"]["accuracy"]
    # Every value is text already, each number on its safe side (4 significant digits, as in the report).
    shown = {
        "pipeline": summary["pipeline"], "dataset": summary["dataset"],
        "accuracy": f"{summary['accuracy']:.4f}",
        "non-private accuracy": "n/a" if non_private is None else f"{non_private:.4f}",
        "target (ε, δ)": f"({epsilon_text(target['epsilon'])}, {delta_text(target['delta'])})",
        "delivered (ε, δ)": f"({epsilon_text(target['delivered_epsilon'])}, {delta_text(target['delivered_delta'])})"
                            + (f", {target['relation']}" if "relation" in target else ""),
        "target met": "yes" if target["met"] else "NO",
        "audit ε_lb": f"{lower_bound_text(summary['eps_lb'])} ({lower_bound_validity(summary['audit'])}"
                      + (f", {target['relation']}" if "relation" in target else "") + ")",
        "report": str(pathlib.Path(summary["report_dir"]) / "report.md"),
    }
    emit(shown, False, "dpmech run")


# Read by dpmech --help (dpmech.cli.main) without registering the command.
register.help = HELP

__all__ = ["HELP", "register"]
