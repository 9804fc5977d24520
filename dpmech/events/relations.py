"""Neighbouring relations an event may be stated under.

``"replace-one"`` (bounded DP: D' is D with one record replaced) and
``"add-remove-one"`` (unbounded DP: D' is D with one record added or removed).
A replace-one pair is two add/remove steps, so an add/remove event is valid
under replace-one after group privacy with k = 2 (see
:mod:`dpmech.group_privacy`); the converse does not hold.
"""

from __future__ import annotations

from .. import validation as check

REPLACE_ONE = "replace-one"
ADD_REMOVE_ONE = "add-remove-one"
NEIGHBOURING_RELATIONS = (REPLACE_ONE, ADD_REMOVE_ONE)


def check_relation(value: object) -> None:
    """Refuse anything but ``None`` (the ledger's relation) or one of :data:`NEIGHBOURING_RELATIONS`."""
    if value is not None:
        check.choice("neighbouring", value, NEIGHBOURING_RELATIONS)
