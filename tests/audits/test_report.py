"""Audit reports: the files are written, the JSON round-trips and the raw scores recompute the bound."""

import dataclasses
import decimal
import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from audits import AuditScores, epsilon_from_gdp, epsilon_one_run, mia_metrics
from audits.attacks import audit_gaussian_output, audit_label_randomized_response
from audits.attacks.pipelines.record import PipelineAudit
from audits.attacks.threat_model import BLACK_BOX, ThreatModel
from audits.result import AuditResult
from audits.report import (
    audit_scores_report,
    delta_text,
    epsilon_text,
    gdp_roc,
    json_record,
    lower_bound_text,
    privacy_region_boundary,
    roc_band,
    roc_curves,
    tpr_text,
    write_report,
)
from dpmech.directed_rounding import format_down
from dpmech.verify import clopper_pearson_lower, clopper_pearson_upper


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


# --- Reports people trust: the n/a rule, safe-side text, one curve per attack, bands, user scores ---



@given(st.integers(1, 10**6), st.sampled_from([1e-4, 1e-3, 1e-2, 0.05]), st.floats(0.0, 1.0))
def test_tpr_below_the_fpr_resolution_is_not_applicable(num_out, fpr, tpr):
    text = tpr_text(tpr, fpr, num_out)
    # Below 1/n_out no rule has a positive FPR <= fpr: the number would be the TPR at FPR = 0.
    if fpr < 1.0 / num_out:
        assert text == f"n/a (resolution 1/{num_out})"
    else:
        assert float(text) == pytest.approx(tpr, abs=5e-5)


def test_the_thousand_out_scores_edge():
    assert tpr_text(0.5, 1e-3, 999) == "n/a (resolution 1/999)"
    assert tpr_text(0.5, 1e-3, 1000) == "0.5000"
    assert tpr_text(0.5, 1e-2, 99).startswith("n/a") and not tpr_text(0.5, 1e-2, 100).startswith("n/a")


@given(st.floats(1e-300, 1e300))
def test_epsilon_text_rounds_up_and_lower_bounds_down_to_four_digits(value):
    up, down = epsilon_text(value), lower_bound_text(value)
    # The text parses back to a double on the safe side (dpmech.directed_rounding keeps a short repr that is the double itself).
    assert float(up) >= value >= float(down)
    for text in (up, down):
        assert len(decimal.Decimal(text).normalize().as_tuple().digits) <= 4


@given(st.floats(-1e5, -1e-3))
def test_a_positive_delta_never_prints_as_zero(log_delta):
    delta = max(math.exp(log_delta), 5e-324)
    text = delta_text(delta, log_delta)
    assert decimal.Decimal(text) > 0
    if log_delta > -700.0:
        assert float(text) >= math.exp(log_delta)


@given(st.lists(st.floats(-3, 3), min_size=1, max_size=60), st.lists(st.floats(-3, 3), min_size=1, max_size=60),
       st.floats(0.01, 0.5))
def test_roc_band_is_the_projects_clopper_pearson_box_around_each_point(in_values, out_values, alpha):
    scores = AuditScores(np.array(in_values), np.array(out_values))
    fpr_low, fpr_high, tpr_low, tpr_high = roc_band(scores, alpha)
    fpr, tpr, _ = __import__("audits").roc_curve(scores)
    # Every point when there are few: each box contains its empirical (FPR, TPR) and is the CP interval at α/4 per side.
    fp, tp = np.rint(fpr * scores.num_out), np.rint(tpr * scores.num_in)
    np.testing.assert_array_equal(fpr_low, clopper_pearson_lower(fp, scores.num_out, alpha / 4))
    np.testing.assert_array_equal(tpr_high, clopper_pearson_upper(tp, scores.num_in, alpha / 4))
    assert np.all(fpr_low <= fpr) and np.all(fpr <= fpr_high) and np.all(tpr_low <= tpr) and np.all(tpr <= tpr_high)


def _pipeline_audit(scores, mia_scores):
    return PipelineAudit(
        pipeline="fedgm", claim="test", eps_claimed=1.0, delta=0.0, alpha=0.05, mu_claimed=None,
        result=AuditResult(eps_lb=0.0, delta=0.0, alpha=0.05, method="one-run", thresholds=(), counts={},
                           assumption="test", valid_as="certified", threshold_strategy="explicit",
                           decision_rule="test", num_hypotheses=1),
        mia={"attack": "nearest image", **dataclasses.asdict(mia_metrics(mia_scores or scores))},
        threat_model=ThreatModel(BLACK_BOX, "test", 1), scores=scores, mia_scores=mia_scores)


