"""dpmech.mechanisms: the privacy mechanisms, in one namespace.

Each is defined in its own module of :mod:`dpmech` (named below) and re-exported here; the
:mod:`dpmech` top level keeps the few most used (``GaussianOutputMechanism``, ``clip_features``,
``randomized_response``, ``randomized_response_event``, ``discrete_gaussian``, ``discrete_laplace``).

* Gaussian output perturbation (:mod:`dpmech.output_perturbation`): :class:`GaussianOutputMechanism`,
  calibrated by the analytic Gaussian mechanism (Balle & Wang 2018), with a continuous or an exact
  discrete sampler; exact per-example clipping to an L2 ball (:mod:`dpmech.clipping`): :func:`clip_features`.
* Label randomized response (:mod:`dpmech.randomized_response`): K-ary randomized response (Warner 1965),
  RRTop-k and RRWithPrior (Ghazi et al. 2021), each as a sampler, its exact output distribution and its
  event; exact at every ε.
* Blind averaging (:mod:`dpmech.blind_averaging`): each user noises its own model and the users sum the
  noisy models securely, so that the honest users' noise alone is a central Gaussian mechanism
  (Distributed DP-Helmet: Kirschte, Meiser, Ardalan & Mohammadi 2022).
* Noise-free DP by subsampling (:mod:`dpmech.nfdp`): the (ε, δ) that training on k of n records gives
  without noise, as FedMD-NFDP states it (Sun & Lyu 2021), with its vacuous δ said out loud.
* Exact discrete noise (:mod:`dpmech.discrete_gaussian`, :mod:`dpmech.discrete_laplace`,
  :mod:`dpmech.discrete_gaussian_privacy`): the discrete Gaussian and Laplace samplers and the discrete
  Gaussian's privacy profile and calibration (Canonne, Kamath & Steinke 2020), from the OS CSPRNG or a
  seeded Generator (:mod:`dpmech.random_bits`: :func:`random_source`, :func:`exact_bernoulli`,
  :data:`OS_RANDOMNESS`).
"""

from .blind_averaging import average_sensitivity, blind_average, blind_averaging_event, calibrate_user_noise
from .clipping import clip_features
from .discrete_gaussian import discrete_gaussian
from .discrete_gaussian_privacy import calibrate_discrete_gaussian, discrete_gaussian_delta
from .discrete_laplace import discrete_laplace
from .nfdp import NfdpGuarantee, nfdp_guarantee, nfdp_subsample
from .output_perturbation import GaussianOutputMechanism
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

__all__ = [
    "GaussianOutputMechanism",
    "NfdpGuarantee",
    "OS_RANDOMNESS",
    "average_sensitivity",
    "blind_average",
    "blind_averaging_event",
    "calibrate_discrete_gaussian",
    "calibrate_user_noise",
    "clip_features",
    "discrete_gaussian",
    "discrete_gaussian_delta",
    "discrete_laplace",
    "exact_bernoulli",
    "nfdp_guarantee",
    "nfdp_subsample",
    "random_source",
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
]
