"""The public CNN feature extractor: public-only training, the public bound, the cache, the device."""

import numpy as np
import pytest
import torch

from trainers.data import LabelledData, PrivateData, PublicData, make_mnist1d
from trainers.features import PublicCnnFeatureExtractor, checked_device, pretrained_features, public_private_split

TINY = dict(feature_dim=8, width=8, epochs=2, batch_size=64)


@pytest.fixture(scope="module")
def signals():
    return make_mnist1d(num_samples=400, seed=7)


@pytest.mark.parametrize("length", [40, 20, 7, 2])
def test_pair_mean_is_avg_pool_bit_for_bit(length):
    # values and gradients, byte for byte, on a batch of (128, 32, length) as the public CNN pools them
    from trainers.features import _PairMean

    generator = torch.Generator().manual_seed(length)
    inputs = torch.randn(128, 32, length, generator=generator, requires_grad=True)
    upstream = torch.randn(128, 32, length // 2, generator=generator)
    pooled, mean = torch.nn.AvgPool1d(2)(inputs), _PairMean()(inputs)
    assert pooled.detach().numpy().tobytes() == mean.detach().numpy().tobytes()
    (pooled_gradient,), (mean_gradient,) = (torch.autograd.grad(out, inputs, upstream) for out in (pooled, mean))
    assert pooled_gradient.numpy().tobytes() == mean_gradient.numpy().tobytes()


def test_extractor_never_sees_the_rest(signals):
    first = pretrained_features(signals, 200, seed=3, **TINY)
    assert np.intersect1d(first.public_indices, first.rest_indices).size == 0
    assert np.array_equal(np.union1d(first.public_indices, first.rest_indices), np.arange(len(signals)))
    # replace every record outside the public split: the extractor must come out bit-identical
    changed = signals.features.copy()
    changed[first.rest_indices] = np.random.default_rng(0).normal(size=(first.rest_indices.size, changed.shape[1]))
    second = pretrained_features(LabelledData(changed, signals.labels), 200, seed=3, **TINY)
    assert np.array_equal(second.public_indices, first.public_indices)
    probe = signals.features[:50]
    assert np.array_equal(first.extractor.transform(probe), second.extractor.transform(probe))


@pytest.mark.parametrize("bound", [0.25, 1.0, 3.0])
def test_features_obey_the_public_bound(signals, bound):
    result = pretrained_features(signals, 200, seed=1, feature_bound=bound, **TINY)
    norms = np.linalg.norm(result.data.features, axis=1)
    assert norms.max() <= bound * (1 + 1e-12)
    # scaled by the public 95% quantile: most public rows lie inside, so clipping is not all that happens
    assert np.mean(norms < bound * (1 - 1e-9)) > 0.5
    # inputs far outside the training range are clipped too
    assert np.linalg.norm(result.extractor.transform(100 * signals.features[:20]), axis=1).max() <= bound * (1 + 1e-12)


@pytest.mark.parametrize("bound", [0.25, 3.0])
def test_unit_normalisation_puts_every_row_on_the_bound(signals, bound):
    quantile = pretrained_features(signals, 200, seed=1, feature_bound=bound, **TINY)
    unit = pretrained_features(signals, 200, seed=1, feature_bound=bound, normalization="unit", **TINY)
    norms = np.linalg.norm(unit.data.features, axis=1)
    nonzero = np.linalg.norm(quantile.data.features, axis=1) > 0
    assert norms.max() <= bound * (1 + 1e-12)
    assert np.allclose(norms[nonzero], bound, rtol=1e-12) and np.all(norms[~nonzero] == 0)
    # the same directions as the quantile map: only each row's length changes
    cosine = np.sum(unit.data.features * quantile.data.features, axis=1)[nonzero] / (bound * np.linalg.norm(
        quantile.data.features[nonzero], axis=1))
    assert np.allclose(cosine, 1.0, atol=1e-12)
    # a row's features depend on that row alone: scaling the input batch does not move other rows
    probe = signals.features[:30]
    assert np.array_equal(unit.extractor.transform(probe)[:10], unit.extractor.transform(probe[:10]))
    assert np.linalg.norm(unit.extractor.transform(100 * probe), axis=1).max() <= bound * (1 + 1e-12)


def test_refuses_private_data(signals):
    with pytest.raises(TypeError, match="PublicData only"):
        PublicCnnFeatureExtractor(**TINY).fit(PrivateData(signals.features, signals.labels))
    with pytest.raises(TypeError, match="PublicData only"):
        PublicCnnFeatureExtractor(**TINY).fit(signals)


def test_seeded_and_cached(signals, tmp_path):
    public = PublicData(signals.features[:200], signals.labels[:200])
    trained = PublicCnnFeatureExtractor(seed=4, cache_dir=tmp_path, **TINY).fit(public)
    assert not trained.from_cache_ and len(list(tmp_path.glob("public_cnn_*.npz"))) == 1
    cached = PublicCnnFeatureExtractor(seed=4, cache_dir=tmp_path, **TINY).fit(public)
    assert cached.from_cache_
    uncached = PublicCnnFeatureExtractor(seed=4, **TINY).fit(public)
    probe = signals.features[200:260]
    assert np.array_equal(trained.transform(probe), cached.transform(probe))
    assert np.array_equal(trained.transform(probe), uncached.transform(probe))
    # embeddings are cached too (the public set's and the probe's), keyed by the model and the input rows:
    # other rows of the same shape get their own entry, and what a warm run reads equals a fresh computation
    assert len(list(tmp_path.glob("embedding_*.npy"))) == 2
    reversed_probe = probe[::-1]
    assert np.array_equal(cached.transform(reversed_probe), uncached.transform(reversed_probe))
    assert len(list(tmp_path.glob("embedding_*.npy"))) == 3
    other = PublicCnnFeatureExtractor(seed=5, cache_dir=tmp_path, **TINY).fit(public)
    assert not other.from_cache_ and len(list(tmp_path.glob("public_cnn_*.npz"))) == 2
    assert not np.array_equal(trained.transform(probe), other.transform(probe))
    # a different public set must not hit the cache of the first
    shifted = PublicData(signals.features[100:300], signals.labels[100:300])
    assert not PublicCnnFeatureExtractor(seed=4, cache_dir=tmp_path, **TINY).fit(shifted).from_cache_


def test_device_is_checked():
    assert checked_device("cpu") == torch.device("cpu")
    for bad in ("gpu", 3, None, "meta"):
        with pytest.raises(ValueError, match="device"):
            checked_device(bad)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA device"):
            checked_device("cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")
def test_cuda_features_match_the_cpu_ones(signals):
    cpu = pretrained_features(signals, 200, seed=2, **TINY).data.features
    cuda = pretrained_features(signals, 200, seed=2, device="cuda", **TINY).data.features
    assert np.mean(np.argmax(cpu, axis=1) == np.argmax(cuda, axis=1)) > 0.9


@pytest.mark.parametrize("arguments, match", [
    (dict(feature_dim=0), "feature_dim"), (dict(epochs=0), "epochs"), (dict(learning_rate=-1.0), "learning_rate"),
    (dict(norm_quantile=0.0), "norm_quantile"), (dict(feature_bound=float("nan")), "feature_bound"),
    (dict(input_shape=(2, 40)), "input_shape"), (dict(seed=-1), "seed"), (dict(normalization="l2"), "normalization"),
    (dict(normalization=None), "normalization"),
])
def test_bad_settings_raise(signals, arguments, match):
    public = PublicData(signals.features[:100], signals.labels[:100])
    with pytest.raises(ValueError, match=match):
        PublicCnnFeatureExtractor(**{**TINY, **arguments}).fit(public)


def test_split_sizes_are_checked(signals):
    with pytest.raises(ValueError, match="num_public"):
        public_private_split(signals, len(signals), np.random.default_rng(0))
    with pytest.raises(ValueError, match="num_public"):
        public_private_split(signals, 0, np.random.default_rng(0))


def test_data_and_features_import_each_other_in_one_direction_only():
    # trainers.data imports trainers.features lazily (for the CNN dataset); features takes the record
    # classes from the leaf trainers.records, so neither module's load needs the other one loaded first.
    import ast
    import pathlib

    import trainers.features

    tree = ast.parse(pathlib.Path(trainers.features.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not imported & {"data", "trainers.data"}, imported
    assert LabelledData.__module__ == PublicData.__module__ == PrivateData.__module__ == "trainers.records"


def test_public_accuracy_is_computed_on_its_first_read_and_anew_after_a_refit(signals, monkeypatch):
    from trainers import networks

    calls = []
    accuracy = networks.accuracy
    monkeypatch.setattr(networks, "accuracy", lambda *arguments: calls.append(1) or accuracy(*arguments))
    public = PublicData(signals.features[:200], signals.labels[:200])
    extractor = PublicCnnFeatureExtractor(seed=2, **TINY).fit(public)
    assert calls == []  # fit (dpmech run's data load) does not run the forward pass
    model = extractor.model_
    inputs = networks.as_inputs(public.features, extractor.input_shape_, torch.device("cpu"))
    expected = float((networks.predict_logits(model, inputs).argmax(dim=1).numpy() == public.labels).mean())
    assert extractor.public_accuracy_ == pytest.approx(expected, abs=1e-12) and len(calls) == 1
    assert extractor.public_accuracy_ == pytest.approx(expected, abs=1e-12) and len(calls) == 1  # read once
    other = PublicData(signals.features[200:300], signals.labels[200:300])
    refitted = extractor.fit(other).public_accuracy_
    inputs = networks.as_inputs(other.features, extractor.input_shape_, torch.device("cpu"))
    assert refitted == pytest.approx(float((networks.predict_logits(extractor.model_, inputs).argmax(dim=1).numpy()
                                            == other.labels).mean()), abs=1e-12) and len(calls) == 2
