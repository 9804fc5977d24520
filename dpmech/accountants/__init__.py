"""Accountants: each turns (event, count) pairs into an interval for ε(δ) or δ(ε).

An accountant is generic: it asks each event for the mathematics it needs through the hooks of
:class:`dpmech.events.base.PrivacyEvent` and refuses, by name, an event that has none for it.
It is any object (a module will do) with

* ``supports(pairs) -> bool``: a dry run of the conversion its queries start with (same code
  path, nothing computed, nothing changed), as dp_accounting's ``supports``;
* ``epsilon(pairs, delta, **options) -> Interval`` and ``delta(pairs, epsilon, **options) -> Interval``;
* optionally ``log_delta_interval(pairs, epsilon, **options)``, the (lower, estimate, upper) of log δ(ε)
  (an :class:`Interval` or a plain triple, certified unless it says otherwise), which the ledger
  prefers where δ is below the smallest double.

Accountants are found by name in a registry (:func:`register_accountant`, :func:`get_accountant`), so
a third party may add one and use it through :class:`dpmech.PrivacyLedger` like the built-in ones:

* ``"exact"`` (:mod:`~dpmech.accountants.exact`): Gaussians and finite-support events, composed exactly;
* ``"numeric"`` (:mod:`~dpmech.accountants.numeric`): every event with a dominating pair, sampled ones
  included, through dpmech's own privacy-loss-distribution engine (:mod:`dpmech.pld`), certified;
* ``"pld"`` (:mod:`~dpmech.accountants.dp_accounting_pld`): dp_accounting's privacy loss distributions,
  pessimistic for the bound and optimistic for the lower end;
* ``"prv"`` (:mod:`~dpmech.accountants.prv`): prv_accountant's (lower, estimate, upper);
* ``"basic"`` (:mod:`~dpmech.accountants.basic`): sums of per-release ε and δ.

Every query returns an :class:`Interval` ``(lower, estimate, upper)``; the upper end never
understates the privacy loss. The built-in accountants are imported on first use: dp_accounting and
prv_accountant take about a second to import.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Callable, TypeVar

from .. import validation as check
from ..events.base import PrivacyEvent, UnsupportedEvent
from ..interval import Interval

# A ledger's (event, count) pairs, as every accountant takes them.
EventCounts = Sequence[tuple[PrivacyEvent, int]]
# Gaussian releases merged by μ-GDP: (μ, count) pairs.
GaussianCounts = list[tuple[float, int]]

_FACTORIES: dict[str, Callable[[], Any]] = {}
_ACCOUNTANTS: dict[str, Any] = {}
# "auto" is the ledger's choice among the registered accountants, never one of them.
_RESERVED = ("auto",)


def register_accountant(name: str, factory: Callable[[], Any]) -> None:
    """Register ``factory`` (called once, on first use) as the accountant ``name``.

    Args:
        name: a non-empty string, not "auto" and not already registered.
        factory: a callable with no arguments returning the accountant (see the module docstring).
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string (got {name!r})")
    if name in _RESERVED or name in _FACTORIES:
        raise ValueError(f"name must not be 'auto' or an accountant already registered (got {name!r})")
    if not callable(factory):
        raise ValueError(f"factory must be a callable returning an accountant (got {type(factory).__name__})")
    _FACTORIES[name] = factory


def accountant_names() -> tuple[str, ...]:
    """The registered accountants' names, in the order they were registered."""
    return tuple(_FACTORIES)


def get_accountant(name: str) -> Any:
    """The accountant registered as ``name``; a ValueError naming the registered ones otherwise."""
    name = check.choice("method", name, accountant_names())
    if name not in _ACCOUNTANTS:
        accountant = _FACTORIES[name]()
        missing = [attribute for attribute in ("supports", "epsilon", "delta") if not callable(
            getattr(accountant, attribute, None))]
        if missing:
            raise ValueError(f"method: the accountant registered as {name!r} has no {', '.join(missing)}")
        _ACCOUNTANTS[name] = accountant
    return _ACCOUNTANTS[name]


def known_events(pairs: Iterable[tuple[Any, int]], refused: set[str]) -> list[tuple[PrivacyEvent, int]]:
    """The (event, count) pairs whose event is a dpmech event (it answers the hooks); the class names of the
    others are added to ``refused``, for the accountant's refusal to name them."""
    known = []
    for event, count in pairs:
        if isinstance(event, PrivacyEvent):
            known.append((event, count))
        else:
            refused.add(type(event).__name__)
    return known


Answer = TypeVar("Answer")


def gaussians_and_answers(pairs: EventCounts, hook: Callable[[PrivacyEvent], Answer | None]
                          ) -> tuple[GaussianCounts, list[tuple[Answer, int]], set[str]]:
    """(Gaussian (μ, count) pairs, (answer, count) pairs, refused names): each event asked first for its μ-GDP μ
    (:meth:`~dpmech.events.base.PrivacyEvent.gaussian_mu`), else for ``hook(event)``, the accountant's own
    hook (None: no loss, left out); an event whose hook raises :class:`~dpmech.events.base.UnsupportedEvent`,
    or that is no dpmech event, is named in the refused set. Nothing is composed here, so an accountant's
    ``supports`` is this call, dry."""
    gaussians: GaussianCounts = []
    answers: list[tuple[Answer, int]] = []
    refused: set[str] = set()
    for event, count in known_events(pairs, refused):
        mu = event.gaussian_mu()
        if mu is not None:
            gaussians.append((mu, count))
            continue
        try:
            answer = hook(event)
        except UnsupportedEvent:
            refused.add(event.describe())
            continue
        if answer is not None:
            answers.append((answer, count))
    return gaussians, answers, refused


def _exact() -> Any:
    from . import exact

    return exact


def _numeric() -> Any:
    from . import numeric

    return numeric


def _dp_accounting_pld() -> Any:
    from . import dp_accounting_pld

    return dp_accounting_pld


def _prv() -> Any:
    from . import prv

    return prv


def _basic() -> Any:
    from . import basic

    return basic


for _name, _factory in (("exact", _exact), ("numeric", _numeric), ("pld", _dp_accounting_pld), ("prv", _prv),
                        ("basic", _basic)):
    register_accountant(_name, _factory)

__all__ = ["EventCounts", "Interval", "accountant_names", "get_accountant", "known_events", "register_accountant"]
