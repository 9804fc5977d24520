"""What a Flower simulation leaves on the terminal and in the process table.

The notice filter hides exactly Flower's ``run_simulation`` deprecation and Ray's accelerator FutureWarning
(every other record and warning still shows); a whole round, run as its own process group, prints no other
warning and leaves no process of that group behind when it returns (slow: it starts Ray).
"""

import logging
import os
import re
import subprocess
import sys
import warnings

import pytest

from trainers.flower.simulation import third_party_notices_filtered

pytest.importorskip("ray")
from flwr.supercore.logger import warn_deprecated_feature  # noqa: E402

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
RAY_TIP = ("Tip: In future versions of Ray, Ray will no longer override accelerator visible devices env var if "
           "num_gpus=0 or num_gpus=None (default).")


class Collect(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_only_flowers_run_simulation_notice_is_dropped():
    flower_logger = logging.getLogger("flwr")
    collect = Collect()
    flower_logger.addHandler(collect)
    try:
        with third_party_notices_filtered():
            warn_deprecated_feature("The `run_simulation` function is deprecated and will be removed")
            warn_deprecated_feature("The `start_simulation` function is deprecated")
            flower_logger.warning("No fit_metrics_aggregation_fn provided")
        warn_deprecated_feature("The `run_simulation` function is deprecated and will be removed")
    finally:
        flower_logger.removeHandler(collect)
    assert len(collect.messages) == 3
    assert "start_simulation" in collect.messages[0]
    assert collect.messages[1] == "No fit_metrics_aggregation_fn provided"
    assert "run_simulation" in collect.messages[2]  # the filter is gone after the block


def test_only_rays_accelerator_tip_is_dropped():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with third_party_notices_filtered():
            warnings.warn_explicit(RAY_TIP, FutureWarning, "worker.py", 2051, module="ray._private.worker")
            # The same text from another module, another category from Ray, and ours all still show.
            warnings.warn_explicit(RAY_TIP, FutureWarning, "other.py", 1, module="ray.other")
            warnings.warn_explicit("Ray is changing", FutureWarning, "worker.py", 2052, module="ray._private.worker")
            warnings.warn("delta is above 1/n", UserWarning)
        warnings.warn_explicit(RAY_TIP, FutureWarning, "worker.py", 2051, module="ray._private.worker")
    assert [str(warning.message) for warning in caught] == [RAY_TIP, "Ray is changing", "delta is above 1/n", RAY_TIP]
    assert caught[0].filename == "other.py" and caught[3].filename == "worker.py"


ROUND = """
from trainers.data import load_digits_dataset
from trainers.flower.simulation import run_flower_round
from trainers.pipelines import DpHelmetConfig

config = DpHelmetConfig(num_users=3, records_per_user=40, noise="discrete")
result = run_flower_round("dphelmet", load_digits_dataset(), config, seed=0)
print(result.guarantees["tight"].epsilon)
"""

# Flower's own actor termination: each actor logs "Manually terminating ClientAppActor" when the round ends,
# and Ray relays the line or not depending on when its log monitor stops; at most one per actor, and
# the simulation starts at most one actor per SuperNode.
ACTOR_TERMINATION = "Manually terminating ClientAppActor"


@pytest.mark.slow
def test_round_prints_no_warning_and_leaves_no_process():
    import ray  # noqa: F401  (Ray puts its bundled psutil on sys.path)
    import psutil

    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [REPOSITORY,
                                                                               os.environ.get("PYTHONPATH")]))}
    # Its own session, hence its own process group (id = its pid), which every process of the round joins:
    # Ray's GCS, raylet and actor workers keep it even after they are orphaned.
    with subprocess.Popen([sys.executable, "-c", ROUND], env=environment, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, start_new_session=True) as round_process:
        _, stderr = round_process.communicate(timeout=600)
    assert round_process.returncode == 0, stderr[-3000:]

    def in_group(process):
        try:
            return os.getpgid(process.pid) == round_process.pid
        except (ProcessLookupError, PermissionError):
            return False

    left = [process.pid for process in psutil.process_iter() if in_group(process)]
    assert left == [], f"processes of the round still running after it returned: {left}"
    warning_lines = [line for line in stderr.splitlines() if re.search(r"warn|deprecat", line, re.IGNORECASE)]
    assert [line for line in warning_lines if ACTOR_TERMINATION not in line] == [], stderr[-3000:]
    assert len(warning_lines) <= 3  # num_users: at most one actor per SuperNode
