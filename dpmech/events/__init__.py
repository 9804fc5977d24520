"""Immutable records of privacy-relevant releases, in the style of dp_accounting's ``DpEvent``.

An event says what was released, not what it costs: accountants in
:mod:`dpmech.accountants` turn a sequence of events into an (ε, δ) statement.
One module per event type states its dominating pair, which every accountant
works from. Each event may name the neighbouring relation its parameters were
derived under (see :mod:`.relations`); ``None`` means "the ledger's relation".
"""

from typing import Union

from .approximate import ApproximateDpEvent
from .gaussian import GaussianEvent
from .laplace import LaplaceEvent
from .no_guarantee import NoGuaranteeEvent
from .no_privacy_loss import NoPrivacyLossEvent
from .poisson_sampled import PoissonSampledEvent
from .pure_epsilon import PureEpsilonEvent
from .random_allocation import RandomAllocationEvent
from .sampled_without_replacement import SampledWithoutReplacementEvent
from .relations import ADD_REMOVE_ONE, NEIGHBOURING_RELATIONS, REPLACE_ONE, check_relation
from .self_composed import SelfComposedEvent, flatten

# The old private name, still imported by dpmech.output_perturbation.
_check_relation = check_relation

Event = Union[GaussianEvent, LaplaceEvent, PureEpsilonEvent, ApproximateDpEvent, NoPrivacyLossEvent,
              NoGuaranteeEvent, PoissonSampledEvent, SampledWithoutReplacementEvent, SelfComposedEvent, RandomAllocationEvent]
EVENT_TYPES = (GaussianEvent, LaplaceEvent, PureEpsilonEvent, ApproximateDpEvent, NoPrivacyLossEvent,
               NoGuaranteeEvent, PoissonSampledEvent, SampledWithoutReplacementEvent, SelfComposedEvent, RandomAllocationEvent)

__all__ = [
    "ADD_REMOVE_ONE",
    "EVENT_TYPES",
    "NEIGHBOURING_RELATIONS",
    "REPLACE_ONE",
    "ApproximateDpEvent",
    "Event",
    "GaussianEvent",
    "LaplaceEvent",
    "NoGuaranteeEvent",
    "NoPrivacyLossEvent",
    "PoissonSampledEvent",
    "PureEpsilonEvent",
    "RandomAllocationEvent",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "check_relation",
    "flatten",
]
