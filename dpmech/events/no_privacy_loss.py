"""A release that reveals nothing about the data (its output distribution is the same on every dataset).

Its privacy loss is 0 with probability 1 under every neighbouring relation, so
it adds nothing to any composition; RRTop-k with k = 1, which always outputs
the prior's top label, is one.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NoPrivacyLossEvent:
    """A release whose output does not depend on the data: (0, 0)-DP, exactly."""

    description: str = ""
