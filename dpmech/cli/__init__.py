"""The ``dpmech`` command line: a thin layer over the public API.

Core subcommands live here. Every other command is an entry point of group
``dpmech.commands`` naming a function ``register(subparsers)``, called only when
the command is invoked, so the core never imports it: dpmech's own ``run`` and
``audit`` (the application floor, :mod:`app`, declared in dpmech's pyproject.toml;
their modules are light and give ``dpmech --help`` their one-line help) and any
third party's, whose module ``dpmech --help`` does not import. A third party's
command cannot take the name of one of dpmech's own.
"""
