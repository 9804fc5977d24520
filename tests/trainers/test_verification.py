"""The sensitivity checks trainers registers with ``dpmech verify``."""

import json
import subprocess
import sys

import pytest

from dpmech.verify.suite import available_checks, run_suite
from trainers.verification import check_logistic_regression, check_psgd


def test_trainer_checks_are_registered_through_entry_points():
    checks = available_checks()
    assert {"logistic-regression", "psgd"} <= set(checks)
    assert {"randomized-response", "nfdp", "gaussian-output"} <= set(checks)


@pytest.fixture(scope="module")
def rows():
    return check_logistic_regression() + check_psgd()


@pytest.mark.slow  # 7.15 s of CPU in CI's default run (2026-11-27): 5 s or more goes to the slow set
def test_logistic_regression_and_psgd_stay_within_their_bounds(rows):
    assert len(rows) == 10 and all(row.passed for row in rows)
    ratios = [float(row.worst_measured.rsplit("=", 1)[1]) for row in rows]
    assert all(0.05 < ratio <= 1.0 for ratio in ratios)  # the search moved every model


@pytest.mark.slow  # `python -m dpmech verify psgd` end to end, then the suite again in process: 5 s of CPU
def test_cli_runs_a_registered_check():
    result = subprocess.run([sys.executable, "-m", "dpmech", "verify", "psgd", "--json"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert [row["mechanism"] for row in json.loads(result.stdout)] == ["psgd"] * 6
    assert run_suite("psgd")[0].mechanism == "psgd"


@pytest.mark.slow  # 5.6 s of CPU in CI's default run (stop 39): the README's rule moves tests of 4 s or more
def test_psgd_check_covers_ragged_batches_and_batches_larger_than_n(rows):
    parameters = [row.parameters for row in rows if row.mechanism == "psgd"]
    # n = 21 in batches of 20 and n = 8 in batches of 3 leave ragged batches; batch 8 > n = 5.
    assert any("batch 20, n = 21" in text for text in parameters)
    assert any("3 epochs, batch 3, n = 8" in text for text in parameters)
    assert any("batch 8, n = 5" in text for text in parameters)
