"""Pure ε-DP releases: K-ary randomized response, or any ε-DP mechanism.

Dominating pairs. K-ary randomized response keeps the true value with
probability p = e^ε/(e^ε+K−1) and otherwise answers one of the other K−1
values, each with probability q = 1/(e^ε+K−1). For neighbours x, x' its pair
is P = (p, q, q, …), Q = (q, p, q, …): under P the privacy loss is +ε with
probability p, −ε with probability q and 0 with probability (K−2)q. The pair
is symmetric. A generic ε-DP mechanism (``num_outcomes=None``) is dominated by
binary randomized response (K = 2), the worst ε-DP pair (Kairouz, Oh &
Viswanath 2015, Thm. 2.1); its tight lower bound is 0, since an ε-DP
mechanism may reveal nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from .. import validation as check
from .relations import check_relation


@dataclass(frozen=True)
class PureEpsilonEvent:
    """A pure ε-DP release.

    With ``num_outcomes = K`` it is K-ary randomized response (or a mechanism
    that K-ary randomized response dominates), accounted exactly through that
    pair; with ``None`` it is any ε-DP mechanism, accounted through binary
    randomized response (see the module docstring).
    """

    epsilon: float
    num_outcomes: Optional[int] = None
    neighbouring: Optional[str] = None

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check.single("epsilon", check.positive("epsilon", self.epsilon)))
        if self.num_outcomes is not None:
            object.__setattr__(self, "num_outcomes", check.integer_scalar("num_outcomes", self.num_outcomes, 2))
        check_relation(self.neighbouring)

    @property
    def keep_probability(self) -> float:
        """Probability e^ε/(e^ε+K−1) that K-ary randomized response keeps the true value."""
        outcomes = 2 if self.num_outcomes is None else self.num_outcomes
        return 1.0 / (1.0 + (outcomes - 1) * math.exp(-self.epsilon))
