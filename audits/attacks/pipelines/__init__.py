"""Audits of the trained seed pipelines, one module each; they train through :mod:`trainers`.

``PIPELINE_AUDITS`` maps a pipeline name to ``(audit function, config class, run function)``,
imported on first use so that ``import audits.attacks.pipelines`` stays light. Every audit
returns a :class:`~audits.attacks.pipelines.record.PipelineAudit`.
"""

import importlib

_REGISTRY = {
    "fedauxfdp": ("audits.attacks.pipelines.fedauxfdp:audit_fedauxfdp", "trainers.pipelines.fedauxfdp:FedAuxFdpConfig",
                  "trainers.pipelines.fedauxfdp:run_fedauxfdp"),
    "dphelmet": ("audits.attacks.pipelines.dphelmet:audit_dphelmet", "trainers.pipelines.dphelmet:DpHelmetConfig",
                 "trainers.pipelines.dphelmet:run_dphelmet"),
    "fedmd-nfdp": ("audits.attacks.pipelines.fedmd_nfdp:audit_fedmd_nfdp",
                   "trainers.pipelines.fedmd_nfdp:FedMdNfdpConfig", "trainers.pipelines.fedmd_nfdp:run_fedmd_nfdp"),
    "fedgm": ("audits.attacks.pipelines.fedgm:audit_fedgm", "trainers.pipelines.fedgm:FedGmConfig",
              "trainers.pipelines.fedgm:run_fedgm"),
    "fedzda": ("audits.attacks.pipelines.fedzda:audit_fedzda", "trainers.pipelines.fedzda:FedZdaConfig",
               "trainers.pipelines.fedzda:run_fedzda"),
}
PIPELINES = tuple(_REGISTRY)


def _load(path):
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def pipeline_parts(name: str):
    """(audit function, config class, run function) of the pipeline ``name``."""
    if name not in _REGISTRY:
        raise ValueError(f"pipeline must be one of {', '.join(PIPELINES)} (got {name!r})")
    return tuple(_load(path) for path in _REGISTRY[name])


__all__ = ["PIPELINES", "pipeline_parts"]
