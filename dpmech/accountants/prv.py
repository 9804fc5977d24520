"""Composition through prv_accountant (Gopi, Lee & Wutschitz 2021).

prv_accountant returns (lower, estimate, upper) with rigorous error bounds
controlled by ``eps_error`` and ``delta_error``. Gaussians are merged exactly
into one Gaussian first (see :mod:`.exact`). prv_accountant has no K-ary
randomized response, so a :class:`~dpmech.events.PureEpsilonEvent` enters as
its generic ε-DP mechanism (binary randomized response), which dominates K-ary
randomized response: the bound stays valid and is looser than ``pld``'s for
K > 2. prv_accountant refuses very small δ ("floating point errors will
dominate"); that refusal is raised as a ValueError pointing to 'exact' or 'pld'.
"""

from __future__ import annotations

import prv_accountant

from ..events import ApproximateDpEvent, GaussianEvent, PureEpsilonEvent
from . import Interval
from .exact import composed_mu

DEFAULT_EPSILON_ERROR = 1e-2
DEFAULT_DELTA_ERROR_FOR_DELTA = 1e-10


def _variables(pairs):
    variables, counts = [], []
    gaussians = [(event, count) for event, count in pairs if isinstance(event, GaussianEvent)]
    if gaussians:
        variables.append(prv_accountant.GaussianMechanism(noise_multiplier=1.0 / composed_mu(gaussians)))
        counts.append(1)
    for event, count in pairs:
        if isinstance(event, PureEpsilonEvent):
            variables.append(prv_accountant.PureDPMechanism(eps=event.epsilon))
        elif isinstance(event, ApproximateDpEvent):
            variables.append(prv_accountant.ApproximateDPMechanism(epsilon=event.epsilon, delta=event.delta))
        elif not isinstance(event, GaussianEvent):
            raise ValueError(f"method 'prv' cannot account {type(event).__name__}")
        else:
            continue
        counts.append(count)
    return variables, counts


def _run(pairs, query, value, epsilon_error, delta_error):
    variables, counts = _variables(pairs)
    try:
        accountant = prv_accountant.PRVAccountant(
            prvs=variables, max_self_compositions=counts, eps_error=epsilon_error, delta_error=delta_error
        )
        lower, estimate, upper = getattr(accountant, query)(value, counts)
    except (ValueError, RuntimeError) as error:
        raise ValueError(f"method 'prv' failed ({error}); use method='exact' or 'pld'") from None
    return Interval(max(float(lower), 0.0), float(estimate), float(upper), True)


def epsilon(pairs, delta: float, epsilon_error: float = DEFAULT_EPSILON_ERROR, delta_error=None) -> Interval:
    if not pairs:
        return Interval(0.0, 0.0, 0.0, True)
    return _run(pairs, "compute_epsilon", delta, epsilon_error, delta / 1000 if delta_error is None else delta_error)


def delta(pairs, epsilon: float, epsilon_error: float = DEFAULT_EPSILON_ERROR,
          delta_error: float = DEFAULT_DELTA_ERROR_FOR_DELTA) -> Interval:
    if not pairs:
        return Interval(0.0, 0.0, 0.0, True)
    return _run(pairs, "compute_delta", epsilon, epsilon_error, delta_error)
