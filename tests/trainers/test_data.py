"""Offline data, the Dirichlet partition, the federated splits and the public-only extractor."""

import random
import socket

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from trainers.data import (
    ALPHA_GRID,
    LabelledData,
    PrivateData,
    PublicData,
    PublicFeatureExtractor,
    class_disjoint_split,
    dirichlet_label_partition,
    largest_class_share_table,
    largest_class_shares,
    load_digits_dataset,
    make_mnist1d,
    split_federated,
)


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    import mnist1d.data
    import requests

    monkeypatch.setattr(requests, "get", refuse)
    monkeypatch.setattr(mnist1d.data, "get_dataset", refuse)


def test_digits_offline(no_network):
    data = load_digits_dataset()
    assert data.features.shape == (1797, 64) and data.labels.shape == (1797,)
    assert set(np.unique(data.labels)) == set(range(10))


def test_mnist1d_generated_locally_leaves_global_state_alone(no_network):
    np.random.seed(123)
    random.seed(123)
    numpy_before, python_before = np.random.random(), random.random()
    np.random.seed(123)
    random.seed(123)
    data = make_mnist1d(num_samples=200, seed=3)
    assert (np.random.random(), random.random()) == (numpy_before, python_before)
    assert data.features.shape == (200, 40)
    assert np.array_equal(np.bincount(data.labels), np.full(10, 20))
    assert np.array_equal(make_mnist1d(num_samples=200, seed=3).features, data.features)
    assert not np.array_equal(make_mnist1d(num_samples=200, seed=4).features, data.features)


@pytest.mark.parametrize("num_samples, seed", [
    pytest.param(5000, 42, marks=pytest.mark.slow),  # 5.9 s of CPU in CI's default run of 06381b9 (3 s rule, stop 39)
    (10, 0), (2005, 1), (300, 2**32 - 1), (1000, 12345)])
def test_mnist1d_is_the_packages_generator_bit_for_bit(num_samples, seed, no_network):
    # The vectorised generator against the package's own loop over records, from the same seed: every value
    # equal (the default (5000, 42) is the published dataset); 2005 is rounded down to 2000 by both.
    import mnist1d.data

    arguments = mnist1d.data.get_dataset_args()
    arguments.num_samples, arguments.seed = num_samples, seed
    numpy_state, python_state = np.random.get_state(), random.getstate()
    try:
        reference = mnist1d.data.make_dataset(arguments)
    finally:
        np.random.set_state(numpy_state)
        random.setstate(python_state)
    data = make_mnist1d(num_samples, seed)
    # bytes, so that a zero's sign counts too
    assert data.features.tobytes() == np.concatenate([reference["x"], reference["x_test"]]).tobytes()
    assert np.array_equal(data.labels, np.concatenate([reference["y"], reference["y_test"]]))


@given(knots=st.integers(2, 80), length=st.integers(2, 80), seed=st.integers(0, 2**32 - 1),
       zeros=st.booleans())
