"""Shadow logistic-regression heads for LiRA, trained in one batch by the torch batched LR.

Each of S shadow heads trains on a Bernoulli(½) subset of a pool of labelled
features (Carlini et al. 2022, §4: each example is IN for about half of the
shadows). All S heads are fitted at once by
:class:`trainers.batched_logistic.BatchedLogisticRegression` (Newton steps on
batched systems, on CPU or CUDA). When the audited release is
output-perturbed, each shadow is released through the same dpmech mechanism,
so the shadows' confidences have the target's distribution.
"""

from __future__ import annotations

import numpy as np

from dpmech import validation as check
from trainers.batched_logistic import BatchedLogisticRegression

from ..lira import confidence_from_logits


def shadow_head_confidences(features, labels, num_shadows, num_classes, regularization, rng, mechanism=None,
                            device="cpu"):
    """LiRA confidences φ of S shadow heads on every pool example, and who trained on what.

    Args:
        features: (n, d) pool features, already clipped to the public bound.
        labels: (n,) integer labels in [0, num_classes).
        num_shadows: S >= 4 shadow heads.
        num_classes: C >= 2 (C = 2 trains binary heads).
        regularization: λ of the heads' objective (as the audited head's).
        rng: ``numpy.random.Generator`` or seed: draws the memberships and the noise.
        mechanism: optional ``dpmech.GaussianOutputMechanism`` whose ``release``
            perturbs each shadow's parameters, as the audited head was.
        device: torch device for the batched fit.

    Returns:
        ``(confidences, membership)``, both (S, n); membership is boolean.
    """
    num_shadows = check.integer_scalar("num_shadows", num_shadows, 4)
    num_classes = check.integer_scalar("num_classes", num_classes, 2)
    rng = check.generator("rng", rng)
    features = np.asarray(features, dtype=float)
    labels = np.asarray(labels)
    membership = rng.random((num_shadows, features.shape[0])) < 0.5
    empty = ~membership.any(axis=1)
    membership[empty, 0] = True  # a head needs one record; probability 2^-n per row
    model = BatchedLogisticRegression(regularization=regularization, num_classes=num_classes, device=device)
    model.fit(features, labels, membership)
    parameters = model.parameters_.cpu().numpy()
    if mechanism is not None:
        parameters = mechanism.release(parameters, rng)
    augmented = np.hstack([features, np.ones((features.shape[0], 1))])
    if num_classes == 2:
        scores = parameters @ augmented.T
        logits = np.stack([np.zeros_like(scores), scores], axis=-1)
    else:
        logits = np.einsum("scp,np->snc", parameters, augmented)
    return confidence_from_logits(logits, labels), membership
