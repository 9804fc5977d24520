"""DpmechAccountant against dp_accounting's own accountant tests, its anchors, and dpmech's exact Gaussian.

dp_accounting ships an abstract test class for every ``PrivacyAccountant``
(``dp_accounting/privacy_accountant_test.py``, google/differential-privacy, python/dp_accounting): it
is run here as it stands, on both relations. The checks of ``pld/pld_privacy_accountant_test.py`` that
apply to an accountant which accounts less (fail closed) and never understates are mirrored below,
each citing the test it mirrors; where dpmech refuses an event that dp_accounting's PLD accepts, the
refusal is what is checked.
"""

import math

import pytest
from dp_accounting import dp_event
from dp_accounting import privacy_accountant_test as reference_tests
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from dp_accounting.privacy_accountant import NeighboringRelation, UnsupportedEventError
from hypothesis import given
from hypothesis import strategies as st

from tests.profiles import examples

from dpmech import ADD_REMOVE_ONE, REPLACE_ONE, GaussianEvent, PoissonSampledEvent, PrivacyLedger, gaussian_delta
from dpmech import gaussian_epsilon
from dpmech.integrations.dp_accounting import DpmechAccountant

ADD, REPLACE = NeighboringRelation.ADD_OR_REMOVE_ONE, NeighboringRelation.REPLACE_ONE
DP_SGD = dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.0))


class DpmechAccountantReferenceTest(reference_tests.PrivacyAccountantTest):
    """dp_accounting's PrivacyAccountantTest: unsupported events, no events, no-op, non-private."""

    def _make_test_accountants(self):
        return [DpmechAccountant(ADD), DpmechAccountant(REPLACE)]


def test_the_relation_maps_to_dpmechs_and_add_remove_is_the_default():
    assert DpmechAccountant().neighboring_relation == ADD
    assert DpmechAccountant().privacy_ledger().neighbouring == ADD_REMOVE_ONE
    assert DpmechAccountant(REPLACE).privacy_ledger().neighbouring == REPLACE_ONE
    for relation in (NeighboringRelation.REPLACE_SPECIAL, "add-remove-one"):
        with pytest.raises(ValueError, match="neighboring_relation"):
            DpmechAccountant(relation)


# Mirrors test_supports_randomized_response, test_supports_subsampled_gaussian_and_rr_composition and
# test_poisson_subsampling_laplace_not_supported_for_replace_one; Poisson sampling (proven here under
# add/remove only) and sampling without replacement (replace-one only) are refused under the other relation.
@pytest.mark.parametrize("event,relation,supported", [
    (dp_event.RandomizedResponseDpEvent(0.1, 3), REPLACE, True),
    (dp_event.RandomizedResponseDpEvent(0.1, 3), ADD, False),
    (dp_event.ComposedDpEvent([DP_SGD, dp_event.RandomizedResponseDpEvent(0.1, 3)]), ADD, False),
    (dp_event.PoissonSampledDpEvent(0.1, dp_event.LaplaceDpEvent(1.0)), REPLACE, False),
    (DP_SGD, REPLACE, False),
    (dp_event.SampledWithoutReplacementDpEvent(100, 10, dp_event.GaussianDpEvent(1.0)), REPLACE, True),
    (dp_event.SampledWithoutReplacementDpEvent(100, 10, dp_event.GaussianDpEvent(1.0)), ADD, False),
    (dp_event.PoissonSampledDpEvent(0.1, dp_event.PoissonSampledDpEvent(0.5, dp_event.LaplaceDpEvent(1.0))), ADD,
     False),
    (dp_event.ZCDpEvent(0.5), ADD, False),
    (dp_event.DiscreteLaplaceDpEvent(0.1, 1), ADD, False),
    (dp_event.MixtureOfGaussiansDpEvent(1.0, [0.0, 1.0], [0.5, 0.5]), ADD, False),
    # dp_accounting reads q = 0 and a sampled zero-noise Gaussian; dpmech has no such event and refuses.
    (dp_event.PoissonSampledDpEvent(0.0, dp_event.GaussianDpEvent(1.0)), ADD, False),
    (dp_event.PoissonSampledDpEvent(0.1, dp_event.GaussianDpEvent(0.0)), ADD, False),
])
def test_supports_fails_closed_and_compose_names_the_refused_event(event, relation, supported):
    accountant = DpmechAccountant(relation)
    assert accountant.supports(event) is supported
    if supported:
        accountant.compose(event)
        assert accountant.ledger == event
    else:
        with pytest.raises(UnsupportedEventError, match="caused by subevent"):
            accountant.compose(event)
        assert accountant.ledger == dp_event.NoOpDpEvent()


