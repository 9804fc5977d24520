"""DP-Helmet with client selection: k of |U| users, uniformly without replacement, train and are averaged,
and the round's ledger is the amplified user-level event (Balle, Barthe & Gaboardi 2018); or each user with
probability q (Poisson, add/remove-one users), summed over the public q|U| with the same noise for every number
of participants, an empty round included (Zhu, Dong & Wang 2022)."""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binom, chi2

import dpmech
from dpmech import REPLACE_ONE, PrivacyLedger, SampledWithoutReplacementEvent, SelfComposedEvent
from dpmech.client_selection import client_selection_event
from trainers.pipelines.dphelmet import (
    DpHelmetConfig,
    local_sensitivity,
    poisson_average,
    poisson_settings,
    prepare_users,
    release_user_model,
    run_dphelmet,
    secure_average,
    selected_users,
    selection_masks,
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


POISSON = DpHelmetConfig(num_users=10, records_per_user=30, epochs=5, num_components=8, privacy_unit="user",
                         participation_probability=0.3)


def test_selection_masks_draw_k_of_n_exactly_and_poisson_coins_independently():
    rng = np.random.default_rng(3)
    rounds = 20_000
    assert np.all(selection_masks(5, rounds, rng, clients_per_round=2).sum(axis=1) == 2)
    poisson = selection_masks(5, rounds, rng, participation_probability=0.3)

    def within(count, probability):
        return binom.ppf(1e-7, rounds, probability) <= count <= binom.isf(1e-7, rounds, probability)

    # m per round is Binomial(5, 0.3), empty rounds included; each coin is Bernoulli(0.3); two coins are independent.
    sizes = poisson.sum(axis=1)
    assert all(within(np.sum(sizes == size), binom.pmf(size, 5, 0.3)) for size in range(6))
    assert all(within(count, 0.3) for count in poisson.sum(axis=0))
    assert within(np.sum(poisson[:, 0] & poisson[:, 1]), 0.09)
    assert np.all(selection_masks(5, 3, rng, participation_probability=1.0))


def test_poisson_shares_sum_to_the_same_noise_for_every_number_of_participants(digits):
    settings = prepare_users(digits, POISSON, seed=4).settings
    denominator, honest = POISSON.poisson_denominator, POISSON.honest_fraction
    sum_sigma = settings.event.sigma * denominator
    rng = np.random.default_rng(5)
    shape = (2000, 9)
    for participants in (0, 1, 2, 7):
        round_settings = poisson_settings(settings, participants)
        shares = [release_user_model(user, np.zeros(shape), round_settings, rng) for user in range(participants)]
        released_sum = poisson_average(shares, round_settings, shape, rng) * denominator
        # The sum's noise is N(0, (σD)²/t) for every m, an empty round included: χ² within its 1e-7 quantiles.
        statistic = np.sum(released_sum ** 2) / (sum_sigma ** 2 / honest)
        assert chi2.ppf(1e-7, released_sum.size) <= statistic <= chi2.isf(1e-7, released_sum.size), participants
    # ⌈t·m⌉ honest shares alone carry at least the event's noise (σD)² on the sum, for every m.
    for participants in range(1, 40):
        share = poisson_settings(settings, participants).user_noise_std
        assert math.ceil(honest * participants) * share ** 2 >= sum_sigma ** 2


def test_a_poisson_round_trains_the_selected_users_and_accounts_the_sampled_event(digits):
    result = run_dphelmet(digits, POISSON, seed=4)
    prepared = prepare_users(digits, POISSON, seed=4)
    assert [message.client for message in result.messages] == prepared.selected.tolist()
    tight, basic = result.guarantees["tight"], result.guarantees["basic"]
    assert tight.neighbouring == dpmech.ADD_REMOVE_ONE and result.unit("tight") == "user"
    # The server's number: it knows S, so only replace-one given S holds, at twice the release's B/D.
    assert basic.neighbouring == dpmech.REPLACE_ONE
    (gaussian,) = result.messages[0].events
    assert gaussian.neighbouring == dpmech.ADD_REMOVE_ONE
    # Sensitivity B/(q|U|) of the sum over the public q|U| (B = R = 1 for Softmax-SLP), rounded up.
    assert gaussian.sensitivity == math.nextafter(POISSON.projection_radius / POISSON.poisson_denominator, math.inf)
    rebuilt = PrivacyLedger(dpmech.ADD_REMOVE_ONE).record(client_selection_event(gaussian, rounds=1,
                                                                                 participation_probability=0.3))
    assert rebuilt.epsilon(POISSON.delta).epsilon == tight.epsilon <= POISSON.epsilon < basic.epsilon


def test_an_empty_poisson_round_releases_noise_alone_under_the_same_guarantee(digits):
    config = DpHelmetConfig(**{**POISSON.__dict__, "participation_probability": 0.01})
    seed = next(seed for seed in range(20) if prepare_users(digits, config, seed).selected.size == 0)
    result = run_dphelmet(digits, config, seed=seed)
    assert result.messages == [] and list(result.per_client) == [] and dict(result.baselines) == {}
    assert any(note.startswith("No user was selected this round") for note in result.notes)
    assert 0.0 <= result.accuracy <= 1.0
    assert result.guarantees["tight"].epsilon <= config.epsilon < result.guarantees["basic"].epsilon


@pytest.mark.parametrize("value", [0, 1.5, -0.1, float("nan"), True, "0.3"])
def test_bad_participation_probability_is_refused_by_name(value):
    with pytest.raises(ValueError, match="participation_probability"):
        DpHelmetConfig(num_users=10, privacy_unit="user", participation_probability=value)


def test_both_selections_at_once_are_refused():
    with pytest.raises(ValueError, match="exclude each other"):
        DpHelmetConfig(num_users=10, privacy_unit="user", clients_per_round=3, participation_probability=0.3)
    with pytest.raises(ValueError, match="exclude each other"):
        selection_masks(10, 1, np.random.default_rng(0), clients_per_round=3, participation_probability=0.3)


@pytest.mark.parametrize("options, name", [({"clients_per_round": 0}, "clients_per_round"),
                                           ({"clients_per_round": 11}, "clients_per_round"),
                                           ({"participation_probability": 0.0}, "participation_probability"),
                                           ({"participation_probability": 1.01}, "participation_probability")])
def test_selection_masks_refuse_a_bad_law_by_name(options, name):
    with pytest.raises(ValueError, match=name):
        selection_masks(10, 1, np.random.default_rng(0), **options)
