"""Timing of the verification suite: ``dpmech verify`` with the CI-sized and the thorough counts.

Usage::

    python benchmarks/verification.py [--skip-thorough]

Each run is the installed command, timed as a whole (interpreter start included), and its
verdicts are counted.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from rich.console import Console
from rich.table import Table


def timed_suite(thorough: bool):
    command = [sys.executable, "-m", "dpmech", "verify", "all", "--json"] + (["--thorough"] if thorough else [])
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    rows = json.loads(result.stdout) if result.stdout else []
    return " ".join(command[2:]), seconds, rows, result.returncode


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-thorough", action="store_true")
    args = parser.parse_args(argv)
    table = Table(title="dpmech verify: wall time on this machine")
    for column in ("command", "checks", "passed", "failed", "exit status", "wall time"):
        table.add_column(column)
    failures = 0
    for thorough in (False,) if args.skip_thorough else (False, True):
        command, seconds, rows, status = timed_suite(thorough)
        passed = sum(row["verdict"] == "pass" for row in rows)
        failures += len(rows) - passed
        table.add_row(command, str(len(rows)), str(passed), str(len(rows) - passed), str(status), f"{seconds:.1f} s")
    Console(width=160).print(table)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
