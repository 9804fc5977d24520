"""dpmech's own numeric privacy-loss-distribution engine, with certified intervals.

* :mod:`.pairs`: dominating pairs (Gaussian, Laplace, finite, randomized response,
  generic (ε, δ)) described by the law of their privacy loss;
* :mod:`.subsampling`: Poisson sampling and sampling without replacement as mixture pairs;
* :mod:`.allocation`: random allocation of a Gaussian step, bounded by lattice pairs above and below;
* :mod:`.discretization`: upper (connect-the-dots) and lower (rounded-down) grid measures;
* :mod:`.distribution`: tilted grid measures and their δ(ε), ε(δ) queries;
* :mod:`.composition`: a whole ledger composed by one FFT (products of powers of characteristic
  functions), with proven round-off, aliasing and tail bounds: the cost does not grow with the counts;
* :mod:`.accountant`: δ(ε), log δ(ε) and ε(δ) as certified intervals on a grid chosen from the
  query and refined until the interval is as narrow as asked, with guards;
* :mod:`.calibration`: the smallest noise parameter whose certified upper δ meets a target,
  for engine ledgers, :class:`dpmech.PrivacyLedger` templates and DP-SGD.

``dpmech.PrivacyLedger`` uses this engine as its ``numeric`` method
(:mod:`dpmech.accountants.numeric`).
"""

from .accountant import ComposedLoss, GridTooLarge, Interval, delta, epsilon, log_delta
from .allocation import AllocationPair, random_allocation
from .calibration import calibrate, calibrate_ledger, poisson_subsampled_gaussian_sigma
from .pairs import (
    FinitePair,
    GaussianPair,
    LaplacePair,
    Pair,
    ReversedPair,
    approximate_dp_pair,
    randomized_response_pair,
    reverse,
)
from .subsampling import MixturePair, poisson_subsampled, sampled_without_replacement

__all__ = [
    "AllocationPair",
    "ComposedLoss",
    "GridTooLarge",
    "FinitePair",
    "GaussianPair",
    "Interval",
    "LaplacePair",
    "MixturePair",
    "Pair",
    "ReversedPair",
    "approximate_dp_pair",
    "calibrate",
    "calibrate_ledger",
    "delta",
    "epsilon",
    "log_delta",
    "poisson_subsampled_gaussian_sigma",
    "poisson_subsampled",
    "random_allocation",
    "randomized_response_pair",
    "reverse",
    "sampled_without_replacement",
]
