"""DP-Helmet with client selection: k of |U| users, uniformly without replacement, train and are averaged,
and the round's ledger is the amplified user-level event (Balle, Barthe & Gaboardi 2018)."""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binom

import dpmech
from dpmech import REPLACE_ONE, PrivacyLedger, SampledWithoutReplacementEvent, SelfComposedEvent
from trainers.pipelines.dphelmet import (
    DpHelmetConfig,
    local_sensitivity,
    prepare_users,
    run_dphelmet,
    secure_average,
    selected_users,
)
from tests.trainers.digits_fixtures import digits

SELECTED = DpHelmetConfig(num_users=10, records_per_user=30, epochs=5, num_components=8, privacy_unit="user",
                          clients_per_round=3)


@pytest.fixture(scope="module")
def selected_result(digits):
    return run_dphelmet(digits, SELECTED, seed=4)


def test_only_the_k_selected_users_train_and_are_averaged(digits, selected_result):
    prepared = prepare_users(digits, SELECTED, seed=4)
    assert prepared.selected.size == 3 and np.unique(prepared.selected).size == 3
    assert [message.client for message in selected_result.messages] == prepared.selected.tolist()
    assert [row["client"] for row in selected_result.per_client] == prepared.selected.tolist()
    # The released average is the sum of the k selected users' shares over k, not over |U|.
    sum_of_shares = np.sum([m.payload["noisy_model"] for m in selected_result.messages], axis=0)
    np.testing.assert_allclose(secure_average(selected_result.messages), sum_of_shares / 3, rtol=1e-15)
    # Another seed selects from its own stream (the Generator is seeded, not global).
    assert any(not np.array_equal(prepare_users(digits, SELECTED, seed).selected, prepared.selected) for seed in range(5, 9))


def test_amplified_epsilon_meets_the_target_below_the_unamplified_and_equals_a_direct_ledger(digits, selected_result):
    tight, basic = selected_result.guarantees["tight"], selected_result.guarantees["basic"]
    assert tight.epsilon <= SELECTED.epsilon < basic.epsilon
    assert selected_result.unit("tight") == "user" and tight.neighbouring == REPLACE_ONE
    # The same events recorded by hand: the selected users' blind average, sampled 3 of 10, one round.
    sigma_u = selected_result.per_client[0]["user_noise_std"]
    sensitivity = local_sensitivity(SELECTED, int(digits.labels.max()) + 1)
    average = dpmech.mechanisms.blind_averaging_event(sigma_u, sensitivity, 3, SELECTED.honest_fraction,
                                                      neighbouring=REPLACE_ONE)
    direct = PrivacyLedger(REPLACE_ONE).record(SelfComposedEvent(SampledWithoutReplacementEvent(average, 3, 10), 1))
    assert direct.epsilon(SELECTED.delta, method="numeric").epsilon == tight.epsilon
    assert PrivacyLedger(REPLACE_ONE).record(average).epsilon(SELECTED.delta, method="basic").epsilon == basic.epsilon
    # Less noise than the same k users without amplification need for the same (ε, δ).
    unamplified = dpmech.mechanisms.calibrate_user_noise(SELECTED.epsilon, SELECTED.delta, sensitivity, 3,
                                                         SELECTED.honest_fraction)
    assert sigma_u < 0.99 * unamplified


def test_selection_without_noise_trains_the_selected_users_and_claims_nothing(digits):
    with pytest.warns(dpmech.NoGuaranteeWarning):
        result = run_dphelmet(digits, DpHelmetConfig(**{**SELECTED.__dict__, "epsilon": math.inf}), seed=4)
    assert len(result.messages) == 3 and result.guarantees["tight"].epsilon == math.inf


def test_selected_users_are_every_k_subset_equally_often():
    # 5 users, 2 selected: each of the 10 pairs has probability 1/10; every count within its binomial
    # 1e-7 two-sided quantiles (a biased or fixed selection fails).
    rng = np.random.default_rng(11)
    draws = 20_000
    counts = {pair: 0 for pair in itertools.combinations(range(5), 2)}
    for _ in range(draws):
        counts[tuple(selected_users(5, 2, rng).tolist())] += 1
    low, high = binom.ppf(1e-7, draws, 0.1), binom.isf(1e-7, draws, 0.1)
    assert set(counts) == set(itertools.combinations(range(5), 2))
    assert all(low <= count <= high for count in counts.values()), counts


@pytest.mark.parametrize("value", [0, 11, 2.5, True])
def test_bad_clients_per_round_is_refused_by_name(value):
    with pytest.raises(ValueError, match="clients_per_round"):
        DpHelmetConfig(num_users=10, privacy_unit="user", clients_per_round=value)


@pytest.mark.parametrize("fields", [{"privacy_unit": "record"}, {"noise": "discrete", "granularity": 0.01},
                                    {"calibration": "classic", "epsilon": 0.5}])
def test_selection_is_refused_where_its_amplification_is_not_proven(fields):
    with pytest.raises(ValueError, match="clients_per_round needs"):
        DpHelmetConfig(**{"num_users": 10, "privacy_unit": "user", "clients_per_round": 3, **fields})
