"""The record containers every trainer passes around: labelled feature rows, and their public and
private kinds. A leaf module (numpy and the feature-matrix check only), so that trainers.data and
trainers.features both import it and neither imports the other at load time."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._features import as_feature_matrix


@dataclass(frozen=True)
class LabelledData:
    """Feature rows and their integer class labels."""

    features: np.ndarray
    labels: np.ndarray

    def __post_init__(self):
        features = as_feature_matrix("features", self.features)
        labels = np.asarray(self.labels)
        if labels.shape != (features.shape[0],) or labels.dtype.kind not in "iu":
            raise ValueError(f"labels must be integers of shape ({features.shape[0]},) (got {labels.dtype} {labels.shape})")
        object.__setattr__(self, "features", features)
        object.__setattr__(self, "labels", labels.astype(np.int64))

    def __len__(self):
        return self.features.shape[0]

    def subset(self, indices):
        return type(self)(self.features[indices], self.labels[indices])


class PublicData(LabelledData):
    """Data that may be used without privacy cost (auxiliary data: negative and distillation sets).

    ``labels`` is None for public rows given without labels (``dpmech run --data`` with a public/private
    split and no ``y_public``): FedAUXfdp distils on unlabelled auxiliary data (Sattler et al. 2021) and a
    public feature map needs features only. A step that reads the labels asks :meth:`required_labels`,
    which refuses unlabelled rows naming that step, so no label is ever made up."""

    def __post_init__(self):
        if self.labels is not None:
            super().__post_init__()
            return
        object.__setattr__(self, "features", as_feature_matrix("features", self.features))

    def subset(self, indices):
        return type(self)(self.features[indices], None if self.labels is None else self.labels[indices])

    def required_labels(self, needed_by: str) -> np.ndarray:
        """The rows' labels; ValueError when there are none, saying that ``needed_by`` (a step and why it
        reads them, e.g. "FedMD-NFDP trains every party on them first") needs them and how to give them."""
        if self.labels is None:
            raise ValueError(f"the public rows have no labels (a public/private split without y_public), and "
                             f"{needed_by}; add y_public to the data")
        return self.labels


class PrivateData(LabelledData):
    """The clients' records; every release computed from them must be accounted by dpmech."""
