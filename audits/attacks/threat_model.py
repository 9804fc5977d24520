"""The threat model an empirical ε is stated under: every report carries one next to its ε."""

from __future__ import annotations

import dataclasses

WHITE_BOX = "white-box"
BLACK_BOX = "black-box"


@dataclasses.dataclass(frozen=True)
class ThreatModel:
    """What the auditor sees and controls.

    Attributes:
        access: "white-box" (the released parameters) or "black-box" (only
            released outputs such as labels).
        canary: the canary, in words.
        runs: independent runs of the mechanism behind the scores.
        trials_per_side: releases per side (IN and OUT) for two-sample audits, else None.
        canaries: randomised canaries in a one-run audit, else None.
    """

    access: str
    canary: str
    runs: int
    trials_per_side: int | None = None
    canaries: int | None = None

    def __post_init__(self):
        if self.access not in (WHITE_BOX, BLACK_BOX):
            raise ValueError(f"access must be {WHITE_BOX!r} or {BLACK_BOX!r} (got {self.access!r})")

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)
