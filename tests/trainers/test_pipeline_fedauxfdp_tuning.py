"""FedAUXfdp's public-data tuning of (λ_s, λ_c): it sees public data only, follows its stated rule,
and the round it tunes calibrates its noise by dpmech for the chosen λ."""

import dataclasses
import math

import numpy as np
import pytest

import dpmech
from trainers.data import LabelledData
from trainers.pipelines import fedauxfdp
from trainers.pipelines.fedauxfdp import (
    FedAuxFdpConfig,
    RegularizationGrid,
    ScoringHeadTrainer,
    prepare_round,
    run_fedauxfdp,
    tune_regularization,
    tuning_seed,
)
from trainers.sklearn_adapter import LogisticRegressionTrainer
from tests.trainers.digits_fixtures import digits

TINY = FedAuxFdpConfig(num_clients=4, alpha=0.16, num_components=8)
GRID = RegularizationGrid(class_regularizations=(0.1, 0.3, 1.0, 3.0), score_regularizations=(1.0, 3.0), draws=2)
SEED = 5


@pytest.fixture(scope="module")
def tuned(digits):
    return run_fedauxfdp(digits, TINY, seed=SEED, tuning=GRID)


def split_indices(data, config, seed):
    """(test, public, private) record indices of the round's split, recomputed the way
    split_federated draws them; the callers check them against the prepared round."""
    split_seed = np.random.SeedSequence(seed).spawn(3)[0]
    order = np.random.default_rng(np.random.default_rng(split_seed)).permutation(len(data))
    num_test, num_public = round(config.test_fraction * len(data)), round(config.public_fraction * len(data))
    return order[:num_test], order[num_test:num_test + num_public], order[num_test + num_public:]


def with_replaced(data, indices, rng):
    """``data`` with the records at ``indices`` replaced by other records' features and random labels."""
    features, labels = data.features.copy(), data.labels.copy()
    features[indices] = data.features[rng.permutation(len(data))[:indices.size]]
    labels[indices] = rng.integers(0, 10, indices.size)
    return LabelledData(features, labels)


def chosen(result):
    return result.config["score_regularization"], result.config["class_regularization"]


def tuning_note(result):
    return [note for note in result.notes if "chosen on public data only" in note]


@pytest.mark.slow
def test_private_records_and_test_set_cannot_change_the_choice(digits, tuned):
    test, _, private = split_indices(digits, TINY, SEED)
    original = prepare_round(digits, TINY, SEED).features
    assert np.array_equal(original.test.labels, digits.labels[test])
    assert np.array_equal(original.private.labels, digits.labels[private])
    rng = np.random.default_rng(0)
    for changed in (with_replaced(digits, private, rng), with_replaced(digits, test, rng)):
        again = run_fedauxfdp(changed, TINY, seed=SEED, tuning=GRID)
        # the change reached the round: the clients' heads (or the test accuracy) differ ...
        assert (not np.array_equal(again.messages[0].payload["class_head"], tuned.messages[0].payload["class_head"])
                or again.accuracy != tuned.accuracy)
        # ... but not the choice, nor any validation accuracy behind it
        assert chosen(again) == chosen(tuned)
        assert tuning_note(again) == tuning_note(tuned) and len(tuning_note(tuned)) == 1


@pytest.mark.slow
def test_public_data_can_change_the_validation_accuracies(digits, tuned):
    """The converse, so the test above is not vacuous: the tuning does read the public records."""
    _, public, _ = split_indices(digits, TINY, SEED)
    again = run_fedauxfdp(with_replaced(digits, public, np.random.default_rng(1)), TINY, seed=SEED, tuning=GRID)
    assert tuning_note(again) != tuning_note(tuned)


def test_private_data_is_refused(digits):
    sets = prepare_round(digits, TINY, SEED).features
    with pytest.raises(ValueError, match="negative must be PublicData"):
        tune_regularization(sets.private, sets.distillation, len(sets.private), TINY, 10, 0, GRID)
    with pytest.raises(ValueError, match="distillation must be PublicData"):
        tune_regularization(sets.negative, sets.private, len(sets.private), TINY, 10, 0, GRID)


def test_the_choice_follows_the_stated_rule(digits):
    sets = prepare_round(digits, TINY, SEED).features
    grid = dataclasses.replace(GRID, edge_extensions=0)
    choice = tune_regularization(sets.negative, sets.distillation, len(sets.private), TINY, 10, tuning_seed(SEED), grid)
    assert set(choice.validation_accuracy) == set(grid_points(grid))
    best = max(choice.validation_accuracy.values())
    point = (choice.score_regularization, choice.class_regularization)
    assert choice.validation_accuracy[point] == best
    winners = [p for p, value in choice.validation_accuracy.items() if value == best]
    assert point == max(winners, key=lambda p: (p[1], p[0]))
    again = tune_regularization(sets.negative, sets.distillation, len(sets.private), TINY, 10, tuning_seed(SEED), grid)
    assert again == choice
    assert choice.records_per_client == len(sets.private) // TINY.num_clients
    assert 0 < choice.simulated_records_per_client < choice.records_per_client


