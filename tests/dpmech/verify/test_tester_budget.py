"""find_violation obeys its time budget in every round, the first included (issue 31: 1 s took 9.1 s on 8 pairs)."""

import time

from threadpoolctl import threadpool_limits

from dpmech.verify.examples import all_examples
from dpmech.verify.tester import find_violation

EXAMPLES = {example.name: example for example in all_examples()}


def test_a_one_second_budget_on_the_numeric_sparse_vector_ends_within_two_and_a_half_seconds_of_cpu():
    # Roth's SVT with noisy values: numeric vector outputs, StatDP's 8 pairs, a classifier per pair in round 1 (0.65 s
    # each): before each test checked the clock it took 4.5 s of CPU (9.1 s wall) for a 1 s budget. The budget is wall
    # time, which a loaded machine stretches; CPU time of this process, on one thread, is what the search spends.
    example = EXAMPLES["svt3 (Roth, noisy values)"]
    with threadpool_limits(1):
        start = time.process_time()
        report = find_violation(example.sampler, example.pairs, example.epsilon, example.delta, rng=0, budget_seconds=1.0, outputs=example.outputs)
        spent = time.process_time() - start
    assert spent <= 2.5, (spent, report)
