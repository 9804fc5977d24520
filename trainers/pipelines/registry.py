"""The one registry of the seed pipelines, and the one way to run any of them.

Every seed pipeline is a module of :mod:`trainers.pipelines` with the same shape:
a frozen, validated config class; a public preparation of the round from
(data, config, seed); a training step per client; a release step that is the
only path from a client's private data to its
:class:`~trainers.federation.ClientMessage` (noise added, events attached);
a server step; and a run function whose ledger is built from the messages'
own events. The audits in :mod:`audits.attacks.pipelines` sample releases
through those release steps. This registry names them; the command line, the
main job and the audits read it, and nothing else lists the pipelines.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from dpmech import validation as check


@dataclass(frozen=True)
class Pipeline:
    """One seed pipeline: its command-line name, its module and what its run function takes.

    ``takes_split``: the run function takes a :class:`~trainers.data.FederatedSplit` made by
    ``split_federated(data, seed)`` rather than the raw labelled data.
    """

    name: str
    module: str
    config_class_name: str
    run_function_name: str
    takes_split: bool
    seed_paper: str

    def load(self):
        """The pipeline's module (imported on first use: the pipelines import torch)."""
        return importlib.import_module(f"trainers.pipelines.{self.module}")

    @property
    def config_class(self) -> type:
        return getattr(self.load(), self.config_class_name)

    @property
    def run_function(self):
        return getattr(self.load(), self.run_function_name)


PIPELINES = {
    pipeline.name: pipeline
    for pipeline in (
        Pipeline("fedauxfdp", "fedauxfdp", "FedAuxFdpConfig", "run_fedauxfdp", False, "000 FedAUXfdp"),
        Pipeline("dphelmet", "dphelmet", "DpHelmetConfig", "run_dphelmet", False, "002 Distributed DP-Helmet"),
        Pipeline("fedmd-nfdp", "fedmd_nfdp", "FedMdNfdpConfig", "run_fedmd_nfdp", True, "001 FedMD-NFDP"),
        Pipeline("fedgm", "fedgm", "FedGmConfig", "run_fedgm", True, "003 FedGM"),
        Pipeline("fedzda", "fedzda", "FedZdaConfig", "run_fedzda", True, "004 Fed-ZDA"),
    )
}
PIPELINE_NAMES = tuple(PIPELINES)


def get_pipeline(name) -> Pipeline:
    """The registered pipeline ``name``; ValueError naming the valid names otherwise."""
    if not isinstance(name, str) or name not in PIPELINES:
        raise ValueError(f"pipeline must be one of {', '.join(PIPELINE_NAMES)} (got {name!r})")
    return PIPELINES[name]


def run_pipeline(name, data, config=None, seed: int = 0, *, n_jobs=None, progress: bool = False, threads: int = 1):
    """Run the pipeline ``name`` on labelled ``data`` with one convention for all five.

    ``config`` defaults to the pipeline's config class's defaults and must be an instance of it;
    pipelines that take a federated split get ``split_federated(data, seed)``, as their audits do.
    ``threads`` caps the BLAS/OpenMP pools (threadpoolctl) and torch's intra-op pool of each
    process: on small machines the pools' default of one thread per core slows the many small
    fits of a round severalfold, and parallelism comes from ``n_jobs`` (joblib) instead.
    Returns the pipeline's :class:`~trainers.federation.PipelineResult`.
    """
    from threadpoolctl import threadpool_limits

    from ..data import split_federated

    pipeline = get_pipeline(name)
    config_class = pipeline.config_class
    config = config_class() if config is None else config
    if not isinstance(config, config_class):
        raise ValueError(f"config must be a {config_class.__name__} (got {type(config).__name__})")
    seed = check.integer_scalar("seed", seed, 0)
    progress = check.boolean("progress", progress)
    threads = check.integer_scalar("threads", threads, 1)
    with threadpool_limits(limits=threads):
        if pipeline.takes_split:
            return pipeline.run_function(split_federated(data, seed), config, seed, n_jobs=n_jobs, progress=progress,
                                         torch_threads=threads)
        return pipeline.run_function(data, config, seed=seed, n_jobs=n_jobs, progress=progress)
