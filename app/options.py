"""The options that ``dpmech run`` and ``dpmech audit PIPELINE`` share, checked as they are parsed.

Registering a command imports nothing heavy (:mod:`dpmech.cli.arguments` only): the trainers, torch
and the audits load in the commands' handlers.
"""

from __future__ import annotations

import argparse

from dpmech.cli import arguments

# Written out so that registering a command does not import the data module (numpy, scikit-learn);
# tests/app/test_run_command.py checks them against trainers.data.DATASETS.
DATASET_NAMES = ("digits", "mnist1d", "mnist1d-cnn")
# Where ``dpmech run`` trains the round (app.main_job.run_main_job's ``engine``).
ENGINES = ("inprocess", "flower")
# How ``dpmech run --client-sampling`` selects a round's clients: k of n without replacement, or each with probability q.
CLIENT_SAMPLINGS = ("uniform", "poisson")
# The pipeline of ``dpmech run`` when none is named.
DEFAULT_PIPELINE = "fedauxfdp"
SEED = arguments.integer_in(0)
TRIALS = arguments.integer_in(1, arguments.MAX_DRAWS)


def _listed(names) -> str:
    """"a", "a and b", "a, b and c"."""
    names = list(names)
    return " and ".join(names) if len(names) < 3 else f"{', '.join(names[:-1])} and {names[-1]}"


def pipeline_choices() -> str:
    """The registered pipelines in words, the default marked: "fedauxfdp (default), dphelmet, ... or fedzda"."""
    from trainers.pipelines.registry import PIPELINE_NAMES

    names = [f"{name} (default)" if name == DEFAULT_PIPELINE else name for name in PIPELINE_NAMES]
    return f"{', '.join(names[:-1])} or {names[-1]}"


def round_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that describe a round of a seed pipeline: data, target budget, seed, audit trials, output.
    The dataset's help reads the pipelines' registry entries (which train on features, their defaults)."""
    from trainers.pipelines.registry import PIPELINES

    feature_pipelines = _listed(name for name, pipeline in PIPELINES.items() if pipeline.trains_on_features)
    defaults = _listed([f"{pipeline.default_dataset} for {name}" for name, pipeline in PIPELINES.items()
                        if pipeline.default_dataset != "digits"] + ["digits for the others"])
    parser.add_argument("--dataset", type=arguments.choice(DATASET_NAMES), default=None,
                        help="digits, mnist1d (raw signals) or mnist1d-cnn (features of a CNN trained on a public "
                             f"split; {feature_pipelines} only), all made locally; default: the pipeline's own, "
                             f"{defaults}")
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


def client_selection_arguments(parser: argparse.ArgumentParser, effect: str) -> None:
    """``--client-sampling``, ``--clients-per-round K`` and ``--participation-probability Q``: how the server
    selects a round's clients (``dpmech run`` and ``dpmech audit`` of a pipeline that selects clients);
    ``effect``: what the selection changes in that command, ending the first option's help. Read the
    parsed values with :func:`client_selection`."""
    parser.add_argument("--client-sampling", type=arguments.choice(CLIENT_SAMPLINGS), default=None,
                        help="how the server selects the clients of a round: uniform (K of n without replacement, "
                             "replace-one users; with --clients-per-round K, which alone also means uniform) or "
                             "poisson (each client independently, add/remove-one users; with "
                             f"--participation-probability Q); {effect}")
    parser.add_argument("--clients-per-round", metavar="K", type=arguments.integer_in(1), default=None,
                        help="the server selects K of the pipeline's clients per round, uniformly without replacement "
                             "from the seed (--client-sampling uniform)")
    parser.add_argument("--participation-probability", metavar="Q",
                        type=arguments.real_in(0.0, 1.0, low_open=True, high_open=False), default=None,
                        help="with --client-sampling poisson: each client takes part in a round independently with "
                             "probability Q in (0, 1], drawn from the seed")


def client_selection(args: argparse.Namespace) -> tuple[int | None, float | None]:
    """(clients_per_round, participation_probability) from the options of :func:`client_selection_arguments`;
    ValueError naming the options when they do not fit together (the pipeline and its clients check the rest)."""
    k, q = args.clients_per_round, args.participation_probability
    if k is not None and q is not None:
        raise ValueError("--clients-per-round and --participation-probability exclude each other: give K with "
                         "--client-sampling uniform or Q with --client-sampling poisson")
    sampling = args.client_sampling
    if sampling == "poisson" and q is None:
        raise ValueError("--client-sampling poisson needs --participation-probability Q in (0, 1]"
                         + (" (--clients-per-round is for --client-sampling uniform)" if k is not None else ""))
    if sampling == "uniform" and k is None:
        raise ValueError("--client-sampling uniform needs --clients-per-round K"
                         + (" (--participation-probability is for --client-sampling poisson)" if q is not None else ""))
    if sampling is None and q is not None:
        raise ValueError("--participation-probability needs --client-sampling poisson")
    return k, q


__all__ = ["CLIENT_SAMPLINGS", "DATASET_NAMES", "DEFAULT_PIPELINE", "ENGINES", "SEED", "TRIALS", "client_selection",
           "client_selection_arguments", "pipeline_choices", "round_arguments"]
