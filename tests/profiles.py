"""Example counts relative to the loaded Hypothesis profile (see ``tests/conftest.py``)."""

from hypothesis import settings


def examples(share: float, **options) -> settings:
    """Settings for a property: ``share`` of the loaded profile's ``max_examples`` (at least 2, so no property
    runs a single example), with any other setting in ``options`` (e.g. ``derandomize=True``).

    A count pinned with ``@settings(max_examples=...)`` would ignore the profile: the thorough profile's
    tenfold budget would not reach it."""
    return settings(max_examples=max(2, round(settings.default.max_examples * share)), **options)
