"""The layering the design fixes.

* ``dpmech`` never imports torch, ``trainers`` or ``audits``, nor opacus but in
  ``dpmech.integrations``, which ``import dpmech`` does not load (its opacus
  module needs opacus, hence torch).
* The audit statistics (every module of ``audits`` but the attacks and the CLI)
  are pure functions of scores: never torch or ``trainers``. Attacks train
  shadow models and the CLI trains pipelines, so those may use ``trainers``.
* ``trainers`` never imports ``audits``, but for the main job (``dpmech run``),
  whose audit and report steps are the audits', and its command.
"""

import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

LAYERS = [
    ("dpmech", ("torch", "trainers", "audits", "opacus", "dpmech.integrations"),
     lambda path: "integrations" not in path.relative_to(ROOT / "dpmech").parts),
    ("audits", ("torch", "trainers"),
     lambda path: not {"attacks", "cli.py"} & set(path.relative_to(ROOT / "audits").parts)),
    ("trainers", ("audits",), lambda path: path.relative_to(ROOT / "trainers").parts not in {("main_job.py",), ("cli.py",)}),
]


@pytest.mark.parametrize("package,forbidden,_", LAYERS)
def test_importing_the_package_loads_none_of_the_forbidden(package, forbidden, _):
    code = f"import sys, {package}; print(sorted(m for m in {forbidden!r} if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("package,forbidden,covered", LAYERS)
def test_source_never_imports_the_forbidden(package, forbidden, covered):
    pattern = re.compile(rf"^\s*(import|from)\s+({'|'.join(forbidden)})\b", re.MULTILINE)
    files = [path for path in (ROOT / package).rglob("*.py") if covered(path)]
    assert files
    assert [str(path) for path in files if pattern.search(path.read_text())] == []


def test_the_cli_core_loads_without_trainers_or_audits():
    code = "import sys, dpmech.cli.main; print(sorted(m for m in ('torch', 'trainers', 'audits') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_building_the_cli_with_every_plugin_stays_light():
    # Plugins register subcommands at every start; heavy imports belong in their handlers.
    code = (
        "import sys; from dpmech.cli.main import build_parser; build_parser(); "
        "print(sorted(m for m in ('torch', 'scipy.stats', 'scipy.integrate', 'sklearn', 'hypothesis', 'dp_accounting') "
        "if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_a_command_loads_only_its_own_plugin():
    code = (
        "import sys; from dpmech.cli.main import main; "
        "assert main(['calibrate', '--epsilon', '1', '--delta', '1e-5', '--json']) == 0; "
        "print(sorted(m for m in ('trainers', 'audits') if m in sys.modules), file=sys.stderr)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stderr.strip().splitlines()[-1] == "[]"
    for command, loaded in (("run", "trainers.cli"), ("audit", "audits.cli")):
        code = (f"import sys; from dpmech.cli.main import build_parser; build_parser({command!r}); "
                "print(sorted(m for m in ('trainers.cli', 'audits.cli', 'trainers.main_job') if m in sys.modules))")
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert result.stdout.strip() == str([loaded] if command == "run" else ["audits.cli", "trainers.cli"])
