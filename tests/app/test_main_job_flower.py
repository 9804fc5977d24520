"""``dpmech run --engine flower``: refusals before any training, and one round in Flower's simulation engine."""

import importlib.util
import subprocess
import sys

import pytest

from app.main_job import run_main_job


def test_a_pipeline_without_a_flower_app_exits_2_naming_those_with_one(tmp_path, dpmech_main):
    status, _, err = dpmech_main("run", "--engine", "flower", "--pipeline", "fedzda", "--out", str(tmp_path / "r"))
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "dphelmet" in lines[0] and "fedauxfdp" in lines[0] and "fedzda" in lines[0]
    assert not (tmp_path / "r").exists()


def test_an_unknown_engine_exits_2(tmp_path):
    result = subprocess.run([sys.executable, "-m", "dpmech", "run", "--engine", "ray", "--out", str(tmp_path / "r")],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "inprocess, flower" in result.stderr


def test_a_missing_flower_extra_is_named(monkeypatch, tmp_path):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == "flwr" else real_find_spec(name, *args))
    with pytest.raises(ValueError, match=r"dpmech\[flower\]"):
        run_main_job("dphelmet", engine="flower", out=tmp_path / "r", progress=False)
    with pytest.raises(ValueError, match="engine"):
        run_main_job("dphelmet", engine="Flower", out=tmp_path / "r", progress=False)
    assert not (tmp_path / "r").exists()


@pytest.mark.slow
def test_fedauxfdp_deployed_on_flower_is_audited_in_process(tmp_path):
    # The Flower round is not the in-process run the audit samples from: the audit trains its own (it used to
    # be handed the Flower round and refuse it, so `dpmech run --engine flower` failed at step 4).
    summary = run_main_job("fedauxfdp", dataset="digits", engine="flower", out=tmp_path / "r", progress=False,
                           trials=500, accuracy_curve=False)
    assert summary["engine"] == "flower" and summary["target"]["met"]
    assert 0.0 <= summary["eps_lb"] <= summary["epsilon"] <= 1.0
    # The report keeps the protected-unit notes on Flower, and its Round section counts the records.
    report = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert "- Protected: one record of one client's private data, replace-one" in report
    assert "private records in all" in report
