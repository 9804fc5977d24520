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
  for engine ledgers and DP-SGD (:class:`dpmech.PrivacyLedger` templates:
  :func:`dpmech.ledger_calibration.calibrate_ledger`, above the ledger).

``dpmech.PrivacyLedger`` uses this engine as its ``numeric`` method
(:mod:`dpmech.accountants.numeric`); the engine never imports the accountants or the ledger.
Every answer is a :class:`dpmech.interval.Interval`.

``dpmech.pld.calibrate_ledger``, which moved above the ledger, still loads from here for one release,
with a DeprecationWarning: the floor above hands the engine a loader (:func:`register_moved`).
"""

from collections.abc import Callable
from typing import Any

from .._moved_names import warn_moved

# Private names: ``dpmech.pld.Interval`` is the deprecated constructor below, not this class.
from ..interval import Interval as _Interval
from ..interval import certified_enclosure as _certified_enclosure

from .accountant import ComposedLoss, delta, epsilon, log_delta
from .composition import GridTooLarge
from .allocation import AllocationPair, random_allocation
from .calibration import calibrate, poisson_subsampled_gaussian_sigma
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
    "LaplacePair",
    "MixturePair",
    "Pair",
    "ReversedPair",
    "approximate_dp_pair",
    "calibrate",
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


def _engine_interval(lower: Any, upper: Any, note: str = "") -> _Interval:
    """The old ``dpmech.pld.Interval(lower, upper, note)``: a certified enclosure (see :mod:`dpmech.interval`)."""
    return _certified_enclosure(lower, upper, note)


# Old names kept for one release, each with a DeprecationWarning on access.
_DEPRECATED = {
    "Interval": (_engine_interval, "dpmech.pld.Interval is deprecated: the engine answers in dpmech.interval.Interval "
                                   "(lower, estimate, upper, certified, note); build one with "
                                   "dpmech.interval.certified_enclosure(lower, upper, note)"),
}
# Names that moved above the engine: name -> new home. The engine cannot import them (that would import
# upward), so the floor above registers a loader for each (register_moved) when it binds this package.
_MOVED = {"calibrate_ledger": "dpmech.ledger_calibration"}
_moved_loaders: dict[str, Callable[[], Any]] = {}


def register_moved(name: str, load: Callable[[], Any]) -> None:
    """Let ``dpmech.pld.<name>``, a name in ``_MOVED``, load through ``load()`` (which imports it from its new
    home) for one release, with a DeprecationWarning naming that home.

    Called by :mod:`dpmech` when this package is bound on it, so that the engine itself never imports the floors
    above it; without a loader the old name raises an AttributeError naming the new home.
    """
    if name not in _MOVED:
        raise ValueError(f"name must be one of {sorted(_MOVED)}, the names that moved above the engine (got {name!r})")
    if not callable(load):
        raise ValueError(f"load must be a callable returning {name} from {_MOVED[name]} (got {load!r})")
    _moved_loaders[name] = load


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        value, message = _DEPRECATED[name]
        warn_moved(message)
        return value
    if name in _MOVED:
        home = _MOVED[name]
        if name not in _moved_loaders:
            raise AttributeError(f"dpmech.pld.{name} moved above the ledger, to {home}.{name}: import it from there")
        # Not cached in globals(), so that every module that still reads it here is told.
        warn_moved(f"dpmech.pld.{name} is deprecated: it moved above the ledger, to {home}.{name} "
                   f"(from {home} import {name}); the old name goes in the next release")
        return _moved_loaders[name]()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
