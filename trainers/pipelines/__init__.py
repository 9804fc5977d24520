"""The seed pipelines, one module each: FedAUXfdp (Hoech et al. 2022), FedMD-NFDP (Sun & Lyu
2021), Distributed DP-Helmet (Kirschte et al. 2022), FedGM (Electronics 2024) and Fed-ZDA (Hao et al. 2021). Every one returns a :class:`trainers.federation.PipelineResult`.

:mod:`trainers.pipelines.registry` names them (``PIPELINES``, ``run_pipeline``). The pipeline
modules import torch, so the names below load on first use (PEP 562) and reading the registry
stays light.
"""

from dpmech.lazy_exports import lazy_exports

from .registry import PIPELINE_NAMES, PIPELINES, Pipeline, get_pipeline, run_pipeline

_EXPORTS = {
    "DpHelmetConfig": "dphelmet",
    "run_dphelmet": "dphelmet",
    "FedAuxFdpConfig": "fedauxfdp",
    "run_fedauxfdp": "fedauxfdp",
    "FedGmConfig": "fedgm",
    "run_fedgm": "fedgm",
    "FedMdNfdpConfig": "fedmd_nfdp",
    "run_fedmd_nfdp": "fedmd_nfdp",
    "FedZdaConfig": "fedzda",
    "run_fedzda": "fedzda",
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())


__all__ = ["PIPELINES", "PIPELINE_NAMES", "Pipeline", "get_pipeline", "run_pipeline", *_EXPORTS]
