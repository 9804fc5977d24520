"""benchmarks/seed_fedzda.py at tiny size: it prints the seed's rows beside ours with the
explanations, and a second call reads every run from its cache."""

import io
import pathlib
import sys

import pytest
from rich.console import Console

pytestmark = pytest.mark.filterwarnings("ignore::dpmech.NoGuaranteeWarning")

TINY = ["--seeds", "1", "--clients", "4", "--rounds", "3", "--augmentation-start", "1", "--oracle-samples", "2",
        "--zsdg-iterations", "2", "--oracle-epochs", "1"]


@pytest.fixture
def benchmark(monkeypatch):
    # the script imports its sibling seed_headlines, as when run as `python benchmarks/seed_fedzda.py`
    monkeypatch.syspath_prepend(str(pathlib.Path(__file__).resolve().parents[2] / "benchmarks"))
    import seed_fedzda

    yield seed_fedzda
    sys.modules.pop("seed_fedzda", None)


def _run(benchmark, cache):
    output = io.StringIO()
    runs = benchmark.main(benchmark.parse_arguments([*TINY, "--cache-dir", str(cache)]), Console(file=output, width=240))
    return runs, output.getvalue()


@pytest.mark.slow  # 3.4 s of CPU in CI's default run of 06381b9 (3 s rule, stop 39)
def test_seed_fedzda_prints_seed_rows_beside_ours_and_caches(benchmark, tmp_path):
    runs, first = _run(benchmark, tmp_path)
    # 3 methods × 1 seed, each computed once; FedAvg is Fed-ZDAC's paired baseline
    assert first.count("  ran ") == 3 and len(list(tmp_path.glob("fedzda_*.json"))) == 3
    assert set(runs) == {"FedAvg", "Fed-ZDAC", "Fed-ZDAS (Algorithm 3)", "Fed-ZDAS (late start)"}
    assert runs["FedAvg"][0]["fairness"]["fed_zda"] == runs["Fed-ZDAC"][0]["fairness"]["fedavg"]
    for text in ("97.98 ± 0.01 %", "98.21 ± 0.08 %", "2.11 ± 0.39", "Fed-ZDAS (late start)", "NOT differentially private",
                 "global model", "inverted from last round's client models"):
        assert text in first
    again, second = _run(benchmark, tmp_path)
    assert "  ran " not in second and again == runs
    assert second[second.index("NOT differentially private"):] == first[first.index("NOT differentially private"):]


def test_seed_scale_is_seed_004s_protocol_on_mnist1d_and_explicit_options_override_it(benchmark):
    config = benchmark.base_config(benchmark.parse_arguments(["--scale", "seed"]))
    # seed 004 §4.1: 100 clients, γ = 0.1, T = 100, E = 5, B = 10, SGD at 0.02; §4.6: augmentation from round 80
    assert (config.num_clients, config.client_fraction, config.rounds, config.local_epochs, config.batch_size) == (100, 0.1, 100, 5, 10)
    assert (config.learning_rate, config.augmentation_start, config.partition, config.shards_per_client) == (0.02, 80, "shards", 2)
    assert config.input_shape == (1, 40) and config.stacked_clients
    # Fed-ZDAS's burn-in start is Algorithm 3's own at this scale: the same configuration, so the same cached run
    assert benchmark.method_config(config, "Fed-ZDAS (late start)") == benchmark.method_config(config, "Fed-ZDAS (Algorithm 3)")
    smaller = benchmark.base_config(benchmark.parse_arguments(["--scale", "seed", "--rounds", "30", "--augmentation-start", "24"]))
    assert (smaller.rounds, smaller.augmentation_start, smaller.num_clients) == (30, 24, 100)
    digits = benchmark.base_config(benchmark.parse_arguments([]))
    assert (digits.input_shape, digits.num_clients, digits.rounds) == ((1, 8, 8), 10, 16)


def test_cache_key_depends_on_changed_fields_only_and_a_record_must_match_the_config(benchmark):
    from dataclasses import asdict, replace

    config = benchmark.base_config(benchmark.parse_arguments(["--scale", "seed"]))
    key = benchmark._cache_key(config, 0, "mnist1d")
    assert key == benchmark._cache_key(replace(config), 0, "mnist1d")
    assert len({key, benchmark._cache_key(config, 1, "mnist1d"), benchmark._cache_key(config, 0, "digits"),
                benchmark._cache_key(replace(config, zsdg_iterations=300), 0, "mnist1d")}) == 4
    # a record written before a defaulted field existed still matches; one with another value does not
    stored = {name: value for name, value in asdict(config).items() if name != "server_label_smoothing"}
    assert benchmark._same_config(stored, config)
    assert not benchmark._same_config(dict(stored, rounds=99), config)
    assert not benchmark._same_config(stored, replace(config, server_label_smoothing=0.1))


@pytest.mark.slow
def test_server_step_trains_copies_of_fedavgs_final_model_beside_real_and_noise_controls(benchmark, tmp_path):
    output = io.StringIO()
    result = benchmark.main(benchmark.parse_arguments([*TINY, "--server-step", "--cache-dir", str(tmp_path)]),
                            Console(file=output, width=240))
    (rows,) = result["server_step"]
    assert list(rows) == ["FedAvg (before the step)", *benchmark.SERVER_STEP_VARIANTS, *benchmark.SERVER_STEP_CONTROLS]
    assert all(0 <= accuracy <= 1 for _, accuracy in rows.values())
    # the real-record control carries true labels: an oracle at its test accuracy agrees with most of them,
    # far more than with labels given to Gaussian noise
    assert rows["control: real public records"][0] > rows["control: Gaussian noise"][0] + 0.3
    assert "One Fed-ZDAS server step on FedAvg's final model" in output.getvalue()


def test_investigation_runs_the_server_at_a_tenth_of_the_scales_client_rate(benchmark):
    for scale in ("digits", "seed"):
        base = benchmark.base_config(benchmark.parse_arguments(["--scale", scale]))
        config = benchmark.method_config(base, "Fed-ZDAS (server SGD at a tenth of the clients' rate)")
        assert config.server_learning_rate == pytest.approx(0.1 * base.learning_rate, rel=1e-15)
        assert config.variant == "server" and config.learning_rate == base.learning_rate
