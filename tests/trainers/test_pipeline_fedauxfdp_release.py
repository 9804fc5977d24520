"""FedAUXfdp trained once, released per noise setting (issue 32): the same numbers as a round trained per setting."""

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from tests.profiles import examples
from trainers.federation import run_clients, worst_client_ledger
from trainers.pipelines._common import linear_accuracy
from trainers.pipelines.fedauxfdp import (NOISE_FIELDS, FedAuxFdpConfig, RegularizationGrid, client_settings,
                                          fedauxfdp_client, fedauxfdp_server, fit_fedauxfdp, prepare_round,
                                          run_fedauxfdp)
from trainers.pipelines.registry import fit_pipeline, run_pipeline
from tests.trainers.digits_fixtures import digits

TINY = FedAuxFdpConfig(num_clients=4, alpha=0.16, num_components=8)
SEED = 5


@pytest.fixture(scope="module")
def trained(digits):
    return fit_fedauxfdp(digits, TINY, SEED)


def assert_same_release(first, second):
    """Every number of two PipelineResults equal, bit for bit: accuracies, messages, events, guarantees, notes."""
    assert first.accuracy == second.accuracy and first.baselines == second.baselines
    assert first.per_client == second.per_client and first.notes == second.notes and first.config == second.config
    assert len(first.messages) == len(second.messages)
    for one, other in zip(first.messages, second.messages):
        assert one.client == other.client and one.events == other.events
        for name in one.payload:
            np.testing.assert_array_equal(one.payload[name], other.payload[name])
    assert ({name: guarantee.as_dict() for name, guarantee in first.guarantees.items()}
            == {name: guarantee.as_dict() for name, guarantee in second.guarantees.items()})


epsilons = st.one_of(st.floats(0.05, 20.0), st.just(math.inf))
deltas = st.floats(1e-9, 1e-3)


@examples(0.1)
@given(score_epsilon=epsilons, class_epsilon=epsilons, score_delta=deltas, class_delta=deltas,
       calibration=st.sampled_from(["analytic", "classic"]))
@pytest.mark.slow
def test_a_release_is_the_round_trained_at_that_noise(digits, trained, score_epsilon, class_epsilon, score_delta,
                                                      class_delta, calibration):
    if calibration == "classic":
        score_epsilon, class_epsilon = min(score_epsilon, 0.99), min(class_epsilon, 0.99)
    config = dataclasses.replace(TINY, score_epsilon=score_epsilon, class_epsilon=class_epsilon,
                                 score_delta=score_delta, class_delta=class_delta, calibration=calibration)
    released = trained.release(config)
    # The round trained from scratch at this noise (what dpmech run's curve did before), one release of many of
    # the same trained round (the releases drawn before it must not move its noise).
    assert_same_release(released, run_fedauxfdp(digits, config, SEED))
    # The one-step client (train, calibrate, release in one job, as on Flower) and the server on its messages.
    prepared = prepare_round(digits, config, SEED)
    clients = [client for client in range(config.num_clients) if np.any(prepared.assignment == client)]
    messages = run_clients(
        fedauxfdp_client,
        [(client, prepared.features.private.subset(np.flatnonzero(prepared.assignment == client)),
          prepared.features.negative.features, client_settings(config, prepared.num_classes)) for client in clients],
        prepared.client_seed)
    server = fedauxfdp_server(messages, prepared.features.distillation.features, config.server_regularization)
    assert released.accuracy == linear_accuracy(server.fedauxfdp, prepared.features.test)
    assert released.baselines == {"FedAVG+P": linear_accuracy(server.fedavg, prepared.features.test),
                                  "FedD+P": linear_accuracy(server.fedd, prepared.features.test)}
    ledger = worst_client_ledger(messages, config.total_delta)
    assert released.guarantees["tight"].as_dict() == ledger.epsilon(config.total_delta, method="auto").as_dict()
    assert released.guarantees["basic"].as_dict() == ledger.epsilon(config.total_delta, method="basic").as_dict()


