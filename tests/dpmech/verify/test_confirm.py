"""The final stage: candidates name the events their tests counted, and the stage's ε lower bound is sound at its level."""

import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

import dpmech
from dpmech.verify import float_dp_test, learned_dp_test, projection_dp_test, statistical_dp_test
from dpmech.verify.candidates import Candidate, best_candidate, merged
import dpmech.verify.confirm as confirm
from dpmech.verify.budget_clock import cpu_seconds_budget
from dpmech.verify.confirm import CHECKPOINTS, CHUNK_SAMPLES, PILOT_SAMPLES, RACE_MIN_SAMPLES, _count_finalists, confirm_candidate, confirm_candidates
from dpmech.verify.examples import all_examples
from dpmech.verify.refits import cheap_refit
from dpmech.verify.statistical import SHARED_ORDER_OUTCOMES, _level_set_refit, clopper_pearson_lower, clopper_pearson_upper
from dpmech.verify.tester import find_violation

EXAMPLES = {example.name: example for example in all_examples()}


def _pair(name, pattern=None):
    example = EXAMPLES[name]
    chosen = next(pair for pair in example.pairs if pattern is None or pair[0] == pattern)
    return example, (chosen[1], chosen[2])


@pytest.mark.parametrize(
    "test, name, pattern, options",
    [
        (statistical_dp_test, "svt1 (Lyu Alg. 1)", "x shape", {}),
        (statistical_dp_test, "randomized response (eps for e^eps)", None, {}),
        (statistical_dp_test, "svt3 (Roth, noisy values)", "half half", {}),
        (statistical_dp_test, "laplace sum (wrong sensitivity)", None, {"outputs": "real"}),
        (projection_dp_test, "svt3 (Roth, noisy values)", "half half", {}),
        (projection_dp_test, "noisy max (laplace, index and value)", "one above", {}),
        (float_dp_test, "gaussian (float64 rng.normal)", None, {}),
        (learned_dp_test, "noisy max (exponential, index and value)", "one below", {}),
    ],
)
def test_the_candidate_event_reproduces_its_test_counts(test, name, pattern, options):
    # Each family draws selection(D), selection(D'), test(D), test(D') in that order: replaying the generator gives the
    # test sample, on which the candidate's membership function must count exactly what the family counted.
    example, pair = _pair(name, pattern)
    result = test(example.sampler, pair, example.epsilon, example.delta, num_samples=3000, rng=np.random.default_rng(7), **options)
    candidate = result.candidate
    assert isinstance(candidate, Candidate) and np.isfinite(candidate.score), result
    replay = np.random.default_rng(7)
    samples = [example.sampler(data, 3000, replay) for data in pair + pair]
    hits = [int(np.count_nonzero(candidate.event(np.asarray(sample) if isinstance(sample, np.ndarray) else sample))) for sample in samples[2:]]
    expected = tuple(hits) if candidate.heavy_is_first else tuple(reversed(hits))
    assert expected == candidate.counts, (candidate.description, expected, candidate.counts)


def _rr_sampler(epsilon):
    return lambda label, size, rng: dpmech.randomized_response(np.full(size, label), epsilon, 2, rng)


def test_confirmed_bound_is_the_clopper_pearson_bound_of_its_counts():
    epsilon, level = 1.0, 0.1
    candidate = Candidate(lambda outputs: np.asarray(outputs) == 0, True, "{0}", 1.0, (0, 0), 1)
    result = confirm_candidate(_rr_sampler(epsilon), (0, 1), candidate, 0.5, 0.0, level=level, seconds=60.0, max_samples=20_000, rng=np.random.default_rng(3))
    assert result.num_samples == 20_000 and result.level == level
    # All N drawn: the last checkpoint's share of the level, split over the finalist events (the refit's runners-up).
    share = CHECKPOINTS[-1][1] * level / result.num_finalists / 2
    lower = clopper_pearson_lower(result.counts[0], 20_000, share)
    upper = clopper_pearson_upper(result.counts[1], 20_000, share)
    assert result.epsilon_lower_bound <= math.log(lower / upper)
    assert result.epsilon_lower_bound == pytest.approx(math.log(lower / upper), rel=1e-9)
    assert result.rejected == (lower - math.exp(0.5) * upper > 0.0)
    # RR with ε = 1 on the tight event: P[0 | 0] / P[0 | 1] = e, so the bound is below 1 and, at 20,000 draws, above 0.5.
    assert 0.5 < result.epsilon_lower_bound <= epsilon


