"""Black-box tester: rejects broken samplers, accepts dpmech's, at fixed seeds (N and α stated per test)."""

import numpy as np
import pytest

import dpmech
from dpmech.verify import DpViolation, assert_dp_statistically, statistical_dp_test
from dpmech.verify.statistical import outcome_codes

ALPHA = 0.05
N = 20_000  # outputs per dataset, for selection and again for the test


def broken_rr_top_k(labels, prior, k, epsilon, rng):
    """RRTop-k that draws uniformly over ALL K labels when y is outside Y_k (the public bug; not DP)."""
    top = np.argsort(-prior, kind="stable")[:k]
    inside = np.isin(labels, top)
    correct = dpmech.mechanisms.rr_top_k(labels, np.tile(prior, (labels.size, 1)), k, epsilon, rng)
    return np.where(inside, correct, rng.integers(0, prior.size, size=labels.size))


def broken_randomized_response(labels, epsilon, num_classes, rng):
    """RR keeping the label with probability ε/(ε+K−1) instead of e^ε/(e^ε+K−1)."""
    kept = rng.random(labels.size) < epsilon / (epsilon + num_classes - 1)
    others = (labels + 1 + rng.integers(0, num_classes - 1, size=labels.size)) % num_classes
    return np.where(kept, labels, others)


PRIOR = np.array([0.4, 0.3, 0.2, 0.06, 0.04])


def test_rejects_top_k_that_is_uniform_over_all_labels_outside_y_k():
    sampler = lambda y, size, rng: broken_rr_top_k(np.full(size, y), PRIOR, 2, 2.0, rng)  # noqa: E731
    with pytest.raises(DpViolation) as caught:
        assert_dp_statistically(sampler, (4, 0), 2.0, 1e-6, num_samples=N, rng=0, alpha=ALPHA)
    assert caught.value.direction == "D -> D'" and caught.value.measured_delta > 0.1


def test_rejects_rr_with_epsilon_in_place_of_e_to_the_epsilon():
    # Only a privacy bug for ε < 0.567 (see test_exact); at ε = 0.3 the true ratio is 1/0.3 = 3.3 > e^0.3 = 1.35.
    sampler = lambda y, size, rng: broken_randomized_response(np.full(size, y), 0.3, 3, rng)  # noqa: E731
    result = statistical_dp_test(sampler, (0, 1), 0.3, 0.0, num_samples=N, rng=0, alpha=ALPHA)
    assert result.rejected and result.epsilon_lower_bound > 0.9


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 3.0])
def test_accepts_the_dpmech_label_samplers(epsilon):
    samplers = {
        "rr": lambda y, size, rng: dpmech.randomized_response(np.full(size, y), epsilon, 5, rng),
        "top-k": lambda y, size, rng: dpmech.mechanisms.rr_top_k(np.full(size, y), np.tile(PRIOR, (size, 1)), 2, epsilon, rng),
        "with-prior": lambda y, size, rng: dpmech.mechanisms.rr_with_prior(np.full(size, y), np.tile(PRIOR, (size, 1)), epsilon, rng),
    }
    for name, sampler in samplers.items():
        for pair in ((0, 1), (4, 0), (1, 4)):
            result = statistical_dp_test(sampler, pair, epsilon, 0.0, num_samples=N, rng=1, alpha=ALPHA)
            assert not result.rejected, (name, pair, result)
    # The tester has power: RR at ε is refuted when claimed at ε/3.
    result = statistical_dp_test(samplers["rr"], (0, 1), epsilon / 3, 0.0, num_samples=N, rng=1, alpha=ALPHA)
    assert result.rejected


def test_gaussian_release_accepted_and_half_sigma_rejected():
    epsilon, delta, sensitivity = 1.0, 1e-5, 1.0
    mechanism = dpmech.GaussianOutputMechanism(sensitivity, epsilon, delta)
    sampler = lambda centre, size, rng: mechanism.release(np.full(size, centre), rng)  # noqa: E731
    result = statistical_dp_test(sampler, (0.0, sensitivity), epsilon, delta, num_samples=N, rng=2, outputs="real")
    assert not result.rejected
    quarter = lambda centre, size, rng: centre + rng.normal(0.0, mechanism.sigma / 4, size=size)  # noqa: E731
    result = statistical_dp_test(quarter, (0.0, sensitivity), epsilon, delta, num_samples=N, rng=2, outputs="real")
    assert result.rejected and result.witness.startswith("x")


def test_false_rejection_rate_is_at_most_alpha():
    # 200 independent tests of true RR claims (N = 2000, α = 0.05): rejections ~ Binomial(200, <= 0.05);
    # more than 20 has probability < 0.2% if the test is valid.
    sampler = lambda y, size, rng: dpmech.randomized_response(np.full(size, y), 1.0, 2, rng)  # noqa: E731
    rng = np.random.default_rng(3)
    rejections = sum(statistical_dp_test(sampler, (0, 1), 1.0, 0.0, num_samples=2000, rng=rng).rejected for _ in range(200))
    assert rejections <= 20


