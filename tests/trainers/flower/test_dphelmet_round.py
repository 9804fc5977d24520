"""A DP-Helmet round in Flower's simulation engine over SecAgg+ (two simulations, about a minute each).

One round with a dropout (5 users, user 4 drops after the key exchange, threshold 3) checks what the
server holds, the unmasked sum and the accuracy against the in-process pipeline; one round with too
few survivors checks that it fails cleanly and releases nothing.
"""

import dataclasses

import numpy as np
import pytest

from trainers.flower import accounting
from trainers.flower.dphelmet import (SecureAggregationFailed, encoded_user_share, prepare_flower_round,
                                      run_flower_dphelmet)
from trainers.pipelines._common import linear_accuracy
from trainers.pipelines.dphelmet import DpHelmetConfig, prepare_users, protection_notes, run_dphelmet, secure_average
from tests.trainers.digits_fixtures import digits

# A Flower simulation starts Ray and takes about a minute: deselect those tests with -m "not slow".
SLOW = pytest.mark.slow

CONFIG = DpHelmetConfig(num_users=5, records_per_user=40, epochs=3)
SEED = 7


@pytest.fixture(scope="module")
def flower_round(digits):
    # Floor 1: the dropout of user 4 (possibly honest) is tolerated; the default floor ⌈t·|U|⌉ would refuse it.
    return run_flower_dphelmet(digits, CONFIG, SEED, reconstruction_threshold=3, dropped_users=(4,),
                               minimum_honest_shares=1)


@pytest.fixture(scope="module")
def plaintext(digits, flower_round):
    prepared = prepare_users(digits, CONFIG, SEED)
    return prepared, [encoded_user_share(prepared, user, flower_round.encoding) for user in range(CONFIG.num_users)]


def masked_vectors(flower_round):
    from flwr.common import bytes_to_ndarray

    vectors = []
    for replies in flower_round.server_replies:
        for reply in replies:
            if reply.has_error():
                continue
            for record in reply.content.config_records.values():
                if "masked_params" in record:
                    # SecAgg+ uploads [masked weight factor, masked model].
                    factor, model = (bytes_to_ndarray(value) for value in record["masked_params"])
                    vectors.append(model)
    return vectors


@SLOW
def test_the_server_holds_only_masked_vectors(flower_round, plaintext):
    _, shares = plaintext
    modulus, encoding = flower_round.encoding.modulus_range, flower_round.encoding
    for replies in flower_round.server_replies:
        for reply in replies:
            if not reply.has_error():
                assert all(len(record) == 0 for record in reply.content.array_records.values())
    vectors = masked_vectors(flower_round)
    assert len(vectors) == 4
    plain = [np.round((encoded + encoding.clipping_range) / encoding.grid_step) for _, encoded in shares]
    for vector in vectors:
        assert vector.min() >= 0 and vector.max() < modulus
        # Masks are uniform modulo M: the mean of 170 coordinates is far from a share's (< q <= M/1024).
        assert 0.3 < vector.mean() / modulus < 0.7
        assert not any(np.array_equal(vector, share) for share in plain)


@SLOW
def test_unmasked_sum_is_the_plaintext_sum_of_the_survivors(flower_round, plaintext):
    _, shares = plaintext
    assert flower_round.survivors == (0, 1, 2, 3)
    survivors = flower_round.survivors
    assert np.array_equal(flower_round.secure_sum, np.sum([shares[u][1] for u in survivors], axis=0))
    noisy_sum = np.sum([shares[u][0].payload["noisy_model"] for u in survivors], axis=0)
    # The accounted quantisation: below one grid step per share and coordinate.
    assert np.all(np.abs(flower_round.secure_sum - noisy_sum) < len(survivors) * flower_round.encoding.grid_step)


