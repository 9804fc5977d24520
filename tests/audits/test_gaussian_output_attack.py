"""White-box parameter-space canary audit of Gaussian output perturbation."""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from scipy import special

import dpmech
from audits.attacks import audit_gaussian_output, gaussian_output_scores, run_repetitions, worst_case_logistic_canary
from audits.attacks import gaussian_output as gaussian_output_module

DELTA = 1e-5
ALPHA = 0.05


def test_scores_are_the_projection_of_releases_of_any_shape():
    # σ = 2, pair 3 apart in shape (2, 3), N = 10^4 per side: IN ~ N(3, 4), OUT ~ N(0, 4); 5-standard-error checks.
    theta_without = np.arange(6.0).reshape(2, 3)
    theta_with = theta_without.copy()
    theta_with[1, 2] += 3.0
    scores = gaussian_output_scores(theta_without, theta_with, 2.0, 10_000, np.random.default_rng(1))
    assert scores.num_in == scores.num_out == 10_000 and scores.higher_is_in
    for values, mean in ((scores.in_scores, 3.0), (scores.out_scores, 0.0)):
        assert abs(values.mean() - mean) < 5 * 2.0 / 100
        assert abs(values.std() - 2.0) < 5 * 2.0 / np.sqrt(2 * 10_000)


def test_the_dpmech_mechanism_itself_is_sampled():
    # Same seed: the mechanism's release and N(0, σ²) noise with the same σ give the same scores,
    # so a mis-scaled σ (sampled as a number) is audited on the same footing as the release path.
    mechanism = dpmech.GaussianOutputMechanism(1.5, 2.0, DELTA)
    theta_without, theta_with = np.zeros(4), np.array([0.0, 1.5, 0.0, 0.0])
    through_release = gaussian_output_scores(theta_without, theta_with, mechanism, 300, np.random.default_rng(5))
    through_sigma = gaussian_output_scores(theta_without, theta_with, mechanism.sigma, 300, np.random.default_rng(5))
    np.testing.assert_array_equal(through_release.in_scores, through_sigma.in_scores)
    np.testing.assert_array_equal(through_release.out_scores, through_sigma.out_scores)


