"""A public/private split without y_public (``dpmech run --data``): every pipeline whose registry entry says it
never reads the public labels (``public_labels_use`` "") gives the very round it gives with them, and the one
that reads them (FedMD-NFDP) refuses by name before training; the optional steps that read them (FedAUXfdp's
λ tuning and certainty diagnostics, Fed-ZDA's oracle) refuse or are left out, saying so."""

import dataclasses

import numpy as np
import pytest

from trainers.data import PublicData, SplitData, load_digits_dataset, split_federated
from trainers.pipelines import fedauxfdp, fedzda
from trainers.pipelines.dphelmet import DpHelmetConfig
from trainers.pipelines.fedgm import FedGmConfig
from trainers.pipelines.fedmd_nfdp import FedMdNfdpConfig
from trainers.pipelines.registry import PIPELINE_NAMES, get_pipeline, run_pipeline

# FedGM's images are unprotected and Fed-ZDA has no guarantee: both warn on every run (tested elsewhere).
pytestmark = [pytest.mark.filterwarnings("ignore::dpmech.UnprotectedReleaseWarning"),
              pytest.mark.filterwarnings("ignore::dpmech.NoGuaranteeWarning")]

# Tiny rounds of each pipeline on digits (seconds of CPU in all).
CONFIGS = {
    "fedauxfdp": fedauxfdp.FedAuxFdpConfig(num_clients=4, alpha=0.16, num_components=8),
    "dphelmet": DpHelmetConfig(num_users=4, records_per_user=30, epochs=5, num_components=8),
    "fedmd-nfdp": FedMdNfdpConfig(num_clients=3, subsample_size=30, rounds=1, public_epochs=1, initial_epochs=2,
                                  alignment_size=60),
    "fedgm": FedGmConfig(num_clients=3, alpha=10.0, images_per_class=2, real_batch_size=8, outer_iterations=1,
                         matching_steps=1, network_steps=1, width=4, label_epsilon=4.0, server_epochs=2,
                         one_shot_local_epochs=1, baselines=False),
    "fedzda": fedzda.FedZdaConfig(num_clients=4, alpha=0.3, rounds=2, augmentation_start=1, zsdg_iterations=5,
                                  synthetic_per_class=2, local_epochs=1, architecture="conv-batch-8", baseline=False),
}
SEED = 1


@pytest.fixture(scope="module")
def splits():
    """The same digits public/private split with and without its public labels."""
    digits = load_digits_dataset()
    order = np.random.default_rng(0).permutation(len(digits))
    public, private = digits.subset(order[:400]), digits.subset(order[400:])
    return SplitData(public.features, public.labels, private), SplitData(public.features, None, private)


def _payload_arrays(result) -> list:
    return [np.asarray(value) for message in result.messages for value in message.payload.values()]


def test_the_registry_names_a_reason_for_every_pipeline_that_reads_public_labels():
    readers = {name: get_pipeline(name).public_labels_use for name in PIPELINE_NAMES}
    assert {name for name, reason in readers.items() if reason} == {"fedmd-nfdp"}
    assert "Li & Wang 2019" in readers["fedmd-nfdp"]


# FedGM's and Fed-ZDA's torch rounds take seconds of CPU each, twice: the slow set's.
SLOW = ("fedgm", "fedzda")


@pytest.mark.parametrize("pipeline", [pytest.param(name, marks=pytest.mark.slow) if name in SLOW else name
                                      for name in PIPELINE_NAMES if not get_pipeline(name).public_labels_use])
def test_a_pipeline_that_never_reads_public_labels_gives_the_same_round_without_them(splits, pipeline):
    labelled, unlabelled = splits
    with_labels = run_pipeline(pipeline, labelled, CONFIGS[pipeline], seed=SEED)
    without_labels = run_pipeline(pipeline, unlabelled, CONFIGS[pipeline], seed=SEED)
    # Bit for bit: no step of the round (nor its baselines) reads a public label, and none is made up.
    assert without_labels.accuracy == with_labels.accuracy
    assert without_labels.baselines == with_labels.baselines
    first, second = _payload_arrays(with_labels), _payload_arrays(without_labels)
    assert len(first) == len(second) > 0
    for left, right in zip(first, second):
        np.testing.assert_array_equal(left, right)
    assert {name: guarantee.epsilon for name, guarantee in without_labels.guarantees.items()} == \
        {name: guarantee.epsilon for name, guarantee in with_labels.guarantees.items()}


