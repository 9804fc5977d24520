"""dpmech: exact differential-privacy accounting and the mechanisms of one-shot federated learning.

The core is pure numpy and scipy (with dp-accounting and prv-accountant behind
two accountants). It never imports torch, ``trainers`` or ``audits``.
"""

import importlib.metadata

from .blind_averaging import average_sensitivity, blind_average, blind_averaging_event, calibrate_user_noise
from .calibration import calibrate_gaussian, split_gaussian_budget
from .clipping import clip_features
from .discrete_gaussian import discrete_gaussian
from .discrete_gaussian_privacy import calibrate_discrete_gaussian, discrete_gaussian_delta
from .discrete_laplace import discrete_laplace
from .events import (
    ADD_REMOVE_ONE,
    REPLACE_ONE,
    ApproximateDpEvent,
    GaussianEvent,
    LaplaceEvent,
    NoGuaranteeEvent,
    NoPrivacyLossEvent,
    PoissonSampledEvent,
    PureEpsilonEvent,
    SampledWithoutReplacementEvent,
    SelfComposedEvent,
)
from .gaussian import gaussian_delta, gaussian_epsilon, gaussian_log_delta
from .group_privacy import group_privacy
from .ledger import PrivacyGuarantee, PrivacyLedger
from .nfdp import NfdpGuarantee, nfdp_guarantee, nfdp_subsample
from .output_perturbation import GaussianOutputMechanism
from .privacy_warnings import NoGuaranteeWarning, PrivacyWarning, UnprotectedReleaseWarning, VacuousGuaranteeWarning
from .random_bits import OS_RANDOMNESS, exact_bernoulli, random_source
from .randomized_response import (
    randomized_response,
    randomized_response_distribution,
    randomized_response_event,
    rr_top_k,
    rr_top_k_distribution,
    rr_top_k_event,
    rr_with_prior,
    rr_with_prior_distribution,
    rr_with_prior_event,
    rr_with_prior_optimal_k,
)

__version__ = importlib.metadata.version("dpmech")

__all__ = [
    "NoGuaranteeWarning",
    "PrivacyWarning",
    "UnprotectedReleaseWarning",
    "VacuousGuaranteeWarning",
    "ADD_REMOVE_ONE",
    "REPLACE_ONE",
    "ApproximateDpEvent",
    "GaussianEvent",
    "GaussianOutputMechanism",
    "LaplaceEvent",
    "NfdpGuarantee",
    "NoGuaranteeEvent",
    "NoPrivacyLossEvent",
    "PoissonSampledEvent",
    "PrivacyGuarantee",
    "PrivacyLedger",
    "PureEpsilonEvent",
    "SampledWithoutReplacementEvent",
    "SelfComposedEvent",
    "average_sensitivity",
    "blind_average",
    "blind_averaging_event",
    "calibrate_gaussian",
    "calibrate_user_noise",
    "clip_features",
    "gaussian_delta",
    "gaussian_epsilon",
    "gaussian_log_delta",
    "group_privacy",
    "nfdp_guarantee",
    "nfdp_subsample",
    "randomized_response",
    "randomized_response_distribution",
    "randomized_response_event",
    "rr_top_k",
    "rr_top_k_distribution",
    "rr_top_k_event",
    "rr_with_prior",
    "rr_with_prior_distribution",
    "rr_with_prior_event",
    "rr_with_prior_optimal_k",
    "split_gaussian_budget",
    # exact discrete noise and randomness sources (mech)
    "OS_RANDOMNESS",
    "calibrate_discrete_gaussian",
    "discrete_gaussian",
    "discrete_gaussian_delta",
    "discrete_laplace",
    "exact_bernoulli",
    "random_source",
]
