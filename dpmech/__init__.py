"""dpmech: exact differential-privacy accounting and the mechanisms of one-shot federated learning.

The core is pure numpy and scipy (with dp-accounting and prv-accountant behind
two accountants). It never imports torch, ``trainers`` or ``audits``.
"""

from .calibration import calibrate_gaussian
from .events import (
    ADD_REMOVE_ONE,
    REPLACE_ONE,
    ApproximateDpEvent,
    GaussianEvent,
    NoGuaranteeEvent,
    PureEpsilonEvent,
    SelfComposedEvent,
)
from .gaussian import gaussian_delta, gaussian_epsilon, gaussian_log_delta
from .group_privacy import group_privacy
from .ledger import PrivacyGuarantee, PrivacyLedger

__version__ = "0.1.0"

__all__ = [
    "ADD_REMOVE_ONE",
    "REPLACE_ONE",
    "ApproximateDpEvent",
    "GaussianEvent",
    "NoGuaranteeEvent",
    "PrivacyGuarantee",
    "PrivacyLedger",
    "PureEpsilonEvent",
    "SelfComposedEvent",
    "calibrate_gaussian",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_log_delta",
    "group_privacy",
]
