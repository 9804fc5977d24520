"""dpmech.json_values.json_ready: strict JSON for every result, ∞ and NaN kept as strings."""

import json
import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from dpmech.json_values import json_ready

leaves = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-(2**53), 2**53) | st.text(max_size=5) | st.none()
values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=3).map(tuple) | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=12)


def _same(original, converted):
    if isinstance(original, dict):
        return set(converted) == set(original) and all(_same(original[key], converted[key]) for key in original)
    if isinstance(original, (list, tuple)):
        return len(original) == len(converted) and all(_same(a, b) for a, b in zip(original, converted))
    if isinstance(original, float) and not math.isfinite(original):
        return converted == str(original)
    return converted == original


@given(values)
def test_every_value_becomes_strict_json_and_loses_nothing(value):
    converted = json_ready(value)
    # allow_nan=False: the standard forbids Infinity and NaN, which json.dumps writes by default.
    assert json.loads(json.dumps(converted, allow_nan=False)) == converted
    assert _same(value, converted)


def test_numpy_scalars_become_python_numbers():
    converted = json_ready({"epsilon": np.float64(np.inf), "count": np.int64(3), "delta": np.float32(0.5)})
    assert converted == {"epsilon": "inf", "count": 3, "delta": 0.5}
    assert type(converted["count"]) is int
