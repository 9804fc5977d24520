"""Fixtures shared by the audits' tests."""

import pytest

from dpmech.cli import main as cli_main


@pytest.fixture
def dpmech_main(monkeypatch, capsys):
    """``dpmech ...`` in process, third-party plugins left out: (exit status, stdout, stderr)."""
    monkeypatch.setattr(cli_main, "entry_points", lambda group: [])

    def run(*arguments):
        try:
            status = cli_main.main(list(arguments))
        except SystemExit as exit_:
            status = exit_.code
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run
