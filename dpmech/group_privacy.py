r"""Group privacy: the guarantee for datasets that differ in k records.

Each event states its own group form in its module
(:meth:`~dpmech.events.base.PrivacyEvent.group_form`); this function checks k and asks it:

* Gaussian and Laplace: exact, sensitivity kΔ (the triangle inequality in ℓ₂ or ℓ₁);
* pure ε: kε (Dwork & Roth 2014, Thm. 2.2), the randomized-response structure dropped;
* (ε, δ): (kε, δ·Σ_{i<k} e^{iε}) (Vadhan 2017, Lemma 2.2), or no guarantee, with a
  :class:`~dpmech.NoGuaranteeWarning`, where that δ reaches 1;
* sampled events and random allocation: refused (a ValueError naming ``group_size``): a group of
  k records is sampled together with a probability that no implemented theorem turns into a
  dominating pair;
* a self-composition: applied to the inner event;
* no guarantee, no privacy loss: unchanged (an output that does not depend on the data does not
  depend on k records either).

The group is k records under the event's own neighbouring relation, which the result keeps.
"""

from __future__ import annotations

from . import validation as check
from .events.base import PrivacyEvent


def group_privacy(event: PrivacyEvent, group_size: int) -> PrivacyEvent:
    """The event describing ``event`` for neighbours that differ in ``group_size`` records.

    Args:
        event: any dpmech event.
        group_size: k >= 1, an integer.

    Returns:
        A new event (see the module docstring for each rule); the event itself for k = 1.
    """
    k = check.integer_scalar("group_size", group_size, 1)
    if k > 2**53:
        raise ValueError(f"group_size must be <= 2**53, a count of records a double multiplies exactly (got {k})")
    if k == 1:
        return event
    if not isinstance(event, PrivacyEvent):
        raise ValueError(f"event must be a dpmech event (got {type(event).__name__})")
    return event.group_form(k)
