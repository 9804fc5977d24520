"""A :class:`~dpmech.ledger.PrivacyLedger` as JSON text, and back, exactly.

The text holds the ledger's neighbouring relation and its entries in order, each an event, a
count and a label::

    {"format": "dpmech.PrivacyLedger", "version": 1, "neighbouring": "add-remove-one",
     "entries": [{"event": {"type": "GaussianEvent",
                            "fields": {"sigma": 4.0, "sensitivity": 1.0, "neighbouring": null}},
                  "count": 10, "label": "class head"}]}

An event is written as its class name and its dataclass fields, generically: a field holding an
event (the inner event of a Poisson-sampled, self-composed, ... event) nests the same way, so an
event type that :data:`dpmech.events.EVENT_TYPES` lists needs no edit here, and one defined outside
dpmech needs one call of :func:`register_event`. A finite float is a
JSON number in Python's shortest round-trip form (``repr``), which reads back as the same double;
±∞ and NaN, which JSON has no numbers for, are ``{"float": "inf"}`` and the like, with the
double's ``float.hex``. Reading refuses, with a ValueError naming the field, an unknown format or
version, an event type not in ``EVENT_TYPES``, a missing or unknown field, a value of the wrong
JSON type, a duplicated key and JSON's non-standard ``NaN``/``Infinity`` literals; each event is
rebuilt through its own constructor, so it validates its parameters as when first recorded, and
each entry through :meth:`~dpmech.ledger.PrivacyLedger.record`, which refuses an event that
cannot enter the ledger's relation. ``from_json(to_json(ledger))`` holds the same events (equal
as dataclasses), labels and relation, so every accountant gives the same guarantee for both.
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import os
import typing
from typing import Any, Callable, Optional, Protocol, TypeVar, Union

FORMAT = "dpmech.PrivacyLedger"
VERSION = 1

# What a field's annotation admits, for the annotations events use; any other annotation (``object``, an
# event base class) holds a nested event.
_SCALAR_TYPES: dict[Any, tuple[type, ...]] = {float: (int, float), int: (int,), str: (str,), bool: (bool,)}


class Ledger(Protocol):
    """What the codec reads from and writes to: :class:`~dpmech.ledger.PrivacyLedger`'s public face (the codec
    does not import the ledger module, which imports it)."""

    neighbouring: str

    @property
    def events(self) -> tuple[Any, ...]: ...

    @property
    def labels(self) -> tuple[Optional[str], ...]: ...

    def record(self, event: Any, count: int = 1, label: Optional[str] = None) -> Any: ...


LedgerType = TypeVar("LedgerType", bound=Ledger)


# Event types added by register_event, beside dpmech's own (dpmech.events.EVENT_TYPES).
_REGISTERED: dict[str, type] = {}


def event_types() -> dict[str, type]:
    """Class name -> event class: every type in :data:`dpmech.events.EVENT_TYPES` and every one registered."""
    from .events import EVENT_TYPES

    registry = {event_type.__name__: event_type for event_type in EVENT_TYPES}
    if len(registry) != len(EVENT_TYPES):
        raise ValueError("EVENT_TYPES: two event types share a class name, so their JSON form would be ambiguous")
    return {**registry, **_REGISTERED}


def register_event(event_type: type) -> type:
    """Let ledgers holding events of ``event_type`` (a dataclass defined outside dpmech) be saved and loaded.

    The type is written under its class name, which must not name another registered type; usable as a class
    decorator. Its fields are written as dpmech's events' are: numbers, strings, None, booleans and nested events.
    """
    if not (isinstance(event_type, type) and dataclasses.is_dataclass(event_type)):
        raise ValueError(f"event_type must be a dataclass (got {event_type!r})")
    holder = event_types().get(event_type.__name__)
    if holder is not None and holder is not event_type:
        raise ValueError(f"event_type: the name {event_type.__name__} is taken by {holder.__module__}.{holder.__qualname__}")
    _REGISTERED[event_type.__name__] = event_type
    return event_type


def _init_fields(event_type: type) -> list[dataclasses.Field[Any]]:
    return [field for field in dataclasses.fields(event_type) if field.init]


def _encode(value: object, where: str) -> object:
    """``value`` (a field of an event) in JSON terms; ValueError naming ``where`` for a value JSON cannot hold."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        return value if math.isfinite(value) else {"float": value.hex()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return encode_event(value, where)
    raise ValueError(f"{where}: a {type(value).__name__} has no JSON form here (got {value!r})")


def encode_event(event: object, where: str = "event") -> dict[str, object]:
    """``{"type": class name, "fields": {name: value}}`` for a registered event; ValueError naming ``where`` otherwise."""
    name = type(event).__name__
    if event_types().get(name) is not type(event):
        raise ValueError(f"{where}: {name} is not a registered event type ({', '.join(event_types())}); "
                         f"see dpmech.ledger_json.register_event")
    fields = {field.name: _encode(getattr(event, field.name), f"{where}.{field.name}")
              for field in _init_fields(type(event))}
    return {"type": name, "fields": fields}


def _members(value: object, keys: tuple[str, ...], where: str) -> dict[str, Any]:
    """``value`` as a JSON object with exactly ``keys``; ValueError naming ``where`` or the key otherwise."""
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be a JSON object (got {type(value).__name__})")
    missing = [key for key in keys if key not in value]
    unknown = [key for key in value if key not in keys]
    if missing or unknown:
        raise ValueError(f"{where}: missing {missing or 'nothing'}, unknown {unknown or 'nothing'} "
                         f"(expected exactly {list(keys)})")
    return value


