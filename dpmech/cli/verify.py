"""``dpmech verify [MECHANISM|all] [--thorough] [--json]``: the built-in verification suite.

``dpmech verify --examples [--only TEXT] [--budget SECONDS] [--seed N] [--json]`` runs
:func:`dpmech.verify.find_violation` on the mechanisms of the DP-testing
literature (:mod:`dpmech.verify.examples`) instead; a check passes when the
verdict matches the truth (a correct mechanism not rejected, a buggy one rejected).

Exit status 0 when every check passes, 1 when any fails (2 for bad input,
as for every subcommand). Checks that need a trainer come from ``trainers`` (see
:func:`dpmech.verify.suite.available_checks`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # for the annotations only: the suite loads scipy, which other commands skip
    import argparse

    from ..verify.suite import CheckResult


def register(subparsers: argparse._SubParsersAction[Any]) -> None:
    verify = subparsers.add_parser("verify", help="check every mechanism's (epsilon, delta) claim: exact, numeric, statistical")
    verify.add_argument("mechanism", nargs="?", default="all", help="a check name (see 'dpmech verify --list') or all")
    verify.add_argument("--list", action="store_true", help="print the available check names and exit")
    verify.add_argument("--thorough", action="store_true", help="raise the example counts (release checks)")
    verify.add_argument("--json", action="store_true", help="print a JSON list of rows")
    verify.add_argument("--examples", action="store_true", help="test the literature's correct and buggy mechanisms instead")
    # None marks "not given", so that an --examples option given without --examples is refused, not ignored.
    verify.add_argument("--only", default=None, help="with --examples: only the examples whose name contains this")
    verify.add_argument("--budget", type=float, default=None, help="with --examples: seconds per mechanism (> 0, default 20)")
    verify.add_argument("--seed", type=int, default=None, help="with --examples: seed of the samplers (default 0)")
    verify.set_defaults(handler=_verify)


def _verify(args: argparse.Namespace) -> None:
    # Imported here: the suite loads scipy.stats and scipy.integrate, which every other command can skip.
    import json

    from rich.console import Console
    from rich.table import Table

    from ..verify.suite import available_checks

    if args.examples:
        rows = _example_rows(args.only, 20.0 if args.budget is None else args.budget, args.seed or 0)
    elif given := [f"--{name}" for name in ("only", "budget", "seed") if getattr(args, name) is not None]:
        raise ValueError(f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} to --examples only (a suite check is chosen by the MECHANISM "
                         "argument, see --list)")
    elif args.list:
        print("\n".join(tuple(available_checks()) + ("all",)))
        return
    else:
        rows = _suite_rows(args.mechanism, args.thorough)
    if args.json:
        print(json.dumps([row.as_dict() for row in rows]))
    else:
        table = Table(title="dpmech verify" + (" --thorough" if args.thorough else ""), show_lines=True)
        for column in ("mechanism", "parameters", "claimed (ε, δ)", "worst measured", "verdict"):
            table.add_column(column)
        for row in rows:
            verdict = "[green]pass[/green]" if row.passed else "[bold red]FAIL[/bold red]"
            table.add_row(row.mechanism, row.parameters, row.claimed, row.worst_measured, verdict)
        Console(width=200).print(table)
    if not all(row.passed for row in rows):
        raise SystemExit(1)


def _suite_rows(mechanism: str, thorough: bool) -> list[CheckResult]:
    """``run_suite``'s rows; a privacy warning raised inside is one "warning:" line on stderr, not Python's
    file-and-source-line format, except the NFDP claims' vacuity warning (below)."""
    import sys
    import warnings

    from ..privacy_warnings import PrivacyWarning, VacuousGuaranteeWarning
    from ..verify.suite import run_suite

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = run_suite(mechanism, thorough)
    shown = set()
    for warning in caught:
        message = str(warning.message)
        # The NFDP check enumerates n <= 7 records on purpose, where every NFDP claim has δ >= 1/n: the
        # warning describes the check's own toy parameters, not a claim of the user's, on every run.
        if issubclass(warning.category, VacuousGuaranteeWarning) or message in shown:
            continue
        shown.add(message)
        if issubclass(warning.category, PrivacyWarning):
            print(f"dpmech verify: warning: {message}", file=sys.stderr)
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno,
                                   source=warning.source)
    return rows


def _example_rows(only: str | None, budget: float, seed: int) -> list[CheckResult]:
    from ..verify.examples import all_examples
    from ..verify.suite import CheckResult
    from ..verify.tester import find_violation

    if not budget > 0 or budget == float("inf"):
        raise ValueError(f"--budget must be a finite number of seconds > 0 (got {budget!r})")
    examples = [example for example in all_examples() if only is None or only in example.name]
    if not examples:
        raise ValueError(f"--only must match an example name (got {only!r})")
    rows: list[CheckResult] = []
    for example in examples:
        report = find_violation(
            example.sampler, example.pairs, example.epsilon, example.delta, rng=seed, budget_seconds=budget, outputs=example.outputs,
            **example.options,
        )
        found = "REJECTED" if report.rejected else "not rejected"
        rows.append(
            CheckResult(
                example.name,
                f"black-box search, {report.rounds} round(s), n = {report.num_samples} per side, {report.seconds:.1f} s",
                f"({example.epsilon:.4g}, {example.delta:g}); truth: {'correct' if example.correct else 'buggy'}, {example.truth}",
                f"{found}; eps lower bound {report.epsilon_lower_bound:.3f} on {report.pair}",
                report.rejected != example.correct,
            )
        )
    return rows

