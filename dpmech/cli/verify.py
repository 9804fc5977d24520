"""``dpmech verify [MECHANISM|all] [--thorough] [--json]``: the built-in verification suite.

Exit status 0 when every check passes, 1 when any fails (2 for bad input,
as for every subcommand). Checks that need a trainer come from ``trainers`` (see
:func:`dpmech.verify.suite.available_checks`).
"""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table




def register(subparsers) -> None:
    verify = subparsers.add_parser("verify", help="check every mechanism's (epsilon, delta) claim: exact, numeric, statistical")
    verify.add_argument("mechanism", nargs="?", default="all", help="a check name (see 'dpmech verify --list') or all")
    verify.add_argument("--list", action="store_true", help="print the available check names and exit")
    verify.add_argument("--thorough", action="store_true", help="raise the example counts (release checks)")
    verify.add_argument("--json", action="store_true", help="print a JSON list of rows")
    verify.set_defaults(handler=_verify)


def _verify(args) -> None:
    # Imported here: the suite loads scipy.stats and scipy.integrate, which every other command can skip.
    from ..verify.suite import available_checks, run_suite

    if args.list:
        print("\n".join(tuple(available_checks()) + ("all",)))
        return
    rows = run_suite(args.mechanism, args.thorough)
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
