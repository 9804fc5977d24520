"""``dpmech audit``: one of dpmech's own commands (entry point ``audit`` of group ``dpmech.commands``).

Subcommands:

* ``gaussian-output``: the white-box audit of dpmech's Gaussian output
  mechanism (:func:`audits.attacks.audit_gaussian_output`);
* ``randomized-response``: the one-run audit of dpmech's K-ary randomized
  response (:func:`audits.attacks.audit_label_randomized_response`);
* ``scores``: a report for the user's own IN/OUT attack scores
  (:func:`audits.report.audit_scores_report`);
* one subcommand per seed pipeline (``fedauxfdp``, ``dphelmet``, ...): train a
  round on an embedded dataset and audit it end to end
  (:mod:`audits.attacks.pipelines`).

Importing this module imports nothing heavy, so that ``dpmech --help`` reads
:data:`HELP`; registering the command reads the pipelines' registry and the
audits' estimator names, and the attacks load only in the handlers. Bad input
raises ValueError, which dpmech's ``main`` turns into exit status 2 and one
line on stderr. ``--repetitions R`` repeats the audit with the seeds
of :mod:`audits.attacks.repetitions` (through joblib, ``--jobs``); the printed
bounds are those of repetition 0, and the summary over repetitions is labelled
as such (it is not itself a bound at α).
"""

from __future__ import annotations

import argparse
import sys

from dpmech.cli import arguments

from .options import SEED, TRIALS, client_selection, client_selection_arguments, round_arguments

HELP = "empirical ε lower bounds: dpmech's mechanisms, the seed pipelines, your own IN/OUT scores"

GAUSSIAN_FIELDS = ("mu_claimed", "mu_actual", "mu_lb", "eps_claimed", "eps_lb", "delta", "alpha", "method",
                   "valid_as", "sensitivity", "sigma_calibrated", "sigma_scale", "sigma_used", "trials")
RANDOMIZED_RESPONSE_FIELDS = ("eps_claimed", "eps_lb", "delta", "alpha", "method", "valid_as", "num_classes",
                              "canaries", "guesses", "correct")


def _emit(record: dict, as_json: bool, title: str, directions: dict | None = None,
          replaced: dict | None = None) -> None:
    """``record`` as one JSON object (∞ as null, named in ``non_finite``: :func:`audits.report.json_record`) or a table.

    In the table ε, δ and μ have 4 significant digits on the side ``directions`` names, and a TPR
    at an FPR below the resolution 1/n_out reads "n/a (resolution 1/n_out)"
    (:func:`audits.report.tpr_text`); the JSON keeps the doubles, with ``fpr_resolution``.
    ``replaced``: key -> the text shown for it in the table instead (e.g. ε_lb with its label).
    """
    if as_json:
        import json

        from audits.report import json_record

        print(json.dumps(json_record(record), ensure_ascii=False, allow_nan=False))
        return
    from audits.report import tpr_text
    from dpmech.cli.output import emit
    from dpmech.directed_rounding import delta_text, epsilon_text, lower_bound_text

    # ε, δ and μ to 4 significant digits on their safe side, as in the reports.
    directions = directions or {}
    texts = {"up": epsilon_text, "down": lower_bound_text}
    shown = {key: delta_text(value) if key == "delta" else texts[directions[key]](value)
             for key, value in record.items()
             if isinstance(value, float) and key.startswith(("eps", "delta", "mu_")) and directions.get(key) in texts}
    if "fpr_resolution" in record:
        num_out = round(1.0 / record["fpr_resolution"])
        for key, fpr in (("tpr_at_0_1_percent_fpr", 1e-3), ("tpr_at_1_percent_fpr", 1e-2)):
            if key in record:
                shown[key] = tpr_text(record[key], fpr, num_out)
    emit(record, False, title, directions, {**shown, **(replaced or {})})


# Every option is checked as it is parsed (dpmech.cli.arguments), before numpy, torch or a trainer loads.
_ALPHA = arguments.unit_open
_MAX_REPETITIONS = 10_000
_MAX_JOBS = 1024


