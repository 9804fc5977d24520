"""Per-example L2 clipping of features to a public bound.

Sensitivity bounds such as 2·feature_bound/(nλ) need ‖x‖ <= feature_bound
for every record a neighbouring dataset could hold, with feature_bound
fixed before the data are seen. FedAUXfdp (Hoech et al. 2022, seed 000,
eq. 4) instead divides every feature vector by the largest norm in the
private dataset. That divisor is itself a function of the private data:
replacing one record can change it and so rescale every other record, so
the two neighbouring datasets no longer differ in one record only, and the
bound derived for ‖x‖ <= 1 does not cover the release. Clipping to a public
bound changes each record only as a function of that record, which keeps
neighbours neighbours.
"""

from __future__ import annotations

import numpy as np

from . import validation as check


def clip_features(features, bound) -> np.ndarray:
    """Scale each row x to x·min(1, bound/‖x‖₂), so every row has norm at most ``bound``.

    Rows already inside the ball are returned unchanged (bit for bit); a row
    outside keeps its direction. ``bound`` must be public: chosen without
    looking at the private data (see the module docstring).

    Args:
        features: (n, d) array of finite values, one record per row.
        bound: public norm bound > 0.

    Returns:
        A new float (n, d) array.
    """
    bound = check.positive("bound", bound)
    if np.ndim(bound):
        raise ValueError(f"bound must be a single finite number > 0 (got an array of shape {np.shape(bound)})")
    array = np.array(features, dtype=float)
    if array.ndim != 2:
        raise ValueError(f"features must be a 2-D array (n, d) (got shape {array.shape})")
    if not np.all(np.isfinite(array)):
        raise ValueError("features must be finite (got NaN or infinity)")
    norms = np.linalg.norm(array, axis=1)
    outside = norms > bound
    # bound/‖x‖ rounds, and up to a quarter of rescaled rows would land an ulp or
    # two above the bound; aiming 8 ulps inside and re-checking keeps every row within it.
    array[outside] *= (bound / norms[outside] * (1.0 - 8 * np.finfo(float).eps))[:, None]
    while True:
        over = np.linalg.norm(array, axis=1) > bound
        if not np.any(over):
            return array
        array[over] *= np.nextafter(1.0, 0.0)
