"""``python -m tests.golden [--update | --list] [NAME ...]``: rerun the golden cases (see ``tests/golden``)."""

from __future__ import annotations

import argparse
import sys

from tests.golden import OUTPUTS, difference, run, select
from tests.golden.cases import CASES


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.golden", description=__doc__)
    parser.add_argument("names", nargs="*", metavar="NAME", help="cases to run (default: every case)")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--update", action="store_true", help="write each run as the case's record")
    action.add_argument("--list", action="store_true", help="print the cases and exit")
    arguments = parser.parse_args(argv)
    try:
        cases = select(CASES, arguments.names)
    except ValueError as error:
        parser.error(str(error))
    if arguments.list:
        for case in cases:
            print(f"{case.name}{' (slow)' if case.slow else ''}: {case.shown}")
        return 0
    OUTPUTS.mkdir(exist_ok=True)
    differing = []
    totals = {False: 0.0, True: 0.0}
    for case in cases:
        rendered, seconds = run(case)
        totals[case.slow] += seconds
        changed = difference(case, rendered)
        if arguments.update:
            case.record.write_text(rendered, encoding="utf-8")
        elif changed:
            differing.append(case.name)
            sys.stdout.write(changed)
        status = ("written" if arguments.update else "differs") if changed else "same"
        print(f"{case.name:45s} {seconds:7.2f} s CPU  {status}", flush=True)
    print(f"CPU: default set {totals[False]:.2f} s, slow set {totals[True]:.2f} s")
    if differing:
        print(f"differ: {' '.join(differing)}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
