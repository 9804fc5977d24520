"""``run_flower_round``: one round of a registered pipeline in Flower's simulation engine.

The entry point of ``dpmech run --engine flower``. Pipelines on Flower: ``dphelmet`` (SecAgg+,
:mod:`.dphelmet`) and ``fedauxfdp`` (with its FedAVG+P and FedD+P baselines, :mod:`.fedauxfdp`).
FedMD-NFDP, FedGM and Fed-ZDA are not deployed on Flower yet and are refused with ValueError.
"""

from __future__ import annotations

from ..pipelines.registry import get_pipeline

FLOWER_PIPELINES = ("dphelmet", "fedauxfdp")


def run_flower_round(name, data, config=None, seed: int = 0, **options):
    """Run pipeline ``name`` on ``data`` in Flower's simulation engine; returns a PipelineResult.

    ``config`` defaults to the pipeline's config class's defaults and must be an instance of it.
    ``options`` go to :func:`~trainers.flower.dphelmet.run_flower_dphelmet` (for ``dphelmet``:
    ``reconstruction_threshold``, ``minimum_honest_shares``, ``clip_failure_probability``,
    ``dropped_users``, ``backend_config``) or :func:`~trainers.flower.fedauxfdp.run_flower_fedauxfdp`
    (``backend_config``). For ``dphelmet`` the PipelineResult's notes and guarantees carry the
    SecAgg+ accounting; :func:`~trainers.flower.dphelmet.run_flower_dphelmet` also returns the
    encoding, survivors and upload sizes.
    """
    pipeline = get_pipeline(name)
    if pipeline.name not in FLOWER_PIPELINES:
        raise ValueError(f"name must be one of {', '.join(FLOWER_PIPELINES)} with --engine flower (got {name!r})")
    config_class = pipeline.config_class
    config = config_class() if config is None else config
    if not isinstance(config, config_class):
        raise ValueError(f"config must be a {config_class.__name__} (got {type(config).__name__})")
    if pipeline.name == "dphelmet":
        from .dphelmet import run_flower_dphelmet

        return run_flower_dphelmet(data, config, seed, **options).result
    from .fedauxfdp import run_flower_fedauxfdp

    return run_flower_fedauxfdp(data, config, seed, **options)
