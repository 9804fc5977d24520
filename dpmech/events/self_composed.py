"""``count`` adaptive repetitions of one event."""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterable
from typing import Any

from .. import validation as check
from .base import PrivacyEvent, flattened_parts


@dataclass(frozen=True)
class SelfComposedEvent(PrivacyEvent):
    """``count`` independent repetitions of ``event`` (adaptive composition)."""

    event: PrivacyEvent
    count: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "count", check.integer_scalar("count", self.count, 1))
        if not isinstance(self.event, PrivacyEvent):
            raise ValueError(f"event must be a dpmech event, a dpmech.events.PrivacyEvent (got {self.event!r})")

    def describe(self) -> str:
        return f"{type(self).__name__}({self.event.describe()})"

    def flattened(self) -> list[tuple[PrivacyEvent, int]]:
        return [(event, count * self.count) for event, count in flattened_parts(self.event)]

    @property
    def parts_are_tight(self) -> bool:
        return self.event.parts_are_tight

    def group_form(self, group_size: int) -> "SelfComposedEvent":
        return SelfComposedEvent(self.event.group_form(group_size), self.count)

    def dp_accounting_event(self) -> Any:
        """``SelfComposedDpEvent``; randomized response written out one event each (dp_accounting 0.6.0's
        ``PLDAccountant`` ignores the count of a self-composed ``RandomizedResponseDpEvent``)."""
        from dp_accounting import dp_event

        inner = self.event.dp_accounting_event()
        if isinstance(inner, dp_event.RandomizedResponseDpEvent):
            return dp_event.ComposedDpEvent([inner] * self.count)
        return dp_event.SelfComposedDpEvent(inner, self.count)


def flatten(events: Iterable[PrivacyEvent]) -> list[tuple[PrivacyEvent, int]]:
    """(base event, count) pairs with nested self-compositions multiplied out, every event's parts
    (:meth:`~dpmech.events.base.PrivacyEvent.flattened`) one after another."""
    return [part for event in events for part in flattened_parts(event)]
