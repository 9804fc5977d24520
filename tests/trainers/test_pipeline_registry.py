import inspect

import pytest

from trainers.data import load_dataset
from trainers.pipelines import PIPELINE_NAMES, PIPELINES, get_pipeline, run_pipeline


def test_every_registered_pipeline_loads_and_follows_one_convention():
    for name, pipeline in PIPELINES.items():
        assert pipeline.name == name
        parameters = inspect.signature(pipeline.run_function).parameters
        assert list(parameters)[1:3] == ["config", "seed"]
        assert parameters["config"].default is not inspect.Parameter.empty
        assert parameters["seed"].default == 0
        for keyword in ("n_jobs", "progress"):
            assert parameters[keyword].kind is inspect.Parameter.KEYWORD_ONLY
        assert parameters["progress"].default is False
        assert isinstance(pipeline.config_class(), pipeline.config_class)


def test_every_audit_exists_for_every_registered_pipeline():
    from audits.attacks.pipelines import PIPELINES as AUDITED, audit_function

    assert AUDITED == PIPELINE_NAMES
    for name in PIPELINE_NAMES:
        assert callable(audit_function(name))


@pytest.mark.parametrize("name, threads", [("fedprox", 1), ("fedauxfdp", 0)])
def test_bad_pipeline_arguments_name_the_parameter(name, threads):
    parameter = "pipeline" if name == "fedprox" else "threads"
    with pytest.raises(ValueError, match=parameter):
        if name == "fedprox":
            get_pipeline(name)
        else:
            run_pipeline(name, load_dataset("digits"), threads=threads)


def test_run_pipeline_refuses_another_pipelines_config():
    from trainers.pipelines import DpHelmetConfig

    with pytest.raises(ValueError, match="config must be a FedAuxFdpConfig"):
        run_pipeline("fedauxfdp", load_dataset("digits"), DpHelmetConfig())


def test_run_pipeline_gives_the_pipelines_own_result_whatever_the_thread_cap():
    from trainers.pipelines import DpHelmetConfig, run_dphelmet

    data = load_dataset("digits")
    config = DpHelmetConfig(num_users=2, records_per_user=10, epochs=1)
    direct = run_dphelmet(data, config, seed=3)
    for threads in (1, 2):
        through_registry = run_pipeline("dphelmet", data, config, seed=3, threads=threads)
        assert through_registry.accuracy == direct.accuracy
        assert through_registry.guarantees["tight"].epsilon == direct.guarantees["tight"].epsilon
