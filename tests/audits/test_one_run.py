"""One-run audit (Steinke, Nasr & Jagielski 2023): exact p-value, root finding, label randomized response."""

import math

import numpy as np
import pytest
from scipy import special, stats

from audits import AuditScores, epsilon_one_run, one_run_p_value
from audits.attacks import label_randomized_response_scores


def _authors_p_value(epsilon, delta, r, v, m):
    """The authors' snippet, term by term with binomial CDFs (a loop, as in the reference code)."""
    q = math.exp(epsilon) / (1 + math.exp(epsilon))
    beta = stats.binom.sf(v - 1, r, q)
    alpha = 0.0
    for i in range(1, v + 1):
        alpha = max(alpha, (stats.binom.cdf(v - 1, r, q) - stats.binom.cdf(v - i - 1, r, q)) / i)
    return min(1.0, beta + alpha * delta * 2 * m)


@pytest.mark.parametrize("epsilon", [0.0, 0.5, 1.0, 2.0])
@pytest.mark.parametrize("delta", [0.0, 1e-3])
@pytest.mark.parametrize("r, v, m", [(50, 40, 200), (30, 30, 30), (100, 52, 1000), (1, 0, 5)])
def test_p_value_matches_the_authors_formula(epsilon, delta, r, v, m):
    assert one_run_p_value(epsilon, delta, r, v, m) == pytest.approx(_authors_p_value(epsilon, delta, r, v, m),
                                                                      rel=1e-9, abs=1e-300)


def test_windowed_sum_matches_the_full_sum_for_large_r():
    # r = 20 000 guesses, v = 15 000 correct, m = 10^5, ε = 1, δ = 1e-5: the full max over all i, by cumulative sums.
    r, v, m, epsilon, delta = 20_000, 15_000, 100_000, 1.0, 1e-5
    q = special.expit(epsilon)
    pmf_desc = stats.binom.pmf(np.arange(v - 1, -1, -1), r, q)
    alpha_max = np.max(np.cumsum(pmf_desc) / np.arange(1, v + 1))
    expected = stats.binom.sf(v - 1, r, q) + alpha_max * delta * 2 * m
    assert one_run_p_value(epsilon, delta, r, v, m) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("r, v, m, delta", [(100, 80, 1000, 1e-4), (10_000, 7_000, 20_000, 1e-6), (40, 35, 40, 1e-2)])
def test_p_value_is_nondecreasing_in_epsilon(r, v, m, delta):
    values = [one_run_p_value(e, delta, r, v, m) for e in np.linspace(0, 6, 241)]
    assert np.all(np.diff(values) >= -1e-15)


@pytest.mark.parametrize("epsilon", [1.0, 2.0, 4.0])
@pytest.mark.parametrize("delta", [0.0, 1e-5])
def test_binary_randomized_response_is_audited_tightly(epsilon, delta):
    # m = 10^5 canaries, α = 0.05, one explicit guess rule (cuts fixed in advance): ε_lb >= 0.97 ε.
    # One fixed draw per ε (the RR sampler draws exactly since issue 11; P[ε_lb > ε] <= α over draws is
    # test_soundness.py's), chosen before looking at the bound.
    scores = label_randomized_response_scores(100_000, epsilon, 2, np.random.default_rng([11, int(10 * epsilon)]))
    result = epsilon_one_run(scores, alpha=0.05, delta=delta, threshold_strategy="explicit",
                             guess_thresholds=[(-0.5, 0.5)])
    assert result.counts["guesses"] == 100_000
    assert 0.97 * epsilon <= result.eps_lb < epsilon
    assert one_run_p_value(result.eps_lb, delta, result.counts["guesses"], result.counts["correct"], 100_000) < 0.05
    assert one_run_p_value(result.eps_lb + 1e-6, delta, result.counts["guesses"], result.counts["correct"],
                           100_000) >= 0.05


def test_k_ary_randomized_response_with_abstention():
    # k = 10 classes, ε = 2, m = 10^5, α = 0.05, δ = 0: the auditor abstains when the release is neither candidate.
    scores = label_randomized_response_scores(100_000, 2.0, 10, np.random.default_rng(3))
    result = epsilon_one_run(scores, alpha=0.05, threshold_strategy="explicit", guess_thresholds=[(-0.5, 0.5)])
    assert result.counts["guesses"] < 60_000 and result.counts["canaries"] == 100_000
    assert result.eps_lb >= 0.95 * 2.0


def test_ties_at_a_cut_are_abstained_on():
    # Every score equal: no rule separates the canaries, so nothing is guessed and ε_lb = 0.
    scores = AuditScores(np.zeros(50), np.zeros(50), trials="independent")
    result = epsilon_one_run(scores)
    assert result.counts["guesses"] == 0 and result.eps_lb == 0.0


