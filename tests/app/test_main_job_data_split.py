"""``dpmech run --data FILE.npz`` with the public/private split form: a digits split saved to npz is kept as
given; a split without y_public runs the pipelines that read public rows as features only, and the one that reads
their labels (FedMD-NFDP) exits 2 with one line naming it and why."""

import json

import numpy as np
import pytest

from audits.attacks.pipelines import audit_function
from trainers.data import SplitData, load_arrays, load_digits_dataset
from trainers.pipelines.registry import PIPELINE_NAMES, get_pipeline, run_pipeline
from trainers.pipelines.targets import pipeline_config

RUN = ("run", "--pipeline", "dphelmet", "--epsilon", "2", "--trials", "200", "--no-accuracy-curve", "--json")


@pytest.fixture(scope="module")
def digits_split():
    digits = load_digits_dataset()
    order = np.random.default_rng(1).permutation(len(digits))
    return digits.subset(order[:500]), digits.subset(order[500:])


@pytest.mark.slow  # `dpmech run` end to end and the round again in process: 3 to 6 s of CPU
def test_the_split_file_is_the_round_of_the_same_split_in_process(dpmech_main, digits_split, tmp_path):
    public, private = digits_split
    path = tmp_path / "split.npz"
    np.savez(path, X_public=public.features, y_public=public.labels, X_private=private.features, y_private=private.labels)
    status, out, err = dpmech_main(*RUN, "--data", str(path), "--out", str(tmp_path / "r"))
    assert status == 0, err
    summary = json.loads(out)
    assert (summary["dataset"], summary["data_file"]) == ("user-data", str(path))
    # The same round run on the loaded split in process: the file's public/private boundary is what trained.
    expected = run_pipeline("dphelmet", load_arrays(path), pipeline_config("dphelmet", 2.0, 1e-5, "user-data"), seed=0)
    assert summary["accuracy"] == expected.accuracy
    assert "public/private split" in (tmp_path / "r" / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("pipeline", [name for name in PIPELINE_NAMES if get_pipeline(name).public_labels_use])
def test_a_split_without_public_labels_exits_2_naming_the_pipeline_and_why(dpmech_main, digits_split, tmp_path,
                                                                           pipeline):
    public, private = digits_split
    path = tmp_path / "unlabelled.npz"
    np.savez(path, X_public=public.features, X_private=private.features, y_private=private.labels)
    status, out, err = dpmech_main("run", "--pipeline", pipeline, "--data", str(path), "--out", str(tmp_path / "r"))
    lines = err.strip().splitlines()
    assert status == 2 and out == "" and not (tmp_path / "r").exists() and len(lines) == 1, err
    assert lines[0] == (f"dpmech run: error: data file {str(path)!r} has no y_public: {pipeline} needs labels for "
                        f"the public rows: {get_pipeline(pipeline).public_labels_use}; add y_public to the file")


@pytest.mark.slow  # `dpmech run` end to end and the round again in process: 3 to 6 s of CPU
def test_a_split_without_public_labels_runs_a_pipeline_that_reads_public_rows_as_features(dpmech_main, digits_split,
                                                                                         tmp_path):
    public, private = digits_split
    path = tmp_path / "unlabelled.npz"
    np.savez(path, X_public=public.features, X_private=private.features, y_private=private.labels)
    assert get_pipeline("dphelmet").public_labels_use == ""
    status, out, err = dpmech_main(*RUN, "--data", str(path), "--out", str(tmp_path / "r"))
    assert status == 0, err
    # DP-Helmet fits its feature map on the public rows' features only: the round is the labelled split's.
    labelled = SplitData(public.features, public.labels, private)
    expected = run_pipeline("dphelmet", labelled, pipeline_config("dphelmet", 2.0, 1e-5, "user-data"), seed=0)
    assert json.loads(out)["accuracy"] == expected.accuracy


@pytest.mark.parametrize("pipeline", [name for name in PIPELINE_NAMES if get_pipeline(name).public_labels_use])
def test_the_audit_of_a_pipeline_that_reads_public_labels_refuses_the_split_without_them(digits_split, pipeline):
    public, private = digits_split
    audit = audit_function(pipeline)
    with pytest.raises(ValueError) as raised:
        audit(SplitData(public.features, None, private), pipeline_config(pipeline, 2.0, 1e-5, "user-data"), seed=0)
    assert str(raised.value) == ("the public rows have no labels (a public/private split without y_public), and "
                                 f"{get_pipeline(pipeline).public_labels_use}; add y_public to the data")
