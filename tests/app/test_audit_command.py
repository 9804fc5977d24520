"""``dpmech audit`` (:mod:`app.audit_command`): one of dpmech's own commands, in-process through dpmech's main
and as a command."""

import json
import subprocess
import sys
from importlib.metadata import EntryPoint

import numpy as np
import pytest

import dpmech
from audits.report import audit_scores_report
from dpmech.directed_rounding import format_down
from dpmech.cli import main as cli_main



def test_audit_is_one_of_dpmechs_own_commands():
    (audit,) = [point for point in cli_main._plugins() if point.name == "audit"]
    assert cli_main.is_own_command(audit) and audit.value == "app.audit_command:register"


def test_a_third_party_command_is_added_and_cannot_shadow_an_own_command(monkeypatch, capsys):
    def register(subparsers):
        subparsers.add_parser("hello").set_defaults(handler=lambda args: print("hello from a plugin"))

    monkeypatch.setitem(sys.modules, "third_party_plugin", type(sys)("third_party_plugin"))
    sys.modules["third_party_plugin"].register = register
    installed = cli_main.entry_points(cli_main.PLUGIN_GROUP)
    # The third party's entry points come first, so that only the ownership check keeps dpmech's own.
    plugins = [EntryPoint(name="hello", value="third_party_plugin:register", group=cli_main.PLUGIN_GROUP),
               EntryPoint(name="audit", value="third_party_plugin:register", group=cli_main.PLUGIN_GROUP), *installed]
    monkeypatch.setattr(cli_main, "entry_points", lambda group: plugins if group == cli_main.PLUGIN_GROUP else [])
    assert cli_main.main(["hello"]) == 0 and capsys.readouterr().out == "hello from a plugin\n"
    assert [point.value for point in cli_main._plugins() if point.name == "audit"] == ["app.audit_command:register"]
    help_text = cli_main.build_parser().format_help()
    assert "see 'dpmech hello --help'" in help_text and "empirical ε lower bounds: dpmech's mechanisms" in help_text


def test_gaussian_output_json(dpmech_main):
    # (ε = 4, δ = 1e-5), N = 10^4 per side (default), α = 0.05, seed 0.
    status, out, _ = dpmech_main("audit", "gaussian-output", "--epsilon", "4", "--delta", "1e-5", "--json")
    assert status == 0
    record = json.loads(out)
    assert {"mu_claimed", "mu_lb", "eps_claimed", "eps_lb", "method", "valid_as"} <= set(record)
    assert record["mu_claimed"] == pytest.approx(1.0 / dpmech.calibrate_gaussian(4.0, 1e-5), rel=1e-15)
    assert 0.85 * record["mu_claimed"] <= record["mu_lb"] <= record["mu_claimed"]
    assert record["eps_lb"] <= 4.0 and record["method"] == "gdp" and record["valid_as"] == "certified"
    assert record["trials"] == 10_000 and record["seed"] == 0


def test_halved_sigma_is_detected_from_the_shell(dpmech_main):
    # (ε = 2, δ = 1e-5), σ/2, N = 10^4 per side, α = 0.05, 3 repetitions (seed 5).
    status, out, _ = dpmech_main("audit", "gaussian-output", "--epsilon", "2", "--delta", "1e-5", "--sigma-scale", "0.5",
                                 "--seed", "5", "--repetitions", "3", "--json")
    record = json.loads(out)
    assert status == 0 and record["eps_lb"] > record["eps_claimed"] == 2.0
    assert record["repetitions_with_eps_lb_above_claim"] == 3 and record["mu_lb_median_over_repetitions"] > 0.5


def test_randomized_response_json(dpmech_main):
    # ε = 2, K = 10, m = 10^5 canaries, α = 0.05, δ = 0, seed 0.
    status, out, _ = dpmech_main("audit", "randomized-response", "--epsilon", "2", "--num-classes", "10",
                                 "--canaries", "100000", "--json")
    record = json.loads(out)
    assert status == 0 and {"eps_claimed", "eps_lb", "method", "valid_as"} <= set(record)
    assert record["eps_claimed"] == 2.0 and record["eps_lb"] >= 0.95 * 2.0
    assert record["method"] == "one-run" and record["valid_as"] == "certified" and record["canaries"] == 100_000


def test_table_and_report_folder(dpmech_main, tmp_path):
    status, out, _ = dpmech_main("audit", "randomized-response", "--epsilon", "1", "--num-classes", "2",
                                 "--canaries", "1000", "--out", str(tmp_path / "report"))
    assert status == 0 and "eps_lb" in out and "one-run" in out
    written = sorted(path.name for path in (tmp_path / "report").iterdir())
    assert written == ["audit.json", "audit.md", "roc.png", "scores.npz"]
    stored = json.loads((tmp_path / "report" / "audit.json").read_text())
    assert stored["seed"] == 0 and "SeedSequence" in stored["seed_derivation"]


