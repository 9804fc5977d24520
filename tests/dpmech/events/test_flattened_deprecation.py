"""An event of another package whose ``flattened()`` still returns one (event, count) tuple, the form before
:meth:`~dpmech.events.base.PrivacyEvent.flattened` returned a list of parts, is read for one release as that one
part (:func:`~dpmech.events.base.flattened_parts`, the one place every reader takes the parts from), with a
DeprecationWarning charged to its override, and accounted to the same numbers as its list form."""

import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpmech import PrivacyLedger
from dpmech.events import ADD_REMOVE_ONE, REPLACE_ONE, GaussianEvent, LaplaceEvent, PoissonSampledEvent, SelfComposedEvent
from dpmech.events.base import PrivacyEvent, flattened_parts
from tests.profiles import examples

OVERRIDE_FILE = __file__


class _Repeated(PrivacyEvent):
    """A third party's event: ``count`` adaptive releases of ``event``, one part."""

    __slots__ = ("event", "count")

    def __init__(self, event: PrivacyEvent, count: int) -> None:
        self.event, self.count = event, count


class OldRepeated(_Repeated):
    def flattened(self):
        return (self.event, self.count)  # the old return: one tuple


class NewRepeated(_Repeated):
    def flattened(self):
        return [(self.event, self.count)]


def _quietly(compute):
    """``compute()`` and the DeprecationWarnings it raised, every one of them (no once-per-location filtering)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = compute()
    return value, [warning for warning in caught if issubclass(warning.category, DeprecationWarning)]


def _deprecated(caught) -> bool:
    return bool(caught) and all("OldRepeated.flattened() returned one (event, count) tuple" in str(warning.message)
                                and warning.filename == OVERRIDE_FILE for warning in caught)


def test_the_old_tuple_is_read_as_its_one_part_with_a_warning_at_the_override():
    inner = GaussianEvent(2.0)
    parts, caught = _quietly(lambda: flattened_parts(OldRepeated(inner, 3)))
    assert parts == [(inner, 3)] and _deprecated(caught)
    assert "here [(GaussianEvent, 3)]" in str(caught[0].message)
    parts, caught = _quietly(lambda: flattened_parts(NewRepeated(inner, 3)))
    assert parts == [(inner, 3)] and caught == []


# Every reader of the parts: the ledger's relation check and composition (flatten), a self-composition of the
# event (SelfComposedEvent.flattened), and a sampled event's inner pair (sampled_inner_pair).
def _ledgers(kind, sigma, count, repeats, rate):
    steps = kind(GaussianEvent(sigma), count)
    return {
        "alone": PrivacyLedger().record(steps),
        "repeated": PrivacyLedger().record(steps, count=repeats),
        "nested": PrivacyLedger().record(SelfComposedEvent(kind(LaplaceEvent(sigma), count), repeats)),
        "sampled": PrivacyLedger().record(PoissonSampledEvent(kind(GaussianEvent(sigma), count), rate), count=repeats),
        "replace-one": PrivacyLedger(REPLACE_ONE).record(kind(GaussianEvent(sigma, neighbouring=REPLACE_ONE), count)),
    }


@examples(0.1)
@given(st.floats(0.5, 4.0), st.integers(1, 5), st.integers(2, 4), st.floats(0.05, 0.5), st.floats(0.0, 3.0))
def test_an_old_style_event_gives_the_numbers_of_its_list_form(sigma, count, repeats, rate, epsilon):
    new = _ledgers(NewRepeated, sigma, count, repeats, rate)
    old, caught = _quietly(lambda: _ledgers(OldRepeated, sigma, count, repeats, rate))
    assert _deprecated(caught)
    for name in new:
        methods = ("numeric",) if name in ("sampled", "nested") else ("exact", "numeric", "basic")
        for method in methods:
            expected, caught_new = _quietly(lambda: new[name].delta(epsilon, method=method))
            got, caught_old = _quietly(lambda: old[name].delta(epsilon, method=method))
            assert got.interval == expected.interval and got.certified == expected.certified, (name, method)
            assert caught_new == [] and _deprecated(caught_old), (name, method)


def test_an_old_style_event_still_fails_where_its_list_form_fails():
    # A part under add-remove-one enters a replace-one ledger through group privacy, which a third party's
    # event does not state: both forms are refused alike, the old one after its warning.
    for kind in (NewRepeated, OldRepeated):
        with pytest.raises(ValueError, match="group_size: no group-privacy theorem for"):
            _quietly(lambda: PrivacyLedger(REPLACE_ONE).record(kind(GaussianEvent(1.0, neighbouring=ADD_REMOVE_ONE), 2)))