@pytest.mark.parametrize("guessing", ["one-sided", "two-sided"])
def test_grid_strategies_on_gaussian_canaries(guessing):
    # m = 4000 canaries, IN ~ N(4, 1), OUT ~ N(0, 1), α = 0.05, δ = 1e-5.
    rng = np.random.default_rng(12)
    is_in = rng.random(4000) < 0.5
    values = rng.normal(4.0 * is_in, 1.0)
    scores = AuditScores(values[is_in], values[~is_in], trials="independent")
    corrected = epsilon_one_run(scores, delta=1e-5, guessing=guessing)
    uncorrected = epsilon_one_run(scores, delta=1e-5, guessing=guessing, threshold_strategy="uncorrected")
    split = epsilon_one_run(scores, delta=1e-5, guessing=guessing, threshold_strategy="split", rng=4)
    assert corrected.valid_as == "certified" and corrected.num_hypotheses == 10 and corrected.eps_lb > 1.5
    assert uncorrected.valid_as == "estimate" and uncorrected.eps_lb >= corrected.eps_lb
    assert split.valid_as == "certified" and abs(split.counts["canaries"] - 2000) <= 1 and split.eps_lb > 1.0
    if guessing == "one-sided":
        assert corrected.thresholds[0] == -np.inf


def test_polarity_flip_gives_the_same_bound():
    rng = np.random.default_rng(13)
    in_scores, out_scores = rng.normal(3, 1, 900), rng.normal(0, 1, 1100)
    up = epsilon_one_run(AuditScores(in_scores, out_scores, trials="independent"))
    down = epsilon_one_run(AuditScores(-in_scores, -out_scores, higher_is_in=False, trials="independent"))
    assert up.eps_lb == down.eps_lb and up.counts == down.counts


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"guessing": "both"}, "guessing"),
        ({"threshold_strategy": "explicit"}, "guess_thresholds"),
        ({"threshold_strategy": "explicit", "guess_thresholds": [(1.0, 0.0)]}, "guess_thresholds"),
        ({"threshold_strategy": "explicit", "guess_thresholds": [(np.nan, 0.0)]}, "guess_thresholds"),
        ({"guess_thresholds": [(0.0, 1.0)]}, "guess_thresholds"),
        ({"threshold_strategy": "split"}, "rng"),
        ({"num_guess_counts": 0}, "num_guess_counts"),
        ({"delta": 1.0}, "delta"),
        ({"alpha": 2.0}, "alpha"),
    ],
)
def test_bad_arguments_name_the_parameter(kwargs, name):
    with pytest.raises(ValueError, match=name):
        epsilon_one_run(AuditScores([1.0, 2.0], [0.0, -1.0], trials="independent"), **kwargs)


@pytest.mark.parametrize(
    "args, name",
    [((-1.0, 0.0, 5, 3, 10), "epsilon"), ((1.0, 0.0, 5, 6, 10), "num_correct"), ((1.0, 0.0, 11, 3, 10), "num_guesses"),
     ((1.0, 0.0, 5, 3, 0), "num_canaries"), ((1.0, -0.1, 5, 3, 10), "delta")],
)
def test_bad_p_value_arguments(args, name):
    with pytest.raises(ValueError, match=name):
        one_run_p_value(*args)


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@given(
    epsilon=st.floats(0.0, 5.0),
    delta=st.sampled_from([0.0, 1e-6, 1e-3, 0.05]),
    r=st.integers(1, 60),
    data=st.data(),
)
def test_p_value_property_against_the_authors_loop(epsilon, delta, r, data):
    v = data.draw(st.integers(0, r))
    m = data.draw(st.integers(r, 500))
    assert one_run_p_value(epsilon, delta, r, v, m) == pytest.approx(_authors_p_value(epsilon, delta, r, v, m),
                                                                      rel=1e-9, abs=1e-300)


@given(r=st.integers(1, 20_000), data=st.data(), epsilon=st.floats(0.0, 6.0))
def test_window_maximum_is_never_understated(r, data, epsilon):
    # The unimodal search against the exact maximum of reverse cumulative pmf sums (the authors' definition):
    # never below it, and above it by at most the documented 1e-10 margin plus rounding.
    from audits.one_run import _window_average_max

    v = data.draw(st.integers(1, r))
    q = float(special.expit(epsilon))
    pmf_desc = stats.binom.pmf(np.arange(v - 1, -1, -1), r, q)
    exact = float(np.max(np.cumsum(pmf_desc) / np.arange(1, v + 1)))
    found = _window_average_max(r, v, q)[0]
    assert found >= exact
    assert found <= exact * (1 + 2e-10) + 1e-300


