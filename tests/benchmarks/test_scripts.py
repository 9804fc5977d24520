"""The benchmark scripts run (their numbers are read, not asserted: speed is measured there, not in tests)."""

import os
import pathlib
import subprocess
import sys

from benchmarks.run_all import BENCHMARKS, SECTION

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_accounting_benchmark_runs_and_reports_no_under_noising():
    result = subprocess.run([sys.executable, "benchmarks/accounting.py", "--quick"], capture_output=True, text=True,
                            cwd=ROOT, env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    assert "under: 0" in result.stdout


def test_a_seed_script_runs_as_documented():
    # run as `python benchmarks/NAME.py` from the repository root, importing its sibling seed_headlines
    result = subprocess.run([sys.executable, "benchmarks/seed_nfdp_table2.py"], capture_output=True, text=True,
                            cwd=ROOT, env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    assert "log10" in result.stdout


def test_every_registered_benchmark_script_exists_and_results_parse():
    for arguments, _ in BENCHMARKS.values():
        assert (ROOT / "benchmarks" / arguments[0]).is_file()
    sections = dict(SECTION.findall("## one\nbody\n## two\nmore\n"))
    assert sections == {"one": "body\n", "two": "more\n"}
