"""Hypothesis profiles.

* locally: Hypothesis's defaults (100 random examples), without the per-example deadline, which
  measures the machine's load more than the code on a shared 2-core box;
* under ``CI`` (any value): Hypothesis's own ``ci`` profile (derandomized, no database);
* ``HYPOTHESIS_PROFILE=thorough`` for release checks: ten times the examples.

Tests never pin an example count: a slow property asks for a share of the profile's count with
:func:`tests.profiles.examples`, so the thorough profile reaches it too.

``--cpu-durations=N`` lists the N tests that took the most CPU time (this process and its children,
setup and teardown included), then the N test files of most CPU and each process's CPU (start-up and
collection apart from its tests): on a shared machine the wall-clock ``--durations`` measures the load,
and under ``--dist loadfile`` one file's tests all run on one worker, so the busiest worker sets the wall time.
"""

import os
import resource
import time

# One thread per pool in every test process and the commands they start (their environments inherit these): the
# README's command runs two pytest-xdist workers on two cores, and BLAS, OpenMP or torch pools of two threads each
# would ask for four, their spinning workers taking the other worker's core. Set before numpy or torch is imported
# by a test module; a value the caller set is kept. numpy's OpenBLAS is loaded already (pytest's plugins import it),
# so threadpoolctl sets the pools loaded so far.
for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

_POOLS = threadpool_limits(int(os.environ["OPENBLAS_NUM_THREADS"]))

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
_PROCESS_CPU = pytest.StashKey[dict]()
_THIS_PROCESS = os.environ.get("PYTEST_XDIST_WORKER", "one process")


def pytest_configure(config):
    if config.getoption("cpu_durations"):
        _CONFIG["config"] = config
        config.stash[_PROCESS_CPU] = {}


def pytest_collection_finish(session):
    # The process's CPU so far is the interpreter's start, the imports and the collection: each xdist
    # worker pays it again, before its first test.
    if _PROCESS_CPU in session.config.stash:
        session.config.stash[_PROCESS_CPU][_THIS_PROCESS] = {"start-up": _cpu_seconds()}


def pytest_sessionfinish(session):
    this_process = session.config.stash.get(_PROCESS_CPU, {}).get(_THIS_PROCESS)
    if this_process is None:  # an xdist controller collects nothing: its workers report theirs
        return
    this_process["total"] = _cpu_seconds()
    if hasattr(session.config, "workeroutput"):  # an xdist worker: the controller reads it on the node's exit
        session.config.workeroutput["process_cpu"] = this_process


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    config = _CONFIG.get("config")
    process_cpu = getattr(node, "workeroutput", {}).get("process_cpu")
    if config is not None and process_cpu is not None:
        config.stash[_PROCESS_CPU][node.gateway.id] = process_cpu


def pytest_terminal_summary(terminalreporter, config):
    count = config.getoption("cpu_durations")
    times = config.stash.get(_CPU_TIMES, {})
    if not count or not times:
        return
    terminalreporter.write_sep("=", f"slowest {count} tests by CPU time (of {sum(times.values()):.1f} s)")
    for nodeid, seconds in sorted(times.items(), key=lambda item: item[1], reverse=True)[:count]:
        terminalreporter.write_line(f"{seconds:8.2f}s cpu  {nodeid}")
    per_file = {}
    for nodeid, seconds in times.items():
        path = nodeid.split("::", 1)[0]
        per_file[path] = per_file.get(path, 0.0) + seconds
    terminalreporter.write_sep("=", f"slowest {count} test files by CPU time (of {len(per_file)} files)")
    for path, seconds in sorted(per_file.items(), key=lambda item: item[1], reverse=True)[:count]:
        terminalreporter.write_line(f"{seconds:8.2f}s cpu  {path}")
    processes = config.stash.get(_PROCESS_CPU, {})
    if processes:
        terminalreporter.write_sep("=", "CPU per process (start-up: interpreter, imports and collection)")
        for name, cpu in sorted(processes.items()):
            terminalreporter.write_line(
                f"{name}: {cpu['total']:8.1f}s cpu, of which {cpu['start-up']:.1f}s start-up")
