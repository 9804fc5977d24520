"""The seed pipelines, one module each: FedAUXfdp (seed 000), FedMD-NFDP (001), Distributed DP-Helmet
(002), FedGM (003) and Fed-ZDA (004). Every one returns a :class:`trainers.federation.PipelineResult`."""

from .dphelmet import DpHelmetConfig, run_dphelmet
from .fedauxfdp import FedAuxFdpConfig, run_fedauxfdp
from .fedgm import FedGmConfig, run_fedgm
from .fedmd_nfdp import FedMdNfdpConfig, run_fedmd_nfdp
from .fedzda import FedZdaConfig, run_fedzda

__all__ = [
    "DpHelmetConfig",
    "FedAuxFdpConfig",
    "FedGmConfig",
    "FedMdNfdpConfig",
    "FedZdaConfig",
    "run_dphelmet",
    "run_fedauxfdp",
    "run_fedgm",
    "run_fedmd_nfdp",
    "run_fedzda",
]
