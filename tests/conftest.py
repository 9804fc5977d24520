"""Hypothesis profiles.

* locally: Hypothesis's defaults (100 random examples), without the per-example deadline, which
  measures the machine's load more than the code on a shared 2-core box;
* under ``CI`` (any value): Hypothesis's own ``ci`` profile (derandomized, no database);
* ``HYPOTHESIS_PROFILE=thorough`` for release checks: ten times the examples.

Tests never pin an example count: a slow property asks for a share of the profile's count with
:func:`tests.profiles.examples`, so the thorough profile reaches it too.

``--cpu-durations=N`` lists the N tests that took the most CPU time (this process and its children,
setup and teardown included): on a shared machine the wall-clock ``--durations`` measures the load.
"""

import os
import resource
import time

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("local", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "thorough", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
if "HYPOTHESIS_PROFILE" in os.environ:
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])
elif os.environ.get("CI"):
    settings.load_profile("ci")
else:
    settings.load_profile("local")


def pytest_addoption(parser):
    parser.addoption("--cpu-durations", type=int, default=0, metavar="N",
                     help="list the N tests that took the most CPU seconds (process and children)")


_CPU_TIMES = pytest.StashKey[dict]()
_PHASE_START = pytest.StashKey[float]()


def _cpu_seconds():
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if item.config.getoption("cpu_durations"):
        item.stash[_PHASE_START] = _cpu_seconds()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # Each phase's CPU rides on its report, which pytest-xdist carries from a worker to the controller,
    # where pytest_runtest_logreport adds them up per test.
    outcome = yield
    if _PHASE_START in item.stash:
        now = _cpu_seconds()
        outcome.get_result().user_properties.append(("cpu_seconds", now - item.stash[_PHASE_START]))
        item.stash[_PHASE_START] = now


def pytest_runtest_logreport(report):
    config = _CONFIG.get("config")
    if config is None:
        return
    for name, value in report.user_properties:
        if name == "cpu_seconds":
            times = config.stash.setdefault(_CPU_TIMES, {})
            times[report.nodeid] = times.get(report.nodeid, 0.0) + value


_CONFIG = {}


def pytest_configure(config):
    if config.getoption("cpu_durations"):
        _CONFIG["config"] = config


def pytest_terminal_summary(terminalreporter, config):
    count = config.getoption("cpu_durations")
    times = config.stash.get(_CPU_TIMES, {})
    if not count or not times:
        return
    terminalreporter.write_sep("=", f"slowest {count} tests by CPU time (of {sum(times.values()):.1f} s)")
    for nodeid, seconds in sorted(times.items(), key=lambda item: item[1], reverse=True)[:count]:
        terminalreporter.write_line(f"{seconds:8.2f}s cpu  {nodeid}")
