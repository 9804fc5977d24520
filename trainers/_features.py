"""Feature-matrix helpers shared by the trainers: validation, the bias coordinate and norm checks."""

from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data


def as_feature_matrix(name: str, features) -> np.ndarray:
    """A finite, non-empty 2-d float64 array."""
    try:
        array = np.asarray(features, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 2-d array of real numbers") from None
    if array.ndim != 2 or array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-d array (got shape {array.shape})")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite (it contains NaN or inf)")
    return array


def require_norms_within(name: str, features: np.ndarray, bound: float) -> None:
    """Raise ValueError when a row of ``features`` has Euclidean norm above ``bound``.

    The sensitivity bounds assume ‖x‖ <= bound for every record; data that violates it must be
    clipped explicitly (``dpmech.clip_features``) before training, never silently.
    """
    norms = np.linalg.norm(features, axis=1)
    worst = float(norms.max())
    # A few ulps of slack so that rows clipped to exactly ``bound`` pass.
    if worst > bound * (1.0 + 4 * np.finfo(np.float64).eps):
        raise ValueError(
            f"{name} has a row of norm {worst:.6g} above feature_bound={bound:g}; "
            "clip the features to the bound first (trainers.data clips to a public bound)"
        )


def with_bias_coordinate(features: np.ndarray) -> np.ndarray:
    """Append the constant coordinate 1 to every row, so a regularised weight plays the intercept."""
    return np.hstack([features, np.ones((features.shape[0], 1), dtype=features.dtype)])


def as_class_labels(name: str, labels, num_records: int, num_classes: int) -> np.ndarray:
    """Integer labels in {0, ..., num_classes − 1}, one per record."""
    array = np.asarray(labels)
    if array.shape != (num_records,):
        raise ValueError(f"{name} must have shape ({num_records},) (got {array.shape})")
    if array.dtype.kind not in "iub" and not (array.dtype.kind == "f" and np.all(array == np.round(array))):
        raise ValueError(f"{name} must be integers in [0, {num_classes - 1}] (got dtype {array.dtype})")
    array = array.astype(np.int64)
    if array.min() < 0 or array.max() >= num_classes:
        raise ValueError(f"{name} must be integers in [0, {num_classes - 1}] (got values in [{array.min()}, {array.max()}])")
    return array


def training_data(estimator, X, y, num_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """``fit``'s (X, y) as float64 features and integer labels in [0, num_classes), checked.

    scikit-learn's own checks come first, with their messages (sparse, complex, empty, NaN or inf
    input, ``y=None``, a continuous target), and set ``n_features_in_``. The class set is public
    configuration: labels are never re-coded from the values present in ``y``, which would make
    the released model's shape depend on the private data.
    """
    X, y = validate_data(estimator, X, y, dtype=np.float64)
    check_classification_targets(y)
    return X, as_class_labels("y", y, X.shape[0], num_classes)


def prediction_data(estimator, X) -> np.ndarray:
    """``predict``'s X as float64, after NotFittedError and the ``n_features_in_`` check."""
    check_is_fitted(estimator)
    return validate_data(estimator, X, reset=False, dtype=np.float64)
