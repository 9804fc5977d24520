r"""Group privacy: the guarantee for datasets that differ in k records.

Dispatches on the event type:

* :class:`~dpmech.events.GaussianEvent`: exact. Datasets k steps apart have
  ‖f(D) − f(D')‖₂ <= kΔ by the triangle inequality, so the release is the
  Gaussian mechanism with sensitivity kΔ, and its tight δ(ε) follows
  (DP-Helmet Cor. 5.4).
* :class:`~dpmech.events.PureEpsilonEvent`: kε (Dwork & Roth 2014, Thm. 2.2).
  The randomized-response structure does not survive, so ``num_outcomes``
  is dropped.
* :class:`~dpmech.events.ApproximateDpEvent`: (kε, δ·Σ_{i<k} e^{iε}). Chaining
  P[M(D_0) ∈ S] <= e^ε P[M(D_1) ∈ S] + δ over k steps gives the geometric sum
  (Vadhan 2017, Lemma 2.2), which is at most the commonly quoted
  k·e^{(k−1)ε}·δ and equals it at k = 1. Where it reaches 1 there is no
  guarantee left: a :class:`~dpmech.events.NoGuaranteeEvent` says so, and a
  :class:`~dpmech.NoGuaranteeWarning` is raised, since a ledger that goes on
  composing would otherwise only show ε = ∞ at the end.
* :class:`~dpmech.events.LaplaceEvent`: exact, sensitivity kΔ (triangle inequality in ℓ₁).
* :class:`~dpmech.events.PoissonSampledEvent`,
  :class:`~dpmech.events.SampledWithoutReplacementEvent`,
  :class:`~dpmech.events.RandomAllocationEvent`: refused (a ValueError):
  a group of k records is sampled together with a probability that no
  implemented theorem turns into a dominating pair.
* :class:`~dpmech.events.SelfComposedEvent`: applied to the inner event.
* :class:`~dpmech.events.NoGuaranteeEvent` and
  :class:`~dpmech.events.NoPrivacyLossEvent`: unchanged (an output that does
  not depend on the data does not depend on k records either).

The group is k records under the event's own neighbouring relation, which the
result keeps.
"""

from __future__ import annotations

import math
import warnings

from . import validation as check
from .events import (
    ApproximateDpEvent,
    GaussianEvent,
    LaplaceEvent,
    NoGuaranteeEvent,
    NoPrivacyLossEvent,
    PoissonSampledEvent,
    PureEpsilonEvent,
    RandomAllocationEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
)
from .privacy_warnings import NoGuaranteeWarning


def group_privacy(event, group_size):
    """The event describing ``event`` for neighbours that differ in ``group_size`` records.

    Args:
        event: any dpmech event.
        group_size: k >= 1, an integer.

    Returns:
        A new event of the same kind (see the module docstring for each rule).
    """
    k = check.integer_scalar("group_size", group_size, 1)
    if k > 2**53:
        raise ValueError(f"group_size must be <= 2**53, a count of records a double multiplies exactly (got {k})")
    if k == 1:
        return event
    if isinstance(event, GaussianEvent):
        return GaussianEvent(event.sigma, k * event.sensitivity, event.neighbouring)
    if isinstance(event, LaplaceEvent):
        return LaplaceEvent(event.scale, k * event.sensitivity, event.neighbouring)
    if isinstance(event, (PoissonSampledEvent, SampledWithoutReplacementEvent, RandomAllocationEvent)):
        raise ValueError(
            f"group_size: no group-privacy theorem for {type(event).__name__} is implemented, so it cannot be "
            f"stated for groups of {k} records (nor enter a replace-one ledger from add-remove-one)"
        )
    if isinstance(event, PureEpsilonEvent):
        return PureEpsilonEvent(k * event.epsilon, None, event.neighbouring)
    if isinstance(event, ApproximateDpEvent):
        epsilon = event.epsilon
        if event.delta == 0.0:
            return ApproximateDpEvent(k * epsilon, 0.0, event.neighbouring, event.description)
        # log Σ_{i<k} e^{iε} = log(e^{kε} − 1) − log(e^ε − 1), in a form that cannot overflow;
        # the factor 1 + 1e-14 keeps float rounding on the conservative side.
        if epsilon < 1e-200:
            # Σ_{i<k} e^{iε} <= k·e^{(k−1)ε}; the quotient form below loses bits for subnormal ε.
            log_growth = math.log(k) + (k - 1) * epsilon
        else:
            log_growth = k * epsilon + math.log(-math.expm1(-k * epsilon)) - math.log(math.expm1(epsilon))
        log_delta = math.log(event.delta) + log_growth
        delta = math.exp(min(log_delta, 0.0)) * (1.0 + 1e-14)
        if delta >= 1.0:
            reason = f"group of {k} records: delta {event.delta:g} grows to {delta:g} >= 1"
            warnings.warn(f"group privacy: {reason}, no guarantee is left", NoGuaranteeWarning, stacklevel=2)
            return NoGuaranteeEvent(reason)
        return ApproximateDpEvent(k * epsilon, delta, event.neighbouring, event.description)
    if isinstance(event, SelfComposedEvent):
        return SelfComposedEvent(group_privacy(event.event, k), event.count)
    if isinstance(event, (NoGuaranteeEvent, NoPrivacyLossEvent)):
        return event
    raise ValueError(f"event must be a dpmech event (got {type(event).__name__})")
