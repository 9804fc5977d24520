"""Fixtures shared by the audits' tests: ``dpmech_main`` (``dpmech audit ...`` in process) is the application's."""

from tests.app.conftest import dpmech_main  # noqa: F401
