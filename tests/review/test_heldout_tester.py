"""Held-out mechanisms (benchmarks/heldout_mechanisms.py) against the black-box tester, which was never tuned on them.

Each buggy mechanism the tester refuted in the held-out table (3 seeds, 20 CPU seconds each, 2026-11-27) is a
regression test here: refuted at seed 0 on a CPU-seconds budget, with an ε lower bound that does not exceed the
derived true ε (the bound's own soundness, at confidence 1 − α). Each correct one, whose true ε (or δ(ε)) is
exactly its claim, must not be refuted (α = 1e-4 here, so a fixed seed whose sample sizes move with the load
fails with probability at most 1e-4) and its bound must stay at or below the claim. The two misses are strict
xfails with their diagnosis: they start passing when the tester is fixed, and then the marker must go.
"""

import math

import numpy as np
import pytest

from benchmarks.heldout_mechanisms import (
    CLASSICAL_DELTA,
    CLASSICAL_EPSILON,
    _gaussian,
    _histogram,
    _randomized_response,
    exponential_mechanism_pair_epsilon,
    heldout_examples,
)
from dpmech.verify import DpViolation, statdp_pairs
from dpmech.verify.budget_clock import cpu_seconds_budget
from dpmech.verify.records import record_neighbours
from dpmech.verify.tester import find_violation

EXAMPLES = {example.name: example for example in heldout_examples()}
# Buggy mechanism -> (CPU seconds of budget, true ε; None where no finite ε). The budgets leave room over the CPU
# the held-out runs took to their first rejection (0.0–0.8 s; the one-shot top-k 17.9–19.1 s, in its final stage).
DETECTED = {
    "laplace count (scale eps/sens)": (5.0, 1.0 / 0.8),
    "noisy max (noise on the winner's value only)": (5.0, None),
    "exponential mechanism (no factor 2)": (5.0, exponential_mechanism_pair_epsilon(1.0, 1.0, statdp_pairs(5))),
    "one-shot top-k (laplace 2k/eps, indices and values)": (20.0, 10 / 8.0),
    "subsample (fixed subset, amplified claim)": (5.0, 2.0),
    "randomized response (binary keep prob, K=4)": (5.0, 1.0 + math.log(3.0)),
    "discrete laplace sum (sensitivity off by one)": (5.0, 1.5),
    "mean (clipped after noise)": (5.0, 10.0),
    "mean (noisy sum, exact count)": (5.0, None),
}
CORRECT = [name for name, example in EXAMPLES.items() if example.correct]


def _run(name: str, budget: float, seed: int = 0, **options):
    example = EXAMPLES[name]
    with cpu_seconds_budget(10.0):
        return find_violation(example.sampler, example.pairs, example.epsilon, example.delta, rng=seed, budget_seconds=budget,
                              outputs=example.outputs, **{**example.options, **options})


def test_the_table_holds_eleven_buggy_and_five_correct_mechanisms_with_distinct_names():
    assert len(EXAMPLES) == 16 and len(CORRECT) == 5
    assert set(DETECTED) | {"histogram (add/remove scale, replace-one claim)", "gaussian (classical sigma at eps 10)"} == {
        name for name, example in EXAMPLES.items() if not example.correct}


def test_exponential_mechanism_pair_epsilon_is_the_exact_loss_on_one_below_rest_above():
    """Without the factor 2 (exp(ε·u)) the largest loss on StatDP's 5-query patterns is output 0 of one below rest
    above: P = 1/5 on 1^5, 1/(1 + 4e^(2ε)) on (0, 2, 2, 2, 2); with it, ln((1 + 4e^ε)/5)."""
    pairs = statdp_pairs(5)
    assert exponential_mechanism_pair_epsilon(1.0, 1.0, pairs) == pytest.approx(math.log((1 + 4 * math.e**2) / 5), rel=1e-12)
    assert exponential_mechanism_pair_epsilon(1.0, 0.5, pairs) == pytest.approx(math.log((1 + 4 * math.e) / 5), rel=1e-12)


def test_randomized_response_keeps_the_label_with_the_declared_probability():
    """The sampler behind both RR rows: P[keep] = keep, the others uniform over the K − 1 other labels."""
    outputs = _randomized_response(2, 400_000, np.random.default_rng(0), keep=0.6)
    frequencies = np.bincount(outputs, minlength=4) / outputs.size
    assert frequencies == pytest.approx([0.4 / 3, 0.4 / 3, 0.6, 0.4 / 3], abs=0.004)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(DETECTED))
