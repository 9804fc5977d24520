"""Golden run: every ``dpmech`` command's and every benchmark script's printed output, pinned byte for byte.

Each :class:`Case` is one invocation, run in its own interpreter from the repository root
(``python -m dpmech ...`` or ``python benchmarks/NAME.py ...``) with :data:`ENVIRONMENT` on top of the
caller's. Its record, ``tests/golden/outputs/<name>.txt``, is the rendered run: the command line, the exit
status, the whole stdout and, for a case with ``stderr=True`` (the error exits), the whole stderr.
``tests/golden/test_golden.py`` reruns every case and compares the rendering with the record byte for byte.

Masks. A field that varies between runs of the same code is replaced by a fixed token, in the comparison and in
the record, by the case's masks; a masked line is kept, never dropped. Each mask is a named regular expression
(:class:`Mask`) or a table's named columns (:class:`Columns`), defined below:

* :data:`SECONDS` (a number with a unit of time), :data:`ELAPSED` (h:mm:ss), :data:`RATES` (per second), :data:`SPEED_RATIOS` (``2.5x``,
  ``×2.5``), :data:`LOAD` (load averages), :data:`VERSIONS` (of Python and of the competitors), :data:`PLATFORM`
  (the kernel's name), and ``cases.TIMED_COLUMNS``, the cells under a timed header (``s``, ``ms``, ``ratio``,
  ``speed-up``, ``wall``, ``CPU``...), whatever is printed in them;
* :data:`TABLE_PADDING`: a timed cell sets its column's width, and the width sets the padding, the rules and the
  centred title of its table, so in a case with timed cells runs of spaces become one and leading and trailing
  spaces and repeated rule characters go; the table's text, row by row and cell by cell, is still compared;
* before the masks, :func:`run` writes the interpreter's path, the repository's and the run's temporary directory
  as ``python``, ``<repository>`` and ``<tmp>``.

Regenerate the records (after an intended change of output; review ``git diff tests/golden`` before
committing it)::

    python -m tests.golden --update              # every case
    python -m tests.golden --update NAME [NAME]  # these cases only
    python -m tests.golden --list                # the cases, slow ones marked
    python -m tests.golden                       # compare without writing, with the CPU seconds of each case

Cost. The default test set runs the cases with ``slow=False`` (their total, measured by ``python -m
tests.golden``, is at most 5 s of CPU); the others are marked ``slow`` (``python -m pytest -m slow``), each at
its smallest honest options, at most 60 s of CPU.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import pathlib
import re
import resource
import subprocess
import sys
import tempfile
from typing import Callable, Sequence

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUTPUTS = pathlib.Path(__file__).resolve().parent / "outputs"

# One thread in every pool (the printed numbers must not depend on the reduction order of a BLAS call), a fixed
# hash seed, the repository on the path (the benchmarks import their siblings and the packages), and no colour;
# run adds the terminal width, COLUMNS (argparse's help and rich's tables wrap there): the case's columns.
ENVIRONMENT = {
    "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "VECLIB_MAXIMUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1", "LINES": "50", "PYTHONHASHSEED": "0", "NO_COLOR": "1",
    "PYTHONIOENCODING": "utf-8", "PYTHONWARNINGS": "ignore",
}
# Variables of the caller that would change what is printed: forced colour, and Hypothesis's profile choice
# (``dpmech verify`` runs Hypothesis properties; it sets its own counts, and CI=true must not change them).
REMOVED = ("FORCE_COLOR", "PY_COLORS", "CLICOLOR_FORCE", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "HYPOTHESIS_PROFILE")


@dataclasses.dataclass(frozen=True)
class Mask:
    """A field that varies between runs of the same code: every match of ``pattern`` becomes ``token``."""

    name: str
    pattern: str
    token: str

    def apply(self, text: str) -> str:
        return re.sub(self.pattern, self.token, text, flags=re.MULTILINE)


@dataclasses.dataclass(frozen=True)
class Columns:
    """Every cell of a table under a header that matches ``header`` becomes ``token``: the timed columns of a
    benchmark's tables, whatever their unit. Markdown tables (``| a | b |`` rows; the header is a table's first
    row) and rich's boxed tables (header rows between ``┃``, data rows between ``│``; a header wrapped over several
    rows is read joined) both; a cell without a digit ("-", "not installed") stays as it is."""

    name: str
    header: str
    token: str = "<timed>"

    def apply(self, text: str) -> str:
        lines = text.split("\n")
        header: list[str] = []  # rich: the header cells read so far, joined over the header's rows
        masked: list[int] = []
        for index, line in enumerate(lines):
            if line.startswith("┏"):
                header, masked = [], []
            elif line.startswith("┃"):
                cells = [cell.strip() for cell in line.split("┃")]
                header = [f"{old} {new}".strip() for old, new in zip(header, cells)] if header else cells
                masked = [column for column, cell in enumerate(header) if re.fullmatch(self.header, cell)]
            elif line.startswith("│"):
                lines[index] = self._masked(line, "│", masked)
            elif line.startswith("|"):
                if index == 0 or not lines[index - 1].startswith("|"):
                    masked = [column for column, cell in enumerate(line.split("|"))
                              if re.fullmatch(self.header, cell.strip())]
                else:
                    lines[index] = self._masked(line, "|", masked)
        return "\n".join(lines)

    def _masked(self, line: str, separator: str, columns: list[int]) -> str:
        cells = line.split(separator)
        for column in columns:
            if column < len(cells) and re.search(r"\d", cells[column]):
                cells[column] = f" {self.token} "
        return separator.join(cells)


NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_AFTER = r"(?<![\w.=+-])"  # a number that starts here (not the end of a name, a decimal, an exponent or an assignment)
# Masks (each names what it hides; see the module docstring).
SECONDS = Mask("seconds", rf"{_AFTER}{NUMBER} ?(?:s|ms|µs|us|ns|min|seconds?)\b", "<seconds>")
RATES = Mask("rates", rf"{_AFTER}{NUMBER} ?(?:[kMG]?(?:calls|scores|draws|heads|samples|steps|records|trials|B|"
              rf"bytes)? ?/s\b|(?:calls|scores|draws|heads|samples|steps|records|trials) per (?:CPU )?second)", "<rate>")
# "2.5x", "2.5×" and "×2.5" (a speed ratio), not "8×8" or "300 × 100" (sizes)
SPEED_RATIOS = Mask("speed ratios", rf"{_AFTER}{NUMBER}[x×](?![\w×])|(?<=[\s(]×){NUMBER}", "<ratio>")
VERSIONS = Mask("versions", r"\b(Python|numpy|scipy|torch|opacus|dp_accounting|dp-accounting|prv_accountant|"
                r"prv-accountant|OpenDP|opendp|flwr|Flower|scikit-learn|sklearn|numba|pld-accounting|ray|Ray)"
                r"( v?| version )\d+(?:\.\d+)+[\w.+-]*", r"\1\2<version>")
ELAPSED = Mask("elapsed time", r"(?<![\d:])\d+:\d\d:\d\d(?![\d:])", "<elapsed>")  # a progress bar's h:mm:ss
LOAD = Mask("load average", rf"load(?: average)?:?\s+{NUMBER}(?:,?\s+{NUMBER}){{0,2}}", "load <load>")
PLATFORM = Mask("platform", r"\b(?:Linux|Darwin|Windows|macOS)-[\w.-]+", "<platform>")
# A script that prints its command line and machine through a console of fixed width: where those lines wrap
# depends on the paths of the interpreter and of the checkout, and on the machine's description, so the lines
# from "command:" to the end of the output become one line each.
COMMAND_AND_MACHINE = (Mask("command line", r"^command: [\s\S]*?(?=^machine: )", "command: <command line>\n"),
                       Mask("machine", r"^machine: [\s\S]*\Z", "machine: <machine>\n"))
# A timed cell sets its column's width, and the width the padding of every row, the rules and the centred title:
# runs of spaces inside a line become one, leading and trailing spaces go, and so do repeated rule characters.
TABLE_PADDING = (Mask("table padding", r"(?<=\S) {2,}", " "), Mask("table indent", r"^ +| +$", ""),
                 Mask("table rules", r"([─━═])\1+|(-)-{2,}(?![\w-])", r"\1\2"))


@dataclasses.dataclass(frozen=True)
class Case:
    """One invocation: ``arguments`` of ``python -m dpmech``, or a benchmark script's path and its arguments.

    ``inputs`` writes the files the invocation reads into its working directory before it runs."""

    name: str
    arguments: tuple[str, ...]
    slow: bool = False
    stderr: bool = False
    masks: tuple[Mask | Columns, ...] = ()
    inputs: Callable[[pathlib.Path], None] | None = None
    columns: int = 120
    timeout: float = 900.0

    @property
    def is_benchmark(self) -> bool:
        return self.arguments[0].startswith("benchmarks/")

    @property
    def command(self) -> list[str]:
        if self.is_benchmark:
            return [sys.executable, str(ROOT / self.arguments[0]), *self.arguments[1:]]
        return [sys.executable, "-m", "dpmech", *self.arguments]

    @property
    def shown(self) -> str:
        return " ".join(("python" if self.is_benchmark else "dpmech", *self.arguments))

    @property
    def record(self) -> pathlib.Path:
        return OUTPUTS / f"{self.name}.txt"


def environment() -> dict[str, str]:
    """The caller's environment with :data:`ENVIRONMENT` on top and :data:`REMOVED` taken out."""
    values = {name: value for name, value in os.environ.items() if name not in REMOVED}
    values.update(ENVIRONMENT)
    values["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return values


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(case: Case) -> tuple[str, float]:
    """The case's rendered, masked run and the CPU seconds its process took.

    It runs in a fresh temporary directory (what it writes, e.g. ``--out rep``, goes there), with the repository on
    ``PYTHONPATH``. In what it prints, the interpreter's path reads ``python``, the repository's ``<repository>``
    and the temporary directory's ``<tmp>`` (they differ between checkouts and runs); then the case's masks apply,
    to stdout and stderr, never to the command line."""
    with tempfile.TemporaryDirectory(prefix="golden-") as directory:
        if case.inputs is not None:
            case.inputs(pathlib.Path(directory))
        before = _children_cpu()
        result = subprocess.run(case.command, capture_output=True, cwd=directory,
                                env={**environment(), "COLUMNS": str(case.columns)}, timeout=case.timeout)
        seconds = _children_cpu() - before
        places = {sys.executable: "python", str(ROOT): "<repository>", os.path.realpath(directory): "<tmp>",
                  directory: "<tmp>"}
    streams = [result.stdout] + ([result.stderr] if case.stderr else [])
    shown = []
    for stream in streams:
        text = stream.decode("utf-8", errors="backslashreplace")
        for place in sorted(places, key=len, reverse=True):
            text = text.replace(place, places[place])
        for mask in case.masks:
            text = mask.apply(text)
        shown.append(text)
    parts = [f"$ {case.shown}\n", f"exit status: {result.returncode}\n", "--- stdout\n", shown[0]]
    if case.stderr:
        parts += ["--- stderr\n", shown[1]]
    return "".join(parts), seconds


def difference(case: Case, rendered: str) -> str:
    """A unified diff of the record against this run ('' when they are equal)."""
    recorded = case.record.read_text(encoding="utf-8") if case.record.exists() else ""
    return "".join(difflib.unified_diff(recorded.splitlines(keepends=True), rendered.splitlines(keepends=True),
                                        f"recorded/{case.name}", f"this run/{case.name}"))


def select(cases: Sequence[Case], names: Sequence[str]) -> list[Case]:
    """The cases named (all when none is); an unknown name raises ValueError."""
    known = {case.name: case for case in cases}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValueError(f"names must be golden cases (python -m tests.golden --list), got {unknown}")
    return [known[name] for name in names] if names else list(cases)
