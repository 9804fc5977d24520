"""The digits data set as module-scoped fixtures, defined once for the pipeline tests that import them
(``from tests.trainers.digits_fixtures import digits``): an imported fixture is registered in the importing
module, so each test module still loads its own copy once."""

import pytest

from trainers.data import LabelledData, load_digits_dataset, split_federated


@pytest.fixture(scope="module")
def digits():
    return load_digits_dataset()


@pytest.fixture(scope="module")
def digits_split():
    """The federated split (seed 0) of digits with pixels in [0, 1]: 16 is the public maximum pixel value of the
    digits, not a statistic of the data."""
    data = load_digits_dataset()
    return split_federated(LabelledData(data.features / 16.0, data.labels), 0)