@pytest.mark.slow  # a Monte-Carlo rate check: 300 confirmed bounds
def test_confirmed_bound_exceeds_the_true_epsilon_at_most_at_its_level():
    # The tight event of binary RR has log-ratio exactly ε: the stage's bound exceeds ε with probability <= level.
    # 300 runs at level 0.2: exceedances ~ Binomial(300, <= 0.2); more than 78 has probability < 0.1%.
    epsilon, level = 0.7, 0.2
    candidate = Candidate(lambda outputs: np.asarray(outputs) == 0, True, "{0}", 1.0, (0, 0), 1)
    rng = np.random.default_rng(11)
    exceed = sum(
        confirm_candidate(_rr_sampler(epsilon), (0, 1), candidate, epsilon, 0.0, level=level, seconds=60.0, max_samples=3000, rng=rng).epsilon_lower_bound > epsilon
        for _ in range(300)
    )
    assert exceed <= stats.binom.isf(1e-3, 300, level)


@pytest.mark.slow  # a Monte-Carlo rate check: 60 whole searches
def test_whole_search_with_its_final_stage_overstates_epsilon_at_most_at_alpha():
    # find_violation at α = 0.3 on RR at its true ε (3 pairs, rounds and final stage): the reported ε lower bound
    # exceeds the truth in at most an α share of 60 searches (more than 28 has probability < 0.1%).
    epsilon = 1.0
    sampler = lambda y, size, rng: dpmech.randomized_response(np.full(size, y), epsilon, 2, rng)  # noqa: E731
    rng = np.random.default_rng(5)
    reports = [
        find_violation(sampler, [(0, 1), (1, 0), (1, 1)], epsilon, 0.0, rng=rng, alpha=0.3, families=("cheap",), initial_samples=200,
                       max_samples=800, final_samples=4000, budget_seconds=60)
        for _ in range(60)
    ]
    assert all(report.final_samples == 4000 for report in reports)
    over = sum(report.epsilon_lower_bound > epsilon for report in reports)
    assert over == sum(report.rejected for report in reports)
    assert over <= stats.binom.isf(1e-3, 60, 0.3)


@pytest.mark.slow  # 3.2 s of CPU in CI's default run of 06381b9 (3 s rule, stop 39)
def test_final_stage_tightens_the_bound_and_stays_below_the_truth():
    # Laplace of scale 2 (noise for sensitivity 1) on sums 1 and −1: the true ε is 2/2 = 1, and every half-line
    # {x <= t}, t <= −1, has exactly that log-ratio. The rounds (4,000 outputs per side, Bonferroni over ~200 events)
    # bound it loosely; the stage (one event, 400,000 per side) tightly.
    example, pair = _pair("laplace sum (wrong sensitivity)")
    report = find_violation(example.sampler, [pair], example.epsilon, 0.0, rng=2, outputs="real", stop_at_rejection=False, max_samples=4000,
                            final_samples=400_000, budget_seconds=600)
    assert report.final_samples == 400_000
    assert report.search_epsilon_lower_bound < report.final_epsilon_lower_bound == report.epsilon_lower_bound <= 1.0
    assert report.final_epsilon_lower_bound > 0.85 and report.family.endswith("final stage") and report.evidence_samples == 400_000


def test_final_stage_draws_a_sample_size_fixed_by_time_alone():
    calls = []

    def sampler(label, size, rng):
        calls.append(size)
        return dpmech.randomized_response(np.full(size, label), 1.0, 2, rng)

    candidate = Candidate(lambda outputs: np.asarray(outputs) == 0, True, "{0}", 1.0, (0, 0), 1)
    result = confirm_candidate(sampler, (0, 1), candidate, 1.0, 0.0, level=0.05, seconds=60.0, max_samples=250_000, rng=np.random.default_rng(0))
    # Thrown away: the first pilot's outputs, the race's probe (calls[2:4]), the cheap refits' race (one entry: one
    # round, calls[4:6]), the finalist events' timing (calls[6:8]) and the kept pair's pilot (calls[8:10]); then chunks
    # of at most CHUNK_SAMPLES per side add up to N. The refit's runners-up are counted beside its best event on the
    # same outputs: no more draws for them.
    assert calls[:2] == [PILOT_SAMPLES] * 2 and calls[2:4] == [RACE_MIN_SAMPLES] * 2 and calls[4] == calls[5]
    assert calls[6:10] == [PILOT_SAMPLES] * 4
    assert result.num_finalists >= 2 and sum(calls[10:]) == 2 * result.num_samples == 500_000 and max(calls[10:]) <= CHUNK_SAMPLES
    assert confirm_candidate(sampler, (0, 1), candidate, 1.0, 0.0, level=0.05, seconds=1e-9, max_samples=10**6, rng=np.random.default_rng(0)) is None


@pytest.mark.parametrize(
    "parameter, value", [("final_share", 1.0), ("final_share", -0.1), ("final_time_share", 1.0), ("final_samples", 0), ("final_share", "half")]
)
def test_bad_final_stage_arguments_raise_value_error_naming_them(parameter, value):
    with pytest.raises(ValueError, match=parameter):
        find_violation(lambda d, size, rng: rng.normal(d, 1.0, size), [(0.0, 1.0)], 1.0, 0.0, rng=0, **{parameter: value})


