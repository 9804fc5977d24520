"""Fixtures shared by the application's tests (and the audits' tests that run ``dpmech audit``)."""

import pytest

from dpmech.cli import main as cli_main


@pytest.fixture
def dpmech_main(monkeypatch, capsys):
    """``dpmech ...`` in process, third-party plugins left out: (exit status, stdout, stderr)."""
    installed = cli_main.entry_points(cli_main.PLUGIN_GROUP)
    own = [point for point in installed if cli_main.is_own_command(point)]
    monkeypatch.setattr(cli_main, "entry_points", lambda group: own if group == cli_main.PLUGIN_GROUP else [])

    def run(*arguments):
        try:
            status = cli_main.main(list(arguments))
        except SystemExit as exit_:
            status = exit_.code
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run
