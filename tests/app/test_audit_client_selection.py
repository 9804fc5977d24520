"""``dpmech audit dphelmet --client-sampling {uniform,poisson} --clients-per-round K --participation-probability Q``:
the options of ``dpmech run`` (app.options), with the same checks and refusals; the audit samples the selection in
every trial and its output names the amplified claim and its relation."""

import json

import pytest

from app.main_job import with_client_selection
from audits.attacks.pipelines.dphelmet import audit_dphelmet
from tests.app.test_main_job_client_selection import BAD_CLIENT_SAMPLING
from trainers.data import load_dataset
from trainers.pipelines.registry import PIPELINES
from trainers.pipelines.targets import pipeline_config

AUDIT = ("audit", "dphelmet", "--dataset", "digits", "--epsilon", "2", "--trials", "100", "--json")


@pytest.mark.parametrize("options, named", BAD_CLIENT_SAMPLING)
def test_bad_client_sampling_exits_2_with_one_line_naming_the_option(dpmech_main, tmp_path, options, named):
    status, out, err = dpmech_main(*AUDIT, *options, "--out", str(tmp_path / "r"))
    lines = err.strip().splitlines()
    assert status == 2 and out == "" and not (tmp_path / "r").exists()
    assert len(lines) == 1 and named in lines[0], err


def test_a_k_above_the_users_is_refused_naming_the_audit_command(dpmech_main):
    status, _, err = dpmech_main(*AUDIT, "--clients-per-round", "11")
    assert status == 2 and err.strip() == ("dpmech audit: error: dpmech audit dphelmet --clients-per-round: "
                                           "clients_per_round must be in [1, num_users = 10] (got 11)")


@pytest.mark.parametrize("pipeline", [name for name, entry in PIPELINES.items() if entry.client_selection_fields is None])
def test_pipelines_without_selection_have_no_selection_options(dpmech_main, pipeline):
    status, out, err = dpmech_main("audit", pipeline, "--clients-per-round", "2")
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "unrecognized arguments: --clients-per-round 2" in err


@pytest.mark.slow  # two selection audits of DP-Helmet on digits (the command's and the same in process): ~10 s of CPU
@pytest.mark.parametrize("options, selection, relation", [
    (("--clients-per-round", "3"), (3, None), "replace-one"),
    (("--client-sampling", "poisson", "--participation-probability", "0.3"), (None, 0.3), "add/remove-one"),
])
def test_the_command_is_the_selection_audit_and_names_the_amplified_claim(dpmech_main, options, selection, relation):
    status, out, err = dpmech_main(*AUDIT, *options)
    assert status == 0, err
    record = json.loads(out)
    config = with_client_selection("dphelmet", pipeline_config("dphelmet", 2.0, 1e-5, "digits"), *selection)
    audit = audit_dphelmet(load_dataset("digits"), config, seed=0, trials=100)
    # The very audit of the library, at the amplified claim (below the claim without the selection).
    assert (record["eps_claimed"], record["eps_lb"], record["method"]) == (audit.eps_claimed, audit.eps_lb,
                                                                          "clopper-pearson")
    assert record["eps_claimed"] < record["eps_claimed_without_selection"] == \
        audit.measurements["epsilon_claimed_without_selection"]
    assert record["relation"] == f"one user (all their records), {relation}"
    assert record["claim"] == audit.claim and audit.claim.endswith("(amplified)") and relation in audit.claim
