"""Attacks and canaries that produce IN/OUT scores for the :mod:`audits` statistics.

They sample dpmech's mechanisms (never re-implement them) and may use numpy,
scipy and dpmech; they do not import torch.
"""

from .averaging_canary import average_noise_std, averaging_canary_scores
from .gaussian_output import (
    GaussianOutputAudit,
    audit_gaussian_output,
    gaussian_output_scores,
    worst_case_logistic_canary,
)
from .label_randomized_response import (
    LabelRandomizedResponseAudit,
    audit_label_randomized_response,
    label_randomized_response_scores,
)
from .repetitions import SEED_DERIVATION, run_repetitions
from .threat_model import BLACK_BOX, WHITE_BOX, ThreatModel

__all__ = [
    "BLACK_BOX",
    "SEED_DERIVATION",
    "WHITE_BOX",
    "GaussianOutputAudit",
    "LabelRandomizedResponseAudit",
    "ThreatModel",
    "audit_gaussian_output",
    "average_noise_std",
    "averaging_canary_scores",
    "audit_label_randomized_response",
    "gaussian_output_scores",
    "label_randomized_response_scores",
    "run_repetitions",
    "worst_case_logistic_canary",
]
