"""A round's configuration for a target (ε, δ) on each dataset (:mod:`trainers.pipelines.targets`)."""

import dataclasses
import math

import pytest

import dpmech
from trainers.data import DATASETS, FEATURE_DATASETS
from trainers.pipelines import DpHelmetConfig, FedAuxFdpConfig
from trainers.pipelines.registry import PIPELINE_NAMES, PIPELINES
from trainers.pipelines.targets import default_dataset, non_private_config, pipeline_config

RAW_INPUT_PIPELINES = [name for name, pipeline in PIPELINES.items() if not pipeline.trains_on_features]


def test_fedauxfdp_defaults_to_the_feature_dataset_and_the_others_to_digits():
    assert default_dataset("fedauxfdp") == "mnist1d-cnn"
    assert all(default_dataset(name) == "digits" for name in PIPELINE_NAMES if name != "fedauxfdp")
    assert all(default_dataset(name) in DATASETS for name in PIPELINE_NAMES)
    with pytest.raises(ValueError, match="pipeline"):
        default_dataset("fedprox")


@pytest.mark.parametrize("epsilon,delta", [(1.0, 1e-5), (0.3, 1e-7), (8.0, 1e-3)])
def test_fedauxfdp_on_features_is_the_seeds_setting_with_the_target_split_between_the_heads(epsilon, delta):
    (score_epsilon, score_delta), (class_epsilon, class_delta) = dpmech.split_gaussian_budget(epsilon, delta, (1.0, 4.0))
    budget = dict(score_epsilon=score_epsilon, score_delta=score_delta, class_epsilon=class_epsilon, class_delta=class_delta)
    assert pipeline_config("fedauxfdp", epsilon, delta, "mnist1d-cnn") == FedAuxFdpConfig.paper(**budget)
    assert pipeline_config("fedauxfdp", epsilon, delta, "digits") == FedAuxFdpConfig(**budget)
    assert pipeline_config("fedauxfdp", epsilon, delta) == FedAuxFdpConfig(**budget)


def test_dphelmet_on_features_is_the_seeds_setting_at_the_target():
    assert pipeline_config("dphelmet", 2.0, 1e-6, "mnist1d-cnn") == DpHelmetConfig.paper(epsilon=2.0, delta=1e-6)
    free, baseline, _ = non_private_config("dphelmet", 1e-6, "mnist1d-cnn")
    assert free == DpHelmetConfig.paper(epsilon=math.inf, delta=1e-6) and baseline is None


def test_the_non_private_fedauxfdp_on_features_differs_from_the_private_one_in_the_noise_only():
    free, baseline, _ = non_private_config("fedauxfdp", 1e-5, "mnist1d-cnn")
    private = pipeline_config("fedauxfdp", 1.0, 1e-5, "mnist1d-cnn")
    assert baseline is None and free.score_epsilon == free.class_epsilon == math.inf
    assert dataclasses.replace(free, score_epsilon=private.score_epsilon, class_epsilon=private.class_epsilon,
                               score_delta=private.score_delta, class_delta=private.class_delta) == private


@pytest.mark.parametrize("pipeline", RAW_INPUT_PIPELINES)
@pytest.mark.parametrize("dataset", FEATURE_DATASETS)
def test_a_pipeline_of_raw_inputs_refuses_a_feature_dataset_by_name(pipeline, dataset):
    for call in (lambda: pipeline_config(pipeline, 1.0, 1e-5, dataset), lambda: non_private_config(pipeline, 1e-5, dataset)):
        with pytest.raises(ValueError, match=f"dataset '{dataset}'.*{pipeline} needs raw inputs"):
            call()


@pytest.mark.parametrize("pipeline", PIPELINE_NAMES)
def test_an_unknown_dataset_is_refused_by_name(pipeline):
    with pytest.raises(ValueError, match="dataset"):
        pipeline_config(pipeline, 1.0, 1e-5, "cifar10")
    with pytest.raises(ValueError, match="dataset"):
        non_private_config(pipeline, 1e-5, "cifar10")


@pytest.mark.parametrize("cache_dir", [3, b"/tmp", "", "  ", ["/tmp"]])
def test_a_cache_dir_that_is_no_folder_path_is_refused_by_name(cache_dir):
    from trainers.data import load_dataset
    from app.main_job import run_main_job

    with pytest.raises(ValueError, match="cache_dir"):
        load_dataset("mnist1d-cnn", cache_dir=cache_dir)
    with pytest.raises(ValueError, match="cache_dir"):
        run_main_job(cache_dir=cache_dir, progress=False)
