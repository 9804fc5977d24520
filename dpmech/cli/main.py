"""Entry point of the ``dpmech`` command. Bad input exits with status 2 and one line on stderr."""

from __future__ import annotations

import argparse
import sys

from . import accounting, dpsgd, verify
from .arguments import join_negative_values

PLUGIN_GROUP = "dpmech.commands"
# dpmech's own commands outside the core: "module:function" registering the command, imported only
# when the command runs (a table, not entry points, so an installation cannot lose or shadow them).
OWN_COMMANDS = {"audit": "audits.cli:register", "run": "trainers.cli:register_run"}
# Their one-line help, shown without importing them.
OWN_HELP = {"audit": "empirical ε lower bounds: dpmech's mechanisms, the seed pipelines, your own IN/OUT scores",
            "run": "the main job: calibrate, train a one-shot federation, account, audit, report"}


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


class _Version(argparse.Action):
    """``--version``: the installed version, read only when asked (importlib.metadata takes tens of ms)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        import importlib.metadata

        print(f"dpmech {importlib.metadata.version('dpmech')}")
        parser.exit()


def entry_points(group: str) -> list:
    """The installed entry points of ``group``: :func:`importlib.metadata.entry_points`, imported only when
    a command outside the core (or the full command list) needs it."""
    import importlib.metadata

    return list(importlib.metadata.entry_points(group=group))


def _plugins() -> list:
    """The entry point of every command outside the core, by name: :data:`OWN_COMMANDS` and the third
    parties' (group ``dpmech.commands``) whose names those do not take."""
    from importlib.metadata import EntryPoint

    own = [EntryPoint(name=name, value=value, group=PLUGIN_GROUP) for name, value in OWN_COMMANDS.items()]
    third_party = [point for point in entry_points(group=PLUGIN_GROUP) if point.name not in OWN_COMMANDS]
    return sorted(own + third_party, key=lambda point: point.name)


def build_parser(command=None) -> argparse.ArgumentParser:
    """The ``dpmech`` parser. The core's commands are registered directly; any other command's module
    (:data:`OWN_COMMANDS`, then third-party entry points of group ``dpmech.commands``) is imported only
    when ``command`` names it, so one command never pays for the others. With ``command=None`` (help,
    version) every command is listed, none loaded. A core command skips the entry-point scan."""
    parser = _Parser(prog="dpmech", description="Differential privacy: calibrate, account, verify, audit.")
    parser.add_argument("--version", action=_Version, help="show the installed version and exit")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    accounting.register(subparsers)
    dpsgd.register(subparsers)
    verify.register(subparsers)
    if command is not None and command in subparsers.choices:
        return parser
    for entry_point in _plugins():
        if entry_point.name != command:
            subparsers.add_parser(entry_point.name,
                                  help=OWN_HELP.get(entry_point.name, f"see 'dpmech {entry_point.name} --help'"))
            continue
        try:
            entry_point.load()(subparsers)
        except ImportError as error:
            # A plugin whose extra is not installed still names itself and says what to install.
            unavailable = subparsers.add_parser(entry_point.name, help=f"unavailable: {error}", prefix_chars="\x00",
                                                add_help=False)
            unavailable.add_argument("arguments", nargs="*")
            unavailable.set_defaults(handler=_unavailable(error))
    return parser


def _command(argv):
    """The sub-command argv names: its first token that is not an option (top-level options take no value)."""
    return next((token for token in argv if not token.startswith("-")), None)


def _unavailable(error):
    def handler(args):
        raise ValueError(str(error))

    return handler


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    argv = join_negative_values(argv)
    args = build_parser(_command(argv)).parse_args(argv)
    try:
        args.handler(args)
    except ValueError as error:
        print(f"dpmech {args.command}: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
