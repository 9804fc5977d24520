"""``dpmech verify``: JSON rows, the table's columns, exit status 1 on a failing check and 2 on bad input."""

import json
import subprocess
import sys

import pytest

from dpmech.cli import main as cli_main
from dpmech.verify import suite


def run(*arguments):
    return subprocess.run([sys.executable, "-m", "dpmech", "verify", *arguments], capture_output=True, text=True)


def test_json_rows_for_one_mechanism():
    result = run("nfdp", "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [row["verdict"] for row in rows] == ["pass", "pass"]
    assert set(rows[0]) == {"mechanism", "parameters", "claimed", "worst_measured", "verdict"}


def test_table_has_the_columns():
    result = run("gaussian-output")
    assert result.returncode == 0, result.stderr
    for column in ("mechanism", "parameters", "claimed", "worst measured", "verdict"):
        assert column in result.stdout


def test_a_failing_check_exits_non_zero(monkeypatch, capsys):
    failing = suite.CheckResult("nfdp", "p", "(1, 0)", "2", False)
    monkeypatch.setitem(suite.CHECKS, "nfdp", lambda thorough: [failing])
    with pytest.raises(SystemExit) as caught:
        cli_main.main(["verify", "nfdp", "--json"])
    assert caught.value.code == 1
    assert json.loads(capsys.readouterr().out)[0]["verdict"] == "FAIL"


def test_unknown_mechanism_exits_2():
    result = run("laplace")
    assert result.returncode == 2 and "laplace" in result.stderr


def test_run_suite_rejects_bad_arguments():
    with pytest.raises(ValueError, match="mechanism"):
        suite.run_suite("laplace")
    with pytest.raises(ValueError, match="thorough"):
        suite.run_suite("nfdp", thorough="yes")
