"""Example counts relative to the loaded Hypothesis profile (see ``tests/conftest.py``)."""

from hypothesis import settings


def examples(share: float) -> settings:
    """Settings for a slow property: ``share`` of the profile's ``max_examples``, at least 2."""
    return settings(max_examples=max(2, round(settings.default.max_examples * share)))
