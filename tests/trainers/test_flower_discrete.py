"""Distributed discrete Gaussian shares over SecAgg+ (DP-Helmet): the encoding, the in-process
release step, and one Flower round (marked slow: it starts Ray) certified at the target."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from flwr.common.secure_aggregation.quantization import dequantize, quantize
from hypothesis import given
from hypothesis import strategies as st

from dpmech.distributed_discrete_gaussian import distributed_discrete_gaussian_epsilon, share_noise_bound
from dpmech.output_perturbation import rounded_grid_sensitivity
from trainers.flower.dphelmet import encoded_user_share, prepare_flower_round, run_flower_dphelmet
from trainers.flower.encoding import discrete_encoding, discrete_range_fits, encode_grid_share
from trainers.pipelines._common import linear_accuracy
from trainers.pipelines.dphelmet import DpHelmetConfig, model_norm_bound, release_user_model, run_dphelmet
from tests.trainers.digits_fixtures import digits

SLOW = pytest.mark.slow
CONFIG = DpHelmetConfig(num_users=5, records_per_user=40, epochs=3, noise="discrete")
SEED = 7


@given(st.integers(-20, 0), st.integers(1, 22), st.integers(1, 40), st.integers(0, 2**32))
def test_integer_shares_pass_flowers_quantiser_and_modular_sum_exactly(exponent, bits, size, seed):
    encoding = discrete_encoding(2.0**exponent, 3, 1e-9, quantization_range=2**bits)
    rng = np.random.default_rng(seed)
    half = encoding.quantization_range // 2
    shares = [rng.integers(-half, half + 1, size) for _ in range(3)]
    encoded = [encode_grid_share(share, encoding) for share in shares]
    state = np.random.get_state()
    quantized = quantize(encoded, encoding.clipping_range, encoding.quantization_range)
    np.random.set_state(state)
    # Flower dequantises the modular sum of the quantised shares (each offset by q/2): it must be the exact sum.
    total = np.sum(quantized, axis=0) % encoding.modulus_range
    unmasked = dequantize([total], encoding.clipping_range, encoding.quantization_range)[0]
    offset = (len(shares) - 1) * encoding.clipping_range  # each share was shifted by c, dequantize removes one
    np.testing.assert_array_equal(unmasked - offset, np.sum(shares, axis=0) * encoding.grid_step)


def test_a_share_outside_the_range_is_refused_and_a_float_share_too():
    encoding = discrete_encoding(2.0**-10, 3, 1e-9, quantization_range=2**8)
    with pytest.raises(ValueError, match="refused"):
        encode_grid_share(np.array([129, 0]), encoding)
    with pytest.raises(ValueError, match="integer"):
        encode_grid_share(np.array([1.0]), encoding)
    assert encode_grid_share(np.array([-128, 128]), encoding).tolist() == [-128 * 2.0**-10, 128 * 2.0**-10]
    with pytest.raises(ValueError, match="power of two"):
        discrete_encoding(0.3, 3, 1e-9)


def test_the_chosen_grid_is_the_finest_power_of_two_that_holds_the_share(digits):
    prepared, shape, encoding = prepare_flower_round(digits, CONFIG, SEED, 1e-9, 2)
    settings, dimension = prepared.settings, int(np.prod(shape))
    bound = model_norm_bound(CONFIG, prepared.num_classes)
    assert math.frexp(encoding.grid_step)[0] == 0.5 and settings.granularity == encoding.grid_step
    assert discrete_range_fits(encoding.grid_step, bound, settings.sigma_squared_grid, dimension, CONFIG.num_users,
                               1e-9)
    # Each of the |U| users' shares within the range but with probability p/|U|: the round's refusal is <= p.
    per_user = share_noise_bound(settings.sigma_squared_grid, dimension, 1e-9 / CONFIG.num_users)
    assert math.ceil(bound / encoding.grid_step) + per_user <= encoding.quantization_range // 2
    # Calibrated at the floor of 2 honest shares, at the mechanism's δ, within the target ε.
    grid_sensitivity = rounded_grid_sensitivity(prepared.sensitivity, encoding.grid_step, dimension)
    assert settings.event.epsilon <= CONFIG.epsilon and settings.event.delta < CONFIG.delta
    assert distributed_discrete_gaussian_epsilon(settings.event.delta, settings.sigma_squared_grid, 2,
                                                 grid_sensitivity, dimension) <= CONFIG.epsilon
    finer = DpHelmetConfig(**{**CONFIG.__dict__, "granularity": encoding.grid_step / 2})
    with pytest.raises(ValueError, match="too fine"):
        prepare_flower_round(digits, finer, SEED, 1e-9, 2)


def test_in_process_discrete_release_step_and_round(digits):
    with pytest.raises(ValueError, match="granularity"):
        run_dphelmet(digits, CONFIG, SEED)
    with pytest.raises(ValueError, match="granularity"):
        DpHelmetConfig(granularity=2.0**-16)
    config = DpHelmetConfig(**{**CONFIG.__dict__, "granularity": 2.0**-16})
    result = run_dphelmet(digits, config, SEED)
    assert result.guarantees["tight"].epsilon <= config.epsilon and result.guarantees["tight"].delta <= config.delta
    shares = [message.payload["grid_share"] for message in result.messages]
    assert all(share.dtype == np.int64 for share in shares)
    for message in result.messages:
        np.testing.assert_array_equal(message.payload["noisy_model"], message.payload["grid_share"] * 2.0**-16)
        assert "randomness: numpy-generator" in message.events[0].description
    # The release step on a given model: the rounded model plus an integer share.
    model = np.linspace(-0.5, 0.5, shares[0].size).reshape(shares[0].shape)
    from trainers.pipelines.dphelmet import prepare_users

    settings = prepare_users(digits, config, SEED).settings
    message = release_user_model(0, model, settings, np.random.default_rng(0))
    noise = message.payload["grid_share"] - np.rint(model / 2.0**-16).astype(np.int64)
    assert 0.5 * float(settings.sigma_squared_grid) < np.mean(noise.astype(float) ** 2) < 2 * float(settings.sigma_squared_grid)


@pytest.fixture(scope="module")
def flower_round(digits):
    # User 4 drops after the key exchange; ⌈0.5·5⌉ = 3 honest, so h = 2, the floor the shares are calibrated at.
    return run_flower_dphelmet(digits, CONFIG, SEED, reconstruction_threshold=3, dropped_users=(4,),
                               minimum_honest_shares=2)


@SLOW
def test_flower_round_unmasks_the_exact_integer_sum_and_is_certified_at_the_target(digits, flower_round):
    prepared, _, encoding = prepare_flower_round(digits, CONFIG, SEED, 1e-9, 2)
    assert flower_round.survivors == (0, 1, 2, 3) and flower_round.honest_shares == 2
    released = [encoded_user_share(prepared, user, encoding) for user in flower_round.survivors]
    grid_sum = np.sum([message.payload["grid_share"] for message, _ in released], axis=0)
    # No quantisation error: the unmasked sum is the exact sum of the integer shares.
    np.testing.assert_array_equal(flower_round.secure_sum, grid_sum * encoding.grid_step)
    average = flower_round.secure_sum / 4
    assert flower_round.result.accuracy == linear_accuracy(average, prepared.features.test)
    tight = flower_round.result.guarantees["tight"]
    assert tight.epsilon <= CONFIG.epsilon and tight.delta <= CONFIG.delta
    (event,) = flower_round.result.ledger.events
    assert "sum of 2 honest shares" in event.description and "randomness: numpy-generator" in event.description


@SLOW
def test_dpmech_run_engine_flower_meets_the_target_for_dphelmet(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "dpmech", "run", "--engine", "flower", "--pipeline", "dphelmet", "--epsilon", "1",
         "--trials", "200", "--out", str(tmp_path / "r"), "--json"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads(result.stdout)
    assert record["target"]["met"] is True and record["epsilon"] <= 1.0 and record["delta"] <= 1e-5
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["engine"] == "flower" and summary["config"]["noise"] == "discrete"
