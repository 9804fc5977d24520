"""``dpmech run``: the command of the main job (:mod:`trainers.main_job`), one of dpmech's own commands.

Registering the command imports nothing heavy: the options are checked as they are
parsed (:mod:`dpmech.cli.arguments`), and the main job, torch and the trainers load
only in the handler. Bad input raises ValueError, which dpmech's ``main`` turns into
exit status 2 and one line on stderr.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from dpmech.cli import arguments
from dpmech.cli.output import emit

from .pipelines.registry import PIPELINE_NAMES

# Written out so that registering a command does not import the data module (numpy, scikit-learn);
# tests/trainers/test_cli.py checks them against trainers.data.DATASETS.
DATASET_NAMES = ("digits", "mnist1d", "mnist1d-cnn")
# Where ``dpmech run`` trains the round (trainers.main_job.run_main_job's ``engine``).
ENGINES = ("inprocess", "flower")
SEED = arguments.integer_in(0)
TRIALS = arguments.integer_in(1, arguments.MAX_DRAWS)


def round_arguments(parser) -> None:
    """The options that describe a round of a seed pipeline: data, target budget, seed, audit trials, output."""
    parser.add_argument("--dataset", type=arguments.choice(DATASET_NAMES), default=None,
                        help="digits, mnist1d (raw signals) or mnist1d-cnn (features of a CNN trained on a public "
                             "split; fedauxfdp and dphelmet only), all made locally; default: the pipeline's own, "
                             "mnist1d-cnn for fedauxfdp and digits for the others")
    parser.add_argument("--cache-dir", metavar="DIR", type=arguments.output_folder, default=None,
                        help="where mnist1d-cnn's generated data and public CNN are cached "
                             "(default $XDG_CACHE_HOME/dpmech or ~/.cache/dpmech)")
    parser.add_argument("--epsilon", type=arguments.positive_real, default=1.0,
                        help="target ε > 0 of the round (default 1)")
    parser.add_argument("--delta", type=arguments.unit_open, default=1e-5,
                        help="target δ in (0, 1) of the round (default 1e-5)")
    parser.add_argument("--seed", type=SEED, default=0, help="root seed, an integer >= 0 (default 0)")
    parser.add_argument("--trials", type=TRIALS, default=None,
                        help="canary trials (releases per side, runs, or canary labels; default: the audit's own)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def register_run(subparsers) -> None:
    """Add ``run``, the main job: calibrate, train, account, audit and write a report."""
    run = subparsers.add_parser("run", help="the main job: calibrate, train a one-shot federation, account, audit, report")
    run.add_argument("--pipeline", type=arguments.choice(PIPELINE_NAMES), default="fedauxfdp",
                     help="fedauxfdp (default), dphelmet, fedmd-nfdp, fedgm or fedzda")
    round_arguments(run)
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
    from .pipelines.targets import _check_dataset, default_dataset

    _check_dataset(args.pipeline, default_dataset(args.pipeline) if args.dataset is None else args.dataset)

    from audits.report import delta_text, epsilon_text, lower_bound_text

    from .main_job import lower_bound_validity, run_main_job

    summary = run_main_job(args.pipeline, args.dataset, args.epsilon, args.delta, args.seed, args.out,
                           progress=True, trials=args.trials, threads=args.threads,
                           accuracy_curve=args.accuracy_curve, engine=args.engine, cache_dir=args.cache_dir)
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
        "delivered (ε, δ)": f"({epsilon_text(target['delivered_epsilon'])}, {delta_text(target['delivered_delta'])})",
        "target met": "yes" if target["met"] else "NO",
        "audit ε_lb": f"{lower_bound_text(summary['eps_lb'])} ({lower_bound_validity(summary['audit'])})",
        "report": str(pathlib.Path(summary["report_dir"]) / "report.md"),
    }
    emit(shown, False, "dpmech run")


__all__ = ["DATASET_NAMES", "ENGINES", "register_run", "round_arguments"]
