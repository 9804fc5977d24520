"""The seed pipelines, one module each: FedAUXfdp (seed 000), FedMD-NFDP (001), Distributed DP-Helmet
(002), FedGM (003) and Fed-ZDA (004). Every one returns a :class:`trainers.federation.PipelineResult`."""

from .dphelmet import DpHelmetConfig, run_dphelmet
from .fedauxfdp import FedAuxFdpConfig, run_fedauxfdp

__all__ = ["DpHelmetConfig", "FedAuxFdpConfig", "run_dphelmet", "run_fedauxfdp"]