BAD_INPUTS = [
    ("sampler", lambda: statistical_dp_test(None, (0, 1), 1.0, 0.0, num_samples=10, rng=0)),
    ("pair", lambda: statistical_dp_test(lambda d, s, r: np.zeros(s), 1, 1.0, 0.0, num_samples=10, rng=0)),
    ("epsilon", lambda: statistical_dp_test(lambda d, s, r: np.zeros(s), (0, 1), -1.0, 0.0, num_samples=10, rng=0)),
    ("delta", lambda: statistical_dp_test(lambda d, s, r: np.zeros(s), (0, 1), 1.0, 1.0, num_samples=10, rng=0)),
    ("num_samples", lambda: statistical_dp_test(lambda d, s, r: np.zeros(s), (0, 1), 1.0, 0.0, num_samples=0, rng=0)),
    ("rng", lambda: statistical_dp_test(lambda d, s, r: np.zeros(s), (0, 1), 1.0, 0.0, num_samples=10, rng=None)),
    ("alpha", lambda: statistical_dp_test(lambda d, s, r: np.zeros(s), (0, 1), 1.0, 0.0, num_samples=10, rng=0, alpha=1.0)),
    ("outputs", lambda: statistical_dp_test(lambda d, s, r: np.zeros(s), (0, 1), 1.0, 0.0, num_samples=10, rng=0, outputs="vector")),
    ("sampler", lambda: statistical_dp_test(lambda d, s, r: np.zeros(3), (0, 1), 1.0, 0.0, num_samples=10, rng=0)),
]


@pytest.mark.parametrize("parameter, call", BAD_INPUTS, ids=[f"{name}-{i}" for i, (name, _) in enumerate(BAD_INPUTS)])
def test_bad_input_raises_value_error_naming_the_parameter(parameter, call):
    with pytest.raises(ValueError, match=parameter):
        call()


def nan_on_second_input(dataset, size, rng):
    """Fair coin on D; on D' half the outputs are NaN: ε = ∞ (issue 11)."""
    outputs = rng.integers(0, 2, size).astype(float)
    if dataset == 1:
        outputs[rng.random(size) < 0.5] = np.nan
    return outputs


@pytest.mark.parametrize("kind", ["discrete", "real"])
def test_nan_is_an_outcome_and_its_leak_is_rejected(kind):
    result = statistical_dp_test(nan_on_second_input, (0, 1), 1.0, 0.0, num_samples=2000, rng=0, outputs=kind)
    assert result.rejected and "nan" in result.witness.lower() and result.direction == "D' -> D"


def test_infinite_outputs_are_outcomes_in_real_mode():
    sampler = lambda d, size, rng: np.where(rng.random(size) < 0.3 * d, np.inf, rng.normal(size=size))  # noqa: E731
    result = statistical_dp_test(sampler, (0, 1), 1.0, 0.0, num_samples=2000, rng=0, outputs="real")
    assert result.rejected and result.witness == "x = inf"


def test_vector_and_tuple_outputs_are_outcomes():
    # Second coordinate is shifted to an impossible value 30% of the time on D'.
    vectors = lambda d, size, rng: np.stack([rng.integers(0, 3, size), rng.integers(0, 3, size) + d * (rng.random(size) < 0.3)], 1)  # noqa: E731
    assert statistical_dp_test(vectors, (0, 1), 0.1, 0.0, num_samples=2000, rng=0).rejected
    tuples = lambda d, size, rng: [(int(a), "x" if b else float("nan")) for a, b in zip(rng.integers(0, 3, size), rng.random(size) < 0.5 + 0.3 * d)]  # noqa: E731
    assert statistical_dp_test(tuples, (0, 1), 0.1, 0.0, num_samples=2000, rng=0).rejected
    # ... and the same vector mechanism on identical inputs is accepted.
    assert not statistical_dp_test(vectors, (0, 0), 0.1, 0.0, num_samples=2000, rng=0).rejected


def test_many_distinct_outcomes_need_no_dense_matrix():
    import tracemalloc

    sampler = lambda d, size, rng: rng.integers(0, 3000, size)  # noqa: E731
    tracemalloc.start()
    result = statistical_dp_test(sampler, (0, 1), 0.1, 0.0, num_samples=20_000, rng=0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert not result.rejected and peak < 50 * 2**20


def test_unhashable_outputs_that_are_not_containers_are_refused_naming_the_sampler():
    class Opaque:
        __hash__ = None  # type: ignore[assignment]

    with pytest.raises(ValueError, match="^sampler must return outputs that are .* unhashable Opaque"):
        statistical_dp_test(lambda d, size, rng: [Opaque() for _ in range(size)], (0, 1), 1.0, 0.0, num_samples=10, rng=0)


def test_dict_and_set_outputs_are_outcomes_by_value():
    codes, count = outcome_codes([np.array([{"a": 1, "b": 2}, {1, 2}], dtype=object),
                                  np.array([{"b": 2, "a": 1}, frozenset({2, 1})], dtype=object)])
    assert count == 2 and codes[0].tolist() == codes[1].tolist()
