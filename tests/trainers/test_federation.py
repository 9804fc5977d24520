"""Client messages, the joblib client executor and the record-level ledger."""

import numpy as np
import pytest

from dpmech import GaussianEvent, PureEpsilonEvent
from trainers.federation import ClientMessage, client_generators, ledger_from_messages, run_clients


def _noisy_mean(data, rng):
    return float(np.mean(data) + rng.normal())


def test_run_clients_is_identical_for_any_number_of_jobs():
    arguments = [(np.arange(10.0) * i,) for i in range(6)]
    serial = run_clients(_noisy_mean, arguments, seed=3, n_jobs=1)
    parallel = run_clients(_noisy_mean, arguments, seed=3, n_jobs=2)
    assert serial == parallel
    assert run_clients(_noisy_mean, arguments, seed=4, n_jobs=1) != serial


def test_more_jobs_than_clients_start_only_one_worker_per_client(monkeypatch):
    # joblib's loky backend starts n_jobs workers up front: an accepted `--jobs 700` draw of the CLI contract
    # tests forked 700 processes for one repetition and stalled the machine.
    import joblib

    import trainers.federation as federation

    requested = []

    class RecordingParallel(joblib.Parallel):
        def __init__(self, n_jobs=None, **options):
            requested.append(n_jobs)
            super().__init__(n_jobs=n_jobs, **options)

    monkeypatch.setattr(federation.joblib, "Parallel", RecordingParallel)
    arguments = [(np.arange(3.0),), (np.arange(4.0),)]
    assert run_clients(_noisy_mean, arguments, seed=3, n_jobs=700) == run_clients(_noisy_mean, arguments, seed=3, n_jobs=1)
    assert requested == [2, 1]


def test_client_generators_are_independent_and_reproducible():
    first = [g.random() for g in client_generators(7, 3)]
    again = [g.random() for g in client_generators(7, 3)]
    assert first == again and len(set(first)) == 3


def test_messages_are_read_only_copies():
    weights = np.ones(3)
    message = ClientMessage(0, {"weights": weights}, (GaussianEvent(1.0),), "noisy head")
    weights[0] = 5.0
    assert message.payload["weights"][0] == 1.0
    with pytest.raises(ValueError):
        message.payload["weights"][0] = 2.0
    assert message.num_released_values == 3


def test_ledger_from_messages_is_one_clients_composition():
    events = (GaussianEvent(2.0), GaussianEvent(3.0))
    messages = [ClientMessage(i, {"w": np.zeros(2)}, events) for i in range(4)]
    ledger = ledger_from_messages(messages)
    assert len(ledger) == 2
    different = messages + [ClientMessage(4, {"w": np.zeros(2)}, (PureEpsilonEvent(1.0),))]
    with pytest.raises(ValueError, match="client 4"):
        ledger_from_messages(different)
    with pytest.raises(ValueError, match="messages"):
        ledger_from_messages([])
