"""``dpmech run --clients-per-round K`` (k of n, uniform) and ``--client-sampling poisson --participation-probability
Q``: the pipeline's clients selected per round, the noise calibrated on the amplified user-level ledger, the canary
audit sampling the selection; bad values and pipelines where selection does not apply exit 2 naming the option."""

import json

import jsonschema
import pytest

from app.main_job import SUMMARY_SCHEMA
from dpmech import ADD_REMOVE_ONE, REPLACE_ONE, GaussianEvent, PrivacyLedger
from dpmech.client_selection import client_selection_event
from trainers.pipelines.registry import PIPELINES

RUN = ("run", "--pipeline", "dphelmet", "--epsilon", "2", "--trials", "500", "--no-accuracy-curve", "--json")


@pytest.mark.slow  # 4.0 s of CPU in CI's default run (stop 39): the README's rule moves tests of 4 s or more
def test_three_of_ten_users_meet_the_target_on_the_amplified_ledger(dpmech_main, tmp_path):
    status, out, err = dpmech_main(*RUN, "--clients-per-round", "3", "--out", str(tmp_path / "r"))
    assert status == 0, err
    summary = json.loads(out)
    assert (summary["round"]["clients"], summary["round"]["configured_clients"]) == (3, 10)
    assert (summary["config"]["clients_per_round"], summary["config"]["privacy_unit"]) == (3, "user")
    tight, basic = summary["guarantees"]["tight"], summary["guarantees"]["basic"]
    assert tight["unit"] == basic["unit"] == "user" and tight["neighbouring"] == "replace-one"
    # Amplified: within the target, where the three selected users' average alone is not.
    assert tight["epsilon"] <= 2.0 < basic["epsilon"]
    target = summary["target"]
    assert target["met"] and target["delivered_epsilon"] >= tight["epsilon"]
    # The audit samples the selection and tests the amplified claim with the assumption-free estimator.
    audit = summary["audit"]
    assert audit["eps_claimed"] == tight["epsilon"] and audit["method"] == "clopper-pearson"
    assert audit["valid_as"] == "certified" and audit["mu_lb"] is None and audit["eps_lb"] <= audit["eps_claimed"]
    assert not any("does not sample" in note for note in summary["notes"])
    assert any(note.startswith("The audit samples the client selection in every trial") for note in summary["notes"])
    assert any(note.startswith("Client selection: 3 of the 10 users") for note in summary["notes"])
    # The accounted release names the selection and the Gaussian it wraps (the three users' blind average).
    (release,) = summary["round"]["releases"]
    assert (release["event"], release["rounds"], release["sampled"]) == (
        "SelfComposedEvent", 1, "3 of 10 uniformly without replacement")
    assert release["sigma"] > 0 and release["sensitivity"] > 0
    report = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert "on the clients selected per round: 3 of 10 uniformly without replacement, 1 round" in report


@pytest.mark.parametrize("pipeline", [name for name, entry in PIPELINES.items() if entry.client_selection_fields is None])
def test_pipelines_without_selection_refuse_the_option_and_say_why(dpmech_main, tmp_path, pipeline):
    status, out, err = dpmech_main("run", "--pipeline", pipeline, "--clients-per-round", "2", "--out", str(tmp_path / "r"))
    lines = err.strip().splitlines()
    assert status == 2 and out == "" and len(lines) == 1, err
    assert f"--clients-per-round) does not apply to {pipeline}: {PIPELINES[pipeline].no_client_selection}" in lines[0]
    status, out, err = dpmech_main("run", "--pipeline", pipeline, "--client-sampling", "poisson",
                                   "--participation-probability", "0.5", "--out", str(tmp_path / "r"))
    lines = err.strip().splitlines()
    assert status == 2 and out == "" and len(lines) == 1, err
    assert f"--participation-probability) does not apply to {pipeline}: " in lines[0]


def test_the_flower_round_refuses_client_selection(dpmech_main, tmp_path):
    status, _, err = dpmech_main(*RUN, "--clients-per-round", "3", "--engine", "flower", "--out", str(tmp_path / "r"))
    assert status == 2 and "--clients-per-round) needs engine 'inprocess'" in err and len(err.strip().splitlines()) == 1


POISSON = (*RUN, "--client-sampling", "poisson", "--participation-probability", "0.3")