def _common(parser) -> None:
    parser.add_argument("--seed", type=SEED, default=0, help="root seed, an integer >= 0 (default 0)")
    parser.add_argument("--alpha", type=_ALPHA, default=0.05, help="significance of the bound, in (0, 1) (default 0.05)")
    parser.add_argument("--repetitions", type=arguments.integer_in(1, _MAX_REPETITIONS), default=1,
                        help="independent repetitions (default 1)")
    parser.add_argument("--jobs", type=arguments.integer_in(1, _MAX_JOBS), default=1,
                        help="joblib workers for the repetitions (default 1)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--out", metavar="DIR", type=arguments.output_folder,
                        help="write audit.json, audit.md, scores.npz and roc.png here")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``audit`` and its subcommands to the dpmech parser."""
    from audits.result import DEFAULT_POWER_MARGIN, SCORES_ESTIMATORS
    from trainers.pipelines.registry import PIPELINES

    audit = subparsers.add_parser("audit", help=HELP)
    commands = audit.add_subparsers(dest="audit_command", metavar="AUDIT", required=True, parser_class=type(audit))

    gaussian = commands.add_parser(
        "gaussian-output", help="white-box audit of the Gaussian output mechanism calibrated by dpmech"
    )
    gaussian.add_argument("--epsilon", type=arguments.positive_real, required=True, help="claimed ε > 0")
    gaussian.add_argument("--delta", type=arguments.unit_open, required=True, help="claimed δ in (0, 1)")
    # Outside [1e-100, 1e100] the canary's parameter difference underflows to 0 or its norm overflows
    # (audits.attacks.gaussian_output), so the range is refused here rather than failing there.
    gaussian.add_argument("--sensitivity", type=arguments.real_in(1e-100, 1e100, high_open=False), default=1.0,
                          help="L2 sensitivity Δ in [1e-100, 1e100] (default 1)")
    gaussian.add_argument("--trials", type=TRIALS, default=10_000,
                          help=f"releases per side, at most {arguments.MAX_DRAWS:g} (default 10000)")
    gaussian.add_argument("--sigma-scale", type=arguments.positive_real, default=1.0,
                          help="multiply the calibrated σ by this factor > 0, to show detection (default 1)")
    _common(gaussian)
    gaussian.set_defaults(handler=_gaussian_output)

    randomized = commands.add_parser(
        "randomized-response", help="one-run audit of dpmech's K-ary randomized response with canary labels"
    )
    randomized.add_argument("--epsilon", type=arguments.positive_real, required=True,
                            help="ε > 0 of the randomized response")
    randomized.add_argument("--num-classes", type=arguments.integer_in(2, arguments.MAX_DRAWS), required=True,
                            help="number of classes K >= 2")
    randomized.add_argument("--canaries", type=TRIALS, required=True, help="number of canary labels m >= 1")
    randomized.add_argument("--delta", type=arguments.real_in(0.0, 1.0), default=0.0,
                            help="δ in [0, 1) of the tested claim (default 0)")
    _common(randomized)
    randomized.set_defaults(handler=_randomized_response)

    scores = commands.add_parser(
        "scores", help="audit your own attack's IN/OUT scores: ε lower bound, MIA metrics, ROC plot with bands"
    )
    scores.add_argument("in_scores", metavar="IN.npy", help=f"the members' (IN) scores: {SCORES_FORMAT}")
    scores.add_argument("out_scores", metavar="OUT.npy", help=f"the non-members' (OUT) scores: {SCORES_FORMAT}")
    scores.add_argument("--epsilon", type=arguments.positive_real, help="claimed ε > 0 to test (with --delta)")
    scores.add_argument("--delta", type=arguments.real_in(0.0, 1.0), help="claimed δ in [0, 1) (with --epsilon)")
    scores.add_argument("--lower-is-in", action="store_true",
                        help="a lower score means IN (e.g. a loss); only the declared orientation is tested")
    scores.add_argument("--both-directions", action="store_true",
                        help="test both orientations under one α (for scores whose orientation is not known in advance)")
    scores.add_argument("--estimator", choices=SCORES_ESTIMATORS, default="clopper-pearson",
                        help="clopper-pearson (default: no assumption on the privacy curve) or gdp (an estimate that "
                             "assumes the GDP shape; needs --delta > 0)")
    scores.add_argument("--power-margin", type=arguments.positive_real, default=DEFAULT_POWER_MARGIN,
                        help=f"state the test's power against a true ε this far above the claim "
                             f"(default {DEFAULT_POWER_MARGIN:g})")
    scores.add_argument("--trials", choices=("natural", "independent"), default="natural",
                        help="natural (default: members/non-members of one model; ε is an estimate) or independent "
                             "(each score from its own randomised trial; the bound is certified)")
    scores.add_argument("--alpha", type=_ALPHA, default=0.05, help="significance of the bound, in (0, 1) (default 0.05)")
    scores.add_argument("--json", action="store_true", help="print one JSON object")
    scores.add_argument("--out", metavar="DIR", type=arguments.output_folder,
                        help="write audit.json, audit.md, scores.npz and roc.png here")
    scores.set_defaults(handler=_user_scores)

    for name, entry in PIPELINES.items():
        pipeline = commands.add_parser(name, help=f"train a {name} round and audit it: white-box canary and MIA")
        round_arguments(pipeline)
        if entry.client_selection_fields is not None:
            # The options of dpmech run, for the pipelines whose server can select clients (registry).
            client_selection_arguments(pipeline, "the noise is calibrated on the amplified user-level ledger, and "
                                                 "the canary audit samples the selection in every trial and tests "
                                                 "the amplified claim")
        pipeline.add_argument("--alpha", type=_ALPHA, default=0.05,
                              help="significance of the bound, in (0, 1) (default 0.05)")
        pipeline.add_argument("--out", metavar="DIR", type=arguments.output_folder,
                              help="write audit.json, audit.md, scores.npz and roc.png here")
        pipeline.set_defaults(handler=_pipeline_audit, pipeline=name)


def _pipeline_audit(args) -> None:
    from rich.console import Console

    from trainers.data import load_dataset
    from trainers.pipelines.registry import get_pipeline
    from trainers.pipelines.targets import default_dataset, pipeline_config

    from audits.attacks.pipelines import audit_function as pipeline_audit

    # Checked, as by dpmech run, before the data loads: the options together, then against the pipeline's clients.
    selects = get_pipeline(args.pipeline).client_selection_fields is not None
    clients_per_round, participation_probability = client_selection(args) if selects else (None, None)
    audit_function = pipeline_audit(args.pipeline)
    dataset = default_dataset(args.pipeline) if args.dataset is None else args.dataset
    config = pipeline_config(args.pipeline, args.epsilon, args.delta, dataset)
    selection = clients_per_round is not None or participation_probability is not None
    if selection:
        from .main_job import RELATION_TEXT, UNIT_TEXT, with_client_selection

        config = with_client_selection(args.pipeline, config, clients_per_round, participation_probability,
                                       command=f"dpmech audit {args.pipeline}")
    with Console(stderr=True).status(f"training and auditing a {args.pipeline} round"):
        trials = {} if args.trials is None else {"trials": args.trials}
        data = load_dataset(dataset, cache_dir=args.cache_dir)
        audit = audit_function(data, config, seed=args.seed, alpha=args.alpha, **trials)
    # With client selection the audited claim is the amplified one, of its own relation: named beside the
    # numbers, with what it protects and the ε the round would claim without the selection.
    amplified = {} if not selection else {
        "claim": audit.claim, "relation": f"{UNIT_TEXT[config.privacy_unit]}, {RELATION_TEXT[config.relation]}",
        "eps_claimed_without_selection": audit.measurements["epsilon_claimed_without_selection"]}
    record = {"pipeline": args.pipeline, "dataset": dataset, **amplified, "eps_claimed": audit.eps_claimed,
              "eps_lb": audit.eps_lb, "delta": audit.delta, "method": audit.method, "valid_as": audit.valid_as,
              "mu_claimed": audit.mu_claimed, "mu_lb": audit.mu_lb, "mia_attack": audit.mia["attack"],
              "auc": audit.mia["auc"], "tpr_at_0_1_percent_fpr": audit.mia["tpr_at_0_1_percent_fpr"],
              "tpr_at_1_percent_fpr": audit.mia["tpr_at_1_percent_fpr"], "fpr_resolution": audit.mia["fpr_resolution"],
              "seed": args.seed}
    if args.out is not None:
        from audits.report import write_report

        paths = write_report(audit, args.out, title=f"{args.pipeline} audit", extra={"seed": args.seed})
        record["report"] = str(paths["json"].parent)
    _emit(record, args.json, f"{args.pipeline} audit", DIRECTIONS)


# How each printed number is rounded in the table: upper bounds and calibrated noise up, certified
# lower bounds (and the noise actually used, which must not be overstated) down.
DIRECTIONS = {"mu_claimed": "up", "eps_claimed": "up", "eps_claimed_without_selection": "up", "delta": "up", "sigma_calibrated": "up", "epsilon": "up",
              "epsilon_basic": "up", "target_epsilon": "up", "target_delta": "up", "mu_lb": "down", "eps_lb": "down",
              "mu_actual": "down", "sigma_used": "down", "eps_lb_median_over_repetitions": "down",
              "mu_lb_median_over_repetitions": "down"}


def _finish(results: list, args, fields, title: str) -> None:
    import numpy as np

    from audits.attacks import SEED_DERIVATION

    first = results[0]
    record = {name: getattr(first, name) for name in fields}
    record["threat_model"] = first.threat_model.access
    record["seed"] = args.seed
    record["repetitions"] = args.repetitions
    summary = {}
    if args.repetitions > 1:
        bounds = np.array([result.eps_lb for result in results])
        summary = {
            "eps_lb_median_over_repetitions": float(np.median(bounds)),
            "repetitions_with_eps_lb_above_claim": int(np.sum(bounds > first.eps_claimed)),
        }
        if hasattr(first, "mu_lb"):
            summary["mu_lb_median_over_repetitions"] = float(np.median([result.mu_lb for result in results]))
    record.update(summary)
    if args.out is not None:
        from audits.report import write_report

        extra = {"seed": args.seed, "repetition": 0, "repetitions": args.repetitions,
                 "seed_derivation": SEED_DERIVATION, **summary}
        paths = write_report(first, args.out, title=title, extra=extra)
        record["report"] = str(paths["json"].parent)
    _emit(record, args.json, title, DIRECTIONS)


# The attacks (and scipy.stats behind them) load only when an audit runs, so that
# registering this subcommand costs every other dpmech command nothing.
def _gaussian_output(args) -> None:
    import math

    from dpmech import calibrate_gaussian

    # The noise actually drawn is σ·scale: it must be a positive finite double, which the ranges of the
    # two options alone do not guarantee.
    used = calibrate_gaussian(args.epsilon, args.delta, args.sensitivity) * args.sigma_scale
    if not (math.isfinite(used) and used > 0.0):
        raise ValueError(f"--sigma-scale times the calibrated sigma must be a positive finite double (got {used!r}); "
                         "choose a --sigma-scale nearer 1")
    from audits.attacks import audit_gaussian_output, run_repetitions

    results = run_repetitions(
        audit_gaussian_output, repetitions=args.repetitions, seed=args.seed, n_jobs=args.jobs,
        progress=args.repetitions > 1 and sys.stderr.isatty(), epsilon=args.epsilon, delta=args.delta,
        sensitivity=args.sensitivity, trials=args.trials, sigma_scale=args.sigma_scale, alpha=args.alpha,
    )
    _finish(results, args, GAUSSIAN_FIELDS, "Gaussian output perturbation: white-box canary, GDP bound")


def _randomized_response(args) -> None:
    from audits.attacks import audit_label_randomized_response, run_repetitions

    results = run_repetitions(
        audit_label_randomized_response, repetitions=args.repetitions, seed=args.seed, n_jobs=args.jobs,
        progress=args.repetitions > 1 and sys.stderr.isatty(), epsilon=args.epsilon,
        num_classes=args.num_classes, num_canaries=args.canaries, alpha=args.alpha, delta=args.delta,
    )
    _finish(results, args, RANDOMIZED_RESPONSE_FIELDS, "Label randomized response: one-run audit")


SCORES_FORMAT = "a .npy file (numpy.save) of one 1-D array of finite real numbers"
_NPY_MAGIC = b"\x93NUMPY"


def _load_scores(name: str, path: str):
    """The scores in ``path``, or ValueError naming the file and the format expected (never numpy's own message)."""
    import numpy as np

    where = f"{name} ({path!r})"
    try:
        with open(path, "rb") as file:
            start = file.read(len(_NPY_MAGIC))
    except OSError as error:
        raise ValueError(f"{where} cannot be read ({error.strerror or type(error).__name__}); "
                         f"expected {SCORES_FORMAT}") from None
    if start != _NPY_MAGIC:
        kind = "an .npz archive" if start.startswith(b"PK") else "not a .npy file"
        raise ValueError(f"{where} is {kind}; expected {SCORES_FORMAT}")
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        # numpy refuses object arrays (which it would unpickle) and truncated or corrupt headers.
        raise ValueError(f"{where} holds Python objects or is damaged; expected {SCORES_FORMAT}") from None
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{where} holds dtype {array.dtype}; expected {SCORES_FORMAT}")
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{where} holds an array of shape {array.shape}; expected {SCORES_FORMAT}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{where} holds a non-finite number ({array[~np.isfinite(array)][0]!r}); "
                         f"expected {SCORES_FORMAT}")
    return array