def test_ties_go_to_the_larger_score_regularization(digits):
    """With one client the certainty weights cancel (Y(x) = softmax of its own logits), so every
    λ_s ties for each λ_c, and the rule must pick the largest λ_s; with the edge rule on, that
    largest value is an edge, so the axis grows by the stated step up to the stated limit."""
    config = FedAuxFdpConfig(num_clients=1, alpha=0.16, num_components=8, score_epsilon=math.inf, class_epsilon=math.inf)
    sets = prepare_round(digits, config, 0).features
    grid = RegularizationGrid(class_regularizations=(0.1, 1.0), score_regularizations=(0.5, 2.0, 8.0), draws=1,
                              edge_extensions=0)
    choice = tune_regularization(sets.negative, sets.distillation, len(sets.private), config, 10, 0, grid)
    for class_regularization in grid.class_regularizations:
        assert len({choice.validation_accuracy[(s, class_regularization)] for s in grid.score_regularizations}) == 1
    assert choice.score_regularization == 8.0
    extended = tune_regularization(sets.negative, sets.distillation, len(sets.private), config, 10, 0,
                                   dataclasses.replace(grid, edge_extensions=2))
    assert extended.score_regularization == pytest.approx(128.0)
    assert sorted({s for s, _ in extended.validation_accuracy}) == pytest.approx([0.5, 2.0, 8.0, 32.0, 128.0])


def test_edge_rule_extends_until_the_choice_is_inside_or_the_limit(digits):
    """The edge rule as the docstring states it, checked on the scored points: the choice is the
    best of every scored point (ties to the larger λ_c, then λ_s); an axis holds the grid plus
    values one step (the ratio of its two outermost values at that edge) further out per
    extension; and the choice sits on an axis edge only when that edge used all its extensions."""
    sets = prepare_round(digits, TINY, SEED).features
    for limit in (1, 3):
        grid = RegularizationGrid(class_regularizations=(0.03, 0.1), score_regularizations=(1.0, 3.0), draws=1,
                                  edge_extensions=limit)
        choice = tune_regularization(sets.negative, sets.distillation, len(sets.private), TINY, 10, 0, grid)
        accuracy = choice.validation_accuracy
        point = (choice.score_regularization, choice.class_regularization)
        assert point == max(accuracy, key=lambda p: (accuracy[p], p[1], p[0]))
        for index, given in ((0, grid.score_regularizations), (1, grid.class_regularizations)):
            values = sorted({p[index] for p in accuracy})
            # every pair of the two axes is scored
            assert len(accuracy) == len({p[0] for p in accuracy}) * len({p[1] for p in accuracy})
            low, high = min(given), max(given)
            below, above = [v for v in values if v < low], [v for v in values if v > high]
            assert len(below) <= limit and len(above) <= limit
            # geometric steps: each new value is its neighbour times the edge's ratio
            ratio_high, ratio_low = high / sorted(given)[-2], sorted(given)[1] / low
            for outer, inner in zip(above, [high] + above):
                assert outer == pytest.approx(inner * ratio_high)
            for outer, inner in zip(below[::-1], [low] + below[::-1]):
                assert outer == pytest.approx(inner / ratio_low)
            if point[index] == values[-1]:
                assert len(above) == limit
            if point[index] == values[0]:
                assert len(below) == limit


def test_simulated_noise_is_that_of_the_real_round_sizes(digits, monkeypatch):
    """The simulation trains on fewer records but releases every head with dpmech's sensitivity for
    the real round's sizes: ⌊num_private/K⌋ records for the class head and that plus |D⁻| for the
    scoring head, at the grid point's λ."""
    sets = prepare_round(digits, TINY, SEED).features
    seen = []
    original = fedauxfdp.head_mechanisms

    def recording(heads, settings):
        seen.append((heads.score_sensitivity, heads.class_sensitivity, settings.score_regularization,
                     settings.class_regularization))
        return original(heads, settings)

    monkeypatch.setattr(fedauxfdp, "head_mechanisms", recording)
    choice = tune_regularization(sets.negative, sets.distillation, len(sets.private), TINY, 10, 0, GRID)
    n = len(sets.private) // TINY.num_clients
    assert choice.records_per_client == n and len(seen) >= len(choice.validation_accuracy) * GRID.draws
    for score_sensitivity, class_sensitivity, score_regularization, class_regularization in seen:
        assert score_sensitivity == ScoringHeadTrainer(score_regularization, 2, 1.0, num_public_negatives=len(
            sets.negative)).sensitivity(n + len(sets.negative))
        assert class_sensitivity == LogisticRegressionTrainer(class_regularization, 10, 1.0,
                                                              multinomial_bound=TINY.multinomial_bound).sensitivity(n)
    assert {(s, c) for *_, s, c in seen} == set(choice.validation_accuracy)


