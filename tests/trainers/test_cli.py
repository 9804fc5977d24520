"""``dpmech run``'s command registration (:mod:`trainers.cli`)."""

from dpmech.cli import main as cli_main
from trainers import cli
from trainers.data import DATASETS


def test_run_is_one_of_dpmechs_own_commands():
    assert cli_main.OWN_COMMANDS["run"] == "trainers.cli:register_run"


def test_the_written_out_dataset_names_are_the_datasets():
    assert cli.DATASET_NAMES == DATASETS
