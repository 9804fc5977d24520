"""LOSS threshold attack (Yeom, Giacomelli, Fredrikson & Jha 2018): members have lower loss.

The score of an example is its negative cross-entropy under the target model,
so "higher means IN" as everywhere in :mod:`audits`. Natural members and
non-members are not a randomised canary experiment, so any ε computed from
these scores is an estimate.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .scores import AuditScores


def negative_loss(logits, labels) -> np.ndarray:
    """−CE(softmax(z), y) per example for class logits of shape (n, C)."""
    logits = np.asarray(logits, dtype=float)
    labels = np.asarray(labels)
    if logits.ndim != 2 or labels.shape != (logits.shape[0],):
        raise ValueError(f"logits must be (n, C) and labels (n,) (got {logits.shape} and {labels.shape})")
    if labels.size and (labels.min() < 0 or labels.max() >= logits.shape[1]):
        raise ValueError(f"labels must be integers in [0, {logits.shape[1]})")
    return logits[np.arange(labels.shape[0]), labels] - special.logsumexp(logits, axis=1)


def loss_attack(member_logits, member_labels, nonmember_logits, nonmember_labels) -> AuditScores:
    """IN/OUT scores of the LOSS attack on a model's training members and held-out non-members."""
    return AuditScores(negative_loss(member_logits, member_labels), negative_loss(nonmember_logits, nonmember_labels),
                       trials="natural")
