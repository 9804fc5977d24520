"""``dpmech run``'s command registration (:mod:`app.run_command`)."""

from app import options
from dpmech.cli import main as cli_main
from trainers.data import DATASETS


def test_run_is_one_of_dpmechs_own_commands():
    (run,) = [point for point in cli_main._plugins() if point.name == "run"]
    assert cli_main.is_own_command(run) and run.value == "app.run_command:register"


def test_the_written_out_dataset_names_are_the_datasets():
    assert options.DATASET_NAMES == DATASETS