def _tight_candidates(count):
    # The same event {0} on the pair (0, 1), as ``count`` finalists with equal scores and no refit.
    candidate = Candidate(lambda outputs: np.asarray(outputs) == 0, True, "{0}", 1.0, (0, 0), 1)
    return [((0, 1), candidate, None) for _ in range(count)]


def test_finalists_share_the_level_bonferroni_and_the_checkpoints_share_it_too(monkeypatch):
    levels = []
    for name in ("clopper_pearson_lower", "clopper_pearson_upper"):
        original = getattr(confirm, name)
        monkeypatch.setattr(confirm, name, lambda k, n, level, original=original: levels.append(level) or original(k, n, level))
    result = confirm_candidates(_rr_sampler(1.0), _tight_candidates(5), 1.0, 0.0, level=0.1, seconds=60.0, max_samples=20_000,
                                rng=np.random.default_rng(0), final_candidates=3)
    # Three pairs, each with its refit's best event and runners-up: m events in all, at most FINAL_EVENTS per pair.
    m = result.num_finalists
    assert 3 <= m <= 3 * confirm.FINAL_EVENTS and result.num_samples == 20_000
    # One lower and one upper bound per finalist event, at the full-N checkpoint's share of β/m each: 2m bounds summing to that share.
    assert len(levels) == 2 * m and levels == pytest.approx([CHECKPOINTS[-1][1] * 0.1 / m / 2] * (2 * m))
    assert sum(share for _, share in CHECKPOINTS) <= 1.0 + 1e-12


@pytest.mark.slow  # a Monte-Carlo rate check: 200 multi-finalist stages
def test_multi_finalist_bound_exceeds_the_true_epsilon_at_most_at_its_level():
    # Binary RR at ε = 0.7: every event's log-ratio is at most 0.7, in both directions. The stage's refits find the
    # level sets {0} and {1} each way and count each pair's best events and runners-up (m >= 3 finalist events share
    # β = 0.3, each bound at β/(2m)): by the union bound over the 2m bounds the largest ε lower bound exceeds 0.7 with
    # probability <= β (measured at this seed: 1 of 200 with m = 9; the split itself is checked by the test above).
    # 200 stages: more than stats.binom.isf(1e-3, 200, 0.3) = 78 exceedances has probability < 0.1 %.
    epsilon, level = 0.7, 0.3
    rng = np.random.default_rng(12)
    results = [confirm_candidates(_rr_sampler(epsilon), _tight_candidates(3), epsilon, 0.0, level=level, seconds=60.0, max_samples=2000,
                                  rng=rng) for _ in range(200)]
    assert all(result.num_finalists >= 3 and result.num_samples == 2000 for result in results)
    exceed = sum(result.epsilon_lower_bound > epsilon for result in results)
    assert exceed <= stats.binom.isf(1e-3, 200, level)


def test_counting_stops_at_a_checkpoint_before_the_deadline_when_the_sampler_slows_down():
    # The pilot, the race's probe and its round see a fast sampler; the counting a 50 times slower one. The stage must
    # stop before its deadline and report the counts of the last checkpoint reached, at that checkpoint's share of β.
    import time as clock

    calls = []

    def sampler(label, size, rng):
        calls.append(size)
        if len(calls) > 6:
            clock.sleep(size * 5e-6)
        return dpmech.randomized_response(np.full(size, label), 1.0, 2, rng)

    candidate = Candidate(lambda outputs: np.asarray(outputs) == 0, True, "{0}", 1.0, (0, 0), 1)
    start = clock.perf_counter()
    result = confirm_candidate(sampler, (0, 1), candidate, 1.0, 0.0, level=0.05, seconds=1.5, max_samples=10**7, rng=np.random.default_rng(1))
    assert clock.perf_counter() - start <= 1.5 + 0.5
    assert result is None or result.num_samples < 10**7


def test_counting_plans_each_chunk_by_the_slowest_one_so_far():
    # Every second chunk is 0.4 s slower (its first side's draw sleeps). Timed by the average chunk (0.2 s), the
    # slow chunk starting 0.3 s before the deadline would be drawn and end 0.1 s after it; timed by the slowest, it is not.
    import time as clock

    calls = []

    def sampler(label, size, rng):
        calls.append(size)
        if len(calls) % 4 == 3:
            clock.sleep(0.4)
        return np.zeros(size, dtype=np.int64)

    candidate = Candidate(lambda outputs: np.asarray(outputs) == 0, True, "{0}", 1.0, (0, 0), 1)
    start = clock.perf_counter()
    deadline = start + 2.3
    reached = _count_finalists(sampler, [((0, 1), [candidate])], 10**9, deadline, 1e-9, np.random.default_rng(0))
    assert clock.perf_counter() <= deadline + 0.05
    assert reached == [] and len(calls) >= 10 * 2 and set(calls) == {CHUNK_SAMPLES}


