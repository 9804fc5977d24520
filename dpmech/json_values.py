"""Plain JSON values for results: the one conversion that the CLI, the trainers and the audits share.

JSON has no ∞ or NaN (``json.dumps`` writes the non-standard ``Infinity``), and a privacy result
often holds ε = ∞ ("no guarantee"), so non-finite floats become the strings ``"inf"``, ``"-inf"``
and ``"nan"``; they are never dropped or replaced by a number.
"""

from __future__ import annotations

import math
import sys


def json_ready(value: object) -> object:
    """Plain JSON values: tuples to lists, numpy scalars to Python, non-finite floats to strings."""
    if isinstance(value, dict):
        return {str(key): json_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_ready(item) for item in value]
    # A numpy scalar exists only once numpy is loaded; the CLI's numpy-free commands do not load it here.
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value