def test_buggy_heldout_mechanism_is_refuted_with_a_sound_bound(name):
    budget, true_epsilon = DETECTED[name]
    report = _run(name, budget)
    assert report.rejected, (name, report.epsilon_lower_bound, report.pair, report.family)
    assert report.epsilon_lower_bound > EXAMPLES[name].epsilon
    if true_epsilon is not None:
        assert report.epsilon_lower_bound <= true_epsilon


@pytest.mark.slow
@pytest.mark.parametrize("name", CORRECT)
def test_correct_near_tight_heldout_mechanism_raises_no_false_alarm(name):
    report = _run(name, 5.0, alpha=1e-4)
    assert not report.rejected, (name, report.epsilon_lower_bound, report.pair, report.family, report.witness)
    assert report.epsilon_lower_bound <= EXAMPLES[name].epsilon


@pytest.mark.slow
def test_pytest_plugin_fixture_fails_on_binary_randomized_response_for_four_categories(dp_verify):
    """The dp_verify fixture (the plugin's entry point) raises DpViolation naming the pair, on a CPU budget."""
    example = EXAMPLES["randomized response (binary keep prob, K=4)"]
    with cpu_seconds_budget(10.0), pytest.raises(DpViolation, match="label"):
        dp_verify(example.sampler, example.pairs, example.epsilon, example.delta, budget_seconds=5.0)


@pytest.mark.slow
def test_histogram_with_add_remove_noise_under_a_replace_one_claim_is_refuted_on_record_neighbours():
    """Replace-one moves a record between two bins: counts +1 and −1, L1 shift 2 against Laplace(2): true ε = 1."""
    report = _run("histogram (add/remove scale, replace-one claim)", 20.0)
    assert report.rejected


@pytest.mark.slow
def test_histogram_miss_is_the_number_of_pairs_not_the_events():
    """The diagnosis above, kept true: one of the 64 pairs alone is refuted in a few CPU seconds."""
    pair = [("all 0, first -> 1", np.zeros(10, dtype=np.int64), np.r_[1, np.zeros(9, dtype=np.int64)])]
    with cpu_seconds_budget(10.0):
        report = find_violation(lambda d, n, g: _histogram(d, n, g, scale=2.0), pair, 0.5, 0.0, rng=0, budget_seconds=10.0, outputs="vector")
    assert report.rejected and report.epsilon_lower_bound <= 1.0
    assert len(record_neighbours(np.arange(5), 10, "replace_one", rng=0)) == 64


@pytest.mark.slow
def test_histogram_miss_is_the_classifiers_in_round_one():
    """... and on all 64 pairs without the learned family the final stage has its time and refutes it (20 CPU s)."""
    report = _run("histogram (add/remove scale, replace-one claim)", 20.0, families=("projections",))
    assert report.rejected and report.final_samples > 0 and report.epsilon_lower_bound <= 1.0


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason=(
    "missed at seeds 0-2 (eps_lb 7.885-8.136 against the claim 10): the classical sigma at eps = 10 gives delta(10) = "
    "2.27e-5 against 1e-5, an excess at events where P[M(D')] is about 2e-9, and bounding e^10 * P[M(D') in S] below "
    "the 1.27e-5 excess needs about 1.3e9 outputs per side; counting cannot get there in 20 s. The grey-box witness "
    "already says, assuming Gaussian noise, 'sigma <= 0.486, so eps(1e-05) >= 10.29' beside a verdict of not "
    "rejected. Fix, if wanted, in dpmech/verify/tester.py / greybox.py: a verdict labelled with the declared family's "
    "assumption (VerificationReport has no field for it), never in the counting."))
def test_gaussian_with_the_classical_sigma_at_epsilon_10_is_refuted():
    sigma = math.sqrt(2.0 * math.log(1.25 / CLASSICAL_DELTA)) / CLASSICAL_EPSILON
    with cpu_seconds_budget(10.0):
        report = find_violation(lambda c, n, g: _gaussian(c, n, g, sigma=sigma), [("shift by the sensitivity", 0.0, 1.0)],
                                CLASSICAL_EPSILON, CLASSICAL_DELTA, rng=0, budget_seconds=10.0, outputs="real",
                                noise_family="gaussian", sensitivity=1.0)
    assert report.rejected
