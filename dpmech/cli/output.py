"""Printing results: one JSON object with ``--json``, else a readable rich table."""

from __future__ import annotations

import json

from rich.console import Console
from rich.table import Table

from ..json_values import json_ready


def emit(record: dict, as_json: bool, title: str) -> None:
    """Print ``record`` as JSON (non-finite floats as strings) or as a two-column table."""
    if as_json:
        print(json.dumps(json_ready(record)))
        return
    table = Table(title=title, show_header=True)
    table.add_column("quantity")
    table.add_column("value", justify="right")
    for key, value in record.items():
        table.add_row(key, f"{value:.10g}" if isinstance(value, float) else str(value))
    Console().print(table)
