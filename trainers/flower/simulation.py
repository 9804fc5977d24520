"""``run_flower_round``: one round of a registered pipeline in Flower's simulation engine.

The entry point of ``dpmech run --engine flower``. The pipelines on Flower are those whose registry
entry names a ``flower_function`` (:mod:`trainers.pipelines.registry`): ``dphelmet`` (SecAgg+,
:mod:`.dphelmet`) and ``fedauxfdp`` (with its FedAVG+P and FedD+P baselines, :mod:`.fedauxfdp`). The
others are not deployed on Flower yet and are refused with ValueError.
"""

from __future__ import annotations

import importlib

from ..federation import PipelineResult
from ..pipelines.registry import PIPELINES, get_pipeline

FLOWER_PIPELINES = tuple(name for name, pipeline in PIPELINES.items() if pipeline.flower_function is not None)


def run_flower_round(name, data, config=None, seed: int = 0, **options) -> PipelineResult:
    """Run pipeline ``name`` on ``data`` in Flower's simulation engine; returns a PipelineResult.

    ``config`` defaults to the pipeline's config class's defaults and must be an instance of it.
    ``options`` go to the pipeline's Flower function: :func:`~trainers.flower.dphelmet.run_flower_dphelmet`
    (for ``dphelmet``: ``reconstruction_threshold``, ``minimum_honest_shares``, ``clip_failure_probability``,
    ``dropped_users``, ``backend_config``) or :func:`~trainers.flower.fedauxfdp.run_flower_fedauxfdp`
    (``backend_config``). For ``dphelmet`` the PipelineResult's notes and guarantees carry the
    SecAgg+ accounting; :func:`~trainers.flower.dphelmet.run_flower_dphelmet` also returns the
    encoding, survivors and upload sizes.
    """
    pipeline = get_pipeline(name)
    if pipeline.flower_function is None:
        raise ValueError(f"name must be one of {', '.join(FLOWER_PIPELINES)} with --engine flower (got {name!r})")
    config_class = pipeline.config_class
    config = config_class() if config is None else config
    if not isinstance(config, config_class):
        raise ValueError(f"config must be a {config_class.__name__} (got {type(config).__name__})")
    module, function = pipeline.flower_function.split(":")
    outcome = getattr(importlib.import_module(f".{module}", __package__), function)(data, config, seed, **options)
    # A Flower function returns the round's PipelineResult, or a record of the deployed round that holds it.
    return outcome if isinstance(outcome, PipelineResult) else outcome.result
