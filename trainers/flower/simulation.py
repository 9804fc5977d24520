"""``run_flower_round``: one round of a registered pipeline in Flower's simulation engine.

The entry point of ``dpmech run --engine flower``. The pipelines on Flower are those whose registry
entry names a ``flower_function`` (:mod:`trainers.pipelines.registry`): ``dphelmet`` (SecAgg+,
:mod:`.dphelmet`) and ``fedauxfdp`` (with its FedAVG+P and FedD+P baselines, :mod:`.fedauxfdp`). The
others are not deployed on Flower yet and are refused with ValueError.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import threading
import warnings
from typing import TYPE_CHECKING, Iterator, Optional

from ..federation import PipelineResult
from ..pipelines.registry import PIPELINES, get_pipeline

if TYPE_CHECKING:
    from flwr.client import ClientApp
    from flwr.server import ServerApp

FLOWER_PIPELINES = tuple(name for name, pipeline in PIPELINES.items() if pipeline.flower_function is not None)


def run_flower_round(name, data, config=None, seed: int = 0, **options) -> PipelineResult:
    """Run pipeline ``name`` on ``data`` in Flower's simulation engine; returns a PipelineResult.

    ``config`` defaults to the pipeline's config class's defaults and must be an instance of it.
    ``options`` go to the pipeline's Flower function: :func:`~trainers.flower.dphelmet.run_flower_dphelmet`
    (for ``dphelmet``: ``reconstruction_threshold``, ``minimum_honest_shares``, ``clip_failure_probability``,
    ``dropped_users``, ``backend_config``) or :func:`~trainers.flower.fedauxfdp.run_flower_fedauxfdp`
    (``backend_config``). For ``dphelmet`` the PipelineResult's notes and guarantees carry the
    SecAgg+ accounting; :func:`~trainers.flower.dphelmet.run_flower_dphelmet` also returns the
    encoding, survivors and upload sizes.
    """
    pipeline = get_pipeline(name)
    if pipeline.flower_function is None:
        raise ValueError(f"name must be one of {', '.join(FLOWER_PIPELINES)} with --engine flower (got {name!r})")
    config_class = pipeline.config_class
    config = config_class() if config is None else config
    if not isinstance(config, config_class):
        raise ValueError(f"config must be a {config_class.__name__} (got {type(config).__name__})")
    module, function = pipeline.flower_function.split(":")
    outcome = getattr(importlib.import_module(f".{module}", __package__), function)(data, config, seed, **options)
    # A Flower function returns the round's PipelineResult, or a record of the deployed round that holds it.
    return outcome if isinstance(outcome, PipelineResult) else outcome.result


# Flower announces on every call that ``run_simulation`` is deprecated in favour of ``flwr run``. The rounds
# here hand the ClientApps closures over the prepared users and their Generators (so that a Flower round is
# bit-identical to the in-process one), which ``flwr run`` cannot carry; the notice names that choice, not a fault.
_RUN_SIMULATION_NOTICE = "The `run_simulation` function is deprecated"
# Ray's ``ray.init`` announces a future change of its GPU visibility default (none of our actors asks for a GPU).
_RAY_ACCELERATOR_TIP = r"Tip: In future versions of Ray, Ray will no longer override accelerator"
# How often the simulation's descendant processes are listed, and how long Ray's leftovers get to exit.
_PROCESS_POLL_SECONDS = 0.5
_EXIT_GRACE_SECONDS = 5.0


class _RunSimulationNoticeFilter(logging.Filter):
    """Drops Flower's deprecation notice of ``run_simulation`` from the ``flwr`` logger, and nothing else."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith(f"DEPRECATED FEATURE: {_RUN_SIMULATION_NOTICE}")


@contextlib.contextmanager
def third_party_notices_filtered() -> Iterator[None]:
    """Within the block, hide the two third-party notices every Flower simulation prints and we cannot fix:
    Flower's deprecation of ``run_simulation`` (a log record) and Ray's FutureWarning about accelerator
    variables (category FutureWarning, module ``ray._private.worker``). Every other warning and log record,
    ours and the DP-relevant ones included, still shows."""
    flower_logger = logging.getLogger("flwr")
    notice_filter = _RunSimulationNoticeFilter()
    flower_logger.addFilter(notice_filter)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=_RAY_ACCELERATOR_TIP, category=FutureWarning,
                                    module=r"ray\._private\.worker")
            yield
    finally:
        flower_logger.removeFilter(notice_filter)


@contextlib.contextmanager
def simulation_processes_reaped() -> Iterator[None]:
    """Within the block, record every process this one starts (Ray's GCS, raylet, agents and actor
    workers); on leaving it, shut Ray down and terminate (then kill) whichever of them outlived it, so
    that none is left when the caller returns.

    Ray's workers are children of its raylet: after ``ray.shutdown`` they are orphaned and exit only when
    they notice, seconds later, so they are collected while the block runs. Processes that were already
    children before the block are left alone.
    """
    import ray  # noqa: F401  (Ray puts its bundled psutil on sys.path)
    import psutil

    this_process = psutil.Process()
    before = {child.pid for child in this_process.children(recursive=True)}
    started: dict[int, psutil.Process] = {}
    stop = threading.Event()

    def collect() -> None:
        try:
            for child in this_process.children(recursive=True):
                if child.pid not in before:
                    started.setdefault(child.pid, child)
        except psutil.Error:  # a process vanished while its children were listed; the next poll sees the rest
            pass

    def watch() -> None:
        while not stop.wait(_PROCESS_POLL_SECONDS):
            collect()

    watcher = threading.Thread(target=watch, name="dpmech-simulation-processes", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()
        collect()
        if ray.is_initialized():
            ray.shutdown()
        leftovers = [process for process in started.values() if process.is_running()]
        for process in leftovers:
            with contextlib.suppress(psutil.Error):
                process.terminate()
        _, alive = psutil.wait_procs(leftovers, timeout=_EXIT_GRACE_SECONDS)
        for process in alive:
            with contextlib.suppress(psutil.Error):
                process.kill()
        psutil.wait_procs(alive, timeout=_EXIT_GRACE_SECONDS)


def simulate(server_app: ServerApp, client_app: ClientApp, num_supernodes: int,
             backend_config: Optional[dict] = None) -> None:
    """Run ``server_app`` against ``num_supernodes`` copies of ``client_app`` in Flower's simulation engine;
    returns once the round is over and every process the simulation started has exited
    (:func:`simulation_processes_reaped`), with Flower's and Ray's unfixable notices hidden
    (:func:`third_party_notices_filtered`).

    ``backend_config`` defaults to one CPU per ClientApp and a Ray cluster of min(``num_supernodes``, CPU
    count) CPUs: Flower starts one actor process per CPU, and more actors than SuperNodes would only idle.
    """
    from flwr.simulation import run_simulation

    if backend_config is None:
        backend_config = {"client_resources": {"num_cpus": 1},
                          "init_args": {"num_cpus": min(num_supernodes, os.cpu_count() or 1)}}
    with simulation_processes_reaped(), third_party_notices_filtered():
        run_simulation(server_app=server_app, client_app=client_app, num_supernodes=num_supernodes,
                       backend_config=backend_config)
