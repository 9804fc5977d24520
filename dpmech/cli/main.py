"""Entry point of the ``dpmech`` command. Bad input exits with status 2 and one line on stderr."""

from __future__ import annotations

import argparse
import importlib.metadata
import sys
from importlib.metadata import entry_points

from . import accounting, verify
from .arguments import join_negative_values

PLUGIN_GROUP = "dpmech.commands"


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="dpmech", description="Differential privacy: calibrate, account, verify, audit.")
    parser.add_argument("--version", action="version", version=f"dpmech {importlib.metadata.version('dpmech')}")
    subparsers = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    accounting.register(subparsers)
    verify.register(subparsers)
    for entry_point in sorted(entry_points(group=PLUGIN_GROUP), key=lambda point: point.name):
        try:
            entry_point.load()(subparsers)
        except ImportError as error:
            # A plugin whose extra is not installed still names itself and says what to install.
            unavailable = subparsers.add_parser(entry_point.name, help=f"unavailable: {error}", prefix_chars="\x00",
                                                add_help=False)
            unavailable.add_argument("arguments", nargs="*")
            unavailable.set_defaults(handler=_unavailable(error))
    return parser


def _unavailable(error):
    def handler(args):
        raise ValueError(str(error))

    return handler


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(join_negative_values(argv))
    try:
        args.handler(args)
    except ValueError as error:
        print(f"dpmech {args.command}: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
