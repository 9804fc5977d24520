"""A ledger query with one δ or one ε answers with one guarantee, whatever the number's container."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from dpmech import GaussianEvent, PrivacyLedger
from tests.profiles import examples


@examples(0.5)
@given(st.floats(0.5, 50.0), st.integers(1, 100), st.floats(1e-12, 0.5), st.floats(0.0, 20.0))
def test_a_zero_dimensional_array_is_one_query(sigma, count, delta, epsilon):
    # np.array(δ) has no dimensions: it used to reach PrivacyGuarantee as an array, which refused it.
    ledger = PrivacyLedger().record(GaussianEvent(sigma), count=count)
    assert ledger.epsilon(np.array(delta)) == ledger.epsilon(delta)
    assert ledger.delta(np.array(epsilon)) == ledger.delta(epsilon)
