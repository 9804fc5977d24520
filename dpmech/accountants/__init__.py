"""Accountants: each turns (event, count) pairs into an interval for ε(δ) or δ(ε).

One small module per method, in the style of prv_accountant:

* :mod:`~dpmech.accountants.exact`: Gaussians only, composed exactly through μ-GDP.
* :mod:`~dpmech.accountants.numeric`: every event, sampled ones included, through dpmech's
  own privacy-loss-distribution engine (:mod:`dpmech.pld`), with a certified interval.
* :mod:`~dpmech.accountants.pld`: dp_accounting's privacy loss distributions,
  pessimistic for the bound and optimistic for the lower end.
* :mod:`~dpmech.accountants.prv`: prv_accountant's (lower, estimate, upper).
* :mod:`~dpmech.accountants.basic`: sums of per-release ε and δ.

Every function returns an :class:`Interval` ``(lower, estimate, upper)``; the
upper end never understates the privacy loss. The ledger
(:class:`dpmech.PrivacyLedger`) chooses among them.
"""

from typing import NamedTuple


class Interval(NamedTuple):
    """(lower, estimate, upper) for a solved-for ε or δ.

    ``upper`` is always a proven bound: it never understates ε or δ.
    ``certified`` says the lower end is proven too, so the interval contains
    the exact value.
    """

    lower: float
    estimate: float
    upper: float
    certified: bool
    note: str = ""
