"""The "centered" public feature map FedAUXfdp's fidelity runs use: each row minus the PUBLIC mean
embedding, then onto the sphere of the public bound. The heads' sensitivity bounds need every row
within the bound and the map to depend on that row and public data only."""

import numpy as np
import pytest

from trainers.data import LabelledData, make_mnist1d
from trainers.features import pretrained_features

TINY = dict(feature_dim=8, width=8, epochs=2, batch_size=64)


@pytest.fixture(scope="module")
def signals():
    return make_mnist1d(num_samples=400, seed=7)


@pytest.mark.parametrize("bound", [0.25, 3.0])
def test_centered_rows_lie_on_the_bound_and_are_the_unit_embeddings_minus_the_public_mean(signals, bound):
    unit = pretrained_features(signals, 200, seed=1, feature_bound=bound, normalization="unit", **TINY)
    centered = pretrained_features(signals, 200, seed=1, feature_bound=bound, normalization="centered", **TINY)
    extractor = centered.extractor
    # the public mean is that of the PUBLIC rows' raw embeddings, recomputed here from the public rows alone
    public_embedding = extractor._embed(signals.features[centered.public_indices])
    np.testing.assert_allclose(extractor.public_mean_, public_embedding.mean(axis=0), rtol=1e-12, atol=1e-15)
    norms = np.linalg.norm(centered.data.features, axis=1)
    assert norms.max() <= bound * (1 + 1e-12)
    assert np.allclose(norms, bound, rtol=1e-12)
    # direction of e − μ for every row (μ the public mean), so centring changes the directions "unit" gives
    raw = extractor._embed(signals.features[centered.rest_indices]) - extractor.public_mean_
    expected = bound * raw / np.linalg.norm(raw, axis=1, keepdims=True)
    np.testing.assert_allclose(centered.data.features, expected, rtol=1e-10, atol=1e-12)
    assert np.max(np.abs(centered.data.features - unit.data.features)) > 0.1 * bound
    # inputs far outside the training range still land within the bound
    assert np.linalg.norm(extractor.transform(100 * signals.features[:20]), axis=1).max() <= bound * (1 + 1e-12)


def test_centered_map_of_a_row_ignores_the_private_rows(signals):
    first = pretrained_features(signals, 200, seed=3, normalization="centered", **TINY)
    changed = signals.features.copy()
    changed[first.rest_indices] = np.random.default_rng(0).normal(size=(first.rest_indices.size, changed.shape[1]))
    second = pretrained_features(LabelledData(changed, signals.labels), 200, seed=3, normalization="centered", **TINY)
    # replacing every non-public record changes neither the public mean nor any row's map
    assert np.array_equal(first.extractor.public_mean_, second.extractor.public_mean_)
    probe = signals.features[:40]
    assert np.array_equal(first.extractor.transform(probe), second.extractor.transform(probe))
    # a row's features depend on that row alone: the batch it comes in does not matter
    assert np.array_equal(first.extractor.transform(probe)[:10], first.extractor.transform(probe[:10]))


def test_a_row_at_the_public_mean_maps_to_zero_not_nan(signals):
    result = pretrained_features(signals, 200, seed=1, normalization="centered", **TINY)
    extractor = result.extractor
    # the input 0 embeds to some e0; a model whose public mean equals e0 must map 0 to the zero row
    zero_input = np.zeros((1, signals.features.shape[1]))
    extractor.public_mean_ = extractor._embed(zero_input)[0]
    mapped = extractor.transform(zero_input)
    assert np.all(np.isfinite(mapped)) and np.all(mapped == 0)
