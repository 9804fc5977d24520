"""benchmarks/seed_fedgm.py runs at tiny size, prints the seed's table beside its own, and reads its cache."""

import pytest

from benchmarks import seed_fedgm

pytestmark = pytest.mark.filterwarnings("ignore::dpmech.UnprotectedReleaseWarning", "ignore::dpmech.NoGuaranteeWarning")


def test_seed_fedgm_prints_the_seed_table_beside_this_run_and_reuses_its_cache(tmp_path, capsys):
    arguments = ["--quick", "--settings", "c1", "--seeds", "1", "--cache-dir", str(tmp_path)]
    seed_fedgm.main(arguments)
    first = capsys.readouterr().out
    assert "does NOT protect the synthetic images" in first
    assert "Seed 003 Table 1" in first and "29.8 ± 7.9" in first and "99.3 ± 0.1" in first  # the seed's #C = 1 row
    assert "REAL (all pooled)" in first and "random real" in first and "(cached)" not in first
    assert len(list(tmp_path.glob("*.json"))) == 1
    seed_fedgm.main(arguments)
    assert "(cached)" in capsys.readouterr().out


def test_configurations_follow_the_seeds_splits():
    arguments = seed_fedgm.argparse.Namespace(matching_budget="paper", outer=0, inner=0, ipc=0, real_batch=128, width=128,
                                              label_epsilon=1.0, clustering="embeddings", quick=False)
    pathological = seed_fedgm.configuration("c2", arguments)
    assert (pathological.partition, pathological.classes_per_client, pathological.num_clients) == ("pathological", 2, 10)
    assert (pathological.outer_iterations, pathological.matching_steps, pathological.recluster_interval) == (300, 100, 10)
    assert seed_fedgm.configuration("dirichlet", arguments).alpha == 0.5


@pytest.mark.slow  # the benchmark's FedGM rounds at two budgets end to end: 5 s of CPU
def test_budget_curve_prints_one_row_per_budget_with_its_own_matching_steps(tmp_path, capsys):
    seed_fedgm.main(["--quick", "--settings", "c2", "--seeds", "1", "--cache-dir", str(tmp_path), "--budget-curve", "1x1", "2x3"])
    out = capsys.readouterr().out
    assert "against the matching budget" in out and "does NOT protect the synthetic images" in out
    assert "#C = 2, 1 × 1, seed 0" in out and "#C = 2, 2 × 3, seed 0" in out
    assert "Seed 003 Table 1" not in out  # the curve replaces the seed's table
    assert len(list(tmp_path.glob("*.json"))) == 2  # the budget is part of the cache key


@pytest.mark.parametrize("budget", ["10", "0x5", "3x", "ax2", "2x2x2"])
def test_budget_curve_refuses_malformed_budgets(budget, capsys):
    with pytest.raises(SystemExit) as exit_info:
        seed_fedgm.main(["--quick", "--budget-curve", budget])
    assert exit_info.value.code == 2 and "OUTERxINNER" in capsys.readouterr().err
