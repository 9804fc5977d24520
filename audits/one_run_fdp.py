r"""The f-DP analysis of a one-run audit (Mahloujifar, Melis & Chaudhuri, "Auditing f-Differential Privacy in One Run", arXiv 2410.22235, ICML 2025).

Same experiment as :mod:`audits.one_run` (m canaries, each included
independently with probability ½, one run, r guesses of which v are correct),
a sharper test. For a claim "the mechanism is f-DP in each canary", write
:math:`\bar f(x) = 1 - f(x)` for the largest TPR at FPR x and
:math:`\bar f^{-1}` for its inverse. The paper's ``audit_rh_with_cap``
recursion (Algorithm 3 with abstention, alphabet size 2), starting from
r_v = τ·v/m and h_v = τ·(r − v)/m,

.. math::
    h_{i} = \max\big(h_{i+1}, \bar f^{-1}(r_{i+1})\big), \qquad
    r_{i} = r_{i+1} + \frac{i}{r - i}\,(h_{i} - h_{i+1}), \qquad i = v-1, \dots, 0,

falsifies the claim at level τ when r₀ + h₀ > r/m: under f-DP the probability
of v or more correct guesses out of r is then at most τ. Once h stops changing
neither h nor r changes again, so the recursion stops there (as in
google-deepmind/jax_privacy ``_epsilon_one_run_fdp``, whose clipping of r at 1
is kept; facebookresearch/PrivacyGuard has the same recursion).

Two families of claims, indexed by ε at the given δ:

* ``"f-dp"``: the (ε, δ)-DP trade-off itself (Kairouz et al. 2015),
  :math:`\bar f(x) = \min(1, e^{\varepsilon}x + \delta, 1 - e^{-\varepsilon}(1 - \delta - x))`,
  so :math:`\bar f^{-1}(y) = \max(0, (y - \delta)e^{-\varepsilon}, 1 - \delta - e^{\varepsilon}(1 - y))`.
  No assumption on the mechanism beyond (ε, δ)-DP: a certified (ε, δ) lower bound
  under the one-run assumptions.
* ``"f-dp-gaussian"``: the Gaussian trade-off with μ = 1/σ(ε, δ), σ the analytic
  Gaussian calibration (``dpmech.calibrate_gaussian``), as jax_privacy does:
  :math:`\bar f^{-1}(y) = \Phi(\Phi^{-1}(y) - \mu)`. Tighter, but the ε is a bound
  only if the mechanism's privacy curve is Gaussian-shaped (as for
  :func:`audits.epsilon_from_gdp`); δ must be positive.

ε_lb = sup{ε : the claim at ε is falsified}, found by bracketing and brentq on
the falsification margin r₀ + h₀ − r/m, which decreases in ε (a larger ε is a
weaker claim: :math:`\bar f^{-1}` decreases pointwise), and checked to falsify.
"""

from __future__ import annotations

import math

from scipy import optimize, special

CURVES = ("f-dp", "f-dp-gaussian")
_XTOL = 1e-9
_EPSILON_CAP = 700.0


def _inverse_blow_up(curve: str, epsilon: float, delta: float):
    if curve == "f-dp":
        growth = math.exp(epsilon)
        return lambda y: max(0.0, (y - delta) / growth, 1.0 - delta - growth * (1.0 - y))
    import dpmech

    # calibrate_gaussian's σ is at most 1e-9 relative above the exact one, so this μ is at least
    # the exact μ of the claim: the tested curve is never stricter than the claim.
    mu = (1.0 + 1e-9) / float(dpmech.calibrate_gaussian(epsilon, delta))
    return lambda y: float(special.ndtr(special.ndtri(y) - mu))


def falsification_margin(curve: str, epsilon: float, delta: float, num_guesses: int, num_correct: int,
                         num_canaries: int, significance: float) -> float:
    """r₀ + h₀ − r/m of the recursion (module docstring): positive when the claim at ε is falsified at ``significance``."""
    inverse = _inverse_blow_up(curve, epsilon, delta)
    r, h = significance * num_correct / num_canaries, significance * (num_guesses - num_correct) / num_canaries
    for i in range(num_correct - 1, -1, -1):
        h_next = max(h, inverse(r))
        if h_next == h:
            break  # r and h are fixed from here on
        r, h = min(r + i / (num_guesses - i) * (h_next - h), 1.0), h_next
    return r + h - num_guesses / num_canaries


def epsilon_for_counts(curve: str, significance: float, delta: float, r: int, v: int, m: int) -> float:
    """sup{ε : falsified}, 0 when no ε > 0 is (for the Gaussian curve, from ε = 1e-9)."""
    low = 0.0 if curve == "f-dp" else 1e-9
    if r == 0 or v == 0 or falsification_margin(curve, low, delta, r, v, m, significance) <= 0:
        return 0.0
    high = 1.0
    while falsification_margin(curve, high, delta, r, v, m, significance) > 0:
        low, high = high, 2.0 * high
        if high > _EPSILON_CAP:
            return low
    root = optimize.brentq(lambda e: falsification_margin(curve, e, delta, r, v, m, significance), low, high,
                           xtol=_XTOL)
    epsilon = max(root - 2.0 * _XTOL, low)
    while epsilon > low and falsification_margin(curve, epsilon, delta, r, v, m, significance) <= 0:
        epsilon = max(epsilon - 1e-6 * max(epsilon, 1.0), low)
    return epsilon