@pytest.mark.parametrize("curve", ["f-dp", "f-dp-gaussian"])
@pytest.mark.parametrize("r, v, m", [(100, 90, 1000), (1000, 700, 5000), (50, 50, 50)])
def test_fdp_margin_decreases_in_epsilon_and_bound_is_the_crossing(curve, r, v, m):
    from audits.one_run_fdp import epsilon_for_counts, falsification_margin

    grid = np.linspace(0.05, 8, 160)
    margins = [falsification_margin(curve, e, 1e-5, r, v, m, 0.05) for e in grid]
    assert np.all(np.diff(margins) <= 1e-15)
    eps_lb = epsilon_for_counts(curve, 0.05, 1e-5, r, v, m)
    assert eps_lb > 0
    assert falsification_margin(curve, eps_lb, 1e-5, r, v, m, 0.05) > 0
    assert falsification_margin(curve, eps_lb + 1e-6, 1e-5, r, v, m, 0.05) <= 0


def test_fdp_recursion_matches_a_hand_computation():
    # (ε, δ) = (0, 0) trade-off: f̄⁻¹(y) = y. r = 3 guesses, v = 2 correct, m = 10, τ = 0.1:
    # start r₂ = 0.02, h₂ = 0.01; i = 1: h₁ = 0.02, r₁ = 0.02 + (1/2)(0.01) = 0.025;
    # i = 0: h₀ = 0.025, r₀ = 0.025 + 0 = 0.025; margin = 0.05 − 0.3 < 0.
    from audits.one_run_fdp import falsification_margin

    assert falsification_margin("f-dp", 0.0, 0.0, 3, 2, 10, 0.1) == pytest.approx(0.025 + 0.025 - 0.3, rel=1e-14)


def test_fdp_analyses_are_labelled():
    scores = label_randomized_response_scores(2000, 2.0, 2, np.random.default_rng(5))
    plain = epsilon_one_run(scores, analysis="f-dp", threshold_strategy="explicit", guess_thresholds=[(-0.5, 0.5)])
    gaussian = epsilon_one_run(scores, delta=1e-5, analysis="f-dp-gaussian", threshold_strategy="explicit",
                               guess_thresholds=[(-0.5, 0.5)])
    assert plain.method == "one-run f-dp" and plain.valid_as == "certified" and 1.0 < plain.eps_lb < 2.5
    assert gaussian.method == "one-run f-dp-gaussian" and "Gaussian-shaped" in gaussian.assumption
    with pytest.raises(ValueError, match="delta"):
        epsilon_one_run(scores, analysis="f-dp-gaussian")
    with pytest.raises(ValueError, match="analysis"):
        epsilon_one_run(scores, analysis="mahloujifar")


def test_hull_guess_rules_follow_jax_privacy():
    # jax_privacy's one-run search: one-sided rules "IN if score >= t" at every ROC-hull vertex, α divided by
    # their number. Here: the chosen rule's counts are a hull vertex's (TP + FP, TP), and the data-dependent
    # Bonferroni is labelled an estimate, its split version certified.
    from audits.metrics import hull_indices, roc_counts

    rng = np.random.default_rng(14)
    is_in = rng.random(3000) < 0.5
    values = np.round(rng.normal(2.0 * is_in, 1.0), 2)  # ties, so ">=" versus ">" matters
    scores = AuditScores(values[is_in], values[~is_in], trials="independent")
    result = epsilon_one_run(scores, guessing="one-sided", guess_rules="hull")
    counts = roc_counts(scores)
    vertices = hull_indices(counts)[1:]
    pairs = set(zip((counts.true_positives + counts.false_positives)[vertices].tolist(),
                    counts.true_positives[vertices].tolist()))
    assert (result.counts["guesses"], result.counts["correct"]) in pairs
    assert result.num_hypotheses == vertices.size and result.valid_as == "estimate" and result.eps_lb > 1.0
    split = epsilon_one_run(scores, guessing="one-sided", guess_rules="hull", threshold_strategy="split", rng=2)
    assert split.valid_as == "certified" and split.num_hypotheses == 1
    with pytest.raises(ValueError, match="guess_rules"):
        epsilon_one_run(scores, guess_rules="hull")


@pytest.mark.parametrize("r, v, epsilon", [(10_288, 8_849, 2.0), (10_288, 8_898, 2.0), (10_287, 8_912, 2.0)])
def test_window_maximum_holds_where_scipy_tails_are_off(r, v, epsilon):
    # scipy 1.17's binomial tails are off by 2.4e-11 relative here, more than the 1e-10 margin left room for once
    # differenced; the maximum is checked against 40-digit window sums at the maximising window.
    import mpmath

    from audits.one_run import _window_average_max

    q = float(special.expit(epsilon))
    averages = np.cumsum(stats.binom.pmf(np.arange(v - 1, -1, -1), r, q)) / np.arange(1, v + 1)
    width = int(np.argmax(averages)) + 1
    with mpmath.workdps(40):  # local precision: other tests' 50-digit references share the global context
        exact = mpmath.fsum(mpmath.binomial(r, k) * mpmath.mpf(q) ** k * (1 - mpmath.mpf(q)) ** (r - k) for k in range(v - width, v)) / width
    found = _window_average_max(r, v, q)[0]
    assert found >= exact and found <= exact * (1 + 2e-10)
