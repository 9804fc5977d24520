"""``dpmech run``: one command from the embedded data to a calibrated, trained, accounted, audited model."""

import io
import json
import math
import subprocess
import sys
import time
import warnings

import jsonschema
import numpy as np
import pytest
from scipy.stats import binomtest

from app.main_job import CURVE_EPSILONS, SUMMARY_SCHEMA, StepLog, run_main_job
import dpmech
from dpmech import GaussianEvent, PrivacyLedger, VacuousGuaranteeWarning
from dpmech.directed_rounding import format_up
from dpmech.ledger import PrivacyGuarantee
from trainers.data import load_dataset, split_federated
from trainers.federation import PipelineResult
from trainers.pipelines.registry import PIPELINE_NAMES


@pytest.fixture(scope="module")
def digits_run(tmp_path_factory):
    """The default main job on digits, once for the tests below: (summary, the folder holding ``report/``)."""
    tmp_path = tmp_path_factory.mktemp("digits_run")
    return run_main_job(dataset="digits", out=tmp_path / "report", progress=False, trials=2000), tmp_path


def test_main_job_writes_the_report_and_meets_the_target(digits_run):
    summary, tmp_path = digits_run
    assert summary["pipeline"] == "fedauxfdp" and summary["dataset"] == "digits"
    assert summary["epsilon"] <= 1.0 and summary["epsilon"] == pytest.approx(1.0, rel=1e-6)
    assert summary["target"] == {**summary["target"], "epsilon": 1.0, "delta": 1e-5, "met": True,
                                 "delivered_epsilon": summary["epsilon"]}
    assert summary["guarantees"]["basic"]["epsilon"] >= summary["epsilon"]
    assert 0.0 <= summary["eps_lb"] <= summary["epsilon"]
    # The model must beat chance on digits' ten classes by a margin no guessing reaches: a one-sided
    # binomial test against accuracy 1/10 on the test split (0.1 <= accuracy, which accepted chance, did not).
    test_records = split_federated(load_dataset("digits"), 0).test.labels.size
    correct = round(summary["accuracy"] * test_records)
    assert correct == pytest.approx(summary["accuracy"] * test_records, abs=1e-6)
    assert binomtest(correct, test_records, 0.1, alternative="greater").pvalue < 1e-6
    # The non-private run of the same pipeline is trained and beats the private one.
    assert summary["non_private"]["accuracy"] > summary["accuracy"]
    for name in summary["files"]:
        assert (tmp_path / "report" / name).is_file()
    stored = json.loads((tmp_path / "report" / "summary.json").read_text())
    assert stored == summary
    jsonschema.validate(stored, SUMMARY_SCHEMA)
    report = (tmp_path / "report" / "report.md").read_text()
    for guarantee in summary["guarantees"].values():
        assert guarantee["unit"] == "record" and guarantee["neighbouring"] == "replace-one"
    assert "| basic | one record, replace-one | " in report and "## Target budget" in report
    assert len(set(summary["notes"])) == len(summary["notes"])
    # The canary's ε_lb rests on the GDP shape, said beside it; no note prints a variable's name for its value.
    assert "(gdp; under the GDP-shape assumption; α = 0.05). Assumption: " in report
    assert "certified" not in report.split("## Audit")[1].split("## Notes")[0].replace("certifies", "")
    assert "score_head_label_fixed_sensitivity_over_bound" not in report
    ratio = summary["audit"]["measurements"]["score_head_label_fixed_sensitivity_over_bound"]
    assert f"that bound recomputed here is {format_up(ratio, 3)} of the released sensitivity" in report
    # The round: 20 clients, their records, the two heads' σ and sensitivities from the ledger.
    assert "- Clients: 20 clients sent a release; records per client: min " in report
    assert report.count("calibrated for the L2 sensitivity") == 2


