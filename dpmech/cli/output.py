"""Printing results: one JSON object with ``--json``, else a readable rich table.

Every computed privacy number is printed on its safe side (:mod:`dpmech.directed_rounding`):
the caller names, per key, whether understating it is unsafe (``"up"``: σ, an upper ε or δ)
or overstating it (``"down"``: a certified lower bound), or that it is a δ carried as a log
(``"log_up"``). Other floats are echoed as their shortest exact text. JSON holds the doubles
themselves, which are already the conservative values.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ..directed_rounding import format_down, format_log_up, format_up
from ..json_values import json_ready

_FORMATS = {"up": format_up, "down": format_down, "log_up": format_log_up}


def _text(value: object, direction: str | None) -> str:
    if isinstance(value, float):
        return _FORMATS[direction](value) if direction else repr(value)
    return str(value)


def emit(
    record: Mapping[str, object],
    as_json: bool,
    title: str,
    directions: Mapping[str, str] | None = None,
    shown: Mapping[str, str | None] | None = None,
) -> None:
    """Print ``record`` as JSON (non-finite floats as strings) or as a two-column table.

    Args:
        directions: key -> "up", "down" or "log_up", the safe rounding of that value in the table.
        shown: key -> text that replaces the value in the table only (e.g. a δ below every double
            printed from its log).
    """
    if as_json:
        print(json.dumps(json_ready(record)))
        return
    from rich.console import Console
    from rich.table import Table

    directions = directions or {}
    shown = shown or {}
    table = Table(title=title, show_header=True)
    table.add_column("quantity")
    table.add_column("value", justify="right")
    for key, value in record.items():
        table.add_row(key, shown.get(key) or _text(value, directions.get(key)))
    Console().print(table)
