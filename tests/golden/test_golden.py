"""Golden run (issue 30): every ``dpmech`` command's and every benchmark script's printed output, byte for byte.

Each case of :mod:`tests.golden.cases` runs in its own interpreter (``python -m dpmech ...`` or ``python
benchmarks/NAME.py ...``, one thread per pool, ``COLUMNS`` 120 for the commands and 300 for the benchmarks; :data:`tests.golden.ENVIRONMENT`) and its
rendered run (command, exit status, stdout, and stderr for the error exits) must equal its record in
``tests/golden/outputs/`` after the masks of :mod:`tests.golden` (seconds, rates, speed ratios, versions, load
averages, and the table padding those set). The default set holds the scalar Gaussian commands (``calibrate``,
``epsilon``, ``delta``: table, JSON, error exits), ``dpsgd epsilon``'s error exit, and the help of every command
but the pipeline audits' (3.5 s and 4.1 s of CPU together in two measurements by ``python -m tests.golden`` on the
shared 2-core machine of 27 November 2026); every other case is ``slow``, each at most 60 s of CPU at the options
it runs (about 340 s together before the cases of 28 November 2026), except three that have no smaller form:
``audit fedgm`` and ``audit fedzda`` train their pipeline at its own configuration, which the command cannot shrink
(74-91 s and 65-78 s of CPU on the loaded machine of 28 November 2026; ``audit fedgm`` took 57 s the day before),
and ``seed_pipelines_two --zdac-seeds 1`` trains one Fed-ZDAC and one FedAvg federation (74-81 s). ``dpmech run
--engine flower`` counts only the CPU of the processes it waited for (Ray's workers outlive it).

After an intended change of output, regenerate and review::

    python -m tests.golden --update [NAME ...]
    git diff tests/golden/outputs

Not covered, and why:

* ``dpmech verify --examples``, ``benchmarks/verification_literature.py``, ``benchmarks/heldout_mechanisms.py`` and
  ``benchmarks/heldout_mechanisms_more.py`` at their own budgets: the tester's budgets are seconds (of CPU, capped by wall time), so how many samples a
  verdict rests on, and so every printed number, depends on the machine's speed and load. They are cases at a
  budget of 1 µs (``cases.TINY_BUDGET``), where every search stops after its first test.
* ``benchmarks/pld.py --only small_eps``, ``--only heavy_tails`` and ``--only comparisons``: an anchor still running
  after 120 s of wall time is stopped and printed as such (prv_accountant at eps_error 1e-4, dp_accounting's PLD
  at 1e-4, opacus's PRV calibration at ε = 8, on the loaded 2-core machine of 27 November 2026), so those rows
  depend on the load; heavy_tails also prints a target on seconds ("time ≤ 1 s"). These sections take no size
  option, and an anchor stopped at the limit alone costs 120 s of wall time. The sections covered here
  (``--quick``, heterogeneous, tiny_delta) had every anchor finish well within the limit.
* ``benchmarks/flower.py`` and ``benchmarks/flower_localhost.py``: Flower's simulation engine (Ray, whose worker
  processes this test's CPU count would not see) and a deployment of separate processes on localhost, minutes of
  wall time by their docstrings (not run at smaller options here), with SecAgg+'s stages' wall times in the rows.
  Flower's simulation engine is covered by ``dpmech run --engine flower`` (DP-Helmet over SecAgg+ on digits).
* ``benchmarks/seed_dphelmet.py`` and ``benchmarks/seed_pipelines_two.py`` at their defaults: over 60 s of CPU
  (stopped at 64 s and 62 s, on 27 November 2026; seed_dphelmet's grid has no smaller non-fidelity form). They are
  covered by ``seed_dphelmet --fidelity`` at its smallest sizes and ``seed_pipelines_two --zdac-seeds 1``; the
  default tables' other pipelines through ``dpmech run``/``audit``, ``seed_fedgm --quick`` and ``seed_fedzda`` at
  tiny sizes. ``seed_fedzda --seeds 1`` took 97 s of CPU: it is covered at 4 clients, 2 rounds and 5 ZSDG
  iterations.
* ``dpmech run --pipeline fedgm|fedzda``: each trains its pipeline as its audit does (over 60 s of CPU); their
  audits are cases, and so is ``dpmech run`` on dphelmet, fedauxfdp and fedmd-nfdp.
* ``benchmarks/run_all.py`` prints nothing on stdout: it writes ``benchmarks/RESULTS.md`` from the other scripts at
  their full sizes. ``benchmarks/seed_headlines.py`` is a module of the seeds' numbers, not a script.
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
