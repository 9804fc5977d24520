"""The seed pipelines, one module each: FedAUXfdp (Hoech et al. 2022), FedMD-NFDP (Sun & Lyu
2021), Distributed DP-Helmet (Kirschte et al. 2022), FedGM (Electronics 2024) and Fed-ZDA (Hao et al. 2021). Every one returns a :class:`trainers.federation.PipelineResult`.

:mod:`trainers.pipelines.registry` names them (``PIPELINES``, ``run_pipeline``). The pipeline
modules import torch, so the names below load on first use (PEP 562) and reading the registry
stays light.
"""

import importlib

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


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'trainers.pipelines' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + list(_EXPORTS))


__all__ = ["PIPELINES", "PIPELINE_NAMES", "Pipeline", "get_pipeline", "run_pipeline", *_EXPORTS]
