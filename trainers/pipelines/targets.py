"""Step 1 of the main job: a pipeline's configuration for a target (ε, δ), every privacy number from dpmech.

:func:`pipeline_config` turns the target into the pipeline's noise settings;
:func:`non_private_config` says how the pipeline's non-private accuracy is obtained.
Both read the config classes from :mod:`trainers.pipelines.registry`; on a dataset of public-network
features (``trainers.data.FEATURE_DATASETS``) they start from the config class's ``paper()``
settings, the seed's own at its scale. :func:`default_dataset` is each pipeline's dataset when the
user names none.
"""

from __future__ import annotations

import math

import dpmech
from dpmech import validation as check

from ..data import DATASETS, DIGITS, FEATURE_DATASETS, MNIST1D_CNN
from .registry import get_pipeline

# Shares of μ² for FedAUXfdp's scoring head and class head: a fifth of the privacy-loss variance to the
# scoring head, so that the tight composition of the two Gaussian releases meets the target.
FEDAUXFDP_SHARES = (1.0, 4.0)
# The pipelines whose noise pipeline_config calibrates to the target; the others have no ε to vary.
CALIBRATED_PIPELINES = ("fedauxfdp", "dphelmet", "fedgm")
# non_private_config's name for "the pipeline's own run is the non-private baseline".
THE_RUN = "the run itself"
# The pipelines that train linear heads on public-network features, as their seeds do: they alone can use a
# dataset of such features, and there they run at the seed's settings (their config class's ``paper()``).
FEATURE_PIPELINES = ("fedauxfdp", "dphelmet")
# FedAUXfdp's per-client output perturbation needs the seed's scale (≥ 2,000 records per client) for a
# meaningful accuracy at ε = 1: on digits (~54 records per client) ε = 1 leaves it near chance. DP-Helmet at
# its seed's scale (1,000 users, 100 epochs) takes minutes, so it stays on digits unless asked.
DEFAULT_DATASETS = {"fedauxfdp": MNIST1D_CNN}


def default_dataset(pipeline: str) -> str:
    """The dataset a round of ``pipeline`` uses when none is named: :data:`DEFAULT_DATASETS`, else digits."""
    get_pipeline(pipeline)
    return DEFAULT_DATASETS.get(pipeline, DIGITS)


def _check_dataset(pipeline: str, dataset: str) -> None:
    check.choice("dataset", dataset, DATASETS)
    if dataset in FEATURE_DATASETS and pipeline not in FEATURE_PIPELINES:
        raise ValueError(f"dataset {dataset!r} holds public-network features, which only "
                         f"{' and '.join(FEATURE_PIPELINES)} train on; {pipeline} needs raw inputs (digits or mnist1d)")


def _config(pipeline: str, dataset: str, **fields):
    _check_dataset(pipeline, dataset)
    config_class = get_pipeline(pipeline).config_class
    return config_class.paper(**fields) if dataset in FEATURE_DATASETS else config_class(**fields)


def pipeline_config(pipeline: str, epsilon: float, delta: float, dataset: str = DIGITS):
    """The pipeline's configuration for a total target (ε, δ) on ``dataset``, every privacy number from dpmech.

    On a dataset of public-network features the configuration is the class's ``paper()`` with
    the budget below (ValueError for a pipeline that needs raw inputs); otherwise its defaults.

    * fedauxfdp: the budget split between its two heads (:func:`dpmech.split_gaussian_budget`
      with :data:`FEDAUXFDP_SHARES`);
    * dphelmet: (ε, δ) of the blind average;
    * fedgm: ε of its label DP (labels are pure ε-DP, so δ is unused);
    * fedmd-nfdp and fedzda have no noise to calibrate: NFDP's (ε, δ) follow from the party
      size and the subsample size, and Fed-ZDA has no guarantee. The target is validated and
      then has no effect; the report states the pipeline's own claim.
    """
    epsilon = check.positive("epsilon", epsilon)
    delta = check.open_unit_interval("delta", delta)
    if pipeline == "fedauxfdp":
        (score_epsilon, score_delta), (class_epsilon, class_delta) = dpmech.split_gaussian_budget(
            epsilon, delta, FEDAUXFDP_SHARES)
        return _config(pipeline, dataset, score_epsilon=score_epsilon, score_delta=score_delta,
                       class_epsilon=class_epsilon, class_delta=class_delta)
    if pipeline == "dphelmet":
        return _config(pipeline, dataset, epsilon=epsilon, delta=delta)
    if pipeline == "fedgm":
        return _config(pipeline, dataset, label_epsilon=epsilon)
    return _config(pipeline, dataset)


def non_private_config(pipeline: str, delta: float, dataset: str = DIGITS):
    """(config, baseline, source): how the report gets the pipeline's non-private accuracy.

    ``config``: the pipeline's configuration without noise, trained once more (FedAUXfdp and
    DP-Helmet take ε = ∞: heads or average released without noise), else None. ``baseline``: the
    name of the pipeline's own baseline that is non-private (FedGM's configuration has no
    noiseless label release, but its baselines include the same synthesis with the true labels),
    or :data:`THE_RUN` where the run itself is non-private (Fed-ZDA has no guarantee), else None
    (FedMD-NFDP adds no noise, its privacy is the subsampling: there is nothing to remove).
    ``source``: the above in words. The summary's ``non_private.model`` is "separate run", the
    baseline's name, :data:`THE_RUN` or null.
    """
    delta = check.open_unit_interval("delta", delta)
    _check_dataset(pipeline, dataset)
    if pipeline == "fedauxfdp":
        half = delta / 2.0
        return (_config(pipeline, dataset, score_epsilon=math.inf, score_delta=half, class_epsilon=math.inf,
                        class_delta=half),
                None, "the same pipeline with both heads released without noise (ε = ∞)")
    if pipeline == "dphelmet":
        return (_config(pipeline, dataset, epsilon=math.inf, delta=delta), None,
                "the same pipeline averaged without noise (ε = ∞)")
    if pipeline == "fedgm":
        return (None, "synthetic_true_labels",
                "the pipeline's baseline synthetic_true_labels: the same synthesis with the true labels (no label noise)")
    if pipeline == "fedmd-nfdp":
        return None, None, "none: NFDP adds no noise (its privacy comes from subsampling), so there is no noise to remove"
    return None, THE_RUN, "the run itself: Fed-ZDA has no privacy guarantee (ε = ∞)"


__all__ = ["CALIBRATED_PIPELINES", "DEFAULT_DATASETS", "FEATURE_PIPELINES", "FEDAUXFDP_SHARES", "THE_RUN", "default_dataset",
           "non_private_config", "pipeline_config"]
