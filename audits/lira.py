r"""Likelihood-ratio membership inference (LiRA; Carlini et al. 2022, "Membership Inference Attacks From First Principles").

Pure functions of model confidences. The confidence of a model on a labelled
example is the logit-scaled probability of the true class,

.. math::  \phi = \log\frac{p_y}{1 - p_y} = z_y - \log\sum_{j \ne y} e^{z_j},

which is close to Gaussian across shadow models (ibid., §4.2). For every
example, shadow models that trained on it (IN) and did not (OUT) give two
samples of φ, fitted by Gaussians; the target's φ is then scored by

* online: :math:`\log N(\phi; \mu_{in}, \sigma_{in}^2) - \log N(\phi; \mu_{out}, \sigma_{out}^2)`;
* offline (OUT shadows only): :math:`\log \Pr[Z \le \phi]`, Z ~ N(μ_out, σ²_out),
  one-sided because training on an example raises its confidence.

With few shadows per example the per-example variances are noisy; the
fixed-variance variant uses one σ_in and one σ_out pooled over all examples
(ibid., §4.3: better below about 64 shadows).

:func:`leave_one_out_scores` runs the standard evaluation: every model in turn
is the target and all others are its shadows, computed for all models at once
from running sums. The IN/OUT score pairs of different examples of one model
are not independent trials, so the scores feed MIA metrics (AUC, TPR at low
FPR); an ε lower bound from them is an estimate, not a certified bound.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from dpmech import validation as check

from .scores import AuditScores

MODES = ("online", "offline")
# Below this many IN (or OUT) shadows per example, "auto" pools the variance.
FIXED_VARIANCE_BELOW = 32


def confidence_from_logits(logits, labels) -> np.ndarray:
    """φ = z_y − logsumexp_{j≠y} z_j for class logits of shape (..., n, C).

    A binary model with logit s (positive = class 1) is the two-class model
    with logits (0, s), for which φ is s when y = 1 and −s when y = 0.
    """
    logits = np.asarray(logits, dtype=float)
    labels = np.asarray(labels)
    if logits.ndim < 2 or labels.ndim != 1 or logits.shape[-2] != labels.shape[0]:
        raise ValueError(f"logits must have shape (..., n, C) with n = len(labels) = {labels.shape[0]} (got {logits.shape})")
    if labels.size and (labels.min() < 0 or labels.max() >= logits.shape[-1]):
        raise ValueError(f"labels must be integers in [0, {logits.shape[-1]})")
    is_true = np.arange(logits.shape[-1]) == labels[:, None]
    true = np.sum(np.where(is_true, logits, 0.0), axis=-1)
    return true - special.logsumexp(np.where(is_true, -np.inf, logits), axis=-1)


def _gaussian_log_density(x, mean, variance):
    return -0.5 * (np.log(2.0 * np.pi * variance) + np.square(x - mean) / variance)


def _moments(confidences, members):
    """Per-example sums over models of φ and φ² on the IN and OUT sides, centred for stability."""
    centre = confidences.mean()
    centred = confidences - centre
    inside = members.astype(float)
    outside = 1.0 - inside
    return centre, centred, (inside, outside), tuple(
        (np.sum(side * centred, axis=0), np.sum(side * centred**2, axis=0), np.sum(side, axis=0))
        for side in (inside, outside)
    )


def _fit(total, total_squares, count, fixed_variance):
    if np.any(count < 2):
        raise ValueError("membership must leave every example at least 2 IN and 2 OUT shadows (add shadow models)")
    mean = total / count
    variance = (total_squares - count * mean**2) / (count - 1)
    if fixed_variance:
        # Pooled over the examples of each target (the last axis), so no target's own φ enters it.
        pooled = np.sum((count - 1) * variance, axis=-1, keepdims=True) / np.sum(count - 1, axis=-1, keepdims=True)
        variance = np.broadcast_to(pooled, np.shape(mean))
    return mean, np.maximum(variance, 1e-12)


def _score(target, mean_in, variance_in, mean_out, variance_out, mode):
    if mode == "online":
        return _gaussian_log_density(target, mean_in, variance_in) - _gaussian_log_density(target, mean_out, variance_out)
    return special.log_ndtr((target - mean_out) / np.sqrt(variance_out))


def _validated(confidences, membership):
    confidences = np.asarray(confidences, dtype=float)
    membership = np.asarray(membership)
    if confidences.ndim != 2 or membership.shape != confidences.shape:
        raise ValueError(
            f"confidences and membership must both have shape (models, examples) (got {confidences.shape} and {membership.shape})"
        )
    if membership.dtype != bool:
        raise ValueError(f"membership must be a boolean array (got dtype {membership.dtype})")
    if not np.all(np.isfinite(confidences)):
        raise ValueError("confidences must be finite")
    return confidences, membership


def _use_fixed_variance(fixed_variance, counts):
    if fixed_variance == "auto":
        return bool(np.median(counts) < FIXED_VARIANCE_BELOW)
    if not isinstance(fixed_variance, bool):
        raise ValueError(f"fixed_variance must be True, False or 'auto' (got {fixed_variance!r})")
    return fixed_variance


def lira_scores(target_confidences, shadow_confidences, shadow_membership, mode="online", fixed_variance="auto") -> np.ndarray:
    """LiRA score of each example for one target model (higher means more likely IN).

    Args:
        target_confidences: (n,) φ of the target model on the n examples.
        shadow_confidences: (S, n) φ of S shadow models on the same examples.
        shadow_membership: (S, n) boolean, whether each shadow trained on each example.
        mode: ``"online"`` (IN and OUT Gaussians) or ``"offline"`` (OUT only).
        fixed_variance: True, False, or ``"auto"`` (pool the variance when the
            median number of shadows per side is below 32).
    """
    mode = check.choice("mode", mode, MODES)
    shadows, membership = _validated(shadow_confidences, shadow_membership)
    target = np.asarray(target_confidences, dtype=float)
    if target.shape != (shadows.shape[1],):
        raise ValueError(f"target_confidences must have shape ({shadows.shape[1]},) (got {target.shape})")
    centre, _, _, ((in_sum, in_squares, in_count), (out_sum, out_squares, out_count)) = _moments(shadows, membership)
    fixed = _use_fixed_variance(fixed_variance, np.concatenate([in_count, out_count]))
    mean_out, variance_out = _fit(out_sum, out_squares, out_count, fixed)
    if mode == "online":
        mean_in, variance_in = _fit(in_sum, in_squares, in_count, fixed)
    else:
        mean_in = variance_in = None
    return _score(target - centre, mean_in, variance_in, mean_out, variance_out, mode)


def leave_one_out_scores(confidences, membership, mode="online", fixed_variance="auto"):
    """LiRA with every model in turn as the target and the others as shadows, for all at once.

    Args:
        confidences: (M, n) φ of M models on n examples.
        membership: (M, n) boolean training membership (e.g. Bernoulli(½) masks).
        mode, fixed_variance: as in :func:`lira_scores`.

    Returns:
        ``(scores, audit_scores)``: the (M, n) score matrix, and
        :class:`~audits.scores.AuditScores` pooling the IN and OUT entries.
    """
    mode = check.choice("mode", mode, MODES)
    confidences, membership = _validated(confidences, membership)
    _, centred, (inside, outside), ((in_sum, in_squares, in_count), (out_sum, out_squares, out_count)) = _moments(
        confidences, membership
    )
    # Remove each target's own term from the sums: (M, n) arrays of leave-one-out moments.
    in_stats = (in_sum - inside * centred, in_squares - inside * centred**2, in_count - inside)
    out_stats = (out_sum - outside * centred, out_squares - outside * centred**2, out_count - outside)
    fixed = _use_fixed_variance(fixed_variance, np.concatenate([in_count, out_count]))
    mean_out, variance_out = _fit(*out_stats, fixed)
    mean_in, variance_in = _fit(*in_stats, fixed) if mode == "online" else (None, None)
    scores = _score(centred, mean_in, variance_in, mean_out, variance_out, mode)
    return scores, AuditScores(scores[membership], scores[~membership], trials="natural")
