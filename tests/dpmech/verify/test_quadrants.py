"""Quadrant events on two summary statistics: exact counts, NaN in no event, and SVT Alg. 3's joint event found."""

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from dpmech.verify.candidates import Candidate
from dpmech.verify.examples import sparse_vector_examples
from dpmech.verify.quadrants import _bins, _quadrant_counts, quadrant_refit
from dpmech.verify.refits import cheap_refit
from dpmech.verify.tester import statdp_pairs


@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 9), st.integers(1, 300))
def test_quadrant_counts_are_direct_counts_and_nan_falls_in_none(seed, num_values, num_thresholds, size):
    rng = np.random.default_rng(seed)
    values = np.sort(rng.choice(20, num_values, replace=False)).astype(float)
    thresholds = np.sort(rng.normal(size=num_thresholds))
    discrete = rng.choice(np.r_[values, np.nan], size)
    other = np.where(rng.random(size) < 0.1, np.nan, rng.normal(size=size))
    edges = values[:-1]
    width = thresholds.size + 2
    counts = _quadrant_counts(_bins(discrete, edges) * width, _bins(other, thresholds), edges.size + 1, thresholds.size + 1, width)
    assert counts.shape == (4, edges.size, thresholds.size)
    with np.errstate(invalid="ignore"):
        for row, value in enumerate(edges):
            for column, threshold in enumerate(thresholds):
                for quadrant, (first, second) in enumerate(((discrete <= value, other <= threshold), (discrete <= value, other > threshold),
                                                            (discrete > value, other <= threshold), (discrete > value, other > threshold))):
                    assert counts[quadrant, row, column] == np.count_nonzero(first & second)


def _mixed_outputs(rng, size, shift):
    # SVT-like rows: codes 0 and -1 beside one continuous entry, and a NaN now and then.
    matrix = rng.choice([0.0, -1.0], (size, 4), p=[0.6, 0.4])
    column = rng.integers(0, 4, size)
    matrix[np.arange(size), column] = rng.laplace(shift, 1.0, size)
    matrix[rng.random(size) < 0.01, 0] = np.nan
    return matrix


@given(st.integers(0, 2**32 - 1), st.floats(0.0, 1.0))
def test_every_event_named_has_the_counts_it_was_ranked_on(seed, shift):
    rng = np.random.default_rng(seed)
    first, second = _mixed_outputs(rng, 4_000, 0.0), _mixed_outputs(rng, 4_000, shift)
    candidate = quadrant_refit(first, second, 0.0, nominal_samples=10**6)
    if candidate is None:
        return
    half = 2_000
    for entry in (candidate,) + candidate.alternatives:
        hits = [int(np.count_nonzero(entry.event(sample[half:2 * half]))) for sample in (first, second)]
        assert entry.counts == (tuple(hits) if entry.heavy_is_first else tuple(hits[::-1]))
        assert entry.num_samples == half


def test_quadrants_find_svt_alg3s_late_answer_with_a_low_value():
    # SVT Alg. 3 (noisy values) at ε = 0.5, c = 2, on all above (1^10 against 2^10): its privacy loss is largest for a
    # late answer with a low value, which no half-line on one coordinate isolates. A quadrant chosen on 200,000 outputs
    # per side must show ln(p/q) above the claim 0.5 on 400,000 fresh ones, at every seed tried.
    example = sparse_vector_examples(0.5)[2]
    _, dataset, neighbour = next(pattern for pattern in statdp_pairs(10) if pattern[0] == "all above")
    for seed in range(2):
        rng = np.random.default_rng(seed)
        candidate = quadrant_refit(example.sampler(dataset, 200_000, rng), example.sampler(neighbour, 200_000, rng), 0.0, nominal_samples=10**6)
        assert " and " in candidate.description
        hits = [np.count_nonzero(candidate.event(example.sampler(data, 400_000, rng))) for data in (dataset, neighbour)]
        heavy, light = hits if candidate.heavy_is_first else hits[::-1]
        assert math.log(heavy / light) > 0.5


def test_the_cheap_refit_of_vector_outputs_is_quadrants_with_the_old_event_competing():
    rng = np.random.default_rng(1)
    first, second = _mixed_outputs(rng, 20_000, 0.0), _mixed_outputs(rng, 20_000, 1.0)
    nothing = Candidate(lambda outputs: np.zeros(len(outputs), dtype=bool), True, "nothing", 0.0, (0, 0), 10)
    refitted = cheap_refit(nothing, 0.0)(first, second, 10**6)
    assert " and " in refitted.description and refitted.score > 0.0


def test_outputs_without_two_varying_statistics_keep_the_old_event():
    rng = np.random.default_rng(2)
    constant = np.zeros((1_000, 3))
    gaussian = rng.normal(size=(1_000, 3))  # no discrete statistic: no quadrant
    old = Candidate(lambda outputs: np.asarray(outputs)[:, 0] > 0, True, "x[0] > 0", 0.0, (0, 0), 10)
    assert quadrant_refit(constant, constant, 0.0) is None
    assert quadrant_refit(gaussian, gaussian + 1.0, 0.0, keep=old).description == "x[0] > 0"
