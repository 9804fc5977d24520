"""``dpmech verify``: JSON rows, the table's columns, exit status 1 on a failing check and 2 on bad input."""

import functools
import json
import subprocess
import sys

import pytest

from dpmech.cli import main as cli_main
from dpmech.verify import suite
from tests.app.conftest import dpmech_main  # noqa: F401 (the in-process CLI fixture, registered here)


def run(*arguments):
    """``python -m dpmech verify ...`` in its own interpreter (the entry point itself, and what the process prints)."""
    return subprocess.run([sys.executable, "-m", "dpmech", "verify", *arguments], capture_output=True, text=True)


@pytest.fixture
def verify(dpmech_main):
    """``dpmech verify ...`` in process (a new interpreter costs 1.6 s of CPU): (exit status, stdout, stderr)."""
    return functools.partial(dpmech_main, "verify")


def test_json_rows_for_one_mechanism(verify):
    status, out, err = verify("nfdp", "--json")
    assert status == 0, err
    rows = json.loads(out)
    assert [row["verdict"] for row in rows] == ["pass", "pass"]
    assert set(rows[0]) == {"mechanism", "parameters", "claimed", "worst_measured", "verdict"}


@pytest.mark.slow  # `python -m dpmech verify gaussian-output` end to end: 4.5 s of CPU
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


def test_unknown_mechanism_exits_2(verify):
    status, _, err = verify("laplace")
    assert status == 2 and "laplace" in err


def test_run_suite_rejects_bad_arguments():
    with pytest.raises(ValueError, match="mechanism"):
        suite.run_suite("laplace")
    with pytest.raises(ValueError, match="thorough"):
        suite.run_suite("nfdp", thorough="yes")


def test_examples_mode_reports_a_caught_violation_and_a_clean_pass(verify):
    status, out, err = verify("--examples", "--only", "laplace sum", "--budget", "2", "--seed", "1", "--json")
    assert status == 0, err
    rows = json.loads(out)
    assert [row["mechanism"] for row in rows] == ["laplace sum (right sensitivity)", "laplace sum (wrong sensitivity)"]
    assert [row["verdict"] for row in rows] == ["pass", "pass"]
    assert "REJECTED" in rows[1]["worst_measured"] and "not rejected" in rows[0]["worst_measured"]


@pytest.mark.parametrize("arguments", [("--examples", "--budget", "0"), ("--examples", "--only", "no such mechanism")])
def test_examples_mode_bad_input_exits_2(verify, arguments):
    status, _, err = verify(*arguments)
    assert status == 2 and err.count("\n") == 1, err


def test_the_suite_prints_no_raw_warning():
    # The NFDP check's own toy parameters (n <= 5) made every run print Python's warning with its source line.
    result = run("nfdp")
    assert result.returncode == 0 and result.stderr == "", result.stderr


@pytest.mark.parametrize("arguments, named", [(("--only", "laplace"), "--only"), (("nfdp", "--seed", "3"), "--seed"),
                                              (("--budget", "2", "--only", "x"), "--only, --budget")])
def test_examples_options_without_examples_exit_2_instead_of_being_ignored(verify, arguments, named):
    status, _, err = verify(*arguments)
    assert status == 2 and err.count("\n") == 1, err
    assert named in err and "--examples" in err
