"""A package's public names loaded on first use (PEP 562 module ``__getattr__`` and ``__dir__``).

For packages whose public names live in submodules with heavy imports (scipy.stats, torch): importing the
package stays cheap, and each name costs its submodule only when it is first read. dpmech's own top level
reads its map from its typing imports instead (see :mod:`dpmech`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose public name ``n`` is defined in submodule ``exports[n]``.

    A name is imported from its submodule on first access and then bound in ``namespace`` (the package's
    ``globals()``), so that later reads do not pass through ``__getattr__``; any other name raises
    AttributeError as a module's missing attribute does.
    """

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{exports[name]}", package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(list(namespace) + list(exports))

    return __getattr__, __dir__
