"""The one-run audit's cuts are order statistics of the pooled scores, found without merging the sides."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from audits.one_run import _pooled_sorted_at

SIDE = st.lists(st.one_of(st.integers(-3, 3).map(float), st.floats(-1e300, 1e300)), min_size=1, max_size=40)


@given(SIDE, SIDE, st.data())
def test_pooled_order_statistics_equal_the_sorted_concatenation(in_scores, out_scores, data):
    # Ties within and across the sides, one score per side, extreme magnitudes.
    pooled = np.sort(np.r_[in_scores, out_scores])
    positions = np.array(data.draw(st.lists(st.integers(0, pooled.size - 1), min_size=1, max_size=12)))
    padded_in, padded_out = (np.r_[-np.inf, np.sort(side), np.inf] for side in (in_scores, out_scores))
    found = _pooled_sorted_at(padded_in, padded_out, positions)
    np.testing.assert_array_equal(found, pooled[positions])
