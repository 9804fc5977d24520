"""find_violation: no hand-picked pair, α spent soundly over rounds, pairs and families, no false alarm."""

import numpy as np
import pytest

import dpmech
from dpmech.verify import DpViolation
from dpmech.verify.examples import all_examples
from dpmech.verify.tester import assert_dp_black_box, find_violation, statdp_pairs

EXAMPLES = {example.name: example for example in all_examples()}


def run(name, seed, budget=3.0, **options):
    example = EXAMPLES[name]
    return find_violation(
        example.sampler, example.pairs, example.epsilon, example.delta, rng=seed, budget_seconds=budget, outputs=example.outputs, **options
    )


@pytest.mark.parametrize(
    "name",
    ["noisy histogram (scale eps)", "laplace sum (wrong sensitivity)", "clipped sum (clip each, NaN through)", "clipped sum (clip the mean)",
     "gaussian sum (per-coordinate clipping, L2 claim)", "rr-top-k (uniform over all labels outside Y_k)", "svt5 (Stoddard, no query noise)"],
)
def test_finds_the_violation_with_no_hand_picked_pair(name):
    report = run(name, 0)
    assert report.rejected and report.epsilon_lower_bound > EXAMPLES[name].epsilon


@pytest.mark.parametrize("name", ["noisy histogram (scale 1/eps)", "laplace sum (right sensitivity)", "clipped sum (clip each, NaN refused)", "rr-top-k (dpmech)"])
@pytest.mark.parametrize("seed", [0, 1])
def test_no_false_alarm_on_correct_mechanisms(name, seed):
    report = run(name, seed, budget=1.0, max_samples=4000)
    assert not report.rejected, report
    assert "would have been detected with probability >= 0.9" in report.power_statement()


def test_levels_spent_over_rounds_pairs_and_families_sum_to_at_most_alpha(monkeypatch):
    # Every test find_violation runs is recorded with its level; by the union bound the search is valid at α
    # exactly when the levels sum to <= α. A true claim runs every round to max_samples.
    import dpmech.verify.tester as tester

    spent = []
    for name, key in (("statistical_dp_test", "alpha"), ("projection_dp_test", "alpha"), ("learned_dp_test", "alpha"), ("confirm_candidates", "level")):
        original = getattr(tester, name)

        def recording(*args, original=original, key=key, **options):
            spent.append(options[key])
            return original(*args, **options)

        monkeypatch.setattr(tester, name, recording)
    sampler = lambda y, size, rng: dpmech.randomized_response(np.full(size, y), 1.0, 3, rng)  # noqa: E731
    report = find_violation(sampler, [(0, 1), (1, 0), (0, 2)], 1.0, 0.0, rng=0, alpha=0.05, initial_samples=100, max_samples=800, budget_seconds=600)
    assert not report.rejected and report.rounds == 4 and report.final_samples == 50 * 800
    # Round 1: all 3 pairs; then the 2 kept; cheap and projections each (3 outcomes: the learned family is skipped);
    # then the final stage, once.
    assert len(spent) == 3 * 2 + 3 * 2 * 2 + 1
    assert sum(spent) <= 0.05


@pytest.mark.slow  # a Monte-Carlo rate check: 100 whole searches
def test_false_rejection_rate_of_the_whole_search_is_at_most_alpha():
    # 100 searches of a true claim at α = 0.3 (RR at its ε, 3 pairs, 3 rounds): rejections ~ Binomial(100, <= 0.3);
    # more than 44 has probability < 0.2%.
    sampler = lambda y, size, rng: dpmech.randomized_response(np.full(size, y), 1.0, 2, rng)  # noqa: E731
    rng = np.random.default_rng(5)
    rejections = sum(
        find_violation(sampler, [(0, 1), (1, 0), (1, 1)], 1.0, 0.0, rng=rng, alpha=0.3, families=("cheap",), initial_samples=200, max_samples=800, budget_seconds=60).rejected
        for _ in range(100)
    )
    assert rejections <= 44


