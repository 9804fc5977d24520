"""Immutable records of privacy-relevant releases, in the style of dp_accounting's ``DpEvent``.

An event says what was released and, through the hooks of
:class:`~dpmech.events.base.PrivacyEvent`, what mathematics accounts for it:
one module per event type states its dominating pair, its fixed (basic) cost
and its group form, and the accountants of :mod:`dpmech.accountants` ask the
event for them. A new event type is its module, its line here and its test.
Each event may name the neighbouring relation its parameters were derived under (see :mod:`.relations`); ``None`` means "the ledger's relation".
"""

from typing import Union

from .approximate import ApproximateDpEvent
from .base import PrivacyEvent, UnboundedPrivacyLoss, UnsupportedEvent
from .discrete_gaussian import DiscreteGaussianEvent
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
              NoGuaranteeEvent, PoissonSampledEvent, SampledWithoutReplacementEvent, SelfComposedEvent, RandomAllocationEvent,
              DiscreteGaussianEvent]
EVENT_TYPES = (GaussianEvent, LaplaceEvent, PureEpsilonEvent, ApproximateDpEvent, NoPrivacyLossEvent,
               NoGuaranteeEvent, PoissonSampledEvent, SampledWithoutReplacementEvent, SelfComposedEvent, RandomAllocationEvent,
               DiscreteGaussianEvent)

__all__ = [
    "ADD_REMOVE_ONE",
    "EVENT_TYPES",
    "NEIGHBOURING_RELATIONS",
    "REPLACE_ONE",
    "ApproximateDpEvent",
    "DiscreteGaussianEvent",
    "Event",
    "GaussianEvent",
    "LaplaceEvent",
    "NoGuaranteeEvent",
    "NoPrivacyLossEvent",
    "PoissonSampledEvent",
    "PrivacyEvent",
    "PureEpsilonEvent",
    "RandomAllocationEvent",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "UnboundedPrivacyLoss",
    "UnsupportedEvent",
    "check_relation",
    "flatten",
]