# Mirrors test_supports_gaussian (every relation but REPLACE_SPECIAL, which dpmech does not have).
@pytest.mark.parametrize("event", [
    dp_event.GaussianDpEvent(1.0),
    dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(1.0), 6),
    dp_event.ComposedDpEvent([dp_event.GaussianDpEvent(1.0), dp_event.GaussianDpEvent(2.0)]),
    dp_event.PoissonSampledDpEvent(0.1, dp_event.GaussianDpEvent(1.0)),
    dp_event.ComposedDpEvent([dp_event.PoissonSampledDpEvent(0.1, dp_event.GaussianDpEvent(1.0)),
                              dp_event.GaussianDpEvent(2.0)]),
])
def test_supports_gaussian_events_under_add_remove(event):
    assert DpmechAccountant(ADD).supports(event)
    sampled = "PoissonSampled" in repr(event)
    assert DpmechAccountant(REPLACE).supports(event) is not sampled


def test_the_nested_refusal_names_the_innermost_event():
    unsupported = dp_event.UnsupportedDpEvent()
    event = dp_event.ComposedDpEvent([DP_SGD, dp_event.PoissonSampledDpEvent(0.1, unsupported)])
    details = DpmechAccountant()._maybe_compose(event, 1, False)
    assert details.invalid_event is unsupported


@pytest.mark.parametrize("count", [0, -1])
def test_non_positive_composition_raises(count):  # mirrors test_non_positive_composition_value_error
    with pytest.raises(ValueError):
        DpmechAccountant().compose(dp_event.GaussianDpEvent(1.0), count)


@pytest.mark.parametrize("relation", [REPLACE, ADD])
def test_single_bucket_randomized_response_costs_nothing(relation):
    # Mirrors test_randomized_response_with_single_bucket.
    accountant = DpmechAccountant(relation).compose(dp_event.RandomizedResponseDpEvent(0.0, 1))
    assert accountant.get_delta(0) == 0
    assert accountant.get_epsilon(0) == 0


def test_randomized_response_is_pure_at_its_epsilon():  # mirrors test_randomized_response (REPLACE_ONE)
    accountant = DpmechAccountant(REPLACE).compose(dp_event.RandomizedResponseDpEvent(4 / (3 + math.e), 4))
    assert accountant.get_delta(1.0) == pytest.approx(0.0, abs=1e-7)
    assert accountant.get_delta(1.0 + 1e-12) == 0.0  # at and past its pure ε, δ is 0 exactly
    assert accountant.get_epsilon(0.0) == pytest.approx(1.0, rel=1e-15)


@pytest.mark.parametrize("event", [dp_event.GaussianDpEvent(0), dp_event.LaplaceDpEvent(0),
                                   dp_event.RandomizedResponseDpEvent(0.0, 3)])
def test_zero_noise_has_no_guarantee(event):  # mirrors test_additive_noise_mechanisms_with_zero_noise_multiplier
    accountant = DpmechAccountant(REPLACE if "Randomized" in repr(event) else ADD).compose(event)
    assert accountant.get_delta(1.0) == 1
    assert accountant.get_epsilon(0.01) == math.inf


def test_three_gaussians_anchor_and_exact_value():
    # Mirrors test_gaussian_basic: σ = √3 three times is μ = 1; δ(1) = 0.126936 there, and dpmech's exact
    # Gaussian core gives the truth, which the certified upper ends never undercut.
    gaussian = dp_event.GaussianDpEvent(noise_multiplier=math.sqrt(3))
    accountant = DpmechAccountant().compose(gaussian, 1).compose(gaussian, 2)
    exact_delta = gaussian_delta(1.0, 1.0)
    assert exact_delta <= accountant.get_delta(1.0) <= exact_delta * (1 + 1e-9)
    assert accountant.get_delta(1.0) == pytest.approx(0.126936, abs=1e-3)
    assert gaussian_epsilon(0.126936, 1.0) <= accountant.get_epsilon(0.126936) <= 1.0 + 1e-3


def test_subsampled_gaussian_anchor():  # mirrors test_poisson_subsampled_gaussian and its self-composed twin
    event = dp_event.PoissonSampledDpEvent(0.2, dp_event.GaussianDpEvent(noise_multiplier=0.5))
    for accountant in (DpmechAccountant().compose(event, 1).compose(event, 2),
                       DpmechAccountant().compose(dp_event.SelfComposedDpEvent(event, 3))):
        assert accountant.get_delta(1.0) == pytest.approx(0.15594, abs=1e-3)
        assert accountant.get_epsilon(0.15594) == pytest.approx(1.0, abs=1e-3)
        lower, _, upper = accountant.get_guarantee(0.15594).interval
        assert lower <= upper == accountant.get_epsilon(0.15594)


def test_laplace_composition_is_pure():  # mirrors test_laplace_basic: 3·1 + 2·(1/2) = 4
    accountant = DpmechAccountant().compose(dp_event.LaplaceDpEvent(1), 3).compose(dp_event.LaplaceDpEvent(2), 2)
    assert accountant.get_delta(4.0) == 0.0
    assert accountant.get_epsilon(1e-14) == 4.0
    assert accountant.get_epsilon(0.0) == 4.0
    assert 0.0 < accountant.get_delta(3.9)