def test_records_read_their_bound_and_its_labels_from_their_result():
    rng = np.random.default_rng(2)
    scores = AuditScores(rng.normal(1, 1, 100), rng.normal(0, 1, 100), trials="independent")
    without = dataclasses.replace(_pipeline_audit(scores, None), result=None)
    assert (without.eps_lb, without.method, without.valid_as, without.mu_lb) == (0.0, "none", "estimate", None)
    record = without.as_dict()
    assert (record["eps_lb"], record["method"], record["valid_as"], record["mu_lb"]) == (0.0, "none", "estimate", None)
    gdp = epsilon_from_gdp(scores, alpha=0.05, delta=1e-5)
    with_result = dataclasses.replace(without, result=gdp)
    assert (with_result.eps_lb, with_result.method, with_result.valid_as, with_result.mu_lb) == (
        gdp.eps_lb, "gdp", gdp.valid_as, gdp.mu_lb)
    assert gdp.mu_lb is not None and with_result.violation == (gdp.eps_lb > 1.0)
    for audit in (audit_gaussian_output(1.0, 1e-5, trials=300, rng=3),
                  audit_label_randomized_response(2.0, 3, 400, rng=3)):
        result = audit.result
        assert (audit.eps_lb, audit.method, audit.valid_as, audit.alpha) == (
            result.eps_lb, result.method, result.valid_as, result.alpha)
        assert audit.as_dict()["eps_lb"] == result.eps_lb
        assert getattr(audit, "mu_lb", None) == result.mu_lb


def test_one_curve_per_attack_the_report_states(tmp_path):
    rng = np.random.default_rng(0)
    canary = AuditScores(rng.normal(1, 1, 200), rng.normal(0, 1, 200), trials="independent")
    images = AuditScores(rng.normal(2, 1, 150), rng.normal(0, 1, 150))
    two = roc_curves(_pipeline_audit(canary, images))
    assert [label for label, _ in two] == ["canary (one-run)", "nearest image"]
    assert two[0][1] is canary and two[1][1] is images
    one = roc_curves(_pipeline_audit(canary, None))
    assert len(one) == 1 and one[0][1] is canary and one[0][0] == "nearest image"
    paths = write_report(_pipeline_audit(canary, images), tmp_path, title="two attacks")
    markdown = paths["markdown"].read_text(encoding="utf-8")
    assert "TPR at 0.1% FPR: n/a (resolution 1/150)" in markdown and "Seed" not in markdown
    with np.load(paths["scores"]) as raw:
        np.testing.assert_array_equal(raw["mia_in_scores"], images.in_scores)


def test_user_scores_report(tmp_path):
    rng = np.random.default_rng(1)
    in_scores, out_scores = rng.normal(1, 1, 300), rng.normal(0, 1, 300)
    natural = audit_scores_report(in_scores, out_scores, epsilon=1.0, delta=1e-5, out=tmp_path / "r")
    assert natural.valid_as == "estimate" and natural.eps_claimed == 1.0
    for name in ("audit.json", "audit.md", "scores.npz", "roc.png"):
        assert (tmp_path / "r" / name).stat().st_size > 0
    stored = json.loads((tmp_path / "r" / "audit.json").read_text(encoding="utf-8"))
    assert stored["eps_lb"] == natural.eps_lb and stored["mia"]["auc"] == natural.mia["auc"]
    independent = audit_scores_report(in_scores, out_scores, trials="independent")
    assert independent.valid_as == "certified" and independent.eps_claimed == math.inf
    assert independent.as_dict()["eps_claimed"] == math.inf
    assert json_record(independent.as_dict())["non_finite"] == {"/eps_claimed": "inf"}
    with pytest.raises(ValueError, match="epsilon and delta"):
        audit_scores_report(in_scores, out_scores, epsilon=1.0)
    with pytest.raises(ValueError, match="in_scores"):
        audit_scores_report([1.0, float("nan")], out_scores)
    with pytest.raises(ValueError, match="delta"):
        audit_scores_report(in_scores, out_scores, epsilon=1.0, delta=1.0)
