"""The ``dpmech`` command line: a thin layer over the public API.

Core subcommands live here. Other installed packages add subcommands through
the ``dpmech.commands`` entry-point group: each entry point names a function
``register(subparsers)``. That is how ``trainers`` and ``audits`` contribute
``run`` and ``audit`` without the core importing them.
"""
