"""The accountant registry: a third party registers an accountant and uses it through PrivacyLedger."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpmech import accountants
from dpmech.accountants import Interval, accountant_names, get_accountant, register_accountant
from dpmech.events import GaussianEvent, LaplaceEvent, PoissonSampledEvent
from dpmech.ledger import PrivacyLedger


class ZeroConcentratedAccountant:
    """zCDP accounting of Gaussian releases, written outside dpmech against the event hooks only.

    A Gaussian release with μ = Δ/σ is (μ²/2)-zCDP and zCDP composes by adding ρ; ρ-zCDP implies
    (ρ + 2√(ρ log(1/δ)), δ)-DP and, for ε >= ρ, (ε, e^{−(ε−ρ)²/(4ρ)})-DP (Bun & Steinke 2016, Lemma 2.4,
    Props. 1.3 and 1.6). Valid upper bounds, looser than the tight ones.
    """

    @staticmethod
    def _rho(pairs):
        mus = [(event.gaussian_mu(), count) for event, count in pairs]
        refused = sorted({event.describe() for (event, _), (mu, _) in zip(pairs, mus) if mu is None})
        if refused:
            raise ValueError(f"method 'zcdp' cannot account {', '.join(refused)}")
        return math.fsum(count * mu * mu / 2.0 for mu, count in mus)

    def supports(self, pairs):
        try:
            self._rho(pairs)
        except ValueError:
            return False
        return True

    def epsilon(self, pairs, delta):
        rho = self._rho(pairs)
        value = math.nextafter(rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta)), math.inf)
        return Interval(0.0, value, value, False, "zCDP conversion (Bun & Steinke 2016)")

    def delta(self, pairs, epsilon):
        rho = self._rho(pairs)
        value = 1.0 if epsilon <= rho else min(math.nextafter(math.exp(-(epsilon - rho) ** 2 / (4.0 * rho)), 1.0), 1.0)
        return Interval(0.0, value, value, False, "zCDP conversion (Bun & Steinke 2016)")


@pytest.fixture
def registry(monkeypatch):
    """The registry as it is, restored after the test (a registration is otherwise for the whole process)."""
    monkeypatch.setattr(accountants, "_FACTORIES", dict(accountants._FACTORIES))
    monkeypatch.setattr(accountants, "_ACCOUNTANTS", dict(accountants._ACCOUNTANTS))
    register_accountant("zcdp", ZeroConcentratedAccountant)
    return accountants


@given(st.floats(0.5, 20.0), st.integers(1, 1000), st.sampled_from([1e-3, 1e-5, 1e-9]))
def test_a_registered_accountant_answers_through_the_ledger_and_is_never_below_exact(sigma, count, delta):
    # Hypothesis does not reset function-scoped fixtures between draws, so the registry is set up here.
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(accountants, "_FACTORIES", dict(accountants._FACTORIES))
        monkeypatch.setattr(accountants, "_ACCOUNTANTS", dict(accountants._ACCOUNTANTS))
        register_accountant("zcdp", ZeroConcentratedAccountant)
        ledger = PrivacyLedger().record(GaussianEvent(sigma), count=count)
        guarantee = ledger.epsilon(delta, method="zcdp")
        assert guarantee.method == "zcdp" and not guarantee.certified
        assert guarantee.epsilon >= ledger.epsilon(delta, method="exact").epsilon
        at_epsilon = ledger.delta(guarantee.epsilon, method="zcdp")
        assert at_epsilon.method == "zcdp" and at_epsilon.delta >= ledger.delta(guarantee.epsilon).delta
    assert "zcdp" not in accountant_names()


def test_its_supports_refuses_what_its_queries_refuse_and_auto_names_it(registry):
    ledger = PrivacyLedger().record(LaplaceEvent(1.0))
    assert not get_accountant("zcdp").supports(ledger._pairs())
    with pytest.raises(ValueError, match="zcdp' cannot account LaplaceEvent"):
        ledger.epsilon(1e-5, method="zcdp")
    # 'auto' keeps to exact and numeric; a ledger they refuse lists every registered method that can account it.
    assert PrivacyLedger().record(GaussianEvent(2.0)).epsilon(1e-5).method == "exact"
    nested = PrivacyLedger().record(PoissonSampledEvent(PoissonSampledEvent(GaussianEvent(1.0), 0.5), 0.5))
    with pytest.raises(ValueError, match="no method here can"):
        nested.epsilon(1e-5)


@pytest.mark.parametrize("name,factory,parameter", [
    ("", ZeroConcentratedAccountant, "name"),
    ("auto", ZeroConcentratedAccountant, "name"),
    ("exact", ZeroConcentratedAccountant, "name"),
    ("zcdp2", "not callable", "factory"),
])
def test_bad_registrations_name_the_parameter(registry, name, factory, parameter):
    with pytest.raises(ValueError, match=parameter):
        register_accountant(name, factory)


def test_an_accountant_without_the_queries_is_refused_on_use(registry):
    register_accountant("hollow", object)
    with pytest.raises(ValueError, match="'hollow' has no supports, epsilon, delta"):
        PrivacyLedger().record(GaussianEvent(1.0)).epsilon(1e-5, method="hollow")


def test_unknown_methods_are_refused_with_the_registered_names(registry):
    with pytest.raises(ValueError, match="method must be one of 'auto', 'exact', 'numeric', 'pld', 'prv', 'basic', 'zcdp'"):
        PrivacyLedger().record(GaussianEvent(1.0)).epsilon(1e-5, method="rdp")
