"""The layering the design fixes: dpmech never imports torch, trainers or audits."""

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_importing_dpmech_loads_no_torch_trainers_or_audits():
    code = "import sys, dpmech, dpmech.cli.main; print(sorted(m for m in ('torch', 'trainers', 'audits') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_dpmech_source_never_imports_torch_trainers_or_audits():
    pattern = re.compile(r"^\s*(import|from)\s+(torch|trainers|audits)\b", re.MULTILINE)
    offenders = [str(path) for path in (ROOT / "dpmech").rglob("*.py") if pattern.search(path.read_text())]
    assert offenders == []