def _user_scores(args) -> None:
    from audits.report import audit_scores_report
    from dpmech.directed_rounding import lower_bound_text

    in_scores = _load_scores("IN.npy", args.in_scores)
    out_scores = _load_scores("OUT.npy", args.out_scores)
    audit = audit_scores_report(in_scores, out_scores, epsilon=args.epsilon, delta=args.delta,
                                higher_is_in=not args.lower_is_in, trials=args.trials, alpha=args.alpha,
                                estimator=args.estimator, both_directions=args.both_directions,
                                power_margin=args.power_margin, out=args.out)
    record = {"eps_claimed": audit.eps_claimed, "delta": audit.delta, "eps_lb": audit.eps_lb,
              "eps_lb_label": audit.eps_lb_label, "valid_as": audit.valid_as, "method": audit.method,
              "alpha": audit.alpha, "verdict": audit.verdict, "directions": audit.as_dict()["directions"]}
    if audit.mu_lb is not None:
        record["mu_lb"] = audit.mu_lb
    record.update(audit.mia)
    if args.out is not None:
        record["report"] = str(args.out)
    if args.json:
        _emit({**record, "verdict_text": audit.verdict_text, "power": audit.power, "notes": list(audit.notes)},
              True, "")
        return
    # In the table ε_lb carries its label beside the number; the verdict and notes follow as sentences.
    _emit({key: value for key, value in record.items() if key != "eps_lb_label"}, False, "audit of IN/OUT scores",
          DIRECTIONS, {"eps_lb": f"{lower_bound_text(audit.eps_lb)} ({audit.eps_lb_label})"})
    print(f"verdict: {audit.verdict_text}")
    for note in audit.notes:
        print(f"note: {note}")


# Read by dpmech --help (dpmech.cli.main) without registering the command.
register.help = HELP

__all__ = ["HELP", "register"]
