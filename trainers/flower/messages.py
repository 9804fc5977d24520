"""A :class:`~trainers.federation.ClientMessage` as a Flower RecordDict and back.

The payload travels as an ArrayRecord (one Array per released array) and the events as a
ConfigRecord of JSON strings: the name of a flat dpmech event class and its fields. The server
rebuilds only the flat event classes of :mod:`dpmech.events` (no pickle: a client's upload is
untrusted input); the events' own validation rejects bad fields.
"""

from __future__ import annotations

import dataclasses
import json

from dpmech import events as dpmech_events

from ..federation import ClientMessage

EVENT_CLASSES = {cls.__name__: cls for cls in (dpmech_events.GaussianEvent, dpmech_events.PureEpsilonEvent,
                                               dpmech_events.ApproximateDpEvent, dpmech_events.NoGuaranteeEvent)}


def to_record_dict(message: ClientMessage):
    """The Flower ``RecordDict`` of ``message``: arrays "payload", config "release"."""
    from flwr.app import Array, ArrayRecord, ConfigRecord, RecordDict

    for event in message.events:
        if type(event).__name__ not in EVENT_CLASSES:
            raise ValueError(f"message events must be flat dpmech events {sorted(EVENT_CLASSES)} (got {type(event).__name__})")
    release = ConfigRecord({
        "client": message.client,
        "description": message.description,
        "events": [json.dumps({"class": type(event).__name__, "fields": dataclasses.asdict(event)})
                   for event in message.events],
    })
    payload = ArrayRecord({name: Array(array) for name, array in message.payload.items()})
    return RecordDict({"payload": payload, "release": release})


def from_record_dict(content) -> ClientMessage:
    """The ClientMessage a client sent, rebuilt on the server (ValueError for an unknown event)."""
    release = content.config_records["release"]
    events = []
    for text in release["events"]:
        described = json.loads(text)
        if described.get("class") not in EVENT_CLASSES:
            raise ValueError(f"event class must be one of {sorted(EVENT_CLASSES)} (got {described.get('class')!r})")
        events.append(EVENT_CLASSES[described["class"]](**described["fields"]))
    payload = {name: array.numpy() for name, array in content.array_records["payload"].items()}
    return ClientMessage(int(release["client"]), payload, tuple(events), str(release["description"]))
