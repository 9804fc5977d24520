"""The one interval type for a solved-for ε or δ (or log δ): (lower, estimate, upper), certified or not.

Every accountant of :mod:`dpmech.accountants` and the numeric engine :mod:`dpmech.pld` answer in it.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Interval(NamedTuple):
    """(lower, estimate, upper) for a solved-for ε or δ.

    ``upper`` is always a proven bound: it never understates ε or δ.
    ``certified`` says the lower end is proven too, so the interval contains
    the exact value. The ends are floats, or arrays of them where the engine
    answers many queries at once.
    """

    lower: Any
    estimate: Any
    upper: Any
    certified: bool
    note: str = ""


def certified_enclosure(lower: Any, upper: Any, note: str = "") -> Interval:
    """A proven enclosure lower <= truth <= upper whose estimate is its upper end (the value to report)."""
    return Interval(lower, upper, upper, True, note)