@pytest.mark.parametrize("pipeline", [name for name in PIPELINE_NAMES if get_pipeline(name).public_labels_use])
def test_a_pipeline_that_reads_public_labels_refuses_the_split_without_them_saying_why(splits, pipeline):
    _, unlabelled = splits
    with pytest.raises(ValueError) as raised:
        run_pipeline(pipeline, unlabelled, CONFIGS[pipeline], seed=SEED)
    assert str(raised.value) == ("the public rows have no labels (a public/private split without y_public), and "
                                 f"{get_pipeline(pipeline).public_labels_use}; add y_public to the data")


def test_fedauxfdp_without_public_labels_leaves_out_only_its_certainty_diagnostics_true_class_shares(splits):
    labelled, unlabelled = splits
    config = CONFIGS["fedauxfdp"]
    with_labels = fedauxfdp.run_fedauxfdp(labelled, config, seed=SEED)
    without_labels = fedauxfdp.run_fedauxfdp(unlabelled, config, seed=SEED)
    changed = [(left, right) for left, right in zip(with_labels.notes, without_labels.notes) if left != right]
    assert len(with_labels.notes) == len(without_labels.notes) and len(changed) == 1
    # The spread reads the clients' score heads on the public rows alone: the same number with and without labels.
    spread = changed[0][0].split(" (0: weighting does nothing), ")[0]
    assert spread.startswith("Certainty diagnostics (distillation set; experimenter-side, not released): spread 0.")
    assert changed[0][1] == spread + (" (0: weighting does nothing), true-class shares not computed: the public rows "
                                      "have no labels (a split without y_public); the round itself distils on "
                                      "unlabelled public data.")
    assert "weighted true-class share" in changed[0][0]
    unlabelled_rows = without_labels.prepared.features.distillation
    labelled_rows = dataclasses.replace(unlabelled_rows, labels=np.zeros(len(unlabelled_rows.features), dtype=np.int64))
    shares = np.full((len(without_labels.messages), 10), 0.1)
    without = fedauxfdp.certainty_diagnostics(without_labels.messages, unlabelled_rows, shares)
    assert without.weighted_true_class_share is None and without.uniform_true_class_share is None
    assert without.spread == fedauxfdp.certainty_diagnostics(without_labels.messages, labelled_rows, shares).spread


def test_fedauxfdp_tuning_refuses_public_rows_without_labels(splits):
    _, unlabelled = splits
    sets = fedauxfdp.prepare_round(unlabelled, CONFIGS["fedauxfdp"], SEED).features
    with pytest.raises(ValueError, match=r"^the public rows have no labels .*the λ tuning \(tune_regularization\)"):
        fedauxfdp.tune_regularization(sets.negative, sets.distillation, len(sets.private), CONFIGS["fedauxfdp"], 10,
                                      0, fedauxfdp.RegularizationGrid())


def test_fedzda_with_its_oracle_refuses_public_rows_without_labels(splits):
    _, unlabelled = splits
    split = split_federated(unlabelled, SEED)
    config = dataclasses.replace(CONFIGS["fedzda"], oracle=True)
    with pytest.raises(ValueError, match=r"^the public rows have no labels .*Fed-ZDA's oracle \(oracle=True"):
        fedzda.run_fedzda(split, config, seed=SEED, progress=False)
    with pytest.raises(ValueError, match=r"Fed-ZDA's oracle"):
        fedzda.train_oracle((split.negative, split.distillation), config, 0)


def test_unlabelled_public_data_keeps_no_labels_through_subsets_and_refuses_a_reader():
    features = np.random.default_rng(0).normal(size=(6, 3))
    unlabelled = PublicData(features, None)
    part = unlabelled.subset(np.array([4, 1]))
    assert part.labels is None and isinstance(part, PublicData)
    np.testing.assert_array_equal(part.features, features[[4, 1]])
    with pytest.raises(ValueError, match="and the test step reads them; add y_public"):
        part.required_labels("the test step reads them")
    labelled = PublicData(features, np.arange(6) % 2)
    np.testing.assert_array_equal(labelled.subset(np.array([4, 1])).required_labels("unused"), [0, 1])
    with pytest.raises(ValueError, match="features must be finite"):
        PublicData(np.full((2, 3), np.nan), None)
