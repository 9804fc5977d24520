"""What the seed pipelines share: public feature extraction with the bound check, validation of
an ε that may be ∞, and the accuracy of a linear head on bias-augmented features."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import dpmech
from dpmech import validation as check

from .._features import require_norms_within, with_bias_coordinate
from ..data import FederatedSplit, LabelledData, PrivateData, PublicData, PublicFeatureExtractor, split_federated


def epsilon_or_infinity(name: str, value) -> float:
    """A target ε: finite and > 0, or ``math.inf`` for a release without noise (no guarantee)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == math.inf:
        return math.inf
    value = check.positive(name, value)
    if np.ndim(value):
        raise ValueError(f"{name} must be a single number > 0 or math.inf (got an array)")
    return float(value)


@dataclass(frozen=True)
class FeatureSets:
    """The four parts of a :class:`~trainers.data.FederatedSplit` in the frozen public feature
    space, every row with norm at most ``feature_bound``."""

    private: PrivateData
    negative: PublicData
    distillation: PublicData
    test: LabelledData
    feature_bound: float


def public_features(split: FederatedSplit, num_components, feature_bound: float, clip: bool) -> FeatureSets:
    """Map every part of ``split`` through a feature map fitted on the public parts only.

    ``num_components`` is the PCA size of :class:`~trainers.data.PublicFeatureExtractor` (fitted on
    the negative and distillation sets, scaled by a public norm quantile); ``None`` keeps the raw
    features. The result is then clipped per example to the public ``feature_bound`` when ``clip``
    is set, and otherwise checked: a row above the bound raises ValueError, because the
    sensitivity bounds assume it. FedAUXfdp's eq. (4) instead divides by the largest norm in the
    private data, which depends on the private data and voids the bound; it is not offered.
    """
    feature_bound = float(check.positive("feature_bound", feature_bound))
    clip = check.boolean("clip_features", clip)
    if num_components is None:
        transform = np.asarray
    else:
        extractor = PublicFeatureExtractor(num_components=num_components).fit(split.negative, split.distillation)
        transform = extractor.transform

    def mapped(part: LabelledData, name: str) -> np.ndarray:
        features = np.asarray(transform(part.features), dtype=np.float64)
        if clip:
            return dpmech.clip_features(features, feature_bound)
        require_norms_within(f"the {name} features (clip_features=False)", features, feature_bound)
        return features

    return FeatureSets(
        private=PrivateData(mapped(split.private, "private"), split.private.labels),
        negative=PublicData(mapped(split.negative, "negative"), split.negative.labels),
        distillation=PublicData(mapped(split.distillation, "distillation"), split.distillation.labels),
        test=LabelledData(mapped(split.test, "test"), split.test.labels),
        feature_bound=feature_bound,
    )


def split_and_map(data: LabelledData, config, split_seed) -> tuple:
    """(feature sets, class count): ``data`` split as ``config`` says and mapped by :func:`public_features`.

    ``config`` needs ``test_fraction``, ``public_fraction``, ``negative_fraction``,
    ``num_components``, ``feature_bound`` and ``clip_features``.
    """
    split = split_federated(data, np.random.default_rng(split_seed), test_fraction=config.test_fraction,
                            public_fraction=config.public_fraction, negative_fraction=config.negative_fraction)
    sets = public_features(split, config.num_components, config.feature_bound, config.clip_features)
    return sets, int(data.labels.max()) + 1


def linear_scores(parameters: np.ndarray, features: np.ndarray) -> np.ndarray:
    """x̃ θᵀ for parameters θ of shape (k, d + 1) whose last column multiplies the constant 1."""
    return with_bias_coordinate(features) @ np.atleast_2d(parameters).T


def linear_accuracy(parameters: np.ndarray, data: LabelledData) -> float:
    """Fraction of ``data`` whose label is the argmax of the linear head ``parameters`` (C, d + 1)."""
    return float(np.mean(np.argmax(linear_scores(parameters, data.features), axis=1) == data.labels))
