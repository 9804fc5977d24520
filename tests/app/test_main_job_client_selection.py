"""``dpmech run --clients-per-round K``: k of the pipeline's clients selected per round, the noise calibrated on
the amplified user-level ledger; bad K and pipelines where selection does not apply exit 2 naming the option."""

import json

import pytest

from trainers.pipelines.registry import PIPELINES

RUN = ("run", "--pipeline", "dphelmet", "--epsilon", "2", "--trials", "500", "--no-accuracy-curve", "--json")


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
    assert any("does not sample the selection of 3 clients" in note for note in summary["notes"])
    assert any(note.startswith("Client selection: 3 of the 10 users") for note in summary["notes"])
    # The accounted release names the selection and the Gaussian it wraps (the three users' blind average).
    (release,) = summary["round"]["releases"]
    assert (release["event"], release["rounds"], release["sampled"]) == (
        "SelfComposedEvent", 1, "3 of 10 uniformly without replacement")
    assert release["sigma"] > 0 and release["sensitivity"] > 0
    report = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert "on the clients selected per round: 3 of 10 uniformly without replacement, 1 round" in report


@pytest.mark.parametrize("value", ["0", "11", "2.5", "three"])
def test_a_bad_k_exits_2_with_one_line_naming_the_option(dpmech_main, tmp_path, value):
    status, out, err = dpmech_main(*RUN, "--clients-per-round", value, "--out", str(tmp_path / "r"))
    lines = err.strip().splitlines()
    assert status == 2 and out == "" and not (tmp_path / "r").exists()
    assert len(lines) == 1 and "--clients-per-round" in lines[0], err


@pytest.mark.parametrize("pipeline", [name for name, entry in PIPELINES.items() if entry.client_selection_fields is None])
def test_pipelines_without_selection_refuse_the_option_and_say_why(dpmech_main, tmp_path, pipeline):
    status, out, err = dpmech_main("run", "--pipeline", pipeline, "--clients-per-round", "2", "--out", str(tmp_path / "r"))
    lines = err.strip().splitlines()
    assert status == 2 and out == "" and len(lines) == 1, err
    assert f"--clients-per-round) does not apply to {pipeline}: {PIPELINES[pipeline].no_client_selection}" in lines[0]


def test_the_flower_round_refuses_client_selection(dpmech_main, tmp_path):
    status, _, err = dpmech_main(*RUN, "--clients-per-round", "3", "--engine", "flower", "--out", str(tmp_path / "r"))
    assert status == 2 and "--clients-per-round) needs engine 'inprocess'" in err and len(err.strip().splitlines()) == 1
