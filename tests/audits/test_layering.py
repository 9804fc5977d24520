"""audits imports dpmech, numpy and scipy only: never torch or trainers."""

import pathlib
import re
import subprocess
import sys

AUDITS = pathlib.Path(__file__).resolve().parents[2] / "audits"


def test_importing_audits_loads_no_torch_or_trainers():
    code = "import sys, audits; print(sorted(m for m in ('torch', 'trainers') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_audits_source_never_imports_torch_or_trainers():
    pattern = re.compile(r"^\s*(import|from)\s+(torch|trainers)\b", re.MULTILINE)
    assert [str(p) for p in AUDITS.rglob("*.py") if pattern.search(p.read_text())] == []
