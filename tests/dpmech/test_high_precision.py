"""dpmech.high_precision: the 50-digit references refuse what they cannot represent with a ValueError."""

import mpmath
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpmech import high_precision
from dpmech.events import GaussianEvent, PureEpsilonEvent


def test_event_atoms_refuses_an_event_without_finite_support():
    # A GaussianEvent has no ε attribute: it used to raise AttributeError before reaching this ValueError.
    with pytest.raises(ValueError, match="event must be a finite-support dpmech event"):
        high_precision.event_atoms(GaussianEvent(1.0, 1.0))


@given(epsilon=st.floats(0.01, 20.0), outcomes=st.integers(2, 50))
def test_pure_epsilon_atoms_are_a_law_with_no_loss_beyond_epsilon(epsilon, outcomes):
    atoms = high_precision.event_atoms(PureEpsilonEvent(epsilon, num_outcomes=outcomes))
    with mpmath.workdps(high_precision.DIGITS):
        assert abs(mpmath.fsum(atoms.values()) - 1) < mpmath.mpf(10) ** -45
        assert max(atoms) <= mpmath.mpf(epsilon)
    # K-ary randomized response is ε-DP exactly: δ(ε) of its dominating pair is 0.
    assert high_precision.ledger_delta([(PureEpsilonEvent(epsilon, num_outcomes=outcomes), 1)], epsilon) == 0
