"""The benchmark scripts run (their numbers are read, not asserted: speed is measured there, not in tests)."""

import os
import pathlib
import subprocess
import sys

import pytest

from benchmarks.run_all import BENCHMARKS, SECTION

ROOT = pathlib.Path(__file__).resolve().parents[2]


# The accounting script times the other libraries too (about half a minute of CPU) and the fidelity modes train
# CNNs: marked slow, run by `-m slow` (.ci/run runs both).
@pytest.mark.slow
def test_accounting_benchmark_runs_and_reports_no_under_noising():
    result = subprocess.run([sys.executable, "benchmarks/accounting.py", "--quick"], capture_output=True, text=True,
                            cwd=ROOT, env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    assert "under: 0" in result.stdout


@pytest.mark.slow  # a benchmark script in its own interpreter: 5 to 7 s of CPU
def test_a_seed_script_runs_as_documented():
    # run as `python benchmarks/NAME.py` from the repository root, importing its sibling seed_headlines
    result = subprocess.run([sys.executable, "benchmarks/seed_nfdp_table2.py"], capture_output=True, text=True,
                            cwd=ROOT, env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    assert "log10" in result.stdout


def test_every_registered_benchmark_script_exists_and_results_parse():
    for arguments, _ in BENCHMARKS.values():
        assert (ROOT / "benchmarks" / arguments[0]).is_file()
    sections = dict(SECTION.findall("## one\nbody\n## two\nmore\n## two --by-hand (20 seeds)\nrows\n"))
    assert sections == {"one": "body\n", "two": "more\n", "two --by-hand (20 seeds)": "rows\n"}


def test_rerunning_one_section_keeps_the_others_and_the_hand_recorded_ones(tmp_path, monkeypatch):
    import benchmarks.run_all as run_all

    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n\n## accounting\nold accounting\n## pld\nold pld\n"
                       "## seed_fedgm --budget-curve (by hand)\ncurve rows\n")
    monkeypatch.setattr(run_all, "run_section", lambda name, threads: f"## {name}\nnew {name}\n")
    assert run_all.main(["--only", "pld", "--output", str(results)]) == 0
    text = results.read_text()
    assert "old accounting" in text and "new pld" in text and "old pld" not in text
    assert text.endswith("## seed_fedgm --budget-curve (by hand)\ncurve rows\n")


@pytest.mark.slow
def test_fidelity_modes_run_at_tiny_size(tmp_path):
    environment = {**os.environ, "COLUMNS": "200"}
    common = ["--fidelity", "--samples", "1200", "--public-samples", "400", "--seeds", "1", "--cnn-epochs", "1",
              "--cache-dir", str(tmp_path)]
    fedaux = subprocess.run([sys.executable, "benchmarks/seed_fedauxfdp.py", *common, "--num-clients", "2",
                             "--alphas", "0.01", "--seed-compat-seeds", "0", "--tune", "--tuning-draws", "1"],
                            capture_output=True, text=True, cwd=ROOT, env=environment)
    assert fedaux.returncode == 0, fedaux.stderr
    assert "Target (issue 16)" in fedaux.stdout and "non-private" in fedaux.stdout and "λ" in fedaux.stdout
    helmet = subprocess.run([sys.executable, "benchmarks/seed_dphelmet.py", *common, "--users", "2", "--epochs", "1",
                             "--one-class-per-user"],
                            capture_output=True, text=True, cwd=ROOT, env=environment)
    assert helmet.returncode == 0, helmet.stderr
    assert "Target (issue 16)" in helmet.stdout and "huber_svm" in helmet.stdout and "one class per user" in helmet.stdout


@pytest.mark.slow  # a benchmark script in its own interpreter (torch and scikit-learn loaded): 5 s of CPU
def test_batched_heads_benchmark_runs_and_certifies():
    result = subprocess.run([sys.executable, "benchmarks/batched_heads.py", "--sizes", "30", "--heads", "3", "--repeats", "1"],
                            capture_output=True, text=True, cwd=ROOT, env={**os.environ, "COLUMNS": "200", "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert "ratio matched" in result.stdout and "certified" in result.stdout
