"""The clients scale out through joblib: a local Dask cluster gives the n_jobs=1 result exactly."""

import joblib
import numpy as np
import pytest

from trainers.data import load_digits_dataset
from trainers.pipelines import FedAuxFdpConfig, run_fedauxfdp


def test_fedauxfdp_on_a_local_dask_cluster_equals_the_serial_run():
    # Imported here, not at collection, which every xdist worker pays for every file (issue 32).
    distributed = pytest.importorskip("dask.distributed")
    data = load_digits_dataset()
    config = FedAuxFdpConfig(num_clients=4, num_components=8)
    serial = run_fedauxfdp(data, config, seed=11, n_jobs=1)
    with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
            distributed.Client(cluster), joblib.parallel_config(backend="dask"):
        on_dask = run_fedauxfdp(data, config, seed=11, progress=True)
    assert on_dask.accuracy == serial.accuracy and on_dask.baselines == serial.baselines
    for first, second in zip(serial.messages, on_dask.messages):
        assert first.client == second.client and first.events == second.events
        for name in first.payload:
            np.testing.assert_array_equal(first.payload[name], second.payload[name])