def test_every_noise_setting_adds_the_same_standard_normal_draws_scaled_by_its_sigma(trained):
    clean = trained.release(dataclasses.replace(TINY, score_epsilon=math.inf, class_epsilon=math.inf))
    draws = []
    for epsilon in (0.3, 3.0):
        noisy = trained.release(dataclasses.replace(TINY, score_epsilon=epsilon / 5, class_epsilon=epsilon))
        draws.append([np.concatenate([(m.payload[name] - c.payload[name]).ravel() / event.sigma
                                      for name, event in zip(("score_head", "class_head"), m.events)])
                      for m, c in zip(noisy.messages, clean.messages)])
    for low, high in zip(*draws):
        # z = (θ + σz − θ)/σ up to the rounding of θ + σz (|θ| <= a few units, σ >= 10⁻² here).
        np.testing.assert_allclose(low, high, rtol=0, atol=1e-11)
    # Different clients draw differently (each has its own Generator).
    assert not np.allclose(draws[0][0][:5], draws[0][1][:5])


def test_the_curve_needs_no_baselines_and_they_change_nothing_else(trained):
    config = dataclasses.replace(TINY, class_epsilon=2.0)
    with_baselines, without = trained.release(config), trained.release(config, baselines=False)
    assert without.baselines == {} and set(with_baselines.baselines) == {"FedAVG+P", "FedD+P"}
    assert_same_release(dataclasses.replace(with_baselines, baselines={}), without)


@pytest.mark.parametrize("change, field", [({"score_regularization": 2.0}, "score_regularization"),
                                           ({"num_clients": 5}, "num_clients"),
                                           ({"num_components": 6, "alpha": 1.0}, "alpha, num_components")])
def test_a_release_refuses_a_config_that_changes_the_training(trained, change, field):
    with pytest.raises(ValueError, match=f"only in {', '.join(NOISE_FIELDS)} \\(got other {field}\\)"):
        trained.release(dataclasses.replace(TINY, **change))


def test_a_release_refuses_bad_arguments(trained):
    with pytest.raises(ValueError, match="config must be a FedAuxFdpConfig"):
        trained.release({"class_epsilon": 1.0})
    with pytest.raises(ValueError, match="baselines must be True or False"):
        trained.release(TINY, baselines=1)


def test_a_tuned_round_is_released_at_its_own_noise_only(digits):
    grid = RegularizationGrid(class_regularizations=(0.3, 1.0), score_regularizations=(3.0,), draws=1,
                              edge_extensions=0)
    tuned = fit_fedauxfdp(digits, TINY, SEED, tuning=grid)
    assert_same_release(tuned.release(), run_fedauxfdp(digits, TINY, SEED, tuning=grid))
    assert tuned.release(tuned.config).accuracy == tuned.release().accuracy
    with pytest.raises(ValueError, match="config must be None .* for a tuned round"):
        tuned.release(dataclasses.replace(tuned.config, class_epsilon=2.0))


def test_the_registry_fit_releases_what_run_pipeline_runs(digits):
    from trainers.pipelines.dphelmet import DpHelmetConfig

    fitted = fit_pipeline("fedauxfdp", digits, TINY, SEED)
    config = dataclasses.replace(TINY, class_epsilon=4.0, score_epsilon=0.8)
    assert_same_release(fitted.release(config), run_pipeline("fedauxfdp", digits, config, SEED))
    # A pipeline without a fit step trains again at each release.
    small = DpHelmetConfig(num_users=2, records_per_user=10, epochs=1)
    helmet = fit_pipeline("dphelmet", digits, small, 1)
    assert helmet.trained is None
    for epsilon in (0.5, 2.0):
        config = dataclasses.replace(small, epsilon=epsilon)
        assert helmet.release(config).accuracy == run_pipeline("dphelmet", digits, config, 1).accuracy
    with pytest.raises(ValueError, match="config must be a DpHelmetConfig"):
        helmet.release(TINY)
