"""``dpmech run``: one command from the embedded data to a calibrated, trained, accounted, audited model."""

import json
import subprocess
import sys

import pytest
from scipy.stats import binomtest

from audits.main_job import run_main_job
from trainers.data import load_dataset, split_federated


def test_main_job_writes_the_report_and_meets_the_target(tmp_path):
    summary = run_main_job(out=tmp_path / "report", progress=False, trials=2000)
    assert summary["pipeline"] == "fedauxfdp" and summary["dataset"] == "digits"
    assert summary["epsilon"] <= 1.0 and summary["epsilon"] == pytest.approx(1.0, rel=1e-6)
    assert summary["guarantees"]["basic"]["epsilon"] >= summary["epsilon"]
    assert 0.0 <= summary["eps_lb"] <= summary["epsilon"]
    # The model must beat chance on digits' ten classes by a margin no guessing reaches: a one-sided
    # binomial test against accuracy 1/10 on the test split (0.1 <= accuracy, which accepted chance, did not).
    test_records = split_federated(load_dataset("digits"), 0).test.labels.size
    correct = round(summary["accuracy"] * test_records)
    assert correct == pytest.approx(summary["accuracy"] * test_records, abs=1e-6)
    assert binomtest(correct, test_records, 0.1, alternative="greater").pvalue < 1e-6
    for name in ("summary.json", "report.md", "accuracy.png", "audit/audit.json", "audit/roc.png"):
        assert (tmp_path / "report" / name).is_file()
    assert json.loads((tmp_path / "report" / "summary.json").read_text())["eps_lb"] == summary["eps_lb"]
    assert "Privacy budget" in (tmp_path / "report" / "report.md").read_text()


def test_cli_json_summary(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "dpmech", "run", "--pipeline", "dphelmet", "--epsilon", "2", "--trials", "1000",
         "--out", str(tmp_path / "r"), "--json"],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert {"pipeline", "accuracy", "epsilon", "delta", "eps_lb", "report_dir"} <= set(record)
    assert record["pipeline"] == "dphelmet" and record["epsilon"] <= 2.0


@pytest.mark.parametrize(
    "arguments,fragment",
    [(("--pipeline", "fedprox"), "pipeline"), (("--epsilon", "0"), "epsilon"), (("--dataset", "cifar"), "dataset"),
     (("--seed", "-1"), "seed")],
)
def test_bad_input_exits_2_with_one_line(tmp_path, arguments, fragment):
    result = subprocess.run([sys.executable, "-m", "dpmech", "run", "--out", str(tmp_path / "r"), *arguments],
                            capture_output=True, text=True)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], result.stderr


class _FakeResult:
    pipeline = "fedzda"
    accuracy = 0.5
    baselines = {}
    guarantees = {}
    notes = ["no privacy guarantee"]

    def summary(self):
        return {"config": {}}


class _FakeAudit:
    eps_claimed = float("inf")
    delta = 0.0
    eps_lb = 0.0

    def as_dict(self):
        return {"eps_lb": 0.0, "eps_claimed": float("inf"), "method": "gdp", "valid_as": "estimate", "alpha": 0.05,
                "notes": [], "mia": {"attack": "LiRA", "auc": 0.5, "tpr_at_0_1_percent_fpr": 0.001,
                                     "tpr_at_1_percent_fpr": 0.01}}


def test_a_target_the_pipeline_cannot_meet_is_reported_and_warned(monkeypatch, tmp_path, capsys):
    # Training, audit and plots stubbed: the check is on what is reported about the target.
    import audits.main_job as main_job
    from importlib.metadata import EntryPoint

    from dpmech.cli import main as cli_main

    monkeypatch.setattr(main_job, "run_pipeline", lambda *_, **__: _FakeResult())
    real_parts = main_job.pipeline_parts
    monkeypatch.setattr(main_job, "pipeline_parts", lambda name: (lambda *_, **__: _FakeAudit(), *real_parts(name)[1:]))
    monkeypatch.setattr(main_job, "write_report", lambda *_, **__: None)
    monkeypatch.setattr(main_job, "_accuracy_plot", lambda *_: None)
    run_plugin = EntryPoint(name="run", value="audits.cli:register_run", group="dpmech.commands")
    monkeypatch.setattr(cli_main, "entry_points", lambda group: [run_plugin] if group == cli_main.PLUGIN_GROUP else [])
    status = cli_main.main(["run", "--pipeline", "fedzda", "--epsilon", "1", "--out", str(tmp_path / "r"), "--json"])
    captured = capsys.readouterr()
    assert status == 0
    record = json.loads(captured.out)
    assert record["target_met"] is False and record["target_epsilon"] == 1.0 and record["epsilon"] == "inf"
    assert captured.err.startswith("dpmech run: warning: the fedzda pipeline cannot meet the target")
    assert len(captured.err.strip().splitlines()) == 1
    assert "Target NOT met" in (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["target_met"] is False
