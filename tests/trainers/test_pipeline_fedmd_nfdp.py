"""FedMD-NFDP pipeline at tiny sizes on digits: reproducibility, dpmech's NFDP guarantee and warning,
heterogeneous parties, validation."""

import numpy as np
import pytest

import dpmech
from trainers.data import LabelledData, class_disjoint_split, load_digits_dataset
from trainers.pipelines.fedmd_nfdp import FedMdNfdpConfig, party_datasets, run_fedmd_nfdp
from tests.trainers.digits_fixtures import digits_split as split

# Every FedMD-NFDP run warns that its guarantee is vacuous (tests/trainers/test_privacy_warnings.py checks it).
pytestmark = pytest.mark.filterwarnings("ignore::dpmech.VacuousGuaranteeWarning")

TINY = dict(num_clients=3, subsample_size=30, rounds=1, public_epochs=1, initial_epochs=8, alignment_size=60,
            learning_rate=1e-2)


@pytest.fixture(scope="module")
def result(split):
    return run_fedmd_nfdp(split, FedMdNfdpConfig(**TINY), seed=5, progress=False)


def test_same_seed_gives_identical_accuracy_and_messages(split, result):
    again = run_fedmd_nfdp(split, FedMdNfdpConfig(**TINY), seed=5, progress=False)
    assert again.accuracy == result.accuracy
    for first, second in zip(result.messages, again.messages):
        np.testing.assert_array_equal(first.payload["alignment_logits"], second.payload["alignment_logits"])


def test_guarantee_and_warning_are_dpmechs_for_the_smallest_party(result):
    sizes = [entry["records"] for entry in result.per_client]
    expected = dpmech.mechanisms.nfdp_guarantee(min(sizes), TINY["subsample_size"], False)
    assert any(expected.warning in note for note in result.notes)
    assert result.ledger.events == (expected.event,)
    assert result.ledger.neighbouring == dpmech.ADD_REMOVE_ONE
    assert (result.guarantees["nfdp"].epsilon, result.guarantees["nfdp"].delta) == (expected.epsilon, expected.delta)
    for entry in result.per_client:
        own = dpmech.mechanisms.nfdp_guarantee(entry["records"], TINY["subsample_size"], False)
        assert (entry["epsilon"], entry["delta"]) == (own.epsilon, own.delta)
    assert result.guarantees["nfdp"].delta >= 1.0 / min(sizes)


def test_messages_are_logits_per_round_from_heterogeneous_parties(result):
    assert [entry["architecture"] for entry in result.per_client] == ["mlp-32", "mlp-64", "conv-none-8"]
    for message in result.messages:
        assert set(message.payload) == {"alignment_logits"}
        assert message.payload["alignment_logits"].shape == (TINY["rounds"] + 1, TINY["alignment_size"], 10)


def test_accuracy_is_above_chance(result):
    # 10 balanced classes: chance is about 0.1
    assert result.accuracy > 0.3
    assert "before_collaboration" in result.baselines


def test_subsample_with_replacement_uses_theorem_two(split):
    config = FedMdNfdpConfig(**dict(TINY, replacement=True, subsample_size=20, rounds=1, initial_epochs=1))
    result = run_fedmd_nfdp(split, config, seed=1, progress=False)
    smallest = min(entry["records"] for entry in result.per_client)
    assert result.ledger.events == (dpmech.mechanisms.nfdp_guarantee(smallest, 20, True).event,)


@pytest.mark.parametrize("field,value", [
    ("subsample_size", 0), ("alpha", 0.0), ("architectures", ()), ("architectures", ("mlp-x",)), ("rounds", 0),
    ("learning_rate", -1.0), ("input_shape", (1, 0, 8)), ("initial_epochs", 0),
])
def test_invalid_config_raises(field, value):
    with pytest.raises(ValueError, match=field):
        FedMdNfdpConfig(**{field: value})


def test_subsample_larger_than_a_party_without_replacement_raises(split):
    with pytest.raises(ValueError, match="subsample_size"):
        run_fedmd_nfdp(split, FedMdNfdpConfig(**dict(TINY, subsample_size=10_000)), seed=0, progress=False)


def test_alignment_larger_than_public_data_raises(split):
    with pytest.raises(ValueError, match="alignment_size"):
        run_fedmd_nfdp(split, FedMdNfdpConfig(**dict(TINY, alignment_size=10_000)), seed=0, progress=False)


def test_public_data_of_other_classes():
    # FedMD's protocol as the seed runs it: public data of classes no party holds (issue 16)
    digits = load_digits_dataset()
    split = class_disjoint_split(LabelledData(digits.features / 16.0, digits.labels), 5, np.random.default_rng(0))
    config = FedMdNfdpConfig(**TINY)
    parties = party_datasets(split, config, seed=2)
    assert all(party.labels.min() >= 5 for party in parties) and split.distillation.labels.max() < 5
    result = run_fedmd_nfdp(split, config, seed=2)
    sizes = [len(party) for party in parties]
    assert [entry["records"] for entry in result.per_client] == sizes
    assert result.ledger.events == (dpmech.mechanisms.nfdp_guarantee(min(sizes), TINY["subsample_size"], False).event,)
    # the test set holds private classes only: a public class is never the right answer
    assert split.test.labels.min() >= 5
