"""Entry point of the ``dpmech`` command. Bad input exits with status 2 and one line on stderr."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from . import accounting, dpsgd, verify
from .arguments import join_negative_values

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

PLUGIN_GROUP = "dpmech.commands"
# The distribution whose entry points of PLUGIN_GROUP are dpmech's own commands outside the core (its
# application floor): a third party's command cannot shadow them, and their register functions are light
# enough to import for `dpmech --help` (tests/test_architecture.py), where they give their ``help``.
OWN_DISTRIBUTION = "dpmech"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


class _Version(argparse.Action):
    """``--version``: the installed version, read only when asked (importlib.metadata takes tens of ms)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, default: Any = argparse.SUPPRESS,
                 help: str | None = None) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        import importlib.metadata

        print(f"dpmech {importlib.metadata.version('dpmech')}")
        parser.exit()


def entry_points(group: str) -> list[EntryPoint]:
    """The installed entry points of ``group``: :func:`importlib.metadata.entry_points`, imported only when
    a command outside the core (or the full command list) needs it."""
    import importlib.metadata

    return list(importlib.metadata.entry_points(group=group))


def is_own_command(entry_point: EntryPoint) -> bool:
    """Whether ``entry_point`` is one of dpmech's own commands: installed by :data:`OWN_DISTRIBUTION`."""
    distribution = getattr(entry_point, "dist", None)
    return distribution is not None and distribution.name == OWN_DISTRIBUTION


def _plugins() -> list[EntryPoint]:
    """The entry point of every command outside the core (group ``dpmech.commands``), one per name and
    sorted by name: dpmech's own (:func:`is_own_command`) before a third party's of the same name."""
    chosen: dict[str, EntryPoint] = {}
    for point in sorted(entry_points(group=PLUGIN_GROUP), key=lambda point: not is_own_command(point)):
        chosen.setdefault(point.name, point)
    return sorted(chosen.values(), key=lambda point: point.name)


def _help(entry_point: EntryPoint) -> str:
    """A command's one-line help without registering it: the ``help`` of one of dpmech's own commands'
    register functions; for a third party's, whose module is not imported, a pointer to its own --help."""
    if is_own_command(entry_point):
        return str(entry_point.load().help)
    return f"see 'dpmech {entry_point.name} --help'"


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``dpmech`` parser. The core's commands are registered directly; any other command (an entry
    point of group ``dpmech.commands``: dpmech's own ``run`` and ``audit``, then third parties') is
    registered only when ``command`` names it, so one command never pays for the others. With
    ``command=None`` (help, version) every command is listed, none registered. A core command skips the
    entry-point scan."""
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
            # Only the full listing (command None: help, version) shows the other commands' help.
            subparsers.add_parser(entry_point.name, help=_help(entry_point) if command is None else None)
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


def _command(argv: Sequence[str]) -> str | None:
    """The sub-command argv names: its first token that is not an option (top-level options take no value)."""
    return next((token for token in argv if not token.startswith("-")), None)


def _unavailable(error: ImportError) -> Callable[[argparse.Namespace], NoReturn]:
    def handler(args: argparse.Namespace) -> NoReturn:
        raise ValueError(str(error))

    return handler


def main(argv: Sequence[str] | None = None) -> int:
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
