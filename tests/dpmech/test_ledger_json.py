"""A PrivacyLedger saved as JSON and read back: the same relation, events, counts and labels, to the bit, and so
the same certified guarantee; malformed text and unknown events refused with a ValueError naming the field."""

import dataclasses
import json
import math
from functools import partial
from typing import Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpmech import ledger_json
from dpmech.events import (
    ADD_REMOVE_ONE,
    EVENT_TYPES,
    REPLACE_ONE,
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
from dpmech.events.base import PrivacyEvent
from dpmech.ledger import PrivacyLedger
from tests.profiles import examples

relations = st.sampled_from([None, ADD_REMOVE_ONE, REPLACE_ONE])
# Every positive double, subnormals and the largest included: the text must carry each one exactly.
positives = st.floats(min_value=0.0, exclude_min=True, allow_infinity=False)
texts = st.text(max_size=12)

gaussians = st.builds(GaussianEvent, positives, positives, relations)
base_events = st.one_of(
    gaussians,
    st.builds(LaplaceEvent, positives, positives, relations),
    st.builds(PureEpsilonEvent, positives, st.one_of(st.none(), st.integers(2, 10**6)), relations),
    st.builds(ApproximateDpEvent, st.floats(0.0, 100.0), st.floats(0.0, 1.0, exclude_max=True), relations, texts),
    st.builds(NoPrivacyLossEvent, texts),
    st.builds(NoGuaranteeEvent, texts),
    st.builds(RandomAllocationEvent, st.builds(GaussianEvent, positives, positives, st.sampled_from([None, ADD_REMOVE_ONE])),
              st.integers(1, 10**6)),
)


def _made(event_class, *arguments):
    """``event_class(*arguments)``, or None where the event refuses them (a sampled event's inner event stated
    under the other relation)."""
    try:
        return event_class(*arguments)
    except ValueError:
        return None


def _sampled(inner):
    return st.one_of(
        st.builds(partial(_made, PoissonSampledEvent), inner, st.floats(0.0, 1.0, exclude_min=True)),
        st.integers(1, 1000).flatmap(lambda size: st.builds(partial(_made, SampledWithoutReplacementEvent), inner,
                                                           st.just(size), st.integers(size, 10**6))),
        st.builds(SelfComposedEvent, inner, st.integers(1, 1000)),
    ).filter(lambda event: event is not None)


events = st.recursive(base_events, _sampled, max_leaves=4)


@st.composite
def ledgers(draw, event_strategy=events):
    """A ledger of drawn entries, each recorded with a count and a label (entries the relation refuses are left
    out), then, sometimes, its group-privacy form."""
    ledger = PrivacyLedger(draw(st.sampled_from([ADD_REMOVE_ONE, REPLACE_ONE])))
    for event, count, label in draw(st.lists(st.tuples(event_strategy, st.integers(1, 10**6), st.one_of(st.none(), texts)),
                                             max_size=5)):
        try:
            ledger.record(event, count=count, label=label)
        except ValueError:
            pass
    group_size = draw(st.integers(1, 3))
    if group_size > 1:
        try:
            ledger = ledger.group_privacy(group_size)
        except ValueError:
            pass
    return ledger


def _same(loaded, ledger):
    assert loaded.neighbouring == ledger.neighbouring
    assert loaded.events == ledger.events and loaded.labels == ledger.labels
    # Equal dataclasses could still differ in the sign of a zero or a float held as an int; repr tells them apart.
    assert repr(loaded.events) == repr(ledger.events)


@given(ledgers())
def test_a_ledger_reads_back_exactly(ledger):
    text = ledger.to_json()
    loaded = PrivacyLedger.from_json(text)
    _same(loaded, ledger)
    assert loaded.to_json() == text


exact_events = st.one_of(
    st.builds(GaussianEvent, st.floats(0.5, 20.0), st.floats(0.1, 2.0), relations),
    st.builds(PureEpsilonEvent, st.floats(0.01, 3.0), st.one_of(st.none(), st.integers(2, 10)), relations),
    st.builds(ApproximateDpEvent, st.floats(0.0, 2.0), st.floats(0.0, 1e-4), relations),
    st.builds(NoPrivacyLossEvent, texts),
)


@given(ledgers(exact_events), st.floats(-12.0, -1.0))
@examples(0.3)
def test_the_loaded_ledger_certifies_the_same_epsilon_interval(ledger, log10_delta):
    delta = 10.0**log10_delta
    loaded = PrivacyLedger.from_json(ledger.to_json())
    assert loaded.epsilon(delta) == ledger.epsilon(delta)
    assert loaded.delta(1.0) == ledger.delta(1.0)


def test_a_dp_sgd_ledger_saved_and_loaded_has_the_same_numeric_interval(tmp_path):
    ledger = PrivacyLedger()
    ledger.record(PoissonSampledEvent(GaussianEvent(1.1), 0.01), count=1000, label="DP-SGD steps")
    ledger.record(GaussianEvent(8.0, 2.0), label="class head")
    path = tmp_path / "ledger.json"
    ledger.save(path)
    loaded = PrivacyLedger.load(path)
    _same(loaded, ledger)
    expected = ledger.epsilon(1e-5)
    assert expected.method == "numeric" and expected.certified
    assert loaded.epsilon(1e-5) == expected


GAUSSIAN = {"type": "GaussianEvent", "fields": {"sigma": 4.0, "sensitivity": 1.0, "neighbouring": None}}


def _document(event=GAUSSIAN, count=1, label=None, **changes):
    document = {"format": "dpmech.PrivacyLedger", "version": 1, "neighbouring": ADD_REMOVE_ONE,
                "entries": [{"event": event, "count": count, "label": label}]}
    document.update(changes)
    return json.dumps(document)


def _gaussian(**fields):
    return {"type": "GaussianEvent", "fields": {**GAUSSIAN["fields"], **fields}}


MALFORMED = [
    ("text is not JSON", "{"),
    ("NaN is not JSON", _document().replace("4.0", "NaN")),
    ("'count' appears twice", _document().replace('"count": 1', '"count": 1, "count": 2')),
    ("text must be a str", b"{}"),
    ("ledger must be a JSON object", "[]"),
    ("format must be 'dpmech.PrivacyLedger'", _document(format="opacus")),
    ("version must be 1", _document(version=2)),
    ("version must be 1", _document(version=True)),
    (r"ledger: missing \['entries'\]", json.dumps({"format": "dpmech.PrivacyLedger", "version": 1,
                                                 "neighbouring": ADD_REMOVE_ONE})),
    ("neighbouring must be one of", _document(neighbouring="replace-two")),
    ("neighbouring must be a string", _document(neighbouring=None)),
    ("entries must be a JSON array", _document(entries={})),
    (r"entries\[0\] must be a JSON object", _document(entries=[1])),
    (r"entries\[0\]: missing \['label'\]", _document().replace(', "label": null', "")),
    (r"entries\[0\].count must be an integer >= 1", _document(count=0)),
    (r"entries\[0\].count must be an integer >= 1", _document(count=True)),
    (r"entries\[0\].count must be an integer >= 1", _document(count=2.0)),
    (r"entries\[0\].label must be a string or null", _document(label=5)),
    (r"entries\[0\].event.type must be a registered event type", _document({"type": "TreeEvent", "fields": {}})),
    (r"entries\[0\].event.fields: missing \['neighbouring'\]",
     _document({"type": "GaussianEvent", "fields": {"sigma": 4.0, "sensitivity": 1.0}})),
    (r"entries\[0\].event.fields: missing nothing, unknown \['noise'\]", _document(_gaussian(noise=1.0))),
    (r"entries\[0\].event.fields.sigma must be int, float", _document(_gaussian(sigma="4.0"))),
    (r"entries\[0\].event.fields.sigma must be int, float", _document(_gaussian(sigma=True))),
    (r"entries\[0\].event.fields.sigma: \{\"float\": ...\} holds the hex form of inf", _document(_gaussian(sigma={"float": "0x1p+2"}))),
    (r"entries\[0\].event.fields.neighbouring must be str, null", _document(_gaussian(neighbouring=1))),
    (r"entries\[0\].event \(GaussianEvent\): sigma must be", _document(_gaussian(sigma=-4.0))),
    (r"entries\[0\].event.fields.event must be a JSON object",
     _document({"type": "SelfComposedEvent", "fields": {"event": 4.0, "count": 2}})),
    (r"entries\[0\]: neighbouring: an event stated under replace-one cannot enter", _document(_gaussian(neighbouring=REPLACE_ONE))),
]


@pytest.mark.parametrize("message, text", MALFORMED, ids=[f"{i}" for i in range(len(MALFORMED))])
def test_malformed_text_is_refused_naming_the_field(message, text):
    with pytest.raises(ValueError, match=message):
        PrivacyLedger.from_json(text)


@dataclasses.dataclass(frozen=True)
class _RenamedGaussian(GaussianEvent):
    """A Gaussian event of a type nobody registered."""


def test_an_unregistered_event_type_is_refused_when_saving():
    ledger = PrivacyLedger().record(GaussianEvent(1.0)).record(_RenamedGaussian(2.0), count=3)
    with pytest.raises(ValueError, match=r"entries\[1\].event: _RenamedGaussian is not a registered event type"):
        ledger.to_json()


@dataclasses.dataclass(frozen=True)
class _ClippedEvent(PrivacyEvent):
    """An event type defined outside dpmech: a nested event, a float that may be infinite, an optional integer."""

    event: object
    bound: float
    rounds: Optional[int] = None


def test_an_event_type_defined_outside_dpmech_round_trips_once_registered(monkeypatch):
    monkeypatch.setattr(ledger_json, "_REGISTERED", {})
    ledger = PrivacyLedger()
    ledger.record(_ClippedEvent(GaussianEvent(2.0), math.inf), label="unbounded")
    ledger.record(_ClippedEvent(NoPrivacyLossEvent(), -0.0, 7), count=2)
    with pytest.raises(ValueError, match=r"entries\[0\].event: _ClippedEvent is not a registered event type"):
        ledger.to_json()
    assert ledger_json.register_event(_ClippedEvent) is _ClippedEvent
    text = ledger.to_json()
    assert json.loads(text)["entries"][0]["event"]["fields"]["bound"] == {"float": "inf"}
    _same(PrivacyLedger.from_json(text), ledger)


def test_register_event_refuses_a_taken_name_and_a_non_dataclass(monkeypatch):
    monkeypatch.setattr(ledger_json, "_REGISTERED", {})
    taken = dataclasses.make_dataclass("GaussianEvent", [("sigma", float)], frozen=True)
    with pytest.raises(ValueError, match="event_type: the name GaussianEvent is taken by dpmech.events.gaussian.GaussianEvent"):
        ledger_json.register_event(taken)
    with pytest.raises(ValueError, match="event_type must be a dataclass"):
        ledger_json.register_event(int)
    assert ledger_json.event_types() == {event_type.__name__: event_type for event_type in EVENT_TYPES}
