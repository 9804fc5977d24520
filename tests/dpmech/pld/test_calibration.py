"""Calibration never under-noises: checked against exact references, not against itself."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpmech import high_precision, pld
from dpmech.pld.calibration import calibrate, poisson_subsampled_gaussian_sigma
from tests.profiles import examples


def _exact_one_step(sigma, rate, epsilon):
    return max(high_precision.poisson_subsampled_gaussian_delta(epsilon, 1 / sigma, rate, direction)
               for direction in ("remove", "add"))


@given(rate=st.floats(0.05, 1.0), epsilon=st.floats(0.2, 3.0), log_delta=st.floats(-25.0, -4.0))
@examples(0.03)
def test_subsampled_gaussian_sigma_is_never_under_noised_and_tight(rate, epsilon, log_delta):
    delta = math.exp(log_delta)
    sigma = poisson_subsampled_gaussian_sigma(rate, 1, epsilon, delta)
    assert _exact_one_step(sigma, rate, epsilon) <= delta
    assert _exact_one_step(sigma * 0.99, rate, epsilon) > delta


def test_laplace_scale_matches_the_pure_dp_formula():
    """One Laplace release is (1/b, 0)-DP exactly; at δ = 1e-12 the scale is within 0.5 % above 1/ε."""
    scale = calibrate(lambda b: [(pld.LaplacePair(b), 1)], 1.0, 1e-12, 0.5, 5.0)
    exact = lambda b: -math.expm1((1.0 - 1 / b) / 2) if 1 / b > 1.0 else 0.0
    assert exact(scale) <= 1e-12
    assert 1.0 * (1 - 1e-3) <= scale <= 1.005


def test_randomized_response_epsilon_is_calibrated_downwards():
    """k binary RRs: the largest per-release ε whose composition meets the target (exact enumeration)."""
    count, target_epsilon, target_delta = 20, 2.0, 1e-6
    value = calibrate(lambda e: [(pld.randomized_response_pair(e), count)], target_epsilon, target_delta,
                      0.01, 2.0, more_private="smaller")
    loss, p, _ = pld.randomized_response_pair(value).atoms()
    atoms = [list(zip(loss.tolist(), p.tolist()))] * count
    assert high_precision.finite_pairs_delta(atoms, target_epsilon) <= target_delta


def test_a_bracket_that_cannot_meet_the_target_is_refused():
    with pytest.raises(ValueError, match="widen the bracket"):
        calibrate(lambda b: [(pld.LaplacePair(b), 1)], 1.0, 1e-12, 0.1, 0.5)


@pytest.mark.parametrize(
    "arguments, message",
    [
        ((lambda b: [], 1.0, 0.0, 0.5, 5.0), "delta"),
        ((lambda b: [], 1.0, 1e-6, 5.0, 0.5), "low must be below high"),
        (("not callable", 1.0, 1e-6, 0.5, 5.0), "family"),
    ],
)
def test_bad_calibration_input_raises(arguments, message):
    with pytest.raises(ValueError, match=message):
        calibrate(*arguments)


@pytest.mark.parametrize("epsilon", [1.0, 8.0])
def test_dp_sgd_sigma_is_certified_by_the_ledger_and_tight(epsilon):
    """q = 0.01, 1000 steps, δ = 1e-5: the ledger's certified upper δ at the returned σ meets the target, and
    a σ 0.3 % smaller does not; dp_accounting's calibrate_dp_mechanism (PLD 1e-3) agrees within 1 %
    (1.4159 and 0.5863 in its tests' conventions)."""
    import dpmech

    sigma = dpmech.pld.poisson_subsampled_gaussian_sigma(0.01, 1000, epsilon, 1e-5)

    def ledger(noise):
        return dpmech.PrivacyLedger(dpmech.ADD_REMOVE_ONE).record(
            dpmech.PoissonSampledEvent(dpmech.GaussianEvent(noise), 0.01), count=1000)

    assert ledger(sigma).delta(epsilon, method="numeric", discretization=1e-3).delta <= 1e-5
    assert ledger(sigma * 0.997).delta(epsilon, method="numeric", discretization=1e-3).delta > 1e-5
    assert abs(sigma / {1.0: 1.4159, 8.0: 0.5863}[epsilon] - 1) < 0.01


def test_ledger_template_with_sampled_steps_and_labels_is_never_under_noised():
    """A one-shot federation's template: Poisson-sampled Gaussian rounds and one RR release of labels."""
    import dpmech

    def template(sigma):
        ledger = dpmech.PrivacyLedger(dpmech.ADD_REMOVE_ONE)
        ledger.record(dpmech.PoissonSampledEvent(dpmech.GaussianEvent(sigma, 2.0), 0.1), count=20)
        ledger.record(dpmech.PureEpsilonEvent(0.5, 10))
        return ledger

    sigma = dpmech.pld.calibrate_ledger(template, 3.0, 1e-6, 0.5, 50.0, guess=5.0)
    assert template(sigma).delta(3.0, method="numeric", discretization=1e-3).delta <= 1e-6
    assert template(sigma * 0.997).delta(3.0, method="numeric", discretization=1e-3).delta > 1e-6
    bisected = dpmech.pld.calibrate_ledger(template, 3.0, 1e-6, 0.5, 50.0)
    assert abs(bisected / sigma - 1) < 2e-3


@pytest.mark.parametrize(
    "template, message",
    [
        (lambda sigma: [], "PrivacyLedger"),
        ("ledger", "template"),
    ],
)
def test_bad_ledger_templates_are_refused(template, message):
    import dpmech

    with pytest.raises(ValueError, match=message):
        dpmech.pld.calibrate_ledger(template, 1.0, 1e-5, 0.5, 5.0)
