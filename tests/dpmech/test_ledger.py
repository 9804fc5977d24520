"""PrivacyLedger and its accountants, cross-checked against dp_accounting and prv_accountant."""

import math

import pytest
from dp_accounting import dp_event
from dp_accounting.pld.pld_privacy_accountant import PLDAccountant
from dp_accounting.privacy_accountant import NeighboringRelation
from hypothesis import given
from hypothesis import strategies as st

from tests.profiles import examples

from dpmech import (
    ADD_REMOVE_ONE,
    REPLACE_ONE,
    ApproximateDpEvent,
    GaussianEvent,
    NoGuaranteeEvent,
    PrivacyLedger,
    PureEpsilonEvent,
    calibrate_gaussian,
    gaussian_delta,
    gaussian_epsilon,
)


def _gaussian_ledger(sigmas_and_counts, neighbouring=REPLACE_ONE):
    ledger = PrivacyLedger(neighbouring)
    for sigma, sensitivity, count in sigmas_and_counts:
        ledger.record(GaussianEvent(sigma, sensitivity), count=count)
    return ledger


gaussian_releases = st.lists(
    st.tuples(st.floats(1.0, 20.0), st.floats(0.2, 2.0), st.integers(1, 20)), min_size=1, max_size=4
)


@examples(0.15)
@given(gaussian_releases, st.floats(-10.0, -2.0))
@pytest.mark.slow
def test_exact_composition_lies_between_optimistic_and_pessimistic_pld(releases, log10_delta):
    delta = 10.0**log10_delta
    ledger = _gaussian_ledger(releases)
    exact = ledger.epsilon(delta, method="exact")
    pld = ledger.epsilon(delta, method="pld")
    assert pld.interval[0] - 1e-9 <= exact.epsilon <= pld.epsilon + 1e-9
    assert exact.epsilon == pytest.approx(pld.epsilon, abs=2e-3)


@pytest.mark.slow
@examples(0.1)
@given(gaussian_releases, st.floats(-8.0, -3.0))
def test_exact_composition_matches_dp_accounting_pld_accountant(releases, log10_delta):
    delta = 10.0**log10_delta
    ledger = _gaussian_ledger(releases, ADD_REMOVE_ONE)
    theirs = PLDAccountant(ledger.dp_accounting_relation).compose(ledger.to_dp_event()).get_epsilon(delta)
    assert ledger.epsilon(delta).epsilon == pytest.approx(theirs, abs=2e-3)
    assert ledger.epsilon(delta).epsilon <= theirs + 1e-9


@examples(0.1)
@given(st.floats(1.0, 30.0), st.integers(1, 200), st.floats(-9.0, -3.0))
def test_prv_interval_brackets_the_exact_epsilon(sigma, count, log10_delta):
    delta = 10.0**log10_delta
    ledger = _gaussian_ledger([(sigma, 1.0, count)])
    lower, _, upper = ledger.epsilon(delta, method="prv").interval
    assert lower <= ledger.epsilon(delta, method="exact").epsilon <= upper


def test_exact_method_on_1000_compositions_is_the_anchor():
    ledger = _gaussian_ledger([(1.0, 1.0, 1000)])
    guarantee = ledger.epsilon(1e-5)
    assert guarantee.method == "exact"
    assert guarantee.epsilon == pytest.approx(633.92985, rel=1e-7)
    assert guarantee.neighbouring == REPLACE_ONE


def test_delta_query_never_understates():
    ledger = _gaussian_ledger([(3.0, 1.0, 4)])
    guarantee = ledger.delta(2.0)
    assert guarantee.delta >= gaussian_delta(2.0, 3.0, compositions=4)
    assert guarantee.delta == pytest.approx(gaussian_delta(2.0, 3.0, compositions=4), rel=1e-10)


@pytest.mark.slow  # 5.13 s of CPU in CI's default run (2026-11-27): 5 s or more goes to the slow set
def test_heterogeneous_composition_pld_upper_end_is_dp_accountings_and_brackets_exact():
    ledger = (
        PrivacyLedger(REPLACE_ONE)
        .record(GaussianEvent(2.0), count=10)
        .record(PureEpsilonEvent(0.5, num_outcomes=10), count=10)
    )
    ours = ledger.epsilon(1e-5, method="pld")
    exact = ledger.epsilon(1e-5)
    assert exact.method == "exact" and exact.certified
    assert not ours.certified
    assert exact.interval[2] <= ours.epsilon
    assert ours.epsilon == pytest.approx(exact.epsilon, abs=2e-3)
    # The export must never under-report: with RR present dp_accounting's PLD reads
    # REPLACE_ONE Gaussians at sensitivity 2, an over-estimate.
    theirs = PLDAccountant(ledger.dp_accounting_relation).compose(ledger.to_dp_event()).get_epsilon(1e-5)
    assert theirs >= exact.interval[2]
    prv = ledger.epsilon(1e-5, method="prv")
    # prv_accountant accounts K-ary RR as its generic ε-DP mechanism: valid upper end, not certified.
    assert prv.interval[2] >= exact.interval[0]
    assert not prv.certified