@pytest.mark.slow  # 5.23 s of CPU in CI's default run (2026-11-27): 5 s or more goes to the slow set
def test_poisson_selection_accounts_the_client_selection_event_and_names_add_remove_one_users(dpmech_main, tmp_path):
    status, out, err = dpmech_main(*POISSON, "--out", str(tmp_path / "r"))
    assert status == 0, err
    summary = json.loads(out)
    jsonschema.validate(summary, SUMMARY_SCHEMA)
    assert summary["config"]["participation_probability"] == 0.3 and summary["config"]["clients_per_round"] is None
    tight, basic = summary["guarantees"]["tight"], summary["guarantees"]["basic"]
    assert tight["neighbouring"] == ADD_REMOVE_ONE and basic["neighbouring"] == REPLACE_ONE and tight["unit"] == "user"
    assert tight["relation"] == "one user (all their records), add/remove-one"
    # The run's ledger is client_selection_event's, rebuilt from the release the report states.
    (release,) = summary["round"]["releases"]
    assert (release["rounds"], release["sampled"]) == (1, "each with probability 0.3 (Poisson)")
    gaussian = GaussianEvent(release["sigma"], release["sensitivity"], neighbouring=ADD_REMOVE_ONE)
    rebuilt = PrivacyLedger(ADD_REMOVE_ONE).record(client_selection_event(gaussian, rounds=1, participation_probability=0.3))
    assert rebuilt.epsilon(1e-5).epsilon == tight["epsilon"] <= 2.0 < basic["epsilon"]
    # "basic" is the server's, which knows the selection: replace-one given S, a model swapped (2B/D).
    server = GaussianEvent(release["sigma"], 2.0 * release["sensitivity"], neighbouring=REPLACE_ONE)
    assert PrivacyLedger(REPLACE_ONE).record(server).epsilon(1e-5, method="basic").epsilon == basic["epsilon"]
    assert summary["target"]["relation"] == tight["relation"] and summary["target"]["met"]
    # The audit tests the amplified claim, sampling the Poisson selection.
    assert summary["audit"]["eps_claimed"] == tight["epsilon"] and summary["audit"]["method"] == "clopper-pearson"
    report = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert "on the clients selected per round: each with probability 0.3 (Poisson), 1 round" in report
    assert "| delivered (the claim the audit tests; one user (all their records), add/remove-one) |" in report
    assert "| tight | one user (all their records), add/remove-one |" in report
    assert "against the claimed ε = 1.999, one user (all their records), add/remove-one (clopper-pearson; certified" in report
    assert "(server, ε = 1.999, one user (all their records), add/remove-one)" in report
    # The table of `dpmech run` (no --json) names the relation beside the delivered ε and the audit's ε_lb.
    status, out, err = dpmech_main(*RUN[:-1], *POISSON[len(RUN):], "--out", str(tmp_path / "table"))
    assert status == 0, err
    assert out.count("add/remove-one") >= 2, out


# Bad client-selection options and the option each error line names: dpmech run's, and dpmech audit dphelmet's
# (tests/app/test_audit_client_selection.py), which share the options and their checks (app.options).
BAD_CLIENT_SAMPLING = [
    (("--client-sampling", "poisson", "--participation-probability", "0"), "--participation-probability"),
    (("--client-sampling", "poisson", "--participation-probability", "1.5"), "--participation-probability"),
    (("--client-sampling", "poisson", "--participation-probability", "nan"), "--participation-probability"),
    (("--client-sampling", "poisson", "--participation-probability", "-0.2"), "--participation-probability"),
    (("--client-sampling", "poisson"), "--participation-probability"),
    (("--participation-probability", "0.5"), "--client-sampling poisson"),
    (("--client-sampling", "uniform"), "--clients-per-round"),
    (("--client-sampling", "uniform", "--participation-probability", "0.5"), "--clients-per-round"),
    (("--client-sampling", "poisson", "--participation-probability", "0.5", "--clients-per-round", "3"),
     "--clients-per-round and --participation-probability exclude each other"),
    (("--clients-per-round", "3", "--participation-probability", "0.5"), "exclude each other"),
    (("--client-sampling", "binomial"), "--client-sampling"),
    (("--clients-per-round", "0"), "--clients-per-round"),
    (("--clients-per-round", "11"), "--clients-per-round"),
    (("--clients-per-round", "2.5"), "--clients-per-round"),
    (("--clients-per-round", "three"), "--clients-per-round"),
]


@pytest.mark.parametrize("options, named", [
    *BAD_CLIENT_SAMPLING,
    (("--client-sampling", "poisson", "--participation-probability", "0.5", "--engine", "flower"),
     "--participation-probability) needs engine 'inprocess'"),
])
def test_bad_client_sampling_exits_2_with_one_line_naming_the_option(dpmech_main, tmp_path, options, named):
    status, out, err = dpmech_main(*RUN, *options, "--out", str(tmp_path / "r"))
    lines = err.strip().splitlines()
    assert status == 2 and out == "" and not (tmp_path / "r").exists()
    assert len(lines) == 1 and named in lines[0], err
