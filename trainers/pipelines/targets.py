"""Step 1 of the main job: a pipeline's configuration for a target (ε, δ), every privacy number from dpmech.

Each pipeline declares its own: its module's ``config_for(epsilon, delta, dataset)`` (the noise
settings for the target) and ``non_private_config(delta, dataset)`` (how its non-private accuracy is
obtained), and in its registry entry (:mod:`trainers.pipelines.registry`) its default dataset, whether
it trains on public-network features and whether its noise is calibrated to the target. This module
checks the arguments and dispatches: :func:`pipeline_config`, :func:`non_private_config`,
:func:`default_dataset`. On a dataset of public-network features (``trainers.data.FEATURE_DATASETS``)
a configuration starts from the config class's ``paper()`` settings, the seed's own at its scale
(:func:`configured`).
"""

from __future__ import annotations

from dpmech import validation as check

from ..data import DATASETS, DIGITS, FEATURE_DATASETS, USER_DATA
from .registry import PIPELINES, get_pipeline

# non_private_config's name for "the pipeline's own run is the non-private baseline".
THE_RUN = "the run itself"


def default_dataset(pipeline: str) -> str:
    """The dataset a round of ``pipeline`` uses when none is named: its registry entry's ``default_dataset``."""
    return get_pipeline(pipeline).default_dataset


def check_dataset(pipeline: str, dataset: str) -> None:
    """ValueError unless ``dataset`` is one of ``trainers.data.DATASETS``, or ``trainers.data.USER_DATA`` (the
    user's own arrays, raw inputs), that ``pipeline`` trains on: a dataset of public-network features only for
    the pipelines whose registry entry says ``trains_on_features``."""
    check.choice("dataset", dataset, (*DATASETS, USER_DATA))
    if dataset in FEATURE_DATASETS and not get_pipeline(pipeline).trains_on_features:
        feature_pipelines = [name for name, entry in PIPELINES.items() if entry.trains_on_features]
        raise ValueError(f"dataset {dataset!r} holds public-network features, which only "
                         f"{' and '.join(feature_pipelines)} train on; {pipeline} needs raw inputs (digits or mnist1d)")


def configured(config_class: type, dataset: str, **fields):
    """A ``config_class`` with ``fields`` for a round on ``dataset``, a dataset the pipeline trains on (as
    :func:`pipeline_config` checks): the class's ``paper(**fields)`` on a dataset of public-network
    features, where the pipeline runs at its seed's settings, else its defaults with ``fields``. The
    pipelines' ``config_for`` and ``non_private_config`` build on it."""
    return config_class.paper(**fields) if dataset in FEATURE_DATASETS else config_class(**fields)


def pipeline_config(pipeline: str, epsilon: float, delta: float, dataset: str = DIGITS):
    """The pipeline's configuration for a total target (ε, δ) on ``dataset``, every privacy number from dpmech:
    the pipeline module's ``config_for(epsilon, delta, dataset)`` after checking the target and the dataset.

    On a dataset of public-network features the configuration is the class's ``paper()`` with the
    pipeline's budget (ValueError for a pipeline that needs raw inputs); otherwise its defaults. A pipeline
    whose registry entry is not ``calibrated`` has no noise to calibrate: the target is validated and then
    has no effect; the report states the pipeline's own claim.
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit_interval("delta", delta)
    check_dataset(pipeline, dataset)
    return get_pipeline(pipeline).load().config_for(epsilon, delta, dataset)


def non_private_config(pipeline: str, delta: float, dataset: str = DIGITS):
    """(config, baseline, source): how the report gets the pipeline's non-private accuracy, the pipeline
    module's ``non_private_config(delta, dataset)`` after checking ``delta`` and the dataset.

    ``config``: the pipeline's configuration without noise, trained once more, else None. ``baseline``:
    the name of the pipeline's own baseline that is non-private, or :data:`THE_RUN` where the run itself
    is non-private, else None (nothing to remove). ``source``: the above in words. The summary's
    ``non_private.model`` is "separate run", the baseline's name, :data:`THE_RUN` or null.
    """
    delta = check.open_unit_interval("delta", delta)
    check_dataset(pipeline, dataset)
    return get_pipeline(pipeline).load().non_private_config(delta, dataset)


__all__ = ["THE_RUN", "check_dataset", "configured", "default_dataset", "non_private_config", "pipeline_config"]