def test_dp_accounting_drops_the_count_of_self_composed_randomized_response():
    # A dp_accounting 0.6.0 bug our conversion works around: SelfComposedDpEvent(RR, 10)
    # is accounted as one RR. to_dp_event writes the repetitions out.
    rr = dp_event.RandomizedResponseDpEvent(noise_parameter=10 / (math.exp(0.5) + 9), num_buckets=10)
    buggy = PLDAccountant(NeighboringRelation.REPLACE_ONE).compose(dp_event.SelfComposedDpEvent(rr, 10))
    ledger = PrivacyLedger(REPLACE_ONE).record(PureEpsilonEvent(0.5, num_outcomes=10), count=10)
    converted = PLDAccountant(NeighboringRelation.REPLACE_ONE).compose(ledger.to_dp_event())
    assert buggy.get_epsilon(1e-5) == pytest.approx(0.5, abs=1e-3)
    # Our pld upper end is dp_accounting's value raised by a rounding margin; the estimate is theirs.
    assert converted.get_epsilon(1e-5) == pytest.approx(ledger.epsilon(1e-5, method="pld").interval[1], rel=1e-9)
    assert ledger.epsilon(1e-5, method="pld").epsilon > 3.0


def test_basic_composition_adds_the_two_fedaux_heads():
    sigma = calibrate_gaussian(0.5, 1e-5, sensitivity=0.02)
    ledger = PrivacyLedger(REPLACE_ONE).record(GaussianEvent(sigma, 0.02), label="scores").record(
        GaussianEvent(sigma, 0.02), label="classes"
    )
    basic = ledger.epsilon(2e-5, method="basic")
    assert basic.epsilon == pytest.approx(1.0, rel=1e-9)
    tight = ledger.epsilon(2e-5)
    assert tight.epsilon < basic.epsilon
    assert ledger.labels == ("scores", "classes")


def test_basic_composition_with_fixed_events():
    ledger = PrivacyLedger(REPLACE_ONE).record(PureEpsilonEvent(0.3), count=2).record(ApproximateDpEvent(0.2, 1e-6))
    assert ledger.epsilon(1e-5, method="basic").epsilon == pytest.approx(0.8)
    assert ledger.epsilon(1e-7, method="basic").epsilon == math.inf
    assert ledger.delta(0.8, method="basic").delta == pytest.approx(1e-6)
    assert ledger.delta(0.7, method="basic").delta == 1.0


def test_add_remove_events_enter_a_replace_one_ledger_as_groups_of_two():
    event = GaussianEvent(3.0, 1.0, neighbouring=ADD_REMOVE_ONE)
    replace_one = PrivacyLedger(REPLACE_ONE).record(event)
    assert replace_one.epsilon(1e-6).epsilon == pytest.approx(gaussian_epsilon(1e-6, 3.0, 2.0), rel=1e-12)
    with pytest.raises(ValueError, match="neighbouring"):
        PrivacyLedger(ADD_REMOVE_ONE).record(GaussianEvent(3.0, neighbouring=REPLACE_ONE))


def test_no_guarantee_event_makes_epsilon_infinite():
    ledger = PrivacyLedger(REPLACE_ONE).record(GaussianEvent(2.0)).record(NoGuaranteeEvent("Fed-ZDA: TV <= delta is assumed"))
    guarantee = ledger.epsilon(1e-5)
    assert guarantee.epsilon == math.inf
    assert "no formal guarantee" in guarantee.note
    assert ledger.delta(5.0).delta == 1.0


def test_group_privacy_of_a_gaussian_ledger_scales_the_sensitivity():
    ledger = _gaussian_ledger([(4.0, 1.0, 3)])
    grouped = ledger.group_privacy(5)
    assert grouped.epsilon(1e-5).epsilon == pytest.approx(gaussian_epsilon(1e-5, 4.0, 5.0, 3), rel=1e-12)


def test_every_result_names_its_method_and_relation():
    ledger = _gaussian_ledger([(2.0, 1.0, 2)], ADD_REMOVE_ONE)
    for method in ("exact", "pld", "prv", "basic"):
        guarantee = ledger.epsilon(1e-5, method=method)
        assert guarantee.method == method
        assert guarantee.neighbouring == ADD_REMOVE_ONE
        lower, estimate, upper = guarantee.interval
        assert lower <= estimate <= upper == guarantee.epsilon
        assert method in str(guarantee)


