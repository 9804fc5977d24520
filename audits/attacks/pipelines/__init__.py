"""Audits of the trained seed pipelines, one module each, named after the pipeline's module.

The pipelines are those of :data:`trainers.pipelines.registry.PIPELINES` (the one registry); the
audit of pipeline ``name`` is ``audit_<module>`` in ``audits.attacks.pipelines.<module>``,
imported on first use so that ``import audits.attacks.pipelines`` stays light. Every audit
samples releases through the pipeline's own release step, reads the claim from the release's
events, and returns a :class:`~audits.attacks.pipelines.record.PipelineAudit`.
"""

import importlib

from trainers.pipelines.registry import PIPELINE_NAMES, get_pipeline

PIPELINES = PIPELINE_NAMES


def audit_function(name: str):
    """The audit function of the registered pipeline ``name``."""
    pipeline = get_pipeline(name)
    module = importlib.import_module(f"{__name__}.{pipeline.module}")
    return getattr(module, f"audit_{pipeline.module}")


def pipeline_parts(name: str):
    """(audit function, config class, run function) of the pipeline ``name``."""
    pipeline = get_pipeline(name)
    return audit_function(name), pipeline.config_class, pipeline.run_function


__all__ = ["PIPELINES", "audit_function", "pipeline_parts"]
