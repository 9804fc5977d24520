"""The user's own public/private split (``dpmech run --data`` with X_public, y_public, X_private, y_private):
loaded and checked as the built-in sets, and kept as given by split_federated, y_public optional."""

import numpy as np
import pytest

from trainers.data import LabelledData, PublicData, SplitData, load_arrays, load_digits_dataset, split_federated


@pytest.fixture(scope="module")
def digits_split(tmp_path_factory):
    digits = load_digits_dataset()
    order = np.random.default_rng(0).permutation(len(digits))
    public, private = order[:400], order[400:]
    path = tmp_path_factory.mktemp("split") / "split.npz"
    np.savez(path, X_public=digits.features[public], y_public=digits.labels[public],
             X_private=digits.features[private], y_private=digits.labels[private])
    return path, digits.subset(public), digits.subset(private)


def _rows(features, labels):
    # The rows as a sorted multiset of (features..., label) tuples.
    return sorted(map(tuple, np.hstack([features, labels[:, None]]).tolist()))


def test_the_split_is_loaded_and_its_public_private_boundary_kept(digits_split):
    path, public, private = digits_split
    data = load_arrays(path)
    assert isinstance(data, SplitData) and (data.public_features.shape, len(data.private)) == ((400, 64), 1397)
    np.testing.assert_array_equal(data.labels, private.labels)
    split = split_federated(data, np.random.default_rng(3), test_fraction=0.2, public_fraction=0.5, negative_fraction=0.25)
    # Every public row is in the negative or distillation set, every private row in the pool or the test set.
    assert _rows(np.vstack([split.negative.features, split.distillation.features]),
                 np.concatenate([split.negative.labels, split.distillation.labels])) == _rows(public.features, public.labels)
    assert _rows(np.vstack([split.private.features, split.test.features]),
                 np.concatenate([split.private.labels, split.test.labels])) == _rows(private.features, private.labels)
    assert (len(split.test), len(split.negative)) == (round(0.2 * 1397), 100)


def test_a_split_without_public_labels_gives_the_same_parts_with_unlabelled_public_sets(digits_split, tmp_path):
    path, public, private = digits_split
    unlabelled_path = tmp_path / "unlabelled.npz"
    np.savez(unlabelled_path, X_public=public.features, X_private=private.features, y_private=private.labels)
    data = load_arrays(unlabelled_path)
    assert data.public_labels is None
    unlabelled = split_federated(data, 3, negative_fraction=0.25)
    labelled = split_federated(load_arrays(path), 3, negative_fraction=0.25)
    # The same cut (the labels draw nothing from the Generator); the public sets carry no labels, none made up.
    for name in ("negative", "distillation"):
        part = getattr(unlabelled, name)
        assert isinstance(part, PublicData) and part.labels is None
        np.testing.assert_array_equal(part.features, getattr(labelled, name).features)
        with pytest.raises(ValueError, match="^the public rows have no labels .*y_public"):
            part.required_labels("a step reads them")
    for name in ("private", "test"):
        np.testing.assert_array_equal(getattr(unlabelled, name).labels, getattr(labelled, name).labels)


FEATURES = np.random.default_rng(0).normal(size=(30, 4))
LABELS = np.arange(30) % 3


@pytest.mark.parametrize("arrays,fragment", [
    (dict(X_public=FEATURES, X_private=FEATURES), "the public/private split needs y_private"),
    (dict(X_public=FEATURES, y_private=LABELS), "the public/private split needs X_private"),
    (dict(X=FEATURES, y=LABELS, X_public=FEATURES), "holds both X and y and the split's X_public"),
    (dict(X_public=FEATURES[:, :3], X_private=FEATURES, y_private=LABELS), "X_public must have the 4 columns of X_private"),
    (dict(X_public=FEATURES.ravel(), X_private=FEATURES, y_private=LABELS), "X_public must be real features of shape (m, d)"),
    (dict(X_public=FEATURES, y_public=LABELS + 3, X_private=FEATURES, y_private=LABELS), "y_public must be in 0..2"),
    (dict(X_public=FEATURES, y_public=LABELS[:-1], X_private=FEATURES, y_private=LABELS), "y_public must be integer labels of shape (30,)"),
    (dict(X_public=np.full_like(FEATURES, np.nan), X_private=FEATURES, y_private=LABELS), "X_public must be finite"),
    (dict(X_public=FEATURES, X_private=FEATURES, y_private=LABELS + 1), "y_private must be 0..C-1 with every class present"),
    (dict(X_public=FEATURES, X_private=FEATURES, y_private=LABELS + 0.5), "y_private must be integer labels"),
])
def test_a_malformed_split_is_refused_naming_the_file_and_the_key(tmp_path, arrays, fragment):
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    with pytest.raises(ValueError) as raised:
        load_arrays(path)
    assert str(raised.value).startswith(f"data file {str(path)!r}") and fragment in str(raised.value), raised.value


def test_split_data_checks_its_parts():
    private = LabelledData(FEATURES, LABELS)
    with pytest.raises(ValueError, match="private must be LabelledData"):
        SplitData(FEATURES, None, FEATURES)
    with pytest.raises(ValueError, match="y_public must be in 0..2"):
        SplitData(FEATURES, -LABELS - 1, private)
