"""Argument checks shared by the estimators (built on dpmech's validation helpers)."""

from __future__ import annotations

from dpmech import validation as check

from .scores import AuditScores
from .thresholds import DEFAULT_NUM_THRESHOLDS, INTERVALS, THRESHOLD_STRATEGIES


def audit_scores(scores) -> AuditScores:
    if not isinstance(scores, AuditScores):
        raise ValueError(f"scores must be an AuditScores (got {type(scores).__name__})")
    return scores


def significance(alpha) -> float:
    return float(check.in_interval("alpha", alpha, 0.0, 1.0, low_open=True, high_open=True))


def delta_at_least_zero(delta) -> float:
    return float(check.in_interval("delta", delta, 0.0, 1.0, low_open=False, high_open=True))


def strategy(value) -> str:
    return check.choice("threshold_strategy", value, THRESHOLD_STRATEGIES)


def interval(value) -> str:
    return check.choice("interval", value, INTERVALS)


def num_thresholds(value) -> int:
    return check.integer_scalar("num_thresholds", DEFAULT_NUM_THRESHOLDS if value is None else value, 1)


def flag(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False (got {value!r})")
    return value
