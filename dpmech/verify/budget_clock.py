r"""The clock that the black-box tester's time budgets are measured on: wall seconds, or CPU seconds with a wall cap.

:func:`.tester.find_violation` and its final stage (:mod:`.confirm`) read
the time from :func:`budget_now` alone: every deadline, every measured cost
per output and every planned sample size is in that clock's seconds. By
default it is the wall clock (``time.perf_counter``): ``budget_seconds = 1``
ends after about one second, whatever else the machine runs.

Inside :func:`cpu_seconds_budget` it is the CPU time of this process
(``time.process_time``, all its threads) since the block was entered, or the
wall time since then divided by ``wall_cap_factor`` when that is larger. A
budget of B seconds then buys about B seconds of CPU on an idle machine and
on a loaded one alike, so a benchmark's verdicts do not depend on the load
(on 2 cores at load 9–40 a 20 s wall budget gave a run 2.7–4.2 s of CPU),
and a run still ends within about ``wall_cap_factor``·B wall seconds. The
maximum of two non-decreasing clocks is non-decreasing, so every deadline
logic that holds on a clock holds on this one. The choice of clock only
moves sample sizes: no test's level depends on it, since every level is
fixed before its samples are drawn.

Inside the block the BLAS and OpenMP thread pools are held at one thread
(``threadpoolctl``, installed with scikit-learn, the ``fl`` extra; without it
the pools are left as they are). The process's CPU time counts every thread,
and OpenBLAS's workers spin for a while after each call: on the held-out
histogram's final stage (a projection's matrix product per chunk between
draws) they made each output cost 1.7 times its single-threaded CPU
(2.6·10⁻⁷ s against 1.3·10⁻⁷ s per output and side), so a CPU budget bought
0.6 of the outputs, and none of the work.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar

from .. import validation as check

_CLOCK: ContextVar[Callable[[], float]] = ContextVar("budget_clock", default=time.perf_counter)


def budget_now() -> float:
    """The budget clock's reading in seconds (only differences between readings mean anything)."""
    return _CLOCK.get()()


@contextmanager
def cpu_seconds_budget(wall_cap_factor: float = 10.0) -> Iterator[None]:
    """Within the block, time budgets count max(CPU seconds of this process, wall seconds / ``wall_cap_factor``) since entry.

    Args:
        wall_cap_factor: >= 1; a budget of B seconds ends within about ``wall_cap_factor``·B wall seconds
            however little CPU the process gets (1 gives max(CPU, wall): never longer than the wall clock's).
    """
    factor = check.single("wall_cap_factor", check.real_at_least("wall_cap_factor", wall_cap_factor, 1.0))
    # The pools are set first: threadpoolctl's scan of the loaded libraries is not the budget's work.
    with _one_thread_pools():
        cpu_start, wall_start = time.process_time(), time.perf_counter()

        def clock() -> float:
            return max(time.process_time() - cpu_start, (time.perf_counter() - wall_start) / factor)

        token = _CLOCK.set(clock)
        try:
            yield
        finally:
            _CLOCK.reset(token)


def _one_thread_pools() -> AbstractContextManager[object]:
    """BLAS and OpenMP pools at one thread while a CPU budget runs (see the module docstring), where threadpoolctl is installed."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn, which the test extra installs
        return nullcontext()
    limits: AbstractContextManager[object] = threadpool_limits(1)
    return limits