def _two_outcome_sampler(probabilities):
    # Dataset name -> P[output = 1]; outputs are 0 or 1.
    return lambda name, size, rng: (rng.random(size) < probabilities[name]).astype(np.int64)


def _weak_entry(pair):
    # A round-1 candidate that names a poor event ({0}); the race's level-set refit must find {1} itself.
    candidate = Candidate(lambda outputs: np.asarray(outputs) == 0, True, "{0}", 0.0, (1, 1), 10)
    return pair, replace(candidate, refit=cheap_refit(candidate, 0.0), refit_kind="level sets")


@pytest.mark.slow
def test_the_race_ranks_a_rare_strong_event_above_a_frequent_weak_one():
    # Pair A: P[1] = 0.02 against 0.02·e^-0.175 (SVT Alg. 4's half half at ε = 0.1 is like this); pair B: 0.09 against
    # 0.09·e^-0.105 (its one above rest below). At the final stage's N = 10⁷, A's event {1} is worth ~0.16 and B's
    # ~0.10. Round 1 (~20,000 outputs per side) cannot tell them apart; the race must end with A in front, naming {1}.
    probabilities = {"A": 0.02, "A'": 0.02 * math.exp(-0.175), "B": 0.09, "B'": 0.09 * math.exp(-0.105)}
    sampler = _two_outcome_sampler(probabilities)
    entries = [_weak_entry(("B", "B'")), _weak_entry(("A", "A'"))]
    wins = 0
    for seed in range(5):
        # One CPU second per race, not one wall second: under load (xdist workers, other jobs) a wall second bought
        # a fraction of the draws this ranking needs, and the test failed at load ~12 for want of samples.
        with cpu_seconds_budget():
            chosen = confirm._raced(sampler, entries, 1.0, 10**6, 10**7, 0.0, np.random.default_rng(seed))
        best_pair, best = max(chosen, key=lambda entry: entry[1].score)
        wins += best_pair == ("A", "A'") and best.heavy_is_first and best.counts[0] > best.counts[1] and best.counts[0] < 0.05 * best.num_samples
    assert wins >= 4


def test_the_race_stops_drawing_for_pairs_that_cannot_catch_up():
    # Pair A distinguishes (0.3 against 0.3·e^-0.5); pairs B, C, D are the same distribution on both sides. After the
    # first round only A can reach its own score, so only A draws again.
    probabilities = {"A": 0.3, "A'": 0.3 * math.exp(-0.5), "N": 0.3}
    draws = {}

    def sampler(name, size, rng):
        draws[name] = draws.get(name, 0) + 1
        return _two_outcome_sampler(probabilities)(name, size, rng)

    entries = [_weak_entry(("A", "A'"))] + [_weak_entry(("N", "N")) for _ in range(3)]
    confirm._raced(sampler, entries, 1.0, 10**6, 10**7, 0.0, np.random.default_rng(0))
    assert draws["A"] >= 2 and draws["N"] == 2 * 3  # three null pairs, two sides, one round each


def test_refits_name_runners_up_and_merged_counts_each_event_once():
    event = lambda outputs: np.asarray(outputs) == 1  # noqa: E731
    refitted = best_candidate([900, 500, 300, 10], [700, 500, 200, 0], 10_000, 0.0, lambda index: (event, "b", "c", "d")[index],
                              ["a", "b", "c", "d"], alternatives=2)
    scores = [refitted.score] + [alternative.score for alternative in refitted.alternatives]
    assert len(refitted.alternatives) == 2 and scores == sorted(scores, reverse=True) and all(np.isfinite(scores))
    # The same event object from two refits, at different scores: once, at the better score.
    twin = replace(refitted, score=refitted.score - 1.0, alternatives=())
    combined = merged([twin, refitted, None])
    events = [combined.event] + [alternative.event for alternative in combined.alternatives]
    assert combined.score == refitted.score and len(events) == len({id(event) for event in events}) == 3
    assert merged([None]) is None


def test_a_level_set_refit_on_few_outcomes_orders_and_ranks_on_the_whole_sample():
    rng = np.random.default_rng(0)
    first, second = rng.integers(0, 5, 40_000), rng.integers(0, 5, 40_000)
    candidate = _level_set_refit(first, second, 0.0, nominal_samples=10**6)
    assert candidate.num_samples == 40_000  # not a half
    # More outcomes than SHARED_ORDER_OUTCOMES: ordered on one half, ranked on the other.
    many = [rng.integers(0, SHARED_ORDER_OUTCOMES + 10, 40_000) for _ in range(2)]
    assert _level_set_refit(*many, 0.0, nominal_samples=10**6).num_samples == 20_000
