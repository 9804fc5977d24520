"""Calibration of a :class:`~dpmech.PrivacyLedger` template against a target (ε, δ), never under-noised.

It sits above the ledger and the accountants: the template's ledger is turned into the numeric
engine's entries by the ``numeric`` accountant (:func:`dpmech.accountants.numeric.engine_ledger`), and
the engine's calibration search (:func:`dpmech.pld.calibrate`) finds the parameter; the engine
itself never imports the accountants or the ledger.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .accountants.numeric import engine_ledger
from .events.base import UnboundedPrivacyLoss
from .ledger import PrivacyLedger
from .pld.calibration import CalibratedParameter, calibrate


def calibrate_ledger(template: Callable[[float], PrivacyLedger], epsilon: float, delta: float, low: float, high: float,
                     *, more_private: str = "larger", guess: float | None = None, discretization: float | None = None,
                     relative_tolerance: float = 1e-3) -> CalibratedParameter:
    """The parameter of a ledger template whose certified upper δ(ε) is at most ``delta``: never under-noised.

    ``template`` maps the parameter (a noise σ or scale, or an RR ε with ``more_private='smaller'``) to a
    :class:`dpmech.PrivacyLedger`; its events are accounted by the ``numeric`` method's pairs
    (:mod:`dpmech.accountants.numeric`: sampled events included), so ``ledger.delta(epsilon,
    method="numeric", discretization=p.discretization)`` at the returned parameter p is at most ``delta``.
    The template must be monotone in the parameter (more noise never increases δ(ε); see
    :mod:`dpmech.pld.calibration`). Other arguments and the result as in :func:`dpmech.pld.calibrate`.
    """
    if not callable(template):
        raise ValueError("template must be a callable from the parameter to a PrivacyLedger")  # noqa: TRY004 - dpmech refuses bad input with ValueError

    def family(value: float) -> list[Any]:
        ledger = template(value)
        if not isinstance(ledger, PrivacyLedger):
            raise ValueError(f"template must return a PrivacyLedger (got {type(ledger).__name__})")  # noqa: TRY004 - dpmech refuses bad input with ValueError
        try:
            entries = engine_ledger(ledger._pairs())
        except UnboundedPrivacyLoss:
            raise ValueError(f"template at {value!r} has unbounded privacy loss; narrow [low, high]") from None
        if not entries:
            raise ValueError(f"template at {value!r} has no privacy loss: nothing to calibrate")
        return entries

    return calibrate(family, epsilon, delta, low, high, more_private=more_private, guess=guess,
                     discretization=discretization, relative_tolerance=relative_tolerance)
