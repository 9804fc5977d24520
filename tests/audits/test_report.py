"""Audit reports: the files are written, the JSON round-trips and the raw scores recompute the bound."""

import json

import numpy as np
import pytest

from audits import AuditScores, epsilon_from_gdp, epsilon_one_run
from audits.attacks import audit_gaussian_output, audit_label_randomized_response
from dpmech.directed_rounding import format_down
from audits.report import gdp_roc, json_record, privacy_region_boundary, write_report


@pytest.fixture(scope="module")
def gaussian_audit():
    # (ε = 2, δ = 1e-5), σ halved, N = 2000 per side, α = 0.05, seed 0.
    return audit_gaussian_output(2.0, 1e-5, trials=2000, sigma_scale=0.5, rng=0)


def test_gaussian_report_files_and_round_trip(gaussian_audit, tmp_path):
    extra = {"seed": 0, "repetition": 0}
    paths = write_report(gaussian_audit, tmp_path / "new" / "folder", title="Gaussian audit", extra=extra)
    assert all(path.is_file() and path.stat().st_size > 0 for path in paths.values())
    stored = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert stored == json_record({**gaussian_audit.as_dict(), **extra})
    assert stored["threat_model"]["access"] == "white-box" and stored["threat_model"]["trials_per_side"] == 2000
    assert stored["mu_lb"] == gaussian_audit.mu_lb and stored["result"]["counts"] == dict(gaussian_audit.result.counts)
    assert paths["roc"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    markdown = paths["markdown"].read_text(encoding="utf-8")
    assert "white-box" in markdown and format_down(gaussian_audit.eps_lb, 4) in markdown
    with np.load(paths["scores"]) as raw:
        scores = AuditScores(raw["in_scores"], raw["out_scores"], bool(raw["higher_is_in"]), str(raw["trials"]))
    recomputed = epsilon_from_gdp(scores, alpha=gaussian_audit.alpha, delta=gaussian_audit.delta)
    assert recomputed.as_dict() == gaussian_audit.result.as_dict()


def test_label_report_round_trip(tmp_path):
    # K = 10, ε = 2, m = 5000 canaries, α = 0.05, seed 1.
    audit = audit_label_randomized_response(2.0, 10, 5000, rng=1)
    paths = write_report(audit, tmp_path, title="Label RR audit")
    stored = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert stored == json_record(audit.as_dict())
    assert stored["threat_model"] == {"access": "black-box", "canary": audit.threat_model.canary, "runs": 1,
                                      "trials_per_side": None, "canaries": 5000}
    with np.load(paths["scores"]) as raw:
        scores = AuditScores(raw["in_scores"], raw["out_scores"], bool(raw["higher_is_in"]), str(raw["trials"]))
    recomputed = epsilon_one_run(scores, threshold_strategy="explicit", guess_thresholds=[(-0.5, 0.5)])
    assert recomputed.eps_lb == audit.eps_lb


def test_json_record_writes_non_finite_numbers_as_null_and_names_them():
    record = json_record({"a": (1.0, float("inf")), "b": np.float64(-np.inf), "c": np.int64(3),
                          "d/e": {"f": float("nan")}, "g": None})
    assert record == {"a": [1.0, None], "b": None, "c": 3, "d/e": {"f": None}, "g": None,
                      "non_finite": {"/a/1": "inf", "/b": "-inf", "/d~1e/f": "nan"}}
    # Strict JSON: no Infinity or NaN tokens.
    json.dumps(record, allow_nan=False)


def test_overlay_curves():
    fpr = np.array([0.0, 1e-3, 0.1, 0.5, 1.0])
    # ε = 1, δ = 0: TPR <= min(e·FPR, 1 − (1 − FPR)/e); GDP with μ = 0 is the diagonal.
    expected = np.minimum(np.e * fpr, 1 - (1 - fpr) / np.e)
    np.testing.assert_allclose(privacy_region_boundary(fpr, 1.0, 0.0), np.clip(expected, 0, 1), rtol=1e-14)
    np.testing.assert_allclose(gdp_roc(fpr, 0.0), fpr, atol=1e-15)


def test_an_existing_file_is_not_a_report_folder(gaussian_audit, tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(ValueError, match="out"):
        write_report(gaussian_audit, target, title="t")
    with pytest.raises(ValueError, match="title"):
        write_report(gaussian_audit, tmp_path, title="")
