"""``count`` adaptive repetitions of one event."""

from __future__ import annotations

from dataclasses import dataclass

from .. import validation as check


@dataclass(frozen=True)
class SelfComposedEvent:
    """``count`` independent repetitions of ``event`` (adaptive composition)."""

    event: object
    count: int

    def __post_init__(self):
        from . import EVENT_TYPES

        object.__setattr__(self, "count", check.integer_scalar("count", self.count, 1))
        if not isinstance(self.event, EVENT_TYPES):
            raise ValueError(f"event must be one of {', '.join(t.__name__ for t in EVENT_TYPES)} (got {self.event!r})")


def flatten(events) -> list:
    """(base event, count) pairs with nested self-compositions multiplied out."""
    pairs = []
    for event in events:
        count = 1
        while isinstance(event, SelfComposedEvent):
            count *= event.count
            event = event.event
        pairs.append((event, count))
    return pairs