def test_noise_draws_are_paired_across_grid_points(digits, monkeypatch):
    """Every grid point releases its simulated heads with the same generators (the same standard
    normal draws, scaled by its own σ), so the grid points are compared on paired noise."""
    sets = prepare_round(digits, TINY, SEED).features
    grid = RegularizationGrid(class_regularizations=(0.1, 1.0), score_regularizations=(1.0, 3.0), draws=2,
                              edge_extensions=0)
    streams = {}
    original = fedauxfdp.release_client_heads

    def recording(client, heads, mechanisms, rng):
        state = rng.bit_generator.state["state"]
        streams.setdefault((mechanisms.class_.event.sigma, mechanisms.score.event.sigma), []).append(
            (client, state["state"], state["inc"]))
        return original(client, heads, mechanisms, rng)

    monkeypatch.setattr(fedauxfdp, "release_client_heads", recording)
    tune_regularization(sets.negative, sets.distillation, len(sets.private), TINY, 10, 0, grid)
    assert len(streams) == 4  # one σ pair per grid point
    sequences = list(streams.values())
    assert all(sequence == sequences[0] for sequence in sequences)
    # within a grid point the draws and the clients use distinct generators
    assert len(set(sequences[0])) == len(sequences[0]) == grid.draws * TINY.num_clients


def test_noise_costs_validation_accuracy(digits):
    sets = prepare_round(digits, TINY, SEED).features
    noiseless = FedAuxFdpConfig(num_clients=4, alpha=0.16, num_components=8, score_epsilon=math.inf,
                                class_epsilon=math.inf)
    grid = RegularizationGrid(class_regularizations=(0.1, 1.0), score_regularizations=(1.0,), draws=1)
    reference = tune_regularization(sets.negative, sets.distillation, len(sets.private), noiseless, 10, 0, grid)
    private = tune_regularization(sets.negative, sets.distillation, len(sets.private), TINY, 10, 0, grid)
    cost = {point: reference.validation_accuracy[point] - private.validation_accuracy[point] for point in grid_points(grid)}
    # σ ∝ 1/(nλ): at ~270 records per client and class ε = 0.5 the noise costs more at the smaller λ_c,
    # the trade-off the tuning is there to resolve
    assert cost[(1.0, 0.1)] > 0.15 and cost[(1.0, 0.1)] > cost[(1.0, 1.0)]


def grid_points(grid):
    return [(s, c) for s in grid.score_regularizations for c in grid.class_regularizations]


def test_tuned_round_calibrates_its_noise_for_the_chosen_lambda(digits, tuned):
    score_regularization, class_regularization = chosen(tuned)
    # the choice is one of the scored points (the grid or an edge extension), listed in the note
    assert f"({score_regularization:g}, {class_regularization:g})" in tuning_note(tuned)[0]
    num_negative = len(prepare_round(digits, TINY, SEED).features.negative)
    for message, metrics in zip(tuned.messages, tuned.per_client):
        n = metrics["num_records"]
        score_event, class_event = message.events
        assert score_event.sensitivity == ScoringHeadTrainer(
            score_regularization, 2, 1.0, num_public_negatives=num_negative).sensitivity(n + num_negative)
        assert class_event.sensitivity == LogisticRegressionTrainer(class_regularization, 10, 1.0,
                                                                    multinomial_bound=TINY.multinomial_bound).sensitivity(n)
        assert class_event.sigma == dpmech.calibrate_gaussian(TINY.class_epsilon, TINY.class_delta, class_event.sensitivity)
    untuned = run_fedauxfdp(digits, TINY, seed=SEED)
    assert np.array_equal(untuned.prepared.assignment, tuned.prepared.assignment)


@pytest.mark.parametrize("field, value, match", [
    ("class_regularizations", (), "class_regularizations must hold"),
    ("class_regularizations", (0.1, 0.1), "no repeats"),
    ("score_regularizations", (0.1, -1.0), r"score_regularizations\[1\]"),
    ("class_regularizations", ("0.1",), r"class_regularizations\[0\]"),
    ("class_regularizations", 0.1, "class_regularizations must be a tuple"),
    ("validation_fraction", 1.0, "validation_fraction"),
    ("draws", 0, "draws"),
    ("server_tolerance", 0.0, "server_tolerance"),
    ("edge_extensions", -1, "edge_extensions"),
    ("edge_extensions", 1.5, "edge_extensions"),
])
def test_bad_grid_raises(field, value, match):
    with pytest.raises(ValueError, match=match):
        RegularizationGrid(**{field: value})


def test_too_small_public_pool_raises(digits):
    sets = prepare_round(digits, TINY, SEED).features
    few = sets.negative.subset(np.arange(3))
    with pytest.raises(ValueError, match="public pool"):
        tune_regularization(few, sets.distillation.subset(np.arange(3)), len(sets.private), TINY, 10, 0, GRID)
    with pytest.raises(ValueError, match="num_private"):
        tune_regularization(sets.negative, sets.distillation, 2, TINY, 10, 0, GRID)
