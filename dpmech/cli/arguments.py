"""Typed command-line options: every value is checked when it is parsed, before any work.

Each factory returns an argparse ``type`` that turns the text into a number or
a path, or raises ``argparse.ArgumentTypeError`` with the valid range; argparse
then prints ``dpmech CMD: error: argument --OPTION: ...`` on one line and exits
with status 2. Nothing here imports more than the standard library, so that a
bad option is refused before numpy, torch or a trainer loads.
"""

from __future__ import annotations

import argparse
import math
import pathlib
from collections.abc import Callable, Collection

# The largest count of random draws an option may ask for (trials, canaries): beyond it an audit
# would hold more than a few gigabytes of scores.
MAX_DRAWS = 10**8


def _real(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a real number (got {text!r})") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite real number (got {text!r})")
    return value


def real_in(low: float, high: float = math.inf, *, low_open: bool = False, high_open: bool = True) -> Callable[[str], float]:
    """A finite real number in the interval from ``low`` to ``high`` (ends open or closed as given)."""
    interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"

    def parse(text: str) -> float:
        value = _real(text)
        above = value > low if low_open else value >= low
        below = value < high if high_open else value <= high
        if not (above and below):
            raise argparse.ArgumentTypeError(f"must be a finite real number in {interval} (got {text!r})")
        return value

    return parse


positive_real = real_in(0.0, low_open=True)
non_negative_real = real_in(0.0)
unit_open = real_in(0.0, 1.0, low_open=True, high_open=True)


def integer_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """An integer written in decimal digits, at least ``low`` (and at most ``high``)."""
    shown = f">= {low}" if high is None else f"in [{low}, {high:g}]" if high > 10**6 else f"in [{low}, {high}]"

    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer {shown} written in digits (got {text!r})") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"must be an integer {shown} (got {text!r})")
        return value

    return parse


def choice(options: Collection[str]) -> Callable[[str], str]:
    """One of a fixed set of words; the message lists them."""

    def parse(text: str) -> str:
        if text not in options:
            raise argparse.ArgumentTypeError(f"must be one of {', '.join(options)} (got {text!r})")
        return text

    return parse


def _writable(folder: pathlib.Path) -> bool:
    """Whether a file can be created in ``folder``: tried, since permission bits say nothing to root or on /proc."""
    import tempfile  # only the commands with an output folder pay for it

    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def output_folder(text: str) -> pathlib.Path:
    """A folder that exists and is writable, or can be created: checked now, not after the training."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must be a folder path (got an empty string)")
    folder = pathlib.Path(text)
    if folder.exists():
        if not folder.is_dir():
            raise argparse.ArgumentTypeError(f"must be a folder, not an existing file (got {text!r})")
        if not _writable(folder):
            raise argparse.ArgumentTypeError(f"must be a writable folder (got {text!r})")
        return folder
    ancestor = folder.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir() or not _writable(ancestor):
        raise argparse.ArgumentTypeError(f"cannot be created: {str(ancestor)!r} is not a writable folder (got {text!r})")
    return folder


def _looks_like_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def join_negative_values(argv: list[str]) -> list[str]:
    """``--epsilon -1e-5`` as ``--epsilon=-1e-5``: argparse takes a leading '-' for an option otherwise.

    Only a token that parses as a number is joined, so that a missing value before a real option
    still gets argparse's own message.
    """
    joined: list[str] = []
    index = 0
    while index < len(argv):
        token = argv[index]
        following = argv[index + 1] if index + 1 < len(argv) else None
        if (token.startswith("--") and "=" not in token and len(token) > 2 and following is not None
                and following.startswith("-") and _looks_like_number(following)):
            joined.append(f"{token}={following}")
            index += 2
            continue
        joined.append(token)
        index += 1
    return joined
