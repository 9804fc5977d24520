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


def record_as_dict(record) -> dict:
    """An audit record's fields but the raw scores, as plain Python values (for JSON).

    Shared as ``as_dict`` by the records that carry ``result``, ``metrics`` and ``threat_model``.
    """
    out = {f.name: getattr(record, f.name) for f in dataclasses.fields(record) if f.name != "scores"}
    out["result"] = record.result.as_dict()
    out["metrics"] = dataclasses.asdict(record.metrics)
    out["threat_model"] = record.threat_model.as_dict()
    return out


def take_from_result(record, *names: str) -> None:
    """Set the frozen record's fields ``names`` (declared ``init=False``) to those of its ``result``.

    The bound and its labels (``eps_lb``, ``method``, ``valid_as``, ...) then have one source, the
    :class:`~audits.result.AuditResult`, and no audit restates them by hand.
    """
    for name in names:
        object.__setattr__(record, name, getattr(record.result, name))