@pytest.mark.slow  # the round trained again from scratch at every ε of the curve: 6.5 s of CPU
def test_the_curve_released_from_one_training_is_the_curve_trained_per_epsilon(digits_run):
    # The main job trains FedAUXfdp once and releases it per ε (trainers.pipelines.registry.fit_pipeline); before
    # issue 32 it trained the round anew at every ε. Each point, the non-private run and every privacy number of
    # the target's run must be those of a round trained from scratch at that setting, bit for bit.
    from audits.report import json_record
    from app.main_job import _guarantee_record, round_record
    from trainers.pipelines.registry import run_pipeline
    from trainers.pipelines.targets import non_private_config, pipeline_config

    summary, _ = digits_run
    data = load_dataset("digits")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpmech.NoGuaranteeWarning)
        trained_per_epsilon = [
            {"epsilon": epsilon, "accuracy": run_pipeline("fedauxfdp", data, pipeline_config("fedauxfdp", epsilon, 1e-5,
                                                                                             "digits")).accuracy}
            for epsilon in sorted({*CURVE_EPSILONS, 1.0})]
        free = run_pipeline("fedauxfdp", data, non_private_config("fedauxfdp", 1e-5, "digits")[0])
    assert summary["accuracy_curve"] == [*trained_per_epsilon, {"epsilon": None, "accuracy": free.accuracy}]
    assert summary["non_private"]["accuracy"] == free.accuracy
    target = run_pipeline("fedauxfdp", data, pipeline_config("fedauxfdp", 1.0, 1e-5, "digits"))

    def plain(record):  # as the summary holds it: json_record's form, ∞ as null
        return {key: value for key, value in json_record(record).items() if key != "non_finite"}

    assert summary["accuracy"] == target.accuracy and summary["baselines"] == target.baselines
    assert summary["guarantees"] == plain({name: _guarantee_record(target, name, guarantee)
                                           for name, guarantee in target.guarantees.items()})
    # Every release's σ and sensitivity, the clients' records, and the configuration.
    assert summary["round"] == plain(round_record(target)) and summary["config"] == plain(target.summary()["config"])


@pytest.mark.slow  # MNIST-1D generated and a CNN trained: about a minute
def test_the_default_round_runs_fedauxfdp_on_public_cnn_features_at_the_seeds_settings(tmp_path, monkeypatch):
    # The sizes shrink for the test; the path is the default one: MNIST-1D generated and cached, a CNN trained on
    # a public part only, the seed's paper() settings with the target split between the heads.
    import trainers.data as data_module

    monkeypatch.setattr(data_module, "MNIST1D_CNN_SAMPLES", 8_000)
    monkeypatch.setattr(data_module, "MNIST1D_CNN_PUBLIC", 1_000)
    monkeypatch.setattr(data_module, "MNIST1D_CNN_EPOCHS", 3)
    cache = tmp_path / "cache"
    summary = run_main_job(out=tmp_path / "report", progress=False, trials=500, cache_dir=cache)
    assert summary["pipeline"] == "fedauxfdp" and summary["dataset"] == "mnist1d-cnn"
    assert summary["config"]["class_regularization"] == 0.01 and summary["config"]["num_components"] is None
    assert summary["target"]["met"] and summary["epsilon"] <= 1.0
    # One data chunk and one CNN (.npz), and the CNN's cached embeddings (embedding_<digest>.npy), none half-written.
    files = list(cache.iterdir())
    assert sum(path.suffix == ".npz" for path in files) == 1 + 1
    assert all(path.suffix == ".npz" or (path.name.startswith("embedding_") and path.name.endswith(".npy")
                                         and ".partial" not in path.name) for path in files), files
    # 7,000 records left by the CNN, 10% of them test records; far above chance (1/10) at ε = 1.
    test_records = round(0.1 * 7_000)
    correct = round(summary["accuracy"] * test_records)
    assert binomtest(correct, test_records, 0.1, alternative="greater").pvalue < 1e-6
    again = load_dataset("mnist1d-cnn", cache_dir=cache)
    assert len(again) == 7_000 and np.all(np.linalg.norm(again.features, axis=1) <= 1.0 + 1e-12)


@pytest.mark.parametrize("pipeline", ["fedgm", "fedmd-nfdp", "fedzda"])
def test_a_pipeline_of_raw_inputs_refuses_the_feature_dataset_before_any_work(tmp_path, pipeline, dpmech_main):
    status, _, err = dpmech_main("run", "--pipeline", pipeline, "--dataset", "mnist1d-cnn", "--out", str(tmp_path / "r"),
                                 "--cache-dir", str(tmp_path / "cache"))
    assert status == 2 and not (tmp_path / "cache").exists()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "dataset 'mnist1d-cnn'" in lines[0] and pipeline in lines[0], err


