"""Golden run (issue 30): every ``dpmech`` command's and every benchmark script's printed output, byte for byte.

Each case of :mod:`tests.golden.cases` runs in its own interpreter (``python -m dpmech ...`` or ``python
benchmarks/NAME.py ...``, one thread per pool, ``COLUMNS=120``; :data:`tests.golden.ENVIRONMENT`) and its
rendered run (command, exit status, stdout, and stderr for the error exits) must equal its record in
``tests/golden/outputs/`` after the masks of :mod:`tests.golden` (seconds, rates, speed ratios, versions, load
averages, and the table padding those set). The default set holds the scalar Gaussian commands (``calibrate``,
``epsilon``, ``delta``: table, JSON, error exit, help; under 2 s of CPU together); every other case is ``slow``.

After an intended change of output, regenerate and review::

    python -m tests.golden --update [NAME ...]
    git diff tests/golden/outputs

Not covered, and why:

* ``dpmech run`` and ``dpmech audit fedauxfdp|dphelmet|fedmd-nfdp|fedgm|fedzda`` (their help is): each trains a
  federation; their printed reports are pinned by ``tests/app`` at tiny sizes.
* ``dpmech verify --examples`` and ``benchmarks/verification_literature.py``: the tester's budgets are seconds of
  CPU, so how many samples a verdict rests on, and so the printed numbers, depend on the machine's speed.
* ``benchmarks/flower.py`` and ``benchmarks/flower_localhost.py``: Flower's simulation engine (Ray) and a
  deployment of separate processes on localhost; minutes of wall time and output interleaved by the processes.
* ``benchmarks/run_all.py``: it prints nothing; it writes ``benchmarks/RESULTS.md`` from the other scripts at their
  full sizes. ``benchmarks/seed_headlines.py`` is a module of the seed's numbers, not a script.
"""

from __future__ import annotations

import pytest

from tests.golden import difference, run
from tests.golden.cases import CASES


@pytest.mark.parametrize("case", [pytest.param(case, id=case.name, marks=[pytest.mark.slow] if case.slow else [])
                                  for case in CASES])
def test_output_is_the_recorded_one(case):
    assert case.record.exists(), f"no record: python -m tests.golden --update {case.name}"
    rendered, _ = run(case)
    changed = difference(case, rendered)
    assert not changed, f"{case.name} prints otherwise than recorded (python -m tests.golden --update {case.name} " \
                        f"if intended):\n{changed}"