def test_drawing_in_blocks_gives_the_same_scores(monkeypatch):
    # d = 50, N = 1000: blocks of 7 rows against one block.
    theta_without, theta_with = np.zeros(50), np.full(50, 0.1)
    whole = gaussian_output_scores(theta_without, theta_with, 1.0, 1000, np.random.default_rng(3))
    monkeypatch.setattr(gaussian_output_module, "_BLOCK_ELEMENTS", 7 * 50)
    blocked = gaussian_output_scores(theta_without, theta_with, 1.0, 1000, np.random.default_rng(3))
    np.testing.assert_allclose(blocked.in_scores, whole.in_scores, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(blocked.out_scores, whole.out_scores, rtol=1e-12, atol=1e-12)


def test_record_fields_follow_the_calibration():
    audit = audit_gaussian_output(2.0, DELTA, 0.5, 1000, 0.8, rng=0, dimension=3)
    sigma = dpmech.calibrate_gaussian(2.0, DELTA, 0.5)
    assert audit.sigma_calibrated == sigma and audit.sigma_used == pytest.approx(0.8 * sigma, rel=1e-15)
    assert audit.mu_claimed == pytest.approx(0.5 / sigma, rel=1e-15)
    assert audit.mu_actual == pytest.approx(0.5 / (0.8 * sigma), rel=1e-15)
    assert (audit.eps_claimed, audit.delta, audit.trials, audit.method, audit.valid_as) == (2.0, DELTA, 1000, "gdp",
                                                                                          "certified")
    assert audit.eps_lb == audit.result.eps_lb and audit.mu_lb == audit.result.mu_lb
    assert audit.threat_model.access == "white-box" and audit.threat_model.trials_per_side == 1000


def test_known_answer_at_mu_one_median_over_seeds():
    # μ_claimed = 1 (ε = 4.377 at δ = 1e-5), N = 10^4 per side, α = 0.05; median over 5 seeds
    # (single-seed ratios at μ = 1 ranged 0.884-0.951 over 20 seeds).
    epsilon = dpmech.gaussian_epsilon(DELTA, sigma=1.0, sensitivity=1.0)
    audits = run_repetitions(audit_gaussian_output, repetitions=5, seed=0, epsilon=epsilon, delta=DELTA,
                             trials=10_000, alpha=ALPHA)
    assert audits[0].mu_claimed == pytest.approx(1.0, rel=1e-6)
    assert np.median([a.mu_lb / a.mu_claimed for a in audits]) >= 0.90
    assert np.median([a.eps_lb / a.eps_claimed for a in audits]) >= 0.85
    assert all(a.mu_lb <= a.mu_claimed for a in audits)


@pytest.mark.parametrize("mu", [1.5, 2.0, 3.0])
def test_known_answer_single_seed(mu):
    # N = 10^4 per side, α = 0.05, δ = 1e-5, one seed per μ.
    epsilon = dpmech.gaussian_epsilon(DELTA, sigma=1.0, sensitivity=mu)
    audit = audit_gaussian_output(epsilon, DELTA, trials=10_000, rng=int(10 * mu), alpha=ALPHA)
    assert 0.90 <= audit.mu_lb / audit.mu_claimed <= 1.0


@pytest.mark.parametrize("epsilon", [1.0, 2.0, 4.0])
def test_halved_sigma_is_detected(epsilon):
    # σ/2: N = 10^4 per side, α = 0.05, δ = 1e-5; the certified bound must exceed the claim.
    audit = audit_gaussian_output(epsilon, DELTA, trials=10_000, sigma_scale=0.5, rng=int(epsilon), alpha=ALPHA)
    assert audit.eps_lb > epsilon and audit.mu_lb > audit.mu_claimed


@pytest.mark.slow  # 4.8 s of CPU in CI's default run (stop 39): the README's rule moves tests of 4 s or more
def test_bound_rarely_exceeds_the_claim():
    # Calibrated mechanism at (ε = 4, δ = 1e-5), N = 1000 per side, α = 0.05, 200 repetitions.
    audits = run_repetitions(audit_gaussian_output, repetitions=200, seed=11, epsilon=4.0, delta=DELTA,
                             trials=1000, alpha=ALPHA)
    assert sum(a.eps_lb > 4.0 for a in audits) <= ALPHA * 200
    assert sum(a.mu_lb > a.mu_claimed for a in audits) <= ALPHA * 200
    assert np.median([a.mu_lb for a in audits]) > 0.5 * audits[0].mu_claimed  # not vacuous


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: gaussian_output_scores(np.zeros(2), np.zeros(3), 1.0, 10, 0), "theta_with"),
        (lambda: gaussian_output_scores(np.zeros(2), np.zeros(2), 1.0, 10, 0), "theta_with"),
        (lambda: gaussian_output_scores([np.nan], [1.0], 1.0, 10, 0), "theta_without"),
        (lambda: gaussian_output_scores([0.0], [1.0], [1.0, 2.0], 10, 0), "mechanism"),
        (lambda: gaussian_output_scores([0.0], [1.0], -1.0, 10, 0), "mechanism"),
        (lambda: gaussian_output_scores([0.0], [1.0], 1.0, 0, 0), "num_trials"),
        (lambda: gaussian_output_scores([0.0], [1.0], 1.0, 10, None), "rng"),
        (lambda: audit_gaussian_output(1.0, DELTA, sigma_scale=0.0, rng=0), "sigma_scale"),
        (lambda: audit_gaussian_output(1.0, DELTA, trials=0, rng=0), "trials"),
        (lambda: audit_gaussian_output(0.0, DELTA, rng=0), "epsilon"),
        (lambda: audit_gaussian_output(1.0, 0.0, rng=0), "delta"),
        (lambda: audit_gaussian_output(1.0, DELTA, dimension=0, rng=0), "dimension"),
    ],
)
def test_bad_arguments_name_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def _logistic_gradient_norm(theta, feature, label):
    return special.expit(-label * theta @ feature) * np.linalg.norm(feature)


