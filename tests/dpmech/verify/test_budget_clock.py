"""The budget clock: wall seconds by default; CPU seconds of the process, capped by wall / factor, inside cpu_seconds_budget."""

import os
import pathlib
import subprocess
import sys
import time

import numpy as np
import pytest

from dpmech.verify.budget_clock import budget_now, cpu_seconds_budget
from dpmech.verify.tester import find_violation


def _spin(seconds):
    """Burn about ``seconds`` of this process's CPU."""
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_the_default_clock_is_the_wall_clock():
    start, wall = budget_now(), time.perf_counter()
    time.sleep(0.05)
    assert budget_now() - start == pytest.approx(time.perf_counter() - wall, abs=0.01)


def test_inside_a_cpu_budget_the_clock_is_the_larger_of_cpu_and_wall_over_the_factor():
    with cpu_seconds_budget(wall_cap_factor=4.0):
        start, cpu, wall = budget_now(), time.process_time(), time.perf_counter()
        time.sleep(0.2)  # no CPU: only the wall cap moves the clock, by about 0.2 / 4
        slept = budget_now() - start
        _spin(0.3)  # now the CPU leads: 0.3 s of it against (0.2 + 0.3) / 4 of wall
        spun = budget_now() - start
        spent_cpu, spent_wall = time.process_time() - cpu, time.perf_counter() - wall
    assert 0.2 / 4.0 - 0.005 <= slept <= 0.2 / 4.0 + 0.02
    assert spun == pytest.approx(max(spent_cpu, spent_wall / 4.0), abs=0.01)
    assert spun >= 0.3
    # Leaving the block restores the wall clock.
    start, wall = budget_now(), time.perf_counter()
    time.sleep(0.05)
    assert budget_now() - start == pytest.approx(time.perf_counter() - wall, abs=0.01)


def test_the_clock_never_runs_backwards():
    with cpu_seconds_budget(wall_cap_factor=1.0):
        readings = np.array([budget_now() for _ in range(20_000)])
    assert np.all(np.diff(readings) >= 0.0)


@pytest.mark.parametrize("factor", [0.5, 0.0, -1.0, float("nan"), float("inf")])
def test_a_wall_cap_factor_below_one_or_not_finite_is_refused(factor):
    with pytest.raises(ValueError, match="wall_cap_factor"):
        with cpu_seconds_budget(wall_cap_factor=factor):
            pass


def test_a_cpu_budget_ends_by_its_wall_cap_when_the_sampler_takes_no_cpu():
    # A sampler that sleeps (a loaded machine, seen from the process) gets almost no CPU: the search ends by the wall
    # cap, factor × budget, not never; with a wall budget it ends by the budget itself.
    def sleepy(value, size, rng):
        time.sleep(2e-6 * size)
        return (rng.random(size) < (0.5 if value else 0.4)).astype(np.int8)

    pairs = [("pair", 1, 0)]
    with cpu_seconds_budget(wall_cap_factor=3.0):
        start = time.perf_counter()
        report = find_violation(sleepy, pairs, 5.0, 0.0, rng=0, budget_seconds=0.3)
        wall = time.perf_counter() - start
    assert 0.3 * 3.0 * 0.5 <= wall <= 0.3 * 3.0 + 1.0, (wall, report)
    start = time.perf_counter()
    find_violation(sleepy, pairs, 5.0, 0.0, rng=0, budget_seconds=0.3)
    assert time.perf_counter() - start <= 0.3 + 1.0


def _literature_table(*arguments):
    root = pathlib.Path(__file__).resolve().parents[3]
    return subprocess.run([sys.executable, "benchmarks/verification_literature.py", *arguments], capture_output=True, text=True,
                          cwd=root, env={**os.environ, "COLUMNS": "230", "PYTHONPATH": str(root)})


def test_the_literature_tables_budgets_are_cpu_seconds_and_each_seed_is_reported():
    result = _literature_table("--per-seed", "--seeds", "2", "--budget", "1", "--correct-budget", "0.3", "--only", "randomized response")
    assert result.returncode == 0, result.stderr
    assert "CPU s (wall cap 10x)" in result.stdout
    for seed in (0, 1):
        assert f"seed {seed}: randomized response (eps for e^eps): + rejected True" in result.stdout
    assert "false alarms: 0; missed violations: 0" in result.stdout


def test_the_literature_table_refuses_a_wall_cap_factor_below_one_with_exit_status_2():
    result = _literature_table("--per-seed", "--wall-cap-factor", "0.5", "--only", "randomized response")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].endswith("--wall-cap-factor must be a finite number >= 1 (got 0.5)")


def test_inside_a_cpu_budget_the_blas_pools_run_one_thread_and_are_restored_after():
    # The process's CPU counts every thread, and OpenBLAS's workers spin after each call: two threads charged the
    # held-out histogram's final stage 1.7 times the CPU per output of one, so a CPU budget holds the pools at one.
    threadpoolctl = pytest.importorskip("threadpoolctl")
    np.ones((64, 64)) @ np.ones((64, 64))  # loads the BLAS library's pool, if it is not loaded yet
    before = [pool["num_threads"] for pool in threadpoolctl.threadpool_info()]
    with cpu_seconds_budget():
        inside = [pool["num_threads"] for pool in threadpoolctl.threadpool_info()]
    assert inside and set(inside) == {1}
    assert [pool["num_threads"] for pool in threadpoolctl.threadpool_info()] == before