def test_empty_ledger_is_perfectly_private():
    assert PrivacyLedger().epsilon(1e-5).epsilon == 0.0


def test_every_entry_point_defaults_to_add_remove_and_names_it():
    # One default, as in dp_accounting and opacus: a ledger built directly and one read from a DpEvent agree.
    direct = PrivacyLedger().record(GaussianEvent(1.0), count=3)
    imported = PrivacyLedger.from_dp_event(dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(1.0), 3))
    assert direct.neighbouring == imported.neighbouring == ADD_REMOVE_ONE
    assert direct.epsilon(1e-5) == imported.epsilon(1e-5)
    assert str(direct.epsilon(1e-5)).split(", method")[0].endswith("under add-remove-one")
    # A replace-one statement cannot enter the default ledger: the caller must name replace-one.
    with pytest.raises(ValueError, match="neighbouring"):
        PrivacyLedger().record(PureEpsilonEvent(1.0, num_outcomes=2, neighbouring=REPLACE_ONE))


def test_auto_and_exact_account_randomized_response_exactly():
    ledger = PrivacyLedger(REPLACE_ONE).record(PureEpsilonEvent(1.0), count=3)
    for method in ("auto", "exact"):
        guarantee = ledger.epsilon(1e-5, method=method)
        assert guarantee.method == "exact" and guarantee.certified
        # Binary RR composed 3 times: the loss is ±1, ±3, and for ε in [1, 3]
        # δ(ε) = p³(1 − e^{ε−3}) with p = e/(1+e), so ε(δ) = 3 + log(1 − δ/p³).
        expected = 3.0 + math.log1p(-1e-5 / (math.e / (1 + math.e)) ** 3)
        assert guarantee.interval[0] <= expected <= guarantee.epsilon <= expected + 1e-9


@pytest.mark.parametrize(
    "call,parameter",
    [
        (lambda: PrivacyLedger("swap-two"), "neighbouring"),
        (lambda: PrivacyLedger().record("gaussian"), "event"),
        (lambda: PrivacyLedger().record(GaussianEvent(1.0), count=0), "count"),
        (lambda: PrivacyLedger().record(GaussianEvent(1.0), count=2.5), "count"),
        (lambda: PrivacyLedger().record(GaussianEvent(1.0), count="3"), "count"),
        (lambda: PrivacyLedger().record(GaussianEvent(1.0)).group_privacy("2"), "group_size"),
        (lambda: PrivacyLedger().epsilon([1e-5, 0.0]), "delta"),
        (lambda: PrivacyLedger().epsilon(0.0), "delta"),
        (lambda: PrivacyLedger().epsilon(1.0), "delta"),
        (lambda: PrivacyLedger().delta(-1.0), "epsilon"),
        (lambda: PrivacyLedger().delta(math.nan), "epsilon"),
        (lambda: PrivacyLedger().epsilon(1e-5, method="rdp"), "method"),
    ],
)
def test_bad_ledger_input_names_the_parameter(call, parameter):
    with pytest.raises(ValueError, match=parameter):
        call()


@given(st.lists(st.tuples(st.floats(0.1, 100.0), st.floats(0.01, 10.0), st.integers(1, 50)), min_size=1, max_size=5),
       st.booleans())
def test_gaussian_mu_is_the_exact_composition_under_the_ledger_relation(releases, add_remove):
    # An add/remove Gaussian enters a replace-one ledger as a group of two: twice its μ.
    ledger = PrivacyLedger(REPLACE_ONE)
    for sigma, sensitivity, count in releases:
        ledger.record(GaussianEvent(sigma, sensitivity, ADD_REMOVE_ONE if add_remove else None), count)
    scale = 2.0 if add_remove else 1.0
    expected = math.sqrt(math.fsum(count * (scale * sensitivity / sigma) ** 2 for sigma, sensitivity, count in releases))
    assert ledger.gaussian_mu == pytest.approx(expected, rel=1e-13)
    assert ledger.epsilon(1e-5).epsilon == pytest.approx(gaussian_epsilon(1e-5, 1.0, ledger.gaussian_mu), rel=1e-9)


def test_gaussian_mu_refuses_a_ledger_with_other_events():
    with pytest.raises(ValueError, match="only to Gaussian events"):
        PrivacyLedger(REPLACE_ONE).record(GaussianEvent(1.0)).record(PureEpsilonEvent(1.0)).gaussian_mu