def test_interpolation_of_rows_is_np_interp_bit_for_bit(knots, length, seed, zeros):
    # Every row at once against np.interp row by row, on the package's grids (linspace(0, 1, ·) both); with
    # ``zeros`` the rows end in zeros as the padded templates do.
    from trainers.data import _interp_rows

    rows = np.random.default_rng(seed).normal(size=(3, knots))
    if zeros:
        rows[:, knots // 2:] = 0.0
    expected = np.stack([np.interp(np.linspace(0, 1, length), np.linspace(0, 1, knots), row) for row in rows])
    assert _interp_rows(rows, length).tobytes() == expected.tobytes()


def test_mnist1d_draws_past_too_few_words_are_the_same():
    # Drawn from 64 words first, the stream is drawn again at twice the length until the records fit.
    from trainers.data import _mnist1d_draws

    short, estimated = _mnist1d_draws(30, 5, 48, 144, words=64), _mnist1d_draws(30, 5, 48, 144)
    for name in ("uniforms", "shifts", "normals"):
        assert np.array_equal(short[name], estimated[name])
    assert np.array_equal(short["generator"].random(3), estimated["generator"].random(3))


def test_mnist1d_refuses_a_seed_numpy_cannot_seed():
    from trainers.data import _mnist1d_draws

    with pytest.raises(ValueError, match="seed must be below 2"):
        make_mnist1d(100, seed=2**32)
    with pytest.raises(ValueError, match="normals_per_record must be even"):
        _mnist1d_draws(10, 0, 48, 143)


def _balanced_labels(per_class=300, num_classes=10):
    return np.repeat(np.arange(num_classes), per_class)


@pytest.mark.parametrize("alpha", ALPHA_GRID)
def test_partition_assigns_every_record_once_and_is_reproducible(alpha):
    labels = _balanced_labels()
    assignment = dirichlet_label_partition(labels, 20, alpha, rng=9)
    assert assignment.shape == labels.shape
    assert assignment.min() >= 0 and assignment.max() < 20
    assert np.array_equal(assignment, dirichlet_label_partition(labels, 20, alpha, rng=9))
    assert not np.array_equal(assignment, dirichlet_label_partition(labels, 20, alpha, rng=10))


def test_large_alpha_gives_near_uniform_class_shares():
    labels = _balanced_labels(per_class=2000)
    assignment = dirichlet_label_partition(labels, 10, 1e5, rng=0)
    counts = np.bincount(assignment * 10 + labels, minlength=100).reshape(10, 10)
    shares = counts / counts.sum(axis=1, keepdims=True)
    # each client holds ~200 records per class; ±1.5% of the client's data is far beyond sampling slack
    assert np.abs(shares - 0.1).max() < 0.015


def test_small_alpha_concentrates_clients_on_one_class():
    labels = _balanced_labels()
    shares = largest_class_shares(labels, dirichlet_label_partition(labels, 20, 0.01, rng=1), 20)
    assert shares[0] > 0.8
    iid = largest_class_shares(labels, dirichlet_label_partition(labels, 20, 10.24, rng=1), 20)
    assert iid[0] < 0.25
    assert np.all(np.diff(shares) <= 0)


def test_share_table_prints_the_alpha_grid():
    console = Console(record=True, width=120)
    shares = largest_class_share_table(_balanced_labels(), 20, rng=0, console=console)
    assert shares.shape == (3, 4)
    text = console.export_text()
    assert all(f"α = {alpha:g}" in text for alpha in ALPHA_GRID)
    assert np.all(shares[0, :-1] > shares[0, 1:]), "heterogeneity decreases with α"


@pytest.mark.parametrize(
    "arguments, match",
    [
        ({"num_clients": 10, "alpha": 0.0}, "alpha"),
        ({"num_clients": 10, "alpha": -1.0}, "alpha"),
        ({"num_clients": 31, "alpha": 1.0}, "num_clients"),
        ({"num_clients": 0, "alpha": 1.0}, "num_clients"),
    ],
)
def test_bad_partition_configuration(arguments, match):
    with pytest.raises(ValueError, match=match):
        dirichlet_label_partition(np.arange(30) % 3, rng=0, **arguments)


def test_split_is_disjoint_and_typed():
    data = LabelledData(np.arange(200, dtype=float).reshape(100, 2), np.arange(100) % 5)
    split = split_federated(data, rng=0, test_fraction=0.2, public_fraction=0.3, negative_fraction=0.2)
    assert isinstance(split.private, PrivateData)
    assert isinstance(split.negative, PublicData) and isinstance(split.distillation, PublicData)
    assert not isinstance(split.test, (PublicData, PrivateData))
    assert (len(split.test), len(split.negative), len(split.distillation), len(split.private)) == (20, 6, 24, 50)
    rows = np.concatenate([part.features[:, 0] for part in (split.private, split.negative, split.distillation, split.test)])
    assert np.array_equal(np.sort(rows), data.features[:, 0])
    with pytest.raises(ValueError, match="public_fraction"):
        split_federated(data, rng=0, test_fraction=0.5, public_fraction=0.5)


def test_extractor_fits_only_public_data_and_outputs_unit_norm_features():
    split = split_federated(load_digits_dataset(), rng=0)
    extractor = PublicFeatureExtractor(num_components=8)
    with pytest.raises(TypeError, match="PublicData"):
        extractor.fit(split.private)
    with pytest.raises(TypeError, match="PublicData"):
        extractor.fit(split.distillation, split.private)
    with pytest.raises(TypeError, match="PublicData"):
        extractor.fit(split.distillation.features)
    extractor.fit(split.negative, split.distillation)
    features = extractor.transform(split.private.features)
    assert features.shape == (len(split.private), 8)
    assert np.linalg.norm(features, axis=1).max() <= 1.0 + 1e-12
    # the scale is the public 95% quantile, so some private rows are clipped to exactly norm 1
    assert np.isclose(np.linalg.norm(features, axis=1).max(), 1.0)


@pytest.mark.parametrize("parameters, match", [({"num_components": 0}, "num_components"), ({"norm_quantile": 0.0}, "norm_quantile")])
def test_bad_extractor_configuration(parameters, match):
    public = PublicData(np.random.default_rng(0).normal(size=(20, 4)), np.zeros(20, dtype=int))
    with pytest.raises(ValueError, match=match):
        PublicFeatureExtractor(**parameters).fit(public)


def test_mnist1d_at_scale_is_chunked_cached_and_reproducible(tmp_path, no_network):
    from trainers.data import load_mnist1d

    data = load_mnist1d(60, seed=2, cache_dir=tmp_path, chunk_size=20)
    assert data.features.shape == (60, 40) and np.array_equal(np.bincount(data.labels), np.full(10, 6))
    assert len(list(tmp_path.glob("mnist1d_2_20_*.npz"))) == 3
    # chunks are independent draws, not one chunk repeated
    assert not np.array_equal(data.features[:20], data.features[20:40])
    cached = load_mnist1d(60, seed=2, cache_dir=tmp_path, chunk_size=20)
    assert np.array_equal(cached.features, data.features) and np.array_equal(cached.labels, data.labels)
    assert np.array_equal(load_mnist1d(60, seed=2, chunk_size=20).features, data.features)
    assert not np.array_equal(load_mnist1d(60, seed=3, chunk_size=20).features, data.features)
    # a prefix of the chunks is shared by a larger request
    assert np.array_equal(load_mnist1d(40, seed=2, cache_dir=tmp_path, chunk_size=20).features, data.features[:40])
    for arguments in (dict(num_samples=65), dict(num_samples=60, chunk_size=15), dict(num_samples=0), dict(num_samples=60, seed=-1)):
        with pytest.raises(ValueError):
            load_mnist1d(**arguments)


def test_user_arrays_load_and_are_checked(tmp_path):
    from trainers.data import load_arrays

    features = np.random.default_rng(0).normal(size=(30, 4))
    labels = np.arange(30) % 3
    data = load_arrays(features, labels)
    assert np.array_equal(data.features, features) and np.array_equal(data.labels, labels)
    np.savez(tmp_path / "mine.npz", features=features, labels=labels)
    assert np.array_equal(load_arrays(tmp_path / "mine.npz").labels, labels)
    np.savez(tmp_path / "bad.npz", x=features, y=labels)
    with pytest.raises(ValueError, match="features"):
        load_arrays(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="labels"):
        load_arrays(features)
    with pytest.raises(ValueError, match="every class"):
        load_arrays(features, labels + 1)
    with pytest.raises(ValueError, match="labels"):
        load_arrays(features, labels.astype(float) + 0.5)
    with pytest.raises(ValueError, match="finite"):
        load_arrays(np.where(labels[:, None] == 0, np.nan, features), labels)


@pytest.mark.parametrize("num_public_classes", [1, 5, 9])
def test_class_disjoint_split_keeps_the_private_classes_out_of_the_public_sets(num_public_classes):
    labels = np.repeat(np.arange(10), 50)
    data = LabelledData(np.arange(labels.size, dtype=np.float64)[:, None], labels)  # the feature is the record's index
    split = class_disjoint_split(data, num_public_classes, np.random.default_rng(3))
    public = np.concatenate([split.negative.labels, split.distillation.labels])
    assert public.max() < num_public_classes and min(split.private.labels.min(), split.test.labels.min()) >= num_public_classes
    assert isinstance(split.private, PrivateData) and isinstance(split.distillation, PublicData)
    indices = np.concatenate([part.features[:, 0] for part in (split.private, split.negative, split.distillation, split.test)])
    assert np.array_equal(np.sort(indices), np.arange(labels.size))  # every record exactly once
    assert len(split.test) == round(0.2 * 50 * (10 - num_public_classes))
    assert len(split.negative) == round(0.2 * 50 * num_public_classes)


@pytest.mark.parametrize("arguments, match", [(dict(num_public_classes=10), "num_public_classes"),
                                              (dict(num_public_classes=0), "num_public_classes"),
                                              (dict(num_public_classes=5, test_fraction=1.0), "test_fraction")])
def test_class_disjoint_split_refuses_bad_settings(arguments, match):
    data = LabelledData(np.zeros((100, 1)), np.repeat(np.arange(10), 10))
    with pytest.raises(ValueError, match=match):
        class_disjoint_split(data, rng=np.random.default_rng(0), **arguments)
