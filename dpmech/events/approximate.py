"""A release known only to be (ε, δ)-DP.

Dominating pair (Kairouz, Oh & Viswanath 2015, Thm. 2.1; dp_accounting's
``from_privacy_parameters``): the four-point pair
P = (δ, (1−δ)e^ε/(1+e^ε), (1−δ)/(1+e^ε), 0) and Q = P reversed. Under P the
privacy loss is +∞ with probability δ, +ε with probability (1−δ)e^ε/(1+e^ε)
and −ε with probability (1−δ)/(1+e^ε). The pair is symmetric. Its tight lower
bound is 0: the mechanism may reveal nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .. import validation as check
from .relations import check_relation


@dataclass(frozen=True)
class ApproximateDpEvent:
    """A release known only to be (ε, δ)-DP; accounted through its four-point dominating pair."""

    epsilon: float
    delta: float
    neighbouring: Optional[str] = None
    description: str = ""

    def __post_init__(self):
        object.__setattr__(self, "epsilon", check.single("epsilon", check.non_negative("epsilon", self.epsilon)))
        object.__setattr__(
            self,
            "delta",
            check.single("delta", check.in_interval("delta", self.delta, 0.0, 1.0, low_open=False, high_open=True)),
        )
        check_relation(self.neighbouring)
