"""Imports of optional dependencies, failing with the extra that installs them.

``pip install dpmech`` installs the core: numpy, scipy, rich for the command
line, and dp-accounting and prv-accountant, which only the cross-check
accounting methods load (lazily). Everything else sits behind an extra:

- ``verify``: hypothesis, mpmath and scikit-learn, for :mod:`dpmech.verify`'s
  searches and strategies and the 50-digit references of
  :mod:`dpmech.high_precision`;
- ``fl``: torch, scikit-learn, joblib, mnist1d and threadpoolctl, for the
  trainers, the seed pipelines, the audits' attacks and ``dpmech run``;
- ``plots``: matplotlib, for the figures of reports;
- ``flower``: flwr with its simulation engine, for :mod:`trainers.flower`;
- ``all``: all of them.
"""

from __future__ import annotations

import importlib.util

EXTRAS = {
    "hypothesis": "verify",
    "mpmath": "verify",
    "sklearn": "fl",
    "torch": "fl",
    "joblib": "fl",
    "mnist1d": "fl",
    "threadpoolctl": "fl",
    "matplotlib": "plots",
    "flwr": "flower",
}


def ensure_installed(*module_names: str, purpose: str, extra: str | None = None) -> None:
    """Raise an ImportError naming the extra to install if any of ``module_names`` is missing.

    Presence is checked with :func:`importlib.util.find_spec`, which imports
    nothing, so a package can check its dependencies when it is imported
    without paying for them. ``purpose`` says what needs the modules (for
    example ``"dpmech's trainers"``); ``extra`` overrides the extra named for a
    module that several extras install.
    """
    for module_name in module_names:
        if module_name not in EXTRAS:
            raise ValueError(
                f"module_names must be dpmech's optional dependencies {sorted(EXTRAS)}, got {module_name!r}"
            )
        if importlib.util.find_spec(module_name) is None:
            named_extra = extra if extra is not None else EXTRAS[module_name]
            raise ImportError(
                f"{purpose} needs {module_name}, which is not installed; install it with: pip install 'dpmech[{named_extra}]'"
            )
