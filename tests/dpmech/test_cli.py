"""The dpmech command line: JSON and table output, exit status 2 with one line on bad input."""

import json
import re
import subprocess
import sys

import pytest

from dpmech import calibrate_gaussian, gaussian_delta, gaussian_epsilon
from dpmech.cli.main import main


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


# The table's σ, achieved δ and log δ as main printed them before calibrate moved to dpmech._gaussian_scalar
# (issue 32): the new path's bound is wider by its erfcx term, its doubles a relative 1e-11 or less above
# the old ones, and every printed text the same.
PRINTED_BEFORE_THE_SCALAR_PATH = [
    ("--epsilon 1 --delta 1e-5", ("3.730631635", "1e-05", "-11.51292546")),
    ("--epsilon 1 --delta 1e-6", ("4.22467889", "1e-06", "-13.81551055")),
    ("--epsilon 0.5 --delta 1e-300", ("73.67992751", "1e-300", "-690.7755278")),
    ("--epsilon 1e308 --delta 1e-5", ("7.071067812e-155", "exp(-2.689474741e+278)", "-2.689474741e+278")),
    ("--epsilon 1e-300 --delta 1e-5", ("39894.22804", "1e-05", "-11.51292546")),
    ("--epsilon 0.3 --delta 1e-5 --method classic --compositions 7", ("42.72716626", "8.736021313e-09", "-18.55581097")),
    ("--epsilon 1 --delta 1e-5 --sensitivity 0.02", ("0.0746126327", "1e-05", "-11.51292546")),
    ("--epsilon 1 --delta 1e-5 --sensitivity 2 --compositions 3", ("12.92328708", "1e-05", "-11.51292546")),
    ("--epsilon 8 --delta 1e-9 --compositions 1000", ("25.05273525", "1e-09", "-20.72326583")),
    ("--epsilon 0.01 --delta 0.4", ("0.9457232585", "0.4", "-0.9162907318")),
    ("--epsilon 3 --delta 0.9", ("0.2255385037", "0.9", "-0.1053605156")),
    ("--epsilon 100 --delta 1e-100 --compositions 10", ("0.7378373833", "1e-100", "-230.2585092")),
    ("--epsilon 2 --delta 0.1", ("0.7319552434", "0.1", "-2.302585092")),
]


@pytest.mark.parametrize("options,printed", PRINTED_BEFORE_THE_SCALAR_PATH)
def test_calibrate_prints_what_it_printed_before_the_scalar_path(options, printed, capsys):
    assert main(["calibrate", *options.split()]) == 0
    out = capsys.readouterr().out
    shown = tuple(re.search(rf"│ {key}\s+│\s+(\S+) │", out).group(1)
                  for key in ("sigma", "achieved_delta", "log_achieved_delta"))
    assert shown == printed, out
