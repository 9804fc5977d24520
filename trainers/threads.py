"""Thread pools for one fit: BLAS/OpenMP through threadpoolctl and torch's intra-op pool."""

from __future__ import annotations

import contextlib
import functools

from threadpoolctl import ThreadpoolController

from dpmech import validation as check

from .networks import torch_threads


@contextlib.contextmanager
def limited_threads(count):
    """Run the block with at most ``count`` threads in every BLAS/OpenMP pool and in torch's, then restore.

    ``None`` leaves the pools as they are. The trainers default to 1: their fits are small
    products (batch × d by d × C) for which a pool costs more than it saves on small machines
    (one PSGD run: 34 s with 2 threads against 0.02 s with 1 on a loaded 2-core machine), and
    parallel work comes from joblib workers, one thread each. Both settings are process-wide, so
    fits in concurrent Python threads of one process must agree on ``count``.
    """
    if count is None:
        yield
        return
    count = check.integer_scalar("threads", count, 1)
    with _controller().limit(limits=count), torch_threads(count):
        yield


@functools.cache
def _controller() -> ThreadpoolController:
    # Scanning the loaded libraries costs milliseconds; the pools are those loaded by the first fit
    # (numpy, scipy, torch and scikit-learn are all imported by then).
    return ThreadpoolController()