def test_subsampled_laplace_anchor():  # mirrors test_poisson_subsampled_laplace
    event = dp_event.PoissonSampledDpEvent(0.2, dp_event.LaplaceDpEvent(noise_multiplier=0.5))
    accountant = DpmechAccountant().compose(event, 1).compose(event, 2)
    assert accountant.get_delta(2.46964) == pytest.approx(1e-14, abs=1e-6)
    assert accountant.get_epsilon(1e-14) == pytest.approx(2.46964, abs=1e-3)
    pure = 3 * math.log1p(0.2 * math.expm1(2.0))  # amplification by sampling (Li, Qardaji & Su 2012)
    assert pure <= accountant.get_epsilon(0.0) == pytest.approx(pure, rel=1e-14)


def test_dp_sgd_row_is_certified_and_within_2e_3_of_the_truth():
    # q = 0.01, σ = 1, 1000 steps, δ = 1e-5: the true ε lies in [1.827967, 1.828244 + rounding]; dpmech's
    # certified lower end is above 1.827967, dp_accounting's PLD at 1e-4 gives 1.828244.
    accountant = DpmechAccountant().compose(DP_SGD, 1000)
    epsilon = accountant.get_epsilon(1e-5)
    assert 1.827967 <= epsilon <= 1.830244
    lower = accountant.get_guarantee(1e-5).interval[0]
    assert 1.827967 <= lower <= epsilon
    ledger = PrivacyLedger(ADD_REMOVE_ONE).record(PoissonSampledEvent(GaussianEvent(1.0), 0.01), count=1000)
    assert epsilon == ledger.epsilon(1e-5).epsilon


relation = st.sampled_from([ADD, REPLACE])
gaussians = st.lists(st.tuples(st.floats(0.5, 20.0), st.integers(1, 50)), min_size=1, max_size=4)


@examples(0.3)
@given(gaussians, st.floats(-10.0, -2.0), relation)
def test_gaussian_compositions_are_never_understated(releases, log10_delta, neighbouring):
    # The exact ε of Gaussians: one Gaussian of μ = Δ√(Σ count/σ²), Δ = 1 under add/remove and 2 under
    # replace-one (dp_accounting's PLD reading; Dong, Roth & Su 2019, Cor. 3.3).
    delta = 10.0**log10_delta
    accountant = DpmechAccountant(neighbouring)
    for sigma, count in releases:
        accountant.compose(dp_event.GaussianDpEvent(sigma), count)
    sensitivity = 1.0 if neighbouring == ADD else 2.0
    mu = sensitivity * math.sqrt(math.fsum(count / sigma**2 for sigma, count in releases))
    truth = gaussian_epsilon(delta, 1.0 / mu)
    assert truth <= accountant.get_epsilon(delta) <= truth * (1 + 1e-6) + 1e-9
    exact_delta = gaussian_delta(1.0, 1.0 / mu)
    assert exact_delta <= accountant.get_delta(1.0) <= exact_delta * (1 + 1e-6) + 1e-300


@pytest.mark.slow  # 4.4 s of CPU in CI's default run (stop 39): the README's rule moves tests of 4 s or more
@examples(0.05)
@given(st.floats(0.7, 4.0), st.floats(0.001, 0.1), st.integers(1, 300), st.floats(-8.0, -3.0))
def test_subsampled_gaussian_agrees_with_dp_accountings_pld(sigma, rate, steps, log10_delta):
    delta = 10.0**log10_delta
    event = dp_event.PoissonSampledDpEvent(rate, dp_event.GaussianDpEvent(sigma))
    ours = DpmechAccountant().compose(event, steps)
    theirs = PLDAccountant(ADD, value_discretization_interval=1e-4).compose(event, steps).get_epsilon(delta)
    lower, _, upper = ours.get_guarantee(delta).interval
    assert upper == ours.get_epsilon(delta)
    # Their pessimistic PLD is an upper estimate: our certified lower end stays below it, and our upper
    # end within the grid's error of it.
    assert lower <= theirs + 1e-9
    assert upper <= theirs + max(2e-3, 2e-3 * theirs)


@pytest.mark.parametrize("call,parameter", [
    (lambda: DpmechAccountant().get_epsilon(-0.1), "target_delta"),
    (lambda: DpmechAccountant().get_epsilon(1.5), "target_delta"),
    (lambda: DpmechAccountant().get_epsilon(math.nan), "target_delta"),
    (lambda: DpmechAccountant().get_delta(-1.0), "target_epsilon"),
    (lambda: DpmechAccountant().get_delta(math.nan), "target_epsilon"),
    (lambda: DpmechAccountant().compose(DP_SGD).get_delta(math.inf), "target_epsilon"),
])
def test_bad_input_names_the_parameter(call, parameter):
    with pytest.raises(ValueError, match=parameter):
        call()