def test_statdp_patterns_are_neighbours_with_sensitivity_one():
    patterns = statdp_pairs(6)
    assert len(patterns) == 8 and len({name for name, _, _ in patterns}) == 8
    for _, first, second in patterns:
        assert first.shape == second.shape == (6,) and np.max(np.abs(first - second)) == 1.0


def test_assert_dp_black_box_shows_the_pair_event_and_counts():
    example = EXAMPLES["laplace sum (wrong sensitivity)"]
    with pytest.raises(DpViolation, match=r"on replace 1 by -1, direction .* event x .* was hit \d+ vs \d+ times") as caught:
        assert_dp_black_box(example.sampler, example.pairs, example.epsilon, 0.0, rng=0, budget_seconds=3.0, outputs="real")
    assert caught.value.measured_delta > 0


@pytest.mark.parametrize(
    "parameter, options",
    [("pairs", {"pairs": []}), ("families", {"families": ("cheap", "magic")}), ("budget_seconds", {"budget_seconds": 0.0}),
     ("initial_samples", {"initial_samples": 5}), ("keep_pairs", {"keep_pairs": 0}), ("alpha", {"alpha": 1.5})],
)
def test_bad_input_raises_value_error_naming_the_parameter(parameter, options):
    arguments = {"pairs": [(0, 1)], "rng": 0} | options
    pairs = arguments.pop("pairs")
    with pytest.raises(ValueError, match=parameter):
        find_violation(lambda d, size, rng: rng.normal(d, 1.0, size), pairs, 1.0, 0.0, **arguments)


def test_every_example_sampler_returns_one_output_per_draw_on_its_pairs():
    rng = np.random.default_rng(0)
    for example in all_examples():
        for _, first, second in example.pairs:
            shapes = {np.shape(np.asarray(example.sampler(data, 7, rng)))[:1] for data in (first, second)}
            assert shapes == {(7,)}, example.name


@pytest.mark.parametrize("cutoff", [1, 2])
def test_dwork_roth_sparse_vector_matches_the_algorithm_run_query_by_query(cutoff):
    # Lyu et al. Alg. 2: the threshold is redrawn after each ⊤ and the run halts at the c-th; with c = 1 the sampler
    # uses one threshold without a loop. Against a per-draw loop over the same noise draws, output by output.
    from dpmech.verify.examples import _laplace, _sparse_vector

    queries, size, threshold_scale, query_scale = np.array([2.0, 0.0, 1.0, 2.0, 1.0, 0.0]), 400, 3.0, 5.0
    outputs = _sparse_vector(queries, size, np.random.default_rng(4), threshold_scale=threshold_scale, query_scale=query_scale,
                             halt=True, noisy_values=False, cutoff=cutoff, refresh=True)
    replay = np.random.default_rng(4)
    noisy = queries + _laplace(replay, query_scale, (size, queries.size))
    thresholds = 1.0 + _laplace(replay, threshold_scale, (size, cutoff))
    for draw in range(size):
        expected, above = [], 0
        for value in noisy[draw]:
            if above == cutoff:
                expected.append(-1)
                continue
            answer = int(value >= thresholds[draw, above])
            expected.append(answer)
            above += answer
        assert outputs[draw].tolist() == expected, draw


