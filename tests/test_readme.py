"""The README's Python code blocks run as written, so the quickstart cannot rot."""

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_python_examples():
    assert BLOCKS


# A block that starts a Flower simulation (Ray) takes about a minute: marked slow, run by `-m slow` (.ci/run runs both).
SLOW_BLOCKS = {index for index, block in enumerate(BLOCKS) if "trainers.flower.simulation" in block}


@pytest.mark.parametrize(
    "index", [pytest.param(index, marks=[pytest.mark.slow] if index in SLOW_BLOCKS else []) for index in range(len(BLOCKS))]
)
def test_readme_python_block_runs(index):
    exec(compile(BLOCKS[index], f"README.md python block {index}", "exec"), {})