def _admitted(annotation: Any) -> tuple[type, ...] | None:
    """The Python types a field annotated ``annotation`` takes from JSON, or None when it holds an event."""
    if annotation in _SCALAR_TYPES:
        return _SCALAR_TYPES[annotation]
    if typing.get_origin(annotation) is Union:
        admitted: tuple[type, ...] = ()
        for member in typing.get_args(annotation):
            inner = (type(None),) if member is type(None) else _admitted(member)
            if inner is None:
                return None
            admitted += inner
        return admitted
    return None


def _decode(value: object, annotation: Any, where: str) -> object:
    """A field's value from its JSON form, of the type its annotation names; ValueError naming ``where``."""
    if isinstance(value, dict) and set(value) == {"float"}:
        text = value["float"]
        try:
            number = float.fromhex(text) if isinstance(text, str) else None
        except ValueError:
            number = None
        if number is None or math.isfinite(number):
            raise ValueError(f"{where}: {{\"float\": ...}} holds the hex form of inf, -inf or nan (got {text!r})")
        value = number
    admitted = _admitted(annotation)
    if admitted is None:
        if value is None:
            return None
        return decode_event(value, where)
    # bool is an int in Python; a JSON true is no number.
    if not isinstance(value, admitted) or (isinstance(value, bool) and bool not in admitted):
        names = ", ".join("null" if kind is type(None) else kind.__name__ for kind in admitted)
        raise ValueError(f"{where} must be {names} (got {json.dumps(value)})")
    return value


def decode_event(value: object, where: str = "event") -> object:
    """The event written by :func:`encode_event`, rebuilt through its constructor; ValueError naming the field."""
    members = _members(value, ("type", "fields"), where)
    name = members["type"]
    registry = event_types()
    if not isinstance(name, str) or name not in registry:
        raise ValueError(f"{where}.type must be a registered event type ({', '.join(registry)}) (got {name!r})")
    event_type = registry[name]
    fields = _init_fields(event_type)
    given = _members(members["fields"], tuple(field.name for field in fields), f"{where}.fields")
    hints = typing.get_type_hints(event_type)
    arguments = {field.name: _decode(given[field.name], hints[field.name], f"{where}.fields.{field.name}")
                 for field in fields}
    try:
        return event_type(**arguments)
    except ValueError as error:
        raise ValueError(f"{where} ({name}): {error}") from None


def ledger_to_json(ledger: Ledger) -> str:
    """The ledger as JSON text (see the module docstring); ValueError for an event with no JSON form."""
    from .events import SelfComposedEvent

    entries = []
    for index, (event, label) in enumerate(zip(ledger.events, ledger.labels)):
        # record(event, count) stores SelfComposedEvent(event, count) for count >= 2: written back as that count.
        written, count = event, 1
        if isinstance(event, SelfComposedEvent) and event.count >= 2:
            written, count = event.event, event.count
        entries.append({"event": encode_event(written, f"entries[{index}].event"), "count": count, "label": label})
    document = {"format": FORMAT, "version": VERSION, "neighbouring": ledger.neighbouring, "entries": entries}
    return json.dumps(document, ensure_ascii=False, allow_nan=False, indent=1)


def _refuse_constant(literal: str) -> None:
    raise ValueError(f"JSON text: {literal} is not JSON (write a non-finite float as {{\"float\": \"inf\"}})")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    repeated = sorted({key for key in keys if keys.count(key) > 1})
    if repeated:
        raise ValueError(f"JSON text: the key {repeated[0]!r} appears twice in one object")
    return dict(pairs)


def ledger_from_json(text: str, ledger_type: Callable[[str], LedgerType]) -> LedgerType:
    """The ledger written by :func:`ledger_to_json`, as ``ledger_type(neighbouring)`` with each entry recorded;
    ValueError naming the field for anything else."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str of JSON (got {type(text).__name__})")
    try:
        document = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        raise ValueError(f"text is not JSON: {error}") from None
    members = _members(document, ("format", "version", "neighbouring", "entries"), "ledger")
    if members["format"] != FORMAT:
        raise ValueError(f"format must be {FORMAT!r} (got {members['format']!r})")
    if members["version"] != VERSION or isinstance(members["version"], bool):
        raise ValueError(f"version must be {VERSION}, the only version this dpmech reads (got {members['version']!r})")
    if not isinstance(members["neighbouring"], str):
        raise ValueError(f"neighbouring must be a string (got {json.dumps(members['neighbouring'])})")
    ledger = ledger_type(members["neighbouring"])
    if not isinstance(members["entries"], list):
        raise ValueError(f"entries must be a JSON array (got {type(members['entries']).__name__})")
    for index, entry in enumerate(members["entries"]):
        where = f"entries[{index}]"
        entry = _members(entry, ("event", "count", "label"), where)
        count, label = entry["count"], entry["label"]
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"{where}.count must be an integer >= 1 (got {json.dumps(count)})")
        if label is not None and not isinstance(label, str):
            raise ValueError(f"{where}.label must be a string or null (got {json.dumps(label)})")
        event = decode_event(entry["event"], f"{where}.event")
        try:
            ledger.record(event, count=count, label=label)
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
    return ledger


def save_ledger(ledger: Ledger, path: Union[str, os.PathLike[str]]) -> None:
    """Write :func:`ledger_to_json` of the ledger to ``path`` (UTF-8), replacing the file."""
    text = ledger_to_json(ledger)
    with open(path, "w", encoding="utf-8") as file:
        file.write(text + "\n")


def load_ledger(path: Union[str, os.PathLike[str]], ledger_type: Callable[[str], LedgerType]) -> LedgerType:
    """The ledger saved at ``path`` by :func:`save_ledger` (see :func:`ledger_from_json`)."""
    with open(path, encoding="utf-8") as file:
        return ledger_from_json(file.read(), ledger_type)