@pytest.mark.parametrize(
    "arguments, fragment",
    [
        (("gaussian-output", "--epsilon", "0", "--delta", "1e-5"), "epsilon"),
        (("gaussian-output", "--epsilon", "1", "--delta", "2"), "delta"),
        (("gaussian-output", "--epsilon", "1", "--delta", "1e-5", "--sigma-scale", "0"), "--sigma-scale"),
        (("gaussian-output", "--epsilon", "1", "--delta", "1e-5", "--trials", "1.5"), "--trials"),
        (("gaussian-output", "--delta", "1e-5"), "--epsilon"),
        (("randomized-response", "--epsilon", "1", "--num-classes", "1", "--canaries", "10"), "--num-classes"),
        (("randomized-response", "--epsilon", "1", "--num-classes", "2", "--canaries", "1"), "num_canaries"),
        (("randomized-response", "--epsilon", "1", "--num-classes", "2", "--canaries", "9", "--seed", "-1"), "seed"),
        (("randomized-response", "--epsilon", "1", "--num-classes", "2", "--canaries", "9", "--alpha", "1"), "alpha"),
        (("randomized-response", "--epsilon", "1", "--num-classes", "2", "--canaries", "9", "--repetitions", "2",
          "--jobs", "0"), "--jobs"),
        (("bogus",), "AUDIT"),
        ((), "AUDIT"),
    ],
)
def test_bad_input_exits_2_with_one_line(dpmech_main, arguments, fragment):
    status, out, err = dpmech_main("audit", *arguments)
    lines = err.strip().splitlines()
    assert status == 2 and out == ""
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in err


def test_installed_command():
    result = subprocess.run([sys.executable, "-m", "dpmech", "audit", "gaussian-output", "--epsilon", "1", "--delta",
                             "1e-5", "--trials", "1000", "--json"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["method"] == "gdp"
    bad = subprocess.run([sys.executable, "-m", "dpmech", "audit", "gaussian-output", "--epsilon", "-1", "--delta",
                          "1e-5"], capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


@pytest.fixture
def score_files(tmp_path):
    rng = np.random.default_rng(0)
    paths = {name: tmp_path / f"{name}.npy" for name in ("in", "out", "matrix", "text", "nan")}
    np.save(paths["in"], rng.normal(1.0, 1.0, 400))
    np.save(paths["out"], rng.normal(0.0, 1.0, 400))
    np.save(paths["matrix"], np.zeros((3, 3)))
    np.save(paths["nan"], np.array([0.0, np.nan]))
    paths["text"].write_text("not a numpy file")
    return {name: str(path) for name, path in paths.items()}


def test_scores_writes_the_report_for_the_users_scores(dpmech_main, score_files, tmp_path):
    status, out, _ = dpmech_main("audit", "scores", score_files["in"], score_files["out"], "--epsilon", "1",
                                 "--delta", "1e-5", "--out", str(tmp_path / "r"), "--json")
    assert status == 0
    record = json.loads(out)
    expected = audit_scores_report(np.load(score_files["in"]), np.load(score_files["out"]), epsilon=1.0, delta=1e-5)
    assert record["eps_lb"] == expected.eps_lb and record["auc"] == expected.mia["auc"]
    assert record["valid_as"] == "estimate" and record["eps_claimed"] == 1.0 and record["non_finite"] == {}
    written = sorted(path.name for path in (tmp_path / "r").iterdir())
    assert written == ["audit.json", "audit.md", "roc.png", "scores.npz"]
    assert "TPR at 0.1% FPR: n/a (resolution 1/400)" in (tmp_path / "r" / "audit.md").read_text(encoding="utf-8")


def test_scores_without_a_claim_writes_infinity_as_null(dpmech_main, score_files):
    status, out, _ = dpmech_main("audit", "scores", score_files["in"], score_files["out"], "--trials", "independent",
                                 "--json")
    record = json.loads(out)
    assert status == 0 and record["eps_claimed"] is None and record["non_finite"] == {"/eps_claimed": "inf"}
    assert record["valid_as"] == "certified"


@pytest.mark.parametrize(
    "arguments, fragment",
    [
        (("missing.npy", "out"), "IN.npy"),
        (("in", "text"), "OUT.npy"),
        (("in", "matrix"), "OUT.npy"),
        (("nan", "out"), "IN.npy"),
        (("in", "out", "--epsilon", "1"), "epsilon and delta"),
        (("in", "out", "--epsilon", "1", "--delta", "1"), "--delta"),
        (("in", "out", "--epsilon", "-1", "--delta", "0"), "--epsilon"),
        (("in", "out", "--alpha", "0"), "--alpha"),
        (("in", "out", "--trials", "many"), "--trials"),
        (("in",), "OUT.npy"),
    ],
)
def test_scores_bad_input_exits_2_with_one_line(dpmech_main, score_files, tmp_path, arguments, fragment):
    paths = [score_files.get(argument, str(tmp_path / argument)) if index < 2 and not argument.startswith("-")
             else argument for index, argument in enumerate(arguments)]
    status, out, err = dpmech_main("audit", "scores", *paths)
    lines = err.strip().splitlines()
    assert status == 2 and out == ""
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in err, err


def test_scores_table_prints_n_a_below_the_fpr_resolution(dpmech_main, score_files):
    status, out, _ = dpmech_main("audit", "scores", score_files["in"], score_files["out"])
    assert status == 0
    row = next(line for line in out.splitlines() if "tpr_at_0_1_percent_fpr" in line)
    assert "n/a (resolution 1/400)" in row
    assert "n/a" not in next(line for line in out.splitlines() if "tpr_at_1_percent_fpr" in line)
    # ε_lb to 4 significant digits, rounded down.
    expected = audit_scores_report(np.load(score_files["in"]), np.load(score_files["out"])).eps_lb
    text = next(line for line in out.splitlines() if "eps_lb" in line).split("│")[2].split()[0]  # its label follows
    assert text == format_down(expected, 4) and float(text) <= expected