@SLOW
def test_accuracy_and_accounting_match_the_in_process_survivors(flower_round, plaintext):
    prepared, shares = plaintext
    in_process = secure_average([shares[u][0] for u in flower_round.survivors])
    assert flower_round.result.accuracy == pytest.approx(linear_accuracy(in_process, prepared.features.test), abs=0.01)
    # ⌈0.5·5⌉ = 3 honest users, one dropout: 2 honest shares guaranteed in the sum.
    assert flower_round.honest_shares == 2
    guarantees = flower_round.result.guarantees
    assert set(guarantees) == {"tight", "estimate (unquantised secure sum)"}
    refusal = (1 + np.exp(guarantees["tight"].epsilon)) * flower_round.encoding.clip_failure_probability
    assert guarantees["tight"].delta >= CONFIG.delta + refusal
    assert guarantees["estimate (unquantised secure sum)"].epsilon > CONFIG.epsilon  # a dropout costs privacy
    assert guarantees["tight"].certified
    assert not guarantees["estimate (unquantised secure sum)"].certified
    assert all(count > 0 for count in flower_round.upload_bytes.values())
    # What the guarantee protects, as in process (it used to be dropped on Flower).
    assert flower_round.result.notes[:4] == tuple(protection_notes(CONFIG, prepared.sensitivity))
    assert flower_round.result.notes[0].startswith("Protected: one record of one user, replace-one")


@SLOW
def test_too_few_survivors_fail_cleanly(digits):
    with pytest.raises(SecureAggregationFailed, match="below the reconstruction threshold 3"):
        run_flower_dphelmet(digits, CONFIG, SEED, reconstruction_threshold=3, dropped_users=(0, 1, 2))


def test_a_floor_above_the_honest_shares_refuses_the_release(digits):
    with pytest.raises(ValueError, match="minimum_honest_shares"):
        run_flower_dphelmet(digits, CONFIG, SEED, minimum_honest_shares=4)


@pytest.mark.parametrize("options, name", [
    ({"reconstruction_threshold": 5}, "reconstruction_threshold"), ({"reconstruction_threshold": 1}, "reconstruction_threshold"),
    ({"dropped_users": (5,)}, "dropped_users"), ({"minimum_honest_shares": 0}, "minimum_honest_shares"),
])
def test_bad_round_options_are_refused_before_the_round(digits, options, name):
    with pytest.raises(ValueError, match=name):
        run_flower_dphelmet(digits, CONFIG, SEED, **options)


def test_client_selection_is_refused_on_the_flower_engine(digits):
    # The round sums every user, so a σ_u calibrated for k of n selected users would under-noise it.
    config = DpHelmetConfig(num_users=5, records_per_user=40, epochs=3, privacy_unit="user", clients_per_round=3)
    with pytest.raises(ValueError, match="clients_per_round"):
        run_flower_dphelmet(digits, config, SEED)


def test_discrete_shares_are_the_in_process_release_at_the_rounds_sigma(digits):
    # The ClientApp's discrete share (what SecAgg+ sums; no Ray needed) is the in-process release drawn
    # from the same Generator once the in-process shares have the round's σ²: γ, the floor ⌈t·|U|⌉ and
    # the mechanism δ = δ − (1 + e^ε)·p. At the config's own δ, σ² is smaller (the refusals are not paid
    # for) and the exact sampler draws other noise from the same seed: why `dpmech run --engine flower`
    # (12.5 % at seed 0, issue 31) and the in-process discrete run at δ (25.3 %) released different models.
    config = dataclasses.replace(CONFIG, noise="discrete")
    failure = 1e-9
    floor = accounting.guaranteed_honest_shares(config.num_users, config.honest_fraction, config.num_users)
    prepared, _, encoding = prepare_flower_round(digits, config, SEED, failure, floor)
    flower = [encoded_user_share(prepared, user, encoding)[0] for user in range(config.num_users)]
    granularity = prepared.settings.granularity
    same_sigma = dataclasses.replace(config, granularity=granularity,
                                     delta=accounting.mechanism_delta(config.delta, config.epsilon, failure))
    in_process = run_dphelmet(digits, same_sigma, SEED)
    assert prepare_users(digits, same_sigma, SEED).settings.sigma_squared_grid == prepared.settings.sigma_squared_grid
    for ours, theirs in zip(flower, in_process.messages, strict=True):
        assert np.array_equal(ours.payload["grid_share"], theirs.payload["grid_share"])
    assert np.array_equal(secure_average(flower), secure_average(in_process.messages))
    at_config_delta = prepare_users(digits, dataclasses.replace(config, granularity=granularity), SEED).settings
    assert at_config_delta.sigma_squared_grid < prepared.settings.sigma_squared_grid
    unpaid = run_dphelmet(digits, dataclasses.replace(config, granularity=granularity), SEED)
    assert not np.array_equal(unpaid.messages[0].payload["grid_share"], flower[0].payload["grid_share"])