@given(
    theta=st.lists(st.floats(-5, 5), min_size=3, max_size=3).map(np.array),
    other=st.lists(st.floats(-1, 1), min_size=3, max_size=3).map(np.array),
    label=st.sampled_from([-1, 1]),
    bound=st.floats(0.1, 10),
)
# A θ whose squares underflow: its norm came out 0.895 of the truth, and the canary 1.117 of the bound.
@example(theta=np.array([0.0, 0.0, 2.483435132870693e-162]), other=np.zeros(3), label=-1, bound=1.0)
def test_canary_has_the_largest_gradient_norm_over_the_ball(theta, other, label, bound):
    if np.linalg.norm(theta) == 0.0:
        theta = np.array([1.0, 0.0, 0.0])
    feature, flipped = worst_case_logistic_canary(theta, bound)
    assert np.linalg.norm(feature) == pytest.approx(bound, rel=1e-12)
    other = other * bound / max(np.linalg.norm(other), 1.0)  # any x with ‖x‖ <= B
    assert _logistic_gradient_norm(theta, feature, flipped) >= _logistic_gradient_norm(theta, other, label) * (1 - 1e-12)


def _newton_logistic_regression(features, labels, regularization):
    """Exact minimiser of (1/n) Σ log(1 + exp(−y θ·x)) + (λ/2)‖θ‖² by Newton's method (to ~1e-15)."""
    theta = np.zeros(features.shape[1])
    for _ in range(40):
        weight = special.expit(-labels * (features @ theta))
        gradient = -(features * (labels * weight)[:, None]).mean(0) + regularization * theta
        hessian = (features * (weight * (1 - weight))[:, None]).T @ features / len(labels)
        theta = theta - np.linalg.solve(hessian + regularization * np.eye(theta.size), gradient)
    return theta


def test_canary_moves_the_minimiser_about_as_far_as_any_norm_bound_record():
    # Add-one, n = 100, d = 3, λ = 0.05, ‖x‖ <= 1: the canary against 300 random records at the norm bound
    # with random labels (seed 0): >= 0.95 of their largest displacement and >= 4x the true-label record.
    rng = np.random.default_rng(0)
    features = rng.normal(size=(100, 3))
    features /= np.maximum(np.linalg.norm(features, axis=1, keepdims=True), 1.0)
    labels = np.where(rng.random(100) < special.expit(features @ np.array([2.0, -1.0, 0.5])), 1.0, -1.0)
    theta = _newton_logistic_regression(features, labels, 0.05)

    def displacement(feature, label):
        return np.linalg.norm(_newton_logistic_regression(np.vstack([features, feature]), np.r_[labels, label], 0.05)
                              - theta)

    feature, label = worst_case_logistic_canary(theta, 1.0)
    directions = rng.normal(size=(300, 3))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    random_labels = rng.choice([-1.0, 1.0], size=300)
    largest_random = max(displacement(x, y) for x, y in zip(directions, random_labels))
    assert displacement(feature, label) >= 0.95 * largest_random
    assert displacement(feature, label) >= 4 * displacement(feature, -label)


def test_canary_direction_and_label_rules():
    feature, label = worst_case_logistic_canary(np.zeros(2), 2.0, direction=[0.0, -3.0])
    np.testing.assert_allclose(feature, [0.0, -2.0])
    assert label == 1  # θ·x = 0: either label has the same gradient norm; +1 by convention
    feature, label = worst_case_logistic_canary(np.array([1.0, 1.0]), 1.0, direction=[-1.0, 0.0])
    assert label == 1 and np.array([1.0, 1.0]) @ feature < 0  # flipped against the model's prediction
    for call, name in [
        (lambda: worst_case_logistic_canary(np.zeros(2), 1.0), "direction"),
        (lambda: worst_case_logistic_canary(np.ones((2, 2)), 1.0), "theta"),
        (lambda: worst_case_logistic_canary(np.ones(2), 0.0), "feature_bound"),
        (lambda: worst_case_logistic_canary(np.ones(2), 1.0, direction=np.ones(3)), "direction"),
    ]:
        with pytest.raises(ValueError, match=name):
            call()
