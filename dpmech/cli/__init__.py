"""The ``dpmech`` command line: a thin layer over the public API.

Core subcommands live here. dpmech's own commands outside the core (``audit``
from :mod:`audits.cli`, ``run`` from :mod:`trainers.cli`) are named in a static
table of :mod:`dpmech.cli.main` and imported only when invoked, so the core never
imports them. Third-party packages add subcommands through the ``dpmech.commands``
entry-point group: each entry point names a function ``register(subparsers)``.
"""