@pytest.mark.parametrize("name", ["gaussian (sigma x 0.7)"])
def test_declared_gaussian_noise_catches_sigma_too_small_with_a_sound_epsilon_lower_bound(name):
    # The grey-box family's events sit where the Gaussian privacy loss does (P ~ 1e-3): 4·10⁶ outputs per side refute
    # sigma x 0.7 in a 3 s budget; sigma x 0.9 needs ~6·10⁷ (test_greybox_sound, and the literature table at 20 s).
    example = EXAMPLES[name]
    fraction = float(name.split("x ")[1].rstrip(")"))
    true_epsilon = dpmech.gaussian_epsilon(example.delta, dpmech.GaussianOutputMechanism(1.0, 1.0, 1e-5).sigma * fraction, 1.0)
    for seed in range(3):
        report = run(name, seed, **example.options)
        assert report.rejected and report.family == "greybox", report
        assert example.epsilon < report.epsilon_lower_bound <= true_epsilon


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_declared_gaussian_noise_never_refutes_the_calibrated_sigma(seed):
    example = EXAMPLES["gaussian (sigma x 1)"]
    report = run("gaussian (sigma x 1)", seed, budget=1.0, max_samples=8000, **example.options)
    assert not report.rejected and report.epsilon_lower_bound <= example.epsilon, report


@pytest.mark.parametrize(
    "options, parameter",
    [({"noise_family": "gaussian"}, "sensitivity"), ({"sensitivity": 1.0}, "noise_family"), ({"noise_family": "cauchy", "sensitivity": 1.0}, "noise_family"),
     ({"families": ("greybox",)}, "noise_family"), ({"noise_family": "gaussian", "sensitivity": -1.0}, "sensitivity")],
)
def test_declared_noise_needs_a_family_and_a_sensitivity(options, parameter):
    with pytest.raises(ValueError, match=parameter):
        find_violation(lambda d, size, rng: rng.normal(d, 1.0, size), [(0.0, 1.0)], 1.0, 1e-5, rng=0, **options)


@pytest.mark.slow
def test_audit_mode_spends_the_whole_search_and_keeps_the_largest_bound():
    example = EXAMPLES["noisy histogram (scale eps)"]
    arguments = {"rng": 0, "budget_seconds": 600, "initial_samples": 500, "max_samples": 4000, "outputs": example.outputs}
    test = find_violation(example.sampler, example.pairs, example.epsilon, example.delta, **arguments)
    audit = find_violation(example.sampler, example.pairs, example.epsilon, example.delta, stop_at_rejection=False, **arguments)
    assert test.rejected and test.rounds == 1
    assert audit.rejected and audit.rounds == 4 and audit.num_samples == 4000
    # The true eps of Laplace scale eps = 0.5 at sensitivity 1 is 2: a sound bound stays below it.
    assert test.epsilon_lower_bound < audit.epsilon_lower_bound < 2.0


def test_sparse_vector_alg4_is_refuted_by_the_cheap_events_on_statdps_x_shape():
    # Lyu et al. Alg. 4 with c = 1 on 5 queries: true eps 1.75 x 0.5; on X shape one outcome has log-ratio ~0.71.
    # (The search without a given pair finds it in the benchmark, under 20 s; too slow for the suite.)
    from dpmech.verify import statistical_dp_test
    from dpmech.verify.examples import sparse_vector_examples

    example = next(e for e in sparse_vector_examples(0.5, cutoff=1, num_queries=5) if e.name.startswith("svt4"))
    _, first, second = next(pair for pair in example.pairs if pair[0] == "x shape")
    result = statistical_dp_test(example.sampler, (first, second), 0.5, 0.0, num_samples=64_000, rng=0, alpha=0.05)
    assert result.rejected and result.epsilon_lower_bound > 0.5, result


def test_search_and_final_stage_end_within_a_small_budget():
    # Audit mode spends the whole budget: rounds, refits, pilots and counting must all fit in it. Noisy max (5 outcomes:
    # no classifier) on StatDP's 8 patterns with a 3 s budget; 1 s of slack for a loaded machine.
    import time

    example = next(example for example in all_examples() if example.name == "noisy max (laplace, index)")
    start = time.perf_counter()
    report = find_violation(example.sampler, example.pairs, example.epsilon, example.delta, rng=3, budget_seconds=3.0, stop_at_rejection=False)
    assert time.perf_counter() - start <= 3.0 + 1.0
    assert report.final_samples > 0 and report.final_finalists >= 1
