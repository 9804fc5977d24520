"""The dpmech command line: JSON and table output, exit status 2 with one line on bad input."""

import json
import subprocess
import sys

import pytest

from dpmech import calibrate_gaussian, gaussian_delta, gaussian_epsilon


def run(*arguments):
    return subprocess.run([sys.executable, "-m", "dpmech", *arguments], capture_output=True, text=True)


def test_calibrate_json_holds_every_input_and_output():
    result = run("calibrate", "--epsilon", "1", "--delta", "1e-5", "--sensitivity", "2", "--compositions", "3", "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert set(record) == {"sigma", "epsilon", "delta", "sensitivity", "compositions", "method", "achieved_delta",
                           "log_achieved_delta"}
    assert record["sigma"] == calibrate_gaussian(1.0, 1e-5, 2.0, 3)
    assert record["achieved_delta"] <= 1e-5
    assert record["method"] == "analytic"


def test_epsilon_and_delta_commands():
    record = json.loads(run("epsilon", "--sigma", "1", "--delta", "1e-5", "--compositions", "1000", "--json").stdout)
    assert record["epsilon"] == gaussian_epsilon(1e-5, 1.0, compositions=1000)
    record = json.loads(run("delta", "--sigma", "3", "--epsilon", "1", "--json").stdout)
    assert record["delta"] == pytest.approx(gaussian_delta(1.0, 3.0), rel=1e-10)
    assert record["delta"] >= gaussian_delta(1.0, 3.0)


def test_readable_table_without_json():
    result = run("calibrate", "--epsilon", "0.5", "--delta", "1e-6")
    assert result.returncode == 0
    assert "sigma" in result.stdout and "achieved_delta" in result.stdout


@pytest.mark.parametrize(
    "arguments,fragment",
    [
        (("calibrate", "--epsilon", "0", "--delta", "1e-5"), "epsilon"),
        (("calibrate", "--epsilon", "1", "--delta", "1.5"), "delta"),
        (("calibrate", "--epsilon", "1", "--delta", "1e-5", "--method", "classic"), "analytic"),
        (("calibrate", "--epsilon", "x", "--delta", "1e-5"), "--epsilon"),
        (("epsilon", "--sigma", "-1", "--delta", "1e-5"), "sigma"),
        (("delta", "--sigma", "1", "--epsilon", "1", "--compositions", "0"), "compositions"),
        (("calibrate", "--delta", "1e-5"), "--epsilon"),
    ],
)
def test_bad_input_exits_2_with_one_line(arguments, fragment):
    result = run(*arguments)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0]
    assert "Traceback" not in result.stderr
