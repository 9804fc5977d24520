"""An event run on a Poisson sample: each record kept independently with probability q.

Relation: defined under add/remove-one, where amplification by Poisson
subsampling is proven (Li, Qardaji & Su 2012 for (ε, δ); Zhu, Dong & Wang
2022, "Optimal accounting of differential privacy via characteristic function", for the
dominating pair: P = (1−q)·B + q·A against B, and the
reverse direction, for the inner pair (A, B)). The subsampled pair is not
symmetric, so accountants must take both directions. Under replace-one the
amplification needs a different pair; this event refuses to be restated
there, and group privacy, for which no theorem is implemented, raises.

Basic cost: an inner (ε, δ) event gives (log(1 + q(e^ε − 1)), qδ).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .. import validation as check
from .relations import ADD_REMOVE_ONE, check_relation


@dataclass(frozen=True)
class PoissonSampledEvent:
    """``event`` applied to a Poisson sample with inclusion probability ``sampling_probability``."""

    event: object
    sampling_probability: float
    neighbouring: Optional[str] = ADD_REMOVE_ONE

    def __post_init__(self):
        from . import EVENT_TYPES

        if not isinstance(self.event, EVENT_TYPES):
            raise ValueError(f"event must be a dpmech event (got {type(self.event).__name__})")
        object.__setattr__(
            self,
            "sampling_probability",
            check.single("sampling_probability", check.in_interval("sampling_probability", self.sampling_probability, 0.0, 1.0,
                                    low_open=True, high_open=False)),
        )
        check_relation(self.neighbouring)
        if self.neighbouring != ADD_REMOVE_ONE:
            raise ValueError("neighbouring: a PoissonSampledEvent is defined under add-remove-one only")
