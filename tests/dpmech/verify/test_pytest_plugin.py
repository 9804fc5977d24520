"""The pytest plugin, loaded with -p in a subprocess: a buggy mechanism fails with its witness, a correct one passes."""

import os
import subprocess
import sys

import pytest

TEST_FILE = '''
import numpy as np
import pytest

@pytest.mark.dp_claim(0.5, 0.0)
def test_wrong_sensitivity(dp_verify):
    sampler = lambda d, size, rng: np.sum(d) + rng.laplace(0.0, 1 / 0.5, size)
    dp_verify(sampler, [("replace 1 by -1", np.array([1.0, 0.0]), np.array([-1.0, 0.0]))], outputs="real")

def test_right_sensitivity(dp_verify):
    sampler = lambda d, size, rng: np.sum(d) + rng.laplace(0.0, 2 / 0.5, size)
    dp_verify(sampler, [(np.array([1.0, 0.0]), np.array([-1.0, 0.0]))], 0.5, 0.0, outputs="real", max_samples=4000)
'''


@pytest.mark.slow  # a pytest run in its own interpreter spending a 2 s budget: 4 s of CPU
def test_plugin_reports_the_witness_and_respects_the_budget_option(tmp_path):
    (tmp_path / "test_claims.py").write_text(TEST_FILE)
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "dpmech.verify.pytest_plugin", "-p", "no:cacheprovider", "--dp-budget", "2", "--dp-seed", "3", str(tmp_path / "test_claims.py")],
        capture_output=True, text=True, cwd=tmp_path, env=environment, timeout=300,
    )
    output = completed.stdout + completed.stderr
    assert "1 failed, 1 passed" in output, output
    assert "DpViolation" in output and "replace 1 by -1" in output and "was hit" in output


def test_bad_budget_is_a_usage_error(tmp_path):
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "dpmech.verify.pytest_plugin", "-p", "no:cacheprovider", "--dp-budget", "0", str(tmp_path)],
        capture_output=True, text=True, cwd=tmp_path, env=environment, timeout=120,
    )
    assert completed.returncode != 0 and "--dp-budget must be" in completed.stderr + completed.stdout
