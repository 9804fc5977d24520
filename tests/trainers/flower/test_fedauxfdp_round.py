"""FedAUXfdp on Flower (one simulation, about a minute): the clients' releases and the server's
models equal the in-process run with the same seed; the ledger is built from the received events."""

import numpy as np
import pytest

import dpmech
from trainers.data import load_digits_dataset
from trainers.federation import ClientMessage
from trainers.flower.messages import from_record_dict, to_record_dict
from trainers.flower.simulation import run_flower_round
from trainers.pipelines.fedauxfdp import FedAuxFdpConfig, round_notes, run_fedauxfdp

# A Flower simulation starts Ray and takes about a minute: deselect those tests with -m "not slow".
SLOW = pytest.mark.slow

CONFIG = FedAuxFdpConfig(num_clients=4)


@SLOW
def test_flower_round_equals_the_in_process_round():
    data = load_digits_dataset()
    flower = run_flower_round("fedauxfdp", data, CONFIG, seed=5)
    in_process = run_fedauxfdp(data, CONFIG, seed=5)
    assert [m.client for m in flower.messages] == [m.client for m in in_process.messages]
    for received, sent in zip(flower.messages, in_process.messages):
        assert received.events == sent.events
        for name in sent.payload:
            # Same Generator, same noise; the fits may differ in the last bits across processes.
            np.testing.assert_allclose(received.payload[name], sent.payload[name], rtol=0, atol=1e-6)
    assert flower.accuracy == pytest.approx(in_process.accuracy, abs=0.01)
    assert flower.baselines == pytest.approx(in_process.baselines, abs=0.01)
    for name in ("basic", "tight"):
        assert flower.guarantees[name].epsilon == in_process.guarantees[name].epsilon
    # The Flower round keeps what the guarantee protects and rests on (it used to carry only its own note).
    assert [note for note in flower.notes if note in in_process.notes] == list(round_notes(CONFIG, in_process.prepared))
    assert [client["num_records"] for client in flower.per_client] == [client["num_records"]
                                                                       for client in in_process.per_client]


def test_messages_survive_the_record_dict_and_refuse_unknown_events():
    message = ClientMessage(2, {"head": np.arange(6.0).reshape(2, 3)},
                            (dpmech.GaussianEvent(1.5, 0.25, neighbouring="replace-one"),), "noisy head")
    again = from_record_dict(to_record_dict(message))
    assert again.events == message.events and again.client == 2 and again.description == "noisy head"
    assert np.array_equal(again.payload["head"], message.payload["head"])
    content = to_record_dict(message)
    content.config_records["release"]["events"] = ['{"class": "os.system", "fields": {}}']
    with pytest.raises(ValueError, match="event class"):
        from_record_dict(content)


@pytest.mark.parametrize("name", ["fedgm", "no-such-pipeline"])
def test_pipelines_not_on_flower_are_refused(name):
    with pytest.raises(ValueError, match="name|pipeline"):
        run_flower_round(name, None)
