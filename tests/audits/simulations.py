"""Score simulators shared by the audits tests."""

import math

import numpy as np

from audits import AuditScores


def label_rr_scores(rng, num_canaries, epsilon, num_classes):
    """Label RR one-run game, simulated directly. Each canary is IN w.p. ½: IN holds its label y, OUT the
    alternative label y' ≠ y (replace-one). The mechanism releases k-ary RR of the held label (keep w.p.
    e^ε/(e^ε + k − 1), else a uniform other label). Score +1 if the release is y, −1 if it is y', else 0.
    Given a guess (score ≠ 0), P[correct] = e^ε/(e^ε + 1) exactly: the null of the one-run test."""
    is_in = rng.random(num_canaries) < 0.5
    label = rng.integers(num_classes, size=num_canaries)
    alternative = (label + 1 + rng.integers(num_classes - 1, size=num_canaries)) % num_classes
    held = np.where(is_in, label, alternative)
    keep = rng.random(num_canaries) < math.exp(epsilon) / (math.exp(epsilon) + num_classes - 1)
    other = (held + 1 + rng.integers(num_classes - 1, size=num_canaries)) % num_classes
    released = np.where(keep, held, other)
    score = (released == label).astype(float) - (released == alternative).astype(float)
    return AuditScores(score[is_in], score[~is_in])