@pytest.mark.slow
def test_cli_json_is_the_summary_file(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "dpmech", "run", "--pipeline", "dphelmet", "--epsilon", "2", "--trials", "1000",
         "--out", str(tmp_path / "r"), "--json"],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    jsonschema.validate(record, SUMMARY_SCHEMA)
    assert record == json.loads((tmp_path / "r" / "summary.json").read_text())
    assert record["pipeline"] == "dphelmet" and record["epsilon"] <= 2.0
    # User-level rows are read from the pipeline's result, not assumed.
    units = {name: guarantee["unit"] for name, guarantee in record["guarantees"].items()}
    assert units == {"basic": "record", "tight": "record", "user, group privacy": "user", "user, Cor. 5.5": "user"}
    # stderr is a pipe here: progress comes as log lines, each step named.
    lines = result.stderr.strip().splitlines()
    assert all(line.startswith("dpmech run: [") for line in lines) and any("4/5 audit: " in line for line in lines)
    assert not any("LiRA" in line for line in lines)


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


def test_a_cache_dir_that_is_a_file_exits_2_with_one_line(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    result = subprocess.run([sys.executable, "-m", "dpmech", "run", "--out", str(tmp_path / "r"), "--cache-dir", str(afile)],
                            capture_output=True, text=True)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and "--cache-dir" in lines[0], result.stderr


def _guarantee(neighbouring, epsilon, delta):
    return PrivacyGuarantee(epsilon, delta, "basic", neighbouring, "epsilon", (epsilon, epsilon, epsilon), True)


class _FakeResult:
    pipeline = "fedzda"
    accuracy = 0.5
    baselines = {}
    per_client = [{"client": 0, "num_records": 7}, {"client": 1, "num_records": 5}, {"client": 2, "num_records": 6}]
    messages = ()
    ledger = PrivacyLedger().record(GaussianEvent(2.5, 0.125))
    guarantees = {"records": _guarantee("add-remove-one", math.inf, 1e-5),
                  "labels": _guarantee("replace-one", 0.5, 1e-320)}
    units = {"labels": "label"}
    notes = ["no privacy guarantee", "no privacy guarantee"]
    unit = PipelineResult.unit

    config = {"num_clients": 4, "model": "softmax", "num_components": 16, "clip_features": True, "feature_bound": 1.0}

    def summary(self):
        return {"config": {}}


class _FakeAudit:
    eps_claimed = float("inf")
    delta = 0.0
    eps_lb = 0.0

    def as_dict(self):
        return {"eps_lb": 0.0, "eps_claimed": float("inf"), "delta": 0.0, "method": "gdp", "valid_as": "estimate",
                "alpha": 0.05, "notes": ["no privacy guarantee"],
                "mia": {"attack": "LOSS", "auc": 0.5, "tpr_at_0_1_percent_fpr": 0.001,
                        "tpr_at_1_percent_fpr": 0.01, "fpr_resolution": 1 / 150}}


@pytest.fixture
def stubbed_run(monkeypatch, tmp_path, capsys):
    # Training, audit and the audit's files stubbed: the checks are on what the summary reports.
    import app.main_job as main_job
    from dpmech.cli import main as cli_main

    def fake_run(name, data, config, seed, **_):
        # Accuracy grows with the configured ε (DP-Helmet's config), so the curve's points can be told apart.
        result = _FakeResult()
        result.accuracy = min(1.0, getattr(config, "epsilon", 5.0) / 10.0)
        for _ in range(2):
            warnings.warn("the guarantee is vacuous", VacuousGuaranteeWarning, stacklevel=1)
        warnings.warn("an unrelated warning", UserWarning, stacklevel=1)
        return result

    class FakeFit:
        # The round "trained" once and released per config, as trainers.pipelines.registry.PipelineFit.
        def __init__(self, name, data, config, seed, **_):
            self.name, self.data, self.seed = name, data, seed

        def release(self, config, **_):
            return fake_run(self.name, self.data, config, self.seed)

    monkeypatch.setattr(main_job, "fit_pipeline", FakeFit)
    monkeypatch.setattr(main_job, "pipeline_audit", lambda name: lambda *_, **__: _FakeAudit())
    monkeypatch.setattr(main_job, "write_report", lambda *_, **__: None)

    def run(*arguments):
        status = cli_main.main(["run", "--pipeline", "fedzda", "--out", str(tmp_path / "r"), *arguments])
        return status, capsys.readouterr(), tmp_path / "r"

    return run


def test_a_target_the_pipeline_cannot_meet_is_reported_and_warned(stubbed_run):
    status, captured, folder = stubbed_run("--epsilon", "1", "--json")
    assert status == 0
    record = json.loads(captured.out)
    jsonschema.validate(record, SUMMARY_SCHEMA)
    assert record["target"]["met"] is False and record["target"]["epsilon"] == 1.0
    # ∞ is null, flagged; never the string "inf".
    assert record["epsilon"] is None and record["non_finite"]["/epsilon"] == "inf"
    assert record["target"]["delivered_epsilon"] is None and record["non_finite"]["/target/delivered_epsilon"] == "inf"
    assert record["non_finite"]["/guarantees/records/epsilon"] == "inf"
    assert "inf" not in json.dumps({key: value for key, value in record.items() if key != "non_finite"})
    warnings = [line for line in captured.err.splitlines() if line.startswith("dpmech run: warning:")]
    assert len(warnings) == 1 and warnings[0].startswith("dpmech run: warning: the fedzda pipeline cannot meet the target")
    report = (folder / "report.md").read_text(encoding="utf-8")
    assert "Warning: target NOT met" in report and "| delivered (the claim the audit tests) | ∞ | 0.0 |" in report
    assert json.loads((folder / "summary.json").read_text())["target"]["met"] is False


def test_relation_column_is_read_from_each_guarantee(stubbed_run):
    status, _, folder = stubbed_run("--epsilon", "1")
    assert status == 0
    report = (folder / "report.md").read_text(encoding="utf-8")
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["guarantees"]["records"]["relation"] == "one record, add/remove-one"
    assert summary["guarantees"]["labels"]["relation"] == "one label, replace-one"
    assert "| records | one record, add/remove-one | ∞ | 1e-05 |" in report
    # δ = 1e-320 is a subnormal: printed from its log, rounded up, never 0.
    assert "| labels | one label, replace-one | 0.5 | 1e-320 | basic | yes |" in report
    # The note the pipeline and the audit both carry is printed once; TPR at 0.1% FPR with 150 OUT scores is n/a.
    assert report.count("- no privacy guarantee") == 1 and summary["notes"] == ["no privacy guarantee"]
    assert "TPR at 0.1% FPR n/a (resolution 1/150)" in report
    assert "Seed 0;" in report and "()" not in report


def test_progress_without_a_terminal_logs_every_interval():
    stream = io.StringIO()
    with StepLog("log", interval=0.05, stream=stream) as log:
        log.step("2/5 train")
        time.sleep(0.3)
        log.step("done")
    lines = stream.getvalue().splitlines()
    assert lines[0].endswith("2/5 train") and lines[-1].endswith("done")
    assert sum(line.endswith("2/5 train (running)") for line in lines) >= 2


def test_step_names_match_each_pipelines_audit():
    from audits.attacks.pipelines import audit_function
    from app.main_job import _audit_step_name

    names = {pipeline: _audit_step_name(audit_function(pipeline)) for pipeline in PIPELINE_NAMES}
    assert len(set(names.values())) == len(names)
    # Only FedAUXfdp's audit runs LiRA (audits.attacks.pipelines.fedauxfdp imports it; the others do not).
    assert [pipeline for pipeline, name in names.items() if "LiRA" in name] == ["fedauxfdp"]


def test_accuracy_curve_and_non_private_baseline(stubbed_run):
    status, captured, folder = stubbed_run("--pipeline", "dphelmet", "--epsilon", "3", "--accuracy-curve", "--json")
    assert status == 0
    record = json.loads(captured.out)
    jsonschema.validate(record, SUMMARY_SCHEMA)
    # The non-private run is DP-Helmet at ε = ∞; each curve point is the run at that ε; ∞ is the last point, as null.
    assert record["non_private"]["accuracy"] == 1.0 and "ε = ∞" in record["non_private"]["source"]
    expected = [{"epsilon": e, "accuracy": min(1.0, e / 10.0)} for e in sorted({*CURVE_EPSILONS, 3.0})]
    assert record["accuracy_curve"] == expected + [{"epsilon": None, "accuracy": 1.0}]
    assert record["non_finite"][f"/accuracy_curve/{len(expected)}/epsilon"] == "inf"
    report = (folder / "report.md").read_text(encoding="utf-8")
    assert "| ∞ | 1.0000 |" in report and "| 3.0 | 0.3000 |" in report


def test_the_curve_is_in_the_default_run_and_can_be_left_out(stubbed_run):
    status, captured, folder = stubbed_run("--pipeline", "dphelmet", "--json")
    assert status == 0 and len(json.loads(captured.out)["accuracy_curve"]) == len({*CURVE_EPSILONS, 1.0}) + 1
    status, captured, folder = stubbed_run("--pipeline", "dphelmet", "--no-accuracy-curve", "--json")
    assert status == 0 and json.loads(captured.out)["accuracy_curve"] == []
    assert "--no-accuracy-curve` was given" in (folder / "report.md").read_text(encoding="utf-8")


def test_pipelines_without_an_epsilon_have_no_curve(stubbed_run):
    status, captured, folder = stubbed_run("--accuracy-curve", "--json")
    record = json.loads(captured.out)
    # Fed-ZDA has no guarantee: its own run is the non-private accuracy.
    assert status == 0 and record["accuracy_curve"] == [] and record["non_private"]["accuracy"] == record["accuracy"]
    assert "not applicable" in (folder / "report.md").read_text(encoding="utf-8")


def test_privacy_warnings_are_one_log_line_and_others_pass_through(stubbed_run):
    with pytest.warns(UserWarning, match="an unrelated warning"):
        status, captured, _ = stubbed_run("--epsilon", "1")
    assert status == 0
    lines = captured.err.splitlines()
    assert sum(line.startswith("dpmech run: [") and line.endswith("warning: the guarantee is vacuous")
               for line in lines) == 1


def test_the_report_names_the_clients_model_features_and_noise(stubbed_run):
    status, _, folder = stubbed_run("--epsilon", "1")
    assert status == 0
    report = (folder / "report.md").read_text(encoding="utf-8")
    summary = json.loads((folder / "summary.json").read_text())
    jsonschema.validate(summary, SUMMARY_SCHEMA)
    assert "## Round" in report
    assert ("- Clients: 3 clients sent a release (of 4 configured); records per client: min 5, median 6, max 7, "
            "18 private records in all.") in report
    assert "- Model: softmax model" in report
    assert "- Features: PCA(16) fitted on public data only, clipped to the public bound ‖x‖ <= 1." in report
    # σ, the sensitivity it was calibrated for and the relation, read from the ledger the guarantees come from.
    assert "release 1: Gaussian noise σ = 2.5 calibrated for the L2 sensitivity Δ = 0.125 (μ = Δ/σ = 0.05)" in report
    assert "neighbouring relations: one label, replace-one; one record, add/remove-one" in report


@pytest.mark.parametrize("method, valid_as, label", [("gdp", "certified", "under the GDP-shape assumption"),
                                                     ("one-run f-dp-gaussian", "certified", "under the GDP-shape assumption"),
                                                     ("clopper-pearson", "certified", "certified"),
                                                     ("gdp", "estimate", "estimate")])
def test_the_canary_lower_bound_is_labelled_with_what_it_rests_on(stubbed_run, monkeypatch, method, valid_as, label):
    import app.main_job as main_job

    class Audit(_FakeAudit):
        def as_dict(self):
            return {**super().as_dict(), "method": method, "valid_as": valid_as, "assumption": "the audit's words"}

    monkeypatch.setattr(main_job, "pipeline_audit", lambda name: lambda *_, **__: Audit())
    status, captured, folder = stubbed_run("--epsilon", "1")
    assert status == 0
    report = (folder / "report.md").read_text(encoding="utf-8")
    assert f"- Canary: ε_lb = 0.0 against the claimed ε = ∞ ({method}; {label}; α = 0.05). Assumption: the audit's words" in report
    # The terminal's table says the same, never "certified" for a GDP-shaped bound.
    assert f"0.0 ({label})" in captured.out
    assert main_job.lower_bound_validity({"method": method, "valid_as": valid_as, "alpha": 0.05}) == label


def _gaussian_audit(in_scores, out_scores, epsilon=1.0, delta=1e-5):
    from audits.scores import AuditScores

    class Audit:
        eps_claimed, alpha, mia_scores = epsilon, 0.05, None
        scores = AuditScores(in_scores, out_scores, trials="independent")
        method = "gdp"

    Audit.delta = delta
    return Audit()


def test_a_crossing_at_a_handful_of_scores_is_explained_and_not_significant():
    from app.main_job import _crossing_lines, roc_crossings

    rng = np.random.default_rng(3)
    # A 0.27-GDP pair (the claim ε = 1 allows μ ≈ 0.27 at δ = 1e-5 ... the boundary is far above it) whose two largest IN
    # scores lie above every OUT score: at FPR 0 the curve's TPR 2e-4 exceeds the boundary δ = 1e-5.
    in_scores = np.r_[rng.normal(0.27, 1.0, 9_998), 50.0, 60.0]
    audit = _gaussian_audit(in_scores, rng.normal(0.0, 1.0, 10_000))
    crossings = roc_crossings(audit)
    assert len(crossings) == 1 and crossings[0]["segments"][0][0] == 0 and not crossings[0]["band_crosses"]
    text = "\n".join(_crossing_lines(crossings, {"alpha": 0.05, "method": "gdp", "valid_as": "certified"}))
    assert "pointwise estimates, not bounds" in text and "the crossing is not significant" in text
    assert "ε_lb (under the GDP-shape assumption)" in text


def test_a_crossing_of_the_band_is_reported_as_evidence_against_the_claim():
    from app.main_job import _crossing_lines, roc_crossings

    rng = np.random.default_rng(4)
    audit = _gaussian_audit(rng.normal(6.0, 1.0, 2_000), rng.normal(0.0, 1.0, 2_000))
    crossings = roc_crossings(audit)
    assert crossings and crossings[0]["band_crosses"]
    assert "evidence at level α that the claim does not hold" in "\n".join(
        _crossing_lines(crossings, {"alpha": 0.05, "method": "gdp", "valid_as": "certified"}))
    assert roc_crossings(_gaussian_audit(rng.normal(0, 1, 100), rng.normal(0, 1, 100), epsilon=math.inf)) == []


def _legend_overflow(figure) -> list:
    """Legend texts that run past the figure's edges, measured on the Agg renderer."""
    figure.canvas.draw()  # lays the legend out
    renderer = figure.canvas.get_renderer()
    width, height = figure.bbox.width, figure.bbox.height
    texts = [text for legend in figure.legends for text in legend.get_texts()]
    return [text.get_text() for text in texts
            if (box := text.get_window_extent(renderer)).x0 < 0 or box.x1 > width or box.y0 < 0 or box.y1 > height]


def test_the_roc_legend_is_complete_and_inside_the_figure(monkeypatch):
    import audits.report as report
    from audits.scores import AuditScores

    rng = np.random.default_rng(5)
    # The default run's shape: a canary and a LiRA curve of 157,839 IN / 158,193 OUT scores, whose label is long.
    audit = _gaussian_audit(rng.normal(0.05, 1.0, 10_000), rng.normal(0.0, 1.0, 10_000))
    audit.mu_claimed, audit.mu_lb = 0.2681, 0.02603
    audit.mia = {"attack": "LiRA online, 64 shadow class heads, leave-one-out"}
    audit.mia_scores = AuditScores(rng.normal(0.0, 1.0, 157_839), rng.normal(0.0, 1.0, 158_193))
    expected = [label for label, _ in report.roc_curves(audit)]
    figure = report.roc_figure(audit, "fedauxfdp audit", 0.05)
    texts = [" ".join(text.get_text().split("\n")) for legend in figure.legends for text in legend.get_texts()]
    assert any(text.startswith(expected[1]) and text.endswith("157839 IN / 158193 OUT)") for text in texts)
    assert "claimed (ε = 1.0, δ = 1e-05) boundary (the claim the canary tests)" in texts
    assert _legend_overflow(figure) == []
    # Without the wrapping the same legend runs past the right edge: the check above can fail.
    monkeypatch.setattr(report, "_LEGEND_WIDTH", 1000)
    assert _legend_overflow(report.roc_figure(audit, "fedauxfdp audit", 0.05))
